package render

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/internal/term"
	"github.com/prism-compute/prism/engine"
)

// Bar chart metrics.
const (
	// MetricRoof is the fraction of the roofline ceiling, in percent: achieved over
	// min(peak of the type, copy bandwidth x FLOP/byte) on the same device.
	MetricRoof = "roof"
	// MetricVendor is the speed relative to the vendor library on the same device and case:
	// vendor time over prism time, so above 1 is faster than the vendor (see VendorBaseline).
	MetricVendor = "vendor"
	// MetricTime is the median time, on a log axis.
	MetricTime = "time"
	// MetricRate is GB/s, or GFLOP/s for a case compute-bound on any device, on a log axis.
	MetricRate = "rate"
)

// PlotMetrics are the quantities the bar chart shows.
var PlotMetrics = []string{MetricRoof, MetricVendor, MetricTime, MetricRate}

// PlotMetricAliases are earlier metric names and the metric each now selects.
var PlotMetricAliases = map[string]string{"fraction": MetricRoof, "gbs": MetricRate, "gflops": MetricRate}

// PlotMetric returns the metric a name selects: one of PlotMetrics, an alias (see
// PlotMetricAliases), or "" for MetricRoof. Any other name is an error that lists them.
func PlotMetric(name string) (string, error) {
	if name == "" {
		return MetricRoof, nil
	}
	for _, m := range PlotMetrics {
		if name == m {
			return m, nil
		}
	}
	if m, ok := PlotMetricAliases[name]; ok {
		return m, nil
	}
	return "", fmt.Errorf("bench: unknown metric %q: use one of %s: %w", name, strings.Join(PlotMetrics, ", "), engine.ErrInvalidArg)
}

// barMetric describes how a metric is drawn.
type barMetric struct {
	title    string
	axis     string
	log      bool
	ref      float64 // a reference line (100% of the roof, 1x the vendor), 0: none
	refLabel string
	format   func(float64) string // the value at the end of a bar
	ticks    func(float64) string // tick labels
	note     string
}

func barMetricOf(m string) barMetric {
	switch m {
	case MetricVendor:
		return barMetric{
			title: "Speed relative to the vendor library", axis: "vendor time / prism time (above 1: faster than the vendor)",
			ref: 1, refLabel: "vendor", format: func(v float64) string { return fmt.Sprintf("%.2fx", v) },
			ticks: func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) + "x" },
			note:  "Each bar compares the same case on the same device with the vendor library's time (cuBLAS, cuFFT, ...). Cases without a vendor baseline are left out.",
		}
	case MetricTime:
		return barMetric{
			title: "Median time per run", axis: "median time per run (log scale; shorter is better)", log: true,
			format: func(v float64) string { return bench.FormatDuration(time.Duration(v * 1e9)) }, ticks: durationFormat,
			note: "Device time measured with events, median of the timed runs. No bar: the case was skipped or failed on that device.",
		}
	case MetricRate:
		return barMetric{
			title: "Achieved rate", axis: "GB/s (bytes read + written), or GFLOP/s where the row says so (log scale)", log: true,
			format: term.Float, ticks: siFormat,
			note: "GFLOP/s for cases compute-bound on some device, GB/s for the others, from the op's model of its work over the median time. No bar: skipped or failed.",
		}
	}
	return barMetric{
		title: "Fraction of the roofline ceiling", axis: "% of the roofline ceiling: achieved / min(FMA peak, copy bandwidth × FLOP/byte)",
		ref: 100, refLabel: "roof", format: func(v float64) string { return fmt.Sprintf("%.0f%%", v) },
		ticks: func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) + "%" },
		note:  "Ceilings measured on each device in the same run: device-to-device copy bandwidth and the FMA peak of the case's type. Above 100%: the working set stays in a cache. No bar: skipped or failed.",
	}
}

// barRow is one row of the bar chart: a case at a size, one value per series (NaN: none).
type barRow struct {
	family string
	label  string
	vals   []float64
}

// barData collects the rows of the chart of metric m, grouped by family in order of first
// appearance, and the devices (indices into r.Devices) that are its series.
func (r view) barData(m string) (series []int, rows []barRow, err error) {
	ix := r.index()
	for i := range r.Devices {
		if m == MetricVendor && !ix.hasVendor(i) {
			continue
		}
		if m == MetricRoof && r.Devices[i].Ceilings.CopyGBs <= 0 {
			continue // no ceilings measured (a vendor pseudo-device): no roof to be a fraction of
		}
		series = append(series, i)
	}
	keys := ix.rows
	sizes := ix.sizes()
	var families []string
	byFamily := map[string][]barRow{}
	for _, k := range keys {
		row := barRow{vals: make([]float64, len(series))}
		unit := "GB/s"
		for _, d := range series {
			if res := ix.result(d, k); res != nil {
				if row.family == "" {
					row.family = res.Family
				}
				if res.OK() && res.Bound == bench.BoundCompute {
					unit = "GFLOP/s"
				}
			}
		}
		if row.family == "" {
			row.family, _, _ = strings.Cut(k.Case, "/")
		}
		row.label = strings.TrimPrefix(k.Case, row.family+"/")
		if len(sizes) > 1 {
			row.label += " " + bench.SizeText(k.Size, k.Dims)
		}
		if m == MetricRate && unit == "GFLOP/s" {
			row.label += " (GFLOP/s)"
		}
		found := false
		for j, d := range series {
			row.vals[j] = math.NaN()
			res := ix.result(d, k)
			if res == nil || !res.OK() || (m == MetricRoof && (res.Latency() || (res.Link && res.Bound == bench.BoundMemory))) {
				continue // a latency and a copy over the host link have no roof
			}
			v := math.NaN()
			switch m {
			case MetricRoof:
				v = 100 * res.Fraction
			case MetricTime:
				v = res.Stats.Median.Seconds()
			case MetricRate:
				v = res.GBs
				if unit == "GFLOP/s" {
					v = res.GFLOPs
				}
			case MetricVendor:
				if b := ix.vendorBaseline(d, res); b != nil && res.Stats.Median > 0 {
					v = float64(b.Stats.Median) / float64(res.Stats.Median)
				}
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || (v <= 0 && (m != MetricRoof)) {
				continue
			}
			row.vals[j], found = v, true
		}
		if m == MetricVendor && !found {
			continue
		}
		if _, ok := byFamily[row.family]; !ok {
			families = append(families, row.family)
		}
		byFamily[row.family] = append(byFamily[row.family], row)
	}
	for _, f := range families {
		rows = append(rows, byFamily[f]...)
	}
	n := 0
	for _, row := range rows {
		for _, v := range row.vals {
			if !math.IsNaN(v) {
				n++
			}
		}
	}
	switch {
	case n > 0:
		return series, rows, nil
	case m == MetricVendor:
		return nil, nil, fmt.Errorf("bench: the report has no vendor baselines (results of a device %s<ID>): %w", bench.VendorPrefix, engine.ErrInvalidArg)
	}
	return nil, nil, fmt.Errorf("bench: the report has no results to plot: %w", engine.ErrInvalidArg)
}

// barChart lays out the bar chart of metric m: one row per case and size, grouped under a
// band per family, one horizontal bar per device, the header (title, run, legend) above and
// the axis labels at the top and bottom.
func (r view) barChart(metric string) (*chart, error) {
	m, err := PlotMetric(metric)
	if err != nil {
		return nil, err
	}
	bm := barMetricOf(m)
	series, rows, err := r.barData(m)
	if err != nil {
		return nil, err
	}
	var legend []string
	for _, d := range series {
		dev := r.Devices[d].Device
		label := dev.ID
		if dev.Name != "" {
			label += " · " + dev.Name
		}
		if b := r.Devices[d].Backend; b != "" && !strings.HasPrefix(dev.ID, b) {
			label += " (" + b + ")"
		}
		legend = append(legend, label)
	}
	return r.drawBars(bm, legend, rows)
}

// drawBars lays out a bar chart of bm: one row per rows, grouped under a band per family,
// one bar per series (named by legend), the header (title, run, legend) above and the
// axis labels at the top and bottom.
func (r view) drawBars(bm barMetric, legend []string, rows []barRow) (*chart, error) {
	n := len(legend)
	barT := vg.Length(math.Max(3.5, math.Min(10, 16/float64(n))))
	pitch := max(vg.Length(14), vg.Length(n)*barT+5)
	const bandPitch = vg.Length(18)
	valueLabels := barT >= 7

	h := &header{title: bm.title, subtitle: r.runLine()}
	for j, label := range legend {
		h.legend = append(h.legend, legendEntry{seriesColor(j), label})
	}
	inner := chartWidth - 2*chartMargin

	// The label column is as wide as the longest label, within bounds.
	labelW := vg.Length(0)
	top := 0.0
	lo := math.Inf(1)
	for _, row := range rows {
		labelW = max(labelW, labelStyle.Width(row.label))
		for _, v := range row.vals {
			if !math.IsNaN(v) {
				top, lo = math.Max(top, v), math.Min(lo, v)
			}
		}
	}
	labelW = min(max(labelW+12, 110), inner*0.42)

	sc := axisScale{log: bm.log, format: bm.ticks}
	switch {
	case bm.log:
		sc.min, sc.max = decadeBelow(lo), decadeAbove(top*1.01)
		if sc.max <= sc.min {
			sc.max = sc.min * 10
		}
	default:
		sc.min, sc.max = 0, math.Max(bm.ref, top)*1.04
		if valueLabels {
			sc.max *= 1.08
		}
	}

	if !sc.usable() {
		return nil, fmt.Errorf("bench: the values to chart span %g to %g, beyond what an axis can draw: %w", lo, top, engine.ErrInvalidArg)
	}
	notes := wrapText(noteStyle, bm.note, inner)
	headerH := h.height(inner)
	rowsH := vg.Length(0)
	family := ""
	for _, row := range rows {
		if row.family != family {
			family = row.family
			rowsH += bandPitch
		}
		rowsH += pitch
	}
	const tickStrip = 16
	axisH := tickStrip + vg.Length(18)
	notesH := vg.Length(len(notes))*12 + 6
	ch := &chart{w: chartWidth, h: chartMargin + headerH + tickStrip + rowsH + axisH + notesH + chartMargin}

	ch.draw = func(c draw.Canvas) {
		left := c.Min.X + chartMargin
		h.draw(c, left, inner)
		x0, x1 := left+labelW, c.Min.X+chartWidth-chartMargin
		sc.lo, sc.hi = x0, x1
		yTop := c.Max.Y - chartMargin - headerH - tickStrip // top of the first row
		yBot := yTop - rowsH

		// Grid, then the tick labels above and below the rows. The reference value gets a
		// labelled tick of its own, and labels too close to it give way.
		major, minor := sc.ticks()
		if bm.ref > 0 {
			xr := sc.at(bm.ref)
			kept := []axisTick{{bm.ref, bm.ticks(bm.ref)}}
			for _, t := range major {
				if x := sc.at(t.v); x < xr-40 || x > xr+40 {
					kept = append(kept, t)
				} else if t.v != bm.ref {
					minor = append(minor, axisTick{v: t.v})
				}
			}
			major = kept
		}
		for _, t := range minor {
			x := sc.at(t.v)
			line(c, colorMinor, 0.5, nil, vg.Point{X: x, Y: yBot}, vg.Point{X: x, Y: yTop})
		}
		for _, t := range major {
			x := sc.at(t.v)
			line(c, colorGrid, 0.7, nil, vg.Point{X: x, Y: yBot}, vg.Point{X: x, Y: yTop})
			c.FillText(aligned(tickStyle, text.XCenter, text.YBottom), vg.Point{X: x, Y: yTop + 4}, t.label)
			c.FillText(aligned(tickStyle, text.XCenter, text.YTop), vg.Point{X: x, Y: yBot - 4}, t.label)
		}
		line(c, colorAxis, 0.8, nil, vg.Point{X: x0, Y: yBot}, vg.Point{X: x0, Y: yTop})
		c.FillText(aligned(labelStyle, text.XCenter, text.YTop), vg.Point{X: (x0 + x1) / 2, Y: yBot - tickStrip - 2}, bm.axis)

		// Rows: a band per family, then per case a label and one bar per series.
		y := yTop
		family := ""
		for _, row := range rows {
			if row.family != family {
				family = row.family
				fillRect(c, colorBand, left, y-bandPitch+2, x1, y-1)
				c.FillText(aligned(bandStyle, text.XLeft, text.YCenter), vg.Point{X: left + 4, Y: y - bandPitch/2 + 0.5}, family)
				y -= bandPitch
			}
			mid := y - pitch/2
			c.FillText(aligned(labelStyle, text.XRight, text.YCenter), vg.Point{X: x0 - 6, Y: mid}, row.label)
			b := mid + vg.Length(n)*barT/2
			for j, v := range row.vals {
				if !math.IsNaN(v) {
					end := sc.at(math.Max(v, sc.min))
					fillRect(c, seriesColor(j), x0, b-barT+0.4, max(end, x0+0.8), b-0.4)
					if valueLabels {
						c.FillText(aligned(textStyle(7.5, false, colorMuted), text.XLeft, text.YCenter), vg.Point{X: end + 3, Y: b - barT/2}, bm.format(v))
					}
				}
				b -= barT
			}
			y -= pitch
		}
		if bm.ref > 0 {
			x := sc.at(bm.ref)
			line(c, colorText, 1, []vg.Length{4, 3}, vg.Point{X: x, Y: yBot}, vg.Point{X: x, Y: yTop})
		}
		ny := yBot - axisH - 2
		for _, l := range notes {
			c.FillText(aligned(noteStyle, text.XLeft, text.YTop), vg.Point{X: left, Y: ny}, l)
			ny -= 12
		}
	}
	return ch, nil
}

// hasResults reports whether a device of the report has results of its own (a report of
// splits or collectives alone has none).
func (r view) hasResults() bool {
	for _, d := range r.Devices {
		if len(d.Results) > 0 {
			return true
		}
	}
	return false
}

// splitChart draws the splits: per split and size, the median time of each device alone
// and of the split, on a log axis.
func (r view) splitChart() (*chart, error) {
	var devs []string
	for _, s := range r.Splits {
		for _, id := range s.Devices {
			if !slices.Contains(devs, id) {
				devs = append(devs, id)
			}
		}
	}
	legend := make([]string, 0, len(devs)+1)
	for _, id := range devs {
		legend = append(legend, term.Safe(r.deviceLabel(id)+" "+id+" alone"))
	}
	legend = append(legend, "split across the devices")
	sizes := map[string]map[int]bool{}
	for _, s := range r.Splits {
		if sizes[s.Case] == nil {
			sizes[s.Case] = map[int]bool{}
		}
		sizes[s.Case][s.Size] = true
	}
	var rows []barRow
	for _, s := range r.Splits {
		family, rest, _ := strings.Cut(s.Case, "/")
		row := barRow{family: family, label: rest, vals: make([]float64, len(legend))}
		if len(sizes[s.Case]) > 1 || len(r.Splits) > 1 {
			row.label += " " + bench.FormatSize(s.Size)
		}
		for j := range row.vals {
			row.vals[j] = math.NaN()
		}
		for _, sd := range s.Single {
			if j := slices.Index(devs, sd.Device); j >= 0 && sd.Err == "" && sd.Stats.Median > 0 {
				row.vals[j] = sd.Stats.Median.Seconds()
			}
		}
		if s.Verified && s.Stats.Median > 0 {
			row.vals[len(devs)] = s.Stats.Median.Seconds()
		}
		rows = append(rows, row)
	}
	bm := barMetricOf(MetricTime)
	bm.title = "Splits: median time per run"
	bm.note = "Host clock. Each device alone runs the whole op, its result combined on the host as the split's; the split runs each device's share at once. Shorter is better. No bar: failed."
	return r.drawBars(bm, legend, rows)
}

// collectiveChart draws the collectives: the bus bandwidth of each collective and size,
// on a log axis.
func (r view) collectiveChart() (*chart, error) {
	var rows []barRow
	for _, c := range r.Collectives {
		family, rest, _ := strings.Cut(c.Case, "/")
		row := barRow{family: family, label: rest + " " + bench.FormatSize(c.Count), vals: []float64{math.NaN()}}
		if c.Verified && c.BusBW > 0 && finite(c.BusBW) {
			row.vals[0] = c.BusBW
		}
		rows = append(rows, row)
	}
	bm := barMetricOf(MetricRate)
	bm.title = "Collectives: bus bandwidth"
	bm.axis = "busbw GB/s: bytes / time x 2(n-1)/n (all-reduce), (n-1)/n (all-gather, reduce-scatter), 1 (broadcast) (log scale)"
	bm.note = "Host clock, every local queue finished, as nccl-tests measures. Longer is better. No bar: failed."
	return r.drawBars(bm, []string{"bus bandwidth"}, rows)
}

// plotChart is the chart Plot draws: the bar chart of metric for the devices' own
// results, then the splits and the collectives (their times and bus bandwidths, whatever
// the metric but vendor, which has none), one below the other.
func (r view) plotChart(metric string) (*chart, error) {
	m, err := PlotMetric(metric)
	if err != nil {
		return nil, err
	}
	var charts []*chart
	if r.hasResults() || m == MetricVendor || (len(r.Splits) == 0 && len(r.Collectives) == 0) {
		ch, err := r.barChart(m)
		if err != nil {
			return nil, err
		}
		charts = append(charts, ch)
	}
	if m != MetricVendor {
		for _, has := range []struct {
			ok    bool
			chart func() (*chart, error)
		}{{len(r.Splits) > 0, r.splitChart}, {len(r.Collectives) > 0, r.collectiveChart}} {
			if !has.ok {
				continue
			}
			ch, err := has.chart()
			if err != nil {
				return nil, err
			}
			charts = append(charts, ch)
		}
	}
	if len(charts) == 1 {
		return charts[0], nil
	}
	return stack(charts), nil
}

// Plot writes the bar chart of metric (see PlotMetric) in format (see PlotFormats) to
// w: one row per case and size, grouped by family, one bar per device; below it, the
// charts of the splits (each device alone and the split, by time) and the collectives (by
// bus bandwidth) that the report holds. The chart is 1100 pixels wide and as tall as its
// rows need.
func Plot(w io.Writer, rep *bench.Report, format, metric string) error {
	r := view{rep}
	ch, err := r.plotChart(metric)
	if err != nil {
		return err
	}
	return ch.writeTo(w, format)
}

// SavePlot writes the bar chart to path, in the format its extension names.
func SavePlot(path string, rep *bench.Report, metric string) error {
	r := view{rep}
	if _, err := PlotFormat(path); err != nil {
		return err
	}
	ch, err := r.plotChart(metric)
	if err != nil {
		return err
	}
	return ch.save(path)
}
