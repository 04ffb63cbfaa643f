package bench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// StreamCases returns the stream family's cases in float32 and float64.
func StreamCases() []Case {
	var cs []Case
	for _, op := range kernels.StreamOps {
		cs = append(cs, streamCase[float32]{op}, streamCase[float64]{op})
	}
	return cs
}

type streamCase[T kernels.Float] struct{ op kernels.StreamOp }

func (c streamCase[T]) Name() string {
	return "stream/" + string(c.op) + "/" + kernels.TypeName[T]()
}

type streamInstance[T kernels.Float] struct {
	op        kernels.StreamOp
	s         *kernels.Stream[T]
	a, b, c   []T
	k         T
	ba, bb    *engine.Buffer[T]
	out, part *engine.Buffer[T]
	bufs      []*engine.Buffer[T]
}

func (c streamCase[T]) Setup(q *engine.Queue, n int, seed uint64) (Instance, error) {
	s, err := kernels.NewStream[T](q.Device())
	if err != nil {
		return nil, err
	}
	in := &streamInstance[T]{op: c.op, s: s}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	gen := func() []T {
		x := make([]T, n)
		for i := range x {
			x[i] = T(2*rng.Float64() - 1)
		}
		return x
	}
	in.a, in.b, in.k = gen(), gen(), T(rng.Float64()*4-2)
	if in.ba, err = engine.Upload(q, in.a); err == nil {
		in.bb, err = engine.Upload(q, in.b)
	}
	if err == nil && c.op == kernels.OpDot {
		if in.part, err = engine.NewBuffer[T](q.Device(), s.DotScratch(n)); err == nil {
			in.out, err = engine.NewBuffer[T](q.Device(), 1)
		}
	} else if err == nil {
		in.out, err = engine.NewBuffer[T](q.Device(), n)
	}
	if err != nil {
		in.Close()
		return nil, err
	}
	// Kernel argument order (stream.cl): output first.
	switch c.op {
	case kernels.OpCopy, kernels.OpScale:
		in.bufs = []*engine.Buffer[T]{in.out, in.ba}
	case kernels.OpAdd, kernels.OpTriad:
		in.bufs = []*engine.Buffer[T]{in.out, in.ba, in.bb}
	}
	return in, nil
}

func (in *streamInstance[T]) Run(q *engine.Queue) error {
	if in.op == kernels.OpDot {
		return in.s.DotInto(q, in.out, in.part, in.ba, in.bb)
	}
	return in.s.Run(q, in.op, in.k, in.bufs...)
}

func (in *streamInstance[T]) Verify(q *engine.Queue) error {
	got, err := in.out.Download(q)
	if err != nil {
		return err
	}
	n := len(in.a)
	var want []float64
	var mag float64
	a, b, k := in.a, in.b, float64(in.k)
	switch in.op {
	case kernels.OpCopy:
		want, mag = kernels.StreamRef(in.op, a, nil, nil, 0), 1
	case kernels.OpScale: // out = k*a
		want, mag = kernels.StreamRef(in.op, nil, nil, a, k), math.Abs(k)
	case kernels.OpAdd:
		want, mag = kernels.StreamRef(in.op, a, b, nil, 0), 2
	case kernels.OpTriad: // out = a + k*b
		want, mag = kernels.StreamRef(in.op, nil, a, b, k), 1+math.Abs(k)
	case kernels.OpDot:
		want = kernels.StreamRef(in.op, a, b, nil, 0)
		for i := range a {
			mag += math.Abs(float64(a[i]) * float64(b[i]))
		}
	}
	tol := kernels.StreamTolerance[T](in.op, n, in.s.WorkGroup(), mag)
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol) {
			return fmt.Errorf("%w: element %d = %v, want %v (|diff| %.3g > tolerance %.3g)", ErrVerify, i, got[i], want[i], d, tol)
		}
	}
	return nil
}

func (in *streamInstance[T]) Model() kernels.Model {
	return kernels.StreamModel(in.op, len(in.a), engine.SizeOf[T]())
}

func (in *streamInstance[T]) Close() error {
	return errors.Join(in.ba.Close(), in.bb.Close(), in.out.Close(), in.part.Close(), in.s.Close())
}

// ErrVerify is wrapped by every verification failure.
var ErrVerify = errors.New("verification failed")
