package gemm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// MMATunables are the tunables of the tensor-core GEMM (mma.cu): the BM x BN tile of D a
// block computes, its k step BK (in elements), the WarpsM x WarpsN warps that share the
// tile, the depth of the cp.async pipeline in shared memory, and the tile rows of D a
// group of consecutive blocks covers (L2 reuse).
type MMATunables struct {
	BM, BN, BK     int
	WarpsM, WarpsN int
	Stages, GroupM int
	// MinBlocks is the number of blocks per SM the kernel's registers must allow
	// (__launch_bounds__): 2 caps 256 threads at 128 registers each.
	MinBlocks int
	// MMAK is the k of the float64 mma instruction: 4 (m8n8k4), 8 (m16n8k8) or 16
	// (m16n8k16), the last two on sm_90 and newer; 0 takes the architecture's default
	// (8 on sm_90, 4 before). Other precisions have one shape and take 0 only.
	MMAK int
}

// String writes t as the -D names of mma.cu ("BM=128 BN=128 BK=32 WARPS=2x4 STAGES=3
// GROUP_M=8 MIN_BLOCKS=2", and " MMA_K=16" when MMAK is set).
func (t MMATunables) String() string {
	s := fmt.Sprintf("BM=%d BN=%d BK=%d WARPS=%dx%d STAGES=%d GROUP_M=%d MIN_BLOCKS=%d", t.BM, t.BN, t.BK, t.WarpsM, t.WarpsN, t.Stages, t.GroupM, t.MinBlocks)
	if t.MMAK != 0 {
		s += fmt.Sprintf(" MMA_K=%d", t.MMAK)
	}
	return s
}

// mmaTuning is the tuning table of the tensor-core GEMM: per precision, rows in order of
// decreasing compute capability; a device takes the first row its compute capability
// reaches. The rows are prism tune's winners on an H100 at M = N = K = 8192 (2026-11-25,
// docs/PERFORMANCE.md; bfloat16 takes float16's, the same kernel); every candidate is
// verified by TestPrecisions through NewMMAWith and by prism tune before it is timed.
var mmaTuning = map[string][]struct {
	minCompute int
	t          MMATunables
}{
	"tf32":          {{80, MMATunables{BM: 128, BN: 128, BK: 32, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1}}},
	"float32x3tf32": {{80, MMATunables{BM: 128, BN: 128, BK: 32, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1}}},
	"float16":       {{80, MMATunables{BM: 128, BN: 128, BK: 64, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1}}},
	"bfloat16":      {{80, MMATunables{BM: 128, BN: 128, BK: 64, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1}}},
	// float8 on sm_90: 4 warps of 64 x 64, 3.69 ms at 8192^3 nt on an H200 against 4.41 for
	// the sm_89 row's 8 warps under a 128-register cap (prism tune, 2026-11-30); e5m2 runs
	// the same kernel. sm_89 keeps the row of the H100 run.
	"float8e4m3": {{90, MMATunables{BM: 128, BN: 128, BK: 128, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1}},
		{89, MMATunables{BM: 128, BN: 128, BK: 128, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 2}}},
	"float8e5m2": {{90, MMATunables{BM: 128, BN: 128, BK: 128, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1}},
		{89, MMATunables{BM: 128, BN: 128, BK: 128, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 2}}},
	// float64 on sm_90: m16n8k16 on CUTLASS's Hopper DGEMM tile, 22.50 ms at 8192^3 on an
	// H200 against 25.75 for the sm_80 row's (prism tune, 2026-11-30, docs/PERFORMANCE-LOG.md).
	"float64": {{90, MMATunables{BM: 128, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1, MMAK: 16}},
		{80, MMATunables{BM: 64, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 3}}},
}

// MMADefaults returns the tunables of the table for precision prec on a device of compute
// capability cc (the last row when cc is below every row: NewMMA refuses such a device).
func MMADefaults(prec string, cc int) MMATunables {
	rows := mmaTuning[prec]
	for _, r := range rows {
		if cc >= r.minCompute {
			return r.t
		}
	}
	if len(rows) == 0 {
		return MMATunables{}
	}
	return rows[len(rows)-1].t
}

// mmaCandidates are the tunables prism tune and BenchmarkMMATunables measure for a
// precision of inputs of in bytes: 128 x 128 tiles on 8 warps (64 x 32 each) with their
// registers capped for 2 blocks per SM, or 4 warps (64 x 64), 128 x 256 tiles on 8 warps,
// 3 or 4 stages; each k step 64 or 128 bytes of elements (16 doubles). On an H100
// (2026-11-25) the sets without a register cap all ran within 2% of each other in
// float16 (198 TFLOP/s): 232 registers per thread left one block of 8 warps per SM.
func mmaCandidates(in, cc int) []MMATunables {
	if in == 8 {
		// DGEMM: also larger warp tiles (64 x 32 on 8 or 4 warps, 32 x 64) and deeper rings,
		// for prism tune to weigh against the 32 x 32 warp tiles of the table (0.70 of
		// cuBLAS on an H200, 2026-11-28); on sm_90 the same tiles with m16n8k16, half the
		// mma instructions of m16n8k8 for the same products, and CUTLASS's Hopper DGEMM
		// tile (128 x 64 x 16 on 2 x 2 warps, 3 stages). Left out after three H200 runs
		// (2026-11-30): BK 32 (one block an SM: 27-30 ms against 22.5), 256 x 64 on 8 warps
		// (25.7-26.6) and GROUP_M 16 (within 1% of 8). A's fragments double-buffered in
		// registers (loaded one m tile ahead, against the 15% of the stall samples that ncu
		// put on LDS.64 of A) ran slower on an H200 (2026-11-30, prism tune at 8192): 23.24
		// and 23.21 ms against the table's 22.59, and were dropped.
		var k16 []MMATunables
		if cc >= 90 {
			k16 = []MMATunables{
				{BM: 64, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 3, MMAK: 16},
				{BM: 128, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1, MMAK: 16},
				{BM: 128, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 2, MMAK: 16},
				{BM: 64, BN: 128, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 4, GroupM: 8, MinBlocks: 2, MMAK: 16},
				{BM: 128, BN: 128, BK: 16, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 1, MMAK: 16},
				{BM: 64, BN: 128, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 2, MMAK: 16},
				// 4 stages of 128 x 64 fit two blocks an SM with the rows swizzled, not padded.
				{BM: 128, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 4, GroupM: 8, MinBlocks: 2, MMAK: 16},
				// sm_80's m8n8k4, run here so that its fragments are checked on the swizzled rows.
				{BM: 64, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 3, MMAK: 4},
			}
		}
		return append([]MMATunables{
			{BM: 64, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1},
			{BM: 64, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 3},
			{BM: 128, BN: 128, BK: 16, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 1},
			{BM: 128, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 4, GroupM: 8, MinBlocks: 1},
			{BM: 128, BN: 128, BK: 16, WarpsM: 2, WarpsN: 4, Stages: 4, GroupM: 8, MinBlocks: 1},
			{BM: 64, BN: 128, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 4, GroupM: 8, MinBlocks: 1},
			{BM: 128, BN: 128, BK: 32, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 1},
			{BM: 128, BN: 64, BK: 32, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1},
		}, k16...)
	}
	bk := 128 / in
	return []MMATunables{
		{BM: 128, BN: 128, BK: bk / 2, WarpsM: 2, WarpsN: 4, Stages: 4, GroupM: 8, MinBlocks: 2},
		{BM: 128, BN: 128, BK: bk, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 2},
		{BM: 128, BN: 128, BK: bk, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 1},
		{BM: 128, BN: 128, BK: bk, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 1},
		{BM: 128, BN: 128, BK: bk / 2, WarpsM: 2, WarpsN: 2, Stages: 4, GroupM: 8, MinBlocks: 2},
		{BM: 128, BN: 256, BK: bk / 2, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 1},
	}
}

// ParseMMATunables reads tunables as String writes them ("BM=128 BN=128 BK=32 WARPS=2x4
// STAGES=3 GROUP_M=8 MIN_BLOCKS=1"); every key must be given once, MMA_K at most once.
// Errors wrap engine.ErrInvalidArg and name the field.
func ParseMMATunables(s string) (MMATunables, error) {
	var t MMATunables
	seen := map[string]bool{}
	bad := func(format string, args ...any) (MMATunables, error) {
		return MMATunables{}, fmt.Errorf("kernels: gemm tunables %q: "+format+": %w", append([]any{s}, append(args, engine.ErrInvalidArg)...)...)
	}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return bad("%q is not KEY=VALUE", f)
		}
		if seen[k] {
			return bad("%s given twice", k)
		}
		seen[k] = true
		num := func(x string) (int, error) {
			n, err := strconv.Atoi(x)
			if err != nil || n <= 0 || n > 4096 {
				return 0, fmt.Errorf("bad")
			}
			return n, nil
		}
		var err error
		switch k {
		case "BM":
			t.BM, err = num(v)
		case "BN":
			t.BN, err = num(v)
		case "BK":
			t.BK, err = num(v)
		case "STAGES":
			t.Stages, err = num(v)
		case "GROUP_M":
			t.GroupM, err = num(v)
		case "MIN_BLOCKS":
			t.MinBlocks, err = num(v)
		case "MMA_K":
			t.MMAK, err = num(v)
		case "WARPS":
			wm, wn, ok := strings.Cut(v, "x")
			if !ok {
				return bad("WARPS=%s is not MxN", v)
			}
			if t.WarpsM, err = num(wm); err == nil {
				t.WarpsN, err = num(wn)
			}
		default:
			return bad("unknown tunable %s (BM, BN, BK, WARPS, STAGES, GROUP_M, MIN_BLOCKS, optional MMA_K)", k)
		}
		if err != nil {
			return bad("%s=%s is not a positive integer up to 4096", k, v)
		}
	}
	for _, k := range []string{"BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M", "MIN_BLOCKS"} {
		if !seen[k] {
			return bad("%s missing", k)
		}
	}
	return t, nil
}

// mmaTunablesFor returns the tunables of the tensor-core variant of op on dev and where
// they came from: forced (Params.Tunables), tuned (prism tune's file), or the table.
func mmaTunablesFor(dev *engine.Device, op, prec, forced string) (MMATunables, string, error) {
	return kernels.TunablesFor(dev, op, "cuda-mma", forced, ParseMMATunables, MMADefaults(prec, dev.Info().ComputeCapability), "table")
}

// tilesString writes the portable kernel's tunables as its candidates spell them.
func tilesString(ts, tsk, wpt int) string { return fmt.Sprintf("TS=%d TSK=%d WPT=%d", ts, tsk, wpt) }

// parseTiles reads "TS=128 TSK=16 WPT=8". Errors wrap engine.ErrInvalidArg.
func parseTiles(s string) ([3]int, error) {
	var v [3]int
	n, err := fmt.Sscanf(s, "TS=%d TSK=%d WPT=%d", &v[0], &v[1], &v[2])
	if err != nil || n != 3 || tilesString(v[0], v[1], v[2]) != strings.Join(strings.Fields(s), " ") {
		return v, fmt.Errorf("kernels: gemm tunables %q: want TS=n TSK=n WPT=n: %w", s, engine.ErrInvalidArg)
	}
	if v[0] <= 0 || v[1] <= 0 || v[2] <= 0 || v[0]%v[2] != 0 || (v[0]*v[1])%((v[0]/v[2])*(v[0]/v[2])) != 0 {
		return v, fmt.Errorf("kernels: gemm tunables %q: TS must be a multiple of WPT and TS*TSK of (TS/WPT)^2: %w", s, engine.ErrInvalidArg)
	}
	return v, nil
}

// portableTiles are the tile sets of the portable kernel that prism tune measures.
var portableTiles = [][3]int{{128, 16, 8}, {128, 32, 8}, {64, 16, 4}, {64, 32, 4}, {64, 16, 8}, {128, 8, 8},
	{64, 8, 4}, {32, 16, 4}, {128, 32, 16}, {64, 32, 8}}

// portableCandidates returns the tile sets of portableTiles that fit dev's limits, the
// one gemmTiles chooses first.
func portableCandidates[T kernels.Float](dev *engine.Device) []string {
	lim := kernels.DeviceLimits(dev)
	ts, tsk, wpt := gemmTiles[T](dev.Info(), lim)
	var out []string
	if ts > 0 {
		out = append(out, tilesString(ts, tsk, wpt))
	}
	for _, c := range portableTiles {
		if s := tilesString(c[0], c[1], c[2]); tilesFit[T](lim, c) && (len(out) == 0 || s != out[0]) {
			out = append(out, s)
		}
	}
	return out
}

// tilesFit reports whether a tile set's work-group and local tiles fit lim.
func tilesFit[T kernels.Float](lim kernels.Limits, c [3]int) bool {
	rts := c[0] / c[2]
	return lim.Fits(rts, rts) && (lim.LocalBytes <= 0 || int64(2*c[1]*(c[0]+1)*engine.SizeOf[T]()) <= lim.LocalBytes)
}

// portableTilesFor returns the portable kernel's tiles for op on dev and where they came
// from: forced (Params.Tunables), tuned (prism tune's file), or nil for gemmTiles' choice.
func portableTilesFor(dev *engine.Device, op, forced string) (*[3]int, string, error) {
	if forced != "" {
		t, err := parseTiles(forced)
		if err != nil {
			return nil, "", err
		}
		return &t, "forced", nil
	}
	if e, ok := kernels.LookupTuned(dev, op, kernels.PortableName); ok {
		if t, err := parseTiles(e.Tunables); err == nil {
			return &t, "tuned", nil
		}
	}
	return nil, "by device kind", nil
}
