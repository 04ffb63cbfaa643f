package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/render"
)

type reportOptions struct {
	html     string
	baseline string
	wide     bool
	outputFlags
	inputFlags
}

func newReportCmd() *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report RESULTS [MORE...]",
		Short: "Print a saved bench report as a table, Markdown, CSV, benchstat input or an HTML page",
		Long: `Read a 'prism bench --json' report and print it again in another form: the terminal
table (default), --markdown (--md), --csv, --benchstat or --json (normalized to the
current schema), on stdout or with -o FILE into FILE (replaced whole, or left as it was
on error). Run the benchmark once, then render it as often as needed. Every kind of
report reads: one device or several, --split and collective runs, scripts/vendor.py's.

The table fits 120 columns: where the devices side by side would be wider, the rate
columns are left out (the time and the fraction of the roof stay), then the devices are
shown in blocks one below the other; a line under the table says so. --wide shows every
column on one line however wide. Each table has a legend of what its cells say.

Several files are merged, their devices side by side; the splits and collectives of a
--split or collective report join the cases of the same devices from another report of
the same host. A report of scripts/vendor.py (pseudo-device vendor:cuda:0) puts its
baselines on the rows of the same case and size, as one time column, and gives each
device of the same ID or name a "vs vendor" column: vendor time / Prism time for the
variant of the row, against the faster vendor figure where the run's own --vendor
baseline and vendor.py's both timed the case. The same device with results in two files, or the same split or
collective twice, is an error: compare two runs with 'prism compare'.

--html FILE writes one self-contained HTML page instead (- for stdout): the run's
metadata (date, commit, command, host), the devices with their measured ceilings, the
chart of the fraction of the roofline per case and device (and of the speed relative to
the vendor library when the report has vendor baselines), one roofline chart per device,
and the results table with the columns of --markdown. The charts are inline SVG, the
style inline CSS; the page loads nothing from the network, so it can be mailed or
attached as it is.

Each argument is a report file or a run of the results store named by a run reference
(` + refForms + `).

Each file must be a report (schema 1, or a report from before schema 1) with at least
one device: null, {} and newer schemas are errors. A file larger than --max-input
(256M) is refused before it is read; raise the limit for a larger one. Text from the
report (names, errors) is printed with control characters and bidirectional controls
escaped ("\x1b", "\u202e"). A case whose device times were not valid (a time of zero
from the driver) shows INVALID, with the reason below the table.`,
		Example: `  prism bench --all-devices --json > run.json
  prism report run.json --markdown --baseline cuda:0 > run.md
  prism report run.json --benchstat -o run.txt
  prism report run.json --html run.html
  prism report @last --markdown            # the last run of the results store
  prism report run.json vendor.json --html run.html   # with scripts/vendor.py's baselines`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.check(cmd.Flags(), "html"); err != nil {
				return err
			}
			if opts.html != "" && opts.out != "" {
				return usageError{fmt.Errorf("--html names its own file: --out is for the other formats")}
			}
			if err := opts.notOver(args...); err != nil {
				return err
			}
			if err := notOver("--html", opts.html, args...); err != nil {
				return err
			}
			rep, err := opts.readReports(cmd, args...)
			if err != nil {
				return err
			}
			if opts.html != "" {
				return writeHTML(cmd, rep, opts.html, opts.baseline)
			}
			return opts.write(cmd, func(w io.Writer) error {
				return writeReport(w, rep, opts.json, opts.csv, opts.markdown, opts.benchstat, render.TableOptions{Baseline: opts.baseline, Wide: opts.wide})
			})
		},
	}
	f := cmd.Flags()
	opts.add(f, "json", "csv", "markdown", "benchstat")
	f.StringVar(&opts.html, "html", "", "write a self-contained HTML page with the charts to `FILE` (- for stdout)")
	f.StringVar(&opts.baseline, "baseline", "", "device ID the ratios compare with (default: the first device)")
	f.BoolVar(&opts.wide, "wide", false, "show every column of the table on one line, however wide (default: fit 120 columns)")
	opts.addInput(f)
	return cmd
}

// writeHTML writes the HTML page of rep to path, or to stdout for "-".
func writeHTML(cmd *cobra.Command, rep *bench.Report, path, baseline string) (err error) {
	if path == "-" {
		return render.HTML(cmd.OutOrStdout(), rep, baseline)
	}
	var buf bytes.Buffer
	if err := render.HTML(&buf, rep, baseline); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}

// writeReport prints rep in the form the flags choose (the table when none is set, as
// table asks).
func writeReport(w io.Writer, rep *bench.Report, json, csv, markdown, benchstat bool, table render.TableOptions) error {
	switch {
	case json:
		return rep.WriteJSON(w)
	case csv:
		return render.CSV(w, rep)
	case markdown:
		return render.Markdown(w, rep, table.Baseline)
	case benchstat:
		return render.Benchstat(w, rep)
	}
	return render.Table(w, rep, table)
}
