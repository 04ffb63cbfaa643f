package attention

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// AttentionShape is the shape of the attention tensors Q, K, V and O: [Batch, Heads, Seq,
// Dim], row-major (Dim fastest), the same for all four (seq_q = seq_k).
type AttentionShape struct {
	Batch, Heads, Seq, Dim int
}

// Elems returns the number of elements of one tensor.
func (s AttentionShape) Elems() int { return s.Batch * s.Heads * s.Seq * s.Dim }

func (s AttentionShape) String() string {
	return fmt.Sprintf("batch=%d heads=%d seq=%d dim=%d", s.Batch, s.Heads, s.Seq, s.Dim)
}

// attnTiles are the tunables of attention.cl: see its header.
type attnTiles struct {
	dmax, br, bc, rq, tpr int
}

func (c attnTiles) wg() int { return c.br / c.rq * c.tpr }

// localElems is the local memory of attention_fwd in elements.
func (c attnTiles) localElems() int {
	return (c.br+2*c.bc)*(c.dmax+1) + c.br*(c.bc+1) + c.br*c.tpr
}

// attnCandidates are the tiles tried in order, the first that fits the device taken:
// larger query blocks reuse each K/V tile more; RQ queries per item and BC/TPR keys per item
// form the register tile of the score loop, RQ x DMAX/TPR that of the P V loop.
var attnCandidates = []attnTiles{
	{br: 64, bc: 32, rq: 4, tpr: 16}, // float, dim <= 64: 45 KiB, 256 items
	{br: 32, bc: 32, rq: 2, tpr: 16},
	{br: 32, bc: 16, rq: 2, tpr: 16}, // float, dim <= 128: 36 KiB; double, dim <= 64
	{br: 32, bc: 16, rq: 2, tpr: 8},
	{br: 16, bc: 16, rq: 1, tpr: 8},
	{br: 16, bc: 8, rq: 1, tpr: 8}, // float, dim <= 256: 33 KiB; double, dim <= 128
	{br: 8, bc: 8, rq: 1, tpr: 8},
	{br: 8, bc: 4, rq: 1, tpr: 4}, // double, dim <= 256
	{br: 4, bc: 4, rq: 1, tpr: 4},
	{br: 2, bc: 2, rq: 1, tpr: 2},
	{br: 1, bc: 1, rq: 1, tpr: 1},
}

// attnLocalBudget is the local memory the tiles may use: CUDA's limit on static shared
// memory per block, which the prelude's kernel-scope __local arrays are.
const attnLocalBudget = 48 << 10

// AttentionMaxDim is the largest head dimension the family supports.
const AttentionMaxDim = 256

// pickAttnTiles returns the first candidate for head dimensions up to dmax that fits
// the device's work-group and local memory limits.
func pickAttnTiles(dmax, elemSize, maxWG int, localBytes int64) (attnTiles, error) {
	budget := int64(attnLocalBudget)
	if localBytes > 0 {
		budget = min(budget, localBytes)
	}
	for _, c := range attnCandidates {
		c.dmax = dmax
		if c.bc%c.tpr != 0 || dmax%c.tpr != 0 || c.br%c.rq != 0 || (maxWG > 0 && c.wg() > maxWG) ||
			int64(c.localElems()*elemSize) > budget {
			continue
		}
		return c, nil
	}
	return attnTiles{}, fmt.Errorf("kernels: attention: no tile fits dim %d in %d bytes of local memory: %w", dmax, budget, engine.ErrUnsupported)
}

// Attention computes scaled dot-product attention O = softmax(Q K^T * scale [+ causal mask]) V
// FlashAttention-style (attention.cl: key/value blocks in local memory, online softmax,
// no seq x seq matrix) on one device, for tensors stored in S: float32 and float64
// computed in their own type, engine.Half and engine.BFloat16 computed in float32 (Elem).
// It is safe for concurrent use by goroutines that each use their own Queue.
type Attention[S Elem] struct {
	prog   *engine.Program
	k      *engine.Kernel
	tiles  attnTiles
	double bool // the arithmetic is float64
	// loops is the device's limit on a work-item's loop iterations (kernels.LoopLimit), 0
	// for none: Forward refuses a shape whose work-items would loop longer.
	loops int
}

// loopIterations returns the loop iterations a work-item of attention.cl runs over keys
// keys at head dimension dim, by its loops with run-time bounds: the query block's load,
// then per key block the K and V tiles' load, the scores' loop over the dimensions, the
// P V loop over the block's keys and the block loop itself (the loops over RQ, TPR and the
// register tiles have constant bounds and unroll). On Rusticl (BC 4, 32 work-items) at
// head dim 128 it counts 149 a block, and the kernel went wrong from about 430 blocks on
// (64,000 by this count, against llvmpipe's 65,535: loops it does not count, such as ones
// the compiler does not unroll, make up the rest).
func (a *Attention[S]) loopIterations(keys, dim int) int {
	t := a.tiles
	wg := t.wg()
	blocks := (keys + t.bc - 1) / t.bc
	return (t.br*dim+wg-1)/wg + blocks*((t.bc*dim+wg-1)/wg+dim+t.bc+1)
}

// checkLoops returns an error wrapping engine.ErrUnsupported where the device ends a
// work-item's loops (kernels.LoopLimit) before shape s's work-items are done: a work-item
// loops over the keys of its query block, at most seq (full or causal), and 90% of the
// limit leaves room for the loops loopIterations leaves out.
func (a *Attention[S]) checkLoops(s AttentionShape) error {
	if a.loops <= 0 {
		return nil
	}
	return kernels.CheckLoops(a.loops, a.loopIterations(s.Seq, s.Dim), "attention: %v (%d keys at head dim %d)", s, s.Seq, s.Dim)
}

// NewAttention compiles the attention family for dev for head dimensions up to maxDim
// (1 to AttentionMaxDim; the local tiles are sized for 64, 128 or 256, the smallest that
// holds maxDim), for tensors stored in S. The local tiles hold the arithmetic's type
// (float32 for the storage types). It returns an error wrapping engine.ErrUnsupported when
// S is float64 and the device has no fp64, or when no tile fits the device's local memory.
func NewAttention[S Elem](dev *engine.Device, maxDim int) (*Attention[S], error) {
	if maxDim < 1 || maxDim > AttentionMaxDim {
		return nil, fmt.Errorf("kernels: attention: max dim %d; must be 1 to %d: %w", maxDim, AttentionMaxDim, engine.ErrInvalidArg)
	}
	dmax := 64
	for dmax < maxDim {
		dmax *= 2
	}
	stored, compute := elemTypes[S]()
	opts, err := compute.Defines(dev)
	if err != nil {
		return nil, err
	}
	src := source
	if stored.Storage {
		// The conversions (kernels/convert.cl) in front: float32 and float64 build attention.cl alone.
		conv := storageConv[stored.Name]
		src = kernels.ConvertSource + source
		opts = append(opts, "-DIN="+stored.OpenCL, "-DCONV="+conv.load, "-DSTORE="+conv.store)
	}
	return kernels.Fit(dev, "attention", func(lim kernels.Limits) (*Attention[S], kernels.Shape, error) {
		tiles, err := pickAttnTiles(dmax, compute.Size, lim.WorkGroup, lim.LocalBytes)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		prog, err := dev.Build(src, append(opts,
			fmt.Sprintf("-DWG=%d", tiles.wg()), fmt.Sprintf("-DDMAX=%d", tiles.dmax), fmt.Sprintf("-DBR=%d", tiles.br),
			fmt.Sprintf("-DBC=%d", tiles.bc), fmt.Sprintf("-DRQ=%d", tiles.rq), fmt.Sprintf("-DTPR=%d", tiles.tpr))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		a := &Attention[S]{prog: prog, tiles: tiles, double: compute.Size == 8, loops: kernels.LoopLimit(dev)}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &a.k, Name: "attention_fwd"})
		if err != nil {
			a.Close()
			return nil, kernels.Shape{}, err
		}
		return a, kernels.Shape{Items: tiles.wg(), Kernels: ks}, nil
	})
}

// Close releases the compiled kernel. Idempotent.
func (a *Attention[S]) Close() error { return errors.Join(a.k.Close(), a.prog.Close()) }

// MaxDim returns the largest head dimension this instance accepts (64, 128 or 256).
func (a *Attention[S]) MaxDim() int { return a.tiles.dmax }

// WorkGroup returns the work-group size of the kernel.
func (a *Attention[S]) WorkGroup() int { return a.tiles.wg() }

// BlockQueries returns the number of queries per work-group (BR).
func (a *Attention[S]) BlockQueries() int { return a.tiles.br }

// BlockKeys returns the number of keys per block (BC): AttentionTolerance depends on it.
func (a *Attention[S]) BlockKeys() int { return a.tiles.bc }

// DefaultAttentionScale returns 1/sqrt(dim), the scale Forward uses when given 0.
func DefaultAttentionScale(dim int) float64 { return 1 / math.Sqrt(float64(dim)) }

// AttentionScale returns the factor Forward multiplies the scores by for a scale argument
// and head dimension dim: scale, or DefaultAttentionScale(dim) when scale is 0, rounded to
// the arithmetic of S (float32 for float32 and the storage types). The reference
// (AttentionRef) takes it.
func AttentionScale[S Elem](scale float64, dim int) float64 {
	if scale == 0 {
		scale = DefaultAttentionScale(dim)
	}
	if _, c := elemTypes[S](); c.Size == 4 {
		return float64(float32(scale))
	}
	return scale
}

// Forward computes o = softmax(q k^T * scale [+ causal mask]) v over the tensors of shape s
// (the first s.Elems() elements of each buffer). causal masks key j > query i. scale 0
// selects DefaultAttentionScale(s.Dim); any other value must be finite, also once rounded
// to the arithmetic's type (AttentionScale gives the factor used).
func (a *Attention[S]) Forward(q *engine.Queue, o, qb, kb, vb *engine.Buffer[S], s AttentionShape, causal bool, scale float64) error {
	sc, err := checkForward(s, a.tiles.dmax, scale, o, qb, kb, vb)
	if err != nil {
		return err
	}
	if err := a.checkLoops(s); err != nil {
		return err
	}
	bh := s.Batch * s.Heads
	groups := bh * ((s.Seq + a.tiles.br - 1) / a.tiles.br)
	wg := a.tiles.wg()
	if err := kernels.CheckGroups("attention", groups, wg); err != nil {
		return err
	}
	var c int32
	if causal {
		c = 1
	}
	var scaleArg any = float32(sc)
	if a.double {
		scaleArg = sc
	}
	return q.Launch(a.k, engine.Range1D(groups*wg, wg), o, qb, kb, vb, int32(s.Seq), int32(s.Dim), scaleArg, c)
}

// kernelScale returns scale * log2(e) as the float32 the tensor-core kernels (cuda-mma,
// cuda-wgmma) take, of either sign. Their softmax multiplies every score, -inf where masked,
// by it or by its magnitude, and -inf * 0 is NaN: a scale whose product is below float32's
// smallest normal number (2^-126) or above its largest in magnitude is refused with
// engine.ErrInvalidArg, naming it.
func kernelScale(scale float64) (float32, error) {
	v := scale * math.Log2E
	if a := math.Abs(v); !(a >= 0x1p-126 && a <= math.MaxFloat32) {
		// A scale rounded to float32 (AttentionScale) is named as the caller wrote it:
		// float32's shortest spelling, -1e-40 rather than -9.99994610111476e-41.
		bits := 64
		if float64(float32(scale)) == scale {
			bits = 32
		}
		return 0, fmt.Errorf("kernels: attention: scale %s: scale * log2(e) = %g is outside float32's normal range (2^-126 to %g in magnitude), which the tensor-core kernels' softmax needs: %w",
			strconv.FormatFloat(scale, 'g', -1, bits), v, math.MaxFloat32, engine.ErrInvalidArg)
	}
	return float32(v), nil
}

// checkForward checks the arguments of a Forward for an instance that takes head dimensions
// up to dmax and returns the factor the kernel multiplies the scores by: AttentionScale of
// scale (0 selects 1/sqrt(s.Dim)). Errors wrap engine.ErrInvalidArg and name the argument.
func checkForward[S Elem](s AttentionShape, dmax int, scale float64, o, qb, kb, vb *engine.Buffer[S]) (float64, error) {
	if s.Batch < 1 || s.Heads < 1 || s.Seq < 1 || s.Dim < 1 {
		return 0, fmt.Errorf("kernels: attention: shape %v; every dimension must be at least 1: %w", s, engine.ErrInvalidArg)
	}
	if s.Dim > dmax {
		return 0, fmt.Errorf("kernels: attention: dim %d exceeds this instance's max dim %d: %w", s.Dim, dmax, engine.ErrInvalidArg)
	}
	bh := s.Batch * s.Heads
	if s.Batch > math.MaxInt32/s.Heads || bh > math.MaxInt32/s.Seq || bh*s.Seq > math.MaxInt32/s.Dim {
		return 0, fmt.Errorf("kernels: attention: shape %v has more than 2^31-1 elements: %w", s, engine.ErrInvalidArg)
	}
	n := s.Elems()
	for _, b := range []struct {
		name string
		b    *engine.Buffer[S]
	}{{"o", o}, {"q", qb}, {"k", kb}, {"v", vb}} {
		if b.b == nil {
			return 0, fmt.Errorf("kernels: attention: nil buffer %s: %w", b.name, engine.ErrInvalidArg)
		}
		if b.b.Len() < n {
			return 0, fmt.Errorf("kernels: attention: buffer %s holds %d elements, shape %v needs %d: %w", b.name, b.b.Len(), s, n, engine.ErrInvalidArg)
		}
	}
	if math.IsNaN(scale) || math.IsInf(scale, 0) {
		return 0, fmt.Errorf("kernels: attention: scale %v; must be finite: %w", scale, engine.ErrInvalidArg)
	}
	sc := AttentionScale[S](scale, s.Dim)
	if math.IsInf(sc, 0) {
		return 0, fmt.Errorf("kernels: attention: scale %v overflows float32, the arithmetic's type: %w", scale, engine.ErrInvalidArg)
	}
	return sc, nil
}
