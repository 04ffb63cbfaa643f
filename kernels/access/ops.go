package access

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed access.cl
var source string

// Family returns the access family: its OpenCL C source (access.cl) and its operations, in
// the order listings show them: the sequential baseline, the strided reads by growing
// stride, gather, scatter.
func Family() kernels.Family {
	ops := []kernels.Op{accessOp[float32](OpSequential, 1)}
	for _, s := range Strides {
		ops = append(ops, accessOp[float32](OpStrided, s))
	}
	ops = append(ops, accessOp[float32](OpGather, 1), accessOp[float32](OpScatter, 1))
	return kernels.Family{Name: "access", Source: source, Ops: ops}
}

// The NewRand stream constants of the access family's inputs: x ("accx") and the
// permutation of gather and scatter ("accp"), drawn from its own stream so that it is the
// same on every device whatever number of x sets rotation draws.
const (
	accessStream = 0x61636378
	permStream   = 0x61636370
)

// opName returns the name of op within the family: the pattern, or "stride8" for the
// strided read at stride 8.
func opName(op AccessOp, stride int) string {
	if op == OpStrided {
		return fmt.Sprintf("stride%d", stride)
	}
	return string(op)
}

// accessDoc returns the one line of op's Doc.
func accessDoc[T kernels.Float](op AccessOp, stride int) string {
	switch op {
	case OpSequential:
		return "y[i] = x[i], one element per work-item: the coalesced baseline of the access ops"
	case OpStrided:
		return fmt.Sprintf("x read down columns of %d, neighbouring items %d bytes apart; GB/s counts useful bytes only, so it falls as the stride grows",
			stride, stride*engine.SizeOf[T]())
	case OpGather:
		return "y[i] = x[idx[i]], idx a random uint32 permutation: random reads, coalesced writes"
	case OpScatter:
		return "y[idx[i]] = x[i], idx a random uint32 permutation: coalesced reads, random writes"
	}
	return ""
}

func accessOp[T kernels.Float](op AccessOp, stride int) kernels.Op {
	name := "access/" + opName(op, stride) + "/" + kernels.TypeName[T]()
	sizeDoc := "n elements per array"
	if op == OpGather || op == OpScatter {
		sizeDoc = "n elements per array, and n uint32 indices"
	}
	return kernels.Op{
		Name: name, Family: "access", Type: kernels.TypeName[T](), Doc: accessDoc[T](op, stride),
		SizeDoc: sizeDoc, DefaultSize: 1 << 26, QuickSize: 1 << 20,
		Variants: kernels.Portable(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			return setupAccess[T](ctx, q, name, op, stride, p)
		}),
	}
}

// accessInstance runs one access op from sets of inputs x (and idx, rotated with them) into
// one output buffer y.
type accessInstance[T kernels.Float] struct {
	a      *Access[T]
	op     AccessOp
	stride int
	n      int
	x      *kernels.Inputs[T]
	idx    *kernels.Inputs[uint32] // gather and scatter: a permutation per set
	y      *engine.Buffer[T]
}

func setupAccess[T kernels.Float](ctx context.Context, q *engine.Queue, name string, op AccessOp, stride int, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	if p.Size > math.MaxInt32 {
		return nil, fmt.Errorf("kernels: %s: size %d exceeds the family's limit of 2^31-1 elements: %w", name, p.Size, engine.ErrInvalidArg)
	}
	a, err := NewAccess[T](q.Device())
	if err != nil {
		return nil, err
	}
	n := p.Size
	in := &accessInstance[T]{a: a, op: op, stride: stride, n: n}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	indexed := op == OpGather || op == OpScatter
	setBytes := n * engine.SizeOf[T]()
	var perm []uint32
	if indexed {
		setBytes += 4 * n
		perm = randPerm(kernels.NewRand(p.Seed, permStream), n)
	}
	rng := kernels.NewRand(p.Seed, accessStream)
	in.x, err = kernels.NewInputs(ctx, q, p, setBytes, func(int) [][]T { return [][]T{kernels.RandFloats[T](rng, n, -1, 1)} })
	if err != nil {
		return nil, err
	}
	if indexed {
		// Each further set is the first permutation rotated: another permutation, at the cost
		// of a copy instead of a shuffle.
		in.idx, err = kernels.NewInputs(ctx, q, p, setBytes, func(set int) [][]uint32 {
			return [][]uint32{kernels.Rotated(perm, set*(n/8+1))}
		})
		if err != nil {
			return nil, err
		}
	}
	if in.y, err = engine.NewBuffer[T](q.Device(), n); err != nil {
		return nil, err
	}
	return in, nil
}

// randPerm returns a random permutation of 0..n-1 drawn from rng (Fisher-Yates).
func randPerm(rng *rand.Rand, n int) []uint32 {
	p := make([]uint32, n)
	for i := range p {
		p[i] = uint32(i)
	}
	rng.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

func (in *accessInstance[T]) Run(ctx context.Context, q *engine.Queue) error {
	x := in.x.Next()[0]
	switch in.op {
	case OpSequential:
		return in.a.Sequential(q, in.y, x, in.n)
	case OpStrided:
		return in.a.Strided(q, in.y, x, in.n, in.stride)
	case OpGather:
		return in.a.Gather(q, in.y, x, in.idx.Next()[0], in.n)
	default:
		return in.a.Scatter(q, in.y, x, in.idx.Next()[0], in.n)
	}
}

// Verify compares the whole output with the reference, exactly.
func (in *accessInstance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := in.y.Download(ctx, q)
	if err != nil {
		return err
	}
	x, err := in.x.Last(ctx)
	if err != nil {
		return err
	}
	var idx []uint32
	if in.idx != nil {
		last, err := in.idx.Last(ctx)
		if err != nil {
			return err
		}
		idx = last[0]
	}
	return kernels.CheckEqual("access "+opName(in.op, in.stride)+" y", got, AccessRef(in.op, x[0], idx, in.stride))
}

func (in *accessInstance[T]) Model() kernels.Model {
	return AccessModel(in.op, in.n, engine.SizeOf[T]())
}

func (in *accessInstance[T]) Shape() string {
	if in.op == OpStrided {
		rows, _ := StridedShape(in.n, in.stride)
		return fmt.Sprintf("n=%d stride=%d rows=%d", in.n, in.stride, rows)
	}
	return fmt.Sprintf("n=%d", in.n)
}

func (in *accessInstance[T]) Close() error {
	return errors.Join(in.y.Close(), in.idx.Close(), in.x.Close(), in.a.Close())
}
