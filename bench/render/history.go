package render

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/prism-compute/prism/bench/internal/term"
	"github.com/prism-compute/prism/engine"
)

// History is a chart of cases over runs: one line per series (a case on a device, in one
// variant and size), a point per run with its median and a bar from its min to its max.
type History struct {
	Title string
	// Runs label the runs across, oldest first, on one line each ("42 3f9c2a1": the run
	// and its commit).
	Runs   []string
	Series []HistorySeries
}

// HistorySeries is one line of a History chart.
type HistorySeries struct {
	Name   string // "stream/triad/float32 on opencl:0:0 (portable, 1M)"
	Points []HistoryPoint
}

// HistoryPoint is a series' result in one run: Run indexes History.Runs.
type HistoryPoint struct {
	Run              int
	Median, Min, Max time.Duration
}

// historyHeight is the height of a history chart's plot, without its legend.
const historyHeight = vg.Length(360)

// SaveHistory writes the chart of h to path, in the format its extension names (see
// PlotFormats), whole or not at all.
func SaveHistory(path string, h History) error {
	if _, err := PlotFormat(path); err != nil {
		return err
	}
	ch, err := historyChart(h)
	if err != nil {
		return err
	}
	return ch.save(path)
}

// historyChart lays out h: time up (in the unit that suits its longest time), the runs
// across.
func historyChart(h History) (*chart, error) {
	points := 0
	var longest time.Duration
	for _, s := range h.Series {
		for _, p := range s.Points {
			if p.Run < 0 || p.Run >= len(h.Runs) {
				return nil, fmt.Errorf("bench: history point of %s at run %d of %d: %w", term.Safe(s.Name), p.Run, len(h.Runs), engine.ErrInvalidArg)
			}
			points++
			longest = max(longest, p.Max, p.Median)
		}
	}
	if points == 0 {
		return nil, fmt.Errorf("bench: no timed result to chart: %w", engine.ErrInvalidArg)
	}
	unit, name := timeUnit(longest)
	p := plot.New()
	p.Title.Text = term.Safe(h.Title)
	p.Title.TextStyle = textStyle(12, true, colorText)
	p.X.Label.Text = "run (oldest first)"
	p.Y.Label.Text = "time per run (" + name + "): median, and min to max"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle = textStyle(9, false, colorMuted)
		a.Tick.Label = textStyle(8, false, colorText)
		a.LineStyle.Color = colorAxis
		a.Tick.LineStyle.Color = colorAxis
	}
	p.Y.Min = 0
	p.Y.Max = float64(longest) / float64(unit) * (1.08 + 0.05*float64(len(h.Series))) // room for the legend above the lines
	p.X.Min, p.X.Max = -0.5, float64(len(h.Runs))-0.5
	p.X.Tick.Marker = runTicks(h.Runs)
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle = textStyle(8, false, colorText)
	for i, s := range h.Series {
		if len(s.Points) == 0 {
			continue
		}
		pts := errPoints{XYs: make(plotter.XYs, len(s.Points)), YErrors: make(plotter.YErrors, len(s.Points))}
		for j, pt := range s.Points {
			med := float64(pt.Median) / float64(unit)
			pts.XYs[j] = plotter.XY{X: float64(pt.Run), Y: med}
			pts.YErrors[j].Low = med - float64(pt.Min)/float64(unit)
			pts.YErrors[j].High = float64(pt.Max)/float64(unit) - med
		}
		col := seriesColor(i)
		l, sc, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		l.Color, l.Width = col, 1.5
		sc.Color, sc.Shape, sc.Radius = col, draw.CircleGlyph{}, 2.5
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		bars.Color, bars.CapWidth = col, 5
		p.Add(l, sc, bars)
		p.Legend.Add(term.Safe(s.Name), l, sc)
	}
	height := historyHeight + vg.Length(12*len(h.Series))
	return &chart{w: chartWidth, h: height, draw: func(dc draw.Canvas) {
		p.Draw(draw.Crop(dc, chartMargin, -chartMargin, chartMargin, -chartMargin))
	}}, nil
}

// errPoints are a series' points with their bars, for plotter.NewYErrorBars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// timeUnit returns the unit in which d reads best, and its name.
func timeUnit(d time.Duration) (time.Duration, string) {
	switch {
	case d >= 10*time.Second:
		return time.Second, "s"
	case d >= 10*time.Millisecond:
		return time.Millisecond, "ms"
	case d >= 10*time.Microsecond:
		return time.Microsecond, "µs"
	}
	return time.Nanosecond, "ns"
}

// runTicks labels the runs across, at most about 16 of them.
func runTicks(runs []string) plot.Ticker {
	step := int(math.Ceil(float64(len(runs)) / 16))
	ticks := make([]plot.Tick, 0, len(runs))
	for i, r := range runs {
		t := plot.Tick{Value: float64(i)}
		if i%step == 0 {
			t.Label = term.Safe(r)
		}
		ticks = append(ticks, t)
	}
	return plot.ConstantTicks(ticks)
}
