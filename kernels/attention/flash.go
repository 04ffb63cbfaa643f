package attention

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// attention_flash.cl is a further OpenCL C file of the family: only NewFlash builds it.
//
//go:embed attention_flash.cl
var flashSource string

// FlashName is the name of the float32 ops' FlashAttention-2 SIMT variant (NewFlash).
const FlashName = "flash-simt"

// FlashTunables are the tiles of attention_flash.cl (its -D tunables): a work-group owns
// BQ queries and loops over blocks of BK keys; each work-item computes TQ queries x TK
// keys of the scores and TQ queries x DMAX*TK/BK dimensions of the output.
type FlashTunables struct {
	BQ, BK int // queries per work-group, keys per block
	TQ, TK int // queries and keys per work-item
}

// String writes t as ParseFlashTunables reads it.
func (t FlashTunables) String() string {
	return fmt.Sprintf("BQ=%d BK=%d TQ=%d TK=%d", t.BQ, t.BK, t.TQ, t.TK)
}

// Items returns the work-items of a work-group, (BQ/TQ)*(BK/TK).
func (t FlashTunables) Items() int { return (t.BQ / t.TQ) * (t.BK / t.TK) }

// localBytes returns the static local memory of attention_flash.cl built with t for head
// dimensions up to dmax, in elemSize-byte elements (its header's formula).
func (t FlashTunables) localBytes(dmax, elemSize int) int64 {
	cx := t.BK / t.TK
	ms := (t.BQ*cx + 3) / 4 * 4
	return int64((t.BQ+t.BK)*(dmax+4)+t.BK*dmax+t.BQ*(t.BK+4)+ms) * int64(elemSize)
}

// Validate returns an error wrapping engine.ErrInvalidArg when t breaks
// attention_flash.cl's constraints for head dimensions up to dmax: every value positive,
// TQ | BQ, TK | BK, 4 | BK, 4*BK/TK | dmax, at most 1024 work-items.
func (t FlashTunables) Validate(dmax int) error {
	bad := func(why string) error {
		return fmt.Errorf("kernels: attention flash tunables %q (dim up to %d): %s: %w", t.String(), dmax, why, engine.ErrInvalidArg)
	}
	switch {
	case t.BQ < 1 || t.BK < 1 || t.TQ < 1 || t.TK < 1:
		return bad("every value must be positive")
	case t.BQ%t.TQ != 0 || t.BK%t.TK != 0:
		return bad("BQ and BK must be multiples of TQ and TK")
	case t.BK%4 != 0:
		return bad("BK must be a multiple of 4")
	case dmax%(4*(t.BK/t.TK)) != 0:
		return bad(fmt.Sprintf("4*BK/TK = %d must divide the head dimension's tiles (%d)", 4*(t.BK/t.TK), dmax))
	case t.Items() > 1024:
		return bad(fmt.Sprintf("%d work-items, more than 1024", t.Items()))
	}
	return nil
}

// ParseFlashTunables parses String's form: every key once (BQ 1..256, BK 4..256, TQ
// 1..16, TK 1..8); Validate checks them against a head dimension when they are built.
func ParseFlashTunables(s string) (FlashTunables, error) {
	var t FlashTunables
	if err := kernels.ParseTunableInts("attention flash tunables", s, true,
		kernels.TunableInt{Key: "BQ", Dst: &t.BQ, Min: 1, Max: 256}, kernels.TunableInt{Key: "BK", Dst: &t.BK, Min: 4, Max: 256},
		kernels.TunableInt{Key: "TQ", Dst: &t.TQ, Min: 1, Max: 16}, kernels.TunableInt{Key: "TK", Dst: &t.TK, Min: 1, Max: 8}); err != nil {
		return FlashTunables{}, err
	}
	return t, nil
}

// FlashDefaults returns NewFlash's tiles for head dimensions up to dmax (64, 128 or 256):
// 64 queries x 32 keys, 4 x 4 scores and 4 x 8 outputs per work-item on 128 items for 64
// (44.5 KiB of local memory in float); 4 x 1 scores and 4 x 8 outputs on 128 items for
// 128 (37.3 KiB); 2 x 1 and 2 x 32 on 64 items for 256 (33.6 KiB).
func FlashDefaults(dmax int) FlashTunables {
	switch {
	case dmax <= 64:
		return FlashTunables{BQ: 64, BK: 32, TQ: 4, TK: 4}
	case dmax <= 128:
		return FlashTunables{BQ: 32, BK: 16, TQ: 4, TK: 1}
	}
	return FlashTunables{BQ: 16, BK: 8, TQ: 2, TK: 1}
}

// flashCandidates are the tunable sets `prism tune` measures for the float32 ops (head
// dimension 64), the default first, each within 48 KiB of local memory in float.
var flashCandidates = []FlashTunables{
	FlashDefaults(attnOpDim),
	{BQ: 64, BK: 32, TQ: 8, TK: 2}, // 8 x 2 scores, 8 x 4 outputs: 46.5 KiB
	{BQ: 64, BK: 32, TQ: 8, TK: 4}, // 8 x 4 scores, 8 x 8 outputs on 64 items
	{BQ: 64, BK: 32, TQ: 4, TK: 2}, // 4 x 2 scores, 4 x 4 outputs on 256 items
	{BQ: 32, BK: 32, TQ: 2, TK: 4}, // twice the work-groups (causal balance): 30.5 KiB
	{BQ: 64, BK: 16, TQ: 4, TK: 2}, // 32.3 KiB: more work-groups per multiprocessor
	{BQ: 32, BK: 16, TQ: 4, TK: 1},
}

// shrink returns t with half as many work-items: fewer queries per work-group while the
// items along the queries are at least as many as along the keys, else fewer keys per
// block (smaller K, V and P tiles), else fewer queries; false when neither can shrink.
func (t FlashTunables) shrink() (FlashTunables, bool) {
	canQ := t.BQ > t.TQ
	canK := t.BK/t.TK > 1 && (t.BK/2)%4 == 0 && (t.BK/2)%t.TK == 0
	switch {
	case canQ && (t.BQ/t.TQ >= t.BK/t.TK || !canK):
		t.BQ = max(t.BQ/2/t.TQ, 1) * t.TQ
	case canK:
		t.BK /= 2
	default:
		return t, false
	}
	return t, true
}

// flashLocalBudget is the local memory the tiles may use: CUDA's limit on static shared
// memory per block.
const flashLocalBudget = 48 << 10

// Flash is the "flash-simt" variant of the float32 attention ops: attention_flash.cl,
// FlashAttention-2 in SIMT (Q blocks in local memory, K and V blocks staged in local
// memory, scores and outputs in register tiles, online softmax in exp2). It computes what
// Attention[float32] does, and is safe for concurrent use by goroutines that each use
// their own Queue.
type Flash struct {
	prog *engine.Program
	k    *engine.Kernel
	dmax int
	t    FlashTunables
	// loops is the device's limit on a work-item's loop iterations (kernels.LoopLimit), 0
	// for none: Forward refuses a shape whose work-items would loop longer (checkLoops).
	loops int
}

// flashLoopsPerKey bounds the loop iterations a work-item of attention_flash.cl runs per
// key at head dims up to 64, scaling with the build's largest head dim: one work-item
// walks every key block of its query block. On Rusticl (llvmpipe, its tiles shrunk to 32
// work-items) a counting loop after the kernel's own measured about 1,102 a block of 32
// keys at head dim 64 (2026-12-01): 34 a key, and 48 leaves a third to spare for the
// shapes and tiles not measured.
const flashLoopsPerKey = 48

// checkLoops returns an error wrapping engine.ErrUnsupported where the device ends a
// work-item's loops (kernels.LoopLimit: Mesa's llvmpipe) before shape s's work-items have
// walked their keys, at most seq of them (full or causal), within 90% of the limit.
func (f *Flash) checkLoops(s AttentionShape) error {
	if f.loops <= 0 {
		return nil
	}
	return kernels.CheckLoops(f.loops, flashLoopsPerKey*s.Seq*f.dmax/64+64, "attention flash: %v (%d keys, head dims up to %d; NewAttention's kernel takes it)", s, s.Seq, f.dmax)
}

var _ forwarder[float32] = (*Flash)(nil)

// NewFlash builds attention_flash.cl for dev and head dimensions up to maxDim (1 to
// AttentionMaxDim; the tiles are sized for 64, 128 or 256, the smallest that holds
// maxDim) with the tiles t (FlashDefaults when zero), shrunk where the device (or the
// compiled kernel: kernels.Fit) allows fewer work-items or less local memory: fewer queries
// per work-group or fewer keys per block, whichever has more work-items along it. Tiles that break the kernel's constraints give
// an error wrapping engine.ErrInvalidArg; a device whose limits hold no tile,
// engine.ErrUnsupported. It builds on any OpenCL C device (the variant's Needs turns
// away CPUs with less local memory than the default tiles take: there the shrunken tiles
// are slower than the portable kernel).
func NewFlash(dev *engine.Device, maxDim int, t FlashTunables) (*Flash, error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: attention flash: nil device: %w", engine.ErrInvalidArg)
	}
	if maxDim < 1 || maxDim > AttentionMaxDim {
		return nil, fmt.Errorf("kernels: attention flash: max dim %d; must be 1 to %d: %w", maxDim, AttentionMaxDim, engine.ErrInvalidArg)
	}
	dmax := 64
	for dmax < maxDim {
		dmax *= 2
	}
	if t == (FlashTunables{}) {
		t = FlashDefaults(dmax)
	}
	if err := t.Validate(dmax); err != nil {
		return nil, err
	}
	opts, err := kernels.TypeOf[float32]().Defines(dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, "attention flash", func(lim kernels.Limits) (*Flash, kernels.Shape, error) {
		budget := int64(flashLocalBudget)
		if lim.LocalBytes > 0 {
			budget = min(budget, lim.LocalBytes)
		}
		tt := t
		for !lim.Fits(tt.Items(), 1) || tt.localBytes(dmax, 4) > budget {
			var ok bool
			if tt, ok = tt.shrink(); !ok {
				return nil, kernels.Shape{}, kernels.TooSmall("attention flash", lim,
					fmt.Sprintf("%d work-items and %d bytes of local memory (%s)", tt.Items(), tt.localBytes(dmax, 4), tt))
			}
		}
		f := &Flash{dmax: dmax, t: tt, loops: kernels.LoopLimit(dev)}
		if f.prog, err = dev.BuildSource(engine.Source{Dialect: engine.DialectOpenCL, Text: flashSource, Name: "attention_flash.cl"},
			append(opts, fmt.Sprintf("-DDMAX=%d", dmax), fmt.Sprintf("-DBQ=%d", tt.BQ), fmt.Sprintf("-DBK=%d", tt.BK),
				fmt.Sprintf("-DTQ=%d", tt.TQ), fmt.Sprintf("-DTK=%d", tt.TK))...); err != nil {
			return nil, kernels.Shape{}, err
		}
		ks, err := kernels.LoadKernels(f.prog, kernels.Ref{Dst: &f.k, Name: "attention_flash"})
		if err != nil {
			f.Close()
			return nil, kernels.Shape{}, err
		}
		return f, kernels.Shape{Items: tt.Items(), Kernels: ks}, nil
	})
}

// Close releases the compiled kernel. Idempotent.
func (f *Flash) Close() error { return errors.Join(f.k.Close(), f.prog.Close()) }

// Tunables returns the tiles f was built with (NewFlash's, shrunk to the device).
func (f *Flash) Tunables() FlashTunables { return f.t }

// MaxDim returns the largest head dimension f accepts (64, 128 or 256).
func (f *Flash) MaxDim() int { return f.dmax }

// BlockKeys returns the keys per block (BK): AttentionTolerance depends on it.
func (f *Flash) BlockKeys() int { return f.t.BK }

// Forward computes o = softmax(q k^T * scale [+ causal mask]) v over the tensors of shape
// s, as Attention.Forward does (the same arguments and checks).
func (f *Flash) Forward(q *engine.Queue, o, qb, kb, vb *engine.Buffer[float32], s AttentionShape, causal bool, scale float64) error {
	sc, err := checkForward(s, f.dmax, scale, o, qb, kb, vb)
	if err != nil {
		return err
	}
	if err := f.checkLoops(s); err != nil {
		return err
	}
	// scale*log2(e) in float32: exp2 of the scores is exp of scale times the dot products.
	sc2 := float32(sc * math.Log2E)
	if math.IsInf(float64(sc2), 0) {
		return fmt.Errorf("kernels: attention: scale %v times log2(e) overflows float32: %w", scale, engine.ErrInvalidArg)
	}
	bh := s.Batch * s.Heads
	groups := bh * ((s.Seq + f.t.BQ - 1) / f.t.BQ)
	wg := f.t.Items()
	if err := kernels.CheckGroups("attention flash", groups, wg); err != nil {
		return err
	}
	var c int32
	if causal {
		c = 1
	}
	return q.Launch(f.k, engine.Range1D(groups*wg, wg), o, qb, kb, vb, int32(s.Seq), int32(s.Dim), int32(bh), sc2, c)
}

// flashNeeds is the flash-simt variant's Needs: GPUs and accelerators run it (shrinking
// its tiles to their limits where needed); CPUs only where their local memory holds the
// default tiles. On CPUs with less the shrunken tiles run slower than the portable
// kernel: Rusticl on llvmpipe (32 KiB, 16 work-items) 7.9 s against 3.4 s for seq 512, 8
// heads, dim 64, while PoCL (512 KiB) runs the default tiles in 63 ms against the portable
// kernel's 132 ms (2 cores). The package's tests build it on every device.
func flashNeeds(info engine.DeviceInfo) error {
	if info.Kind != engine.KindCPU {
		return nil
	}
	d := FlashDefaults(attnOpDim)
	if need := d.localBytes(attnOpDim, 4); info.LocalMemBytes < need {
		return fmt.Errorf("needs a GPU or accelerator, or a CPU with %d bytes of local memory for its tiles (%s; the device has %d): smaller tiles run slower than the portable kernel on CPUs", need, d, info.LocalMemBytes)
	}
	return nil
}

// flashTunablesFor returns the flash-simt variant's tunables for op on dev at head
// dimension dim: forced (Params.Tunables), else `prism tune`'s for the device where dim
// takes the tiles it was tuned for (the op's dim 64: dims 1 to 64), else the defaults for
// dim's tiles (FlashDefaults), and which it was.
func flashTunablesFor(dev *engine.Device, op, forced string, dim int) (FlashTunables, string, error) {
	dmax := 64
	for dmax < dim {
		dmax *= 2
	}
	if forced != "" {
		t, err := ParseFlashTunables(forced)
		if err == nil {
			err = t.Validate(dmax)
		}
		return t, "forced", err
	}
	if e, ok := kernels.LookupTuned(dev, op, FlashName); ok && dmax == attnOpDim {
		if t, err := ParseFlashTunables(e.Tunables); err == nil && t.Validate(dmax) == nil {
			return t, "tuned", nil
		}
	}
	return FlashDefaults(dmax), "default", nil
}

// flashVariant returns the flash-simt variant of the float32 op name.
func flashVariant(name string, causal bool) kernels.Variant {
	return kernels.Variant{
		Name:       FlashName,
		Doc:        "FlashAttention-2 in SIMT: 64 queries per work-group in local memory, 32-key K and V blocks staged in local memory (next block prefetched into registers), 4 x 4 scores and 4 x 8 outputs per work-item, 16-byte local reads, online softmax in exp2 (OpenCL C, every backend; GPUs, accelerators and CPUs with 44.5 KiB of local memory)",
		Dialect:    engine.DialectOpenCL,
		Needs:      flashNeeds,
		Tunables:   FlashDefaults(attnOpDim).String() + " (shrunk to the device's work-group and local-memory limits), or prism tune's",
		Candidates: kernels.CandidatesOf(flashCandidates),
		Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			s, err := shapeOf(name, p)
			if err != nil {
				return nil, err
			}
			t, from, err := flashTunablesFor(q.Device(), name, p.Tunables, s.Dim)
			if err != nil {
				return nil, err
			}
			var built FlashTunables
			in, err := newAttnInstance(ctx, q, s, causal, p, func(dev *engine.Device, dim int) (forwarder[float32], error) {
				f, err := NewFlash(dev, dim, t)
				if err != nil {
					return nil, err
				}
				built = f.Tunables()
				return f, nil
			})
			if err != nil {
				return nil, err
			}
			in.(*attnInstance[float32]).tunables = built.String() + " (" + from + ")"
			return in, nil
		},
	}
}
