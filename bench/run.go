package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Config selects what Run measures.
type Config struct {
	Ops []kernels.Op
	// Patterns are the --ops patterns Ops came from, recorded in the report only.
	Patterns []string
	// Sizes are the sizes every op runs at (elements of its main operand); empty: each op's
	// DefaultSize, or its QuickSize when Quick.
	Sizes []int
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
}

// sizes returns the sizes op runs at.
func (cfg Config) sizes(op kernels.Op) []int {
	switch {
	case len(cfg.Sizes) > 0:
		return cfg.Sizes
	case cfg.Quick:
		return []int{op.QuickSize}
	}
	return []int{op.DefaultSize}
}

// cases counts the op-size pairs of one device.
func (cfg Config) cases() int {
	n := 0
	for _, op := range cfg.Ops {
		n += len(cfg.sizes(op)) * len(cfg.VariantsFor(op))
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
	host, _ := os.Hostname()
	ver, commit := Version()
	rep := &Report{
		Schema: SchemaVersion, Prism: ver, Commit: commit, Date: time.Now().UTC(), Host: host,
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		Config: ConfigInfo{Ops: cfg.Patterns, Sizes: cfg.Sizes, Quick: cfg.Quick, Count: cfg.Count,
			Warmup: cfg.Warmup, Seed: cfg.Seed, Portable: cfg.Portable, Variants: cfg.Variants, Vendor: cfg.Vendor},
	}
	tel := newTelemetrySource(cfg.Telemetry)
	defer tel.close()
	cfg.Progress.begin(len(devs) * (stepsBeforeCases + cfg.cases()))
	defer cfg.Progress.end()
	var step string
	for _, dev := range devs {
		if ctx.Err() != nil {
			break
		}
		rep.Devices = append(rep.Devices, runDevice(ctx, cfg, dev, tel, &step))
	}
	if err := ctx.Err(); err != nil {
		rep.Interrupted, rep.InterruptedAt = true, step
		return rep, err
	}
	return rep, nil
}

// stepsBeforeCases counts the progress steps of a device before its cases: overheads, copy
// ceiling, fp32 peak, fp64 peak.
const stepsBeforeCases = 4

// runDevice measures one device; *step names what runs at each moment, for the report of
// an interrupted run.
func runDevice(ctx context.Context, cfg Config, dev *engine.Device, tel *telemetrySource, step *string) (dr DeviceReport) {
	dr = DeviceReport{Device: dev.Info(), Backend: dev.Backend(), Results: []Result{}}
	id := dev.ID()
	stopTel := tel.start(ctx, dr.Device, cfg.TelemetryInterval)
	defer func() { dr.Telemetry = stopTel() }()
	q, err := dev.NewQueue()
	if err != nil {
		dr.Err = err.Error()
		return dr
	}
	defer q.Close()
	// Overheads first: the first build of the stream family in this process must be the
	// first one the backend sees (the copy ceiling builds it too).
	// A measurement that fails is reported missing (its Absent field says why) and the cases
	// still run: one failure never drops a device.
	defer func() { dr.Timing = timingOf(dev) }()
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
	if ctx.Err() != nil {
		return dr
	}
	for _, op := range cfg.Ops {
		for _, size := range cfg.sizes(op) {
			for _, variant := range cfg.VariantsFor(op) {
				name := op.Name + " " + FormatSize(size)
				if variant != "" {
					name += " " + variant
				}
				at(step, id, name, cfg)
				res := RunCase(ctx, cfg, q, op, size, variant)
				if res.OK() {
					res.roofline(dr.Ceilings, dr.Device.CacheBytes)
				}
				if cfg.Vendor && !res.VendorLibrary && res.Skipped == "" && ctx.Err() == nil {
					res.Vendor, res.NoVendor = runVendor(ctx, cfg, q, op, size, dr.Ceilings, dr.Device.CacheBytes)
				}
				if ctx.Err() != nil {
					return dr // the case that was running is named by the report's interrupted_at
				}
				dr.Results = append(dr.Results, res)
			}
		}
	}
	return dr
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

// measureCopy is copyCeiling; tests replace it with one that fails.
var measureCopy = copyCeiling

// Timing methods of DeviceReport.Timing.
const (
	TimingEvents = "device events"
	TimingHost   = "host clock"
)

// timingOf says how Queue.Timed measured on dev.
func timingOf(dev *engine.Device) string {
	if dev.EventTiming() {
		return TimingEvents
	}
	return TimingHost
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
		res := RunCase(ctx, cfg, q, op, size, v.Name)
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
	res := Result{Case: op.Name, Family: op.Family, Type: op.Type, Size: size, Requested: variant}
	p := kernels.Params{Size: size, Seed: cfg.Seed, Rotate: true, Portable: cfg.Portable, Variant: variant, Tunables: cfg.Tunables}
	v, err := op.Pick(q.Device(), p)
	if err != nil {
		res.Variant = variant
		if errors.Is(err, engine.ErrUnsupported) || errors.Is(err, engine.ErrNotFound) {
			res.Skipped = err.Error()
		} else {
			res.Err = "setup: " + err.Error()
		}
		return res
	}
	res.Variant, res.VendorLibrary = v.Name, v.Vendor
	p.Variant = v.Name
	if err := checkFootprint(q.Device(), op, size); err != nil {
		res.Err = err.Error()
		return res
	}
	if err := ctx.Err(); err != nil {
		res.Err = err.Error()
		return res
	}
	in, err := v.Setup(q, p)
	if errors.Is(err, engine.ErrUnsupported) {
		res.Skipped = err.Error()
		return res
	}
	if err != nil {
		res.Err = "setup: " + err.Error()
		return res
	}
	defer in.Close()
	res.Shape = in.Shape()
	if lr, ok := in.(kernels.LibraryReporter); ok {
		res.Library = lr.Library()
	}
	if tr, ok := in.(kernels.TunablesReporter); ok {
		res.Tunables = tr.Tunables()
	}
	if err := in.Run(q); err != nil {
		res.Err = err.Error()
		return res
	}
	if err := ctx.Err(); err != nil {
		res.Err = err.Error()
		return res
	}
	if err := in.Verify(q); err != nil {
		res.Err, res.Mismatch = err.Error(), errors.Is(err, kernels.ErrVerify)
		return res
	}
	res.Verified = true
	samples, err := timeRuns(ctx, cfg, q, in.Run)
	if err != nil {
		res.Err = err.Error()
		return res
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
	return res
}

// timeRuns runs f Warmup times untimed, then Count times, each timed by device events.
func timeRuns(ctx context.Context, cfg Config, q *engine.Queue, f func(*engine.Queue) error) ([]time.Duration, error) {
	// Warm-up runs are enqueued in batches, each waited for: one run first, then twice as
	// many while a batch takes under warmupBatchTime, up to warmupBatch. The queue stays
	// short, and a cancelled ctx stops the loop within a batch: a fraction of a second
	// even where one run takes long (a copy of hundreds of MiB on a CPU device).
	for i, batch := 0, 1; i < cfg.Warmup; {
		start := time.Now()
		nb := min(batch, cfg.Warmup-i)
		for range nb {
			if err := f(q); err != nil {
				return nil, err
			}
		}
		i += nb
		if err := q.Finish(ctx); err != nil {
			return nil, err
		}
		if time.Since(start) < warmupBatchTime && batch < warmupBatch {
			batch *= 2
		}
	}
	if err := q.Finish(ctx); err != nil {
		return nil, err
	}
	samples := make([]time.Duration, 0, min(cfg.Count, 1<<12))
	for range cfg.Count {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := q.Timed(ctx, func() error { return f(q) })
		if err != nil {
			return nil, err
		}
		samples = append(samples, d)
	}
	return samples, nil
}
