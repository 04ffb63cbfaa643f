package engine

import (
	"fmt"
	"sync"

	"github.com/prism-compute/prism/engine/driver"
)

// Vendor libraries: the BLAS and FFT that ship with a device's platform (cuBLAS and cuFFT
// on CUDA, CLBlast and clFFT on OpenCL), called on Prism's own queues and buffers, so that
// a benchmark can run a vendor routine and a Prism kernel on the same inputs, one after
// the other on one queue, and time both with Queue.Timed.

// Library identifies a loaded vendor library: its name, version and the file loaded.
type Library = driver.Library

// vendorLibraries holds a device's vendor libraries, each loaded on first use.
type vendorLibraries struct {
	mu   sync.Mutex
	blas *BLAS
	fft  *FFT
}

// BLAS is a device's vendor BLAS. It is safe for concurrent use: routines may be called
// on several queues of the device from several goroutines at once.
type BLAS struct {
	handle
	drv driver.BLAS
	lib Library
}

// BLAS returns the device's vendor BLAS (cuBLAS on CUDA, CLBlast on OpenCL), loading it
// on the first call. The BLAS belongs to the device: every call returns the same one until
// it is closed, and closing the device closes it. A library that is not installed gives an
// error wrapping ErrUnavailable that names every file tried (set PRISM_VENDOR_PATH to a
// colon-separated list of directories to search first); a backend without a vendor BLAS
// gives ErrUnsupported.
func (d *Device) BLAS() (*BLAS, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	d.vendor.mu.Lock()
	defer d.vendor.mu.Unlock()
	if b := d.vendor.blas; b != nil && !b.closed.Load() {
		return b, nil
	}
	p, ok := d.drv.(driver.BLASProvider)
	if !ok {
		return nil, fmt.Errorf("engine: %s: the %s backend offers no vendor BLAS: %w", d, d.backend, ErrUnsupported)
	}
	db, err := p.BLAS()
	if err != nil {
		return nil, fmt.Errorf("engine: BLAS on %s: %w", d.id, err)
	}
	b := &BLAS{drv: db, lib: db.Library()}
	b.handle = handle{dev: d, what: "BLAS " + b.lib.Name + " of " + d.id}
	if err := d.adopt(b); err != nil {
		db.Close()
		return nil, err
	}
	d.vendor.blas = b
	Tracef("%s: loaded %s", d.id, b.lib)
	return b, nil
}

// Library describes the library loaded.
func (b *BLAS) Library() Library { return b.lib }

// Close releases the library's handle for the device. It is idempotent; the device's
// next call to BLAS loads a new one.
func (b *BLAS) Close() error {
	if b == nil || !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	b.dev.release(b)
	return b.drv.Close()
}

func (b *BLAS) closeResource() error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	return b.drv.Close()
}
func (b *BLAS) order() int { return 2 } // after queues have finished

// elemType returns the driver's element type for T (float32 or float64).
func elemType[T float32 | float64]() driver.ElemType {
	if SizeOf[T]() == 8 {
		return driver.Float64
	}
	return driver.Float32
}

// Gemm enqueues C = alpha*op(A)*op(B) + beta*C on q with the device's vendor BLAS, in
// row-major storage with exactly the semantics of Prism's own GEMM (see GemmSpec): a holds
// A, bm holds B and c holds C, each from its element 0. When beta is 0, C is not read
// (NaN there does not reach the result) where the library honors the BLAS convention;
// every library Prism loads does (the conformance suite checks it). c may not be a or bm.
//
// Everything is validated before the library is called: the spec, each buffer long enough
// for its last matrix, every object open and of q's device, and float64 only on a device
// with fp64; errors wrap ErrInvalidArg, ErrClosed or ErrUnsupported and name the problem.
// Queue.Timed counts the call like a kernel: its device time spans every command the
// library enqueued for it.
func Gemm[T float32 | float64](b *BLAS, q *Queue, s GemmSpec, alpha T, a, bm *Buffer[T], beta T, c *Buffer[T]) error {
	if err := checkGemm(b, q, s, a, bm, c); err != nil {
		return err
	}
	typ := elemType[T]()
	if typ == driver.Float64 && !q.dev.info.FP64 {
		return fmt.Errorf("engine: gemm: %s has no fp64: %w", q.dev, ErrUnsupported)
	}
	args := s.driverArgs(typ, float64(alpha), float64(beta), a.drv, bm.drv, c.drv)
	if err := q.vendorCall(); err != nil {
		return err
	}
	ev, err := b.drv.Gemm(q.drv, args)
	if err != nil {
		return fmt.Errorf("engine: %s gemm %v on %s: %w", b.lib.Name, s, q.dev.id, err)
	}
	return q.keep(ev).Close()
}

// checkGemm validates a vendor GEMM with inputs of type In and C of type Out, as Gemm
// documents, before anything reaches the library.
func checkGemm[In, Out Scalar](b *BLAS, q *Queue, s GemmSpec, a, bm *Buffer[In], c *Buffer[Out]) error {
	if b == nil {
		return fmt.Errorf("engine: gemm: nil BLAS: %w", ErrInvalidArg)
	}
	if err := b.check(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	if err := b.sameDevice(q.dev); err != nil {
		return err
	}
	for _, x := range []struct {
		name string
		nil  bool
		on   func(*Queue) error
	}{{"A", a == nil, a.onQueue}, {"B", bm == nil, bm.onQueue}, {"C", c == nil, c.onQueue}} {
		if x.nil {
			return fmt.Errorf("engine: gemm: nil buffer for %s: %w", x.name, ErrInvalidArg)
		}
		if err := x.on(q); err != nil {
			return fmt.Errorf("engine: gemm: %s: %w", x.name, err)
		}
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if any(c) == any(a) || any(c) == any(bm) {
		return fmt.Errorf("engine: gemm: C is also an input (A or B); the product cannot be computed in place: %w", ErrInvalidArg)
	}
	la, lb, lc := s.Lens()
	for _, x := range []struct {
		name      string
		have, use int
	}{{"A", a.Len(), la}, {"B", bm.Len(), lb}, {"C", c.Len(), lc}} {
		if x.have < x.use {
			return fmt.Errorf("engine: gemm %v: buffer of %s holds %d elements, the spec reaches %d: %w", s, x.name, x.have, x.use, ErrInvalidArg)
		}
	}
	return nil
}

// GemmCompute is the arithmetic of a mixed-precision GEMM (GemmMixed).
type GemmCompute = driver.GemmCompute

// Arithmetics of GemmMixed.
const (
	// ComputeFloat32 multiplies 16- and 8-bit float inputs as stored (their products are
	// exact in float32) and accumulates in float32.
	ComputeFloat32 = driver.ComputeFloat32
	// ComputeTF32 multiplies float32 inputs as tf32 (10 explicit mantissa bits, the
	// library's own rounding) on the tensor cores and accumulates in float32.
	ComputeTF32 = driver.ComputeTF32
)

// GemmInput is the set of element types of a mixed-precision GEMM's inputs A and B.
type GemmInput interface {
	float32 | Half | BFloat16 | Float8E4M3 | Float8E5M2
}

// gemmInputType returns the driver's element type for In.
func gemmInputType[In GemmInput]() driver.ElemType {
	var z In
	switch any(z).(type) {
	case float32:
		return driver.Float32
	case Half:
		return driver.Float16
	case BFloat16:
		return driver.BFloat16
	case Float8E4M3:
		return driver.Float8E4M3
	}
	return driver.Float8E5M2
}

// MixedLibrary loads the library that computes GemmMixed (cuBLASLt on CUDA, beside
// cuBLAS), on the first call in the process, and describes it. A library that is not
// installed gives an error wrapping ErrUnavailable that names every file tried; a backend
// whose BLAS has no mixed-precision GEMM (CLBlast on OpenCL) gives ErrUnsupported.
func (b *BLAS) MixedLibrary() (Library, error) {
	if b == nil {
		return Library{}, fmt.Errorf("engine: mixed-precision gemm: nil BLAS: %w", ErrInvalidArg)
	}
	if err := b.check(); err != nil {
		return Library{}, err
	}
	m, ok := b.drv.(driver.MixedBLAS)
	if !ok {
		return Library{}, fmt.Errorf("engine: %s offers no mixed-precision gemm (tf32, float16, bfloat16, float8 inputs): %w", b.lib.Name, ErrUnsupported)
	}
	lib, err := m.MixedLibrary()
	if err != nil {
		return Library{}, fmt.Errorf("engine: mixed-precision gemm on %s: %w", b.dev.id, err)
	}
	return lib, nil
}

// GemmMixed enqueues C = alpha*op(A)*op(B) + beta*C on q with the library of
// MixedLibrary (cuBLASLt on CUDA), A and B of type In and C float32, with the semantics
// and the validation of Gemm. compute says how the products are taken: ComputeTF32 for
// float32 inputs (rounded to tf32 by the library: the float32 GEMM itself is Gemm's),
// ComputeFloat32 for float16, bfloat16 and float8 inputs; any other pairing wraps
// ErrInvalidArg. A combination that the library does not compute (cuBLASLt: float8 in
// some layouts or on older GPUs, E5M2 times E5M2) wraps ErrUnsupported and says why.
// Queue.Timed counts the call like a kernel.
func GemmMixed[In GemmInput](b *BLAS, q *Queue, s GemmSpec, compute GemmCompute, alpha float32, a, bm *Buffer[In], beta float32, c *Buffer[float32]) error {
	if err := checkGemm(b, q, s, a, bm, c); err != nil {
		return err
	}
	in := gemmInputType[In]()
	switch {
	case compute != ComputeFloat32 && compute != ComputeTF32:
		return fmt.Errorf("engine: gemm: unknown arithmetic %v: %w", compute, ErrInvalidArg)
	case in == driver.Float32 && compute != ComputeTF32:
		return fmt.Errorf("engine: gemm: float32 inputs with float32 arithmetic are Gemm's (the vendor SGEMM), not GemmMixed's, which takes them as tf32 (ComputeTF32): %w", ErrInvalidArg)
	case in != driver.Float32 && compute != ComputeFloat32:
		return fmt.Errorf("engine: gemm: %v inputs are multiplied as stored (ComputeFloat32), not as %v: %w", in, compute, ErrInvalidArg)
	}
	m, ok := b.drv.(driver.MixedBLAS)
	if !ok {
		return fmt.Errorf("engine: %s offers no mixed-precision gemm (%v inputs): %w", b.lib.Name, in, ErrUnsupported)
	}
	args := driver.MixedGemmArgs{
		GemmArgs: s.driverArgs(driver.Float32, float64(alpha), float64(beta), a.drv, bm.drv, c.drv),
		In:       in, Compute: compute,
	}
	if err := q.vendorCall(); err != nil {
		return err
	}
	ev, err := m.GemmMixed(q.drv, args)
	if err != nil {
		return fmt.Errorf("engine: %v gemm %v on %s: %w", in, s, q.dev.id, err)
	}
	return q.keep(ev).Close()
}
