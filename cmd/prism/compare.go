package main

import (
	"fmt"

	"github.com/prism-compute/prism/bench"
	"github.com/spf13/cobra"
)

type compareOptions struct {
	threshold float64
	failOnReg bool
	json      bool
}

func newCompareCmd() *cobra.Command {
	opts := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare OLD.json NEW.json",
		Short: "Compare two bench reports case by case and flag the changes beyond the noise",
		Long: `Match the results of two 'prism bench --json' reports by device ID, case and size,
and print for each the median times, the ratio new/old (above 1 is slower) and its range
from the spreads (new min / old max to new max / old min).

A case is flagged slower or faster when the [min, max] ranges of its times in the two
reports do not overlap and its median changed by more than --threshold. Cases present in
one report only are listed as such.

Exits with code 1 when --fail-on-regression is given and a case is slower.`,
		Example: `  prism compare before.json after.json
  prism compare --threshold 0.10 --fail-on-regression main.json branch.json`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return compareRun(cmd, opts, args[0], args[1])
		},
	}
	f := cmd.Flags()
	f.Float64Var(&opts.threshold, "threshold", bench.DefaultThreshold, "smallest relative change of the median that is flagged (0.05 is 5%)")
	f.BoolVar(&opts.failOnReg, "fail-on-regression", false, "exit non-zero when any case is flagged slower")
	f.BoolVar(&opts.json, "json", false, "print the comparison as JSON")
	return cmd
}

func compareRun(cmd *cobra.Command, opts *compareOptions, oldPath, newPath string) error {
	if opts.threshold < 0 {
		return usageError{fmt.Errorf("--threshold must not be negative")}
	}
	old, err := bench.ReadReportFile(oldPath)
	if err != nil {
		return err
	}
	cur, err := bench.ReadReportFile(newPath)
	if err != nil {
		return err
	}
	cmp := bench.Compare(old, cur, opts.threshold)
	out := cmd.OutOrStdout()
	if opts.json {
		err = writeJSON(out, cmp)
	} else {
		err = cmp.WriteTable(out)
	}
	if err != nil {
		return err
	}
	if n := cmp.Regressions(); opts.failOnReg && n > 0 {
		return fmt.Errorf("%d cases slower than in %s beyond the noise (threshold %.3g%%)", n, oldPath, 100*opts.threshold)
	}
	return nil
}
