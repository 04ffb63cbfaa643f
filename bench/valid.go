package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prism-compute/prism/bench/internal/term"
)

// A device time of zero or less is no measurement: some drivers' event profiling gives 0
// for commands it did not time (Mesa's Rusticl does for some kernels), and a NaN from a
// driver reaches a time.Duration as a negative number. Rates over such a time are +Inf or
// absurd ("0.0µs 262144 GB/s"), and encoding/json cannot write +Inf at all: a single one
// would lose the whole report. So a case with such a time is marked invalid (Result.Invalid
// says why), keeps its samples for inspection, and has no rates and no roof; a ceiling with
// one is 0, with Ceilings.Invalid saying why; and WriteJSON replaces any non-finite figure
// left by 0, marking it the same way, so that the report is always written.

// InvalidPrefix starts every reason of Result.Invalid and Ceilings.Invalid.
const InvalidPrefix = "invalid measurement: "

// timingInvalid returns why samples are not a measurement (a device time of zero or less),
// or "" when every sample is positive (or there are none).
func timingInvalid(samples []time.Duration) string {
	bad, low := 0, time.Duration(math.MaxInt64)
	for _, s := range samples {
		if s <= 0 {
			bad++
		}
		low = min(low, s)
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("%s%d of %d device times are not positive (the least is %d ns): the driver's event profiling gave no usable time",
		InvalidPrefix, bad, len(samples), int64(low))
}

// finite reports whether v is neither infinite nor NaN.
func finite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

// measured records the timed samples of a verified case and the op's model of one run's
// work (flops, bytes), and computes the rates over the median time. When a device time is
// not positive, or a figure comes out non-finite, the case is marked invalid instead: its
// rates stay 0 and OK reports false.
func (res *Result) measured(samples []time.Duration, flops, bytes float64) {
	res.Stats = Summarize(samples)
	res.Flops, res.Bytes = flops, bytes
	if !finite(flops) || !finite(bytes) || flops < 0 || bytes < 0 {
		res.Flops, res.Bytes = 0, 0
		res.Invalid = fmt.Sprintf("%sthe op's model gives %v FLOPs and %v bytes a run", InvalidPrefix, flops, bytes)
		return
	}
	if why := timingInvalid(samples); why != "" {
		res.Invalid = why
		return
	}
	sec := res.Stats.Median.Seconds()
	gbs, gflops := bytes/sec/1e9, flops/sec/1e9
	if !finite(gbs) || !finite(gflops) {
		res.Invalid = fmt.Sprintf("%s%v bytes and %v FLOPs over %v give no finite rate", InvalidPrefix, bytes, flops, res.Stats.Median)
		return
	}
	res.GBs, res.GFLOPs = gbs, gflops
}

// markTimes marks invalid each result read from a report that claims to be verified and
// timed with a device time of zero or less (reports written before invalid measurements
// were recognized), so that no renderer shows it as a measurement.
func (res *Result) markTimes() {
	if s := res.Stats; res.Invalid == "" && res.Verified && res.Err == "" && res.Skipped == "" && s.Runs > 0 {
		why := timingInvalid(s.Samples)
		if why == "" && (s.Median <= 0 || s.Min <= 0) {
			why = fmt.Sprintf("%sa median of %d ns and a least time of %d ns are no device times", InvalidPrefix, int64(s.Median), int64(s.Min))
		}
		if why != "" {
			res.Invalid = why
			res.GBs, res.GFLOPs, res.AttainableGFLOPs, res.Fraction, res.Bound, res.CacheResident = 0, 0, 0, 0, "", false
			res.Verdict = Verdict{}
		}
	}
	if res.Vendor != nil {
		res.Vendor.markTimes()
	}
}

// noteInvalid records in c.Invalid that the ceiling named (copy, fp32 peak, fp64 peak) was
// not validly measured, when *how says so (copyCeiling and measurePeak then return 0 with
// how = InvalidPrefix + why), and clears *how, which describes a valid measurement only.
func (c *Ceilings) noteInvalid(name string, how *string) {
	if !strings.HasPrefix(*how, InvalidPrefix) {
		return
	}
	if c.Invalid != "" {
		c.Invalid += "; "
	}
	c.Invalid += name + ": " + strings.TrimPrefix(*how, InvalidPrefix)
	*how = ""
}

// finiteReport returns r when every figure it holds is finite; otherwise a copy in which
// each non-finite figure is 0, the result that held it marked invalid (the ceiling, the
// telemetry reading, likewise), so that encoding/json can write it. r is not modified.
func (r *Report) finiteReport() *Report {
	if r.allFinite() {
		return r
	}
	out := *r
	out.Devices = make([]DeviceReport, len(r.Devices))
	for i, d := range r.Devices {
		d.Ceilings.makeFinite()
		d.Telemetry.makeFinite()
		d.Results = append([]Result(nil), d.Results...)
		for j := range d.Results {
			d.Results[j].makeFinite()
		}
		out.Devices[i] = d
	}
	return &out
}

func (r *Report) allFinite() bool {
	for i := range r.Devices {
		d := &r.Devices[i]
		if !d.Ceilings.finite() || !d.Telemetry.finite() {
			return false
		}
		for j := range d.Results {
			if !d.Results[j].finite() {
				return false
			}
		}
	}
	return true
}

func (c *Ceilings) floats() []*float64 { return []*float64{&c.CopyGBs, &c.FP32GFLOPs, &c.FP64GFLOPs} }

func (c *Ceilings) finite() bool { return allFinite(c.floats()) }

func (c *Ceilings) makeFinite() {
	names := []string{"copy", "fp32 peak", "fp64 peak"}
	for i, p := range c.floats() {
		if !finite(*p) {
			why := fmt.Sprintf("%s%v GB/s or GFLOP/s is no rate", InvalidPrefix, *p)
			c.noteInvalid(names[i], &why)
			*p = 0
		}
	}
}

func (res *Result) floats() []*float64 {
	return []*float64{&res.Flops, &res.Bytes, &res.GBs, &res.GFLOPs, &res.AttainableGFLOPs, &res.Fraction, &res.WorkingSetBytes}
}

func (res *Result) finite() bool {
	return allFinite(res.floats()) && (res.Vendor == nil || res.Vendor.finite())
}

// makeFinite zeroes res's non-finite figures and marks it invalid; a vendor baseline is
// copied before it is changed.
func (res *Result) makeFinite() {
	var bad []string
	names := []string{"flops", "bytes", "gbs", "gflops", "attainable_gflops", "fraction", "working_set_bytes"}
	for i, p := range res.floats() {
		if !finite(*p) {
			bad = append(bad, fmt.Sprintf("%s %v", names[i], *p))
			*p = 0
		}
	}
	if len(bad) > 0 {
		if res.Invalid == "" {
			res.Invalid = InvalidPrefix + strings.Join(bad, ", ") + " is not a finite figure"
		}
		res.GBs, res.GFLOPs, res.AttainableGFLOPs, res.Fraction, res.CacheResident = 0, 0, 0, 0, false
		res.Verdict = Verdict{}
	}
	if res.Vendor != nil && !res.Vendor.finite() {
		v := *res.Vendor
		v.makeFinite()
		res.Vendor = &v
	}
}

func (t *Telemetry) spreads() []**Spread {
	return []**Spread{&t.SMClockMHz, &t.PowerW, &t.TemperatureC}
}

func (t *Telemetry) finite() bool {
	for _, s := range t.spreads() {
		if *s != nil && !allFinite([]*float64{&(*s).Min, &(*s).Median, &(*s).Max}) {
			return false
		}
	}
	return true
}

// makeFinite drops the spreads of readings that are not finite, naming them in Missing.
func (t *Telemetry) makeFinite() {
	names := []string{"sm_clock_mhz", "power_w", "temperature_c"}
	t.Missing = append([]string(nil), t.Missing...)
	for i, s := range t.spreads() {
		if *s != nil && !allFinite([]*float64{&(*s).Min, &(*s).Median, &(*s).Max}) {
			*s = nil
			t.Missing = append(t.Missing, names[i]+" (not a finite reading)")
		}
	}
}

func allFinite(ps []*float64) bool {
	for _, p := range ps {
		if !finite(*p) {
			return false
		}
	}
	return true
}

// Consistency of what a report says it measured. A case's summary (runs, median_ns,
// min_ns, max_ns) is what the tables, charts and gates read, while the U test of compare
// and check reads samples_ns: a report whose summary contradicts its samples would be
// judged on one set of times and shown with another (doubled samples under an unchanged
// median compared "~"). The samples are what was measured, so a summary that is absent
// (runs and times all 0 beside samples) is recomputed from them; but one that is present
// and contradicts them is refused rather than silently replaced: a summary that
// disagrees with its own samples was edited or damaged, and which half is right cannot
// be told. Without samples (reports from before schema 1) the summary must agree with
// itself: min_ns <= median_ns <= max_ns, and no times without runs. Rates and work are
// never negative. A time of zero or less is a measurement the driver did not give, kept
// and marked invalid (markTimes), as Prism writes it.

// ErrInconsistent is wrapped by the error for a report that contradicts itself: a case
// whose summary (runs, median_ns, min_ns, max_ns) disagrees with its samples (samples_ns)
// or with itself, or a negative rate.
var ErrInconsistent = errors.New("the report contradicts itself (edited or damaged)")

// summaryAbsent reports whether s has samples but no summary (runs and times all 0).
func (s Stats) summaryAbsent() bool {
	return len(s.Samples) > 0 && s.Runs == 0 && s.Median == 0 && s.Min == 0 && s.Max == 0
}

// contradiction returns what in s contradicts itself, in the report's field names, or ""
// when runs is the number of samples and median_ns, min_ns and max_ns are theirs (a median
// of an even count may be any time between the two middle ones: scripts/vendor.py takes
// the upper one, Summarize their mean).
func (s Stats) contradiction() string {
	n := len(s.Samples)
	switch {
	case s.Runs < 0:
		return fmt.Sprintf("runs %d is negative", s.Runs)
	case n > 0 && s.Runs != n:
		return fmt.Sprintf("runs %d but samples_ns holds %d times", s.Runs, n)
	case s.Runs == 0 && (s.Median != 0 || s.Min != 0 || s.Max != 0):
		return fmt.Sprintf("runs 0 but median_ns %d, min_ns %d, max_ns %d", int64(s.Median), int64(s.Min), int64(s.Max))
	case s.Min > s.Max:
		return fmt.Sprintf("min_ns %d is above max_ns %d", int64(s.Min), int64(s.Max))
	case s.Median < s.Min || s.Median > s.Max:
		return fmt.Sprintf("median_ns %d lies outside min_ns %d to max_ns %d", int64(s.Median), int64(s.Min), int64(s.Max))
	case n == 0:
		return ""
	}
	sorted := slices.Sorted(slices.Values(s.Samples))
	switch lo, hi := sorted[(n-1)/2], sorted[n/2]; {
	case s.Min != sorted[0]:
		return fmt.Sprintf("min_ns %d but the least of samples_ns is %d", int64(s.Min), int64(sorted[0]))
	case s.Max != sorted[n-1]:
		return fmt.Sprintf("max_ns %d but the greatest of samples_ns is %d", int64(s.Max), int64(sorted[n-1]))
	case s.Median < lo || s.Median > hi:
		return fmt.Sprintf("median_ns %d but the median of samples_ns is %d", int64(s.Median), int64(Summarize(s.Samples).Median))
	}
	return ""
}

// negative returns the first of the named figures that is negative or not finite, as
// "gbs -3", or "".
func negative(names []string, ps []*float64) string {
	for i, p := range ps {
		if *p < 0 || !finite(*p) {
			return fmt.Sprintf("%s %v", names[i], *p)
		}
	}
	return ""
}

// reconcile recomputes res's summary from its samples where the summary is absent (and,
// for a verified case without rates, the rates from the op's work), then returns what in
// res contradicts itself, or "" (see contradiction).
func (res *Result) reconcile() string {
	for r := res; r != nil; r = r.Vendor {
		if !r.Stats.summaryAbsent() {
			continue
		}
		if r.Verified && r.Err == "" && r.Skipped == "" && r.Invalid == "" && r.GBs == 0 && r.GFLOPs == 0 {
			r.measured(r.Stats.Samples, r.Flops, r.Bytes)
		} else {
			r.Stats = Summarize(r.Stats.Samples)
		}
	}
	return res.contradiction()
}

// contradiction returns what in res contradicts itself, in the report's field names, or
// "": a summary that disagrees with its samples or with itself (Stats.contradiction), a
// negative or non-finite rate or amount of work, the same in its vendor baseline.
func (res *Result) contradiction() string {
	if why := res.Stats.contradiction(); why != "" {
		return why
	}
	names := []string{"flops", "bytes", "gbs", "gflops", "attainable_gflops", "fraction", "working_set_bytes"}
	if bad := negative(names, res.floats()); bad != "" {
		return bad + " is not a rate or an amount of work"
	}
	if res.Vendor != nil {
		if why := res.Vendor.contradiction(); why != "" {
			return "vendor baseline: " + why
		}
	}
	return ""
}

// reconcile checks every case of r, its splits and collectives (recomputing absent
// summaries from their samples), and returns an error wrapping ErrInconsistent that names
// the first case that contradicts itself and the fields that disagree.
func (r *Report) reconcile() error {
	fail := func(what, why string) error {
		return fmt.Errorf("bench: %s: %s: %w", term.Safe(what), why, ErrInconsistent)
	}
	for i := range r.Devices {
		d := &r.Devices[i]
		for j := range d.Results {
			res := &d.Results[j]
			if why := res.reconcile(); why != "" {
				return fail(fmt.Sprintf("%s %s %s", d.Device.ID, res.Case, SizeText(res.Size, res.Dims)), why)
			}
		}
	}
	stats := func(what string, s *Stats) error {
		if s.summaryAbsent() {
			*s = Summarize(s.Samples)
		}
		if why := s.contradiction(); why != "" {
			return fail(what, why)
		}
		return nil
	}
	for i := range r.Splits {
		s := &r.Splits[i]
		what := fmt.Sprintf("split %s %s across %s", s.Case, FormatSize(s.Size), strings.Join(s.Devices, "+"))
		if err := stats(what, &s.Stats); err != nil {
			return err
		}
		for j := range s.Single {
			sd := &s.Single[j]
			if err := stats(what+", "+sd.Device+" alone", &sd.Stats); err != nil {
				return err
			}
			if err := stats(what+", "+sd.Device+" alone, resident", &sd.Resident); err != nil {
				return err
			}
		}
		if s.Paired != nil {
			if err := stats(what+", the fastest device alone in turn with it", s.Paired); err != nil {
				return err
			}
		}
		if bad := negative([]string{"speedup", "speedup_resident", "gflops", "gbs"}, []*float64{&s.Speedup, &s.SpeedupResident, &s.GFLOPs, &s.GBs}); bad != "" {
			return fail(what, bad+" is not a rate")
		}
	}
	for i := range r.Collectives {
		c := &r.Collectives[i]
		what := fmt.Sprintf("%s %s on %s", c.Case, FormatSize(c.Count), strings.Join(c.Devices, "+"))
		if err := stats(what, &c.Stats); err != nil {
			return err
		}
		if bad := negative([]string{"algbw_gbs", "busbw_gbs"}, []*float64{&c.AlgBW, &c.BusBW}); bad != "" {
			return fail(what, bad+" is not a rate")
		}
	}
	return nil
}
