package bench

import (
	"fmt"
	"time"

	"github.com/prism-compute/prism/bench/internal/term"
)

// The kinds of a Verdict: what limits a case, in one word.
const (
	VerdictMemory  = "memory"  // under the copy roof
	VerdictCompute = "compute" // under the FMA peak of its type
	VerdictLaunch  = "launch"  // its time is mostly the fixed cost of its launches
	VerdictCache   = "cache"   // above the DRAM roof, its working set in the last-level cache
	VerdictLink    = "link"    // bytes across the host-device link, which no ceiling measures
	VerdictLatency = "latency" // its model does no work: its time is its figure
	VerdictNone    = "none"    // no roof to judge it against (RoofMissing says why)
)

// Verdict is what limits a case, from the device's measured roofs and fixed costs: Kind is
// one of the Verdict kinds, Text a line for people ("memory-bound at 91% of copy: near the
// limit"). A case that failed, was skipped or has no valid time has none (the zero Verdict).
type Verdict struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// IsZero reports whether v is no verdict.
func (v Verdict) IsZero() bool { return v.Kind == "" && v.Text == "" }

// The thresholds of the verdicts.
//
// launchBoundFactor: a case is launch-bound when its median time is at most this many times
// its fixed cost (its launches times the device's measured cost of one). At 2x the fixed
// cost is at least half of a run timed by the host; timed by device events, which leave the
// launch out, the kernel runs no longer than two launches take to issue, so that a stream of
// such runs waits on the host at least a third of the time. Either way no kernel
// optimisation can make the case more than twice as fast: the fixed cost is what to attack.
//
// nearLimit and roomLeft qualify a fraction of a roof. The roofs are measured in the same
// run by kernels that do nothing else (a copy, a chain of FMAs), so a real op rarely passes
// 90% of them: at 80% and above there is little left to win ("near the limit"); from 50%
// there is ("room left"); below 50% more than half the roof goes unused, and the kernel
// rather than the hardware limits the case ("far from the limit").
//
// aboveRoof: a memory-bound case above 110% of the copy roof that is not cache-resident
// beats the roof by more than two timings of a busy device differ; the roof underestimates
// its access pattern (float64 loads against the float32 copy kernel), or a cache the
// device does not report helps. Up to 110% it is near the limit.
const (
	launchBoundFactor = 2
	nearLimit         = 0.8
	roomLeft          = 0.5
	aboveRoof         = 1.1
)

// fixedCost returns the fixed cost of one run of the case on a device of overheads o whose
// timing is deviceTiming, and the launches it counts: the launches the run made (Launch.Count
// of each kernel and shape; one per entry in reports written before launches were counted;
// one where none was recorded: a vendor library's) at
// o.LaunchAsync each, the last at o.LaunchSync where the run was timed by the host clock,
// which waits for it. It is 0 where the overheads were not measured.
func (r *Result) fixedCost(o Overheads, deviceTiming string) (time.Duration, int) {
	n := max(1, launchCount(r.Launches))
	if o.LaunchAsync <= 0 {
		return 0, n
	}
	if (r.Timing == TimingHost || deviceTiming == TimingHost) && o.LaunchSync > 0 {
		return time.Duration(n-1)*o.LaunchAsync + o.LaunchSync, n
	}
	return time.Duration(n) * o.LaunchAsync, n
}

// judge sets the result's Verdict from its roofline (roofline must have run), the device's
// ceilings c, overheads o, last-level cache cacheBytes and timing (DeviceReport.Timing, or
// timingOf before the device is closed). The first rule that holds decides:
//
//   - not OK (failed, skipped, invalid): no verdict;
//   - a latency (Latency): "latency: 12.0µs per run", or per launch where the op reports
//     its time per launch (the launch family: "latency: 2.3µs per launch (230.0µs per run)");
//   - memory-bound bytes across the host link: "host link: ...", no ceiling measures it;
//   - a median at most launchBoundFactor times the fixed cost (fixedCost): "launch-bound:
//     ... below ~N the fixed cost dominates", N the bytes the device copies in that time
//     (fixed cost x copy GB/s);
//   - CacheResident: "cache-resident: working set X fits in the Y last-level cache; N% of
//     the DRAM copy roof";
//   - no bound, or the bound's ceiling missing (RoofMissing): kind none, "no verdict: why";
//   - memory-bound: "memory-bound at 91% of copy: near the limit";
//   - compute-bound: "compute-bound at 38% of the fp32 FMA peak: far from the limit".
func (r *Result) judge(c Ceilings, o Overheads, cacheBytes int64, timing string) {
	r.Verdict = Verdict{}
	if !r.OK() {
		return
	}
	median := r.Stats.Median
	if r.Latency() {
		r.Verdict = Verdict{VerdictLatency, "latency: " + FormatDuration(median) + " per run"}
		// The launch family times many launches a run: its figure per launch (or per
		// graph node) is what the case measures.
		for _, f := range []struct{ name, per string }{{"per_launch_ns", "launch"}, {"per_kernel_ns", "kernel in a replayed graph"}} {
			if ns, ok := r.Figures[f.name]; ok && ns > 0 {
				r.Verdict.Text = fmt.Sprintf("latency: %s per %s (%s per run)", FormatDuration(time.Duration(ns)), f.per, FormatDuration(median))
				break
			}
		}
		return
	}
	if r.Link && r.Bound == BoundMemory {
		r.Verdict = Verdict{VerdictLink, fmt.Sprintf("host link: %s GB/s across the host-device link, which no ceiling here measures", term.Float(r.GBs))}
		return
	}
	if fixed, n := r.fixedCost(o, timing); fixed > 0 && median <= launchBoundFactor*fixed {
		launches := "1 launch costs"
		if n > 1 {
			launches = fmt.Sprintf("%d launches cost", n)
		}
		text := fmt.Sprintf("launch-bound: %s a run, %s %s; ", FormatDuration(median), launches, FormatDuration(fixed))
		if c.CopyGBs > 0 {
			text += fmt.Sprintf("below ~%s the fixed cost dominates", FormatBytes(int64(fixed.Seconds()*c.CopyGBs*1e9)))
		} else {
			text += "the fixed cost dominates"
		}
		r.Verdict = Verdict{VerdictLaunch, text}
		return
	}
	if r.CacheResident {
		cache := "the last-level cache"
		if cacheBytes > 0 {
			cache = "the " + FormatBytes(cacheBytes) + " last-level cache"
		}
		r.Verdict = Verdict{VerdictCache, fmt.Sprintf("cache-resident: working set %s fits in %s; %.0f%% of the DRAM copy roof",
			FormatBytes(int64(r.WorkingSetBytes)), cache, 100*r.Fraction)}
		return
	}
	switch {
	case r.RoofMissing != "":
		r.Verdict = Verdict{VerdictNone, "no verdict: " + r.RoofMissing}
	case (r.Bound == "" || (r.Bound == BoundMemory && c.CopyGBs <= 0)) && c.Invalid != "":
		r.Verdict = Verdict{VerdictNone, "no verdict: the device's ceilings are not valid measurements"}
	case r.Bound == "" || (r.Bound == BoundMemory && c.CopyGBs <= 0):
		r.Verdict = Verdict{VerdictNone, "no verdict: the device has no measured ceilings"}
	case r.Bound == BoundMemory:
		r.Verdict = Verdict{VerdictMemory, fmt.Sprintf("memory-bound at %.0f%% of copy: %s", 100*r.Fraction, qualify(r.Fraction))}
	case r.Bound == BoundCompute:
		r.Verdict = Verdict{VerdictCompute, fmt.Sprintf("compute-bound at %.0f%% of the %s: %s", 100*r.Fraction, c.peakPhrase(r.Type), qualify(r.Fraction))}
	}
}

// qualify says how far a fraction of a roof is from it (see nearLimit).
func qualify(f float64) string {
	switch {
	case f > aboveRoof:
		return "above the measured roof"
	case f >= nearLimit:
		return "near the limit"
	case f >= roomLeft:
		return "room left"
	}
	return "far from the limit"
}

// judgeResults sets the verdict of each of the device's results (and their vendor
// baselines) that have none: those of reports written before verdicts.
func (d *DeviceReport) judgeResults() {
	for i := range d.Results {
		res := &d.Results[i]
		if res.Verdict.IsZero() {
			res.judge(d.Ceilings, d.Overheads, d.Device.CacheBytes, d.Timing)
		}
		if v := res.Vendor; v != nil && v.Verdict.IsZero() {
			v.judge(d.Ceilings, d.Overheads, d.Device.CacheBytes, d.Timing)
		}
	}
}
