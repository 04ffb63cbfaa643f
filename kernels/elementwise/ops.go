package elementwise

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed map.cl
var source string

// Family returns the map family: its OpenCL C source (map.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	return kernels.Family{Name: "map", Source: source, Ops: []kernels.Op{
		mapOp[float32](MapAxpy), mapOp[float64](MapAxpy),
		mapOp[float32](MapExp), mapOp[float32](MapRelu), mapOp[float32](MapFma),
	}}
}

var mapDocs = map[MapOp]string{
	MapAxpy:    "out[i] = a*x[i] + y[i]",
	MapAxpby:   "out[i] = a*x[i] + b*y[i]",
	MapExp:     "out[i] = exp(x[i])",
	MapRelu:    "out[i] = max(x[i], 0)",
	MapSigmoid: "out[i] = 1 / (1 + exp(-x[i]))",
	MapFma:     "out[i] = fma(a[i], b[i], c[i])",
}

// mapRange is the interval of an op's random inputs: exp and sigmoid over [-10, 10)
// (results from 4.5e-5 to 2.2e4, all normal in float32), the others over [-1, 1).
func mapRange(op MapOp) (lo, hi float64) {
	if op == MapExp || op == MapSigmoid {
		return -10, 10
	}
	return -1, 1
}

func mapOp[T kernels.Float](op MapOp) kernels.Op {
	name := "map/" + string(op) + "/" + kernels.TypeName[T]()
	return kernels.Op{
		Name: name, Family: "map", Type: kernels.TypeName[T](), Doc: mapDocs[op],
		SizeDoc: "n elements per array", DefaultSize: 1 << 25, QuickSize: 1 << 20,
		Variants: append(vendorVariants[T](name, op),
			kernels.PortableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupMap[T](ctx, q, name, op, p)
			})),
		Split: mapSplit[T](name, op),
	}
}

// mapInstance runs one map op over sets of inputs into one output buffer (so that
// repeated runs of axpy do not accumulate).
type mapInstance[T kernels.Float] struct {
	op   MapOp
	m    *Map[T]
	x    *kernels.Inputs[T] // the op's inputs in the kernel's order
	a, b T
	out  *engine.Buffer[T]
	n    int
}

func setupMap[T kernels.Float](ctx context.Context, q *engine.Queue, name string, op MapOp, p kernels.Params) (kernels.Instance, error) {
	return newMapInstance[T](ctx, q, name, op, p, true)
}

// newMapInstance sets up the inputs and output of a map op; kernel compiles Prism's kernels
// (vendor variants run a library instead).
func newMapInstance[T kernels.Float](ctx context.Context, q *engine.Queue, name string, op MapOp, p kernels.Params, kernel bool) (_ *mapInstance[T], err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	if p.Size > MapMax {
		return nil, fmt.Errorf("kernels: %s: size %d above %d: %w", name, p.Size, MapMax, engine.ErrInvalidArg)
	}
	if kernels.TypeOf[T]().FP64 && !q.Device().Info().FP64 {
		return nil, fmt.Errorf("kernels: %s has no fp64: %w", q.Device().ID(), engine.ErrUnsupported)
	}
	n := p.Size
	in := &mapInstance[T]{op: op, n: n}
	if kernel {
		if in.m, err = NewMap[T](q.Device()); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	rng := kernels.NewRand(p.Seed, 2)
	in.a, in.b = T(rng.Float64()*4-2), T(rng.Float64()*4-2)
	k := mapInputs(op)
	lo, hi := mapRange(op)
	in.x, err = kernels.NewInputsChunked(ctx, q, p, k, n, func(_, _, _ int, dst []T) {
		kernels.FillRand(rng, dst, lo, hi) // the arrays in order, as RandFloats would draw them
	})
	if err != nil {
		return nil, err
	}
	if in.out, err = engine.NewBuffer[T](q.Device(), n); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *mapInstance[T]) Run(ctx context.Context, q *engine.Queue) error {
	return in.m.Run(q, in.op, in.a, in.b, append([]*engine.Buffer[T]{in.out}, in.x.Next()...)...)
}

// Verify checks the output of the last Run against MapRef within MapTolerance, a chunk at
// a time (kernels.CheckElementwise).
func (in *mapInstance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	a, b := float64(in.a), float64(in.b)
	return kernels.CheckElementwise(ctx, q, "map "+string(in.op), in.out, in.x, func(_ int, x [][]T, want, tol []float64) {
		mapRefInto(in.op, a, b, want, x...)
		mapToleranceInto(in.op, a, b, tol, x...)
	})
}

func (in *mapInstance[T]) Model() kernels.Model { return MapModel(in.op, in.n, engine.SizeOf[T]()) }

func (in *mapInstance[T]) Shape() string { return fmt.Sprintf("n=%d", in.n) }

func (in *mapInstance[T]) Close() error {
	return errors.Join(in.out.Close(), in.x.Close(), in.m.Close())
}
