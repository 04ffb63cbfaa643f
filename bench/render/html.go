package render

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/internal/term"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Parse(htmlSource))

// htmlPage is what report.html.tmpl renders.
type htmlPage struct {
	Title, Heading, Lead string
	Run                  []htmlField
	Devices              []htmlDevice
	BarTitle             string
	BarChart             template.HTML
	BarNote              string // why there is no BarChart
	Vendor               template.HTML
	VendorNote           string // why the vendor chart could not be drawn
	Rooflines            []htmlChart
	RooflineNotes        []string
	Legend               []string
	Header               []htmlCell
	Columns              int
	Rows                 []htmlRow
	Groups               []htmlTable // the splits and the collectives
	Failures             []string
	Footer               string
}

type htmlField struct {
	Key, Value string
	Code       bool
}

type htmlDevice struct {
	N                               int
	ID, Name, Kind, Backend, Driver string
	CUs, Clock                      string
	Copy, FP32, FP64                string
	Details                         []string
}

type htmlChart struct {
	ID  string
	SVG template.HTML
}

type htmlCell struct {
	Text  string
	Num   bool
	Class string
	Fill  string // the width of the data bar behind an "of roof" cell, "49.3%"
}

// htmlTable is a table of its own under a heading: the splits, the collectives.
type htmlTable struct {
	ID, Title string
	Chart     template.HTML
	Legend    []string
	Header    []htmlCell
	Rows      []htmlRow
}

type htmlRow struct {
	Family string // set on the first row of a family
	Cells  []htmlCell
}

// HTML writes the report as one self-contained HTML page: the run's metadata, the
// devices with their ceilings, the bar chart of the fraction of the roofline (and of the
// speed relative to the vendor library when the report has vendor baselines), one roofline
// chart per device, and the side-by-side results table with the columns of Markdown
// (ratios against baseline, a device ID or "" for the first). The charts are inline SVG and
// the style inline CSS: the page loads nothing from anywhere.
func HTML(w io.Writer, rep *bench.Report, baseline string) error {
	r := view{rep}
	g, err := r.resultGrid(baseline, true)
	if err != nil {
		return err
	}
	svg := func(ch *chart, title string) (template.HTML, error) {
		var buf bytes.Buffer
		if err := ch.writeTo(&buf, "svg"); err != nil {
			return "", err
		}
		return template.HTML(inlineSVG(buf.Bytes(), title)), nil
	}
	page := htmlPage{
		Title:   term.Safe(fmt.Sprintf("prism bench %s, %s", r.Host, r.Date.Format("2006-01-02 15:04 MST"))),
		Heading: "prism bench report",
		Lead:    term.Safe(fmt.Sprintf("%d devices, %d cases, %s on %s", len(r.Devices), len(r.rows()), r.Date.Format("2006-01-02 15:04 MST"), r.Host)),
		Legend:  g.legend,
		Footer:  fmt.Sprintf("Written by prism report --html from a schema %d report; the charts are those of prism plot and prism plot --roofline.", r.Schema),
	}
	if len(r.Devices) == 1 {
		page.Lead = strings.Replace(page.Lead, "1 devices", "1 device", 1)
	}
	if n := len(r.Splits) + len(r.Collectives); n > 0 {
		page.Lead = term.Safe(fmt.Sprintf("%d devices, %d cases, %d splits, %d collectives, %s on %s", len(r.Devices), len(g.rows), len(r.Splits), len(r.Collectives), r.Date.Format("2006-01-02 15:04 MST"), r.Host))
	}
	page.Run = r.htmlRun()
	page.Devices = r.htmlDevices()

	// A chart that cannot be drawn (no result to plot, too many rows) leaves a note in its
	// place: the tables still hold every result.
	page.BarTitle = barMetricOf(MetricRoof).title
	if len(g.rows) > 0 {
		bars, err := r.barChart(MetricRoof)
		if err == nil {
			page.BarChart, err = svg(bars, page.BarTitle)
		}
		if err != nil {
			page.BarNote = "No chart: " + term.Safe(strings.TrimPrefix(err.Error(), "bench: "))
		}
	} else {
		page.BarTitle = ""
	}
	if vendor, err := r.barChart(MetricVendor); err == nil {
		if page.Vendor, err = svg(vendor, "Speed relative to the vendor library"); err != nil {
			page.VendorNote = "No chart: " + term.Safe(strings.TrimPrefix(err.Error(), "bench: "))
		}
	}
	charts, ids, skipped := r.rooflineCharts()
	for i, ch := range charts {
		s, err := svg(ch, "Roofline of "+ids[i])
		if err != nil {
			skipped = append(skipped, strings.TrimPrefix(err.Error(), "bench: "))
			continue
		}
		page.Rooflines = append(page.Rooflines, htmlChart{ID: term.Safe(ids[i]), SVG: s})
	}
	for _, s := range skipped {
		page.RooflineNotes = append(page.RooflineNotes, term.Safe(s))
	}

	if len(g.rows) > 0 {
		page.Header, page.Rows = r.htmlGrid(g)
		page.Columns = len(g.cols)
	}
	groups := []struct {
		id, title string
		grid      *resultGrid
		chart     func() (*chart, error)
		has       bool
	}{
		{"splits", "Splits across devices", nil, r.splitChart, len(r.Splits) > 0},
		{"collectives", "Collectives", nil, r.collectiveChart, len(r.Collectives) > 0},
	}
	for _, grp := range groups {
		if !grp.has {
			continue
		}
		gg := r.splitGrid()
		if grp.id == "collectives" {
			gg = r.collectiveGrid()
		}
		t := htmlTable{ID: grp.id, Title: grp.title, Legend: gg.legend}
		for _, c := range gg.cols {
			t.Header = append(t.Header, htmlCell{Text: c.head})
		}
		for _, row := range gg.rows {
			var hr htmlRow
			for j, text := range row {
				c := htmlCell{Text: text, Class: "num"}
				if j == 0 {
					c.Class = ""
				}
				if text == "-" || text == "FAILED" {
					c.Class = "num muted"
				}
				hr.Cells = append(hr.Cells, c)
			}
			t.Rows = append(t.Rows, hr)
		}
		if ch, err := grp.chart(); err == nil {
			t.Chart, _ = svg(ch, grp.title)
		}
		page.Groups = append(page.Groups, t)
	}
	// The summaries (sweep.go), their columns of figures from first to last.
	summaries := []struct {
		id, title   string
		grid        *resultGrid
		first, last int
	}{
		{"vendor-summary", vendorSummaryTitle, r.vendorSummaryGrid(), 4, 6}, // cases, geomean, worst
		{"split-summary", splitSummaryTitle, r.splitSummaryGrid(), 2, 5},    // cases, split, geomean, worst
	}
	for _, sum := range summaries {
		if sum.grid == nil {
			continue
		}
		t := htmlTable{ID: sum.id, Title: sum.title, Legend: sum.grid.legend}
		for _, c := range sum.grid.cols {
			t.Header = append(t.Header, htmlCell{Text: c.head})
		}
		for _, row := range sum.grid.rows {
			var hr htmlRow
			for j, text := range row {
				c := htmlCell{Text: text}
				if sum.first <= j && j <= sum.last {
					c.Class = "num"
				}
				hr.Cells = append(hr.Cells, c)
			}
			t.Rows = append(t.Rows, hr)
		}
		page.Groups = append(page.Groups, t)
	}
	page.Failures = r.failures()
	return htmlTemplate.Execute(w, page)
}

// htmlRun is the run's metadata.
func (r view) htmlRun() []htmlField {
	commit := r.Commit
	if commit == "" {
		commit = "unknown"
	}
	timing := fmt.Sprintf("median of %d runs after %d warm-up, device-event timing", r.Config.Count, r.Config.Warmup)
	for _, d := range r.Devices {
		if d.Timing == bench.TimingHeld {
			timing += ", queues held while each run is enqueued"
			break
		}
	}
	if r.Config.Quick {
		timing += ", quick sizes"
	}
	if r.Config.Portable {
		timing += ", portable kernels"
	}
	fields := []htmlField{
		{Key: "date", Value: r.Date.Format(time.RFC3339)},
		{Key: "commit", Value: commit, Code: true},
		{Key: "prism", Value: r.Prism},
	}
	if len(r.Command) > 0 {
		fields = append(fields, htmlField{Key: "command", Value: strings.Join(r.Command, " "), Code: true})
	}
	fields = append(fields,
		htmlField{Key: "host", Value: fmt.Sprintf("%s (%s/%s, %s)", r.Host, r.GOOS, r.GOARCH, r.GoVersion)},
		htmlField{Key: "timing", Value: timing},
	)
	if sizes := r.sizes(); len(sizes) > 0 {
		s := make([]string, len(sizes))
		for i, n := range sizes {
			s[i] = bench.FormatSize(n)
		}
		fields = append(fields, htmlField{Key: "sizes", Value: strings.Join(s, ", ")})
	}
	for i := range fields {
		fields[i].Value = term.Safe(fields[i].Value)
	}
	return fields
}

// htmlDevices describes each device: identity and ceilings, then the other lines of the
// table's device list (errors, overheads, telemetry).
func (r view) htmlDevices() []htmlDevice {
	lines := r.deviceLines()
	out := make([]htmlDevice, len(r.Devices))
	for i, d := range r.Devices {
		di, c := d.Device, d.Ceilings
		hd := htmlDevice{N: i + 1, ID: term.Safe(di.ID), Name: term.Safe(di.Name), Kind: di.Kind.String(), Backend: term.Safe(d.Backend), Driver: term.Safe(di.DriverVersion),
			CUs: strconv.Itoa(di.ComputeUnits), Clock: strconv.Itoa(di.ClockMHz), Copy: "-", FP32: "-", FP64: "-"}
		if c.CopyGBs > 0 {
			hd.Copy = term.Float(c.CopyGBs)
		}
		if c.FP32GFLOPs > 0 {
			hd.FP32 = term.Float(c.FP32GFLOPs)
		}
		switch {
		case c.FP64GFLOPs > 0:
			hd.FP64 = term.Float(c.FP64GFLOPs)
		case c.FP64Absent != "":
			hd.FP64 = "none"
		}
		for _, l := range lines[i][1:] {
			if !strings.HasPrefix(l, "ceilings: ") {
				hd.Details = append(hd.Details, l)
			}
		}
		out[i] = hd
	}
	return out
}

// htmlGrid turns the table's cells into HTML cells: numbers right-aligned, a data bar
// behind each "of roof" cell, ratios coloured, verdicts as wrapped text, missing cells
// muted, and a band row where a family starts.
func (r view) htmlGrid(g *resultGrid) ([]htmlCell, []htmlRow) {
	header, rows, keys := g.header(), g.rows, g.keys
	hc := make([]htmlCell, len(header))
	roofCol := map[int]int{} // column -> device index
	verdictCol := map[int]bool{}
	for j, h := range header {
		hc[j] = htmlCell{Text: h, Num: j >= 3}
		if j < len(g.cols) && g.cols[j].kind == colVerdict {
			hc[j].Num, verdictCol[j] = false, true
		}
		var dev int
		if _, err := fmt.Sscanf(h, "[%d] of roof", &dev); err == nil && strings.HasSuffix(h, "of roof") {
			roofCol[j] = dev - 1
		}
	}
	ix := r.index()
	var out []htmlRow
	family := ""
	for i, row := range rows {
		hr := htmlRow{}
		if i < len(keys) {
			if f := ix.familyOf(keys[i]); f != family {
				family, hr.Family = f, f
			}
		}
		for j, text := range row {
			c := htmlCell{Text: text}
			switch {
			case j < 3: // case, variant, size
			case verdictCol[j] && text == "-":
				c.Class = "verdict muted"
			case verdictCol[j]:
				c.Class = "verdict"
			case text == "-" || text == "skipped" || text == "FAILED" || text == "INVALID":
				c.Class = "num muted"
			default:
				c.Class = "num"
			}
			if d, ok := roofCol[j]; ok && i < len(keys) && d < len(r.Devices) {
				if res := ix.result(d, keys[i]); res != nil && res.OK() && !math.IsNaN(res.Fraction) {
					c.Class += " roof"
					if res.Fraction > 1 {
						c.Class += " over"
					}
					c.Fill = strconv.FormatFloat(100*math.Max(0, math.Min(1, res.Fraction)), 'f', 1, 64) + "%"
				}
			}
			if strings.HasPrefix(header[j], "[") && strings.Contains(header[j], " vs ") {
				if v, err := strconv.ParseFloat(strings.TrimSuffix(text, "x"), 64); err == nil {
					switch {
					case v >= 1.05:
						c.Class += " faster"
					case v <= 0.95:
						c.Class += " slower"
					}
				}
			}
			hr.Cells = append(hr.Cells, c)
		}
		out = append(out, hr)
	}
	return hc, out
}

// familyOf returns the family of a row: that of its first result, else the case's prefix.
func (ix *caseIndex) familyOf(k bench.CaseKey) string {
	for i := range ix.r.Devices {
		if res := ix.result(i, k); res != nil && res.Family != "" {
			return res.Family
		}
	}
	f, _, _ := strings.Cut(k.Case, "/")
	return f
}

// inlineSVG returns an SVG document as an element to put in an HTML page: without the XML
// prolog, scaled to the width of its container.
func inlineSVG(svg []byte, title string) string {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	s = strings.Replace(s, "<svg ", `<svg class="chart" role="img" `, 1)
	if j := strings.Index(s, ">"); j >= 0 && title != "" {
		s = s[:j+1] + "\n<title>" + htmlEscape(title) + "</title>" + s[j+1:]
	}
	return s
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
