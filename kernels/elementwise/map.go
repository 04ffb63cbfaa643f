package elementwise

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// MapOp names one operation of the map family.
type MapOp string

// The map operations.
const (
	MapAxpy    MapOp = "axpy"    // out = a*x + y
	MapAxpby   MapOp = "axpby"   // out = a*x + b*y
	MapExp     MapOp = "exp"     // out = exp(x)
	MapRelu    MapOp = "relu"    // out = max(x, 0)
	MapSigmoid MapOp = "sigmoid" // out = 1 / (1 + exp(-x))
	MapFma     MapOp = "fma"     // out = a*b + c, one rounding
)

// MapOps lists the map operations in their canonical order.
var MapOps = []MapOp{MapAxpy, MapAxpby, MapExp, MapRelu, MapSigmoid, MapFma}

// MapMax is the largest n of one call: 2^31 - 8, so that the kernels' int indices (VEC
// elements per item) cannot overflow.
const MapMax = math.MaxInt32 - 7

// mapInputs returns how many input arrays op reads.
func mapInputs(op MapOp) int {
	switch op {
	case MapAxpy, MapAxpby:
		return 2
	case MapFma:
		return 3
	}
	return 1
}

// MapModel returns the FLOPs and bytes of op over n elements of elemSize bytes: each input
// read once and the output written once; FLOPs: axpy 2, axpby 3, fma 2, relu 1 (the
// comparison), exp 1 and sigmoid 3 (exp, add, divide) per element, a transcendental
// counted as one operation.
func MapModel(op MapOp, n, elemSize int) kernels.Model {
	flops := map[MapOp]float64{MapAxpy: 2, MapAxpby: 3, MapExp: 1, MapRelu: 1, MapSigmoid: 3, MapFma: 2}[op]
	if flops == 0 {
		return kernels.Model{}
	}
	f := float64(n)
	return kernels.Model{Flops: flops * f, Bytes: float64(mapInputs(op)+1) * f * float64(elemSize)}
}

// Map runs the map family in element type T on one device. It is safe for concurrent use
// by goroutines that each use their own Queue.
type Map[T kernels.Float] struct {
	dev  *engine.Device
	prog *engine.Program
	k    map[MapOp]*engine.Kernel
	wg   int
	vec  int
}

// NewMap compiles the map family for dev. It returns an error wrapping
// engine.ErrUnsupported when T is float64 and the device has no fp64.
func NewMap[T kernels.Float](dev *engine.Device) (*Map[T], error) {
	return newMap[T](dev, 0)
}

// mapVec is the number of elements per work-item NewMap uses: 4 for float32, 2 for
// float64 (the CUDA prelude has no double4). See map.cl for the measurement.
func mapVec[T kernels.Float]() int {
	if engine.SizeOf[T]() == 8 {
		return 2
	}
	return 4
}

// newMap compiles the family with vec elements per work-item (0: mapVec).
func newMap[T kernels.Float](dev *engine.Device, vec int) (*Map[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: map: nil device: %w", engine.ErrInvalidArg)
	}
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	if vec == 0 {
		vec = mapVec[T]()
	}
	return kernels.Fit(dev, "map", func(lim kernels.Limits) (*Map[T], kernels.Shape, error) {
		wg := lim.Group(256)
		prog, err := dev.Build(source, append(opts, fmt.Sprintf("-DWG=%d", wg), fmt.Sprintf("-DVEC=%d", vec))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		m := &Map[T]{dev: dev, prog: prog, k: map[MapOp]*engine.Kernel{}, wg: wg, vec: vec}
		shape := kernels.Shape{Items: wg}
		for _, op := range MapOps {
			k, err := prog.Kernel("map_" + string(op))
			if err != nil {
				m.Close()
				return nil, kernels.Shape{}, err
			}
			m.k[op] = k
			shape.Kernels = append(shape.Kernels, k)
		}
		return m, shape, nil
	})
}

// Close releases the compiled kernels. Idempotent.
func (m *Map[T]) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, k := range m.k {
		errs = append(errs, k.Close())
	}
	return errors.Join(append(errs, m.prog.Close())...)
}

// WorkGroup returns the work-group size the family was compiled with on this device.
func (m *Map[T]) WorkGroup() int { return m.wg }

// Vec returns the number of elements each work-item handles.
func (m *Map[T]) Vec() int { return m.vec }

// Axpy sets out[i] = a*x[i] + y[i]. out may be y (BLAS axpy, in place) or x.
func (m *Map[T]) Axpy(q *engine.Queue, out, x, y *engine.Buffer[T], a T) error {
	return m.run(q, MapAxpy, -1, a, 0, out, x, y)
}

// Axpby sets out[i] = a*x[i] + b*y[i]. out may be x or y.
func (m *Map[T]) Axpby(q *engine.Queue, out, x, y *engine.Buffer[T], a, b T) error {
	return m.run(q, MapAxpby, -1, a, b, out, x, y)
}

// Exp sets out[i] = exp(x[i]). out may be x.
func (m *Map[T]) Exp(q *engine.Queue, out, x *engine.Buffer[T]) error {
	return m.run(q, MapExp, -1, 0, 0, out, x)
}

// Relu sets out[i] = x[i] when x[i] > 0, else 0. out may be x.
func (m *Map[T]) Relu(q *engine.Queue, out, x *engine.Buffer[T]) error {
	return m.run(q, MapRelu, -1, 0, 0, out, x)
}

// Sigmoid sets out[i] = 1 / (1 + exp(-x[i])). out may be x.
func (m *Map[T]) Sigmoid(q *engine.Queue, out, x *engine.Buffer[T]) error {
	return m.run(q, MapSigmoid, -1, 0, 0, out, x)
}

// Fma sets out[i] = a[i]*b[i] + c[i] with one rounding (OpenCL fma). out may be an input.
func (m *Map[T]) Fma(q *engine.Queue, out, a, b, c *engine.Buffer[T]) error {
	return m.run(q, MapFma, -1, 0, 0, out, a, b, c)
}

// Run launches op by name with its buffers in the kernel's argument order (output first,
// see map.cl) and scalars a, b where the op takes them (ignored otherwise). All buffers
// must have the same length.
func (m *Map[T]) Run(q *engine.Queue, op MapOp, a, b T, bufs ...*engine.Buffer[T]) error {
	return m.run(q, op, -1, a, b, bufs...)
}

// run validates and launches op over the first n elements of bufs (the common length when
// n < 0; the tests put guard bands after n).
func (m *Map[T]) run(q *engine.Queue, op MapOp, n int, a, b T, bufs ...*engine.Buffer[T]) error {
	k := m.k[op]
	if k == nil {
		return fmt.Errorf("kernels: map: no operation %q (have %v): %w", op, MapOps, engine.ErrInvalidArg)
	}
	if want := mapInputs(op) + 1; len(bufs) != want {
		return fmt.Errorf("kernels: map %s: %d buffers, want %d (output first): %w", op, len(bufs), want, engine.ErrInvalidArg)
	}
	for i, buf := range bufs {
		if buf == nil {
			return fmt.Errorf("kernels: map %s: buffer %d is nil: %w", op, i, engine.ErrInvalidArg)
		}
	}
	if n < 0 {
		n = bufs[0].Len()
		for _, buf := range bufs[1:] {
			if buf.Len() != n {
				return fmt.Errorf("kernels: map %s: buffers of %d and %d elements; all must have the same length: %w", op, n, buf.Len(), engine.ErrInvalidArg)
			}
		}
	}
	if n < 1 || n > MapMax {
		return fmt.Errorf("kernels: map %s: n = %d; must be in [1, %d]: %w", op, n, MapMax, engine.ErrInvalidArg)
	}
	for i, buf := range bufs {
		if buf.Len() < n {
			return fmt.Errorf("kernels: map %s: buffer %d has %d elements, need %d: %w", op, i, buf.Len(), n, engine.ErrInvalidArg)
		}
	}
	r := engine.Range1D(engine.RoundUp((n+m.vec-1)/m.vec, m.wg), m.wg)
	n32 := int32(n)
	switch op {
	case MapAxpy:
		return q.Launch(k, r, bufs[0], bufs[1], bufs[2], a, n32)
	case MapAxpby:
		return q.Launch(k, r, bufs[0], bufs[1], bufs[2], a, b, n32)
	case MapFma:
		return q.Launch(k, r, bufs[0], bufs[1], bufs[2], bufs[3], n32)
	}
	return q.Launch(k, r, bufs[0], bufs[1], n32)
}
