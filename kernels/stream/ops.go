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
			kernels.PortableVariant(func(q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupStream[T](q, name, op, p)
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

func setupStream[T kernels.Float](q *engine.Queue, name string, op StreamOp, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	return newStreamInstance[T](q, op, p, true)
}

// newStreamInstance sets up the inputs and output of a stream op; kernel compiles Prism's
// kernels (vendor variants run a library instead).
func newStreamInstance[T kernels.Float](q *engine.Queue, op StreamOp, p kernels.Params, kernel bool) (_ *streamInstance[T], err error) {
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
	in.ab, err = kernels.NewInputs(context.TODO(), q, p, 2*n*engine.SizeOf[T](), func(int) [][]T {
		return [][]T{kernels.RandFloats[T](rng, n, -1, 1), kernels.RandFloats[T](rng, n, -1, 1)}
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

func (in *streamInstance[T]) Run(q *engine.Queue) error {
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

func (in *streamInstance[T]) Verify(q *engine.Queue) error {
	got, err := in.out.Download(context.TODO(), q)
	if err != nil {
		return err
	}
	ab, err := in.ab.Last(context.TODO())
	if err != nil {
		return err
	}
	a, b, k := ab[0], ab[1], float64(in.k)
	var want []float64
	var mag float64
	switch in.op {
	case OpCopy:
		want, mag = StreamRef(in.op, a, nil, nil, 0), kernels.MaxAbs(a)
	case OpScale: // out = k*a
		want, mag = StreamRef(in.op, nil, nil, a, k), math.Abs(k)*kernels.MaxAbs(a)
	case OpAdd:
		want, mag = StreamRef(in.op, a, b, nil, 0), kernels.MaxAbs(a)+kernels.MaxAbs(b)
	case OpTriad: // out = a + k*b
		want, mag = StreamRef(in.op, nil, a, b, k), kernels.MaxAbs(a)+math.Abs(k)*kernels.MaxAbs(b)
	case OpDot:
		want = StreamRef(in.op, a, b, nil, 0)
		for i := range a {
			mag += math.Abs(float64(a[i]) * float64(b[i]))
		}
	}
	tol := StreamTolerance[T](in.op, len(a), in.s.WorkGroup(), mag)
	return kernels.CheckClose("stream "+string(in.op), got, want, func(int) float64 { return tol })
}

func (in *streamInstance[T]) Model() kernels.Model {
	return StreamModel(in.op, in.n, engine.SizeOf[T]())
}

func (in *streamInstance[T]) Shape() string { return fmt.Sprintf("n=%d", in.n) }

func (in *streamInstance[T]) Close() error {
	return errors.Join(in.out.Close(), in.part.Close(), in.ab.Close(), in.s.Close())
}
