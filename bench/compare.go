package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// DefaultThreshold is the change in median time below which Compare never flags a case.
const DefaultThreshold = 0.05

// Change is one case (device, op, size) of two reports.
type Change struct {
	Device string `json:"device"`
	Case   string `json:"case"`
	Size   int    `json:"size"`
	// Old and New are the two results; nil on the side that lacks the case.
	Old *Result `json:"old,omitempty"`
	New *Result `json:"new,omitempty"`
	// Ratio is New's median time over Old's: above 1 is slower. RatioMin and RatioMax are
	// the ratio's range from the spreads: New's min over Old's max, New's max over Old's min.
	Ratio    float64 `json:"ratio"`
	RatioMin float64 `json:"ratio_min"`
	RatioMax float64 `json:"ratio_max"`
	// Verdict is "slower" or "faster" when the two ranges of times do not overlap and
	// |Ratio-1| exceeds the threshold; "~" when the change is within the noise; "only old" or
	// "only new" for a case on one side; "failed" when either side did not time it.
	Verdict string `json:"verdict"`
}

// Verdicts of a Change.
const (
	VerdictSlower  = "slower"
	VerdictFaster  = "faster"
	VerdictSame    = "~"
	VerdictOnlyOld = "only old"
	VerdictOnlyNew = "only new"
	VerdictFailed  = "failed"
)

// Comparison is the result of Compare.
type Comparison struct {
	Threshold float64  `json:"threshold"`
	Changes   []Change `json:"changes"`
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

// Compare matches the results of two reports by device ID, case and size, and flags the
// changes beyond the noise: a case is slower or faster when the ranges [min, max] of its
// times in the two reports do not overlap and its median changed by more than threshold
// (0.05 is 5%).
func Compare(old, new *Report, threshold float64) *Comparison {
	cmp := &Comparison{Threshold: threshold}
	type key struct {
		dev string
		caseKey
	}
	index := func(r *Report) (map[key]*Result, []key) {
		m := map[key]*Result{}
		var order []key
		for i := range r.Devices {
			d := &r.Devices[i]
			for j := range d.Results {
				k := key{d.Device.ID, caseKey{d.Results[j].Case, d.Results[j].Size}}
				if m[k] == nil {
					order = append(order, k)
				}
				m[k] = &d.Results[j]
			}
		}
		return m, order
	}
	om, oorder := index(old)
	nm, norder := index(new)
	for _, k := range oorder {
		ch := Change{Device: k.dev, Case: k.Case, Size: k.Size, Old: om[k], New: nm[k]}
		ch.judge(threshold)
		cmp.Changes = append(cmp.Changes, ch)
	}
	for _, k := range norder {
		if om[k] == nil {
			ch := Change{Device: k.dev, Case: k.Case, Size: k.Size, New: nm[k]}
			ch.judge(threshold)
			cmp.Changes = append(cmp.Changes, ch)
		}
	}
	return cmp
}

func (ch *Change) judge(threshold float64) {
	switch {
	case ch.New == nil:
		ch.Verdict = VerdictOnlyOld
		return
	case ch.Old == nil:
		ch.Verdict = VerdictOnlyNew
		return
	case !ch.Old.OK() || !ch.New.OK() || ch.Old.Stats.Median <= 0 || ch.Old.Stats.Min <= 0:
		ch.Verdict = VerdictFailed
		return
	}
	o, n := ch.Old.Stats, ch.New.Stats
	ch.Ratio = float64(n.Median) / float64(o.Median)
	ch.RatioMin = float64(n.Min) / float64(o.Max)
	ch.RatioMax = float64(n.Max) / float64(o.Min)
	overlap := n.Min <= o.Max && o.Min <= n.Max
	switch {
	case overlap || math.Abs(ch.Ratio-1) <= threshold:
		ch.Verdict = VerdictSame
	case ch.Ratio > 1:
		ch.Verdict = VerdictSlower
	default:
		ch.Verdict = VerdictFaster
	}
}

// WriteTable writes one line per case: both medians, the ratio with its range, the verdict.
func (c *Comparison) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "device\tcase\tsize\told\tnew\tnew/old\trange\t\t")
	slower, faster, one := 0, 0, 0
	for _, ch := range c.Changes {
		oldT, newT, ratio, rng := "-", "-", "-", "-"
		if ch.Old != nil && ch.Old.OK() {
			oldT = FormatDuration(ch.Old.Stats.Median)
		}
		if ch.New != nil && ch.New.OK() {
			newT = FormatDuration(ch.New.Stats.Median)
		}
		if ch.Ratio > 0 {
			ratio = fmt.Sprintf("%.3f", ch.Ratio)
			rng = fmt.Sprintf("%.3f-%.3f", ch.RatioMin, ch.RatioMax)
		}
		switch ch.Verdict {
		case VerdictSlower:
			slower++
		case VerdictFaster:
			faster++
		case VerdictOnlyNew, VerdictOnlyOld:
			one++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", ch.Device, ch.Case, FormatSize(ch.Size), oldT, newT, ratio, rng, ch.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d slower, %d faster (time ranges apart and median changed by more than %.3g%%), %d on one side only, of %d cases\n",
		slower, faster, 100*c.Threshold, one, len(c.Changes))
	return err
}

// String is a one-line summary.
func (ch Change) String() string {
	return strings.Join([]string{ch.Device, ch.Case, FormatSize(ch.Size), ch.Verdict}, " ")
}
