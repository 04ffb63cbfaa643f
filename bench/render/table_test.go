package render

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// The fixtures of testdata are real runs on PoCL (two pthread devices, POCL_DEVICES="pthread
// pthread") and Rusticl, at 64K elements: single.json (opencl:0:0), multi.json (opencl:0:0
// and Rusticl's opencl:1:0, which skips float64), split.json (reduce/sum/float32 split
// across opencl:0:0 and opencl:0:1 at 64K and 256K), collective.json (an all-reduce and an
// all-gather across them), old-split.json and old-collective.json (the same kinds as
// written before they were Reports: devices as device objects, no "devices" in a split or
// collective), and vendor.json, a scripts/vendor.py report for vendor:opencl:0:0 written by
// hand (two cases of multi.json's and one of its own).

// reportKinds are the fixtures of every kind of report, alone and merged.
var reportKinds = []struct {
	name  string
	files []string
}{
	{"single", []string{"single.json"}},
	{"multi-device", []string{"multi.json"}},
	{"split", []string{"split.json"}},
	{"collective", []string{"collective.json"}},
	{"old split", []string{"old-split.json"}},
	{"old collective", []string{"old-collective.json"}},
	{"vendor", []string{"vendor.json"}},
	{"multi-device and vendor", []string{"multi.json", "vendor.json"}},
	{"split and multi-device", []string{"split.json", "multi.json"}},
	{"single and split", []string{"single.json", "split.json"}},
	{"everything", []string{"multi.json", "vendor.json", "split.json", "collective.json"}},
}

func readKind(t *testing.T, files []string) *bench.Report {
	t.Helper()
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join("testdata", f)
	}
	rep, err := bench.ReadReportFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestEveryKindRenders renders every kind of report in every format, compares it with
// itself and plots it: each renders, the table fits 120 columns (--wide shows every
// column), the JSON reads back the same, the CSV and benchstat have a row per result, split,
// device alone and collective, and the comparison of a report with itself finds no failure
// and no regression.
func TestEveryKindRenders(t *testing.T) {
	for _, k := range reportKinds {
		t.Run(k.name, func(t *testing.T) {
			rep := readKind(t, k.files)
			var buf bytes.Buffer
			if err := Table(&buf, rep, TableOptions{}); err != nil {
				t.Fatal(err)
			}
			table := buf.String()
			for _, l := range strings.Split(table, "\n") {
				if n := utf8.RuneCountInString(l); n > TableWidth {
					t.Errorf("a line of %d columns:\n%s", n, l)
				}
			}
			for _, s := range rep.Splits {
				if !strings.Contains(table, s.Case) || !strings.Contains(table, bench.FormatDuration(s.Stats.Median)) {
					t.Errorf("the table lacks the split %s %s:\n%s", s.Case, bench.FormatSize(s.Size), table)
				}
			}
			for _, c := range rep.Collectives {
				if !strings.Contains(table, c.Case) || !strings.Contains(table, bench.FormatDuration(c.Stats.Median)) {
					t.Errorf("the table lacks the collective %s:\n%s", c.Case, table)
				}
			}
			for i, d := range rep.Devices {
				if d.Device.ID == "" || !strings.Contains(table, fmt.Sprintf("[%d] %s  %s", i+1, d.Device.ID, d.Device.Name)) {
					t.Errorf("device %d without its identity:\n%s", i+1, table)
				}
			}
			buf.Reset()
			if err := Table(&buf, rep, TableOptions{Wide: true}); err != nil {
				t.Fatal(err)
			}
			prism := false // a device of Prism's has results: the table has its rates and roofs
			for _, d := range rep.Devices {
				prism = prism || (!d.IsVendor() && len(d.Results) > 0)
			}
			if strings.Contains(buf.String(), "left out") || (prism && !strings.Contains(buf.String(), "] rate")) {
				t.Errorf("--wide left columns out:\n%s", buf.String())
			}
			buf.Reset()
			if err := Markdown(&buf, rep, ""); err != nil || !strings.Contains(buf.String(), "|---") {
				t.Errorf("markdown: %v\n%s", err, buf.String())
			}

			// JSON: written and read back, the same kinds and counts.
			buf.Reset()
			if err := rep.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := bench.ReadReport(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if len(back.Devices) != len(rep.Devices) || len(back.Splits) != len(rep.Splits) || len(back.Collectives) != len(rep.Collectives) {
				t.Errorf("read back: %d devices, %d splits, %d collectives; want %d, %d, %d",
					len(back.Devices), len(back.Splits), len(back.Collectives), len(rep.Devices), len(rep.Splits), len(rep.Collectives))
			}

			// CSV: a row per result, split, device alone and collective.
			results, ok := 0, 0
			for _, d := range rep.Devices {
				results += len(d.Results)
				for _, res := range d.Results {
					if res.OK() {
						ok++
					}
				}
			}
			groups := rep.GroupRows()
			buf.Reset()
			if err := CSV(&buf, rep); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(&buf).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1+results+len(groups) {
				t.Errorf("%d CSV rows, want a header, %d results and %d splits, devices alone and collectives", len(rows), results, len(groups))
			}
			kinds := map[string]int{}
			for _, row := range rows[1:] {
				if len(row) != len(CSVHeader) {
					t.Fatalf("a CSV row of %d columns: %q", len(row), row)
				}
				kinds[row[len(row)-1]]++
			}
			if kinds[bench.KindCase] != results || kinds[bench.KindSplit] != len(rep.Splits) || kinds[bench.KindCollective] != len(rep.Collectives) {
				t.Errorf("CSV kinds %v for %d results, %d splits, %d collectives", kinds, results, len(rep.Splits), len(rep.Collectives))
			}

			// benchstat: every timed result, split, device alone and collective, each
			// with as many lines as runs, parsed by benchstat's own reader.
			buf.Reset()
			if err := Benchstat(&buf, rep); err != nil {
				t.Fatal(err)
			}
			names := map[string]int{}
			br := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "bench.txt")
			for br.Scan() {
				switch rec := br.Result(); rec := rec.(type) {
				case *benchfmt.Result:
					names[string(rec.Name)]++
				case *benchfmt.SyntaxError:
					t.Errorf("benchstat line: %v", rec)
				}
			}
			want := ok
			for _, g := range groups {
				if g.Result.OK() {
					want++
				}
			}
			if len(names) != want {
				t.Errorf("%d benchmarks in the benchstat output, want %d:\n%s", len(names), want, buf.String())
			}

			// HTML: every section the report has.
			buf.Reset()
			if err := HTML(&buf, rep, ""); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			for _, want := range []struct {
				has     bool
				section string
			}{{view{rep}.hasResults(), `id="results"`}, {len(rep.Splits) > 0, `id="splits"`}, {len(rep.Collectives) > 0, `id="collectives"`}} {
				if strings.Contains(page, want.section) != want.has {
					t.Errorf("the page has %s: %v, want %v", want.section, !want.has, want.has)
				}
			}

			// plot: an SVG that parses, for every metric but vendor (which needs baselines).
			for _, m := range []string{MetricRoof, MetricTime, MetricRate} {
				buf.Reset()
				if err := Plot(&buf, rep, "svg", m); err != nil {
					if prism || !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "no results to plot") {
						t.Errorf("plot %s: %v", m, err)
					}
					continue
				}
				if err := xml.NewDecoder(&buf).Decode(new(struct{})); err != nil {
					t.Errorf("plot %s: %v", m, err)
				}
			}

			// compare with itself: nothing failed, nothing slower, nothing the new report
			// cannot vouch for.
			cmp := bench.Compare(rep, rep, bench.DefaultCompareOptions)
			if len(cmp.Changes) != results+len(groups) {
				t.Errorf("%d changes for %d results and %d group rows", len(cmp.Changes), results, len(groups))
			}
			for _, ch := range cmp.Changes {
				if ch.Verdict == bench.VerdictFailed || ch.Verdict == bench.VerdictSlower {
					t.Errorf("%s: %s", ch, ch.Verdict)
				}
			}
			if len(cmp.Problems) > 0 {
				t.Errorf("problems: %q", cmp.Problems)
			}
			if err := Comparison(io.Discard, cmp); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestReadOldGroupReports: the split and collective reports written before they were
// Reports read with their devices' identities, and each split and collective names them.
func TestReadOldGroupReports(t *testing.T) {
	for _, f := range []string{"old-split.json", "old-collective.json"} {
		rep := readKind(t, []string{f})
		if len(rep.Devices) != 2 || rep.Devices[0].Device.ID != "opencl:0:0" || rep.Devices[1].Device.ID != "opencl:0:1" ||
			rep.Devices[0].Device.Name == "" || rep.Devices[0].Backend != "opencl" {
			t.Errorf("%s: devices %+v", f, rep.Devices)
		}
		if len(rep.Splits)+len(rep.Collectives) == 0 {
			t.Errorf("%s: no splits or collectives", f)
		}
		for _, s := range rep.Splits {
			if strings.Join(s.Devices, ",") != "opencl:0:0,opencl:0:1" {
				t.Errorf("%s: split across %q", f, s.Devices)
			}
		}
		for _, c := range rep.Collectives {
			if strings.Join(c.Devices, ",") != "opencl:0:0,opencl:0:1" {
				t.Errorf("%s: collective on %q", f, c.Devices)
			}
		}
		if err := rep.Check(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestMergeKinds: a split report and the same device's cases make one device; the same
// split or collective in two files, or a device with results in two, is an error that names
// both files.
func TestMergeKinds(t *testing.T) {
	rep := readKind(t, []string{"split.json", "multi.json"})
	var ids []string
	for _, d := range rep.Devices {
		ids = append(ids, d.Device.ID)
	}
	if strings.Join(ids, ",") != "opencl:0:0,opencl:0:1,opencl:1:0" || len(rep.Devices[0].Results) == 0 || len(rep.Splits) != 2 {
		t.Errorf("merged devices %q, %d results on the first, %d splits", ids, len(rep.Devices[0].Results), len(rep.Splits))
	}
	for _, bad := range []struct{ a, b, want string }{
		{"split.json", "split.json", "split reduce/sum/float32 64K across opencl:0:0+opencl:0:1 is in both"},
		{"collective.json", "collective.json", "collective/all-reduce/float32 4K on opencl:0:0+opencl:0:1 is in both"},
		{"old-split.json", "split.json", "split reduce/sum/float32 64K across opencl:0:0+opencl:0:1 is in both"},
		{"single.json", "multi.json", `device "opencl:0:0" is in both`},
	} {
		_, err := bench.ReadReportFiles(filepath.Join("testdata", bad.a), filepath.Join("testdata", bad.b))
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "prism compare") || !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s and %s: %v, want %q", bad.a, bad.b, err, bad.want)
		}
	}
	// A split and a collective of the same devices merge: neither is in the other file.
	rep = readKind(t, []string{"split.json", "collective.json"})
	if len(rep.Devices) != 2 || len(rep.Splits) != 2 || len(rep.Collectives) != 2 {
		t.Errorf("split and collective: %d devices, %d splits, %d collectives", len(rep.Devices), len(rep.Splits), len(rep.Collectives))
	}
}

// TestVendorOnPrismRows: a vendor.py report's results sit on the rows of the same case and
// size with the ratio against the device's time; a case only the vendor ran is a row of
// its own; with variants forced, each variant's row gets the ratio.
func TestVendorOnPrismRows(t *testing.T) {
	rep := readKind(t, []string{"multi.json", "vendor.json"})
	g, err := view{rep}.resultGrid("", false)
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for j, c := range g.cols {
		col[c.head] = j
	}
	if _, ok := col["[3] vendor"]; !ok {
		t.Fatalf("no vendor column: %q", g.header())
	}
	if _, ok := col["[3] time"]; ok {
		t.Errorf("the vendor pseudo-device has a column group: %q", g.header())
	}
	cases := map[string][]string{}
	for _, row := range g.rows {
		if _, dup := cases[row[0]+" "+row[2]]; dup {
			t.Errorf("two rows of %s %s", row[0], row[2])
		}
		cases[row[0]+" "+row[2]] = row
	}
	d0 := rep.Devices[0].Results
	for _, c := range []string{"reduce/sum/float32", "stream/triad/float32"} {
		row := cases[c+" 64K"]
		var prism *bench.Result
		for i := range d0 {
			if d0[i].Case == c {
				prism = &d0[i]
			}
		}
		v := rep.Devices[2].Results
		var vendor *bench.Result
		for i := range v {
			if v[i].Case == c {
				vendor = &v[i]
			}
		}
		want := bench.FormatDuration(vendor.Stats.Median)
		ratio := fmt.Sprintf("%.2fx", float64(vendor.Stats.Median)/float64(prism.Stats.Median))
		if row == nil || row[col["[3] vendor"]] != want || row[col["[1] vs vendor"]] != ratio {
			t.Errorf("%s: row %q, want vendor %s and ratio %s", c, row, want, ratio)
		}
		if _, ok := col["[2] vs vendor"]; ok {
			t.Errorf("%s: Rusticl, of another name, has a vendor column: %q", c, g.header())
		}
	}
	if row := cases["sort/radix/uint32 64K"]; row == nil || row[1] != "vendor" || row[col["[1] time"]] != "-" {
		t.Errorf("the vendor's own case: %q", row)
	}
	// Forced variants: the rows ask for "portable"; the vendor's row (no variant asked) is
	// still theirs.
	for i := range rep.Devices[0].Results {
		rep.Devices[0].Results[i].Requested = "portable"
	}
	g, err = view{rep}.resultGrid("", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range g.rows {
		if row[0] == "reduce/sum/float32" && row[1] == "portable" && row[col["[1] vs vendor"]] == "-" {
			t.Errorf("the forced variant's row lacks its vendor ratio: %q", row)
		}
	}
	// The vendor baseline of a device of the same name (the same card through another API).
	rep = readKind(t, []string{"multi.json", "vendor.json"})
	rep.Devices[2].Device.ID = bench.VendorPrefix + "cuda:7"
	if b := rep.VendorBaseline(0, &rep.Devices[0].Results[1]); b == nil || b.Case != rep.Devices[0].Results[1].Case {
		t.Errorf("no baseline from the pseudo-device of the same name: %+v", b)
	}
}

// TestCompareSkippedBoth: a case skipped in both reports (Rusticl's float64) is "skipped",
// not "failed", and no problem; skipped in the new report only, it is a problem.
func TestCompareSkippedBoth(t *testing.T) {
	rep := readKind(t, []string{"multi.json"})
	cmp := bench.Compare(rep, rep, bench.DefaultCompareOptions)
	found := false
	for _, ch := range cmp.Changes {
		if ch.Device == "opencl:1:0" && ch.Case == "reduce/sum/float64" {
			found = true
			if ch.Verdict != bench.VerdictSkipped || ch.VerdictText() != "skipped (in both)" || !strings.Contains(ch.Note, "fp64") {
				t.Errorf("skipped in both: %q, note %q", ch.VerdictText(), ch.Note)
			}
		}
	}
	if !found || len(cmp.Problems) > 0 {
		t.Errorf("found %v, problems %q", found, cmp.Problems)
	}
	var buf bytes.Buffer
	if err := Comparison(&buf, cmp); err != nil || !strings.Contains(buf.String(), "1 skipped, 0 failed") {
		t.Errorf("summary: %v\n%s", err, buf.String())
	}
	cur := readKind(t, []string{"multi.json"})
	cur.Devices[0].Results[0].Skipped = "no longer runs"
	cmp = bench.Compare(rep, cur, bench.DefaultCompareOptions)
	if cmp.Changes[0].VerdictText() != "skipped (in new)" || len(cmp.Problems) != 1 {
		t.Errorf("skipped in new: %q, problems %q", cmp.Changes[0].VerdictText(), cmp.Problems)
	}
}

// TestCompareGroups: splits, devices alone and collectives are compared as cases, by kind,
// devices, case and size; a slower split is flagged.
func TestCompareGroups(t *testing.T) {
	old := readKind(t, []string{"split.json", "collective.json"})
	cur := readKind(t, []string{"split.json", "collective.json"})
	slower := make([]time.Duration, len(cur.Splits[0].Stats.Samples))
	for i, d := range cur.Splits[0].Stats.Samples {
		slower[i] = 4 * d
	}
	cur.Splits[0].Stats = bench.Summarize(slower)
	cmp := bench.Compare(old, cur, bench.DefaultCompareOptions)
	kinds := map[string]int{}
	for _, ch := range cmp.Changes {
		kinds[ch.Kind]++
	}
	if kinds[bench.KindSplit] != 2 || kinds[bench.KindAlone] != 4 || kinds[bench.KindCollective] != 2 {
		t.Errorf("kinds %v", kinds)
	}
	if ch := cmp.Changes[0]; ch.Kind != bench.KindSplit || ch.Verdict != bench.VerdictSlower || ch.DeviceText() != "split opencl:0:0+opencl:0:1" {
		t.Errorf("first change %s: %s", ch, ch.Verdict)
	}
	if cmp.Regressions() != 1 {
		t.Errorf("%d regressions, want 1", cmp.Regressions())
	}
}

// TestBenchValue: benchstat rates keep 4 significant digits, so that 0.0031 and 0.0044 GB/s
// stay apart.
func TestBenchValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0.0031234, "0.003123"}, {0.0044, "0.004400"}, {12.34567, "12.346"}, {1234.5678, "1234.568"}, {0, "0"}, {2.5e-9, "0.000000002500"}} {
		if got := benchValue(c.v); got != c.want {
			t.Errorf("benchValue(%g) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestLegendExplainsCells: the legend explains "a | b" and an "of roof" of "-" where they
// appear, and only there.
func TestLegendExplainsCells(t *testing.T) {
	rep := readKind(t, []string{"multi.json"})
	var buf bytes.Buffer
	if err := Table(&buf, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "a | b") || strings.Contains(buf.String(), "no ceiling measures") {
		t.Errorf("legend of cells that are not there:\n%s", buf.String())
	}
	r0 := &rep.Devices[0].Results[0]
	r0.Variant = "flash-simt"
	half := *r0
	half.Case, half.Type, half.Bound, half.CacheResident, half.RoofMissing = "gemm/nn/float16", "float16", "", false, "no ceiling measures float16 arithmetic"
	rep.Devices[0].Results = append(rep.Devices[0].Results, half)
	buf.Reset()
	if err := Table(&buf, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"flash-simt | portable", "a | b in the variant column", "compares two implementations", "of roof -: no ceiling measures float16 arithmetic"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestTableFitsWidth: eight devices side by side come in blocks no wider than TableWidth,
// every device in one of them, with a line that says what was left out; --wide puts them on
// one line.
func TestTableFitsWidth(t *testing.T) {
	rep := readKind(t, []string{"single.json"})
	one := rep.Devices[0]
	rep.Devices = nil
	for i := range 8 {
		d := one
		d.Device.ID = fmt.Sprintf("opencl:0:%d", i)
		rep.Devices = append(rep.Devices, d)
	}
	var buf bytes.Buffer
	if err := Table(&buf, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > TableWidth {
			t.Errorf("a line of %d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
	for i := range 8 {
		if !strings.Contains(out, fmt.Sprintf("[%d] time", i+1)) {
			t.Errorf("device %d missing:\n%s", i+1, out)
		}
	}
	if strings.Count(out, "case ") < 2 || !strings.Contains(out, "rate columns left out to fit 120 columns: --wide shows them") {
		t.Errorf("no blocks or no note:\n%s", out)
	}
	buf.Reset()
	if err := Table(&buf, rep, TableOptions{Wide: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), "case ") != 1 || !strings.Contains(buf.String(), "[8] rate") {
		t.Errorf("--wide:\n%s", buf.String())
	}
}

// TestWrapWords: lines break at spaces within the width, the later ones indented; a word
// longer than a line stands alone.
func TestWrapWords(t *testing.T) {
	got := wrapWords("aaa bbb ccc dddddddddddd e", 8, "", "  ")
	want := []string{"aaa bbb", "  ccc", "  dddddddddddd", "  e"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrapWords = %q, want %q", got, want)
	}
}

// TestTableMarksZeroTimesInvalid renders the report of bench's TestReadMarksZeroTimesInvalid:
// an invalid case shows no rate and says why.
func TestTableMarksZeroTimesInvalid(t *testing.T) {
	doc := `{"schema": 1, "devices": [{"device": {"id": "opencl:1:0"}, "results": [
		{"case": "stream/copy/float32", "size": 32768, "verified": true, "bytes": 262144, "gbs": 262144, "fraction": 2600,
		 "stats": {"runs": 3, "median_ns": 1, "min_ns": 0, "max_ns": 2, "samples_ns": [0, 1, 2]}},
		{"case": "stream/scale/float32", "size": 32768, "verified": true, "bytes": 262144,
		 "stats": {"runs": 2, "median_ns": 0, "min_ns": 0, "max_ns": 0}},
		{"case": "stream/triad/float32", "size": 32768, "verified": true, "bytes": 393216, "gbs": 39.3,
		 "stats": {"runs": 2, "median_ns": 10000, "min_ns": 10000, "max_ns": 10000, "samples_ns": [10000, 10000]}}]}]}`
	r, err := bench.ReadReport(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Table(&buf, r, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "262144") || !strings.Contains(out, "INVALID") || !strings.Contains(out, "INVALID [1] stream/copy/float32 32K: invalid measurement: 1 of 3 device times are not positive") {
		t.Errorf("table:\n%s", out)
	}
}

// TestTableMissingCeilings renders a device whose copy ceiling failed (as in bench's
// TestCeilingFailureKeepsDevice) and one whose ceilings are not valid measurements (as in
// TestCeilingInvalid): the device line and the case say so.
func TestTableMissingCeilings(t *testing.T) {
	res := result("stream/copy/float32", 10, 9, 11)
	res.RoofMissing = "copy ceiling missing: copy kernel: injected failure"
	rep := report(res)
	rep.Devices[0].Ceilings = bench.Ceilings{CopyAbsent: "copy kernel: injected failure", FP32GFLOPs: 100, PeakHow: "8 independent mad chains"}
	var buf bytes.Buffer
	if err := Table(&buf, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ceilings: copy missing", "copy ceiling missing: copy kernel: injected failure", "no roof"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}

	rep = report(result("stream/copy/float32", 10, 9, 11))
	rep.Devices[0].Ceilings = bench.Ceilings{Invalid: "copy: buffer copy: 2 of 2 device times are not positive; fp64 peak: 1 lanes: 3 of 3 device times are not positive"}
	buf.Reset()
	if err := Table(&buf, rep, TableOptions{}); err != nil || !strings.Contains(buf.String(), "ceilings: invalid measurement: copy: buffer copy") {
		t.Errorf("table: %v\n%s", err, buf.String())
	}
}

// TestTableSaysQueuesHeld renders a device timed with its queue held (bench.TimingHeld)
// and one timed by plain events: the header says so for the first only.
func TestTableSaysQueuesHeld(t *testing.T) {
	for _, held := range []bool{false, true} {
		rep := report(result("stream/copy/float32", 10, 9, 11))
		rep.Devices[0].Timing = bench.TimingEvents
		if held {
			rep.Devices[0].Timing = bench.TimingHeld
		}
		var buf bytes.Buffer
		if err := Table(&buf, rep, TableOptions{}); err != nil {
			t.Fatal(err)
		}
		out := strings.Join(strings.Fields(buf.String()), " ")
		says := strings.Contains(out, "device-event timing, queues held while each run is enqueued")
		if says != held || !strings.Contains(out, "device-event timing") {
			t.Errorf("held %v: table:\n%s", held, out)
		}
	}
}
