package site

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prism-compute/prism/bench"
)

// The size of a history chart, in SVG user units (CSS pixels at full width), and its
// margins around the plot.
const (
	chartW, chartH = 760, 280
	marginL        = 76
	marginR        = 16
	marginT        = 12
	marginB        = 46
	// maxDots is the most points of a line drawn as dots with a link to their run; a
	// longer line is drawn as a line alone (its changes still get a marker and a link).
	maxDots = 150
	// logSpread is the ratio of the largest time to the smallest above which the time
	// axis is logarithmic.
	logSpread = 20
)

// palette colours the lines of a chart, in turn (Tableau 10).
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac", "#e15759"}

// The colours of the change markers.
const (
	colorSlower = "#d62728"
	colorFaster = "#2ca02c"
)

// chartLine is a line of a history chart: one series' valid points.
type chartLine struct {
	color  string
	label  string
	points []*point
}

// axis maps values to positions along one side of the plot.
type axis struct {
	lo, hi   float64 // the domain
	from, to float64 // the range, in user units
	log      bool
}

func (a axis) pos(v float64) float64 {
	if a.log {
		v, a.lo, a.hi = math.Log10(math.Max(v, 1e-300)), math.Log10(a.lo), math.Log10(a.hi)
	}
	return a.from + (v-a.lo)/(a.hi-a.lo)*(a.to-a.from)
}

// num writes a coordinate with one decimal.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// historyChart draws lines over the runs (x: a run's place among every run of the store,
// so that the charts of one site line up in time; y: the time of a run, the median with a
// bar from min to max), with a marker where each step to a slower or faster level starts. Every dot
// and marker links to its run's page (root leads from the page to the site's top). label
// names the chart for readers of the page.
func historyChart(lines []chartLine, runs []*runInfo, root, label string) template.HTML {
	loOrd, hiOrd := math.MaxInt, math.MinInt
	loT, hiT := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, p := range l.points {
			loOrd, hiOrd = min(loOrd, p.run.ord), max(hiOrd, p.run.ord)
			lo, hi := p.stats.Min, p.stats.Max
			if lo <= 0 || lo > p.stats.Median {
				lo = p.stats.Median
			}
			if hi < p.stats.Median {
				hi = p.stats.Median
			}
			loT, hiT = math.Min(loT, float64(lo)), math.Max(hiT, float64(hi))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		chartW, chartH, chartW, chartH, html.EscapeString(label))
	fmt.Fprintf(&b, `<rect class="plot" x="%d" y="%d" width="%d" height="%d"/>`, marginL, marginT, chartW-marginL-marginR, chartH-marginT-marginB)
	if loOrd > hiOrd { // no valid point
		fmt.Fprintf(&b, `<text class="empty" x="%d" y="%d">no valid time in any run</text></svg>`, chartW/2, chartH/2)
		return template.HTML(b.String())
	}
	x := axis{lo: float64(loOrd) - 0.5, hi: float64(hiOrd) + 0.5, from: marginL + 6, to: chartW - marginR - 6}
	y := timeAxis(loT, hiT)
	y.from, y.to = chartH-marginB, marginT
	// The time axis: grid lines and labels.
	for _, v := range y.ticks() {
		py := y.pos(v)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%d" y1="%s" y2="%s"/>`, marginL, chartW-marginR, num(py), num(py))
		fmt.Fprintf(&b, `<text class="tick y" x="%d" y="%s">%s</text>`, marginL-6, num(py+4), html.EscapeString(bench.FormatDuration(time.Duration(v))))
	}
	// The run axis: a few runs named by date and commit.
	for _, ord := range runTicks(loOrd, hiOrd, 6) {
		r := runs[ord]
		px := x.pos(float64(ord))
		fmt.Fprintf(&b, `<line class="tickmark" x1="%s" x2="%s" y1="%d" y2="%d"/>`, num(px), num(px), chartH-marginB, chartH-marginB+4)
		fmt.Fprintf(&b, `<text class="tick x" x="%s" y="%d">%s</text>`, num(px), chartH-marginB+17, r.sum.Date.Format("2006-01-02"))
		fmt.Fprintf(&b, `<text class="tick x commit" x="%s" y="%d">%s</text>`, num(px), chartH-marginB+31, html.EscapeString(shortCommit(r.sum.Commit)))
	}
	fmt.Fprintf(&b, `<text class="axis-label" x="14" y="%d" transform="rotate(-90 14 %d)">time per run</text>`, (chartH-marginB+marginT)/2, (chartH-marginB+marginT)/2)
	for _, l := range lines {
		if len(l.points) == 0 {
			continue
		}
		// The bars from min to max, as one path.
		var bars strings.Builder
		for _, p := range l.points {
			if p.stats.Min > 0 && p.stats.Max > p.stats.Min {
				px := num(x.pos(float64(p.run.ord)))
				fmt.Fprintf(&bars, "M%s %sV%s", px, num(y.pos(float64(p.stats.Min))), num(y.pos(float64(p.stats.Max))))
			}
		}
		if bars.Len() > 0 {
			fmt.Fprintf(&b, `<path class="range" stroke="%s" d="%s"/>`, l.color, bars.String())
		}
		var line strings.Builder
		for i, p := range l.points {
			if i > 0 {
				line.WriteByte(' ')
			}
			line.WriteString(num(x.pos(float64(p.run.ord))) + "," + num(y.pos(float64(p.stats.Median))))
		}
		fmt.Fprintf(&b, `<polyline class="line" stroke="%s" points="%s"/>`, l.color, line.String())
		dots := len(l.points) <= maxDots
		for _, p := range l.points {
			px, py := x.pos(float64(p.run.ord)), y.pos(float64(p.stats.Median))
			title := html.EscapeString(pointTitle(l.label, p))
			href := fmt.Sprintf("%sruns/%d.html", root, p.run.sum.ID)
			switch {
			case p.change.slower(): // a triangle pointing up: the time went up
				fmt.Fprintf(&b, `<a href="%s"><path class="marker slower" fill="%s" d="M%s %sl6 10h-12z"><title>%s</title></path></a>`,
					href, colorSlower, num(px), num(py-7), title)
			case p.change.faster():
				fmt.Fprintf(&b, `<a href="%s"><path class="marker faster" fill="%s" d="M%s %sl6 -10h-12z"><title>%s</title></path></a>`,
					href, colorFaster, num(px), num(py+7), title)
			default:
				if dots {
					fmt.Fprintf(&b, `<a href="%s"><circle class="dot" fill="%s" cx="%s" cy="%s" r="3"><title>%s</title></circle></a>`,
						href, l.color, num(px), num(py), title)
				}
			}
		}
	}
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// pointTitle is the tooltip of a point of the chart.
func pointTitle(label string, p *point) string {
	t := fmt.Sprintf("%s\nrun %d, %s, %s\nmedian %s (min %s, max %s)", label, p.run.sum.ID, p.run.sum.Date.Format("2006-01-02 15:04"),
		shortCommit(p.run.sum.Commit), bench.FormatDuration(p.stats.Median), bench.FormatDuration(p.stats.Min), bench.FormatDuration(p.stats.Max))
	if d := deltaText(p.change); d != "" {
		t += " " + d
	}
	if st := stepText(p.change); st != "" {
		t += "\nstep: " + st
	}
	return t
}

// timeAxis returns the axis of times from lo to hi (nanoseconds): logarithmic over whole
// decades where they spread more than logSpread times, else linear between round values.
func timeAxis(lo, hi float64) axis {
	lo, hi = math.Max(lo, 1), math.Max(hi, 1)
	if hi/lo > logSpread {
		return axis{lo: math.Pow(10, math.Floor(math.Log10(lo))), hi: math.Pow(10, math.Ceil(math.Log10(hi))), log: true}
	}
	if hi == lo {
		lo, hi = lo*0.9, hi*1.1
	}
	step := niceStep((hi - lo) / 4)
	return axis{lo: math.Floor(lo/step) * step, hi: math.Ceil(hi/step) * step}
}

// ticks returns the values the axis labels: each decade of a logarithmic one, round steps
// of a linear one.
func (a axis) ticks() []float64 {
	var out []float64
	if a.log {
		for v := a.lo; v <= a.hi*1.0001; v *= 10 {
			out = append(out, v)
		}
		return out
	}
	step := niceStep((a.hi - a.lo) / 4)
	for v := a.lo; v <= a.hi+step/1000; v += step {
		out = append(out, v)
	}
	return out
}

// niceStep returns 1, 2 or 5 times a power of ten, the first at or above v.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*0.999 {
			return m * p
		}
	}
	return 10 * p
}

// runTicks returns at most n runs between lo and hi, evenly spaced, both ends included.
func runTicks(lo, hi, n int) []int {
	if hi-lo+1 <= n {
		out := make([]int, 0, hi-lo+1)
		for o := lo; o <= hi; o++ {
			out = append(out, o)
		}
		return out
	}
	out := make([]int, n)
	for i := range n {
		out[i] = lo + int(math.Round(float64(i)*float64(hi-lo)/float64(n-1)))
	}
	return out
}
