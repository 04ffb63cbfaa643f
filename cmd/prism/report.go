package main

import (
	"fmt"
	"io"
	"os"

	"github.com/prism-compute/prism/bench"
	"github.com/spf13/cobra"
)

type reportOptions struct {
	json, csv, markdown, benchstat bool
	html                           string
	baseline                       string
}

func newReportCmd() *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report RESULTS.json [MORE.json...]",
		Short: "Print a saved bench report as a table, Markdown, CSV, benchstat input or an HTML page",
		Long: `Read a 'prism bench --json' report and print it again in another form: the terminal
table (default), --markdown, --csv, --benchstat or --json (normalized to the current
schema). Run the benchmark once, then render it as often as needed. Several files are
merged, their devices side by side: a report of scripts/vendor.py (pseudo-device
vendor:cuda:0) gives the cases no callable library covers their "vs vendor" baseline.

--html FILE writes one self-contained HTML page instead (- for stdout): the run's
metadata (date, commit, command, host), the devices with their measured ceilings, the
chart of the fraction of the roofline per case and device (and of the speed relative to
the vendor library when the report has vendor baselines), one roofline chart per device,
and the results table with the columns of --markdown. The charts are inline SVG, the
style inline CSS; the page loads nothing from the network, so it can be mailed or
attached as it is.`,
		Example: `  prism bench --all-devices --json > run.json
  prism report run.json --markdown --baseline cuda:0 > run.md
  prism report run.json --benchstat > run.txt
  prism report run.json --html run.html
  prism report run.json vendor.json --html run.html   # with scripts/vendor.py's baselines`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, b := range []bool{opts.json, opts.csv, opts.markdown, opts.benchstat, opts.html != ""} {
				if b {
					n++
				}
			}
			if n > 1 {
				return usageError{fmt.Errorf("--json, --csv, --markdown, --benchstat and --html exclude each other")}
			}
			rep, err := bench.ReadReportFiles(args...)
			if err != nil {
				return err
			}
			if opts.html != "" {
				return writeHTML(cmd, rep, opts.html, opts.baseline)
			}
			return writeReport(cmd.OutOrStdout(), rep, opts.json, opts.csv, opts.markdown, opts.benchstat, opts.baseline)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the report as JSON")
	f.BoolVar(&opts.csv, "csv", false, "print the results as CSV")
	f.BoolVar(&opts.markdown, "markdown", false, "print the report as Markdown")
	f.BoolVar(&opts.benchstat, "benchstat", false, "print the results in Go benchmark format")
	f.StringVar(&opts.html, "html", "", "write a self-contained HTML page with the charts to `FILE` (- for stdout)")
	f.StringVar(&opts.baseline, "baseline", "", "device ID the ratios compare with (default: the first device)")
	return cmd
}

// writeHTML writes the HTML page of rep to path, or to stdout for "-".
func writeHTML(cmd *cobra.Command, rep *bench.Report, path, baseline string) (err error) {
	if path == "-" {
		return rep.WriteHTML(cmd.OutOrStdout(), baseline)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return rep.WriteHTML(f, baseline)
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
