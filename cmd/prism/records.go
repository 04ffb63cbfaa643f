package main

import (
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// The reports that prism run and prism exec record in the store: they print results of
// their own form, and keep a bench.Report of the same run, the store's interchange format.

// newRunReport starts a report of a run that began at start: the host, Prism's version
// and commit, and the environment that changes results, as bench's reports hold them.
func newRunReport(start time.Time, cfg bench.ConfigInfo, command []string) *bench.Report {
	host, _ := os.Hostname()
	ver, commit := bench.Version()
	return &bench.Report{Schema: bench.SchemaVersion, Prism: ver, Commit: commit, Date: start.UTC(), Host: host,
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, HostCPU: bench.HostCPU(), Env: bench.ResultEnv(),
		Command: command, Config: cfg}
}

// deviceFacts is what a report keeps of a device that ran.
type deviceFacts struct {
	info    engine.DeviceInfo
	backend string
}

func factsOf(d *engine.Device) deviceFacts { return deviceFacts{d.Info(), d.Backend()} }

// runReport is the report of prism run: its device, and each case it ran with the result
// bench's report would hold. An interrupted run is marked at the step that was running.
func runReport(start time.Time, cfg bench.ConfigInfo, command []string, dev deviceFacts, results []runResult, interruptedAt string) *bench.Report {
	rep := newRunReport(start, cfg, command)
	d := bench.DeviceReport{Device: dev.info, Backend: dev.backend, Results: []bench.Result{}}
	for _, r := range results {
		d.Results = append(d.Results, r.Result)
		d.Timing = r.DeviceTiming
	}
	rep.Devices = []bench.DeviceReport{d}
	if interruptedAt != "" {
		rep.Interrupted, rep.InterruptedAt = true, interruptedAt
	}
	return rep
}

// execCase is the case name under which prism exec records a kernel of its own.
func execCase(kernel string) string { return "exec/" + kernel }

// execReport is the report of prism exec: one result per device that ran, the kernel as
// the case "exec/KERNEL" at the size of its global range, its variant the file (or
// "expr"). A device whose outputs matched another device's within the tolerance counts as
// verified, one whose outputs did not as a mismatch; a device alone is not verified.
func execReport(start time.Time, sum *execSummary, devs []deviceFacts, expr bool, command []string) *bench.Report {
	rep := newRunReport(start, bench.ConfigInfo{Ops: []string{execCase(sum.Kernel)}, Count: countOf(sum), Warmup: sum.Warmup, Seed: sum.Seed}, command)
	variant := filepath.Base(sum.File)
	if expr {
		variant = "expr"
	}
	size := 1
	for _, g := range sum.Global {
		size *= g
	}
	compared, mismatch := map[string]bool{}, map[string]bool{}
	for _, c := range sum.Compare {
		compared[c.Device], compared[c.Baseline] = true, true
		if !c.Within {
			mismatch[c.Device] = true
		}
	}
	// --expect: a device's outputs against the stored ones (Baseline is the file).
	for _, c := range sum.Expect {
		compared[c.Device] = true
		if !c.Within {
			mismatch[c.Device] = true
		}
	}
	for i, res := range sum.Devices {
		d := bench.DeviceReport{Timing: res.Timing}
		if i < len(devs) {
			d.Device, d.Backend = devs[i].info, devs[i].backend
		} else {
			d.Device = engine.DeviceInfo{ID: res.Device, Name: res.Name}
		}
		r := bench.Result{Case: execCase(sum.Kernel), Family: "exec", Shape: joinDims(sum.Global), Size: size, Variant: variant,
			Stats: res.Stats, Warmup: sum.Warmup, Err: res.Err}
		if res.Err == "" {
			r.Mismatch = mismatch[res.Device]
			r.Verified = compared[res.Device] && !r.Mismatch
		}
		d.Results = []bench.Result{r}
		rep.Devices = append(rep.Devices, d)
	}
	return rep
}

// countOf is the timed runs of an exec summary's first device that timed any.
func countOf(sum *execSummary) int {
	for _, d := range sum.Devices {
		if d.Stats.Runs > 0 {
			return d.Stats.Runs
		}
	}
	return 0
}
