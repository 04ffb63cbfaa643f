package render

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/internal/term"
	"github.com/prism-compute/prism/engine"
)

// The charts are drawn with gonum/plot's canvases (vg, draw, text), laid out here rather than
// by plot.Plot: the header, the legend, the family bands and the labels of the points need a
// place that plot.Plot does not give them. Lengths are in points; the PNG renders at 96 dpi,
// so chartWidth (825 pt) is 1100 pixels, and browsers show the SVG at the same size.

// PlotFormats are the chart formats Plot writes, by file extension.
var PlotFormats = []string{"svg", "png", "pdf"}

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

const (
	chartWidth  = vg.Length(825) // 1100 px at 96 dpi
	chartMargin = vg.Length(16)
	// maxChartHeight bounds the height of a chart, 32,000 pixels: a PNG of that height takes
	// 141 MB of memory to draw. A taller chart (thousands of rows) is an error that says to
	// plot fewer cases; the tables show any number.
	maxChartHeight = vg.Length(24000)
)

// Colours: the Okabe-Ito palette (distinct for the colour-blind) for devices, without its
// yellow, which is unreadable on white; then greys.
var seriesColors = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x55, 0x55, 0x55, 0xFF},
	{0x99, 0x99, 0x99, 0xFF},
}

// familyColors tell the families apart on a roofline: Tableau's ten, then darker variants.
var familyColors = []color.RGBA{
	{0x4E, 0x79, 0xA7, 0xFF}, {0xF2, 0x8E, 0x2B, 0xFF}, {0xE1, 0x57, 0x59, 0xFF}, {0x76, 0xB7, 0xB2, 0xFF},
	{0x59, 0xA1, 0x4F, 0xFF}, {0xED, 0xC9, 0x48, 0xFF}, {0xB0, 0x7A, 0xA1, 0xFF}, {0xFF, 0x9D, 0xA7, 0xFF},
	{0x9C, 0x75, 0x5F, 0xFF}, {0xBA, 0xB0, 0xAC, 0xFF}, {0x2B, 0x4C, 0x70, 0xFF}, {0x9A, 0x4F, 0x10, 0xFF},
	{0x8A, 0x2B, 0x2C, 0xFF}, {0x3B, 0x6E, 0x36, 0xFF}, {0x6B, 0x44, 0x66, 0xFF}, {0x5E, 0x47, 0x3A, 0xFF},
}

var (
	colorText  = color.RGBA{0x22, 0x22, 0x22, 0xFF}
	colorMuted = color.RGBA{0x66, 0x66, 0x66, 0xFF}
	colorGrid  = color.RGBA{0xDD, 0xDD, 0xDD, 0xFF}
	colorMinor = color.RGBA{0xEE, 0xEE, 0xEE, 0xFF}
	colorBand  = color.RGBA{0xF0, 0xF2, 0xF5, 0xFF}
	colorAxis  = color.RGBA{0x88, 0x88, 0x88, 0xFF}
)

func seriesColor(i int) color.RGBA { return seriesColors[i%len(seriesColors)] }

// textStyle returns Liberation Sans (metric-compatible with Arial and Helvetica, which
// browsers substitute when they lack it) at size points.
func textStyle(size vg.Length, bold bool, c color.Color) text.Style {
	f := font.Font{Typeface: "Liberation", Variant: "Sans"}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return text.Style{Color: c, Font: font.From(f, size), Handler: plot.DefaultTextHandler}
}

// aligned returns sty with the given alignment.
func aligned(sty text.Style, x text.XAlignment, y text.YAlignment) text.Style {
	sty.XAlign, sty.YAlign = x, y
	return sty
}

// chart is a drawing of a fixed size that writes in any of PlotFormats.
type chart struct {
	w, h vg.Length
	draw func(c draw.Canvas)
}

// stack returns the charts one above the other, each at its own height.
func stack(charts []*chart) *chart {
	s := &chart{w: chartWidth}
	for _, c := range charts {
		s.w = max(s.w, c.w)
		s.h += c.h
	}
	s.draw = func(dc draw.Canvas) {
		top := dc.Max.Y
		for i, c := range charts {
			sub := dc
			sub.Max.Y, sub.Min.Y = top, top-c.h
			c.draw(sub)
			if i > 0 {
				line(dc, colorAxis, 1, nil, vg.Point{X: dc.Min.X + chartMargin, Y: top}, vg.Point{X: dc.Min.X + s.w - chartMargin, Y: top})
			}
			top -= c.h
		}
	}
	return s
}

// checkSize returns an error wrapping engine.ErrInvalidArg when the chart is taller than
// maxChartHeight (or its size is not a finite positive length).
func (ch *chart) checkSize() error {
	if !(ch.h > 0 && ch.h <= maxChartHeight && ch.w > 0 && ch.w <= 2*chartWidth) {
		return fmt.Errorf("bench: the chart would be %.0f pixels tall, more than %.0f: chart fewer cases (the tables show them all): %w",
			float64(ch.h)*96/72, float64(maxChartHeight)*96/72, engine.ErrInvalidArg)
	}
	return nil
}

// writeTo writes the chart in format (see PlotFormats).
func (ch *chart) writeTo(w io.Writer, format string) error {
	if err := ch.checkSize(); err != nil {
		return err
	}
	cw, err := draw.NewFormattedCanvas(ch.w, ch.h, format)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if format == "pdf" {
		cw = pdfCanvas{cw}
	}
	cw = safeTextCanvas{cw}
	dc := draw.New(cw)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	ch.draw(dc)
	if format != "svg" {
		_, err = cw.WriteTo(w)
		return err
	}
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return err
	}
	_, err = w.Write(fixSVGFonts(buf.Bytes()))
	return err
}

// safeTextCanvas draws every string through term.Safe: the text of a chart comes from the
// report (device names, cases), and control characters are not even allowed in an SVG.
type safeTextCanvas struct{ vg.CanvasWriterTo }

func (c safeTextCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.CanvasWriterTo.FillString(f, pt, term.Safe(s))
}

// pdfCanvas works around two limits of gonum/plot's PDF canvas: it registers a bold font
// without the style it then selects it by (and fails with "undefined font"), so bold text
// is drawn regular; and it writes strings in code page 1252 without converting them from
// UTF-8, so "·", "×" and "µ" are converted here (Latin-1 runes are the same in 1252).
type pdfCanvas struct{ vg.CanvasWriterTo }

func (c pdfCanvas) FillString(f font.Face, pt vg.Point, s string) {
	if f.Font.Weight != xfont.WeightNormal {
		regular := f.Font
		regular.Weight = xfont.WeightNormal
		f = font.DefaultCache.Lookup(regular, regular.Size)
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF || (r >= 0x80 && r < 0xA0) {
			r = '?'
		}
		b = append(b, byte(r))
	}
	c.CanvasWriterTo.FillString(f, pt, string(b))
}

// save writes the chart to path, in the format its extension names, whole or not at all
// (WriteFileAtomic).
func (ch *chart) save(path string) (err error) {
	format, err := PlotFormat(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := ch.writeTo(&buf, format); err != nil {
		return err
	}
	return bench.WriteFileAtomic(path, buf.Bytes())
}

var svgFontFamily = regexp.MustCompile(`font-family:Liberation Sans;`)

// fixSVGFonts gives the SVG's text the fonts of the same widths as fallbacks: vgsvg names
// only the font it measured with, Liberation Sans, which many machines lack.
func fixSVGFonts(svg []byte) []byte {
	return svgFontFamily.ReplaceAll(svg, []byte(`font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`))
}

// fillRect fills the rectangle from (x0, y0) to (x1, y1).
func fillRect(c draw.Canvas, col color.Color, x0, y0, x1, y1 vg.Length) {
	c.FillPolygon(col, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
}

func line(c draw.Canvas, col color.Color, width vg.Length, dashes []vg.Length, pts ...vg.Point) {
	c.StrokeLines(draw.LineStyle{Color: col, Width: width, Dashes: dashes}, pts)
}

// axisScale maps values to lengths along an axis, linearly or logarithmically.
type axisScale struct {
	min, max float64
	log      bool
	lo, hi   vg.Length
	// format writes a tick value (nil: strconv's shortest form).
	format func(float64) string
}

func (s axisScale) at(v float64) vg.Length {
	var f float64
	if s.log {
		f = (math.Log10(v) - math.Log10(s.min)) / (math.Log10(s.max) - math.Log10(s.min))
	} else {
		f = (v - s.min) / (s.max - s.min)
	}
	return s.lo + vg.Length(f)*(s.hi-s.lo)
}

// usable reports whether the scale maps values to finite lengths: finite bounds, min below
// max, and both positive on a log scale, spanning at most 400 decades.
func (s axisScale) usable() bool {
	if !finite(s.min) || !finite(s.max) || !(s.min < s.max) {
		return false
	}
	return !s.log || (s.min > 0 && math.Log10(s.max)-math.Log10(s.min) <= 400)
}

// axisTick is a tick of an axisScale: major ones carry a label.
type axisTick struct {
	v     float64
	label string
}

// ticks returns the major ticks (with labels) and the minor ones.
func (s axisScale) ticks() (major, minor []axisTick) {
	f := s.format
	if f == nil {
		f = func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	}
	if s.log {
		lo, hi := int(math.Floor(math.Log10(s.min)+1e-9)), int(math.Ceil(math.Log10(s.max)-1e-9))
		// A label every decade, or every second or third when there are many.
		step := max(1, (hi-lo+7)/8)
		for e := lo; e <= hi; e++ {
			d := math.Pow10(e)
			if d >= s.min*(1-1e-9) && d <= s.max*(1+1e-9) {
				if (e-lo)%step == 0 {
					major = append(major, axisTick{d, f(d)})
				} else {
					minor = append(minor, axisTick{v: d})
				}
			}
			for k := 2; k < 10 && step == 1; k++ {
				if v := float64(k) * d; v > s.min && v < s.max {
					minor = append(minor, axisTick{v: v})
				}
			}
		}
		return major, minor
	}
	for _, t := range (plot.DefaultTicks{}).Ticks(s.min, s.max) {
		if t.Value < s.min-1e-9*(s.max-s.min) || t.Value > s.max+1e-9*(s.max-s.min) {
			continue
		}
		if t.IsMinor() {
			minor = append(minor, axisTick{v: t.Value})
		} else {
			major = append(major, axisTick{t.Value, f(t.Value)})
		}
	}
	return major, minor
}

// niceMax rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow10(int(math.Floor(math.Log10(v))))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// niceBelow rounds v down to 1, 2 or 5 times a power of ten.
func niceBelow(v float64) float64 {
	d := decadeBelow(v)
	for _, m := range []float64{5, 2} {
		if m*d <= v {
			return m * d
		}
	}
	return d
}

// decadeBelow and decadeAbove round to powers of ten.
func decadeBelow(v float64) float64 { return math.Pow10(int(math.Floor(math.Log10(v) + 1e-9))) }
func decadeAbove(v float64) float64 { return math.Pow10(int(math.Ceil(math.Log10(v) - 1e-9))) }

// siFormat writes a tick value with an SI suffix: 1, 10, 100, 1k, 10k, 1M.
func siFormat(v float64) string {
	for _, u := range []struct {
		f float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.f {
			return strconv.FormatFloat(v/u.f, 'g', 3, 64) + u.s
		}
	}
	if v < 1 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// durationFormat writes a tick value in seconds as 1ns, 10µs, 1ms, 1s.
func durationFormat(v float64) string {
	for _, u := range []struct {
		f float64
		s string
	}{{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}, {1e-9, "ns"}} {
		if v >= u.f*(1-1e-9) {
			return strconv.FormatFloat(v/u.f, 'g', 3, 64) + u.s
		}
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + "s"
}

// header is the top of a chart: a title, a line of context, and a legend of coloured
// swatches that wraps.
type header struct {
	title, subtitle string
	legend          []legendEntry
}

type legendEntry struct {
	color color.Color
	label string
}

var (
	titleStyle    = textStyle(15, true, colorText)
	subtitleStyle = textStyle(10, false, colorMuted)
	legendStyle   = textStyle(10, false, colorText)
	labelStyle    = textStyle(9.5, false, colorText)
	tickStyle     = textStyle(9, false, colorMuted)
	bandStyle     = textStyle(10, true, colorText)
	noteStyle     = textStyle(9, false, colorMuted)
)

// legendRows returns the legend entries laid out in rows that fit width.
func (h *header) legendRows(width vg.Length) [][]legendEntry {
	var rows [][]legendEntry
	var cur []legendEntry
	x := vg.Length(0)
	for _, e := range h.legend {
		w := 16 + legendStyle.Width(e.label) + 18
		if len(cur) > 0 && x+w > width {
			rows = append(rows, cur)
			cur, x = nil, 0
		}
		cur = append(cur, e)
		x += w
	}
	if len(cur) > 0 {
		rows = append(rows, cur)
	}
	return rows
}

// height returns the height the header takes in a chart of the given inner width.
func (h *header) height(width vg.Length) vg.Length {
	ht := vg.Length(22)
	if h.subtitle != "" {
		ht += 15
	}
	if n := len(h.legendRows(width)); n > 0 {
		ht += 6 + vg.Length(n)*15
	}
	return ht + 8
}

// draw draws the header from the top of c, within its margins.
func (h *header) draw(c draw.Canvas, left, width vg.Length) {
	y := c.Max.Y - chartMargin
	c.FillText(aligned(titleStyle, text.XLeft, text.YTop), vg.Point{X: left, Y: y}, h.title)
	y -= 22
	if h.subtitle != "" {
		c.FillText(aligned(subtitleStyle, text.XLeft, text.YTop), vg.Point{X: left, Y: y}, h.subtitle)
		y -= 15
	}
	y -= 6
	for _, row := range h.legendRows(width) {
		x := left
		for _, e := range row {
			fillRect(c, e.color, x, y-10, x+11, y-1)
			c.FillText(aligned(legendStyle, text.XLeft, text.YTop), vg.Point{X: x + 16, Y: y}, e.label)
			x += 16 + legendStyle.Width(e.label) + 18
		}
		y -= 15
	}
}

// wrapText splits s into lines no wider than width in sty.
func wrapText(sty text.Style, s string, width vg.Length) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if cur != "" && sty.Width(next) > width {
			lines = append(lines, cur)
			next = w
		}
		cur = next
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// shortCommit returns the first 12 characters of a commit, or "no commit".
func shortCommit(c string) string {
	if len(c) > 12 {
		c = c[:12]
	}
	if c == "" {
		c = "no commit"
	}
	return c
}

// runLine is the subtitle of a report's charts: version, date, commit, host, runs.
func (r view) runLine() string {
	s := fmt.Sprintf("prism %s · %s · %s · host %s", r.Prism, r.Date.Format("2006-01-02 15:04 MST"), shortCommit(r.Commit), r.Host)
	if r.Config.Count > 0 {
		s += fmt.Sprintf(" · median of %d runs", r.Config.Count)
	}
	if sizes := r.sizes(); len(sizes) == 1 {
		s += " · size " + bench.FormatSize(sizes[0])
	}
	return s
}

// sizes returns the distinct sizes of the report's results, in order of appearance.
func (r view) sizes() []int { return sizesOf(r.rows()) }

// sizes returns the distinct sizes of the rows, in order of appearance.
func (ix *caseIndex) sizes() []int { return sizesOf(ix.rows) }

func sizesOf(rows []bench.CaseKey) []int {
	var out []int
	seen := map[int]bool{}
	for _, k := range rows {
		if !seen[k.Size] {
			seen[k.Size] = true
			out = append(out, k.Size)
		}
	}
	return out
}
