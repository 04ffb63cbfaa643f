package bench

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prism-compute/prism/bench/internal/term"
)

// DefaultThreshold is the change in median time below which Compare never flags a case.
const DefaultThreshold = 0.05

// DefaultAlpha is the significance level of Compare's test, benchstat's.
const DefaultAlpha = 0.05

// CompareOptions tune Compare.
type CompareOptions struct {
	// Threshold is the smallest relative change of the median that is flagged (0.05 is 5%),
	// whatever the test says; 0 flags every significant change, as benchstat does.
	Threshold float64
	// Alpha is the significance level of the Mann-Whitney U test; 0 means DefaultAlpha.
	Alpha float64
}

// DefaultCompareOptions are the options of `prism compare` without flags.
var DefaultCompareOptions = CompareOptions{Threshold: DefaultThreshold, Alpha: DefaultAlpha}

// Change is one case (device, op, size) of two reports, or one split, device alone of a
// split, or collective (Kind).
type Change struct {
	// Kind is "" for a case on one device, else KindSplit, KindAlone or KindCollective;
	// Device is then the devices' IDs joined by "+" (a split, a collective) or the device
	// alone, and Size a collective's count.
	Kind   string `json:"kind,omitempty"`
	Device string `json:"device"`
	Case   string `json:"case"`
	Size   int    `json:"size"`
	// Dims is the case's shape where one was given that its size does not give
	// (Result.Dims): part of what pairs the two sides.
	Dims string `json:"dims,omitempty"`
	// Old and New are the two results; nil on the side that lacks the case.
	Old *Result `json:"old,omitempty"`
	New *Result `json:"new,omitempty"`
	// Ratio is New's median time over Old's: above 1 is slower.
	Ratio float64 `json:"ratio"`
	// RatioLo and RatioHi bound the confidence interval of the ratio at level Confidence
	// (1-alpha or more): Moses' interval of the shift of log times, the one that goes with
	// the Mann-Whitney U test. They are 0 when the samples are too few for a finite one.
	RatioLo    float64 `json:"ratio_lo,omitempty"`
	RatioHi    float64 `json:"ratio_hi,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	// Test is how the verdict was reached: "mann-whitney" over the per-run samples, or
	// "ranges" (do the [min, max] ranges overlap?) when a report lacks the samples.
	Test string `json:"test,omitempty"`
	// P is the two-sided p-value of the Mann-Whitney U test, from benchmath (benchstat's
	// statistics); N1 and N2 are the numbers of samples it compared.
	P  float64 `json:"p,omitempty"`
	N1 int     `json:"n_old,omitempty"`
	N2 int     `json:"n_new,omitempty"`
	// Verdict is "slower" or "faster" when the change is significant (p <= alpha) and
	// |Ratio-1| exceeds the threshold; "~" otherwise; "only old" or "only new" for a case
	// on one side; "skipped" when a side skipped it (the device cannot run it) and neither
	// failed (Note says which side, and why); "failed" when either side did not time it.
	Verdict string `json:"verdict"`
	// Note says why a "~" is no decision: "need >= 4 samples" when the samples are too few
	// for any difference to be significant, or that a report has no samples.
	Note string `json:"note,omitempty"`
}

// Verdicts of a Change.
const (
	VerdictSlower  = "slower"
	VerdictFaster  = "faster"
	VerdictSame    = "~"
	VerdictOnlyOld = "only old"
	VerdictOnlyNew = "only new"
	VerdictFailed  = "failed"
	VerdictSkipped = "skipped"
)

// Tests of a Change.
const (
	TestMannWhitney = "mann-whitney"
	TestRanges      = "ranges"
)

// Comparison is the result of Compare.
type Comparison struct {
	Threshold float64  `json:"threshold"`
	Alpha     float64  `json:"alpha"`
	Changes   []Change `json:"changes"`
	// Problems lists why the new report cannot vouch for the old one's cases, one line
	// each: a case missing from it, one it failed to run, that differed from the reference,
	// has no valid time or skipped where the old one ran, a device that failed, a report
	// without results. Gate fails on any, as on any regression.
	Problems []string `json:"problems,omitempty"`
}

// Regressions counts the cases flagged slower.
func (c *Comparison) Regressions() int {
	n := 0
	for _, ch := range c.Changes {
		if ch.Verdict == VerdictSlower {
			n++
		}
	}
	return n
}

// Compare matches the results of two reports by device ID, case and size, and decides for
// each whether it got slower, faster or stayed the same (~) the way benchstat does: a
// Mann-Whitney U test over the per-run times of both reports (benchmath.AssumeNothing) at
// level opt.Alpha, and a confidence interval on the ratio of the medians. A significant
// change is flagged only when the medians differ by more than opt.Threshold. Results
// without per-run samples (reports from before schema 1) fall back to the ranges: slower or
// faster when the [min, max] ranges do not overlap and the medians differ by more than the
// threshold. A case either side of which contradicts itself (a summary that disagrees with
// its samples: see ErrInconsistent; reports read by ReportReader never do) or has a time of
// zero or less is "failed", never "~". Problems lists what in the new report makes it no
// evidence for the old one's cases (see Gate). Compare does not check opt: the CLI does,
// with CompareOptions.Validate.
func Compare(old, new *Report, opt CompareOptions) *Comparison {
	if opt.Alpha <= 0 {
		opt.Alpha = DefaultAlpha
	}
	cmp := &Comparison{Threshold: opt.Threshold, Alpha: opt.Alpha}
	om, oorder := compareIndex(old)
	nm, norder := compareIndex(new)
	change := func(k compareKey, o, n *Result) Change {
		ch := Change{Kind: k.kind, Device: k.dev, Case: k.Case, Size: k.Size, Dims: k.Dims, Old: o, New: n}
		ch.judge(opt)
		return ch
	}
	for _, k := range oorder {
		cmp.Changes = append(cmp.Changes, change(k, om[k], nm[k]))
	}
	for _, k := range norder {
		if om[k] == nil {
			cmp.Changes = append(cmp.Changes, change(k, nil, nm[k]))
		}
	}
	cmp.Problems = cmp.problems(new)
	return cmp
}

// compareKey identifies what Compare matches: a device's case (kind ""), a split, a
// device alone of a split, or a collective.
type compareKey struct {
	kind, dev string
	CaseKey
}

// compareIndex returns every result of r that Compare matches, in report order: the
// devices' results, then the splits (each with its devices alone) and collectives as
// results (Report.GroupRows).
func compareIndex(r *Report) (map[compareKey]*Result, []compareKey) {
	m := map[compareKey]*Result{}
	var order []compareKey
	add := func(k compareKey, res *Result) {
		if m[k] == nil {
			order = append(order, k)
		}
		m[k] = res
	}
	for i := range r.Devices {
		d := &r.Devices[i]
		for j := range d.Results {
			add(compareKey{"", d.Device.ID, d.Results[j].Key()}, &d.Results[j])
		}
	}
	for _, g := range r.GroupRows() {
		add(compareKey{g.Kind, g.Device, CaseKey{g.Result.Case, g.Result.Size, "", g.Result.Dims}}, g.Result)
	}
	return m, order
}

func (ch *Change) judge(opt CompareOptions) {
	switch {
	case ch.New == nil:
		ch.Verdict = VerdictOnlyOld
		return
	case ch.Old == nil:
		ch.Verdict = VerdictOnlyNew
		return
	case ch.Old.Err == "" && ch.New.Err == "" && (ch.Old.Skipped != "" || ch.New.Skipped != ""):
		ch.Verdict = VerdictSkipped
		switch {
		case ch.Old.Skipped != "" && ch.New.Skipped != "":
			ch.Note = "in both: " + ch.New.Skipped
		case ch.New.Skipped != "":
			ch.Note = "in new: " + ch.New.Skipped
		default:
			ch.Note = "in old: " + ch.Old.Skipped
		}
		return
	case ch.Old.contradiction() != "":
		ch.Verdict, ch.Note = VerdictFailed, "old: "+ch.Old.contradiction()
		return
	case ch.New.contradiction() != "":
		ch.Verdict, ch.Note = VerdictFailed, "new: "+ch.New.contradiction()
		return
	case !ch.Old.OK() || !ch.New.OK() || ch.Old.Stats.Median <= 0 || ch.Old.Stats.Min <= 0 || ch.New.Stats.Median <= 0 || ch.New.Stats.Min <= 0:
		ch.Verdict = VerdictFailed
		return
	}
	o, n := ch.Old.Stats, ch.New.Stats
	ch.Ratio = float64(n.Median) / float64(o.Median)
	changed := math.Abs(ch.Ratio-1) > opt.Threshold
	direction := VerdictFaster
	if ch.Ratio > 1 {
		direction = VerdictSlower
	}
	if len(o.Samples) == 0 || len(n.Samples) == 0 {
		ch.Test, ch.Note = TestRanges, "no per-run samples: min/max ranges"
		overlap := n.Min <= o.Max && o.Min <= n.Max
		ch.Verdict = VerdictSame
		if !overlap && changed {
			ch.Verdict = direction
		}
		return
	}
	ch.Test = TestMannWhitney
	u := MannWhitney(o.Samples, n.Samples, opt.Alpha)
	ch.P, ch.N1, ch.N2 = u.P, u.N1, u.N2
	if u.RatioLo > 0 {
		ch.RatioLo, ch.RatioHi, ch.Confidence = u.RatioLo, u.RatioHi, 1-opt.Alpha
	}
	ch.Verdict = VerdictSame
	switch {
	case u.MinP > opt.Alpha:
		ch.Note = fmt.Sprintf("need >= %d samples", uMinSamples(opt.Alpha))
	case u.P <= opt.Alpha && changed: // benchstat's rule: ~ when P > alpha
		ch.Verdict = direction
	}
}

// seconds returns the samples in seconds.
func seconds(ds []time.Duration) []float64 {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = d.Seconds()
	}
	return xs
}

// logs returns the natural logarithms of xs (positive times).
func logs(xs []float64) []float64 {
	ls := make([]float64, len(xs))
	for i, x := range xs {
		ls[i] = math.Log(math.Max(x, 1e-12))
	}
	return ls
}

// VerdictText is the verdict as the table prints it: with the note when it explains a "~"
// ("~ (need >= 4 samples)"), and a skip's side ("skipped (in both)").
func (ch Change) VerdictText() string {
	switch {
	case ch.Verdict == VerdictSame && ch.Note != "":
		return fmt.Sprintf("%s (%s)", ch.Verdict, ch.Note)
	case ch.Verdict == VerdictSkipped:
		side, _, _ := strings.Cut(ch.Note, ":")
		return fmt.Sprintf("%s (%s)", ch.Verdict, side)
	}
	return ch.Verdict
}

// DeviceText names the devices of the change as the table prints them: the device, or
// what ran across devices ("split opencl:0:0+opencl:0:1", "opencl:0:0 alone").
func (ch Change) DeviceText() string {
	switch ch.Kind {
	case KindSplit, KindCollective:
		return ch.Kind + " " + ch.Device
	case KindAlone:
		return ch.Device + " alone"
	}
	return ch.Device
}

// String is a one-line summary.
func (ch Change) String() string {
	return term.Safe(strings.Join([]string{ch.DeviceText(), ch.Case, SizeText(ch.Size, ch.Dims), ch.VerdictText()}, " "))
}
