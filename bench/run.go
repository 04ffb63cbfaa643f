package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Config selects what Run measures.
type Config struct {
	Ops    []kernels.Op
	Size   int // elements of each op's main operand; 0: each op's DefaultSize
	Count  int // timed runs per case (median, min, max over them)
	Warmup int // untimed runs before timing
	Seed   uint64
	// Progress, when non-nil, receives one line per step (stderr in the CLI).
	Progress io.Writer
}

// Report is the result of one Run: metadata, then one entry per device.
type Report struct {
	Prism     string         `json:"prism_version"`
	Commit    string         `json:"commit,omitempty"`
	Date      time.Time      `json:"date"`
	Host      string         `json:"host"`
	GoVersion string         `json:"go_version"`
	Size      int            `json:"size"`
	Count     int            `json:"count"`
	Devices   []DeviceReport `json:"devices"`
}

// DeviceReport holds the ceilings and results of one device.
type DeviceReport struct {
	Device  engine.DeviceInfo `json:"device"`
	Backend string            `json:"backend"`
	// CopyGBs is the device-to-device copy bandwidth measured in this run, counting bytes
	// read plus bytes written: the ceiling for memory-bound cases. It is the better of the
	// API's buffer copy and the suite's copy kernel; CopyHow says which.
	CopyGBs float64 `json:"copy_gbs"`
	CopyHow string  `json:"copy_how"`
	// Overheads measured before the cases: see measureOverheads.
	Overheads Overheads `json:"overheads"`
	Results   []Result  `json:"results"`
	Err       string    `json:"error,omitempty"`
}

// Result is one case on one device.
type Result struct {
	Case     string  `json:"case"`
	N        int     `json:"n"`     // the size asked for (elements of the main operand)
	Shape    string  `json:"shape"` // the shape set up, e.g. "M=N=K=1024"
	Stats    Stats   `json:"stats"`
	GBs      float64 `json:"gbs"`
	GFLOPs   float64 `json:"gflops"`
	Fraction float64 `json:"fraction_of_copy"` // GBs / CopyGBs
	Verified bool    `json:"verified"`
	Mismatch bool    `json:"mismatch,omitempty"` // the result differed from the reference
	Skipped  string  `json:"skipped,omitempty"`
	Err      string  `json:"error,omitempty"`
}

// ErrVerify is wrapped by every verification failure (it is kernels.ErrVerify).
var ErrVerify = kernels.ErrVerify

// Check returns an error wrapping ErrVerify if any result differed from its reference, or
// another error if any device or case failed to run; nil when everything passed.
func (r *Report) Check() error {
	failed, mismatched := 0, 0
	for _, d := range r.Devices {
		if d.Err != "" {
			failed++
		}
		for _, res := range d.Results {
			if res.Mismatch {
				mismatched++
			} else if res.Err != "" {
				failed++
			}
		}
	}
	switch {
	case mismatched > 0:
		return fmt.Errorf("bench: %d results differ from the reference, %d other failures: %w", mismatched, failed, ErrVerify)
	case failed > 0:
		return fmt.Errorf("bench: %d devices or cases failed to run; see the report", failed)
	}
	return nil
}

// Version returns the module version and VCS revision of the running binary.
func Version() (version, commit string) {
	version, commit = "devel", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				commit = s.Value
			}
			if s.Key == "vcs.modified" && s.Value == "true" {
				commit += "-dirty"
			}
		}
	}
	return version, commit
}

// Run measures every case on every device, one device after the other.
func Run(ctx context.Context, cfg Config, devs []*engine.Device) (*Report, error) {
	if cfg.Size < 0 || cfg.Count <= 0 || cfg.Warmup < 0 {
		return nil, fmt.Errorf("bench: size %d, count %d and warmup %d must be positive: %w", cfg.Size, cfg.Count, cfg.Warmup, engine.ErrInvalidArg)
	}
	host, _ := os.Hostname()
	ver, commit := Version()
	rep := &Report{Prism: ver, Commit: commit, Date: time.Now().UTC(), Host: host, GoVersion: runtime.Version(), Size: cfg.Size, Count: cfg.Count}
	for _, dev := range devs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rep.Devices = append(rep.Devices, runDevice(ctx, cfg, dev))
	}
	return rep, nil
}

func (cfg Config) progress(format string, args ...any) {
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, format+"\n", args...)
	}
}

func runDevice(ctx context.Context, cfg Config, dev *engine.Device) DeviceReport {
	dr := DeviceReport{Device: dev.Info(), Backend: dev.Backend()}
	q, err := dev.NewQueue()
	if err != nil {
		dr.Err = err.Error()
		return dr
	}
	defer q.Close()
	// Overheads first: the first build of the stream family in this process must be the
	// first one the backend sees (the copy ceiling builds it too).
	cfg.progress("%s: measuring build time and launch latency", dev.ID())
	if dr.Overheads, err = measureOverheads(ctx, q); err != nil {
		dr.Err = "overheads: " + err.Error()
		return dr
	}
	cfg.progress("%s: measuring the device-copy ceiling", dev.ID())
	if dr.CopyGBs, dr.CopyHow, err = copyCeiling(ctx, cfg, q); err != nil {
		dr.Err = "copy ceiling: " + err.Error()
		return dr
	}
	for i, c := range cfg.Ops {
		cfg.progress("%s: [%d/%d] %s", dev.ID(), i+1, len(cfg.Ops), c.Name)
		res := runCase(ctx, cfg, q, c)
		if res.GBs > 0 && dr.CopyGBs > 0 {
			res.Fraction = res.GBs / dr.CopyGBs
		}
		dr.Results = append(dr.Results, res)
		if ctx.Err() != nil {
			break
		}
	}
	return dr
}

// runCase verifies, warms up, then times one case.
func runCase(ctx context.Context, cfg Config, q *engine.Queue, op kernels.Op) Result {
	size := cfg.Size
	if size == 0 {
		size = op.DefaultSize
	}
	res := Result{Case: op.Name, N: size}
	in, err := op.Setup(q, kernels.Params{Size: size, Seed: cfg.Seed, Rotate: true})
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
	if err := in.Run(q); err != nil {
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
	res.Stats = Summarize(samples)
	m := in.Model()
	if sec := res.Stats.Median.Seconds(); sec > 0 {
		res.GBs = m.Bytes / sec / 1e9
		res.GFLOPs = m.Flops / sec / 1e9
	}
	return res
}

// timeRuns runs f Warmup times untimed, then Count times, each timed by device events.
func timeRuns(ctx context.Context, cfg Config, q *engine.Queue, f func(*engine.Queue) error) ([]time.Duration, error) {
	for range cfg.Warmup {
		if err := f(q); err != nil {
			return nil, err
		}
	}
	if err := q.Finish(ctx); err != nil {
		return nil, err
	}
	samples := make([]time.Duration, 0, cfg.Count)
	for range cfg.Count {
		d, err := q.Timed(ctx, func() error { return f(q) })
		if err != nil {
			return nil, err
		}
		samples = append(samples, d)
	}
	return samples, nil
}

// copyCeiling measures device-to-device copy bandwidth (bytes read plus written per second)
// with buffers of at least 128 MiB, and at least the size of the largest case's array, two
// ways: the API's buffer copy (clEnqueueCopyBuffer, cuMemcpyDtoD) and the suite's copy
// kernel. It returns the better, since each loses somewhere: PoCL's buffer copy is one
// thread's memcpy (19.8 GB/s against 68.6 GB/s for the kernel on 16 cores), while a float32
// kernel moving 4 bytes per work-item stays at 71% of the H100's buffer copy (2026-11-21).
func copyCeiling(ctx context.Context, cfg Config, q *engine.Queue) (float64, string, error) {
	n := max(cfg.Size*8, 256<<20) / 4
	if m := q.Device().Info().MaxAllocBytes / 4; m > 0 && int64(n) > m {
		n = int(m)
	}
	src, err := engine.NewBuffer[float32](q.Device(), n)
	if err != nil {
		return 0, "", err
	}
	defer src.Close()
	dst, err := engine.NewBuffer[float32](q.Device(), n)
	if err != nil {
		return 0, "", err
	}
	defer dst.Close()
	s, err := kernels.NewStream[float32](q.Device())
	if err != nil {
		return 0, "", err
	}
	defer s.Close()
	best, how := 0.0, ""
	for _, m := range []struct {
		how string
		run func(q *engine.Queue) error
	}{
		{"buffer copy", func(q *engine.Queue) error { return dst.CopyFrom(q, 0, src, 0, n) }},
		{"copy kernel", func(q *engine.Queue) error { return s.Copy(q, dst, src) }},
	} {
		v := float32(len(m.how)) // a different value per method, so each copy is checked
		if err := src.Fill(q, 0, n, v); err != nil {
			return 0, "", err
		}
		samples, err := timeRuns(ctx, cfg, q, m.run)
		if err != nil {
			return 0, "", fmt.Errorf("%s: %w", m.how, err)
		}
		// A ceiling from a copy that did nothing would flatter every case.
		var probe [1]float32
		if err := dst.Read(q, n-1, probe[:]); err != nil {
			return 0, "", err
		}
		if probe[0] != v {
			return 0, "", fmt.Errorf("%w: %s left %v, want %v", ErrVerify, m.how, probe[0], v)
		}
		if gbs := 2 * float64(n) * 4 / Summarize(samples).Median.Seconds() / 1e9; gbs > best {
			best, how = gbs, m.how
		}
	}
	return best, how, nil
}

// Overheads are the fixed costs of a device: compiling the stream family, and launching an
// empty kernel.
type Overheads struct {
	// FirstBuild is the host time of the first compile of the stream family in this process
	// (cold, unless the backend's or driver's on-disk cache already holds it); SecondBuild the
	// same compile again (cached where the backend caches).
	FirstBuild  time.Duration `json:"first_build_ns"`
	SecondBuild time.Duration `json:"second_build_ns"`
	// LaunchAsync is the host time per launch of an empty kernel when 1000 are enqueued back to
	// back (then one Finish); LaunchSync the median host time of one launch followed by Finish.
	LaunchAsync time.Duration `json:"launch_async_ns"`
	LaunchSync  time.Duration `json:"launch_sync_ns"`
}

const emptySource = `__kernel void prism_empty(__global int *x, int n) { if ((int)get_global_id(0) < n) x[0] = n; }`

func measureOverheads(ctx context.Context, q *engine.Queue) (Overheads, error) {
	var o Overheads
	dev := q.Device()
	for _, d := range []*time.Duration{&o.FirstBuild, &o.SecondBuild} {
		t0 := time.Now()
		s, err := kernels.NewStream[float32](dev)
		if err != nil {
			return o, err
		}
		*d = time.Since(t0)
		s.Close()
	}
	prog, err := dev.Build(emptySource)
	if err != nil {
		return o, err
	}
	defer prog.Close()
	k, err := prog.Kernel("prism_empty")
	if err != nil {
		return o, err
	}
	defer k.Close()
	x, err := engine.NewBuffer[int32](dev, 1)
	if err != nil {
		return o, err
	}
	defer x.Close()
	launch := func() error { return q.Launch(k, engine.Range1D(32, 32), x, int32(0)) }
	for range 20 { // warm-up
		if err := launch(); err != nil {
			return o, err
		}
	}
	if err := q.Finish(ctx); err != nil {
		return o, err
	}
	const n = 1000
	t0 := time.Now()
	for range n {
		if err := launch(); err != nil {
			return o, err
		}
	}
	if err := q.Finish(ctx); err != nil {
		return o, err
	}
	o.LaunchAsync = time.Since(t0) / n
	sync := make([]time.Duration, 0, 200)
	for range cap(sync) {
		t0 := time.Now()
		if err := launch(); err != nil {
			return o, err
		}
		if err := q.Finish(ctx); err != nil {
			return o, err
		}
		sync = append(sync, time.Since(t0))
	}
	o.LaunchSync = Summarize(sync).Median
	return o, nil
}
