package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Sizes that fit the device. An op's DefaultSize is a GPU's problem: a 4096^3 GEMM takes
// minutes on a 2-core CPU, and the same quick size runs in a millisecond on PoCL and in a
// second on Mesa's Rusticl. Where the run did not fix the sizes (no Config.Sizes), each case
// is fitted to its device within a Budget: set up at its starting size, verified, run once
// more to learn how long one run takes, and set up again at a quarter of its size while one
// run takes longer than the budget allows; its timed runs are then as many as fit in the
// budget's time for a case (never fewer than minCount). The result says when its size was
// reduced (Result.SizeNote), and the report records the budget (ConfigInfo).

// Budget bounds the time a case takes on its device. The zero Budget bounds nothing.
type Budget struct {
	// MaxRun is the longest one run may take: a case whose run takes longer is set up
	// again at a quarter of its size, at most maxShrink times.
	MaxRun time.Duration `json:"max_run_ns,omitempty"`
	// CaseTime is the time the timed runs of a case may take together: Config.Count is
	// lowered to fit it, to no fewer than minCount runs, and the warm-up runs are left out
	// when one run alone is long enough to have warmed the device.
	CaseTime time.Duration `json:"case_time_ns,omitempty"`
}

// QuickBudget is the budget of --quick (`make run`): the whole suite on a CPU in seconds.
var QuickBudget = Budget{MaxRun: 25 * time.Millisecond, CaseTime: 150 * time.Millisecond}

// CPUBudget is the budget of a CPU device when no sizes were given: each op starts at its
// QuickSize there (its DefaultSize is a GPU's problem) and is fitted to seconds a case.
var CPUBudget = Budget{MaxRun: 250 * time.Millisecond, CaseTime: 2 * time.Second}

// quickEmulatedTypes are the GEMM element types a CPU emulates (tensor-core types: TF32,
// 3xTF32, half precisions, float8). In a whole-suite --quick run a CPU device runs each of
// them in the nn layout only: the nt, tn and batched layouts compile programs of their own
// (a second on PoCL each, most of a cold quick run) and emulate the same arithmetic. The
// float32 and float64 GEMMs keep every layout; --ops or a run without --quick runs all.
var quickEmulatedTypes = map[string]bool{
	"tf32": true, "float32x3tf32": true, "float16": true, "bfloat16": true, "float8e4m3": true, "float8e5m2": true,
}

// quickSuiteOn reports whether cfg is a whole-suite --quick run (no --ops) on a device of
// kind that is a CPU: the run whose scope caseLeftOut and vendorLeftOut narrow.
func (cfg Config) quickSuiteOn(kind engine.Kind) bool {
	return cfg.Quick && kind == engine.KindCPU && len(cfg.Patterns) == 0
}

// quickLeftOut starts the reason of a case caseLeftOut leaves out, and is its summary's
// count (SkipReason).
const quickLeftOut = "left out by --quick on a CPU"

// caseLeftOut returns why op's case does not run on a device of kind under cfg (see
// quickEmulatedTypes), or "" when it runs.
func (cfg Config) caseLeftOut(kind engine.Kind, op kernels.Op) string {
	if !cfg.quickSuiteOn(kind) || op.Family != "gemm" || !quickEmulatedTypes[op.Type] {
		return ""
	}
	if strings.HasPrefix(op.Name, "gemm/nn/") {
		return ""
	}
	return quickLeftOut + ", which runs the emulated tensor-core GEMM types in the nn layout only (--ops, or a run with no --quick, runs every layout)"
}

// quickVendorCases are the cases whose vendor baseline --quick keeps on a CPU device when
// the whole suite runs: one float32 case per vendor routine (CLBlast's GEMM, dot, axpy and
// sum, clFFT's transform). A vendor library compiles its kernels inside its first call of
// each routine, precision and transpose, and on PoCL that compile is most of a cold quick
// run: measured on the 2-core machine (2026-11-28), CLBlast's GEMMs took 24 s and clFFT's
// plans 9 s of the 90 s a cold `prism bench --quick --vendor` spent on PoCL. The other
// cases report why they have no baseline (vendorLeftOut); without --quick, or with --ops,
// every case has its baseline.
var quickVendorCases = map[string]bool{
	"gemm/nn/float32":    true,
	"stream/dot/float32": true,
	"map/axpy/float32":   true,
	"reduce/sum/float32": true,
	"fft/c2c/float32":    true,
}

// vendorLeftOut returns why op's case runs without its vendor baseline on a device of
// kind under cfg (see quickVendorCases), or "" when it runs with it.
func (cfg Config) vendorLeftOut(kind engine.Kind, op kernels.Op) string {
	if !cfg.quickSuiteOn(kind) || quickVendorCases[op.Name] {
		return ""
	}
	if !slices.ContainsFunc(op.Variants, func(v kernels.Variant) bool { return v.Vendor }) {
		return "" // runVendor says why there is none
	}
	return quickLeftOut + ", where the vendor library's first call compiles for seconds (one case per routine keeps its baseline; --ops, or a run with no --quick, gives every case its own)"
}

// On reports whether b bounds anything.
func (b Budget) On() bool { return b.MaxRun > 0 }

const (
	// minCount is the fewest timed runs a budget leaves a case: a median of three.
	minCount = 3
	// maxShrink is the most times a case is quartered: 1/64 of its starting size.
	maxShrink = 3
	// warmRun is the time of one run beyond which it counts as the warm-up.
	warmRun = 10 * time.Millisecond
)

// StartSize returns the size op starts at on a device of kind when no size was given: its
// QuickSize with quick or on a CPU, else its DefaultSize. `prism run` and `prism bench`
// share it.
func StartSize(op kernels.Op, kind engine.Kind, quick bool) int {
	if quick || kind == engine.KindCPU {
		return op.QuickSize
	}
	return op.DefaultSize
}

// BudgetFor returns the budget of a device of kind: none when the sizes were given, else
// QuickBudget with quick, CPUBudget on a CPU, none otherwise (a GPU's default sizes are
// measured as they are).
func (cfg Config) BudgetFor(kind engine.Kind) Budget {
	switch {
	case len(cfg.Sizes) > 0 || len(cfg.Shapes) > 0:
		return Budget{}
	case cfg.Quick:
		return QuickBudget
	case kind == engine.KindCPU:
		return CPUBudget
	}
	return Budget{}
}

// counts returns the warm-up and timed runs of a case whose one run took d (0: unknown),
// within b: cfg's own when b is off.
func (b Budget) counts(cfg Config, d time.Duration) (warmup, count int) {
	warmup, count = cfg.Warmup, cfg.Count
	if !b.On() || d <= 0 {
		return warmup, count
	}
	warmup = max(0, warmup-1) // the run that measured d warmed the device
	if d >= warmRun {
		warmup = 0
	}
	if fit := int(b.CaseTime / d); fit < count {
		count = max(fit, min(minCount, cfg.Count))
	}
	return warmup, count
}

// quarters returns how many times a size must be quartered for a run of d to fit in
// b.MaxRun, assuming time in proportion to size (most ops grow faster, so the estimate
// errs on the small side): at least 1.
func (b Budget) quarters(d time.Duration) int {
	return max(1, int(math.Ceil(math.Log(float64(d)/float64(b.MaxRun))/math.Log(4))))
}

// fitted remembers, across the devices of a run, the sizes the budget chose: each op's
// smallest, so that a device measured after a slower one starts where that one ended and
// the devices' cases stay on one row, and each family's quarterings per device, so that
// the ops of a family after the first start near their size. Safe for concurrent use.
type fitted struct {
	mu     sync.Mutex
	op     map[string]int    // op name -> smallest size chosen on any device
	family map[[2]string]int // device ID, family -> quarterings of the last op
	// earlier: op name -> the size an earlier run on the same devices chose
	// (Config.Remembered).
	earlier map[string]int
}

func newFitted() *fitted {
	return &fitted{op: map[string]int{}, family: map[[2]string]int{}}
}

// start returns the size op starts at on device id, from its starting size, and why it
// is smaller when it is.
func (f *fitted) start(id string, op kernels.Op, size int) (int, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.op[op.Name]; ok && s < size {
		return s, "the size that fits the slowest device of the run"
	}
	if s, ok := f.earlier[op.Name]; ok && s > 0 && s <= size {
		return s, "the size an earlier run on these devices chose, so that the two compare (--sizes, or a run with no store, starts afresh)"
	}
	if q := f.family[[2]string{id, op.Family}]; q > 0 {
		return max(1, size>>(2*q)), "the size the family's earlier cases needed on this device"
	}
	return size, ""
}

// earlierSize returns the size an earlier run chose for op (Config.Remembered), if any.
func (f *fitted) earlierSize(op kernels.Op) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.earlier[op.Name]
	return s, ok && s > 0
}

// quartered returns how many times the family of op was quartered on device id, at its
// last op.
func (f *fitted) quartered(id string, op kernels.Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.family[[2]string{id, op.Family}]
}

// smallest returns the smallest size op ran at on any device so far.
func (f *fitted) smallest(op kernels.Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.op[op.Name]
}

// record notes that op ran on device id at size, quartered q times from its start.
func (f *fitted) record(id string, op kernels.Op, size, q int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.op[op.Name]; !ok || size < s {
		f.op[op.Name] = size
	}
	f.family[[2]string{id, op.Family}] = q
}

// RunFitted runs op on q's device as Run does when no sizes were given: from its StartSize,
// fitted to the device's budget (Config.BudgetFor). `prism run` without --size calls it.
func RunFitted(ctx context.Context, cfg Config, q *engine.Queue, op kernels.Op, variant string) Result {
	kind := q.Device().Info().Kind
	size := StartSize(op, kind, cfg.Quick)
	b := cfg.BudgetFor(kind)
	if !b.On() {
		return RunCase(ctx, cfg, q, op, size, variant)
	}
	return fitCase(ctx, cfg, q, op, size, variant, b, newFitted())
}

// fitCase runs op on q's device from size within budget b: RunCase, then again at a
// quarter of the size (or less) while one run takes longer than b.MaxRun. It returns the
// result of the last size tried; when a reduced size does not set up (a shape the op
// refuses), the larger size runs instead, without the bound.
func fitCase(ctx context.Context, cfg Config, q *engine.Queue, op kernels.Op, size int, variant string, b Budget, fit *fitted) Result {
	id := q.Device().ID()
	cur, why := fit.start(id, op, size)
	if s, ok := fit.earlierSize(op); ok && s == cur {
		// Where an earlier run on these devices settled, a case is set up smaller only when
		// one run takes over twice the bound: runs of one machine keep one size while its
		// timing jitters near the bound (a run of 26 ms against 25 ms must not move it).
		b.MaxRun *= 2
	}
	quartered := 0
	for s := cur; s < size; s <<= 2 {
		quartered++
	}
	cfg.budget = b
	slowAt, slow := 0, time.Duration(0)
	for {
		cfg.shrinkable = quartered < maxShrink && cur >= 4
		res, d := runCase(ctx, cfg, q, op, cur, variant)
		if d > 0 && ctx.Err() == nil {
			slowAt, slow = cur, d
			k := min(b.quarters(d), maxShrink-quartered)
			cur, quartered = max(1, cur>>(2*k)), quartered+k
			continue
		}
		if slowAt != 0 && (res.Skipped != "" || res.Err != "") && ctx.Err() == nil {
			cfg.budget, cfg.shrinkable = Budget{}, false
			res, _ = runCase(ctx, cfg, q, op, slowAt, variant)
			cur, slowAt = slowAt, 0
		}
		if cur != size && res.OK() {
			switch {
			case slowAt != 0:
				res.SizeNote = fmt.Sprintf("%s, not %s: a run at %s took %s on this device, over the budget's %s", FormatSize(cur), FormatSize(size), FormatSize(slowAt), roundDuration(slow), b.MaxRun)
			default:
				res.SizeNote = fmt.Sprintf("%s, not %s: %s", FormatSize(cur), FormatSize(size), why)
			}
		}
		fit.record(id, op, cur, quartered)
		return res
	}
}

// roundDuration rounds d for a message: to the millisecond above 10 ms.
func roundDuration(d time.Duration) time.Duration {
	if d > 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

// RememberedSizes returns, from an earlier report rep, the sizes its fitted cases ran at
// (reduced or not), by op name: the smallest over its devices. It returns nil when rep
// fitted nothing or ran with other quick settings than quick: Config.Remembered for a run
// of the same devices.
func RememberedSizes(rep *Report, quick bool) map[string]int {
	if rep == nil || rep.Config.Quick != quick || len(rep.Config.Sizes) > 0 {
		return nil
	}
	var out map[string]int
	for _, d := range rep.Devices {
		if d.Budget == nil {
			continue
		}
		for _, r := range d.Results {
			if r.Size <= 0 || r.VendorLibrary || !r.OK() {
				continue
			}
			if out == nil {
				out = map[string]int{}
			}
			if s, ok := out[r.Case]; !ok || r.Size < s {
				out[r.Case] = r.Size
			}
		}
	}
	return out
}
