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
	tracef("%s: loaded %s", d.id, b.lib)
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

// GemmSpec describes one general matrix multiply, or a strided batch of them, in
// row-major storage, with the semantics of Prism's own GEMM (kernels.GEMMShape):
// C = alpha*op(A)*op(B) + beta*C with op(A) M x K, op(B) K x N and C M x N, where op(X) =
// X^T when TransX. Zero leading dimensions, batch and strides take their defaults
// (WithDefaults).
type GemmSpec struct {
	// TransA and TransB select op(A) = A^T (A stored K x M) and op(B) = B^T (B stored N x K).
	TransA, TransB bool
	// M, N and K are the dimensions of op(A) (M x K), op(B) (K x N) and C (M x N); all >= 1.
	M, N, K int
	// LDA, LDB and LDC are the leading dimensions: elements between consecutive rows of the
	// stored matrices. 0 means the row length (K or M for A, N or K for B, N for C); a
	// larger value addresses a sub-matrix of a wider array.
	LDA, LDB, LDC int
	// Batch is the number of products (0 means 1). Matrix z of X starts at element
	// z*StrideX of its buffer.
	Batch int
	// StrideA, StrideB and StrideC are the elements between consecutive matrices of a
	// batch. 0 means packed (rows times leading dimension). Matrices of C may not overlap.
	StrideA, StrideB, StrideC int
}

// WithDefaults returns s with its zero leading dimensions, batch and strides replaced by
// their defaults.
func (s GemmSpec) WithDefaults() GemmSpec {
	rowsA, colsA := s.storedA()
	rowsB, colsB := s.storedB()
	if s.LDA == 0 {
		s.LDA = colsA
	}
	if s.LDB == 0 {
		s.LDB = colsB
	}
	if s.LDC == 0 {
		s.LDC = s.N
	}
	if s.Batch == 0 {
		s.Batch = 1
	}
	if s.StrideA == 0 {
		s.StrideA = rowsA * s.LDA
	}
	if s.StrideB == 0 {
		s.StrideB = rowsB * s.LDB
	}
	if s.StrideC == 0 {
		s.StrideC = s.M * s.LDC
	}
	return s
}

// storedA returns the rows and columns of A as stored (M x K, or K x M when transposed).
func (s GemmSpec) storedA() (rows, cols int) {
	if s.TransA {
		return s.K, s.M
	}
	return s.M, s.K
}

// storedB returns the rows and columns of B as stored (K x N, or N x K when transposed).
func (s GemmSpec) storedB() (rows, cols int) {
	if s.TransB {
		return s.N, s.K
	}
	return s.K, s.N
}

// Lens returns the number of elements the buffers of A, B and C must hold at least: the
// last element of the last matrix, plus one. The spec must be valid (Validate).
func (s GemmSpec) Lens() (a, b, c int) {
	s = s.WithDefaults()
	span := func(rows, cols, ld, stride int) int { return (s.Batch-1)*stride + (rows-1)*ld + cols }
	rowsA, colsA := s.storedA()
	rowsB, colsB := s.storedB()
	return span(rowsA, colsA, s.LDA, s.StrideA), span(rowsB, colsB, s.LDB, s.StrideB), span(s.M, s.N, s.LDC, s.StrideC)
}

// String describes the spec, e.g. "nt M=64 N=64 K=32 lda=32 ldb=32 ldc=64" (and the batch
// and strides when Batch > 1), as kernels.GEMMShape does.
func (s GemmSpec) String() string {
	s = s.WithDefaults()
	t := func(b bool) string {
		if b {
			return "t"
		}
		return "n"
	}
	out := fmt.Sprintf("%s%s M=%d N=%d K=%d lda=%d ldb=%d ldc=%d", t(s.TransA), t(s.TransB), s.M, s.N, s.K, s.LDA, s.LDB, s.LDC)
	if s.Batch > 1 {
		out += fmt.Sprintf(" batch=%d strides=%d,%d,%d", s.Batch, s.StrideA, s.StrideB, s.StrideC)
	}
	return out
}

// maxSpan bounds the element count of any buffer a spec describes, so that spans computed
// in int cannot overflow (no device holds 2^53 elements anyway).
const maxSpan = 1 << 53

// Validate checks the spec alone (not the buffers): dimensions >= 1, leading dimensions at
// least the stored row length, batch and strides >= 0 (0 = default), and the matrices of C
// not overlapping. Errors wrap ErrInvalidArg and name the problem.
func (s GemmSpec) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("engine: gemm: "+format+": %w", append(args, ErrInvalidArg)...)
	}
	if s.M < 1 || s.N < 1 || s.K < 1 {
		return bad("dimensions M=%d N=%d K=%d; all must be at least 1", s.M, s.N, s.K)
	}
	if s.Batch < 0 || s.StrideA < 0 || s.StrideB < 0 || s.StrideC < 0 || s.LDA < 0 || s.LDB < 0 || s.LDC < 0 {
		return bad("negative batch %d, strides %d,%d,%d or leading dimensions %d,%d,%d", s.Batch, s.StrideA, s.StrideB, s.StrideC, s.LDA, s.LDB, s.LDC)
	}
	// Every product below is computed in float64 first: exact far beyond maxSpan.
	for _, v := range []int{s.M, s.N, s.K, s.LDA, s.LDB, s.LDC, s.Batch, s.StrideA, s.StrideB, s.StrideC} {
		if v > maxSpan {
			return bad("%d is too large", v)
		}
	}
	rowsA, _ := s.storedA()
	rowsB, _ := s.storedB()
	for _, x := range []struct {
		rows, ld int
	}{{rowsA, max(s.LDA, s.K, s.M)}, {rowsB, max(s.LDB, s.K, s.N)}, {s.M, max(s.LDC, s.N)}} {
		if float64(x.rows)*float64(x.ld) > maxSpan {
			return bad("a matrix of %d rows of %d elements is too large", x.rows, x.ld)
		}
	}
	d := s.WithDefaults()
	_, colsA := d.storedA()
	_, colsB := d.storedB()
	switch {
	case d.LDA < colsA:
		return bad("lda %d below the row length %d of A as stored (transA=%v)", d.LDA, colsA, d.TransA)
	case d.LDB < colsB:
		return bad("ldb %d below the row length %d of B as stored (transB=%v)", d.LDB, colsB, d.TransB)
	case d.LDC < d.N:
		return bad("ldc %d below N=%d", d.LDC, d.N)
	case d.Batch > 1 && d.StrideC < (d.M-1)*d.LDC+d.N:
		return bad("strideC %d makes the matrices of C overlap (need at least %d)", d.StrideC, (d.M-1)*d.LDC+d.N)
	}
	for _, x := range []struct {
		name             string
		rows, ld, stride int
	}{{"A", rowsA, d.LDA, d.StrideA}, {"B", rowsB, d.LDB, d.StrideB}, {"C", d.M, d.LDC, d.StrideC}} {
		if span := float64(d.Batch-1)*float64(x.stride) + float64(x.rows)*float64(x.ld); span > maxSpan {
			return bad("%s spans %.0f elements", x.name, span)
		}
	}
	return nil
}

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
		buf  *Buffer[T]
	}{{"A", a}, {"B", bm}, {"C", c}} {
		if x.buf == nil {
			return fmt.Errorf("engine: gemm: nil buffer for %s: %w", x.name, ErrInvalidArg)
		}
		if err := x.buf.onQueue(q); err != nil {
			return fmt.Errorf("engine: gemm: %s: %w", x.name, err)
		}
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if c == a || c == bm {
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
	typ := elemType[T]()
	if typ == driver.Float64 && !q.dev.info.FP64 {
		return fmt.Errorf("engine: gemm: %s has no fp64: %w", q.dev, ErrUnsupported)
	}
	d := s.WithDefaults()
	args := driver.GemmArgs{
		Type: typ, TransA: d.TransA, TransB: d.TransB, M: d.M, N: d.N, K: d.K,
		Alpha: float64(alpha), Beta: float64(beta),
		A: a.drv, B: bm.drv, C: c.drv,
		LDA: d.LDA, LDB: d.LDB, LDC: d.LDC,
		Batch: d.Batch, StrideA: int64(d.StrideA), StrideB: int64(d.StrideB), StrideC: int64(d.StrideC),
	}
	if err := q.vendorCall(); err != nil {
		return err
	}
	ev, err := b.drv.Gemm(q.drv, args)
	if err != nil {
		return fmt.Errorf("engine: %s gemm %v on %s: %w", b.lib.Name, s, q.dev.id, err)
	}
	return q.keep(ev).Close()
}
