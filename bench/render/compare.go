package render

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/internal/term"
)

// Comparison writes one line per case of c: both medians, the ratio with its confidence interval,
// the p-value and sample counts of the test, the verdict; then a summary line.
func Comparison(w io.Writer, c *bench.Comparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	conf := fmt.Sprintf("%.3g%% CI", 100*(1-c.Alpha))
	fmt.Fprintf(tw, "device\tcase\tsize\told\tnew\tnew/old\t%s\tp\tverdict\t\n", conf)
	slower, faster, same, one, skipped, failed := 0, 0, 0, 0, 0, 0
	for _, ch := range c.Changes {
		oldT, newT, ratio, ci, p := "-", "-", "-", "-", "-"
		if ch.Old != nil && ch.Old.OK() {
			oldT = bench.FormatDuration(ch.Old.Stats.Median)
		}
		if ch.New != nil && ch.New.OK() {
			newT = bench.FormatDuration(ch.New.Stats.Median)
		}
		if ch.Ratio > 0 {
			ratio = fmt.Sprintf("%.3f", ch.Ratio)
		}
		if ch.RatioLo > 0 {
			ci = fmt.Sprintf("%.3f-%.3f", ch.RatioLo, ch.RatioHi)
		}
		if ch.Test == bench.TestMannWhitney {
			p = fmt.Sprintf("p=%.3f n=%d+%d", ch.P, ch.N1, ch.N2)
		}
		switch ch.Verdict {
		case bench.VerdictSlower:
			slower++
		case bench.VerdictFaster:
			faster++
		case bench.VerdictSame:
			same++
		case bench.VerdictOnlyNew, bench.VerdictOnlyOld:
			one++
		case bench.VerdictSkipped:
			skipped++
		case bench.VerdictFailed:
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", term.Safe(ch.DeviceText()), term.Safe(ch.Case), bench.SizeText(ch.Size, ch.Dims), oldT, newT, ratio, ci, p, ch.VerdictText())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d slower, %d faster (Mann-Whitney U test p <= %.3g and median changed by more than %.3g%%), %d ~, %d on one side only, %d skipped, %d failed, of %d cases\n",
		slower, faster, c.Alpha, 100*c.Threshold, same, one, skipped, failed, len(c.Changes))
	if err != nil || len(c.Problems) == 0 {
		return err
	}
	fmt.Fprintf(w, "the new report cannot vouch for %d cases or devices:\n", len(c.Problems))
	for i, p := range c.Problems {
		if i == bench.MaxProblemsShown {
			_, err = fmt.Fprintf(w, "  and %d more (--json lists them all)\n", len(c.Problems)-i)
			break
		}
		_, err = fmt.Fprintf(w, "  %s\n", p)
	}
	return err
}
