package stream

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed stream.cl
var source string

// Family returns the stream family: its OpenCL C source (stream.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	var ops []kernels.Op
	for _, op := range StreamOps {
		ops = append(ops, streamOp[float32](op))
	}
	for _, op := range StreamOps {
		ops = append(ops, streamOp[float64](op))
	}
	return kernels.Family{Name: "stream", Source: source, Ops: ops}
}

var streamDocs = map[StreamOp]string{
	OpCopy:  "c[i] = a[i]",
	OpScale: "b[i] = k*c[i]",
	OpAdd:   "c[i] = a[i] + b[i]",
	OpTriad: "a[i] = b[i] + k*c[i]",
	OpDot:   "sum of a[i]*b[i] (two-pass work-group reduction)",
}

func streamOp[T kernels.Float](op StreamOp) kernels.Op {
	name := "stream/" + string(op) + "/" + kernels.TypeName[T]()
	return kernels.Op{
		Name: name, Family: "stream", Type: kernels.TypeName[T](), Doc: streamDocs[op],
		SizeDoc: "n elements per array", DefaultSize: 1 << 24, QuickSize: 1 << 20,
		Variants: append(vendorVariants[T](name, op),
			kernels.PortableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupStream[T](ctx, q, name, op, p)
			})),
	}
}

// streamInstance runs one stream op over sets of inputs a, b (outputs first in the
// kernel's argument order, see stream.cl).
type streamInstance[T kernels.Float] struct {
	op        StreamOp
	s         *Stream[T]
	n         int
	ab        *kernels.Inputs[T] // a, b
	k         T
	out, part *engine.Buffer[T]
}

func setupStream[T kernels.Float](ctx context.Context, q *engine.Queue, name string, op StreamOp, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	return newStreamInstance[T](ctx, q, op, p, true)
}

// newStreamInstance sets up the inputs and output of a stream op; kernel compiles Prism's
// kernels (vendor variants run a library instead).
func newStreamInstance[T kernels.Float](ctx context.Context, q *engine.Queue, op StreamOp, p kernels.Params, kernel bool) (_ *streamInstance[T], err error) {
	if kernels.TypeOf[T]().FP64 && !q.Device().Info().FP64 {
		return nil, fmt.Errorf("kernels: %s has no fp64: %w", q.Device().ID(), engine.ErrUnsupported)
	}
	n := p.Size
	in := &streamInstance[T]{op: op, n: n}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	if kernel {
		if in.s, err = NewStream[T](q.Device()); err != nil {
			return nil, err
		}
	}
	rng := kernels.NewRand(p.Seed, 1)
	in.k = T(rng.Float64()*4 - 2)
	in.ab, err = kernels.NewInputsChunked(ctx, q, p, 2, n, func(_, _, _ int, dst []T) {
		kernels.FillRand(rng, dst, -1, 1) // a, then b, as RandFloats would draw them
	})
	if err != nil {
		return nil, err
	}
	switch {
	case op == OpDot && kernel:
		if in.part, err = engine.NewBuffer[T](q.Device(), in.s.DotScratch(n)); err == nil {
			in.out, err = engine.NewBuffer[T](q.Device(), 1)
		}
	case op == OpDot:
		in.out, err = engine.NewBuffer[T](q.Device(), 1)
	default:
		in.out, err = engine.NewBuffer[T](q.Device(), n)
	}
	if err != nil {
		return nil, err
	}
	return in, nil
}

func (in *streamInstance[T]) Run(ctx context.Context, q *engine.Queue) error {
	ab := in.ab.Next()
	a, b := ab[0], ab[1]
	switch in.op {
	case OpDot:
		return in.s.DotInto(q, in.out, in.part, a, b)
	case OpCopy, OpScale:
		return in.s.Run(q, in.op, in.k, in.out, a)
	default:
		return in.s.Run(q, in.op, in.k, in.out, a, b)
	}
}

// Verify checks the output of the last Run a chunk at a time (kernels.CheckElementwise),
// after a first pass over the inputs for the largest terms, on which the tolerance of
// every element depends; dot reads its inputs in one pass.
func (in *streamInstance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	if in.op == OpDot {
		want, mag, err := in.dotRef(ctx)
		if err != nil {
			return err
		}
		tol := StreamTolerance[T](in.op, in.n, in.s.WorkGroup(), mag)
		return in.checkDot(ctx, "stream dot", q, want, tol)
	}
	var maxA, maxB float64
	err := in.ab.LastChunks(ctx, func(_ int, ab [][]T) error {
		maxA, maxB = math.Max(maxA, kernels.MaxAbs(ab[0])), math.Max(maxB, kernels.MaxAbs(ab[1]))
		return nil
	})
	if err != nil {
		return err
	}
	k := float64(in.k)
	var mag float64
	switch in.op {
	case OpCopy:
		mag = maxA
	case OpScale: // out = k*a
		mag = math.Abs(k) * maxA
	case OpAdd:
		mag = maxA + maxB
	case OpTriad: // out = a + k*b
		mag = maxA + math.Abs(k)*maxB
	}
	tol := StreamTolerance[T](in.op, in.n, in.s.WorkGroup(), mag)
	return kernels.CheckElementwise(ctx, q, "stream "+string(in.op), in.out, in.ab, func(_ int, ab [][]T, want, t []float64) {
		a, b := ab[0], ab[1]
		switch in.op {
		case OpCopy:
			streamRefInto(in.op, want, a, nil, nil, 0)
		case OpScale:
			streamRefInto(in.op, want, nil, nil, a, k)
		case OpAdd:
			streamRefInto(in.op, want, a, b, nil, 0)
		case OpTriad:
			streamRefInto(in.op, want, nil, a, b, k)
		}
		for i := range t {
			t[i] = tol
		}
	})
}

// dotRef returns the float64 dot product of the last input set (StreamRef) and the sum of
// |a[i]*b[i]|, reading the inputs a chunk at a time in order, so that both sums are
// those of the whole arrays.
func (in *streamInstance[T]) dotRef(ctx context.Context) (want, mag float64, err error) {
	err = in.ab.LastChunks(ctx, func(_ int, ab [][]T) error {
		a, b := ab[0], ab[1]
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		for i := range a {
			mag += math.Abs(float64(a[i]) * float64(b[i]))
		}
		return nil
	})
	return want, mag, err
}

// checkDot compares the one-element output of dot with want within tol.
func (in *streamInstance[T]) checkDot(ctx context.Context, what string, q *engine.Queue, want, tol float64) error {
	var got [1]T
	if err := in.out.Read(ctx, q, 0, got[:]); err != nil {
		return err
	}
	return kernels.CheckClose(what, got[:], []float64{want}, func(int) float64 { return tol })
}

func (in *streamInstance[T]) Model() kernels.Model {
	return StreamModel(in.op, in.n, engine.SizeOf[T]())
}

func (in *streamInstance[T]) Shape() string { return fmt.Sprintf("n=%d", in.n) }

func (in *streamInstance[T]) Close() error {
	return errors.Join(in.out.Close(), in.part.Close(), in.ab.Close(), in.s.Close())
}
