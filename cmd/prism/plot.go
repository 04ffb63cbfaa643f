package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench/render"
)

type plotOptions struct {
	output   string
	metric   string
	roofline bool
	inputFlags
}

func newPlotCmd() *cobra.Command {
	opts := &plotOptions{}
	cmd := &cobra.Command{
		Use:   "plot RESULTS [MORE...] -o CHART",
		Short: "Draw a bench report: bars per case and device, or a roofline per device",
		Long: `Draw a 'prism bench --json' report as a chart, 1100 pixels wide. Each argument is a
report file or a run of the results store named by a run reference (@last, a run ID, a
commit prefix, a baseline: see 'prism help runs'); 'prism history OP --plot' charts a case
over runs.

The default chart has one row per case and size, grouped under a band per family, and one
horizontal bar per device (the legend names them). It grows taller with the number of
rows. --metric chooses what the bars show:

  roof    the fraction of the roofline ceiling, in % (default): achieved over
          min(FMA peak, copy bandwidth x FLOP/byte), both measured on the device in the
          same run; a dashed line marks 100%
  vendor  speed relative to the vendor library on the same device: vendor time / prism
          time, above 1 is faster; the baselines are the results of a pseudo-device
          "vendor:<ID>" (vendor:cuda:0 for cuda:0); devices and cases without one are
          left out, and a report with none is an error
  time    the median time per run, log scale
  rate    GB/s, or GFLOP/s for cases compute-bound on some device (the row says so),
          log scale

The names of earlier versions still work but are deprecated: fraction (now roof), gbs and
gflops (both now rate).

--roofline draws instead one log-log roofline per device, one below the other in the same
image: arithmetic intensity (FLOP/byte) across, GFLOP/s up, the copy-bandwidth slope and
the fp32 (solid) and fp64 (dashed) peaks as lines, each case a numbered point with a key
below. Cases whose model does no FLOPs (copies, sorts, histograms) have no intensity: they
are left out and listed under the chart.

The format follows the extension of -o: ` + "." + strings.Join(render.PlotFormats, ", .") + `. 'prism report --html' puts
both charts and the tables in one page.`,
		Example: `  prism plot results.json -o chart.svg
  prism plot results.json -o times.png --metric time
  prism plot results.json -o vs-vendor.svg --metric vendor
  prism plot results.json vendor.json -o vs-vendor.svg --metric vendor   # scripts/vendor.py baselines
  prism plot results.json -o roofline.png --roofline
  prism plot @last -o last.svg                        # the last run of the results store`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return plotRun(cmd, opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.output, "output", "o", "", "chart file to write (.svg, .png or .pdf)")
	f.StringVar(&opts.metric, "metric", render.MetricRoof, "what the bars show: "+strings.Join(render.PlotMetrics, ", ")+" (fraction, gbs, gflops: deprecated aliases)")
	f.BoolVar(&opts.roofline, "roofline", false, "draw one roofline chart per device instead of the bars")
	opts.addInput(f)
	return cmd
}

func plotRun(cmd *cobra.Command, opts *plotOptions, in []string) error {
	if opts.output == "" {
		return usageError{fmt.Errorf("-o CHART is required (.%s)", strings.Join(render.PlotFormats, ", ."))}
	}
	if _, err := render.PlotFormat(opts.output); err != nil {
		return usageError{err}
	}
	if err := notOver("-o", opts.output, in...); err != nil {
		return err
	}
	metric, err := render.PlotMetric(opts.metric)
	if err != nil {
		return usageError{err}
	}
	if opts.roofline && cmd.Flags().Changed("metric") {
		return usageError{fmt.Errorf("--roofline and --metric exclude each other")}
	}
	if alias, ok := render.PlotMetricAliases[opts.metric]; ok {
		fmt.Fprintf(cmd.ErrOrStderr(), "prism plot: --metric %s is deprecated: use --metric %s\n", opts.metric, alias)
	}
	rep, err := opts.readReports(cmd, in...)
	if err != nil {
		return err
	}
	if opts.roofline {
		return render.SaveRoofline(opts.output, rep)
	}
	return render.SavePlot(opts.output, rep, metric)
}
