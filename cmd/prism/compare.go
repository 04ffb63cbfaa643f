package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/render"
)

type compareOptions struct {
	threshold float64
	alpha     float64
	failOnReg bool
	outputFlags
	inputFlags
}

func newCompareCmd() *cobra.Command {
	opts := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare OLD NEW",
		Short: "Compare two bench reports case by case: faster, slower or ~, with a p-value",
		Long: `Match the results of two 'prism bench --json' reports by device ID, case and size,
and decide for each whether it got slower, faster or stayed the same (~), the way
benchstat does: a Mann-Whitney U test over the per-run times the reports keep
(golang.org/x/perf/benchmath, benchstat's own statistics) at level --alpha.

Each line shows both medians, the ratio new/old (above 1 is slower), its confidence
interval at 1 - alpha (Moses' interval, the one that goes with the U test), the p-value
with the number of runs on each side, and the verdict. A case is slower or faster when
p <= --alpha and the medians differ by more than --threshold (0 flags every significant
change, as benchstat does).

The U test needs enough runs to ever reach significance: with fewer than 4 runs a side
at alpha 0.05, no change can be significant and the verdict says so:
"~ (need >= 4 samples)". Run 'prism bench --count 10' for decisions you can trust.
Reports without per-run samples (from before schema 1) are compared by their [min, max]
ranges instead, and the note says so. Cases present in one report only are listed as
"only old" or "only new", cases that failed on either side as "failed".

OLD and NEW are report files, or runs of the results store named by a run reference
(` + refForms + `): 'prism compare @previous @last' compares the last two runs. Where a
device's fingerprint differs between the two (another driver, clock, host CPU or
environment), a note on stderr says so, and what differs, before the table.

Output: a table, or --json; -o FILE writes it to FILE instead (replaced whole, or left as
it was on error).

The new report must vouch for every case of the old one: a case missing from it, one
that failed to run, differed from the reference, has no valid device time, or was
skipped where the old report ran it, a device that failed, or a report without results
are listed under the table ("the new report cannot vouch for ...").

With --fail-on-regression, exits with code 1 when a case is slower or when any such
problem is listed, and the message says which. Files that are not reports (null, {},
newer schemas, larger than --max-input) are errors. --threshold must lie in [0, 1)
and --alpha in (0, 1): a NaN or infinite value is a usage error (exit code 2).`,
		Example: `  prism compare before.json after.json
  prism compare @previous @last            # the last two runs of the results store
  prism compare baseline:main @last --fail-on-regression
  prism compare --threshold 0 --alpha 0.01 before.json after.json
  prism compare --fail-on-regression main.json branch.json   # in CI
  prism compare --json before.json after.json | jq '.changes[] | select(.verdict == "slower")'`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return compareRun(cmd, opts, args[0], args[1])
		},
	}
	f := cmd.Flags()
	f.Float64Var(&opts.threshold, "threshold", bench.DefaultThreshold, "smallest relative change of the median that is flagged (0.05 is 5%; 0: every significant change)")
	f.Float64Var(&opts.alpha, "alpha", bench.DefaultAlpha, "significance level of the Mann-Whitney U test")
	f.BoolVar(&opts.failOnReg, "fail-on-regression", false, "exit non-zero when any case is flagged slower, or the new report lacks, failed or has no valid time for a case")
	opts.add(f, "json")
	opts.addInput(f)
	return cmd
}

func compareRun(cmd *cobra.Command, opts *compareOptions, oldPath, newPath string) error {
	if err := opts.check(cmd.Flags()); err != nil {
		return err
	}
	if err := opts.notOver(oldPath, newPath); err != nil {
		return err
	}
	copt := bench.CompareOptions{Threshold: opts.threshold, Alpha: opts.alpha}
	if !(opts.alpha > 0 && opts.alpha < 1) { // 0 would mean the default to Compare
		return usageError{fmt.Errorf("--alpha %v must lie strictly between 0 and 1", opts.alpha)}
	}
	if err := copt.Validate(); err != nil {
		return usageError{fmt.Errorf("--threshold %v must be at least 0 and below %v (a relative change: 0.05 is 5%%)", opts.threshold, bench.MaxThreshold)}
	}
	old, err := opts.readReports(cmd, oldPath)
	if err != nil {
		return err
	}
	cur, err := opts.readReports(cmd, newPath)
	if err != nil {
		return err
	}
	writeUnlikeNote(cmd.ErrOrStderr(), oldPath, newPath, old, cur)
	cmp := bench.Compare(old, cur, copt)
	err = opts.write(cmd, func(out io.Writer) error {
		if opts.json {
			return writeJSON(out, cmp)
		}
		return render.Comparison(out, cmp)
	})
	if err != nil {
		return err
	}
	if opts.failOnReg {
		if err := cmp.Gate(); err != nil {
			return fmt.Errorf("%s against %s: %w", newPath, oldPath, err)
		}
	}
	return nil
}
