package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prism-compute/prism/bench"
	"github.com/spf13/cobra"
)

type plotOptions struct {
	output string
	metric string
}

func newPlotCmd() *cobra.Command {
	opts := &plotOptions{}
	cmd := &cobra.Command{
		Use:   "plot RESULTS.json -o CHART",
		Short: "Draw a bench report as grouped bars: one group per case, one bar per device",
		Long: `Draw a 'prism bench --json' report as a bar chart: one group of bars per case and
size, one bar per device, showing --metric: the fraction of the roofline ceiling (in %,
the default), the bandwidth (gbs) or the FLOP rate (gflops). The title carries the date
and commit of the run.

The format follows the extension of -o: ` + "." + strings.Join(bench.PlotFormats, ", .") + `.`,
		Example: `  prism plot results.json -o chart.svg
  prism plot results.json -o bandwidth.png --metric gbs`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return plotRun(cmd, opts, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.output, "output", "o", "", "chart file to write (.svg, .png or .pdf)")
	f.StringVar(&opts.metric, "metric", "fraction", "what the bars show: "+strings.Join(bench.PlotMetrics, ", "))
	return cmd
}

func plotRun(cmd *cobra.Command, opts *plotOptions, in string) error {
	if opts.output == "" {
		return usageError{fmt.Errorf("-o CHART is required (.%s)", strings.Join(bench.PlotFormats, ", ."))}
	}
	if _, err := bench.PlotFormat(opts.output); err != nil {
		return usageError{err}
	}
	if !slices.Contains(bench.PlotMetrics, opts.metric) {
		return usageError{fmt.Errorf("--metric %q: use one of %s", opts.metric, strings.Join(bench.PlotMetrics, ", "))}
	}
	rep, err := bench.ReadReportFile(in)
	if err != nil {
		return err
	}
	return rep.SavePlot(opts.output, opts.metric)
}
