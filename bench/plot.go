package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/prism-compute/prism/engine"
)

// PlotFormats are the chart formats WritePlot writes, by file extension.
var PlotFormats = []string{"svg", "png", "pdf"}

// PlotMetrics are the quantities a chart can show.
var PlotMetrics = []string{"fraction", "gbs", "gflops"}

// PlotFormat returns the chart format for a file name from its extension, or an error that
// names the supported ones.
func PlotFormat(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range PlotFormats {
		if ext == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("bench: cannot write a chart as %q (%s): use one of .%s: %w", ext, path, strings.Join(PlotFormats, ", ."), engine.ErrInvalidArg)
}

// metricOf returns the plotted value of a result and the axis label.
func metricOf(metric string) (func(*Result) float64, string, error) {
	switch metric {
	case "", "fraction":
		return func(r *Result) float64 { return 100 * r.Fraction }, "% of roofline ceiling (memory or compute)", nil
	case "gbs":
		return func(r *Result) float64 { return r.GBs }, "GB/s (bytes read + written)", nil
	case "gflops":
		return func(r *Result) float64 { return r.GFLOPs }, "GFLOP/s", nil
	}
	return nil, "", fmt.Errorf("bench: unknown metric %q: use one of %s: %w", metric, strings.Join(PlotMetrics, ", "), engine.ErrInvalidArg)
}

// Plot returns a chart of the report: grouped bars, one group per case and size, one bar per
// device, showing metric ("fraction" of the ceiling in percent, "gbs" or "gflops"); a failed
// or missing case has no bar. Its title carries the date and commit.
func (r *Report) Plot(metric string) (*plot.Plot, vg.Length, vg.Length, error) {
	val, label, err := metricOf(metric)
	if err != nil {
		return nil, 0, 0, err
	}
	keys := r.rows()
	if len(keys) == 0 || len(r.Devices) == 0 {
		return nil, 0, 0, fmt.Errorf("bench: the report has no results to plot: %w", engine.ErrInvalidArg)
	}
	p := plot.New()
	commit := r.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if commit == "" {
		commit = "no commit"
	}
	p.Title.Text = fmt.Sprintf("prism bench %s, %s (%s)", r.Prism, r.Date.Format("2006-01-02 15:04 MST"), commit)
	p.Y.Label.Text = label
	p.Y.Min = 0
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Case + " " + FormatSize(k.Size)
	}
	n := len(r.Devices)
	top := 0.0
	groupWidth := vg.Points(math.Min(60, 14*float64(n)+6))
	barWidth := groupWidth / vg.Length(n+1)
	for i := range r.Devices {
		d := &r.Devices[i]
		vals := make(plotter.Values, len(keys))
		for j, k := range keys {
			if res := d.result(k); res != nil && res.OK() {
				if v := val(res); !math.IsNaN(v) && !math.IsInf(v, 0) {
					vals[j] = v
					top = max(top, v)
				}
			}
		}
		bc, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			return nil, 0, 0, err
		}
		bc.LineStyle.Width = 0
		bc.Color = plotutil.Color(i)
		bc.Offset = barWidth * (vg.Length(i) - vg.Length(n-1)/2)
		p.Add(bc)
		p.Legend.Add(fmt.Sprintf("%s (%s)", d.Device.ID, d.Device.Name), bc)
	}
	if metric == "" || metric == "fraction" {
		roof := plotter.NewFunction(func(float64) float64 { return 100 })
		roof.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(roof)
	}
	if metric == "" || metric == "fraction" {
		top = max(top, 100)
	}
	// Headroom for the legend (top right, one line per device) above the tallest bar, and
	// half a group of margin left and right.
	p.Legend.Top = true
	p.Y.Max = top * (1.15 + 0.08*float64(n))
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(keys))-0.4
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.Add(plotter.NewGrid())
	w := vg.Length(math.Max(6*float64(vg.Inch), float64(groupWidth+vg.Points(12))*float64(len(keys))+float64(vg.Inch)))
	h := 5 * vg.Inch
	return p, w, h, nil
}

// WritePlot writes the chart of the report in format (see PlotFormats) to w.
func (r *Report) WritePlot(w io.Writer, format, metric string) error {
	p, width, height, err := r.Plot(metric)
	if err != nil {
		return err
	}
	wt, err := p.WriterTo(width, height, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// SavePlot writes the chart to path, in the format its extension names.
func (r *Report) SavePlot(path, metric string) (err error) {
	format, err := PlotFormat(path)
	if err != nil {
		return err
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
	return r.WritePlot(f, format, metric)
}
