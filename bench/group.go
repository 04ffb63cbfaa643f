package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/group"
	"github.com/prism-compute/prism/kernels"
)

// Many devices at once: operations split across a group of devices, timed against each
// device alone (RunSplits), and collectives timed as nccl-tests times them
// (RunCollectives). Both are timed by the host clock: a split's time spans its parts on
// every device and the combine, a collective's every rank of this process.

// SplitResult is one operation at one size split across the group, beside each device
// alone.
type SplitResult struct {
	Case string `json:"case"`
	// Devices are the IDs of the devices the op was split across, in the order of the
	// shares (the report's devices; absent in reports from before it was recorded).
	Devices []string        `json:"devices,omitempty"`
	Size    int             `json:"size"`
	Shape   string          `json:"shape"`
	Shares  []kernels.Share `json:"shares"`
	// Placement is where the split's data lives: "host" (the op's inputs come from the
	// host, each part's result is read back and combined there every run, as every op of
	// the split suite does) or "sharded" (the data stays on the devices between ops).
	Placement string `json:"placement,omitempty"`
	// Plan is the planner's choice in words (kernels.PlanSummary): one device and how much
	// slower a split was predicted, or the devices split over and the gain predicted.
	Plan   string         `json:"plan,omitempty"`
	Stats  Stats          `json:"stats"`
	Single []SingleDevice `json:"single"`
	// Speedup is the fastest single device's median time over the split's, through the
	// same placement; Fastest names that device. The two are timed in turn, run for run
	// (Paired), so that a drift of the machine's speed between the steps does not read as
	// a gain or a loss: with data from the host, the fastest device alone through the
	// split, its result combined on the host; on sharded data, the device fastest at the
	// one-device op with all of the data scattered onto it, through the split's sharded
	// run. SpeedupResident compares with the op on the device fastest at it, its result
	// left in device memory (no read-back), where Prism's one-device op times itself (on
	// sharded data, the speedup where Paired is absent).
	Speedup float64 `json:"speedup"`
	Fastest string  `json:"fastest,omitempty"`
	// Paired is the fastest device alone (through the split, its data placed as the
	// split's) timed in turn with the split's timed runs; Speedup is its median over the
	// split's. Absent when it could not be set up beside the split (Speedup then compares
	// with Single's earlier timing, or on sharded data with the resident op), and in
	// sharded results of reports before 2026-12.
	Paired          *Stats  `json:"paired,omitempty"`
	SpeedupResident float64 `json:"speedup_resident,omitempty"`
	GFLOPs          float64 `json:"gflops,omitempty"`
	GBs             float64 `json:"gbs,omitempty"`
	Verified        bool    `json:"verified"`
	Err             string  `json:"error,omitempty"`
}

// PlacementHost is the Placement of a split whose data comes from the host and whose
// result is read back to it each run.
const PlacementHost = "host"

// Where returns the split's Placement, PlacementHost where the report did not record one
// (reports from before splits ran on sharded data).
func (s SplitResult) Where() string {
	if s.Placement == "" {
		return PlacementHost
	}
	return s.Placement
}

// Checked reports whether the split's plan was checked by its second run against the
// fastest device alone (kernels.SplitRun.CheckedRun): its shares hold the split's time
// (with the device's, or why it could not run alone).
func (s SplitResult) Checked() bool {
	return slices.ContainsFunc(s.Shares, func(sh kernels.Share) bool { return sh.Ran > 0 })
}

// devicesText names the devices of a split joined by "+", and, for data not from the
// host, where it lived ("opencl:0:0+opencl:1:0 (sharded data)"): a split on host data
// and the same split on sharded data are two cases of a report.
func (s SplitResult) devicesText() string {
	d := strings.Join(s.Devices, "+")
	if s.Where() != PlacementHost {
		d += " (" + s.Placement + " data)"
	}
	return d
}

// PlacementSharded is the Placement of a split whose data lies on the devices: scattered
// once before the timing, each timed run leaving its result there (no gather), verified
// after the timing by a gather. Its Speedup is against the fastest device alone with its
// data resident (the one-device op, its result left in device memory).
const PlacementSharded = "sharded"

// SingleDevice is an operation on one device alone, timed by the host clock as the split:
// through the split with the whole share on the device (Stats: the same read-back and
// combine on the host), and as the one-device op with its result left on the device
// (Resident: run and finished).
type SingleDevice struct {
	Device   string `json:"device"`
	Stats    Stats  `json:"stats"`
	Resident Stats  `json:"resident"`
	Err      string `json:"error,omitempty"`
}

// CollectiveResult is one collective at one size. Bytes is nccl-tests' size: the bytes
// of each rank's send buffer for all-reduce and broadcast, of each rank's recv buffer for
// all-gather, of its send buffer for reduce-scatter. AlgBW is Bytes over the median time;
// BusBW scales it by the bytes each rank's links carry, as nccl-tests does: 2(n-1)/n for
// all-reduce, (n-1)/n for all-gather and reduce-scatter, 1 for broadcast.
type CollectiveResult struct {
	Case  string `json:"case"` // "collective/all-reduce/float32"
	Count int    `json:"count"`
	Bytes int64  `json:"bytes"`
	Ranks int    `json:"ranks"`
	// Devices are the IDs of this process's devices of the group, in rank order (the
	// report's devices; absent in reports from before it was recorded).
	Devices  []string `json:"devices,omitempty"`
	Library  string   `json:"library"`
	Stats    Stats    `json:"stats"`
	AlgBW    float64  `json:"algbw_gbs"`
	BusBW    float64  `json:"busbw_gbs"`
	Verified bool     `json:"verified"`
	// InPlace: send and recv were one buffer (CollectiveConfig.InPlace).
	InPlace bool   `json:"in_place,omitempty"`
	Err     string `json:"error,omitempty"`
}

// newGroupReport starts the report of a split or collective run on devs: each device with
// its identity and backend, no results and no ceilings.
func newGroupReport(devs []*engine.Device, cfg ConfigInfo) *Report {
	host, _ := os.Hostname()
	ver, commit := Version()
	r := &Report{Schema: SchemaVersion, Prism: ver, Commit: commit, Date: time.Now().UTC(), Host: host,
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, HostCPU: HostCPU(), Env: ResultEnv(), Config: cfg}
	for _, d := range devs {
		r.Devices = append(r.Devices, DeviceReport{Device: d.Info(), Backend: d.Backend()})
	}
	return r
}

// deviceIDs returns the IDs of devs.
func deviceIDs(devs []*engine.Device) []string {
	ids := make([]string, len(devs))
	for i, d := range devs {
		ids[i] = d.ID()
	}
	return ids
}

// SplitConfig selects what RunSplits measures.
type SplitConfig struct {
	Ops      []kernels.Op // those without a Split are left out
	Sizes    []int        // empty: each op's default (quick) size
	Quick    bool
	Count    int
	Warmup   int
	Seed     uint64
	Portable bool
	// Fractions fixes the shares (kernels.SplitOptions); nil measures them.
	Fractions []float64
	// Placement narrows the splits to data from the host (PlacementHost) or data on the
	// devices (PlacementSharded: each device alone is then timed resident only); "" runs
	// both.
	Placement string
	Progress  *Progress
}

// CheckFractions returns an error wrapping engine.ErrInvalidArg unless f are shares of
// the work a split can give its devices: each a number from 0 to 1, summing to 1 within
// 1e-6, and, where devices is above 0, one for each device. `0,0`, `NaN,NaN` and
// `0.3,0.3` are refused here, before any device works, rather than when the split is set
// up after each device ran alone.
func CheckFractions(f []float64, devices int) error {
	text := make([]string, len(f))
	sum := 0.0
	for i, x := range f {
		text[i] = strconv.FormatFloat(x, 'g', -1, 64)
		if !(x >= 0 && x <= 1) { // NaN too
			return fmt.Errorf("bench: fraction %s (share %d of %d) is not a share of the work, from 0 to 1: %w", text[i], i+1, len(f), engine.ErrInvalidArg)
		}
		sum += x
	}
	switch {
	case len(f) == 0:
		return fmt.Errorf("bench: no fractions: give one share per device: %w", engine.ErrInvalidArg)
	case devices > 0 && len(f) != devices:
		return fmt.Errorf("bench: %d fractions (%s) for %d devices: give one share per device: %w", len(f), strings.Join(text, ","), devices, engine.ErrInvalidArg)
	case math.Abs(sum-1) > 1e-6:
		return fmt.Errorf("bench: fractions %s sum to %s, not 1: %w", strings.Join(text, ","), strconv.FormatFloat(sum, 'g', 6, 64), engine.ErrInvalidArg)
	}
	return nil
}

// RunSplits runs every op of cfg that splits, at each size: first on each device alone,
// then split across all of devs, each verified against its reference before it is
// timed, and reports the speedup of the split over the fastest device alone. Fractions
// that CheckFractions refuses are an error before anything runs.
func RunSplits(ctx context.Context, cfg SplitConfig, devs []*engine.Device) (*Report, error) {
	if cfg.Count <= 0 || cfg.Warmup < 0 || cfg.Count > MaxCount || cfg.Warmup > MaxWarmup {
		return nil, fmt.Errorf("bench: count %d and warmup %d: count 1 to %d, warmup 0 to %d: %w", cfg.Count, cfg.Warmup, MaxCount, MaxWarmup, engine.ErrInvalidArg)
	}
	if len(devs) < 2 {
		return nil, fmt.Errorf("bench: a split needs two devices or more; %d given: %w", len(devs), engine.ErrInvalidArg)
	}
	if cfg.Fractions != nil {
		if err := CheckFractions(cfg.Fractions, len(devs)); err != nil {
			return nil, err
		}
	}
	var ops []kernels.Op
	var names []string
	for _, op := range cfg.Ops {
		if op.Split != nil {
			ops = append(ops, op)
			names = append(names, op.Name)
		}
	}
	rep := newGroupReport(devs, ConfigInfo{Ops: names, Sizes: cfg.Sizes, Quick: cfg.Quick, Count: cfg.Count, Warmup: cfg.Warmup, Seed: cfg.Seed, Portable: cfg.Portable})
	if len(ops) == 0 {
		return nil, fmt.Errorf("bench: none of the ops selected splits across devices: %w", engine.ErrInvalidArg)
	}
	sizes := func(op kernels.Op) []int {
		switch {
		case len(cfg.Sizes) > 0:
			return cfg.Sizes
		case cfg.Quick:
			return []int{op.QuickSize}
		}
		return []int{op.DefaultSize}
	}
	n := 0
	for _, op := range ops {
		n += len(sizes(op)) * (len(devs) + 2)
	}
	cfg.Progress.begin(n)
	defer cfg.Progress.end()
	var step string // the step running, for the report of an interrupted run
	for _, op := range ops {
		for _, size := range sizes(op) {
			if ctx.Err() != nil {
				break
			}
			rep.Splits = append(rep.Splits, runSplit(ctx, cfg, op, size, devs, &step)...)
		}
	}
	return rep, interrupted(ctx, rep, step)
}

// interrupted marks rep as interrupted at step, as Run marks its report, when ctx ended
// before the run did, and returns ctx's error (nil when it did not end).
func interrupted(ctx context.Context, rep *Report, step string) error {
	err := ctx.Err()
	if err != nil {
		rep.Interrupted, rep.InterruptedAt = true, step
	}
	return err
}

// notRun is the error of a split that an interrupted run did not reach.
const notRun = "not run: the run was interrupted"

// runSplit measures one op at one size on each device alone, then split with its data
// from the host, then, where the op's split runs on sharded data, split on data already
// on the devices (runSharded).
func runSplit(ctx context.Context, cfg SplitConfig, op kernels.Op, size int, devs []*engine.Device, step *string) []SplitResult {
	res := SplitResult{Case: op.Name, Size: size, Devices: deviceIDs(devs)}
	var out []SplitResult
	p := kernels.Params{Size: size, Seed: cfg.Seed, Portable: cfg.Portable}
	best, bestResident := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	var fastestResident string
	var fastestOnly []float64 // the fractions of the fastest device alone
	for i, d := range devs {
		if ctx.Err() != nil {
			// Interrupted: no further step starts (setting up a device's inputs alone can
			// take seconds at large sizes); the devices timed so far stay in the report.
			res.Err = notRun
			return append(out, res)
		}
		*step = fmt.Sprintf("%s %s %s alone", d.ID(), op.Name, FormatSize(size))
		cfg.Progress.step(d.ID(), fmt.Sprintf("%s %s alone", op.Name, FormatSize(size)))
		sd := SingleDevice{Device: d.ID()}
		only := make([]float64, len(devs))
		only[i] = 1
		var st Stats
		var err error
		if cfg.Placement != PlacementSharded {
			st, _, err = timeSplit(ctx, cfg, op, p, devs, only, kernels.PlaceHost)
		}
		if err == nil {
			sd.Resident, err = timeAlone(ctx, cfg, op, p, d)
		}
		if err != nil {
			sd.Err = err.Error()
		} else {
			sd.Stats = st
			if cfg.Placement != PlacementSharded && st.Median < best {
				best, res.Fastest, fastestOnly = st.Median, d.ID(), only
			}
			if sd.Resident.Median < bestResident {
				bestResident, fastestResident = sd.Resident.Median, d.ID()
			}
		}
		res.Single = append(res.Single, sd)
	}
	if ctx.Err() != nil {
		res.Err = notRun
		return append(out, res)
	}
	*step = fmt.Sprintf("split %s %s across %d devices", op.Name, FormatSize(size), len(devs))
	if cfg.Placement == PlacementSharded {
		if sh, ok := runSharded(ctx, cfg, op, p, devs, step, bestResident, fastestResident, res.Single); ok {
			sh.Single = res.Single // no host case carries them: the devices alone, resident
			return append(out, sh)
		}
		res.Placement, res.Err = PlacementSharded, "no split on sharded data"
		return append(out, res)
	}
	cfg.Progress.step("split", fmt.Sprintf("%s %s across %d devices", op.Name, FormatSize(size), len(devs)))
	// The fastest device alone is timed again, in turn with the split.
	st, si, paired, err := timeSplitPaired(ctx, cfg, op, p, devs, cfg.Fractions, fastestOnly, kernels.PlaceHost)
	if si != nil {
		res.Shape, res.Shares = si.Shape(), si.Shares()
		res.Placement, res.Plan = PlacementHost, kernels.PlanSummary(res.Shares)
		if m, t := si.Model(), st.Median.Seconds(); err == nil && t > 0 {
			res.GFLOPs, res.GBs = m.Flops/t/1e9, m.Bytes/t/1e9
		}
	}
	if err != nil {
		res.Err = err.Error()
	} else {
		res.Verified, res.Stats = true, st
		if paired != nil && paired.Median > 0 {
			res.Paired, best = paired, paired.Median
		}
		if res.Fastest != "" && st.Median > 0 {
			res.Speedup = float64(best) / float64(st.Median)
			res.SpeedupResident = float64(bestResident) / float64(st.Median)
		}
	}
	out = append(out, res)
	if ctx.Err() != nil || cfg.Placement == PlacementHost {
		return out
	}
	if sh, ok := runSharded(ctx, cfg, op, p, devs, step, bestResident, fastestResident, res.Single); ok {
		out = append(out, sh)
	}
	return out
}

// runSharded measures op split over devs on data already on the devices (PlacementSharded)
// and compares it with the fastest device alone with its data resident. It returns false
// when the op's split does not run on sharded data.
func runSharded(ctx context.Context, cfg SplitConfig, op kernels.Op, p kernels.Params, devs []*engine.Device, step *string, bestResident time.Duration, fastest string, single []SingleDevice) (SplitResult, bool) {
	// The devices alone are the host case's (its Single), not repeated here.
	res := SplitResult{Case: op.Name, Size: p.Size, Devices: deviceIDs(devs), Placement: PlacementSharded}
	*step = fmt.Sprintf("split %s %s across %d devices, sharded data", op.Name, FormatSize(p.Size), len(devs))
	cfg.Progress.step("split", fmt.Sprintf("%s %s across %d devices, sharded data", op.Name, FormatSize(p.Size), len(devs)))
	// The fastest device with its data resident is timed again through the split, all of
	// the data scattered onto it, in turn with the split: the best single device through
	// the same placement and the same host-timed path.
	var fastestOnly []float64
	if i := slices.Index(deviceIDs(devs), fastest); i >= 0 {
		fastestOnly = make([]float64, len(devs))
		fastestOnly[i] = 1
	}
	st, si, paired, err := timeSplitPaired(ctx, cfg, op, p, devs, cfg.Fractions, fastestOnly, kernels.PlaceSharded)
	if errors.Is(err, engine.ErrUnsupported) && si == nil {
		return res, false
	}
	if si != nil {
		res.Shape, res.Shares, res.Plan = si.Shape(), si.Shares(), kernels.PlanSummary(si.Shares())
		if m, t := si.Model(), st.Median.Seconds(); err == nil && t > 0 {
			res.GFLOPs, res.GBs = m.Flops/t/1e9, m.Bytes/t/1e9
		}
	}
	if err != nil {
		res.Err = err.Error()
		return res, true
	}
	res.Verified, res.Stats = true, st
	if fastest != "" && st.Median > 0 {
		res.Fastest = fastest
		res.SpeedupResident = float64(bestResident) / float64(st.Median)
		res.Speedup = res.SpeedupResident
		if paired != nil && paired.Median > 0 {
			res.Paired, res.Speedup = paired, float64(paired.Median)/float64(st.Median)
		}
	}
	return res, true
}

// openSplit sets op up across devs with the given fractions (nil: measured) and its data
// placed as place says, and runs and verifies it once. The instance is returned whenever
// it was made (its shares readable; the caller closes it), with the first error.
func openSplit(ctx context.Context, op kernels.Op, p kernels.Params, devs []*engine.Device, fractions []float64, place kernels.Placement) (kernels.SplitInstance, error) {
	si, err := op.Split(ctx, devs, p, kernels.SplitOptions{Fractions: fractions, Placement: place})
	if err != nil {
		return nil, err
	}
	if kernels.PlacementOf(si) != place { // a split that does not know where data lives
		si.Close()
		return nil, fmt.Errorf("bench: %s: no split on %s data: %w", op.Name, place, engine.ErrUnsupported)
	}
	if err := si.Run(ctx); err != nil {
		return si, err
	}
	return si, si.Verify(ctx)
}

// timeSplit sets op up as openSplit does, verifies one run and times Count more by the
// host clock. On sharded data the last timed run is verified too (a gather, after the
// timing). The instance is closed on return; its shares and shape stay readable.
func timeSplit(ctx context.Context, cfg SplitConfig, op kernels.Op, p kernels.Params, devs []*engine.Device, fractions []float64, place kernels.Placement) (Stats, kernels.SplitInstance, error) {
	si, err := openSplit(ctx, op, p, devs, fractions, place)
	if si != nil {
		defer si.Close()
	}
	if err != nil {
		return Stats{}, si, err
	}
	// At least one warm-up after the verified run: the split's second run checks its plan
	// against the fastest device alone (kernels.SplitRun.CheckedRun), and the timed runs
	// should see the plan it kept. The output of the last timed run is verified again,
	// whichever plan that was.
	samples, err := hostRuns(cfg.Count, max(cfg.Warmup, 1), nil, func() error { return si.Run(ctx) })
	if err == nil {
		err = si.Verify(ctx)
	}
	return Summarize(samples), si, err
}

// shortPairs is the fewest runs timeSplitPaired takes of a split and of the device it is
// paired with where the median of the split's first --count runs is under shortRun.
const (
	shortPairs = 25
	shortRun   = time.Millisecond
)

// timeSplitPaired is timeSplit with the split's timed runs taken in turn with those of a
// second split of op, its data placed the same way, whose fractions alone give the whole
// op to one device (nil: none), which is set up and verified beside it; the order
// alternates run by run, at least shortPairs times each where the split's runs are
// short. It returns the second split's timing too, or nil when it was not given or could
// not be set up beside the first (memory), whose timing then stands alone.
func timeSplitPaired(ctx context.Context, cfg SplitConfig, op kernels.Op, p kernels.Params, devs []*engine.Device, fractions, alone []float64, place kernels.Placement) (Stats, kernels.SplitInstance, *Stats, error) {
	var base kernels.SplitInstance
	if alone != nil {
		b, err := openSplit(ctx, op, p, devs, alone, place)
		if err == nil {
			base = b
			defer base.Close()
		} else if b != nil {
			b.Close() // it ran alone before (the devices alone): what fails is room for both
		}
	}
	if base == nil {
		st, si, err := timeSplit(ctx, cfg, op, p, devs, fractions, place)
		return st, si, nil, err
	}
	si, err := openSplit(ctx, op, p, devs, fractions, place)
	if si != nil {
		defer si.Close()
	}
	if err != nil {
		return Stats{}, si, nil, err
	}
	// As timeSplit: at least one warm-up, in which the split checks its plan.
	for range max(cfg.Warmup, 1) {
		if err := si.Run(ctx); err != nil {
			return Stats{}, si, nil, err
		}
		if err := base.Run(ctx); err != nil {
			return Stats{}, si, nil, err
		}
	}
	// Short runs get more of them (shortPairs): a few microseconds of noise are a large
	// share of a run of 100, and more runs cost little.
	var splitRuns, baseRuns []time.Duration
	timed := func(in kernels.SplitInstance, to *[]time.Duration) error {
		t0 := time.Now()
		if err := in.Run(ctx); err != nil {
			return err
		}
		*to = append(*to, time.Since(t0))
		return nil
	}
	runs := cfg.Count
	for i := 0; i < runs; i++ {
		first, second := si, base
		firstTo, secondTo := &splitRuns, &baseRuns
		if i%2 == 1 {
			first, second, firstTo, secondTo = base, si, &baseRuns, &splitRuns
		}
		if err := timed(first, firstTo); err != nil {
			return Stats{}, si, nil, err
		}
		if err := timed(second, secondTo); err != nil {
			return Stats{}, si, nil, err
		}
		if i == cfg.Count-1 && Summarize(splitRuns).Median < shortRun {
			runs = max(runs, shortPairs)
		}
	}
	if err := si.Verify(ctx); err != nil {
		return Stats{}, si, nil, err
	}
	if err := base.Verify(ctx); err != nil {
		return Stats{}, si, nil, err
	}
	paired := Summarize(baseRuns)
	return Summarize(splitRuns), si, &paired, nil
}

// timeAlone sets op up on d alone, verifies it and times Count runs, each enqueued and
// finished, by the host clock.
func timeAlone(ctx context.Context, cfg SplitConfig, op kernels.Op, p kernels.Params, d *engine.Device) (Stats, error) {
	q, err := d.NewQueue()
	if err != nil {
		return Stats{}, err
	}
	defer q.Close()
	in, err := op.Setup(ctx, q, p)
	if err != nil {
		return Stats{}, err
	}
	defer in.Close()
	if err := in.Run(ctx, q); err != nil {
		return Stats{}, err
	}
	if err := in.Verify(ctx, q); err != nil {
		return Stats{}, err
	}
	samples, err := hostRuns(cfg.Count, cfg.Warmup, nil, func() error {
		if err := in.Run(ctx, q); err != nil {
			return err
		}
		return q.Finish(ctx)
	})
	return Summarize(samples), err
}

// hostRuns calls run warmup times, then count times by the host clock; before, when not
// nil, is called ahead of each run outside the time (a barrier between processes).
func hostRuns(count, warmup int, before, run func() error) ([]time.Duration, error) {
	samples := make([]time.Duration, 0, count)
	for i := range warmup + count {
		if before != nil {
			if err := before(); err != nil {
				return nil, err
			}
		}
		t0 := time.Now()
		if err := run(); err != nil {
			return nil, err
		}
		if i >= warmup {
			samples = append(samples, time.Since(t0))
		}
	}
	return samples, nil
}

// Collectives lists the names of the collectives RunCollectives measures.
func Collectives() []string {
	var out []string
	for _, k := range []string{"all-reduce", "all-gather", "reduce-scatter", "broadcast"} {
		for _, t := range []string{"float32", "float64"} {
			out = append(out, "collective/"+k+"/"+t)
		}
	}
	return out
}

// MatchCollectives returns the collectives that patterns select ("collective" or
// "collective/*": all; a prefix; a name; a glob), and the patterns that name none.
func MatchCollectives(patterns []string) (names, rest []string) {
	for _, p := range patterns {
		found := false
		// "collective/*" and "collective/all-reduce/*" select what lies under them, as the
		// suite's patterns do ("gemm/*"): path.Match's * stops at a slash.
		prefix := strings.TrimSuffix(strings.TrimSuffix(p, "*"), "/")
		for _, c := range Collectives() {
			ok, _ := path.Match(p, c)
			if ok || c == p || strings.HasPrefix(c, prefix+"/") {
				found = true
				if !slices.Contains(names, c) {
					names = append(names, c)
				}
			}
		}
		if !found {
			rest = append(rest, p)
		}
	}
	return names, rest
}

// CollectiveConfig selects what RunCollectives measures.
type CollectiveConfig struct {
	Names  []string // from Collectives
	Sizes  []int    // elements of each rank's send buffer (default: 1M with Quick, else 16M and 256M)
	Quick  bool
	Count  int
	Warmup int
	Seed   uint64
	// InPlace runs all-reduce and broadcast with one buffer for send and recv, as
	// torch.distributed calls them and as nccl-tests' in-place column; all-gather and
	// reduce-scatter have no in-place form here and run out of place either way. An
	// in-place all-reduce's timed runs sum the previous run's result, which changes the
	// values, not the work.
	InPlace  bool
	Progress *Progress
}

// RunCollectives measures each collective of cfg at each size across g, whose devices of
// this process are devs: verified once against its reference, then timed by the host
// clock over Count runs, each the collective and the finish of every local queue (after
// a barrier across processes, which the time leaves out).
func RunCollectives(ctx context.Context, cfg CollectiveConfig, g *group.Group) (*Report, error) {
	if cfg.Count <= 0 || cfg.Warmup < 0 || cfg.Count > MaxCount || cfg.Warmup > MaxWarmup {
		return nil, fmt.Errorf("bench: count %d and warmup %d: count 1 to %d, warmup 0 to %d: %w", cfg.Count, cfg.Warmup, MaxCount, MaxWarmup, engine.ErrInvalidArg)
	}
	sizes := cfg.Sizes
	if len(sizes) == 0 {
		sizes = []int{16 << 20, 256 << 20}
		if cfg.Quick {
			sizes = []int{1 << 20}
		}
	}
	rep := newGroupReport(g.Devices(), ConfigInfo{Ops: cfg.Names, Sizes: sizes, Quick: cfg.Quick, Count: cfg.Count, Warmup: cfg.Warmup, Seed: cfg.Seed})
	cfg.Progress.begin(len(cfg.Names) * len(sizes))
	defer cfg.Progress.end()
	var step string // the step running, for the report of an interrupted run
	for _, name := range cfg.Names {
		for _, n := range sizes {
			if ctx.Err() != nil {
				break
			}
			step = fmt.Sprintf("group %s %s on %d ranks", name, FormatSize(n), g.Size())
			cfg.Progress.step("group", fmt.Sprintf("%s %s on %d ranks", name, FormatSize(n), g.Size()))
			var r CollectiveResult
			if strings.HasSuffix(name, "/float64") {
				r = runCollective[float64](ctx, cfg, g, name, n)
			} else {
				r = runCollective[float32](ctx, cfg, g, name, n)
			}
			rep.Collectives = append(rep.Collectives, r)
		}
	}
	return rep, interrupted(ctx, rep, step)
}

// runCollective measures one collective of count elements per rank's send buffer.
func runCollective[T float32 | float64](ctx context.Context, cfg CollectiveConfig, g *group.Group, name string, count int) CollectiveResult {
	kind := strings.Split(name, "/")[1]
	size := g.Size()
	es := engine.SizeOf[T]()
	res := CollectiveResult{Case: name, Count: count, Ranks: size, Devices: deviceIDs(g.Devices()), Library: g.Library().String()}
	ns, nr := count, count
	var factor float64
	switch kind {
	case "all-reduce":
		factor, res.Bytes = 2*float64(size-1)/float64(size), int64(count*es)
	case "all-gather":
		nr = count * size
		factor, res.Bytes = float64(size-1)/float64(size), int64(nr*es)
	case "reduce-scatter":
		ns = count * size
		factor, res.Bytes = float64(size-1)/float64(size), int64(ns*es)
	case "broadcast":
		factor, res.Bytes = 1, int64(count*es)
	}
	res.InPlace = cfg.InPlace && (kind == "all-reduce" || kind == "broadcast")
	devs := g.Devices()
	qs := make([]*engine.Queue, len(devs))
	send := make([]*engine.Buffer[T], len(devs))
	recv := make([]*engine.Buffer[T], len(devs))
	defer func() {
		for i := range devs {
			send[i].Close()
			recv[i].Close()
			qs[i].Close()
		}
	}()
	// Every rank's send buffer is a pure function of (seed, rank, element): each process
	// writes its own ranks' and verifies against any rank's without holding them.
	in := newCollectiveInputs(cfg.Seed, size)
	fail := func(err error) CollectiveResult { res.Err = err.Error(); return res }
	win := make([]T, min(ns, max(collectiveWindow/es, 1)))
	for i, d := range devs {
		var err error
		if qs[i], err = d.NewQueue(); err != nil {
			return fail(err)
		}
		if send[i], err = engine.NewBuffer[T](d, ns); err != nil {
			return fail(err)
		}
		for lo := 0; lo < ns; lo += len(win) {
			w := win[:min(len(win), ns-lo)]
			fillInput(in.key(g.Rank(i)), lo, w)
			if err := send[i].Write(ctx, qs[i], lo, w); err != nil {
				return fail(err)
			}
		}
		if res.InPlace {
			recv[i] = send[i] // closed once: Close is idempotent
			continue
		}
		if recv[i], err = engine.NewBuffer[T](d, nr); err != nil {
			return fail(err)
		}
	}
	run := func() error {
		if err := collectiveCall(ctx, kind, g, qs, send, recv); err != nil {
			return err
		}
		for _, q := range qs {
			if err := q.Finish(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	if err := g.Barrier(ctx); err != nil {
		return fail(err)
	}
	if err := run(); err != nil {
		return fail(err)
	}
	if err := verifyCollective(ctx, kind, g, qs, recv, in, count); err != nil {
		return fail(err)
	}
	res.Verified = true
	// The ranks are lined up before each run, outside its time: the time is the
	// collective and the finish of this process's queues, as torch.distributed's and
	// nccl-tests' timings take it. Where the collectives run on the devices the line-up is
	// a one-word all-reduce and a finish, as torch.distributed's barrier: every rank leaves
	// it within microseconds of the others. The group's own barrier (a message through the
	// rendezvous) lets the first rank out tens of microseconds ahead, which it then spends
	// waiting inside the next collective's time: two Prism processes read 0.74-0.96 of
	// torch.distributed from 8 to 128 MiB so (two H200, 2026-11-30).
	lineUp := func() error { return g.Barrier(ctx) }
	if g.Staged() == "" {
		one := make([]*engine.Buffer[T], len(devs))
		defer func() {
			for _, b := range one {
				b.Close()
			}
		}()
		for i, d := range devs {
			var err error
			if one[i], err = engine.NewBuffer[T](d, 1); err != nil {
				return fail(err)
			}
		}
		lineUp = func() error {
			if err := group.AllReduce(ctx, g, qs, one, one, group.ReduceSum); err != nil {
				return err
			}
			for _, q := range qs {
				if err := q.Finish(ctx); err != nil {
					return err
				}
			}
			return nil
		}
	}
	samples, err := hostRuns(cfg.Count, cfg.Warmup, lineUp, run)
	if err != nil {
		return fail(err)
	}
	res.Stats = Summarize(samples)
	if t := res.Stats.Median.Seconds(); t > 0 {
		res.AlgBW = float64(res.Bytes) / t / 1e9
		res.BusBW = res.AlgBW * factor
	}
	return res
}

// collectiveWindow is the most bytes of one buffer a collective's set-up writes, or its
// verification reads, at a time: the host holds one window, not a rank's whole buffer. A
// variable so that tests can make it small.
var collectiveWindow = 64 << 20

// collectiveChunk is the elements of a window that one goroutine fills or checks at a
// time. A variable so that tests can make it small.
var collectiveChunk = 64 << 10

// collectiveInputs is the send buffer of every global rank of a collective as a pure
// function of the seed, the rank and the element: small integers from -4 to 4, so that
// sums are exact in every order, each drawn by a splitmix64 hash of its element index
// under a key of the seed and rank. Any element of any rank is computed where it is
// needed, without communication and without holding a rank's buffer.
type collectiveInputs struct {
	keys []uint64 // of each global rank
}

// newCollectiveInputs returns the inputs of ranks ranks under seed.
func newCollectiveInputs(seed uint64, ranks int) collectiveInputs {
	in := collectiveInputs{keys: make([]uint64, ranks)}
	for r := range in.keys {
		in.keys[r] = mix64(mix64(seed) + (uint64(r)+1)*0xd1b54a32d192ed03)
	}
	return in
}

// key returns the key of global rank r (for fillInput and addInput).
func (in collectiveInputs) key(r int) uint64 { return in.keys[r] }

// at returns element j of global rank r's send buffer.
func (in collectiveInputs) at(r, j int) int { return inputValue(in.keys[r], j) }

// mix64 is splitmix64's finalizer: a bijection of the 64-bit integers whose every output
// bit depends on every input bit.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// inputValue returns element j of the input of key: -4 to 4, the upper 32 bits of a
// splitmix64 output scaled to 0..8.
func inputValue(key uint64, j int) int {
	h := mix64(key + (uint64(j)+1)*0x9e3779b97f4a7c15)
	return int((h>>32)*9>>32) - 4
}

// fillInput writes elements lo to lo+len(dst)-1 of the input of key into dst, in chunks
// over runtime.GOMAXPROCS(0) goroutines.
func fillInput[T float32 | float64](key uint64, lo int, dst []T) {
	forChunks(len(dst), func() func(a, b int) {
		return func(a, b int) { setInput(key, lo+a, dst[a:b]) }
	})
}

// setInput writes elements lo to lo+len(dst)-1 of the input of key into dst, on the
// calling goroutine.
func setInput[T float32 | float64](key uint64, lo int, dst []T) {
	for i := range dst {
		dst[i] = T(inputValue(key, lo+i))
	}
}

// addInput adds elements lo to lo+len(dst)-1 of the input of key to dst, on the calling
// goroutine.
func addInput[T float32 | float64](key uint64, lo int, dst []T) {
	for i := range dst {
		dst[i] += T(inputValue(key, lo+i))
	}
}

// forChunks splits [0, n) into chunks of collectiveChunk elements and hands them out in
// increasing order to runtime.GOMAXPROCS(0) goroutines (fewer when there are fewer
// chunks); each goroutine calls worker once for the function it runs on its chunks, so
// that it may keep scratch memory of its own. It returns when every chunk is done.
func forChunks(n int, worker func() func(lo, hi int)) {
	chunk := collectiveChunk
	chunks := (n + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	if workers <= 1 {
		if n > 0 {
			f := worker()
			for lo := 0; lo < n; lo += chunk {
				f(lo, min(lo+chunk, n))
			}
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			f := worker()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				f(c*chunk, min((c+1)*chunk, n))
			}
		})
	}
	wg.Wait()
}

// collectiveWant returns the expected recv buffer of global rank rank after the
// collective kind of count elements on in's ranks, as a function that writes elements
// lo to lo+len(dst)-1 into dst: all-reduce, the sum over ranks of their inputs;
// reduce-scatter, that sum from element rank*count; all-gather, rank r's input as
// block r; broadcast, rank 0's input.
func collectiveWant[T float32 | float64](kind string, in collectiveInputs, rank, count int) func(lo int, dst []T) {
	sum := func(lo int, dst []T) {
		setInput(in.keys[0], lo, dst)
		for _, k := range in.keys[1:] {
			addInput(k, lo, dst)
		}
	}
	switch kind {
	case "all-reduce":
		return sum
	case "reduce-scatter":
		return func(lo int, dst []T) { sum(rank*count+lo, dst) }
	case "all-gather":
		return func(lo int, dst []T) {
			for len(dst) > 0 {
				r, k := lo/count, lo%count
				n := min(len(dst), count-k)
				setInput(in.keys[r], k, dst[:n])
				dst, lo = dst[n:], lo+n
			}
		}
	case "broadcast":
		return func(lo int, dst []T) { setInput(in.keys[0], lo, dst) }
	}
	panic("bench: unknown collective " + kind)
}

// collectiveCall makes the collective kind names ("all-reduce", ...) on the group: sums,
// broadcast from rank 0.
func collectiveCall[T float32 | float64](ctx context.Context, kind string, g *group.Group, qs []*engine.Queue, send, recv []*engine.Buffer[T]) error {
	switch kind {
	case "all-reduce":
		return group.AllReduce(ctx, g, qs, send, recv, group.ReduceSum)
	case "all-gather":
		return group.AllGather(ctx, g, qs, send, recv)
	case "reduce-scatter":
		return group.ReduceScatter(ctx, g, qs, send, recv, group.ReduceSum)
	case "broadcast":
		return group.Broadcast(ctx, g, qs, send, recv, 0)
	}
	return fmt.Errorf("bench: unknown collective %q: %w", kind, engine.ErrInvalidArg)
}

// verifyCollective reads every local rank's recv buffer, a window at a time, and compares
// it with the result the inputs give (checkRecv); the inputs are small integers, so sums
// are exact and compared exactly.
func verifyCollective[T float32 | float64](ctx context.Context, kind string, g *group.Group, qs []*engine.Queue, recv []*engine.Buffer[T], in collectiveInputs, count int) error {
	var win []T
	for i, b := range recv {
		n := b.Len()
		if win == nil {
			win = make([]T, min(n, max(collectiveWindow/engine.SizeOf[T](), 1)))
		}
		want := collectiveWant[T](kind, in, g.Rank(i), count)
		for lo := 0; lo < n; lo += len(win) {
			got := win[:min(len(win), n-lo)]
			if err := b.Read(ctx, qs[i], lo, got); err != nil {
				return err
			}
			if err := checkRecv(kind, g.Rank(i), lo, got, want); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRecv compares got, elements lo to lo+len(got)-1 of global rank rank's recv buffer
// after the collective kind, with want (collectiveWant), in chunks over
// runtime.GOMAXPROCS(0) goroutines. It returns an error wrapping kernels.ErrVerify that
// names the lowest element that differs, the same whichever goroutine found it first.
func checkRecv[T float32 | float64](kind string, rank, lo int, got []T, want func(lo int, dst []T)) error {
	var first atomic.Int64 // the lowest index of got found to differ
	first.Store(math.MaxInt64)
	forChunks(len(got), func() func(a, b int) {
		buf := make([]T, min(collectiveChunk, len(got)))
		return func(a, b int) {
			// Chunks are handed out in increasing order: one above a mismatch already
			// found cannot hold the lowest; one below it is always checked to its end.
			if int64(a) > first.Load() {
				return
			}
			w := buf[:b-a]
			want(lo+a, w)
			for i, v := range w {
				if got[a+i] != v {
					j := int64(a + i)
					for {
						f := first.Load()
						if j >= f || first.CompareAndSwap(f, j) {
							return
						}
					}
				}
			}
		}
	})
	j := int(first.Load())
	if j == math.MaxInt64 {
		return nil
	}
	w := make([]T, 1)
	want(lo+j, w)
	return fmt.Errorf("bench: %s, rank %d, element %d: %v, want %v: %w", kind, rank, lo+j, got[j], w[0], kernels.ErrVerify)
}

// checkGroup returns an error wrapping kernels.ErrVerify when a split or collective
// failed verification or did not run.
func (r *Report) checkGroup() error {
	var errs []error
	for _, s := range r.Splits {
		if !s.Verified {
			errs = append(errs, fmt.Errorf("%s %s split: %s", s.Case, FormatSize(s.Size), s.Err))
		}
	}
	for _, c := range r.Collectives {
		if !c.Verified {
			errs = append(errs, fmt.Errorf("%s %s: %s", c.Case, FormatSize(c.Count), c.Err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", kernels.ErrVerify, errors.Join(errs...))
	}
	return nil
}
