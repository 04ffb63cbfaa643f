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
// order listings show them: float32, then float16, bfloat16 and float8e4m3 (Q, K, V and O
// stored in them, float32 arithmetic).
func Family() kernels.Family {
	return kernels.Family{Name: "attention", Source: source, Ops: []kernels.Op{
		attentionOp(true), attentionOp(false),
		precisionOp[engine.Half](true), precisionOp[engine.Half](false),
		precisionOp[engine.BFloat16](true), precisionOp[engine.BFloat16](false),
		precisionOp[engine.Float8E4M3](true), precisionOp[engine.Float8E4M3](false),
	}}
}

// Shape of the float32 ops: batch 1, 8 heads of dimension 64; Size picks seq (SizeShape),
// unless Params.Shape gives the four dimensions.
const (
	attnOpHeads = 8
	attnOpDim   = 64
)

// Shape of the float16, bfloat16 and float8e4m3 ops: batch 4, 32 heads of dimension 128 (a large
// language model's layer); Size picks seq (SizeShape), unless Params.Shape gives the four
// dimensions.
const (
	precOpBatch = 4
	precOpHeads = 32
	precOpDim   = 128
)

// attnVerifyWork is the reference work (rows checked * seq * dim multiply-adds) Verify
// spends: all rows when they fit, else a seeded sample (about 50 ms in Go).
const attnVerifyWork = 1 << 21

// attnDoc returns the Doc of the full or causal ops.
func attnDoc(causal bool) (kind, doc string) {
	if causal {
		return "causal", "O = softmax(Q K^T/sqrt(dim) + causal mask) V, FlashAttention-style tiles (key blocks past the query block skipped)"
	}
	return "full", "O = softmax(Q K^T/sqrt(dim)) V, FlashAttention-style tiles (online softmax, no seq x seq matrix)"
}

func attentionOp(causal bool) kernels.Op {
	kind, doc := attnDoc(causal)
	name := "attention/" + kind + "/float32"
	return kernels.Op{
		Name: name, Family: "attention", Type: "float32",
		Doc:         doc + "; on GPUs FlashAttention-2 in SIMT register tiles (flash-simt, attention_flash.cl), elsewhere attention.cl",
		SizeDoc:     "batch 1, heads 8, dim 64, seq = size/512 (at least 1): Q, K, V, O of batch*heads*seq*dim elements; or a shape BxHxSxD (Params.Shape), dim 1 to 256",
		DefaultSize: 1 * attnOpHeads * 4096 * attnOpDim, QuickSize: 1 * attnOpHeads * 256 * attnOpDim,
		Variants: []kernels.Variant{flashVariant(name, causal), kernels.PortableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			s, err := shapeOf(name, p)
			if err != nil {
				return nil, err
			}
			return newAttnInstance(ctx, q, s, causal, p, newPortable[float32])
		})},
	}
}

// precisionOp returns the full or causal op with Q, K, V and O stored in S (float16,
// bfloat16 or float8e4m3).
func precisionOp[S Elem](causal bool) kernels.Op {
	kind, doc := attnDoc(causal)
	stored, _ := elemTypes[S]()
	name := "attention/" + kind + "/" + stored.Name
	dims := "cuda-mma 64 and 128, cuda-wgmma 64, 128 and 256"
	if isFloat8[S]() {
		dims = "cuda-wgmma 64, 128 and 256"
	}
	return kernels.Op{
		Name: name, Family: "attention", Type: stored.Name,
		Doc: doc + "; Q, K, V and O in " + stored.Name + ", float32 arithmetic",
		SizeDoc: fmt.Sprintf("batch %d, heads %d, dim %d, seq = size/%d; below %d, batch 1, heads = size/%d (1 to %d), seq 1: Q, K, V, O of batch*heads*seq*dim elements; or a shape BxHxSxD (Params.Shape), dim 1 to 256 (%s)",
			precOpBatch, precOpHeads, precOpDim, precOpBatch*precOpHeads*precOpDim, precOpBatch*precOpHeads*precOpDim, precOpDim, precOpHeads, dims),
		DefaultSize: precOpBatch * precOpHeads * 4096 * precOpDim, QuickSize: precOpBatch * precOpHeads * 32 * precOpDim,
		Variants: precisionVariants[S](name, causal),
	}
}

// forwarder is one implementation of attention in storage type S.
type forwarder[S Elem] interface {
	Forward(q *engine.Queue, o, qb, kb, vb *engine.Buffer[S], s AttentionShape, causal bool, scale float64) error
	BlockKeys() int // keys per block, for the tolerance
	Close() error
}

var (
	_ forwarder[engine.Half]       = (*Attention[engine.Half])(nil)
	_ forwarder[engine.BFloat16]   = (*Attention[engine.BFloat16])(nil)
	_ forwarder[float32]           = (*Attention[float32])(nil)
	_ forwarder[engine.Half]       = (*MMA[engine.Half])(nil)
	_ forwarder[engine.BFloat16]   = (*MMA[engine.BFloat16])(nil)
	_ forwarder[engine.Half]       = (*WGMMA[engine.Half])(nil)
	_ forwarder[engine.BFloat16]   = (*WGMMA[engine.BFloat16])(nil)
	_ forwarder[engine.Float8E4M3] = (*Attention[engine.Float8E4M3])(nil)
	_ forwarder[engine.Float8E4M3] = (*WGMMA[engine.Float8E4M3])(nil)
)

// isFloat8 reports whether S is float8 E4M3, whose tensor-core kernel is wgmma.cu's alone.
func isFloat8[S Elem]() bool {
	_, ok := any(*new(S)).(engine.Float8E4M3)
	return ok
}

// newPortable readies the portable kernel (attention.cl) for head dimensions up to dim.
func newPortable[S Elem](dev *engine.Device, dim int) (forwarder[S], error) {
	a, err := NewAttention[S](dev, dim)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// precisionVariants returns the variants of the float16, bfloat16 and float8e4m3 ops, in
// priority order: Hopper's warpgroup tensor cores (wgmma.cu) on sm_90, the tensor cores
// through mma.sync (attention.cu) on NVIDIA GPUs of sm_80 and newer (not for float8e4m3),
// then the portable kernel.
func precisionVariants[S Elem](name string, causal bool) []kernels.Variant {
	mma := kernels.Variant{Name: "cuda-mma", Dialect: engine.DialectCUDA, Backend: "cuda", MinCompute: MMACompute,
		Doc:      "FlashAttention-2 on the tensor cores: mma.sync m16n8k16, ldmatrix, K and V tiles double-buffered by cp.async",
		Tunables: MMADefaults(precOpDim).String(),
		Candidates: func(dev *engine.Device) []string {
			list := []string{MMADefaults(precOpDim).String()}
			for _, c := range mmaCandidates {
				if s := c.String(); s != list[0] {
					list = append(list, s)
				}
			}
			return list
		},
		Setup: tunedSetup(name, causal, "cuda-mma", ParseMMATunables, MMADefaults, newMMAFor[S])}
	portable := kernels.PortableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		return setupPrecision(ctx, q, name, causal, p, newPortable[S])
	})
	wgmma := kernels.Variant{Name: "cuda-wgmma", Dialect: engine.DialectCUDA, Backend: "cuda", MinCompute: 90,
		Doc: "Hopper's warpgroup tensor cores (wgmma, P V with P in registers), Q, K, V tiles copied by TMA, a producer and two consumer warpgroups",
		Needs: func(info engine.DeviceInfo) error {
			if info.ComputeCapability != 90 {
				return fmt.Errorf("needs sm_90 (wgmma is Hopper's); the device is sm_%d", info.ComputeCapability)
			}
			return nil
		},
		Tunables:   WGMMADefaults(precOpDim).String(),
		Candidates: kernels.CandidatesOf(wgmmaCandidates),
		Setup:      tunedSetup(name, causal, "cuda-wgmma", ParseWGMMATunables, WGMMADefaults, newWGMMAFor[S])}
	if isFloat8[S]() {
		wgmma.Doc = "Hopper's warpgroup tensor cores in float8 (wgmma k32, P rounded to E4M3 in registers), Q, K and a transposed copy of V tiled by TMA, a producer and two consumer warpgroups; head dims 64, 128 and 256"
		wgmma.Candidates = kernels.CandidatesOf(wgmmaFloat8Candidates)
		return []kernels.Variant{wgmma, portable}
	}
	return []kernels.Variant{wgmma, mma, portable}
}

// newWGMMAFor readies the Hopper attention in S (float16, bfloat16 or float8e4m3) with
// tunables t.
func newWGMMAFor[S Elem](dev *engine.Device, dim int, t WGMMATunables) (forwarder[S], error) {
	var f any
	var err error
	switch any(*new(S)).(type) {
	case engine.Half:
		f, err = NewWGMMAWith[engine.Half](dev, dim, t)
	case engine.BFloat16:
		f, err = NewWGMMAWith[engine.BFloat16](dev, dim, t)
	case engine.Float8E4M3:
		f, err = NewWGMMAWith[engine.Float8E4M3](dev, dim, t)
	default:
		stored, _ := elemTypes[S]()
		return nil, fmt.Errorf("kernels: attention in %s has no wgmma kernel (float16, bfloat16 and float8e4m3 do): %w", stored.Name, engine.ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	return f.(forwarder[S]), nil
}

// tensorTunables are the tunables of a tensor-core variant: spelled by String, checked
// against a head dimension in elements of eb bytes.
type tensorTunables interface {
	String() string
	check(dim, eb int) error
}

// tunedSetup returns the Setup of the tensor-core variant of op name (causal or not): it
// takes the variant's tunables at the shape's head dimension, forced (Params.Tunables),
// tuned (prism tune's saved winner, measured at the op's dim 128: taken at another dim where
// it is valid there) or table (defaults of dim), readies the kernel with mk and reports the
// tunables and where they came from.
func tunedSetup[S Elem, T tensorTunables](name string, causal bool, variant string, parse func(string) (T, error), defaults func(int) T,
	mk func(*engine.Device, int, T) (forwarder[S], error)) func(context.Context, *engine.Queue, kernels.Params) (kernels.Instance, error) {
	return func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		var t T
		var from string
		in, err := setupPrecision(ctx, q, name, causal, p, func(dev *engine.Device, dim int) (forwarder[S], error) {
			var err error
			t, from, err = kernels.TunablesFor(dev, name, variant, p.Tunables, func(s string) (T, error) {
				t, err := parse(s)
				if err == nil {
					err = t.check(dim, engine.SizeOf[S]())
				}
				return t, err
			}, defaults(dim), "table")
			if err != nil {
				return nil, err
			}
			return mk(dev, dim, t)
		})
		if err != nil {
			return nil, err
		}
		in.(*attnInstance[S]).tunables = t.String() + " (" + from + ")"
		return in, nil
	}
}

// newMMAFor readies the tensor-core attention in S (float16 or bfloat16) with tunables t.
func newMMAFor[S Elem](dev *engine.Device, dim int, t MMATunables) (forwarder[S], error) {
	var f any
	var err error
	switch any(*new(S)).(type) {
	case engine.Half:
		f, err = NewMMAWith[engine.Half](dev, dim, t)
	case engine.BFloat16:
		f, err = NewMMAWith[engine.BFloat16](dev, dim, t)
	default:
		stored, _ := elemTypes[S]()
		return nil, fmt.Errorf("kernels: attention in %s has no tensor-core kernel (float16 and bfloat16 do): %w", stored.Name, engine.ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	return f.(forwarder[S]), nil
}

// setupPrecision sets up the float16 or bfloat16 op name on q with the implementation newF
// makes: the op's shape (p.Shape, else batch 4, 32 heads of dimension 128, seq from
// p.Size: shapeOf), its seeded inputs, verification and model, the same for every
// variant.
func setupPrecision[S Elem](ctx context.Context, q *engine.Queue, name string, causal bool, p kernels.Params, newF func(dev *engine.Device, dim int) (forwarder[S], error)) (kernels.Instance, error) {
	s, err := shapeOf(name, p)
	if err != nil {
		return nil, err
	}
	return newAttnInstance(ctx, q, s, causal, p, newF)
}

// attnInstance runs attention over rotated sets of Q, K, V.
type attnInstance[S Elem] struct {
	f      forwarder[S]
	shape  AttentionShape
	causal bool
	scale  float64 // the factor the kernel multiplies the scores by: AttentionScale
	seed   uint64
	qkv    *kernels.Inputs[S] // Q, K, V
	out    *engine.Buffer[S]
	// tunables are the variant's tunables and where they came from, for reports ("" for the
	// portable kernel).
	tunables string
}

// Tunables returns the tunables the instance runs with ("" for the portable kernel).
func (in *attnInstance[S]) Tunables() string { return in.tunables }

// newAttnInstance sets up attention of shape s with the implementation newF makes, on
// seeded inputs rounded to S.
func newAttnInstance[S Elem](ctx context.Context, q *engine.Queue, s AttentionShape, causal bool, p kernels.Params, newF func(dev *engine.Device, dim int) (forwarder[S], error)) (_ kernels.Instance, err error) {
	f, err := newF(q.Device(), s.Dim)
	if err != nil {
		return nil, err
	}
	// The portable kernel refuses at once a shape whose work-items would loop past the
	// device's limit (Attention.checkLoops), as Forward would at the first run.
	if c, ok := f.(interface{ checkLoops(AttentionShape) error }); ok {
		if err := c.checkLoops(s); err != nil {
			f.Close()
			return nil, err
		}
	}
	in := &attnInstance[S]{f: f, shape: s, causal: causal, scale: AttentionScale[S](0, s.Dim), seed: p.Seed}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	n := s.Elems()
	rng := kernels.NewRand(p.Seed, 0xa77e)
	// q and k in [-2, 2): scores of standard deviation about 1.3 at dim 64, a softmax that
	// is neither uniform nor one-hot. Later rotation sets are rotations of the first.
	first := [3][]S{randElems[S](rng, n, -2, 2), randElems[S](rng, n, -2, 2), randElems[S](rng, n, -1, 1)}
	in.qkv, err = kernels.NewInputs(ctx, q, p, 3*n*engine.SizeOf[S](), func(k int) [][]S {
		return [][]S{kernels.Rotated(first[0], k*(s.Dim+1)), kernels.Rotated(first[1], k*(2*s.Dim+1)), kernels.Rotated(first[2], k*(3*s.Dim+1))}
	})
	if err != nil {
		return nil, err
	}
	if in.out, err = engine.NewBuffer[S](q.Device(), n); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *attnInstance[S]) Run(ctx context.Context, q *engine.Queue) error {
	b := in.qkv.Next()
	return in.f.Forward(q, in.out, b[0], b[1], b[2], in.shape, in.causal, in.scale)
}

// Verify checks every output row when the reference is cheap (bh*seq^2*dim up to 2^21),
// else a seeded sample of max(2^21/(seq*dim), 1000/dim + 1) rows (with repeats) plus the
// first and the last row: at least 1000 elements.
func (in *attnInstance[S]) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := in.out.Download(ctx, q)
	if err != nil {
		return err
	}
	set, err := in.qkv.Last(ctx)
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
	return checkAttnRows(in.f.BlockKeys(), got, set[0], set[1], set[2], s, in.causal, in.scale, idx)
}

// checkAttnRows checks the output rows idx (numbered h*seq + i) of got against the
// reference, each element with AttentionToleranceOf for key blocks of bc keys.
func checkAttnRows[S Elem](bc int, got, q, k, v []S, s AttentionShape, causal bool, scale float64, idx []int) error {
	r := newAttnRefRow(s.Seq, s.Dim)
	row64 := make([]float64, s.Dim)
	for _, row := range idx {
		h, i := row/s.Seq, row%s.Seq
		attnRefCompute(r, q, k, v, s, h, i, causal, scale)
		widen(row64, got[row*s.Dim:(row+1)*s.Dim])
		what := fmt.Sprintf("attention O (head %d, query %d of %v)", h, i, s)
		if err := kernels.CheckClose(what, row64, r.out, func(d int) float64 {
			return attnRowTol[S](r, s, bc, d)
		}); err != nil {
			return err
		}
	}
	return nil
}

// Model: 4*b*h*seq^2*dim FLOPs (two matrix products of 2*seq^2*dim each per head), halved
// when causal; bytes: Q, K, V read once and O written once, in S (2 bytes an element for
// float16 and bfloat16, 1 for float8e4m3; float8's cuda-wgmma also reads V and writes its
// transposed copy, uncounted).
func (in *attnInstance[S]) Model() kernels.Model {
	s := in.shape
	f := 4 * float64(s.Batch*s.Heads) * float64(s.Seq) * float64(s.Seq) * float64(s.Dim)
	if in.causal {
		f /= 2
	}
	return kernels.Model{Flops: f, Bytes: 4 * float64(s.Elems()) * float64(engine.SizeOf[S]())}
}

func (in *attnInstance[S]) Shape() string {
	c := ""
	if in.causal {
		c = " causal"
	}
	return in.shape.String() + c
}

func (in *attnInstance[S]) Close() error {
	return errors.Join(in.qkv.Close(), in.out.Close(), in.f.Close())
}
