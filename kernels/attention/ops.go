package attention

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed attention.cl
var source string

// Family returns the attention family: its OpenCL C source (attention.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	return kernels.Family{Name: "attention", Source: source, Ops: []kernels.Op{attentionOp(true), attentionOp(false)}}
}

// Shape of the attention ops: batch 1, 8 heads of dimension 64; Size picks seq.
const (
	attnOpHeads = 8
	attnOpDim   = 64
)

// attnVerifyWork is the reference work (rows checked * seq * dim multiply-adds) Verify
// spends: all rows when they fit, else a seeded sample (about 50 ms in Go).
const attnVerifyWork = 1 << 21

func attentionOp(causal bool) kernels.Op {
	kind, doc := "full", "O = softmax(Q K^T/sqrt(dim)) V, FlashAttention-style tiles (online softmax, no seq x seq matrix)"
	if causal {
		kind, doc = "causal", "O = softmax(Q K^T/sqrt(dim) + causal mask) V, FlashAttention-style tiles (key blocks past the query block skipped)"
	}
	name := "attention/" + kind + "/float32"
	return kernels.Op{
		Name: name, Family: "attention", Type: "float32", Doc: doc,
		SizeDoc:     "batch 1, heads 8, dim 64, seq = size/512 (at least 1): Q, K, V, O of batch*heads*seq*dim elements",
		DefaultSize: 1 * attnOpHeads * 4096 * attnOpDim, QuickSize: 1 * attnOpHeads * 256 * attnOpDim,
		Variants: kernels.Portable(func(q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			return setupAttention[float32](q, name, causal, p)
		}),
	}
}

// attnInstance runs attention over rotated sets of Q, K, V.
type attnInstance[T kernels.Float] struct {
	a      *Attention[T]
	shape  AttentionShape
	causal bool
	scale  T
	seed   uint64
	qkv    *kernels.Inputs[T] // Q, K, V
	out    *engine.Buffer[T]
}

func setupAttention[T kernels.Float](q *engine.Queue, name string, causal bool, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	s := AttentionShape{Batch: 1, Heads: attnOpHeads, Seq: max(p.Size/(attnOpHeads*attnOpDim), 1), Dim: attnOpDim}
	a, err := NewAttention[T](q.Device(), s.Dim)
	if err != nil {
		return nil, err
	}
	in := &attnInstance[T]{a: a, shape: s, causal: causal, scale: DefaultAttentionScale[T](s.Dim), seed: p.Seed}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	n := s.Elems()
	rng := kernels.NewRand(p.Seed, 0xa77e)
	// q and k in [-2, 2): scores of standard deviation about 1.3 at dim 64, a softmax that
	// is neither uniform nor one-hot. Later rotation sets are rotations of the first.
	first := [3][]T{kernels.RandFloats[T](rng, n, -2, 2), kernels.RandFloats[T](rng, n, -2, 2), kernels.RandFloats[T](rng, n, -1, 1)}
	in.qkv, err = kernels.NewInputs(context.TODO(), q, p, 3*n*engine.SizeOf[T](), func(k int) [][]T {
		return [][]T{kernels.Rotated(first[0], k*(s.Dim+1)), kernels.Rotated(first[1], k*(2*s.Dim+1)), kernels.Rotated(first[2], k*(3*s.Dim+1))}
	})
	if err != nil {
		return nil, err
	}
	if in.out, err = engine.NewBuffer[T](q.Device(), n); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *attnInstance[T]) Run(q *engine.Queue) error {
	b := in.qkv.Next()
	return in.a.Forward(q, in.out, b[0], b[1], b[2], in.shape, in.causal, in.scale)
}

// Verify checks every output row when the reference is cheap (bh*seq^2*dim up to 2^21),
// else a seeded sample of max(2^21/(seq*dim), 1000/dim + 1) rows (with repeats) plus the
// first and the last row: at least 1000 elements.
func (in *attnInstance[T]) Verify(q *engine.Queue) error {
	got, err := in.out.Download(context.TODO(), q)
	if err != nil {
		return err
	}
	set, err := in.qkv.Last(context.TODO())
	if err != nil {
		return err
	}
	s := in.shape
	rows := s.Batch * s.Heads * s.Seq
	var idx []int
	if rows*s.Seq*s.Dim <= attnVerifyWork {
		for r := range rows {
			idx = append(idx, r)
		}
	} else {
		rng := kernels.NewRand(in.seed, 0xa5a)
		idx = append(idx, 0, rows-1)
		for range max(attnVerifyWork/(s.Seq*s.Dim), 1000/s.Dim+1) {
			idx = append(idx, rng.IntN(rows))
		}
	}
	return checkAttnRows(in.a, got, set[0], set[1], set[2], s, in.causal, float64(in.scale), idx)
}

// checkAttnRows checks the output rows idx (numbered h*seq + i) of got against the
// reference, each element with AttentionTolerance.
func checkAttnRows[T kernels.Float](a *Attention[T], got, q, k, v []T, s AttentionShape, causal bool, scale float64, idx []int) error {
	r := newAttnRefRow(s.Seq, s.Dim)
	bc := a.BlockKeys()
	for _, row := range idx {
		h, i := row/s.Seq, row%s.Seq
		attnRefCompute(r, q, k, v, s, h, i, causal, scale)
		what := fmt.Sprintf("attention O (head %d, query %d of %v)", h, i, s)
		if err := kernels.CheckClose(what, got[row*s.Dim:(row+1)*s.Dim], r.out, func(d int) float64 {
			return attnRowTol[T](r, s, bc, d)
		}); err != nil {
			return err
		}
	}
	return nil
}

// Model: 4*b*h*seq^2*dim FLOPs (two matrix products of 2*seq^2*dim each per head), halved
// when causal; bytes: Q, K, V read once and O written once.
func (in *attnInstance[T]) Model() kernels.Model {
	s := in.shape
	f := 4 * float64(s.Batch*s.Heads) * float64(s.Seq) * float64(s.Seq) * float64(s.Dim)
	if in.causal {
		f /= 2
	}
	return kernels.Model{Flops: f, Bytes: 4 * float64(s.Elems()) * float64(engine.SizeOf[T]())}
}

func (in *attnInstance[T]) Shape() string {
	c := ""
	if in.causal {
		c = " causal"
	}
	return in.shape.String() + c
}

func (in *attnInstance[T]) Close() error {
	return errors.Join(in.qkv.Close(), in.out.Close(), in.a.Close())
}
