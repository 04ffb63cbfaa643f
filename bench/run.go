package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Config selects what Run measures.
type Config struct {
	Ops []kernels.Op
	// Remembered are the sizes an earlier run on the same devices chose for its fitted cases
	// (op name -> size; RememberedSizes): a fitted case starts there where that is smaller
	// than its starting size, so that runs of one machine line up for compare and history.
	// Ignored where Sizes are given.
	Remembered map[string]int
	// Patterns are the --ops patterns Ops came from, recorded in the report; none means the
	// whole suite (which --quick gives fewer vendor baselines on a CPU: vendorLeftOut).
	Patterns []string
	// Sizes are the sizes every op runs at (elements of its main operand); empty: each op's
	// DefaultSize, or its QuickSize when Quick.
	Sizes []int
	// Shapes, instead of Sizes, are the shapes every op runs at (kernels.Params.Shape),
	// spelled as ParseShapes returns them ("4096x1024x512"): every op must take a shape
	// (TakesShape). A square is run as the case of its size (sweep.go).
	Shapes []string
	// Quick selects each op's QuickSize (when Sizes is empty) and smaller ceiling
	// measurements, for a pass of the whole suite in seconds on a CPU.
	Quick    bool
	Count    int // timed runs per case (median, min, max over them)
	Warmup   int // untimed runs before timing
	Seed     uint64
	Portable bool // kernels.Params.Portable: the portable OpenCL C kernels everywhere
	// Variants, when set, runs every case once per variant named (kernels.Params.Variant),
	// "all" standing for every variant of the op, vendor baselines included: the variants
	// of one op side by side on one device. An op without a named variant gets a skipped
	// result that says which it has. Empty: the variant kernels.Op.Pick chooses.
	Variants []string
	// Tunables forces the tunables of the variant run (kernels.Params.Tunables): `prism
	// tune` measures each candidate through RunCase with it. Empty: the variant's own.
	Tunables string
	// Vendor runs, beside each case, the vendor library's routine for the same op on the
	// same device (cuBLAS, cuFFT, CLBlast, clFFT: the op's vendor variants), recorded in
	// Result.Vendor; a case with no vendor equivalent says so in Result.NoVendor.
	Vendor bool
	// Progress, when non-nil, shows which step runs (stderr in the CLI).
	Progress *Progress
	// Telemetry opens the sampler of NVIDIA GPUs (NVML in the CLI); Run calls it once, when
	// the first NVIDIA device with a PCI bus ID starts, samples that card every
	// TelemetryInterval (default 200 ms) while the device runs, and closes the sampler at the
	// end. nil: no telemetry.
	Telemetry         func() (Sampler, error)
	TelemetryInterval time.Duration

	// budget and shrinkable are RunCase's within a fitted run (fitCase); beforeTiming,
	// when set, is called before a case's first timed run (it waits for the builds ahead,
	// see ahead.go).
	budget       Budget
	shrinkable   bool
	beforeTiming func()
	// shape is the shape of the case that runs (Config.at), empty for a size.
	shape string
}

// sizes returns the sizes op runs at on a device of kind (before a budget fits them).
func (cfg Config) sizes(op kernels.Op, kind engine.Kind) []int {
	if len(cfg.Sizes) > 0 {
		return cfg.Sizes
	}
	return []int{StartSize(op, kind, cfg.Quick)}
}

// cases counts the op-size pairs of one device.
func (cfg Config) cases() int {
	n := 0
	for _, op := range cfg.Ops {
		n += max(1, len(cfg.Sizes)+len(cfg.Shapes)) * len(cfg.VariantsFor(op))
	}
	return n
}

// VariantsFor returns the variant names op runs with: "" (Pick chooses) when cfg.Variants is
// empty, else the names listed, "all" expanded to op's variants in priority order.
func (cfg Config) VariantsFor(op kernels.Op) []string {
	if len(cfg.Variants) == 0 {
		return []string{""}
	}
	var out []string
	for _, v := range cfg.Variants {
		if strings.EqualFold(v, "all") {
			out = append(out, op.VariantNames()...)
		} else {
			out = append(out, v)
		}
	}
	return out
}

// Run measures every case on every device, one device after the other: for each device
// the fixed overheads, the copy ceiling and the FMA peaks, then every op at every size,
// each verified against its reference before it is timed.
func Run(ctx context.Context, cfg Config, devs []*engine.Device) (*Report, error) {
	if cfg.Count <= 0 || cfg.Warmup < 0 {
		return nil, fmt.Errorf("bench: count %d must be positive and warmup %d not negative: %w", cfg.Count, cfg.Warmup, engine.ErrInvalidArg)
	}
	if cfg.Count > MaxCount || cfg.Warmup > MaxWarmup {
		return nil, fmt.Errorf("bench: count %d and warmup %d: at most %d and %d: %w", cfg.Count, cfg.Warmup, MaxCount, MaxWarmup, engine.ErrInvalidArg)
	}
	for _, s := range cfg.Sizes {
		if s < 1 || s > MaxSize {
			return nil, fmt.Errorf("bench: size %d must be 1 to %s: %w", s, FormatSize(MaxSize), engine.ErrInvalidArg)
		}
	}
	if err := cfg.checkShapesConfig(); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	ver, commit := Version()
	rep := &Report{
		Schema: SchemaVersion, Prism: ver, Commit: commit, Date: time.Now().UTC(), Host: host,
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, HostCPU: HostCPU(), Env: ResultEnv(),
		Config: ConfigInfo{Ops: cfg.Patterns, Sizes: cfg.Sizes, Shapes: cfg.Shapes, Quick: cfg.Quick, Count: cfg.Count,
			Warmup: cfg.Warmup, Seed: cfg.Seed, Portable: cfg.Portable, Variants: cfg.Variants, Vendor: cfg.Vendor},
	}
	tel := newTelemetrySource(cfg.Telemetry)
	defer tel.close()
	total := 0
	for _, dev := range devs {
		total += stepsBefore(dev.Backend(), dev.Info()) + cfg.cases()
	}
	cfg.Progress.begin(total)
	defer cfg.Progress.finish(rep)
	var step string
	runs := make([]*deviceRun, 0, len(devs))
	defer func() {
		for _, r := range runs {
			r.close()
		}
	}()
	fitting := false
	for _, dev := range devs {
		fitting = fitting || cfg.BudgetFor(dev.Info().Kind).On()
	}
	// Each device's ceilings, then its cases, one device after the other. Where a budget
	// fits the cases to the devices, every device's ceilings come first, then each case on
	// every device in turn (runFitted).
	for _, dev := range devs {
		if ctx.Err() != nil {
			break
		}
		r := startDevice(ctx, cfg, dev, tel, &step)
		runs = append(runs, r)
		if !fitting {
			r.runCases(ctx, cfg, &step)
		}
	}
	if fitting {
		runFitted(ctx, cfg, runs, &step)
	}
	for _, r := range runs {
		rep.Devices = append(rep.Devices, r.close())
	}
	runs = nil
	if err := ctx.Err(); err != nil {
		rep.Interrupted, rep.InterruptedAt = true, step
		return rep, err
	}
	return rep, nil
}

// stepsBeforeCases counts the progress steps every device takes before its cases:
// overheads, copy ceiling, fp32 peak, fp64 peak.
const stepsBeforeCases = 4

// stepsBefore returns the progress steps of a device of backend and info before its cases:
// stepsBeforeCases and the tensor peaks it measures (tensorPlan; five on an H100 or H200).
func stepsBefore(backend string, info engine.DeviceInfo) int {
	measure, _, _ := tensorPlan(backend, info)
	return stepsBeforeCases + len(measure)
}

// deviceRun is one device's part of a Run: its queue, its telemetry and its report.
type deviceRun struct {
	dev     *engine.Device
	q       *engine.Queue
	dr      DeviceReport
	stopTel func() Telemetry
	closed  bool
}

// startDevice opens a queue on dev and measures its fixed overheads and ceilings; *step
// names what runs at each moment, for the report of an interrupted run. A measurement that
// fails is reported missing (its Absent field says why) and the cases still run: one
// failure never drops a device.
func startDevice(ctx context.Context, cfg Config, dev *engine.Device, tel *telemetrySource, step *string) *deviceRun {
	r := &deviceRun{dev: dev, dr: DeviceReport{Device: dev.Info(), Backend: dev.Backend(), Results: []Result{}}}
	dr := &r.dr
	id := dev.ID()
	r.stopTel = tel.start(ctx, dr.Device, cfg.TelemetryInterval)
	q, err := dev.NewQueue()
	if err != nil {
		dr.Err = err.Error()
		return r
	}
	r.q = q
	// Overheads first: the first build of the stream family in this process must be the
	// first one the backend sees (the copy ceiling builds it too).
	at(step, id, "build time and launch latency", cfg)
	if dr.Overheads, err = measureOverheads(ctx, q); err != nil {
		dr.Overheads = Overheads{Absent: err.Error()}
	}
	at(step, id, "copy ceiling", cfg)
	if dr.Ceilings.CopyGBs, dr.Ceilings.CopyHow, dr.Ceilings.CopyBytes, err = measureCopy(ctx, cfg, q); err != nil {
		dr.Ceilings.CopyGBs, dr.Ceilings.CopyHow, dr.Ceilings.CopyBytes = 0, "", 0
		dr.Ceilings.CopyAbsent = err.Error()
	}
	dr.Ceilings.noteInvalid("copy", &dr.Ceilings.CopyHow)
	at(step, id, "fp32 peak", cfg)
	pk, err := measurePeak[float32](ctx, cfg, q)
	if err != nil {
		dr.Ceilings.FP32Absent = err.Error()
	} else {
		dr.Ceilings.FP32GFLOPs, dr.Ceilings.PeakHow = pk.GFLOPs, pk.How
	}
	dr.Ceilings.noteInvalid("fp32 peak", &dr.Ceilings.PeakHow)
	at(step, id, "fp64 peak", cfg)
	pk, err = measurePeak[float64](ctx, cfg, q)
	if err != nil {
		dr.Ceilings.FP64Absent = err.Error()
	} else {
		dr.Ceilings.FP64GFLOPs = pk.GFLOPs
		dr.Ceilings.noteInvalid("fp64 peak", &pk.How)
	}
	// The tensor-core peaks, where the device has tensor cores the suite's kernels use
	// ("tf32 tensor peak", "float16 tensor peak", ...; tensorPlan).
	measureTensorPeaks(ctx, cfg, q, &dr.Ceilings, func(what string) { at(step, id, what, cfg) })
	return r
}

// runCases runs every case on the device, each verified against its reference before it
// is timed.
func (r *deviceRun) runCases(ctx context.Context, cfg Config, step *string) {
	kind := r.dev.Info().Kind
	for _, op := range cfg.Ops {
		for _, pt := range cfg.points(op, kind) {
			for _, variant := range cfg.VariantsFor(op) {
				if r.q == nil || ctx.Err() != nil {
					return
				}
				res := r.runCase(ctx, cfg.at(pt), step, op, pt.size, variant, nil)
				if ctx.Err() != nil {
					return // the case that was running is named by the report's interrupted_at
				}
				r.dr.Results = append(r.dr.Results, res)
			}
		}
	}
}

// runFitted runs every case on every device, case after case, each fitted to its device's
// budget: a case whose size a device had to reduce runs again at that size on the devices
// that ran it larger, so that the devices' figures of a case stay comparable, side by side.
func runFitted(ctx context.Context, cfg Config, runs []*deviceRun, step *string) {
	fit := newFitted()
	fit.earlier = cfg.Remembered
	for _, r := range runs {
		if b := cfg.BudgetFor(r.dev.Info().Kind); b.On() && r.q != nil {
			r.dr.Budget = &b
		}
	}
	ahead := newBuildAhead(cfg, runs, fit)
	defer ahead.close()
	cfg.beforeTiming = ahead.wait
	for k, op := range cfg.Ops {
		// The devices that had to reduce the family's sizes go first: the others then start
		// at the size they chose, with nothing to run again.
		order := make([]int, len(runs))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Compare(fit.quartered(runs[b].dev.ID(), op), fit.quartered(runs[a].dev.ID(), op))
		})
		for _, variant := range cfg.VariantsFor(op) {
			results := make([]*Result, len(runs))
			for _, i := range order {
				r := runs[i]
				if r.q == nil || ctx.Err() != nil {
					continue
				}
				if k+1 < len(cfg.Ops) {
					ahead.start(ctx, i, cfg.Ops[k+1])
				}
				size := cfg.sizes(op, r.dev.Info().Kind)[0]
				res := r.runCase(ctx, cfg, step, op, size, variant, fit)
				if ctx.Err() != nil {
					return
				}
				results[i] = &res
			}
			m := fit.smallest(op)
			for i, r := range runs {
				res := results[i]
				if res == nil {
					continue
				}
				if res.OK() && res.Size > m && r.dr.Budget != nil {
					size := cfg.sizes(op, r.dev.Info().Kind)[0]
					again := r.runCase(ctx, cfg, nil, op, size, variant, fit)
					if ctx.Err() != nil {
						return
					}
					res = &again
				}
				r.dr.Results = append(r.dr.Results, *res)
			}
		}
	}
}

// runCase runs one case on the device (fitted to its budget through fit, when not nil),
// with its roofline and, with cfg.Vendor, the vendor library's routine at the same size.
// step, when not nil, announces it.
func (r *deviceRun) runCase(ctx context.Context, cfg Config, step *string, op kernels.Op, size int, variant string, fit *fitted) Result {
	dr := &r.dr
	if step != nil {
		name := op.Name + " " + SizeText(size, cfg.shape)
		if variant != "" {
			name += " " + variant
		}
		at(step, r.dev.ID(), name, cfg)
	}
	if why := cfg.caseLeftOut(r.dev.Info().Kind, op); why != "" {
		return Result{Case: op.Name, Family: op.Family, Type: op.Type, Size: size, Dims: cfg.shape, Requested: variant, Skipped: why}
	}
	var res Result
	budget := Budget{}
	if fit != nil && dr.Budget != nil {
		budget = *dr.Budget
		res = fitCase(ctx, cfg, r.q, op, size, variant, budget, fit)
	} else {
		res = RunCase(ctx, cfg, r.q, op, size, variant)
	}
	timing := timingOf(r.q)
	if res.OK() {
		res.roofline(dr.Ceilings, dr.Device.CacheBytes)
		res.judge(dr.Ceilings, dr.Overheads, dr.Device.CacheBytes, timing)
	}
	if why := cfg.vendorLeftOut(r.dev.Info().Kind, op); why != "" && cfg.Vendor && !res.VendorLibrary && res.Skipped == "" {
		res.NoVendor = why
	} else if cfg.Vendor && !res.VendorLibrary && res.Skipped == "" && ctx.Err() == nil {
		// The vendor's routine at the size the case ran at, within the same budget.
		vcfg := cfg
		vcfg.Warmup, vcfg.Count = budget.counts(cfg, res.Stats.Median)
		res.Vendor, res.NoVendor = runVendor(ctx, vcfg, r.q, op, res.Size, dr.Ceilings, dr.Device.CacheBytes)
		if res.Vendor != nil {
			res.Vendor.judge(dr.Ceilings, dr.Overheads, dr.Device.CacheBytes, timing)
		}
	}
	return res
}

// close releases the device's queue, stops its telemetry and returns its report; later
// calls return the same report.
func (r *deviceRun) close() DeviceReport {
	if !r.closed {
		r.closed = true
		if r.q != nil {
			r.dr.Timing = timingOf(r.q)
			r.q.Close()
		}
		r.dr.Telemetry = r.stopTel()
	}
	return r.dr
}

// at records the step that starts (the device's ID and what it measures) for the report
// of an interrupted run, and shows it as progress.
func at(step *string, id, what string, cfg Config) {
	*step = id + " " + what
	cfg.Progress.step(id, what)
}

// MaxCount and MaxWarmup bound the timed and warm-up runs of a case: a million timed runs
// is far beyond what a median needs, and the samples are kept.
const (
	MaxCount  = 1 << 20
	MaxWarmup = 1 << 30
)

// warmupBatch is the most warm-up runs timeRuns enqueues before it waits for them, and
// warmupBatchTime the time under which a batch may double.
const (
	warmupBatch     = 16
	warmupBatchTime = 20 * time.Millisecond
)

// warmupFloor is the least time a case warms up for where no budget limits it: --warmup
// runs, then more until this long has passed. A few runs leave a small case's first timed
// runs reading input sets (kernels.Params.Rotate) that no run has read before, and the
// vendor's routine, timed after Prism's runs, does not start as cold: on an H200
// (2026-12-01) 512^3 float16 GEMMs took 8.4-9.4 us in their first five timed runs after
// two warm-ups and 7.5 us after them, cuBLASLt's 6.5 and 6.2-6.3, so that a median of
// five read 0.68 of the vendor where the steady runs read 0.82.
const warmupFloor = 10 * time.Millisecond

// measureCopy is copyCeiling; tests replace it with one that fails.
var measureCopy = copyCeiling

// Timing methods of DeviceReport.Timing.
const (
	TimingEvents = "device events"
	// TimingHeld is TimingEvents with the queue held until each run was enqueued
	// (engine.Queue.Timed, on the CUDA backend): the host's enqueueing is not timed.
	TimingHeld = "device events, queue held"
	TimingHost = "host clock"
)

// timingOf says how Queue.Timed measured on q's device, as its last call did.
func timingOf(q *engine.Queue) string {
	switch {
	case !q.Device().EventTiming():
		return TimingHost
	case q.TimingHeld():
		return TimingHeld
	}
	return TimingEvents
}

// runVendor runs the first vendor variant of op that fits q's device, or says why there
// is none.
func runVendor(ctx context.Context, cfg Config, q *engine.Queue, op kernels.Op, size int, c Ceilings, cacheBytes int64) (*Result, string) {
	dev := q.Device()
	var names []string
	for _, v := range op.Variants {
		if !v.Vendor {
			continue
		}
		names = append(names, v.Name)
		if v.Fits(dev) != nil {
			continue
		}
		vc := cfg
		vc.Tunables = "" // --tunables sets Prism's variant, not the vendor's routine
		res := RunCase(ctx, vc, q, op, size, v.Name)
		if res.OK() {
			res.roofline(c, cacheBytes)
		}
		return &res, ""
	}
	if len(names) == 0 {
		return nil, "no vendor library routine computes " + op.Name
	}
	return nil, fmt.Sprintf("no vendor library for the %s backend (%s has %s)", dev.Backend(), op.Name, strings.Join(names, ", "))
}

// RunCase sets op up at size on q's device with the variant named (empty: the one
// kernels.Op.Pick chooses, the portable one when cfg.Portable), verifies one run against
// the reference, then times cfg.Count runs after cfg.Warmup (cfg's Ops, Sizes, Variants and
// Progress are not used). A failure is recorded in the Result, not returned.
func RunCase(ctx context.Context, cfg Config, q *engine.Queue, op kernels.Op, size int, variant string) Result {
	res, _ := runCase(ctx, cfg, q, op, size, variant)
	return res
}

// runCase is RunCase within cfg.budget: after the verification it times one run, and when
// that run takes longer than the budget allows and cfg.shrinkable, it stops there and
// returns the run's time (the caller sets the case up again smaller); otherwise the
// budget sets the warm-up and timed runs, and the time returned is 0.
func runCase(ctx context.Context, cfg Config, q *engine.Queue, op kernels.Op, size int, variant string) (Result, time.Duration) {
	res := Result{Case: op.Name, Family: op.Family, Type: op.Type, Size: size, Dims: cfg.shape, Requested: variant}
	p := kernels.Params{Size: size, Shape: cfg.shape, Seed: cfg.Seed, Rotate: true, Portable: cfg.Portable, Variant: variant, Tunables: cfg.Tunables}
	v, err := op.Pick(q.Device(), p)
	if err != nil {
		res.Variant = variant
		if errors.Is(err, engine.ErrUnsupported) || errors.Is(err, engine.ErrNotFound) {
			res.Skipped = err.Error()
		} else {
			res.Err = "setup: " + err.Error()
		}
		return res, 0
	}
	res.Variant, res.VendorLibrary = v.Name, v.Vendor
	p.Variant = v.Name
	if err := cfg.checkCaseFootprint(q.Device(), op, size); err != nil {
		res.Err = err.Error()
		return res, 0
	}
	if err := ctx.Err(); err != nil {
		res.Err = err.Error()
		return res, 0
	}
	in, err := v.Setup(ctx, q, p)
	if errors.Is(err, engine.ErrUnsupported) {
		res.Skipped = err.Error()
		return res, 0
	}
	if err != nil {
		res.Err = "setup: " + err.Error()
		return res, 0
	}
	defer in.Close()
	res.Shape = in.Shape()
	if lr, ok := in.(kernels.LibraryReporter); ok {
		res.Library = lr.Library()
	}
	if tr, ok := in.(kernels.TunablesReporter); ok {
		res.Tunables = tr.Tunables()
	}
	if err := in.Run(ctx, q); err != nil {
		res.Err = err.Error()
		return res, 0
	}
	if err := ctx.Err(); err != nil {
		res.Err = err.Error()
		return res, 0
	}
	if err := in.Verify(ctx, q); err != nil {
		res.Err, res.Mismatch = err.Error(), errors.Is(err, kernels.ErrVerify)
		return res, 0
	}
	res.Verified = true
	var one time.Duration
	if cfg.beforeTiming != nil {
		cfg.beforeTiming()
	}
	if cfg.budget.On() {
		// One run to learn the case's pace on this device (it also warms it up).
		if one, err = q.Timed(ctx, func() error { return in.Run(ctx, q) }); err != nil {
			res.Err = err.Error()
			return res, 0
		}
		if one > cfg.budget.MaxRun && cfg.shrinkable {
			res.Size = size
			return res, one
		}
	}
	cfg.Warmup, cfg.Count = cfg.budget.counts(cfg, one)
	samples, warm, err := timeRuns(ctx, cfg, q, in.Run)
	if err != nil {
		res.Err = err.Error()
		return res, 0
	}
	res.Warmup = warm
	if one > 0 {
		res.Warmup++
	}
	// The launches of the last timed run. Occupancy is a note on the case, not part of
	// its measurement: a backend that fails to report it leaves it out.
	if len(samples) > 0 {
		res.Launches, _ = LaunchesOf(q.TimedLaunches())
		if q.TimedByHost() {
			res.Timing = TimingHost
		}
	}
	m := in.Model()
	res.measured(samples, m.Flops, m.Bytes)
	res.Link = m.Link
	if fr, ok := in.(kernels.FigureReporter); ok && res.OK() {
		res.Figures = finiteFigures(fr.Figures(res.Stats.Median))
	}
	if fm, ok := in.(kernels.FigureMeaning); ok {
		res.FiguresNA = fm.Inapplicable()
	}
	return res, 0
}

// timeRuns runs f Warmup times untimed, then Count times, each timed by device events;
// f is given ctx and q. Where no budget limits the case (a GPU's full runs) and Warmup is
// positive, the warm-up goes on until warmupFloor has passed (warmupFloor). It returns the
// timed runs and how many untimed runs came before them.
func timeRuns(ctx context.Context, cfg Config, q *engine.Queue, f func(context.Context, *engine.Queue) error) ([]time.Duration, int, error) {
	floor := time.Duration(0)
	if cfg.Warmup > 0 && !cfg.budget.On() {
		floor = warmupFloor
	}
	// Warm-up runs are enqueued in batches, each waited for: one run first, then twice as
	// many while a batch takes under warmupBatchTime, up to warmupBatch. The queue stays
	// short, and a cancelled ctx stops the loop within a batch: a fraction of a second
	// even where one run takes long (a copy of hundreds of MiB on a CPU device).
	begin := time.Now()
	warm := 0
	for batch := 1; warm < cfg.Warmup || time.Since(begin) < floor; {
		if err := ctx.Err(); err != nil {
			return nil, warm, err
		}
		start := time.Now()
		nb := batch
		if warm < cfg.Warmup {
			nb = min(batch, cfg.Warmup-warm)
		}
		for range nb {
			if err := f(ctx, q); err != nil {
				return nil, warm, err
			}
		}
		warm += nb
		if err := q.Finish(ctx); err != nil {
			return nil, warm, err
		}
		if time.Since(start) < warmupBatchTime && batch < warmupBatch {
			batch *= 2
		}
	}
	if err := q.Finish(ctx); err != nil {
		return nil, warm, err
	}
	samples := make([]time.Duration, 0, min(cfg.Count, 1<<12))
	for range cfg.Count {
		if err := ctx.Err(); err != nil {
			return nil, warm, err
		}
		d, err := q.Timed(ctx, func() error { return f(ctx, q) })
		if err != nil {
			return nil, warm, err
		}
		samples = append(samples, d)
	}
	return samples, warm, nil
}
