package main

import (
	"fmt"
	"io"

	"github.com/prism-compute/prism/bench"
	"github.com/spf13/cobra"
)

type reportOptions struct {
	json, csv, markdown, benchstat bool
	baseline                       string
}

func newReportCmd() *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report RESULTS.json",
		Short: "Print a saved bench report as a table, Markdown, CSV or benchstat input",
		Long: `Read a 'prism bench --json' report and print it again in another form: the terminal
table (default), --markdown, --csv, --benchstat or --json (normalized to the current
schema). Run the benchmark once, then render it as often as needed.`,
		Example: `  prism bench --all-devices --json > run.json
  prism report run.json --markdown --baseline cuda:0 > run.md
  prism report run.json --benchstat > run.txt`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, b := range []bool{opts.json, opts.csv, opts.markdown, opts.benchstat} {
				if b {
					n++
				}
			}
			if n > 1 {
				return usageError{fmt.Errorf("--json, --csv, --markdown and --benchstat exclude each other")}
			}
			rep, err := bench.ReadReportFile(args[0])
			if err != nil {
				return err
			}
			return writeReport(cmd.OutOrStdout(), rep, opts.json, opts.csv, opts.markdown, opts.benchstat, opts.baseline)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the report as JSON")
	f.BoolVar(&opts.csv, "csv", false, "print the results as CSV")
	f.BoolVar(&opts.markdown, "markdown", false, "print the report as Markdown")
	f.BoolVar(&opts.benchstat, "benchstat", false, "print the results in Go benchmark format")
	f.StringVar(&opts.baseline, "baseline", "", "device ID the ratios compare with (default: the first device)")
	return cmd
}

// writeReport prints rep in the form the flags choose (the table when none is set).
func writeReport(w io.Writer, rep *bench.Report, json, csv, markdown, benchstat bool, baseline string) error {
	switch {
	case json:
		return rep.WriteJSON(w)
	case csv:
		return rep.WriteCSV(w)
	case markdown:
		return rep.WriteMarkdown(w, baseline)
	case benchstat:
		return rep.WriteBenchstat(w)
	}
	return rep.WriteTable(w, baseline)
}
