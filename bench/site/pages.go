package site

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/internal/term"
	"github.com/prism-compute/prism/bench/store"
)

//go:embed pages.tmpl
var pagesSource string

//go:embed style.css
var styleCSS []byte

var pages = template.Must(template.New("pages").Funcs(template.FuncMap{"inc": func(n int) int { return n + 1 }}).Parse(pagesSource))

// generator marks the pages Publish writes (a <meta name="generator"> of index.html), by
// which it knows a directory it may replace.
const generator = "prism publish"

// page is what every page shows: the site's name, the page's title and the way back to the
// site's top from the page's directory ("" or "../").
type page struct {
	Site, Title, Root, Footer string
	Generator                 string
}

// field is a name and its value in a run's or a device's description.
type field struct {
	Key, Value string
	Code       bool
	Href       string
}

// render executes the named template with data.
func render(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, fmt.Errorf("site: rendering %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// safe makes text from a report safe to show (the terminal escapes of reports from other
// machines); the templates escape it for HTML.
func safe(s string) string { return term.Safe(s) }

// shortCommit is a commit as the pages show it: 9 hex digits and -dirty where it was.
func shortCommit(c string) string {
	base, dirty := strings.CutSuffix(c, "-dirty")
	if len(base) > 9 {
		base = base[:9]
	}
	if base == "" {
		return "-"
	}
	if dirty {
		base += "-dirty"
	}
	return safe(base)
}

// rateText is a rate with its unit, "12.3 GB/s"; "" for none.
func rateText(rate float64, unit string) string {
	if rate <= 0 || unit == "" {
		return ""
	}
	return term.Float(rate) + " " + unit
}

// vendorText is the vendor's time over Prism's, "1.05×"; "" for none.
func vendorText(v float64) string {
	if v <= 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "×"
}

// vendorClass colours a vendor ratio: Prism ahead, close or well behind.
func vendorClass(v float64) string {
	switch {
	case v <= 0:
		return ""
	case v >= 1:
		return "ahead"
	case v >= 0.8:
		return "close"
	}
	return "behind"
}

// deltaText is a point's change from the previous valid one, "+2.1%"; "" for none.
func deltaText(c change) string {
	if c.delta <= 0 {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", 100*(c.delta-1))
}

// stepText describes the step that starts at a point: "slower 1.30×: 100.7µs → 130.9µs";
// "" where none starts.
func stepText(c change) string {
	if c.step == nil {
		return ""
	}
	way := "slower"
	if c.faster() {
		way = "faster"
	}
	return fmt.Sprintf("%s %s×: %s → %s", way, strconv.FormatFloat(c.step.Ratio, 'f', 2, 64),
		bench.FormatDuration(c.step.Before), bench.FormatDuration(c.step.After))
}

// changeClass is the CSS class of a point where a step starts.
func changeClass(c change) string {
	switch {
	case c.slower():
		return "slower"
	case c.faster():
		return "faster"
	}
	return ""
}

// deviceLabel names a device fingerprint for people: its name and backend.
func deviceLabel(d *deviceCol) string {
	if d.backend == "" {
		return safe(d.name)
	}
	return safe(d.name) + " (" + safe(d.backend) + ")"
}

// --- index.html

type indexView struct {
	page
	Lead        string
	Devices     []indexDevice
	Families    []indexFamily
	Regressions []regressionView
}

type indexDevice struct {
	N                             int
	Label, ID, FP, Driver, Hosts  string
	Runs                          int
	First, Last, LastHref, Anchor string
}

type indexFamily struct {
	Family string
	Rows   []indexRow
}

type indexRow struct {
	Case, Href string
	Cells      []indexCell
}

type indexCell struct {
	Empty                             bool
	Href, Variant, Size, Rate, Vendor string
	VendorClass, Verdict, Failed      string
	RunHref, RunText, Title           string
}

type regressionView struct {
	Case, Href, Device, Variant, Size, Change, RunHref string
	Run                                                int64
}

func (s *writer) indexPage(m *model) ([]byte, error) {
	v := indexView{page: s.page("Devices by op", "")}
	devs := m.sortedDevices()
	col := map[string]int{}
	for i, d := range devs {
		col[d.fp] = i
		v.Devices = append(v.Devices, indexDevice{N: i + 1, Label: deviceLabel(d), ID: safe(d.id), FP: d.fp, Driver: safe(d.driver),
			Hosts: safe(strings.Join(d.hosts, ", ")), Runs: d.runs, First: d.firstRun.sum.Date.Format("2006-01-02"),
			Last:     fmt.Sprintf("run %d, %s", d.lastRun.sum.ID, d.lastRun.sum.Date.Format("2006-01-02")),
			LastHref: runHref("", d.lastRun), Anchor: "fp-" + d.fp})
	}
	cases := m.sortedCases()
	v.Lead = fmt.Sprintf("%d runs, %d cases, %d device fingerprints", len(m.runs), len(cases), len(devs))
	if len(m.runs) > 0 {
		v.Lead += fmt.Sprintf(", from %s to %s", m.runs[0].sum.Date.Format("2006-01-02"), m.runs[len(m.runs)-1].sum.Date.Format("2006-01-02"))
	}
	for _, c := range cases {
		fam := safe(c.family)
		if len(v.Families) == 0 || v.Families[len(v.Families)-1].Family != fam {
			v.Families = append(v.Families, indexFamily{Family: fam})
		}
		row := indexRow{Case: safe(c.name), Href: caseHref("", c.slug), Cells: make([]indexCell, len(devs))}
		for i := range row.Cells {
			row.Cells[i].Empty = true
		}
		for fp, cl := range m.cells[c.name] { // each cell is written once: the order does not matter
			se := c.series[seriesKey{fp, cl.variant, cl.size, cl.dims}]
			row.Cells[col[fp]] = indexCell{Href: caseHref("", c.slug) + "#" + seriesAnchor(se), Variant: safe(cl.variant), Size: safe(bench.SizeText(cl.size, cl.dims)), Rate: rateText(cl.rate, cl.unit),
				Vendor: vendorText(cl.vendor), VendorClass: vendorClass(cl.vendor), Verdict: safe(cl.verdict), Failed: safe(cl.failed),
				RunHref: runHref("", cl.run), RunText: fmt.Sprintf("run %d, %s", cl.run.sum.ID, cl.run.sum.Date.Format("2006-01-02")),
				Title: bench.FormatDuration(cl.median)}
		}
		f := &v.Families[len(v.Families)-1]
		f.Rows = append(f.Rows, row)
		for _, se := range c.sortedSeries(m) {
			if p := se.lastStep(); p != nil && p.change.slower() {
				v.Regressions = append(v.Regressions, regressionView{Case: safe(c.name), Href: caseHref("", c.slug) + "#" + seriesAnchor(se),
					Device: deviceLabel(m.devices[se.key.fp]), Variant: safe(se.key.variant), Size: safe(bench.SizeText(se.key.size, se.key.dims)),
					Change: stepText(p.change), RunHref: runHref("", p.run), Run: int64(p.run.sum.ID)})
			}
		}
	}
	return render("index", v)
}

// --- runs.html

type runsView struct {
	page
	Rows []runRow
}

type runRow struct {
	ID                                      int64
	Href, Date, Host, Commit, Devices, Note string
	Cases                                   int
}

func (s *writer) runsPage(m *model) ([]byte, error) {
	v := runsView{page: s.page("Runs", "")}
	for i := len(m.runs) - 1; i >= 0; i-- {
		r := m.runs[i]
		var devs []string
		for _, d := range r.sum.Devices {
			devs = append(devs, safe(d.Name)+" ("+safe(d.ID)+")")
		}
		note := ""
		if r.sum.Interrupted {
			note = "interrupted"
			if r.sum.InterruptedAt != "" {
				note += " at " + safe(r.sum.InterruptedAt)
			}
		}
		v.Rows = append(v.Rows, runRow{ID: int64(r.sum.ID), Href: runHref("", r), Date: r.sum.Date.Format("2006-01-02 15:04:05"),
			Host: safe(r.sum.Host), Commit: shortCommit(r.sum.Commit), Devices: strings.Join(devs, ", "), Cases: r.sum.Results, Note: note})
	}
	return render("runs", v)
}

// --- runs/ID.html

type runView struct {
	page
	Fields             []field
	Devices            []runDevice
	Groups             []groupRow
	PrevHref, NextHref string
	Prev, Next         int64
}

type runDevice struct {
	Anchor, Heading string
	Fields          []field
	Rows            []resultRow
}

type resultRow struct {
	Case, Href, Size, Variant, Median, Min, Max, Rate, Vendor, VendorClass, Verdict, Failed string
}

type groupRow struct {
	Kind, Devices, Case, Size, Variant, Median, Rate, Failed string
}

// runPage renders a run's page, runs being every run of the store, oldest first. It runs
// while the model is gathered, and so reads nothing of it.
func (s *writer) runPage(runs []*runInfo, run *runInfo, rep *bench.Report) ([]byte, error) {
	v := runView{page: s.page(fmt.Sprintf("Run %d", run.sum.ID), "../")}
	if run.ord > 0 {
		p := runs[run.ord-1]
		v.PrevHref, v.Prev = runHref("../", p), int64(p.sum.ID)
	}
	if run.ord+1 < len(runs) {
		n := runs[run.ord+1]
		v.NextHref, v.Next = runHref("../", n), int64(n.sum.ID)
	}
	add := func(k, val string, code bool) {
		if val != "" {
			v.Fields = append(v.Fields, field{Key: k, Value: val, Code: code})
		}
	}
	add("Date", rep.Date.UTC().Format("2006-01-02 15:04:05 UTC"), false)
	add("Host", safe(rep.Host), false)
	add("Host CPU", safe(rep.HostCPU), false)
	add("System", safe(rep.GOOS+"/"+rep.GOARCH), false)
	add("Prism", safe(rep.Prism), false)
	add("Go", safe(rep.GoVersion), false)
	add("Commit", safe(rep.Commit), true)
	add("Command", safe(strings.Join(rep.Command, " ")), true)
	add("Configuration", configText(rep.Config), false)
	var env []string
	for _, k := range slices.Sorted(maps.Keys(rep.Env)) {
		env = append(env, safe(k+"="+rep.Env[k]))
	}
	add("Environment", strings.Join(env, " "), true)
	if rep.Interrupted {
		add("Interrupted", "yes, at "+safe(rep.InterruptedAt), false)
	}
	for i := range rep.Devices {
		d := &rep.Devices[i]
		fp := store.Fingerprint(rep, d)
		rd := runDevice{Anchor: "device-" + strconv.Itoa(i+1), Heading: fmt.Sprintf("[%d] %s (%s)", i+1, safe(d.Device.Name), safe(d.Device.ID))}
		in := d.Device
		df := func(k, val string) {
			if val != "" && val != "0" {
				rd.Fields = append(rd.Fields, field{Key: k, Value: safe(val)})
			}
		}
		df("Vendor", in.Vendor)
		df("Kind", in.Kind.String())
		df("Backend", d.Backend)
		df("Platform", in.Platform)
		df("PCI bus", in.PCIBusID)
		df("Driver", in.DriverVersion)
		df("API", in.APIVersion)
		df("Language", in.LanguageVersion)
		if in.ClockMHz > 0 {
			df("Clock", strconv.Itoa(in.ClockMHz)+" MHz")
		}
		if in.ComputeUnits > 0 {
			df("Compute units", strconv.Itoa(in.ComputeUnits))
		}
		if in.GlobalMemBytes > 0 {
			df("Memory", bench.FormatBytes(in.GlobalMemBytes))
		}
		df("Timing", d.Timing)
		df("Ceilings", ceilingsText(d.Ceilings))
		f := field{Key: "Fingerprint", Value: fp, Code: true}
		if !d.IsVendor() && len(d.Results) > 0 { // every real device with results is a column of the index
			f.Href = "../index.html#fp-" + fp
		}
		rd.Fields = append(rd.Fields, f)
		df("Error", d.Err)
		for j := range d.Results {
			res := &d.Results[j]
			row := resultRow{Case: safe(res.Case), Size: bench.FormatSize(res.Size), Variant: safe(res.Variant),
				Verdict: safe(res.Verdict.Text), Failed: safe(failure(res))}
			if !d.IsVendor() {
				row.Href = caseHref("../", slug(res.Case)) // every case of a real device has a page
			}
			if res.Stats.Runs > 0 {
				row.Median, row.Min, row.Max = bench.FormatDuration(res.Stats.Median), bench.FormatDuration(res.Stats.Min), bench.FormatDuration(res.Stats.Max)
			}
			if row.Failed == "" {
				row.Rate = rateText(res.Rate())
				if b := rep.VendorBaseline(i, res); b != nil && res.Stats.Median > 0 {
					r := float64(b.Stats.Median) / float64(res.Stats.Median)
					row.Vendor, row.VendorClass = vendorText(r), vendorClass(r)
				}
			}
			rd.Rows = append(rd.Rows, row)
		}
		v.Devices = append(v.Devices, rd)
	}
	for _, g := range rep.GroupRows() {
		res := g.Result
		row := groupRow{Kind: safe(g.Kind), Devices: safe(g.Device), Case: safe(res.Case), Size: bench.FormatSize(res.Size), Variant: safe(res.Variant)}
		if res.Stats.Runs > 0 {
			row.Median = bench.FormatDuration(res.Stats.Median)
		}
		if res.Err != "" {
			row.Failed = "error: " + safe(res.Err)
		} else {
			row.Rate = rateText(res.Rate())
		}
		v.Groups = append(v.Groups, row)
	}
	return render("run", v)
}

// configText describes a run's configuration in one line.
func configText(c bench.ConfigInfo) string {
	var parts []string
	if len(c.Ops) > 0 {
		parts = append(parts, "ops "+strings.Join(c.Ops, ","))
	}
	if len(c.Sizes) > 0 {
		var ss []string
		for _, n := range c.Sizes {
			ss = append(ss, bench.FormatSize(n))
		}
		parts = append(parts, "sizes "+strings.Join(ss, ","))
	}
	if c.Quick {
		parts = append(parts, "quick")
	}
	parts = append(parts, fmt.Sprintf("count %d", c.Count), fmt.Sprintf("warmup %d", c.Warmup), fmt.Sprintf("seed %d", c.Seed))
	if c.Portable {
		parts = append(parts, "portable")
	}
	if len(c.Variants) > 0 {
		parts = append(parts, "variants "+strings.Join(c.Variants, ","))
	}
	if c.Vendor {
		parts = append(parts, "vendor")
	}
	return safe(strings.Join(parts, ", "))
}

// ceilingsText lists a device's measured ceilings.
func ceilingsText(c bench.Ceilings) string {
	var parts []string
	if c.CopyGBs > 0 {
		parts = append(parts, "copy "+term.Float(c.CopyGBs)+" GB/s")
	}
	if c.FP32GFLOPs > 0 {
		parts = append(parts, "fp32 "+term.Float(c.FP32GFLOPs)+" GFLOP/s")
	}
	if c.FP64GFLOPs > 0 {
		parts = append(parts, "fp64 "+term.Float(c.FP64GFLOPs)+" GFLOP/s")
	}
	return strings.Join(parts, ", ")
}

// --- cases/NAME.html

// tableRows is the most points a series' table lists: the newest, and every step before
// them; the chart draws every point.
const tableRows = 50

type caseView struct {
	page
	Name, Family string
	Sizes        []sizeView
}

type sizeView struct {
	Anchor, Size string
	Chart        template.HTML
	Legend       []legendItem
	Series       []seriesView
}

type legendItem struct {
	Color, Label, Href string
}

type seriesView struct {
	Anchor, Heading, FP, FPHref, Color, Note string
	Rows                                     []pointRow
}

type pointRow struct {
	Run                                                      int64
	RunHref, Date, Commit, Host, Device, Median, Range, Rate string
	Delta, Step, ChangeClass, Verdict, Failed                string
}

// seriesAnchor is the id of a series' table on its case's page.
func seriesAnchor(s *series) string {
	if s.key.dims != "" {
		return fmt.Sprintf("s-%s-%d-%s-%s", s.key.fp, s.key.size, slug(s.key.dims), slug(s.key.variant))
	}
	return fmt.Sprintf("s-%s-%d-%s", s.key.fp, s.key.size, slug(s.key.variant))
}

func (s *writer) casePage(m *model, c *caseData) ([]byte, error) {
	v := caseView{page: s.page(safe(c.name), "../"), Name: safe(c.name), Family: safe(c.family)}
	var cur *sizeView
	var lines []chartLine
	flush := func() {
		if cur != nil {
			cur.Chart = historyChart(lines, m.runs, "../", c.name+" at "+cur.Size)
			v.Sizes = append(v.Sizes, *cur)
		}
	}
	for _, se := range c.sortedSeries(m) {
		if text := safe(bench.SizeText(se.key.size, se.key.dims)); cur == nil || cur.Size != text {
			flush()
			anchor := "size-" + strconv.Itoa(se.key.size)
			if se.key.dims != "" {
				anchor += "-" + slug(se.key.dims)
			}
			cur, lines = &sizeView{Size: text, Anchor: anchor}, nil
		}
		color := palette[len(lines)%len(palette)]
		label := deviceLabel(m.devices[se.key.fp])
		if se.key.variant != "" {
			label += " · " + safe(se.key.variant)
		}
		var valid []*point
		for _, p := range se.points {
			if p.failed == "" {
				valid = append(valid, p)
			}
		}
		lines = append(lines, chartLine{color: color, label: label, points: valid})
		anchor := seriesAnchor(se)
		cur.Legend = append(cur.Legend, legendItem{Color: color, Label: label, Href: "#" + anchor})
		sv := seriesView{Anchor: anchor, Heading: label, FP: se.key.fp, FPHref: "../index.html#fp-" + se.key.fp, Color: color}
		shown := 0
		for i := len(se.points) - 1; i >= 0; i-- {
			p := se.points[i]
			if shown >= tableRows && p.change.step == nil {
				continue
			}
			shown++
			row := pointRow{Run: int64(p.run.sum.ID), RunHref: runHref("../", p.run), Date: p.run.sum.Date.Format("2006-01-02 15:04"),
				Commit: shortCommit(p.run.sum.Commit), Host: safe(p.run.sum.Host), Device: safe(p.deviceID),
				Delta: deltaText(p.change), Step: stepText(p.change), ChangeClass: changeClass(p.change), Verdict: safe(p.verdict), Failed: safe(p.failed)}
			if p.stats.Runs > 0 {
				row.Median = bench.FormatDuration(p.stats.Median)
				row.Range = bench.FormatDuration(p.stats.Min) + " – " + bench.FormatDuration(p.stats.Max)
			}
			row.Rate = rateText(p.rate, p.unit)
			sv.Rows = append(sv.Rows, row)
		}
		if hidden := len(se.points) - shown; hidden > 0 {
			sv.Note = fmt.Sprintf("The newest %d of %d runs and every step before them; the chart shows them all.", tableRows, len(se.points))
		}
		cur.Series = append(cur.Series, sv)
	}
	flush()
	return render("case", v)
}

// runHref is the link from a page at root to a run's page.
func runHref(root string, r *runInfo) string { return fmt.Sprintf("%sruns/%d.html", root, r.sum.ID) }

// caseHref is the link from a page at root to the page of the case of slug name.
func caseHref(root, name string) string { return root + "cases/" + name + ".html" }
