package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine/driver"
)

// FFTKind is the kind of a transform: C2C or R2C.
type FFTKind = driver.FFTKind

// Transform kinds.
const (
	// C2C transforms complex data to complex data, forward or inverse.
	C2C = driver.C2C
	// R2C transforms real data to the non-redundant half of its spectrum (forward only).
	R2C = driver.R2C
)

// FFT is a device's vendor FFT. It is safe for concurrent use. It owns the plans made from
// it: closing it closes them.
type FFT struct {
	handle
	drv driver.FFT
	lib Library

	mu    sync.Mutex
	plans map[*FFTPlan]struct{}
}

// FFT returns the device's vendor FFT (cuFFT on CUDA, clFFT on OpenCL), loading it on the
// first call. Like BLAS, it belongs to the device and is closed with it; errors wrap
// ErrUnavailable (naming every file tried) or ErrUnsupported.
func (d *Device) FFT() (*FFT, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	d.vendor.mu.Lock()
	defer d.vendor.mu.Unlock()
	if f := d.vendor.fft; f != nil && !f.closed.Load() {
		return f, nil
	}
	p, ok := d.drv.(driver.FFTProvider)
	if !ok {
		return nil, fmt.Errorf("engine: %s: the %s backend offers no vendor FFT: %w", d, d.backend, ErrUnsupported)
	}
	df, err := p.FFT()
	if err != nil {
		return nil, fmt.Errorf("engine: FFT on %s: %w", d.id, err)
	}
	f := &FFT{drv: df, lib: df.Library(), plans: map[*FFTPlan]struct{}{}}
	f.handle = handle{dev: d, what: "FFT " + f.lib.Name + " of " + d.id}
	if err := d.adopt(f); err != nil {
		df.Close()
		return nil, err
	}
	d.vendor.fft = f
	Tracef("%s: loaded %s", d.id, f.lib)
	return f, nil
}

// Library describes the library loaded.
func (f *FFT) Library() Library { return f.lib }

// Close closes the plans made from f that are still open, then releases the library's
// handle for the device. It is idempotent; the device's next call to FFT loads a new one.
func (f *FFT) Close() error {
	if f == nil || !f.closed.CompareAndSwap(false, true) {
		return nil
	}
	f.dev.release(f)
	return f.shut()
}

func (f *FFT) closeResource() error {
	if !f.closed.CompareAndSwap(false, true) {
		return nil
	}
	return f.shut()
}
func (f *FFT) order() int { return 2 } // after queues have finished and plans are closed

// shut closes the open plans, then the driver's FFT.
func (f *FFT) shut() error {
	f.mu.Lock()
	plans := make([]*FFTPlan, 0, len(f.plans))
	for p := range f.plans {
		plans = append(plans, p)
	}
	f.mu.Unlock()
	var errs []error
	for _, p := range plans {
		errs = append(errs, p.Close())
	}
	errs = append(errs, f.drv.Close())
	return errors.Join(errs...)
}

// FFTSpec describes a batch of out-of-place FFTs of contiguous, interleaved data, as
// cuFFT and FFTW lay it out: complex element k is (re, im) = (buf[2k], buf[2k+1]), and
// transforms follow each other without gaps.
//
// A C2C transform reads and writes prod(Shape) complex elements. The forward transform is
// X[k] = sum_j x[j] e^{-2 pi i jk/n}; the inverse uses e^{+2 pi i jk/n} and is
// unnormalized, so Inverse(Forward(x)) = n*x, as with Prism's kernels.FFT.
//
// An R2C transform reads prod(Shape) real elements and writes the non-redundant half of
// the spectrum: prod(Shape[:last]) * (Shape[last]/2 + 1) complex elements, the other bins
// being conjugates (X[n-k] = conj X[k]). In one dimension this is exactly the layout of
// Prism's kernels.FFT RealForward (n/2+1 bins per transform, n+2 elements, transforms
// contiguous); Prism's own r2c has no 2D form, here the last dimension is halved, as in
// cuFFT and FFTW. R2C is forward only.
type FFTSpec struct {
	Kind FFTKind
	// Shape holds the transform's 1 or 2 dimensions, row-major: Shape[len-1] is
	// contiguous. A vendor library accepts any length its radices factor (every library
	// Prism loads takes products of 2, 3, 5 and 7); Prism's own FFT only powers of two.
	Shape []int
	// Batch is the number of transforms (0 means 1).
	Batch int
	// Double selects float64 data, float32 otherwise.
	Double bool
	// Inverse selects the inverse C2C transform.
	Inverse bool
}

// points returns the product of the dimensions.
func (s FFTSpec) points() int {
	n := 1
	for _, d := range s.Shape {
		n *= d
	}
	return n
}

// Lens returns the number of elements (of float32 or float64) that the input and output
// buffers must hold at least. The spec must be valid (Validate).
func (s FFTSpec) Lens() (in, out int) {
	batch := max(s.Batch, 1)
	n := s.points()
	if s.Kind == R2C {
		last := s.Shape[len(s.Shape)-1]
		return n * batch, 2 * (n / last) * (last/2 + 1) * batch
	}
	return 2 * n * batch, 2 * n * batch
}

// String describes the spec, e.g. "c2c 64x32 batch=4 float32 inverse".
func (s FFTSpec) String() string {
	dims := make([]string, len(s.Shape))
	for i, d := range s.Shape {
		dims[i] = fmt.Sprint(d)
	}
	out := fmt.Sprintf("%v %s batch=%d", s.Kind, strings.Join(dims, "x"), max(s.Batch, 1))
	if s.Double {
		out += " float64"
	} else {
		out += " float32"
	}
	if s.Inverse {
		out += " inverse"
	}
	return out
}

// Validate checks the spec: a known kind, 1 or 2 dimensions of at least 1 each, a batch
// >= 0 (0 = 1), no inverse R2C, and sizes that fit in memory. Errors wrap ErrInvalidArg
// and name the problem.
func (s FFTSpec) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("engine: fft %v: "+format+": %w", append([]any{s}, append(args, ErrInvalidArg)...)...)
	}
	switch {
	case s.Kind != C2C && s.Kind != R2C:
		return bad("unknown kind %d (want C2C or R2C)", int(s.Kind))
	case len(s.Shape) < 1 || len(s.Shape) > 2:
		return bad("%d dimensions; want 1 or 2", len(s.Shape))
	case s.Batch < 0:
		return bad("negative batch %d", s.Batch)
	case s.Kind == R2C && s.Inverse:
		return bad("R2C is forward only (use C2C for an inverse transform)")
	}
	total := 2 * float64(max(s.Batch, 1))
	for i, d := range s.Shape {
		if d < 1 {
			return bad("dimension %d is %d; must be at least 1", i, d)
		}
		total *= float64(d)
	}
	if total > maxSpan {
		return bad("%.0f elements is too large", total)
	}
	return nil
}

// FFTPlan is a prepared transform of one device: the library has chosen its algorithm and
// compiled its kernels. It may be run on any queue of the device, but runs of one plan
// must not overlap on the device (its scratch memory is its own): run it on one queue at a
// time, or make one plan per queue. Plan is otherwise safe for concurrent use.
type FFTPlan struct {
	handle
	fft     *FFT
	spec    FFTSpec
	drv     driver.FFTPlan
	in, out int
}

// Plan prepares the transform s: it validates s, then lets the library plan it (which
// may compile kernels: make plans before timing). A float64 plan on a device without fp64
// gives ErrUnsupported; a length the library cannot factor, the library's error (often
// ErrUnsupported or ErrInvalidArg). The plan belongs to f and is closed with it.
func (f *FFT) Plan(s FFTSpec) (*FFTPlan, error) {
	if f == nil {
		return nil, fmt.Errorf("engine: fft plan: nil FFT: %w", ErrInvalidArg)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s.Shape = slices.Clone(s.Shape)
	s.Batch = max(s.Batch, 1)
	typ := driver.Float32
	if s.Double {
		if !f.dev.info.FP64 {
			return nil, fmt.Errorf("engine: fft plan %v: %s has no fp64: %w", s, f.dev, ErrUnsupported)
		}
		typ = driver.Float64
	}
	dp, err := f.drv.Plan(driver.FFTSpec{Kind: s.Kind, Type: typ, Shape: slices.Clone(s.Shape), Batch: s.Batch, Inverse: s.Inverse})
	if err != nil {
		return nil, fmt.Errorf("engine: %s plan %v on %s: %w", f.lib.Name, s, f.dev.id, err)
	}
	p := &FFTPlan{handle: handle{dev: f.dev, what: "FFT plan " + s.String()}, fft: f, spec: s, drv: dp}
	p.in, p.out = s.Lens()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed.Load() { // closed while the library planned
		dp.Close()
		return nil, fmt.Errorf("engine: %s is closed: %w", f.what, ErrClosed)
	}
	if err := f.dev.adopt(p); err != nil {
		dp.Close()
		return nil, err
	}
	f.plans[p] = struct{}{}
	return p, nil
}

// Spec returns the plan's spec, with its defaults resolved.
func (p *FFTPlan) Spec() FFTSpec {
	s := p.spec
	s.Shape = slices.Clone(s.Shape)
	return s
}

// Lens returns the number of elements the input and output buffers must hold at least.
func (p *FFTPlan) Lens() (in, out int) { return p.in, p.out }

// Close releases the plan. It is idempotent.
func (p *FFTPlan) Close() error {
	if p == nil || !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	p.dev.release(p)
	p.forget()
	return p.drv.Close()
}

func (p *FFTPlan) closeResource() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	p.forget()
	return p.drv.Close()
}
func (p *FFTPlan) order() int { return 1 } // after queues, before the FFT

func (p *FFTPlan) forget() {
	p.fft.mu.Lock()
	delete(p.fft.plans, p)
	p.fft.mu.Unlock()
}

// RunFFT enqueues the plan's transform on q, from in to out: distinct buffers of q's
// device holding at least the plan's Lens elements of T, which must be float64 for a
// Double plan and float32 otherwise. in is not modified. Everything is validated before
// the library is called; errors wrap ErrInvalidArg or ErrClosed and name the problem.
// Queue.Timed counts the call like a kernel: its device time spans every command the
// library enqueued for it.
func RunFFT[T float32 | float64](p *FFTPlan, q *Queue, in, out *Buffer[T]) error {
	if p == nil {
		return fmt.Errorf("engine: fft: nil plan: %w", ErrInvalidArg)
	}
	if err := p.check(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	if err := p.sameDevice(q.dev); err != nil {
		return err
	}
	if (elemType[T]() == driver.Float64) != p.spec.Double {
		return fmt.Errorf("engine: fft %v: buffers of %T for a plan of the other precision: %w", p.spec, *new(T), ErrInvalidArg)
	}
	for _, x := range []struct {
		name      string
		buf       *Buffer[T]
		need      int
		direction string
	}{{"input", in, p.in, "read"}, {"output", out, p.out, "written"}} {
		if x.buf == nil {
			return fmt.Errorf("engine: fft %v: nil %s buffer: %w", p.spec, x.name, ErrInvalidArg)
		}
		if err := x.buf.onQueue(q); err != nil {
			return fmt.Errorf("engine: fft %v: %s: %w", p.spec, x.name, err)
		}
		if x.buf.Len() < x.need {
			return fmt.Errorf("engine: fft %v: %s buffer holds %d elements, %d are %s: %w", p.spec, x.name, x.buf.Len(), x.need, x.direction, ErrInvalidArg)
		}
	}
	if in == out {
		return fmt.Errorf("engine: fft %v: input and output are the same buffer; the transform is out of place: %w", p.spec, ErrInvalidArg)
	}
	if err := q.vendorCall(); err != nil {
		return err
	}
	ev, err := p.drv.Run(q.drv, in.drv, out.drv)
	if err != nil {
		return fmt.Errorf("engine: %s fft %v on %s: %w", p.fft.lib.Name, p.spec, q.dev.id, err)
	}
	return q.keep(ev).Close()
}
