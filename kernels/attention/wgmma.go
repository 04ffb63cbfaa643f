package attention

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed wgmma.cu
var wgmmaSource string

// wgmma.cu's geometry: 128 queries per block (two consumer warpgroups of 64), a producer
// warpgroup; key tiles of WGMMATunables.BC.
const (
	attnWGMMABR      = 128
	attnWGMMABC      = 64
	attnWGMMAThreads = 384
)

// attnWGMMAShared is the dynamic shared memory of a launch for head dimension dim with
// stages stages of bc keys, eb bytes an element: the Q tiles of both consumers, the stages
// of a K and a V tile, and 1024 bytes to align them.
func attnWGMMAShared(dim, stages, bc, eb int) int {
	return 2*64*dim*eb + stages*2*bc*dim*eb + 1024
}

// WGMMATunables are the tunables of wgmma.cu: the Stages of K and V tiles in its ring, its
// Sched, 0 (each consumer computes a key tile's scores, softmax and P V in turn) or 1
// (FlashAttention-3's: the softmax of one tile under the tensor cores' P V of the last, the
// two consumers issuing their products in turn), and BC, the keys of a tile (64, or 128 or
// 176 below head dim 256: FA3 takes 176 at head dim 128 without a causal mask, 128 with
// one).
type WGMMATunables struct {
	Stages, Sched, BC int
}

// String spells t as Params.Tunables and ParseWGMMATunables take it: "STAGES=2 SCHED=0
// BC=64".
func (t WGMMATunables) String() string {
	return fmt.Sprintf("STAGES=%d SCHED=%d BC=%d", t.Stages, t.Sched, t.BC)
}

// ParseWGMMATunables reads tunables as WGMMATunables.String writes them: STAGES and SCHED
// must be given, BC may be left out (64, the spelling of earlier tuning files). Errors wrap
// engine.ErrInvalidArg and name the key.
func ParseWGMMATunables(s string) (WGMMATunables, error) {
	t := WGMMATunables{BC: attnWGMMABC}
	if err := kernels.ParseTunableInts("attention wgmma tunables", s, true, kernels.TunableInt{Key: "STAGES", Dst: &t.Stages, Min: 2, Max: 4},
		kernels.TunableInt{Key: "SCHED", Dst: &t.Sched, Min: 0, Max: 1},
		kernels.TunableInt{Key: "BC", Dst: &t.BC, Min: 64, Max: 176, Optional: true}); err != nil {
		return WGMMATunables{}, err
	}
	if t.BC != 64 && t.BC != 128 && t.BC != 176 {
		return WGMMATunables{}, fmt.Errorf("kernels: attention wgmma tunables %q: BC=%d: 64, 128 or 176: %w", s, t.BC, engine.ErrInvalidArg)
	}
	return t, nil
}

// check returns an error wrapping engine.ErrInvalidArg where t's stages at head dimension
// dim, in elements of eb bytes (2, or 1 for float8), need more shared memory than a Hopper
// block has (227 KiB), its tile more registers than a consumer has (BC=128 or 176 at head
// dim 256), or, in float8 at head dims 64 and 128, its tiles are not of 128 keys (V's
// transposed tile is one 128-byte row of keys; at 256, 64 keys, a 64-byte row).
func (t WGMMATunables) check(dim, eb int) error {
	if t.BC > 64 && dim > 128 {
		return fmt.Errorf("kernels: attention wgmma tunables %s: tiles of %d keys at head dim %d: the scores and O do not fit a consumer's registers; BC=64: %w",
			t, t.BC, dim, engine.ErrInvalidArg)
	}
	if eb == 1 && dim <= 128 && t.BC != 128 {
		return fmt.Errorf("kernels: attention wgmma tunables %s: float8e4m3 takes tiles of 128 keys (BC=128) at head dim %d, V's transposed tile being one 128-byte row of keys: %w",
			t, dim, engine.ErrInvalidArg)
	}
	if need := attnWGMMAShared(dim, t.Stages, t.BC, eb); need > 227*1024 {
		return fmt.Errorf("kernels: attention wgmma tunables %s: %d stages of %d keys at head dim %d need %d bytes of shared memory, more than 227 KiB: %w",
			t, t.Stages, t.BC, dim, need, engine.ErrInvalidArg)
	}
	return nil
}

// WGMMADefaults returns the tunables the cuda-wgmma variant uses for head dimension dim
// unless told otherwise or tuned: FlashAttention-3's schedule on two stages, with tiles of
// 128 keys at head dims 64 and 128 and of 64 at 256 (the most a consumer's registers hold
// beside O's 128). On an H200 (2026-11-30, bfloat16, batch 4, 32 heads, seq 4096, with the
// mask out of the softmax's loops), against the plain schedule's 64-key tiles that were
// the default at 64 and 256: head dim 64 full 1.35 ms against 1.53, causal 743 us against
// 843 (176-key tiles 1.34 ms and 751 us); 128 full 1.68 ms against 2.04 (prism tune);
// 256 full 3.05 ms against 3.21, causal 1.70 against 1.78.
func WGMMADefaults(dim int) WGMMATunables {
	if dim > 128 {
		return WGMMATunables{Stages: 2, Sched: 1, BC: attnWGMMABC}
	}
	return WGMMATunables{Stages: 2, Sched: 1, BC: 128}
}

// wgmmaCandidates are the tunables prism tune measures (at the ops' head dim 128), the
// defaults at head dim 128 first: tiles of 128 keys, and both schedules at two to four
// stages of 64 keys.
// On an H200 (2026-11-29, bf16, batch 4, 32 heads, seq 4096): with K and V released
// together SCHED=1 ran at half the speed of SCHED=0; released apart, at 0.73; with the
// softmax in place and P rounded after the product (FA3's order), at 0.91 (2.855 ms against
// 2.608), ptxas still serializing its wgmmas at BC=64 (C7513); at BC=128 nothing is
// serialized and it equals SCHED=0 (2.599 ms full, 1.437 causal against 1.425).
// With the mask out of the softmax's loops (2026-11-30, prism tune, full bf16): 1.677 ms
// for the default, 1.678 at three stages, 1.868 for SCHED=0 at 128 keys, 1.94-2.04 for the
// 64-key sets; causal 939 us against 1.045-1.132 ms.
var wgmmaCandidates = []WGMMATunables{{2, 1, 128}, {3, 1, 128}, {2, 0, 128}, {2, 0, 64}, {2, 1, 64}, {3, 1, 64},
	{3, 0, 64}, {4, 1, 64}, {4, 0, 64}}

// wgmmaFloat8Candidates are the candidates of the float8e4m3 ops, which take tiles of 128
// keys at the ops' head dim 128 (V's transposed tile is one 128-byte row of keys). On an
// H200 (2026-12-01, prism tune, full, b4 h32 s4096 d128): 1.438 ms for the default, 1.441
// at three stages, 1.50 for SCHED=0.
var wgmmaFloat8Candidates = []WGMMATunables{{2, 1, 128}, {3, 1, 128}, {2, 0, 128}, {4, 1, 128}}

// WGMMAElem is the set of storage types the Hopper attention takes.
type WGMMAElem interface {
	engine.Half | engine.BFloat16 | engine.Float8E4M3
}

// WGMMA computes attention on Hopper's warpgroup tensor cores (wgmma.cu: the cuda-wgmma
// variant), its tiles copied by TMA, in binary16, bfloat16 or float8 E4M3 for head
// dimensions 64, 128 and 256 (in float8 V is first copied transposed, a pass over it), with
// float32 softmax and accumulation. It runs on CUDA devices of compute capability 9.0 and is
// safe for concurrent use by goroutines that each use their own Queue.
type WGMMA[S WGMMAElem] struct {
	dev  *engine.Device
	dim  int
	t    WGMMATunables
	eb   int      // bytes an element: 2, or 1 in float8
	opts []string // the build's defines
	prog *engine.Program
	k    *engine.Kernel
	vt   *engine.Kernel // float8: attention_vt, V transposed for P V
	mu   sync.Mutex
	maps attnMaps // the tensor maps of the last call
	// vts holds, per queue, float8's transposed copy of V, grown as needed (launches on one
	// queue run in order, so each queue's copy is reused safely). Guarded by mu.
	vts map[*engine.Queue]*engine.Buffer[S]
	// The build for negative scales (-DNEG=1), made by the first call with one: it
	// negates each tile's scores and takes the scale's magnitude, so that the positive
	// build's softmax has no test of the sign. Guarded by mu.
	negProg *engine.Program
	negK    *engine.Kernel
}

// attnMaps are the tensor maps of Q, K and V for one set of buffers and one shape.
type attnMaps struct {
	q, k, v    any // *engine.Buffer[S]
	s          AttentionShape
	tq, tk, tv *engine.TensorMap
}

// NewWGMMA compiles the Hopper attention for head dimension dim (64, 128 or 256) on dev,
// with WGMMADefaults. It returns an error wrapping engine.ErrUnsupported on a device that is
// not a CUDA GPU of compute capability 9.0 with tensor maps, for another head dimension, or
// when the device lacks the shared memory.
func NewWGMMA[S WGMMAElem](dev *engine.Device, dim int) (*WGMMA[S], error) {
	return NewWGMMAWith[S](dev, dim, WGMMADefaults(dim))
}

// NewWGMMAWith is NewWGMMA with tunables t; invalid ones are refused with
// engine.ErrInvalidArg, naming the key (float8 takes BC=128 at head dims 64 and 128).
func NewWGMMAWith[S WGMMAElem](dev *engine.Device, dim int, t WGMMATunables) (*WGMMA[S], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: attention: nil device: %w", engine.ErrInvalidArg)
	}
	info := dev.Info()
	if dev.Backend() != "cuda" || info.ComputeCapability != 90 {
		return nil, fmt.Errorf("kernels: attention on wgmma needs a CUDA device of sm_90; %s is %s sm_%d: %w",
			dev.ID(), dev.Backend(), info.ComputeCapability, engine.ErrUnsupported)
	}
	if err := dev.TensorMapSupport(); err != nil {
		return nil, fmt.Errorf("kernels: attention on wgmma copies its tiles with TMA: %w", err)
	}
	if dim != 64 && dim != 128 && dim != 256 {
		return nil, fmt.Errorf("kernels: attention on wgmma takes head dims 64, 128 and 256, not %d (the portable kernel takes any up to %d): %w",
			dim, AttentionMaxDim, engine.ErrUnsupported)
	}
	if _, err := ParseWGMMATunables(t.String()); err != nil {
		return nil, err
	}
	prec, eb := 3, 2
	switch any(*new(S)).(type) {
	case engine.BFloat16:
		prec = 4
	case engine.Float8E4M3:
		prec, eb = 6, 1
	}
	if err := t.check(dim, eb); err != nil {
		return nil, err
	}
	if need := attnWGMMAShared(dim, t.Stages, t.BC, eb); int64(need) > info.MaxLocalBytes() {
		return nil, fmt.Errorf("kernels: attention on wgmma (dim %d) needs %d bytes of shared memory per block; %s allows %d: %w",
			dim, need, dev.ID(), info.MaxLocalBytes(), engine.ErrUnsupported)
	}
	opts := []string{fmt.Sprintf("-DPREC=%d", prec), fmt.Sprintf("-DD=%d", dim), fmt.Sprintf("-DBC=%d", t.BC),
		fmt.Sprintf("-DSTAGES=%d", t.Stages), fmt.Sprintf("-DSCHED=%d", t.Sched)}
	prog, k, err := kernels.BuildCUDA(dev, wgmmaSource, "wgmma.cu", "attention_wgmma", attnWGMMAThreads, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (dim %d)", err, dim)
	}
	w := &WGMMA[S]{dev: dev, dim: dim, t: t, eb: eb, opts: opts, prog: prog, k: k}
	if eb == 1 {
		if w.vt, err = prog.Kernel("attention_vt"); err != nil {
			return nil, errors.Join(err, k.Close(), prog.Close())
		}
	}
	return w, nil
}

// kernelFor returns the kernel for a scale of negative's sign: the build made with w, or
// the one for negative scales, built on its first use.
func (w *WGMMA[S]) kernelFor(negative bool) (*engine.Kernel, error) {
	if !negative {
		return w.k, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.negK == nil {
		prog, k, err := kernels.BuildCUDA(w.dev, wgmmaSource, "wgmma.cu", "attention_wgmma", attnWGMMAThreads, append(slices.Clip(w.opts), "-DNEG=1"))
		if err != nil {
			return nil, fmt.Errorf("%w (dim %d, the build for negative scales)", err, w.dim)
		}
		w.negProg, w.negK = prog, k
	}
	return w.negK, nil
}

// BlockKeys returns the keys per tile: the tolerance depends on it.
func (w *WGMMA[S]) BlockKeys() int { return w.t.BC }

// Attributes returns the compiled kernel's attributes.
func (w *WGMMA[S]) Attributes() engine.KernelAttributes { return w.k.Attributes() }

// tensorMaps returns the tensor maps of q, k and v for shape s, encoding them unless the last
// call had the same buffers and shape. In float8 vb is V's transposed copy, rows of seqp
// keys (attention_vt).
func (w *WGMMA[S]) tensorMaps(s AttentionShape, qb, kb, vb *engine.Buffer[S], seqp int) (*engine.TensorMap, *engine.TensorMap, *engine.TensorMap, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if m := w.maps; m.tq != nil && m.q == any(qb) && m.k == any(kb) && m.v == any(vb) && m.s == s {
		return m.tq, m.tk, m.tv, nil
	}
	eb, bh := int64(w.eb), int64(s.Batch*s.Heads)
	// A box's row: 128 bytes in the 128-byte swizzle, or a 64-byte row (float8's Q and K at
	// head dim 64, V's transposed rows of 64 keys) in the 64-byte one (wgmma.cu's QKROW, VTROW).
	swizzle := func(rowBytes int) engine.TensorMapSwizzle {
		if rowBytes < 128 {
			return engine.Swizzle64B
		}
		return engine.Swizzle128B
	}
	qkRow := min(s.Dim*w.eb, 128)
	desc := func(rows int) engine.TensorMapDesc {
		return engine.TensorMapDesc{Dims: []int64{int64(s.Dim), int64(s.Seq), bh},
			Strides: []int64{int64(s.Dim) * eb, int64(s.Seq) * int64(s.Dim) * eb}, Box: []int{qkRow / w.eb, rows, 1}, Swizzle: swizzle(qkRow)}
	}
	tq, err := engine.NewTensorMap(qb, desc(64))
	if err != nil {
		return nil, nil, nil, err
	}
	tk, err := engine.NewTensorMap(kb, desc(w.t.BC))
	if err != nil {
		return nil, nil, nil, err
	}
	dv := desc(w.t.BC)
	if w.vt != nil {
		vtRow := min(w.t.BC, 128)
		dv = engine.TensorMapDesc{Dims: []int64{int64(seqp), int64(s.Dim), bh},
			Strides: []int64{int64(seqp), int64(seqp) * int64(s.Dim)}, Box: []int{vtRow, s.Dim, 1}, Swizzle: swizzle(vtRow)}
	}
	tv, err := engine.NewTensorMap(vb, dv)
	if err != nil {
		return nil, nil, nil, err
	}
	w.maps = attnMaps{q: qb, k: kb, v: vb, s: s, tq: tq, tk: tk, tv: tv}
	return tq, tk, tv, nil
}

// Forward computes o = softmax(q k^T * scale [+ causal mask]) v over the tensors of shape s
// (the first s.Elems() elements of each buffer); s.Dim must be the dim w was made for. causal
// masks key j > query i. scale 0 selects 1/sqrt(s.Dim); any other value may have either
// sign (a negative one runs a second build, made by the first call with one), and its
// product with log2(e) must lie in float32's normal range (ErrInvalidArg otherwise).
func (w *WGMMA[S]) Forward(q *engine.Queue, o, qb, kb, vb *engine.Buffer[S], s AttentionShape, causal bool, scale float64) error {
	if s.Dim != w.dim && s.Dim >= 1 {
		return fmt.Errorf("kernels: attention: dim %d; this wgmma instance was made for dim %d: %w", s.Dim, w.dim, engine.ErrInvalidArg)
	}
	scale, err := checkForward(s, w.dim, scale, o, qb, kb, vb)
	if err != nil {
		return err
	}
	blocks := s.Batch * s.Heads * ((s.Seq + attnWGMMABR - 1) / attnWGMMABR)
	if err := kernels.CheckGroups("attention", blocks, attnWGMMAThreads); err != nil {
		return err
	}
	vside, seqp := vb, 0
	if w.vt != nil {
		if vside, seqp, err = w.transposeV(q, vb, s); err != nil {
			return err
		}
	}
	tq, tk, tv, err := w.tensorMaps(s, qb, kb, vside, seqp)
	if err != nil {
		return err
	}
	var c int32
	if causal {
		c = 1
	}
	sl2e, err := kernelScale(scale)
	if err != nil {
		return err
	}
	k, err := w.kernelFor(sl2e < 0)
	if err != nil {
		return err
	}
	r := engine.Range1D(blocks*attnWGMMAThreads, attnWGMMAThreads).WithSharedBytes(int64(attnWGMMAShared(w.dim, w.t.Stages, w.t.BC, w.eb)))
	return q.Launch(k, r, tq, tk, tv, o, int32(s.Seq), float32(math.Abs(float64(sl2e))), c)
}

// transposeV enqueues attention_vt on q, writing V of shape s transposed (keys in the order
// the float8 kernel's P takes them) into q's copy, grown as needed, and returns the copy and
// its row length, seq rounded up to 16 keys (16 bytes: TMA's rule for a row's stride).
func (w *WGMMA[S]) transposeV(q *engine.Queue, vb *engine.Buffer[S], s AttentionShape) (*engine.Buffer[S], int, error) {
	seqp := (s.Seq + 15) &^ 15
	bh := s.Batch * s.Heads
	n := bh * s.Dim * seqp
	w.mu.Lock()
	if w.vts == nil {
		w.vts = map[*engine.Queue]*engine.Buffer[S]{}
	}
	b, err := kernels.Grown(w.dev, w.vts[q], n)
	if err != nil {
		delete(w.vts, q)
		w.mu.Unlock()
		return nil, 0, fmt.Errorf("kernels: attention in float8e4m3 on wgmma: V's transposed copy of %d bytes: %w", n, err)
	}
	w.vts[q] = b
	w.mu.Unlock()
	r := engine.Range3D((seqp+63)/64*256, s.Dim/64, bh, 256, 1, 1)
	if err := q.Launch(w.vt, r, vb, b, int32(s.Seq), int32(seqp)); err != nil {
		return nil, 0, err
	}
	return b, seqp, nil
}

// Close releases the compiled kernel. Idempotent.
func (w *WGMMA[S]) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	w.maps = attnMaps{}
	negK, negProg := w.negK, w.negProg
	w.negK, w.negProg = nil, nil
	errs := []error{w.vt.Close()}
	for _, b := range w.vts {
		errs = append(errs, b.Close())
	}
	w.vts, w.vt = nil, nil
	w.mu.Unlock()
	return errors.Join(append(errs, w.k.Close(), w.prog.Close(), negK.Close(), negProg.Close())...)
}
