package ceiling

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed ceiling.cl
var source string

// Source returns the OpenCL C text of the measurement kernels (ceiling.cl).
func Source() string { return source }

// The peak kernel's shape: PeakChains independent chains per lane of PeakSteps
// multiply-adds x = PeakA*x + PeakB each, the lanes' start values PeakLane apart.
const (
	PeakChains = 8
	PeakIters  = 512           // the PEAK_ITERS tunable
	PeakSteps  = 4 * PeakIters // multiply-adds per chain
	PeakA      = 0.99          // contraction factor of every chain
	PeakB      = 0.01          // fixed point b/(1-a) = 1
	PeakLane   = 0.015625      // start offset between lanes
)

// Peak runs ceiling_peak in element type T with Vec lanes per work-item on one device. It
// is safe for concurrent use by goroutines that each use their own Queue.
type Peak[T kernels.Float] struct {
	prog  *engine.Program
	k     *engine.Kernel
	vec   int
	lanes *engine.Buffer[T]
}

// NewPeak compiles ceiling_peak for q's device in T with vec lanes per work-item (1, 2, 4,
// 8 or 16; above 1 on OpenCL only) and uploads the lanes' start offsets with q. It returns
// an error wrapping engine.ErrUnsupported when T is float64 and the device has no fp64, and
// one wrapping ctx.Err() when ctx is done before the upload.
func NewPeak[T kernels.Float](ctx context.Context, q *engine.Queue, vec int) (_ *Peak[T], err error) {
	dev := q.Device()
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	p := &Peak[T]{vec: vec}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if p.prog, err = dev.Build(source, append(opts, fmt.Sprintf("-DPEAK_ITERS=%d", PeakIters), fmt.Sprintf("-DPEAK_VEC=%d", vec))...); err != nil {
		return nil, err
	}
	if p.k, err = p.prog.Kernel("ceiling_peak"); err != nil {
		return nil, err
	}
	lanes := make([]T, vec)
	for l := range lanes {
		lanes[l] = T(float64(l) * PeakLane)
	}
	if p.lanes, err = engine.Upload(ctx, q, lanes); err != nil {
		return nil, err
	}
	return p, nil
}

// Close releases the kernel and the lanes buffer. Idempotent.
func (p *Peak[T]) Close() error {
	return errors.Join(p.lanes.Close(), p.k.Close(), p.prog.Close())
}

// Vec returns the lanes per work-item.
func (p *Peak[T]) Vec() int { return p.vec }

// MaxWorkGroupSize returns the largest work-group the compiled kernel allows on the device
// (0 when not reported).
func (p *Peak[T]) MaxWorkGroupSize() int { return p.k.MaxWorkGroupSize() }

// Run launches items work-items in groups of wg (items a multiple of wg), writing Vec
// elements each into out.
func (p *Peak[T]) Run(q *engine.Queue, out *engine.Buffer[T], items, wg int) error {
	if out == nil || out.Len() < items*p.vec {
		return fmt.Errorf("kernels: ceiling_peak: output of %d elements, %d work-items of %d lanes need %d: %w",
			kernels.LenOf(out), items, p.vec, items*p.vec, engine.ErrInvalidArg)
	}
	return q.Launch(p.k, engine.Range1D(items, wg), out, p.lanes, T(PeakA), T(PeakB))
}

// Flops returns the floating-point operations of a Run of items work-items, a multiply-add
// counting as two.
func (p *Peak[T]) Flops(items int) float64 {
	return float64(items) * float64(p.vec) * 2 * PeakChains * PeakSteps
}

// PeakRef returns the output element of lane l of a work-item with gid&255 == g, computed
// in float64 from the same a and b (rounded to the device's type): the device rounds each
// step, and with |a| < 1 the rounding errors stay below about 1/(1-a) units of roundoff per
// chain.
func PeakRef(g, l int, a, b float64) float64 {
	x0 := 2 + float64(g)*0.0078125 + float64(l)*PeakLane
	sum := 0.0
	for c := range PeakChains {
		x := x0 + 0.25*float64(c)
		for range PeakSteps {
			x = x*a + b
		}
		sum += x
	}
	return sum
}

// Check compares every element of a Run's output got with PeakRef, relatively within 16
// times the chains' roundoff amplification 8u/(1-a) (u the unit roundoff of T: chains,
// amplification, slack). A mismatch is an error wrapping kernels.ErrVerify.
func (p *Peak[T]) Check(got []T) error {
	a, b := float64(T(PeakA)), float64(T(PeakB))
	want := make([]float64, 256*p.vec)
	for g := range 256 {
		for l := range p.vec {
			want[g*p.vec+l] = PeakRef(g, l, a, b)
		}
	}
	tol := 16 * PeakChains * kernels.Epsilon[T]() / (1 - PeakA)
	for i, v := range got {
		if w := want[((i/p.vec)&255)*p.vec+i%p.vec]; !(math.Abs(float64(v)-w) <= tol*w) {
			return fmt.Errorf("%w: peak kernel element %d = %v, want %v (tolerance %.2g relative)", kernels.ErrVerify, i, v, w, tol)
		}
	}
	return nil
}

// Copy runs ceiling_copy on float32 on one device: dst[i] = src[i], one element per
// work-item, as the stream family's copy. It is safe for concurrent use by goroutines that
// each use their own Queue.
type Copy struct {
	prog *engine.Program
	k    *engine.Kernel
	wg   int
}

// NewCopy compiles ceiling_copy for dev.
func NewCopy(dev *engine.Device) (*Copy, error) {
	opts, err := kernels.TypeOf[float32]().Defines(dev)
	if err != nil {
		return nil, err
	}
	prog, err := dev.Build(source, opts...)
	if err != nil {
		return nil, err
	}
	k, err := prog.Kernel("ceiling_copy")
	if err != nil {
		prog.Close()
		return nil, err
	}
	wg := kernels.DeviceLimits(dev).Group(256)
	if m := k.MaxWorkGroupSize(); m > 0 && m < wg {
		wg = m
	}
	return &Copy{prog: prog, k: k, wg: wg}, nil
}

// Close releases the kernel. Idempotent.
func (c *Copy) Close() error { return errors.Join(c.k.Close(), c.prog.Close()) }

// Run copies src into dst, which must have the same length, below 2^31 elements.
func (c *Copy) Run(q *engine.Queue, dst, src *engine.Buffer[float32]) error {
	switch {
	case dst == nil || src == nil:
		return fmt.Errorf("kernels: ceiling_copy: nil buffer: %w", engine.ErrInvalidArg)
	case dst.Len() != src.Len() || src.Len() > math.MaxInt32:
		return fmt.Errorf("kernels: ceiling_copy: buffers of %d and %d elements; want the same length, below 2^31: %w", dst.Len(), src.Len(), engine.ErrInvalidArg)
	}
	n := src.Len()
	return q.Launch(c.k, engine.Range1D(engine.RoundUp(max(n, 1), c.wg), c.wg), dst, src, int32(n))
}
