package stream

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// StreamOp names one operation of the stream family.
type StreamOp string

// The stream operations.
const (
	OpCopy  StreamOp = "copy"
	OpScale StreamOp = "scale"
	OpAdd   StreamOp = "add"
	OpTriad StreamOp = "triad"
	OpDot   StreamOp = "dot"
)

// StreamOps lists the stream operations in their canonical order.
var StreamOps = []StreamOp{OpCopy, OpScale, OpAdd, OpTriad, OpDot}

// StreamModel returns the FLOPs and bytes of op over n elements of elemSize bytes.
func StreamModel(op StreamOp, n, elemSize int) kernels.Model {
	f, e := float64(n), float64(elemSize)
	switch op {
	case OpCopy:
		return kernels.Model{Flops: 0, Bytes: 2 * f * e}
	case OpScale:
		return kernels.Model{Flops: f, Bytes: 2 * f * e}
	case OpAdd:
		return kernels.Model{Flops: f, Bytes: 3 * f * e}
	case OpTriad:
		return kernels.Model{Flops: 2 * f, Bytes: 3 * f * e}
	case OpDot:
		return kernels.Model{Flops: 2 * f, Bytes: 2 * f * e}
	}
	return kernels.Model{}
}

// Stream runs the stream family in element type T on one device. It is safe for concurrent
// use by goroutines that each use their own Queue.
type Stream[T kernels.Float] struct {
	dev                               *engine.Device
	prog                              *engine.Program
	copy, scale, add, triad, dot, sum *engine.Kernel
	wg                                int
	vw                                int // elements per vector access (VW)
	maxGroups                         int
}

// NewStream compiles the stream family for dev. It returns an error wrapping
// engine.ErrUnsupported when T is float64 and the device has no fp64.
func NewStream[T kernels.Float](dev *engine.Device) (*Stream[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: stream: nil device: %w", engine.ErrInvalidArg)
	}
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, "stream", func(lim kernels.Limits) (*Stream[T], kernels.Shape, error) {
		wg := lim.Group(256)
		// 16-byte vector accesses: 4 floats or 2 doubles per step.
		vw := 16 / engine.SizeOf[T]()
		prog, err := dev.Build(source, append(opts, fmt.Sprintf("-DWG=%d", wg), fmt.Sprintf("-DVW=%d", vw))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		// stream_dot's groups: 32 a compute unit, and where the device ends a work-item's loops
		// early (kernels.LoopLimit: Mesa's llvmpipe), as many as keep its grid loop (an element
		// a step) over 2^31-1 elements within it.
		s := &Stream[T]{dev: dev, prog: prog, wg: wg, vw: vw,
			maxGroups: max(max(dev.Info().ComputeUnits, 1)*32, kernels.GroupsWithin(kernels.LoopLimit(dev), (math.MaxInt32+wg-1)/wg, 1, 16))}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &s.copy, Name: "stream_copy"}, kernels.Ref{Dst: &s.scale, Name: "stream_scale"},
			kernels.Ref{Dst: &s.add, Name: "stream_add"}, kernels.Ref{Dst: &s.triad, Name: "stream_triad"},
			kernels.Ref{Dst: &s.dot, Name: "stream_dot"}, kernels.Ref{Dst: &s.sum, Name: "stream_sum"})
		if err != nil {
			s.Close()
			return nil, kernels.Shape{}, err
		}
		return s, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the compiled kernels. Idempotent.
func (s *Stream[T]) Close() error {
	if s == nil {
		return nil
	}
	errs := []error{}
	for _, k := range []*engine.Kernel{s.copy, s.scale, s.add, s.triad, s.dot, s.sum} {
		errs = append(errs, k.Close())
	}
	errs = append(errs, s.prog.Close())
	return errors.Join(errs...)
}

// WorkGroup returns the work-group size the family was compiled with on this device.
func (s *Stream[T]) WorkGroup() int { return s.wg }

// grid returns the 1D range of n work-items: one per vector of VW elements for the
// element-wise kernels (the callers pass n/VW rounded up). One item per element measured 3
// to 10 times faster on PoCL than a grid-stride loop over 32 groups per compute unit
// (2026-11-21, 4M elements), and on an H200 one item per vector beat 8 or 32 groups per SM
// by 3 to 15% on the triad (docs/PERFORMANCE.md, 2026-11-26).
func (s *Stream[T]) grid(n int) engine.Range {
	return engine.Range1D(engine.RoundUp(max(n, 1), s.wg), s.wg)
}

// dotGrid returns the range of stream_dot: at most maxGroups work-groups, each item
// accumulating a grid-stride slice, so that the partial sums stay few.
func (s *Stream[T]) dotGrid(n int) engine.Range {
	groups := min((n+s.wg-1)/s.wg, s.maxGroups)
	return engine.Range1D(max(groups, 1)*s.wg, s.wg)
}

// sameLen checks that all buffers hold the same number of elements and returns it.
func sameLen[T kernels.Float](op StreamOp, bufs ...*engine.Buffer[T]) (int32, error) {
	for _, b := range bufs {
		if b == nil {
			return 0, fmt.Errorf("kernels: %s: nil buffer: %w", op, engine.ErrInvalidArg)
		}
	}
	n := bufs[0].Len()
	for _, b := range bufs[1:] {
		if b.Len() != n {
			return 0, fmt.Errorf("kernels: %s: buffers of %d and %d elements; all must have the same length: %w", op, n, b.Len(), engine.ErrInvalidArg)
		}
	}
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("kernels: %s: %d elements exceeds the family's limit of 2^31-1: %w", op, n, engine.ErrInvalidArg)
	}
	return int32(n), nil
}

// Copy sets c[i] = a[i].
func (s *Stream[T]) Copy(q *engine.Queue, c, a *engine.Buffer[T]) error {
	return s.Run(q, OpCopy, 0, c, a)
}

// Scale sets b[i] = k * c[i].
func (s *Stream[T]) Scale(q *engine.Queue, b, c *engine.Buffer[T], k T) error {
	return s.Run(q, OpScale, k, b, c)
}

// Add sets c[i] = a[i] + b[i].
func (s *Stream[T]) Add(q *engine.Queue, c, a, b *engine.Buffer[T]) error {
	return s.Run(q, OpAdd, 0, c, a, b)
}

// Triad sets a[i] = b[i] + k * c[i].
func (s *Stream[T]) Triad(q *engine.Queue, a, b, c *engine.Buffer[T], k T) error {
	return s.Run(q, OpTriad, k, a, b, c)
}

// Run launches an element-wise op by name (copy, scale, add, triad) with its buffers in
// the kernel's argument order (output first, see stream.cl) and scalar k where the op takes
// one (ignored otherwise). All buffers must have the same length.
func (s *Stream[T]) Run(q *engine.Queue, op StreamOp, k T, bufs ...*engine.Buffer[T]) error {
	if len(bufs) == 0 {
		return fmt.Errorf("kernels: %s: no buffers: %w", op, engine.ErrInvalidArg)
	}
	n, err := sameLen(op, bufs...)
	if err != nil {
		return err
	}
	return s.runN(q, op, n, k, bufs...)
}

// runN launches op over the first n elements of bufs (which may be longer: the tests put
// guard bands after n).
func (s *Stream[T]) runN(q *engine.Queue, op StreamOp, n int32, k T, bufs ...*engine.Buffer[T]) error {
	want := 0
	switch op {
	case OpCopy, OpScale:
		want = 2
	case OpAdd, OpTriad:
		want = 3
	}
	if want == 0 || len(bufs) != want {
		return fmt.Errorf("kernels: stream op %q with %d buffers (want copy/scale 2, add/triad 3; dot has its own call): %w", op, len(bufs), engine.ErrInvalidArg)
	}
	r := s.grid((int(n) + s.vw - 1) / s.vw) // one item per vector
	switch op {
	case OpCopy:
		return q.Launch(s.copy, r, bufs[0], bufs[1], n)
	case OpScale:
		return q.Launch(s.scale, r, bufs[0], bufs[1], k, n)
	case OpAdd:
		return q.Launch(s.add, r, bufs[0], bufs[1], bufs[2], n)
	default:
		return q.Launch(s.triad, r, bufs[0], bufs[1], bufs[2], k, n)
	}
}

// DotInto writes the dot product of a and b into out[0]. part is scratch space of at least
// DotScratch(n) elements. Both are the caller's, so repeated calls allocate nothing.
func (s *Stream[T]) DotInto(q *engine.Queue, out, part, a, b *engine.Buffer[T]) error {
	n, err := sameLen(OpDot, a, b)
	if err != nil {
		return err
	}
	return s.dotN(q, n, out, part, a, b)
}

func (s *Stream[T]) dotN(q *engine.Queue, n int32, out, part, a, b *engine.Buffer[T]) error {
	if out == nil || part == nil {
		return fmt.Errorf("kernels: dot: nil output or scratch buffer: %w", engine.ErrInvalidArg)
	}
	r := s.dotGrid(int(n))
	groups := r.Global[0] / s.wg
	if part.Len() < groups {
		return fmt.Errorf("kernels: dot: scratch of %d elements, need %d (DotScratch): %w", part.Len(), groups, engine.ErrInvalidArg)
	}
	if err := q.Launch(s.dot, r, part, a, b, n); err != nil {
		return err
	}
	return q.Launch(s.sum, engine.Range1D(s.wg, s.wg), out, part, int32(groups))
}

// DotScratch returns the scratch length DotInto needs for n elements.
func (s *Stream[T]) DotScratch(n int) int { return s.dotGrid(n).Global[0] / s.wg }

// Dot returns the dot product of a and b, allocating its scratch space. It waits for the
// result, or until ctx is done.
func (s *Stream[T]) Dot(ctx context.Context, q *engine.Queue, a, b *engine.Buffer[T]) (T, error) {
	if _, err := sameLen(OpDot, a, b); err != nil {
		return 0, err
	}
	part, err := engine.NewBuffer[T](s.dev, s.DotScratch(a.Len()))
	if err != nil {
		return 0, err
	}
	defer part.Close()
	out, err := engine.NewBuffer[T](s.dev, 1)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	if err := s.DotInto(q, out, part, a, b); err != nil {
		return 0, err
	}
	var r [1]T
	if err := out.Read(ctx, q, 0, r[:]); err != nil {
		return 0, err
	}
	return r[0], nil
}
