package gemm

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

// wgmma.cu's fixed geometry: 128-row tiles of D (64 for a product of at most
// wgmmaRows64 rows, tileOf), a producer and two consumer warpgroups, k steps of 128 bytes
// (64 16-bit or 128 8-bit elements).
const (
	wgmmaBM, wgmmaBKBytes = 128, 128
	wgmmaThreads          = 384
)

// wgmmaRows64 is the most rows of the kernel's product that run in 64-row tiles (wgmma.cu's
// BM=64: the two consumer warpgroups take alternate k steps of one 64-row tile), where a
// 128-row tile would be half zeros that TMA writes at every k step and the tiles would
// fill the GPU only through a split of K and its second launch. Tests set it to 0 (never)
// or past their shapes' rows (always).
var wgmmaRows64 = 64

// wgmmaGridCap, when positive, stands for the multiprocessors a persistent launch fills,
// so that tests give each block many tiles on small shapes; wgmmaSplitK, when positive,
// is the split-K of calls whose tunables leave it to them; wgmmaFillSMs, when positive,
// stands for the multiprocessors that bnFor narrows the tiles to fill (1: never), so that
// tests on small shapes run the tunables' widths.
var wgmmaGridCap, wgmmaSplitK, wgmmaFillSMs int

// wgmmaSwapRows is the most rows of D for which tf32's nn product runs transposed (swaps):
// D^T = B^T A^T, B read in place into the registers of wgmma's A operand, where the
// product in place would first copy B transposed, a pass over it that costs more than the
// product itself when D has few rows. On an H200 (2026-11-30, BenchmarkWGMMATF32Swap) M x
// 8192 x 8192 took 80 us transposed against 263 with the copy at M = 64, 337 against 507
// at 1024, 1387 against 1523 at 4096, and 3060 against 2893 at 8192, where the copy is a
// small part and the form's k steps, each waiting for its products, lose. Tests set it to
// run either form on any shape.
var wgmmaSwapRows = 4096

// WGMMATunables are the tunables of the Hopper GEMM (wgmma.cu): the BN columns of D a
// block computes (64, 128 or 256: wgmma m64nBN; a call with a narrower D takes a narrower
// width, bnFor), the Stages of its ring in shared
// memory, its Cluster of blocks on neighbouring tile rows (1, or 2: B's tile copied once
// and multicast into both) and the tile rows of D a group of consecutive blocks covers
// (GroupM, for L2 reuse; a multiple of Cluster). Persistent 1 launches at most one block
// (cluster) per multiprocessor, each looping over tiles, so that its producer copies the
// next tile's first stages while its consumers store the last tile's D. Persistent 2 is
// the same grid in ping-pong: each consumer warpgroup computes whole 128 x BN tiles (BN at
// most 128), the two in turn, so that one stores its D while the other's products run.
//
// SplitK divides K among blocks that store partial sums, a second kernel adding them into
// D, where the tiles alone fill too little of the GPU: 0 lets each call choose its
// decomposition (narrower tiles, bnFor, then a split, splitFor), 1 never splits, n splits
// in n (at most the k steps); a forced split keeps BN.
type WGMMATunables struct {
	BN, Stages, Cluster, GroupM, Persistent, SplitK int
}

// String writes t as prism tune and --tunables spell it ("BN=256 STAGES=4 CLUSTER=1
// GROUP_M=8 PERSISTENT=0 SPLIT_K=0").
func (t WGMMATunables) String() string {
	return fmt.Sprintf("BN=%d STAGES=%d CLUSTER=%d GROUP_M=%d PERSISTENT=%d SPLIT_K=%d", t.BN, t.Stages, t.Cluster, t.GroupM, t.Persistent, t.SplitK)
}

// ParseWGMMATunables reads tunables as String writes them; every key must be given once.
// Errors wrap engine.ErrInvalidArg and name the field.
func ParseWGMMATunables(s string) (WGMMATunables, error) {
	var t WGMMATunables
	if err := kernels.ParseTunableInts("gemm wgmma tunables", s, true,
		kernels.TunableInt{Key: "BN", Dst: &t.BN, Min: 64, Max: 256}, kernels.TunableInt{Key: "STAGES", Dst: &t.Stages, Min: 2, Max: 8},
		kernels.TunableInt{Key: "CLUSTER", Dst: &t.Cluster, Min: 1, Max: 2}, kernels.TunableInt{Key: "GROUP_M", Dst: &t.GroupM, Min: 1, Max: 64},
		kernels.TunableInt{Key: "PERSISTENT", Dst: &t.Persistent, Min: 0, Max: 2}, kernels.TunableInt{Key: "SPLIT_K", Dst: &t.SplitK, Min: 0, Max: 64}); err != nil {
		return WGMMATunables{}, err
	}
	return t, t.check()
}

// check returns an error wrapping engine.ErrInvalidArg naming the first field wgmma.cu
// does not take.
func (t WGMMATunables) check() error {
	bad := func(what string) error {
		return fmt.Errorf("kernels: gemm wgmma tunables %s: %s: %w", t, what, engine.ErrInvalidArg)
	}
	switch {
	case t.BN != 64 && t.BN != 128 && t.BN != 256:
		return bad("BN must be 64, 128 or 256 (wgmma m64n64, m64n128 or m64n256)")
	case t.Stages < 2 || t.Stages > 8:
		return bad("STAGES must be 2 to 8")
	case t.Cluster != 1 && t.Cluster != 2:
		return bad("CLUSTER must be 1 or 2")
	case t.GroupM < t.Cluster || t.GroupM%t.Cluster != 0 || t.GroupM > 64:
		return bad("GROUP_M must be a multiple of CLUSTER, at most 64")
	case t.Persistent < 0 || t.Persistent > 2:
		return bad("PERSISTENT must be 0, 1 or 2 (ping-pong)")
	case t.Persistent == 2 && t.BN > 128:
		return bad("PERSISTENT=2 (ping-pong) takes BN 64 or 128: one warpgroup holds a whole tile's accumulators")
	case t.SplitK < 0 || t.SplitK > 64:
		return bad("SPLIT_K must be 0 (each call chooses) to 64")
	}
	return nil
}

// wgmmaTable holds the tunables NewWGMMA takes by precision where they are not the
// defaults of WGMMADefaults; 3xTF32, whose stage holds four tiles, has room for two stages.
// prism tune on an H200 (2026-11-29, docs/PERFORMANCE-LOG.md) put the ping-pong form first
// at 8192: float16 666 TFLOP/s at six stages (663 at five, 657 at four) against 606 for the
// cooperative BN=256 kernel and 589 for its persistent form; float8e4m3 nt 1120 at four
// stages (987 at five, 1065 at five in clusters of two) against 980; tf32 347 in the bench
// against 326-331. Since the cooperative kernel's epilogue stores through shared memory
// (bbe214a), one call on two H200 (2026-11-29, 385a013) measured both back to back at
// 8192: float16 698 TFLOP/s cooperative against 673 ping-pong, tf32 362 against 346.
// float16 takes the cooperative kernel, as bfloat16 does. So does tf32: its sweep ran at
// the same geometric mean on both (0.67 and 0.66 of cuBLASLt, one call on two H200,
// 2026-11-29), and at 8192 the cooperative kernel took 3.01 ms against 3.18.
var wgmmaTable = map[Prec]WGMMATunables{
	PrecTF32:          {BN: 256, Stages: 4, Cluster: 1, GroupM: 8},
	PrecFloat32x3TF32: {BN: 256, Stages: 2, Cluster: 1, GroupM: 8},
	PrecFloat16:       {BN: 256, Stages: 4, Cluster: 1, GroupM: 8},
	PrecBFloat16:      {BN: 256, Stages: 4, Cluster: 1, GroupM: 8},
	PrecFloat8E4M3:    {BN: 128, Stages: 4, Cluster: 1, GroupM: 8, Persistent: 2},
	PrecFloat8E5M2:    {BN: 128, Stages: 4, Cluster: 1, GroupM: 8, Persistent: 2},
}

// WGMMADefaults returns the tunables NewWGMMA takes for precision p: the ping-pong kernel
// (PERSISTENT=2) on tiles of 128 x 128 with six stages, or the table's.
func WGMMADefaults(p Prec) WGMMATunables {
	if t, ok := wgmmaTable[p]; ok {
		return t
	}
	return WGMMATunables{BN: 128, Stages: 6, Cluster: 1, GroupM: 8, Persistent: 2}
}

// wgmmaCandidates are the tunables prism tune measures for precision p, the defaults
// first, where shared memory holds them: the cooperative kernel at BN=256 (three and four
// stages, clusters of one and two) and BN=128 (five stages; fewer lost 8-27% on an H200,
// 2026-11-29), its persistent forms, and the ping-pong forms (PERSISTENT=2, BN=128) at four
// to six stages and in clusters of two.
func wgmmaCandidates(p Prec) []WGMMATunables {
	def := WGMMADefaults(p)
	out := []WGMMATunables{def}
	add := func(t WGMMATunables) {
		if t.GroupM == 0 {
			t.GroupM = 8
		}
		if t.Stages > 0 && wgmmaShared(t.BN, wgmmaBM, t.Stages, splitsOf(p)) <= 227*1024 && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if p == PrecFloat32x3TF32 { // a stage holds four tiles
		for _, t := range []WGMMATunables{{BN: 256, Stages: 2, Cluster: 2}, {BN: 128, Stages: 3, Cluster: 1},
			{BN: 256, Stages: 2, Cluster: 1, Persistent: 1}, {BN: 128, Stages: 2, Cluster: 1, Persistent: 2},
			{BN: 128, Stages: 3, Cluster: 1, Persistent: 2}} {
			add(t)
		}
		return out
	}
	for _, t := range []WGMMATunables{
		{BN: 256, Stages: 4, Cluster: 1}, {BN: 256, Stages: 3, Cluster: 1}, {BN: 256, Stages: 4, Cluster: 2},
		{BN: 128, Stages: 5, Cluster: 1}, {BN: 256, Stages: 4, Cluster: 1, Persistent: 1}, {BN: 256, Stages: 4, Cluster: 2, Persistent: 1},
		{BN: 128, Stages: 4, Cluster: 1, Persistent: 2}, {BN: 128, Stages: 5, Cluster: 1, Persistent: 2},
		{BN: 128, Stages: 6, Cluster: 1, Persistent: 2}, {BN: 128, Stages: 4, Cluster: 2, Persistent: 2},
		{BN: 128, Stages: 5, Cluster: 2, Persistent: 2},
	} {
		add(t)
	}
	return out
}

// wgmmaTunablesFor returns the tunables of the cuda-wgmma variant of op on dev and where
// they came from: forced (Params.Tunables), tuned (prism tune's file), or the table.
func wgmmaTunablesFor(dev *engine.Device, op string, p Prec, forced string) (WGMMATunables, string, error) {
	return kernels.TunablesFor(dev, op, "cuda-wgmma", forced, ParseWGMMATunables, WGMMADefaults(p), "table")
}

// wgmmaLayout is how the kernel reads the MN-major B of the nn layout: mnSwap exchanges
// the leading and stride byte offsets of its descriptor (wgmma.cu's MN_SWAP).
type wgmmaLayout struct{ mnSwap int }

// wgmmaDefault is CUTLASS's reading of a 128-byte swizzled MN-major operand: the leading
// byte offset steps between 64-column groups, the stride byte offset between 8-row k groups.
var wgmmaDefault = wgmmaLayout{mnSwap: 0}

// WGMMA runs GEMM with 16-bit inputs on the warpgroup tensor cores of Hopper (wgmma.cu,
// the cuda-wgmma variant), its tiles copied by TMA: A stored m x k, B in either layout.
// Operands whose rows or matrices are not on 16-byte boundaries (TMA's rule) are copied
// first into scratch whose rows are (gemm_pad, a pass over the operand); layouts it does not
// take (A transposed; float8 with B stored k x n) run on the mma.sync kernel (MMA), so that
// every call is served. It runs on CUDA devices
// of compute capability 9.0 and is safe for concurrent use by goroutines that each use
// their own Queue.
type WGMMA[In InputType] struct {
	dev    *engine.Device
	p      Precision
	layout wgmmaLayout
	t      WGMMATunables
	mu     sync.Mutex
	builds map[wgmmaBuild]*wgmmaProgram
	mma    *MMA[In, float32]
	maps   []wgmmaMaps // the tensor maps of the last calls, the latest first (wgmmaMapsKept)
	split  *engine.Kernel
	// scratch holds, per queue, the K-major tf32 copies of A and B that gemm_split writes
	// for the tf32 and 3xTF32 precisions (launches on one queue run in order, so each
	// queue's copies are reused safely).
	scratch map[*engine.Queue]*wgmmaScratch
	// ws holds, per queue, split-K's partial sums (splits x batch x m x n), grown as needed.
	ws map[*engine.Queue]*engine.Buffer[float32]
	// padded holds, per queue, the copies of A and B that gemm_pad writes for operands whose
	// rows TMA cannot read (not on 16-byte boundaries) and gemm_transpose for float8's nn
	// B, grown as needed.
	padded map[*engine.Queue]*[2]*engine.Buffer[In]
}

// wgmmaBuild names a build of wgmma.cu beside the tunables: B's layout, the width, the
// persistence (persistentFor) and the transposed form (swaps).
type wgmmaBuild struct {
	transB     bool
	bn, bm     int
	persistent int
	swap       bool
}

// wgmmaProgram is one build: its program, gemm_wgmma, gemm_splitk_reduce, gemm_pad and
// gemm_transpose.
type wgmmaProgram struct {
	prog                      *engine.Program
	k, reduce, pad, transpose *engine.Kernel
}

func (b *wgmmaProgram) Close() error {
	return errors.Join(b.transpose.Close(), b.pad.Close(), b.reduce.Close(), b.k.Close(), b.prog.Close())
}

// wgmmaScratch are the K-major tf32 operands of one queue: big and, for 3xTF32, small
// parts of A (batch x m x ldk) and of B (batch x n x ldk).
type wgmmaScratch struct {
	aBig, aSmall, bBig, bSmall *engine.Buffer[float32]
}

func (sc *wgmmaScratch) Close() error {
	return errors.Join(sc.aBig.Close(), sc.aSmall.Close(), sc.bBig.Close(), sc.bSmall.Close())
}

// wgmmaMapsKept is how many calls' tensor maps a WGMMA keeps: as many as the input sets an
// op's runs rotate through (kernels.RotationSets), so that no run encodes them again.
const wgmmaMapsKept = 8

// cachedMaps returns the tensor maps kept for buffers a and b, shape s, form swap and box
// rows rows (with the small parts' maps when small); the caller holds w.mu.
func (w *WGMMA[In]) cachedMaps(a, b any, s GEMMShape, small, swap bool, rows [2]int) (wgmmaMaps, bool) {
	for _, m := range w.maps {
		if m.ta != nil && m.a == a && m.b == b && m.s == s && m.swap == swap && m.rows == rows && (!small || m.ta2 != nil) {
			return m, true
		}
	}
	return wgmmaMaps{}, false
}

// keepMaps keeps m as the latest call's tensor maps, dropping the oldest beyond
// wgmmaMapsKept; the caller holds w.mu.
func (w *WGMMA[In]) keepMaps(m wgmmaMaps) {
	w.maps = append([]wgmmaMaps{m}, w.maps[:min(len(w.maps), wgmmaMapsKept-1)]...)
}

// wgmmaMaps are the tensor maps of A and B for one pair of buffers and one shape.
type wgmmaMaps struct {
	a, b     any // *engine.Buffer[In], or the scratch copies for tf32
	s        GEMMShape
	swap     bool   // the maps of the transposed form (swaps)
	rows     [2]int // the rows of A's and B's boxes (bm, bn / cl): the launch's geometry
	ta, tb   *engine.TensorMap
	ta2, tb2 *engine.TensorMap // the small parts' (3xTF32) or the big ones again (tf32)
}

// NewWGMMA readies the Hopper GEMM of precision p (one that Prec.Warpgroup takes) on dev.
// It returns an error wrapping engine.ErrUnsupported on a device that is not a CUDA GPU
// of compute capability 9.0 (sm_90a's wgmma and TMA), or that lacks the shared memory.
func NewWGMMA[In InputType](dev *engine.Device, p Precision) (*WGMMA[In], error) {
	return NewWGMMAWith[In](dev, p, WGMMADefaults(p.MMA))
}

// NewWGMMAWith is NewWGMMA with tunables t (prism tune's candidates, or --tunables).
func NewWGMMAWith[In InputType](dev *engine.Device, p Precision, t WGMMATunables) (*WGMMA[In], error) {
	return newWGMMA[In](dev, p, wgmmaDefault, t)
}

func newWGMMA[In InputType](dev *engine.Device, p Precision, l wgmmaLayout, t WGMMATunables) (*WGMMA[In], error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if dev == nil {
		return nil, fmt.Errorf("kernels: gemm: nil device: %w", engine.ErrInvalidArg)
	}
	if err := p.check(typeNameOf[In](), "float32"); err != nil {
		return nil, err
	}
	if !p.MMA.Warpgroup() {
		return nil, fmt.Errorf("kernels: gemm %s has no wgmma kernel (tf32, float32x3tf32, float16, bfloat16 and float8 do): %w", p.Name, engine.ErrUnsupported)
	}
	info := dev.Info()
	if dev.Backend() != "cuda" || info.ComputeCapability != 90 {
		return nil, fmt.Errorf("kernels: gemm %s on wgmma needs a CUDA device of sm_90; %s is %s sm_%d: %w",
			p.Name, dev.ID(), dev.Backend(), info.ComputeCapability, engine.ErrUnsupported)
	}
	if err := dev.TensorMapSupport(); err != nil {
		return nil, fmt.Errorf("kernels: gemm %s on wgmma copies its tiles with TMA: %w", p.Name, err)
	}
	w := &WGMMA[In]{dev: dev, p: p, layout: l, t: t}
	if need := wgmmaShared(t.BN, wgmmaBM, t.Stages, splitsOf(p.MMA)); int64(need) > info.MaxLocalBytes() {
		return nil, fmt.Errorf("kernels: gemm %s on wgmma with %s needs %d bytes of shared memory per block; %s allows %d: %w",
			p.Name, t, need, dev.ID(), info.MaxLocalBytes(), engine.ErrUnsupported)
	}
	if t.Cluster > 1 && dev.LaunchFeatures().MaxClusterSize < t.Cluster {
		return nil, fmt.Errorf("kernels: gemm %s on wgmma with %s needs clusters of %d blocks; %s has none that large: %w",
			p.Name, t, t.Cluster, dev.ID(), engine.ErrUnsupported)
	}
	return w, nil
}

// stagesFor returns the stages of the ring at width bn and tile rows bm: the tunables'
// Stages at their BN and 128 rows, and as many as fill the same shared memory (at most 8)
// where bnFill narrowed the tiles or the tiles have 64 rows (there an even number, each
// stage serving one consumer warpgroup: rounded up where the tunables' memory holds it).
// A narrow tile's k steps are short and its call mostly streams an operand from memory,
// so the deeper ring keeps more bytes in flight: on an H200 (bfloat16, docs/PERFORMANCE-LOG.md,
// 2026-11-29 seventh) 128 x 8192 x 8192 took 41.5 us at BN=64 in eight stages against
// 53.3 in four, 8192 x 64 x 8192 39.4 against 54.3, and 256 x 8192 x 8192 54.2 us at BN=128
// in six against 59.4 in four.
func (w *WGMMA[In]) stagesFor(bn, bm int) int {
	return stagesFor(w.t.BN, w.t.Stages, bn, bm)
}

// stagesFor is stagesFor of tunables' width tbn and stages at width bn and tile rows bm.
func stagesFor(tbn, stages, bn, bm int) int {
	if bn >= tbn && bm == wgmmaBM {
		return stages
	}
	st := min(8, max(stages, stages*(wgmmaBM+tbn)/(bm+bn)))
	if bm != wgmmaBM && st%2 == 1 {
		if (st+1)*(bm+bn) <= stages*(wgmmaBM+tbn) {
			st++
		} else {
			st--
		}
	}
	return st
}

// wgmmaShared is the dynamic shared memory of a launch: the stages of a tile of A (bm rows)
// and of B (bn rows or columns), 128 bytes of k each, and 1024 bytes to align them.
func wgmmaShared(bn, bm, stages, split int) int { return stages*(bm+bn)*128*split + 1024 }

// splitsOf returns 2 for 3xTF32 (big and small parts of each operand in shared memory),
// else 1.
func splitsOf(p Prec) int {
	if p == PrecFloat32x3TF32 {
		return 2
	}
	return 1
}

// bk returns the k step of a stage in elements: one 128-byte row of the inputs.
func (w *WGMMA[In]) bk() int { return 128 / engine.SizeOf[In]() }

// build returns the build of B's layout (tb: K-major B), width bn, tile rows bm,
// persistence pers (wgmma.cu's PERSISTENT) and form (swap: SWAP_AB), in clusters of cl
// blocks, compiling it on first use.
func (w *WGMMA[In]) build(tb bool, bn, bm, pers, cl int, swap bool) (*wgmmaProgram, error) {
	key := wgmmaBuild{tb, bn, bm, pers, swap}
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := w.builds[key]; b != nil {
		return b, nil
	}
	opts := []string{fmt.Sprintf("-DPREC=%d", w.p.MMA), fmt.Sprintf("-DTRANS_B=%d", b2i(tb)), fmt.Sprintf("-DSTAGES=%d", w.stagesFor(bn, bm)),
		fmt.Sprintf("-DGROUP_M=%d", w.t.GroupM), fmt.Sprintf("-DMN_SWAP=%d", w.layout.mnSwap), fmt.Sprintf("-DBN=%d", bn),
		fmt.Sprintf("-DCLUSTER_M=%d", cl), fmt.Sprintf("-DPERSISTENT=%d", pers), fmt.Sprintf("-DBM=%d", bm)}
	if swap {
		opts = append(opts, "-DSWAP_AB=1")
	}
	prog, k, err := kernels.BuildCUDA(w.dev, wgmmaSource, "wgmma.cu", "gemm_wgmma", wgmmaThreads, opts)
	if err != nil {
		return nil, err
	}
	b := &wgmmaProgram{prog: prog, k: k}
	if b.reduce, err = prog.Kernel("gemm_splitk_reduce"); err == nil {
		if b.pad, err = prog.Kernel("gemm_pad"); err == nil {
			b.transpose, err = prog.Kernel("gemm_transpose")
		}
	}
	if err != nil {
		b.Close()
		return nil, err
	}
	if w.p.MMA.TF32() && w.split == nil {
		if w.split, err = prog.Kernel("gemm_split"); err != nil {
			b.Close()
			return nil, err
		}
	}
	if w.builds == nil {
		w.builds = map[wgmmaBuild]*wgmmaProgram{}
	}
	w.builds[key] = b
	return b, nil
}

// bnFor returns the width of the kernel's tiles for its m x n product (D's, or D^T's
// where the call swaps) over batch matrices on w's device (bnFill); with a forced SplitK,
// the tunables' width (narrowed only for a narrow product).
func (w *WGMMA[In]) bnFor(m, n, bm, batch int) int {
	sms := max(wgmmaFillSMs, 1)
	if wgmmaFillSMs == 0 && w.t.SplitK == 0 {
		// A forced split keeps the tunables' width (one multiprocessor): the call chooses
		// neither.
		sms = w.dev.Info().ComputeUnits
	}
	return bnFill(w.t.BN, m, n, bm, batch, sms)
}

// swaps reports whether a call of shape s runs transposed (wgmma.cu's SWAP_AB): tf32 nn
// with both operands readable in place and at most wgmmaSwapRows rows of D.
func (w *WGMMA[In]) swaps(s GEMMShape) bool {
	return w.p.MMA == PrecTF32 && !s.TransA && !s.TransB && s.M <= wgmmaSwapRows && w.alignedA(s) && w.alignedB(s)
}

// clusterOf returns the cluster size of a launch: the tunables', one where it swaps or
// runs 64-row tiles (bm 64, tileOf).
func (w *WGMMA[In]) clusterOf(swap bool, bm int) int {
	if swap || bm != wgmmaBM {
		return 1
	}
	return w.t.Cluster
}

// tileOf returns the tile rows and width of a launch whose product is km x kn over batch
// matrices: 64 rows up to wgmmaRows64 rows, where it does not swap (SWAP_AB's rows are B's
// columns, in boxes of 32) and the ring holds at least four stages there (two for each
// consumer warpgroup, which holds its last step's stage while it waits for its next:
// 3xTF32 at BN=256 has two); else 128. The width is bnFor's at those rows.
func (w *WGMMA[In]) tileOf(km, kn, batch int, swap bool) (bm, bn int) {
	if km <= wgmmaRows64 && !swap {
		if bn := w.bnFor(km, kn, 64, batch); w.stagesFor(bn, 64) >= 4 {
			return 64, bn
		}
	}
	return wgmmaBM, w.bnFor(km, kn, wgmmaBM, batch)
}

// bnFill returns the width of D's tiles of m x n (batch matrices) in tiles of bm rows from
// the tunables' bn on sms multiprocessors: bn, halved (to 64 at least) while n fits in half
// of it, so that a narrow D does not leave most of a tile's products to zeros, or while the
// tiles fill less than half of the multiprocessors, so that a small product spreads over
// more of them (each block's k steps then do half the work). In 128-row tiles the second
// rule waits for a full tile row (m of 128 or more): where A has fewer rows, TMA fills the
// rest of each of its boxes with zeros, and narrower tiles copy those boxes more often (on
// an H200, 64 x 8192 x 8192 in bfloat16 took 90 us in 128-row tiles at BN=64 against 58 at
// BN=256 split four ways, while 128 and 256 rows ran fastest narrowed:
// docs/PERFORMANCE-LOG.md, 2026-11-29). The 64-row tiles, which take the products of at
// most 64 rows, narrow at any m: in 64-row tiles at BN=64, 64 x 8192 x 8192 took 38.7 us in
// float16 where 32 x 8192 x 8192 took 46.1 at BN=256 split four ways (2026-12-01); a product
// of fewer rows copies the same boxes.
func bnFill(bn, m, n, bm, batch, sms int) int {
	tiles := func(x, t int) int { return (x + t - 1) / t }
	for bn > 64 && (n <= bn/2 || (m >= bm || bm < wgmmaBM) && 2*tiles(m, bm)*tiles(n, bn)*batch < sms) {
		bn /= 2
	}
	return bn
}

// takes reports whether wgmma.cu takes shape s as it is stored: its layout
// (wgmmaTakesLayout), and for inputs other than tf32's, which gemm_split copies into
// aligned K-major buffers first, both operands aligned (alignedA, alignedB) and B K-major
// where the precision needs it (transposesB). A shape whose layout it takes otherwise runs
// on copies that it reads (gemm_pad, gemm_transpose).
func (w *WGMMA[In]) takes(s GEMMShape) bool {
	return wgmmaTakesLayout(w.p.MMA, s.TransA, s.TransB) && (w.p.MMA.TF32() || w.alignedA(s) && w.alignedB(s) && !w.transposesB(s))
}

// transposesB reports whether a call of shape s reads a transposed copy of B: float8's
// wgmma reads both operands K-major, and B stored k x n (nn) is not.
func (w *WGMMA[In]) transposesB(s GEMMShape) bool { return w.p.MMA.Float8() && !s.TransB }

// alignedA and alignedB report whether TMA reads A and B of shape s as stored: every row
// on a 16-byte boundary and, in a batch, the matrices apart by at least one matrix and on
// 16-byte boundaries (a tensor map's rules for its strides).
func (w *WGMMA[In]) alignedA(s GEMMShape) bool {
	return w.aligned(s.LDA, s.StrideA, s.M, s.Batch)
}

func (w *WGMMA[In]) alignedB(s GEMMShape) bool {
	rows := s.K
	if s.TransB {
		rows = s.N
	}
	return w.aligned(s.LDB, s.StrideB, rows, s.Batch)
}

func (w *WGMMA[In]) aligned(ld, stride, rows, batch int) bool {
	v := 16 / engine.SizeOf[In]() // elements of 16 bytes
	return ld%v == 0 && (batch == 1 || stride%v == 0 && stride >= ld*rows)
}

// pad enqueues gemm_pad on q for the operands of s that TMA cannot read as stored,
// copying each into q's scratch with rows rounded up to 16 bytes, and gemm_transpose for a
// B that must be read K-major (transposesB), and returns the operands to read and the
// shape that describes them.
func (w *WGMMA[In]) pad(q *engine.Queue, bd *wgmmaProgram, s GEMMShape, a, b *engine.Buffer[In]) (*engine.Buffer[In], *engine.Buffer[In], GEMMShape, error) {
	v := 16 / engine.SizeOf[In]()
	round := func(x int) int { return (x + v - 1) / v * v }
	rowsB, colsB := s.K, s.N
	if s.TransB {
		rowsB, colsB = s.N, s.K
	}
	// An operand copied: rows x cols as stored, written outRows rows of newLD (transposed:
	// cols rows of rows).
	type operand struct {
		src               *engine.Buffer[In]
		rows, cols        int
		ld, stride, newLD int
		transpose         bool
		outRows           int
	}
	var ops [2]*operand
	if !w.alignedA(s) {
		ops[0] = &operand{src: a, rows: s.M, cols: s.K, ld: s.LDA, stride: s.StrideA, newLD: round(s.K), outRows: s.M}
	}
	if w.transposesB(s) {
		ops[1] = &operand{src: b, rows: rowsB, cols: colsB, ld: s.LDB, stride: s.StrideB, newLD: round(rowsB), transpose: true, outRows: colsB}
	} else if !w.alignedB(s) {
		ops[1] = &operand{src: b, rows: rowsB, cols: colsB, ld: s.LDB, stride: s.StrideB, newLD: round(colsB), outRows: rowsB}
	}
	w.mu.Lock()
	if w.padded == nil {
		w.padded = map[*engine.Queue]*[2]*engine.Buffer[In]{}
	}
	bufs := w.padded[q]
	if bufs == nil {
		bufs = &[2]*engine.Buffer[In]{}
		w.padded[q] = bufs
	}
	for i, op := range ops {
		if op == nil {
			continue
		}
		n := s.Batch * op.outRows * op.newLD
		buf, err := kernels.Grown(w.dev, bufs[i], n)
		bufs[i] = buf
		if err != nil {
			w.mu.Unlock()
			return nil, nil, s, fmt.Errorf("kernels: gemm %s on wgmma: a copy of %s with rows on 16-byte boundaries (%d elements): %w",
				w.p.Name, [2]string{"A", "B"}[i], n, err)
		}
	}
	dst := *bufs
	w.mu.Unlock()
	for i, op := range ops {
		if op == nil {
			continue
		}
		k, r := bd.pad, engine.Range2D(min(op.rows, 4096)*256, s.Batch, 256, 1)
		if op.transpose {
			k, r = bd.transpose, engine.Range3D((op.cols+31)/32*32, (op.rows+31)/32*8, s.Batch, 32, 8, 1)
		}
		if err := q.Launch(k, r, dst[i], op.src, int32(op.rows), int32(op.cols), int64(op.ld), int64(op.stride), int64(op.newLD)); err != nil {
			return nil, nil, s, err
		}
		if i == 0 {
			a, s.LDA, s.StrideA = dst[i], op.newLD, op.outRows*op.newLD
		} else {
			b, s.LDB, s.StrideB = dst[i], op.newLD, op.outRows*op.newLD
			s.TransB = s.TransB || op.transpose
		}
	}
	return a, b, s, nil
}

// tensorMaps returns the tensor maps of a and b for shape s and width bn, encoding them
// unless a kept call had the same buffers, shape and form. Where the call swaps, the
// kernel's A is B as stored (columns fastest, boxes of 32 columns by a k step) and its B
// is A, K-major, in boxes of bn rows.
func (w *WGMMA[In]) tensorMaps(s GEMMShape, a, b *engine.Buffer[In], bn, bm, cl int, swap bool) (*engine.TensorMap, *engine.TensorMap, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rows := [2]int{bm, bn / cl}
	if m, ok := w.cachedMaps(a, b, s, false, swap, rows); ok {
		return m.ta, m.tb, nil
	}
	// A batch of one gets a batch stride of one whole matrix, rounded to 16 bytes.
	es, bk := int64(engine.SizeOf[In]()), w.bk()
	stride := func(st, whole int) int64 {
		if s.Batch == 1 {
			return (int64(whole)*es + 15) &^ 15
		}
		return int64(st) * es
	}
	da := engine.TensorMapDesc{Dims: []int64{int64(s.K), int64(s.M), int64(s.Batch)}, Strides: []int64{int64(s.LDA) * es, stride(s.StrideA, s.LDA*s.M)},
		Box: []int{bk, bm, 1}, Swizzle: engine.Swizzle128B}
	var db engine.TensorMapDesc
	if s.TransB {
		db = engine.TensorMapDesc{Dims: []int64{int64(s.K), int64(s.N), int64(s.Batch)},
			Strides: []int64{int64(s.LDB) * es, stride(s.StrideB, s.LDB*s.N)}, Box: []int{bk, bn / cl, 1}, Swizzle: engine.Swizzle128B}
	} else {
		// A 128-byte row of columns by 64 k rows; by a k step where the call swaps.
		db = engine.TensorMapDesc{Dims: []int64{int64(s.N), int64(s.K), int64(s.Batch)},
			Strides: []int64{int64(s.LDB) * es, stride(s.StrideB, s.LDB*s.K)}, Box: []int{int(128 / es), bk, 1}, Swizzle: engine.Swizzle128B}
	}
	if swap {
		da.Box[1] = bn
		da, db = db, da
	}
	srcA, srcB := a, b // the kernel's operands
	if swap {
		srcA, srcB = b, a
	}
	ta, err := engine.NewTensorMap(srcA, da)
	if err != nil {
		return nil, nil, err
	}
	tb, err := engine.NewTensorMap(srcB, db)
	if err != nil {
		return nil, nil, err
	}
	w.keepMaps(wgmmaMaps{a: a, b: b, s: s, swap: swap, rows: rows, ta: ta, tb: tb})
	return ta, tb, nil
}

// RunInto computes D = alpha*op(A)*op(B) + beta*C for shape s, as GEMM.RunInto does: on
// wgmma where wgmma.cu takes the layout (operands whose rows TMA cannot read copied first
// to rows on 16-byte boundaries), else on mma.sync.
func (w *WGMMA[In]) RunInto(q *engine.Queue, s GEMMShape, alpha float32, a, b *engine.Buffer[In], beta float32, c, d *engine.Buffer[float32]) error {
	s, err := checkCall(q, s, a, b, c, d)
	if err != nil {
		return err
	}
	if !wgmmaTakesLayout(w.p.MMA, s.TransA, s.TransB) {
		w.mu.Lock()
		if w.mma == nil {
			w.mma, err = NewMMA[In, float32](w.dev, w.p)
		}
		m := w.mma
		w.mu.Unlock()
		if err != nil {
			return err
		}
		return m.RunInto(q, s, alpha, a, b, beta, c, d)
	}
	tiles := func(n, t int) int { return (n + t - 1) / t }
	swap := w.swaps(s)
	km, kn := s.M, s.N // the kernel's product: D's, or D^T's where it swaps
	if swap {
		km, kn = s.N, s.M
	}
	bm, bn := w.tileOf(km, kn, s.Batch, swap)
	cl := w.clusterOf(swap, bm) // the tile rows of the product in whole clusters
	blocksM := tiles(tiles(km, bm), cl) * cl
	if blocks := float64(blocksM) * float64(tiles(kn, bn)); blocks*wgmmaThreads > math.MaxInt32 {
		return fmt.Errorf("kernels: gemm: %v needs %.0f blocks, beyond one launch: %w", s, blocks, engine.ErrInvalidArg)
	}
	blocks := blocksM * tiles(kn, bn)
	ktiles := tiles(s.K, w.bk())
	splits := w.splitFor(blocks*s.Batch, ktiles)
	ktPer := 0 // one pass
	if splits > 1 {
		ktPer = tiles(ktiles, splits)
		splits = tiles(ktiles, ktPer) // no split without k steps
	}
	pers := w.t.Persistent
	if wgmmaGridCap == 0 { // a capped grid (tests) runs the tunables' kernel on any shape
		pers = persistentFor(pers, blocks*s.Batch*splits, w.dev.Info().ComputeUnits)
	}
	if swap && pers == 2 || bm != wgmmaBM {
		pers = 0 // the transposed form has no ping-pong kernel, 64-row tiles no persistent one
	}
	bd, err := w.build(s.TransB || w.p.MMA.TF32() || w.transposesB(s), bn, bm, pers, cl, swap)
	if err != nil {
		return err
	}
	if !w.takes(s) {
		if a, b, s, err = w.pad(q, bd, s, a, b); err != nil {
			return err
		}
	}
	var ta, tb, ta2, tb2 *engine.TensorMap
	if swap {
		ta, tb, err = w.tensorMaps(s, a, b, bn, bm, cl, true)
		ta2, tb2 = ta, tb
	} else if w.p.MMA.TF32() {
		ta, tb, ta2, tb2, err = w.splitOperands(q, s, any(a).(*engine.Buffer[float32]), any(b).(*engine.Buffer[float32]), bn, bm, cl)
	} else {
		ta, tb, err = w.tensorMaps(s, a, b, bn, bm, cl, false)
		ta2, tb2 = ta, tb
	}
	if err != nil {
		return err
	}
	ws := d // unused without a split
	if splits > 1 {
		if ws, err = w.workspace(q, splits*s.Batch*s.M*s.N); err != nil {
			return err
		}
	}
	if pers != 0 {
		// One block per multiprocessor over the batch and the splits, in whole clusters, no
		// more than the tiles.
		sms := max(w.dev.Info().ComputeUnits, cl)
		if wgmmaGridCap > 0 {
			sms = wgmmaGridCap
		}
		blocks = min(blocks, max(cl, sms/(s.Batch*splits)/cl*cl))
	}
	r := engine.Range3D(blocks*wgmmaThreads, splits, s.Batch, wgmmaThreads, 1, 1).
		WithSharedBytes(int64(wgmmaShared(bn, bm, w.stagesFor(bn, bm), splitsOf(w.p.MMA))))
	if cl > 1 {
		r = r.WithCluster(cl, 1, 1)
	}
	if err := q.Launch(bd.k, r, ta, tb, ta2, tb2, d, c, alpha, beta, int32(km), int32(kn), int32(s.LDC), int32(s.StrideC), int32(s.K),
		ws, int32(ktPer)); err != nil || splits == 1 {
		return err
	}
	items := min(tiles(s.M*s.N, 256), 4096) * 256
	return q.Launch(bd.reduce, engine.Range2D(items, s.Batch, 256, 1), d, c, ws, alpha, beta, int32(s.M), int32(s.N), int32(s.LDC), int32(s.StrideC),
		int32(splits))
}

// persistentFor returns the persistence (wgmma.cu's PERSISTENT) of a launch of the
// tunables' pers over tiles tiles (blocks over the batch and the splits) on sms
// multiprocessors: pers, but the ping-pong kernel (2) gives way to one tile a block (0)
// where the tiles do not outnumber the multiprocessors. Its persistent grid would then give
// each block one tile, which one of its two consumer warpgroups computes while the other
// idles; the one-tile blocks split each tile between both. On an H200 (2026-11-30) float8e4m3
// nt 512^3 took 8.4 us ping-pong against 6.8 in one-tile blocks, 1024^3 10.8 against 9.4.
func persistentFor(pers, tiles, sms int) int {
	if pers == 2 && tiles <= sms {
		return 0
	}
	return pers
}

// splitFor returns how many ways to split K for a launch of blocks blocks (over the batch)
// and ktiles k steps on w's device (splitK).
func (w *WGMMA[In]) splitFor(blocks, ktiles int) int {
	forced := w.t.SplitK
	if forced == 0 {
		forced = wgmmaSplitK
	}
	return splitK(forced, w.dev.Info().ComputeUnits, blocks, ktiles)
}

// splitKMinSteps is the fewest k steps a split takes where the call chooses: a split
// adds a launch of gemm_splitk_reduce and the partial sums' traffic, a fixed cost (about
// 10 us on an H200 with the launch) that a few k steps a block (0.1-0.6 us each) do not
// repay.
const splitKMinSteps = 16

// splitK returns how many ways to split K: forced when positive (at most ktiles); else,
// where blocks fill less than a quarter of sms multiprocessors, as many as fill them once,
// each split at least splitKMinSteps k steps, at most 16; else 1. Between a quarter and
// half, the narrowed tiles' deeper ring (stagesFor) beats the split: 8192 x 64 x 8192 in
// bfloat16 took 39.4 us on 64 blocks of an H200 in eight stages, 49.0 split two ways in
// four.
func splitK(forced, sms, blocks, ktiles int) int {
	if forced > 0 {
		return max(1, min(forced, ktiles))
	}
	if blocks <= 0 || 4*blocks >= sms {
		return 1
	}
	return max(1, min(sms/blocks, ktiles/splitKMinSteps, 16))
}

// workspace returns q's split-K workspace of at least n floats, growing it.
func (w *WGMMA[In]) workspace(q *engine.Queue, n int) (*engine.Buffer[float32], error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ws == nil {
		w.ws = map[*engine.Queue]*engine.Buffer[float32]{}
	}
	b, err := kernels.Grown(w.dev, w.ws[q], n)
	if err != nil {
		delete(w.ws, q)
		return nil, fmt.Errorf("kernels: gemm %s on wgmma: split-K workspace of %d floats: %w", w.p.Name, n, err)
	}
	w.ws[q] = b
	return b, nil
}

// splitOperands returns the tensor maps of A and B of shape s and width bn for the tf32
// precisions: A's big and B's big parts, A's small and B's small (the big ones again for
// tf32). 3xTF32
// reads K-major copies of both operands that gemm_split enqueues on q into q's scratch
// buffers, rounded and split into big and small parts. tf32 reads an operand in place
// where it is stored K-major (A not transposed, B transposed) with rows TMA can read
// (alignedA, alignedB), the tensor cores dropping the low 13 bits of each float32 as they
// read it (truncation; Triton's Hopper kernels leave it so, while cuBLASLt rounds: its
// tf32 GEMM of float32 1 + 2^-11 + 2^-12 by the identity gave 1 + 2^-10 at every size
// from 128 to 8192 on an H200, 2026-11-29), and a K-major copy of the other,
// unrounded, so that every product is the same whichever path its operands took. On an
// H200 the copies of both operands had cost tf32 a pass over each: 8192 x 64 x 8192 took
// 265 us against cuBLASLt's 85 (2026-11-29).
func (w *WGMMA[In]) splitOperands(q *engine.Queue, s GEMMShape, a, b *engine.Buffer[float32], bn, bm, cl int) (ta, tb, ta2, tb2 *engine.TensorMap, err error) {
	ldk := (s.K + 3) &^ 3 // rows of 16-byte multiples
	tf32 := w.p.MMA == PrecTF32
	inA := tf32 && !s.TransA && w.alignedA(s)
	inB := tf32 && s.TransB && w.alignedB(s)
	na, nb := s.Batch*s.M*ldk, s.Batch*s.N*ldk
	if inA {
		na = 0
	}
	if inB {
		nb = 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.scratch == nil {
		w.scratch = map[*engine.Queue]*wgmmaScratch{}
	}
	sc := w.scratch[q]
	if sc == nil {
		sc = &wgmmaScratch{}
		w.scratch[q] = sc
	}
	sa, sb := na, nb // the small parts: 3xTF32's alone
	if tf32 {
		sa, sb = 0, 0
	}
	for _, g := range []struct {
		buf *(*engine.Buffer[float32])
		n   int
	}{{&sc.aBig, na}, {&sc.bBig, nb}, {&sc.aSmall, sa}, {&sc.bSmall, sb}} {
		if g.n == 0 {
			continue // read in place, or a part the precision has none of
		}
		if *g.buf, err = kernels.Grown(w.dev, *g.buf, g.n); err != nil {
			sc.Close()
			delete(w.scratch, q)
			return nil, nil, nil, nil, fmt.Errorf("kernels: gemm %s on wgmma: scratch for the tf32 operands of %v: %w", w.p.Name, s, err)
		}
	}
	small := func(x, big *engine.Buffer[float32]) *engine.Buffer[float32] {
		if x == nil {
			return big // tf32: gemm_split writes no small part
		}
		return x
	}
	// op(A) is m x k: stored k x m when transposed. op(B)^T is n x k: stored n x k when B is
	// transposed, k x n (to be transposed) when not.
	type operand struct {
		big, small, x *engine.Buffer[float32]
		rows, ld, st  int
		trans, in     bool
	}
	ops := []operand{
		{sc.aBig, small(sc.aSmall, sc.aBig), a, s.M, s.LDA, s.StrideA, s.TransA, inA},
		{sc.bBig, small(sc.bSmall, sc.bBig), b, s.N, s.LDB, s.StrideB, !s.TransB, inB},
	}
	for _, op := range ops {
		if op.in {
			continue
		}
		r := engine.Range3D((s.K+31)/32*32, (op.rows+31)/32*8, s.Batch, 32, 8, 1)
		if err := q.Launch(w.split, r, op.big, op.small, op.x, int32(op.rows), int32(s.K), int32(op.ld), int64(op.st),
			int32(b2i(op.trans)), int32(ldk)); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	// The tensor map of an operand: its copy (rows ldk apart, matrices rows*ldk apart) or
	// the operand in place (rows ld apart, matrices its stride apart, or one whole matrix
	// rounded to 16 bytes for a batch of one).
	desc := func(op operand, box int) engine.TensorMapDesc {
		ld, st := int64(ldk)*4, int64(op.rows)*int64(ldk)*4
		if op.in {
			ld, st = int64(op.ld)*4, int64(op.st)*4
			if s.Batch == 1 {
				st = (int64(op.ld)*int64(op.rows)*4 + 15) &^ 15
			}
		}
		return engine.TensorMapDesc{Dims: []int64{int64(s.K), int64(op.rows), int64(s.Batch)},
			Strides: []int64{ld, st}, Box: []int{32, box, 1}, Swizzle: engine.Swizzle128B}
	}
	src := func(op operand, big bool) *engine.Buffer[float32] {
		switch {
		case op.in:
			return op.x
		case big:
			return op.big
		}
		return op.small
	}
	key := wgmmaMaps{a: src(ops[0], true), b: src(ops[1], true), s: s, rows: [2]int{bm, bn / cl}}
	if m, ok := w.cachedMaps(key.a, key.b, s, true, false, key.rows); ok {
		return m.ta, m.tb, m.ta2, m.tb2, nil
	}
	bbox := bn / cl
	maps := []*engine.TensorMap{}
	for _, x := range []struct {
		op  operand
		big bool
		box int
	}{{ops[0], true, bm}, {ops[1], true, bbox}, {ops[0], false, bm}, {ops[1], false, bbox}} {
		tm, err := engine.NewTensorMap(src(x.op, x.big), desc(x.op, x.box))
		if err != nil {
			return nil, nil, nil, nil, err
		}
		maps = append(maps, tm)
	}
	key.ta, key.tb, key.ta2, key.tb2 = maps[0], maps[1], maps[2], maps[3]
	w.keepMaps(key)
	return key.ta, key.tb, key.ta2, key.tb2, nil
}

// Close releases the compiled kernels. Idempotent.
func (w *WGMMA[In]) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	if w.split != nil {
		errs = append(errs, w.split.Close())
	}
	for _, b := range w.builds {
		errs = append(errs, b.Close())
	}
	w.builds = nil
	for _, b := range w.ws {
		errs = append(errs, b.Close())
	}
	w.ws = nil
	for _, bufs := range w.padded {
		errs = append(errs, bufs[0].Close(), bufs[1].Close())
	}
	w.padded = nil
	errs = append(errs, w.mma.Close())
	for _, sc := range w.scratch {
		errs = append(errs, sc.Close())
	}
	w.mma, w.maps, w.split, w.scratch = nil, nil, nil, nil
	return errors.Join(errs...)
}

var _ Runner[engine.Half, float32] = (*WGMMA[engine.Half])(nil)
