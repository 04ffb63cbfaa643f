package bench

import (
	"fmt"
	"strings"

	"github.com/prism-compute/prism/bench/internal/term"
	"github.com/prism-compute/prism/engine"
)

// MaxThreshold bounds CompareOptions.Threshold: at 1 (100%) or more no case could ever be
// flagged faster (its time cannot fall by 100%), and only slowdowns of more than 2x slower
// would be; an infinite threshold once hid a 10x slowdown.
const MaxThreshold = 1.0

// Validate returns an error wrapping engine.ErrInvalidArg when the options cannot give a
// verdict worth gating on: a Threshold that is NaN, infinite, negative or MaxThreshold or
// more, or an Alpha that is not 0 (DefaultAlpha) or strictly between 0 and 1.
func (o CompareOptions) Validate() error {
	if !(o.Threshold >= 0 && o.Threshold < MaxThreshold) {
		return fmt.Errorf("bench: threshold %v must be at least 0 and below %v (a relative change: 0.05 is 5%%): %w", o.Threshold, MaxThreshold, engine.ErrInvalidArg)
	}
	if o.Alpha != 0 && !(o.Alpha > 0 && o.Alpha < 1) {
		return fmt.Errorf("bench: alpha %v must lie strictly between 0 and 1: %w", o.Alpha, engine.ErrInvalidArg)
	}
	return nil
}

// problems lists why the new report cannot vouch for the cases of the old one: a case of
// the old report missing from it; a case it failed to run, that differed from the
// reference or has no valid time (Result.Invalid, a time of zero or less); a case it
// skipped that the old one ran; a case of either report whose summary contradicts its
// samples; a device that failed; or no result at all.
func (c *Comparison) problems(new *Report) []string {
	var out []string
	total := 0
	for _, d := range new.Devices {
		total += len(d.Results)
		if d.Err != "" {
			out = append(out, fmt.Sprintf("device %s failed in the new report: %s", d.Device.ID, d.Err))
		}
	}
	if total+len(new.GroupRows()) == 0 {
		out = append(out, "the new report has no results")
	}
	for _, ch := range c.Changes {
		what := fmt.Sprintf("%s %s %s", ch.DeviceText(), ch.Case, SizeText(ch.Size, ch.Dims))
		n := ch.New
		switch {
		case ch.Old != nil && ch.Old.contradiction() != "":
			out = append(out, what+": "+ch.Old.contradiction()+" in the old report")
		case n != nil && n.contradiction() != "":
			out = append(out, what+": "+n.contradiction()+" in the new report")
		case n == nil:
			out = append(out, what+": missing from the new report")
		case n.Mismatch:
			out = append(out, what+": differs from the reference in the new report")
		case n.Err != "":
			out = append(out, what+": failed in the new report: "+n.Err)
		case n.Skipped != "" && ch.Old != nil && ch.Old.Skipped == "":
			out = append(out, what+": skipped in the new report: "+n.Skipped)
		case n.Skipped != "":
			// skipped on both sides (no fp64 on the device): nothing was lost
		case n.Invalid != "":
			out = append(out, what+": "+n.Invalid+" in the new report")
		case !n.Verified:
			out = append(out, what+": not verified in the new report")
		case n.Stats.Runs <= 0:
			out = append(out, what+": not timed in the new report")
		case n.Stats.Median <= 0 || n.Stats.Min <= 0:
			out = append(out, what+fmt.Sprintf(": a time of %d ns (median) or %d ns (least) in the new report is no device time", int64(n.Stats.Median), int64(n.Stats.Min)))
		}
	}
	for i, s := range out {
		out[i] = term.Safe(s)
	}
	return out
}

// MaxProblemsShown bounds the problems a comparison's table and Gate list one by one.
const MaxProblemsShown = 20

// Gate returns nil when the new report shows no regression and vouches for every case of
// the old one, else an error that says why: how many cases are slower, and each problem
// (Comparison.Problems), the first 20 of them. `prism compare --fail-on-regression`
// fails with it.
func (c *Comparison) Gate() error {
	var why []string
	if n := c.Regressions(); n > 0 {
		why = append(why, fmt.Sprintf("%d cases slower (p <= %.3g, median changed by more than %.3g%%)", n, c.Alpha, 100*c.Threshold))
	}
	if len(c.Problems) > 0 {
		why = append(why, fmt.Sprintf("%d cases or devices the new report cannot vouch for", len(c.Problems)))
	}
	if len(why) == 0 {
		return nil
	}
	msg := "bench: " + strings.Join(why, "; ")
	for i, p := range c.Problems {
		if i == MaxProblemsShown {
			msg += fmt.Sprintf("\n  and %d more", len(c.Problems)-i)
			break
		}
		msg += "\n  " + p
	}
	return fmt.Errorf("%s", msg)
}
