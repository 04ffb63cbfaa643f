package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/render"
	"github.com/prism-compute/prism/engine/enginetest"
)

// execPrism runs the CLI with args (compare and plot included, whether or not root.go
// registers them yet) and returns stdout and the error.
func execPrism(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	for _, c := range []func() *cobra.Command{newCompareCmd, newPlotCmd} {
		cmd := c()
		if found, _, err := root.Find([]string{cmd.Name()}); err != nil || found == root {
			root.AddCommand(cmd)
		}
	}
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		t.Logf("prism %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), err
}

// benchRuns holds two JSON reports of the same small bench on the first OpenCL device,
// written once for all the tests of this file.
var benchRuns struct {
	once sync.Once
	dir  string
	a, b string // paths
	err  error
}

func twoRuns(t *testing.T) (dir, a, b string) {
	t.Helper()
	ids := enginetest.DeviceIDs(t, "opencl")
	benchRuns.once.Do(func() {
		benchRuns.dir, benchRuns.err = os.MkdirTemp("", "prism-bench-test")
		if benchRuns.err != nil {
			return
		}
		for i, p := range []*string{&benchRuns.a, &benchRuns.b} {
			out, err := execPrism(t, "bench", "--device", ids[0], "--ops", "stream/triad,stream/copy/float32",
				"--sizes", "4K,33000", "--quick", "--count", "5", "--json", "-q")
			if err != nil {
				benchRuns.err = err
				return
			}
			*p = filepath.Join(benchRuns.dir, fmt.Sprintf("run%d.json", i))
			if benchRuns.err = os.WriteFile(*p, []byte(out), 0o644); benchRuns.err != nil {
				return
			}
		}
	})
	if benchRuns.err != nil {
		t.Fatal(benchRuns.err)
	}
	return benchRuns.dir, benchRuns.a, benchRuns.b
}

func TestMain(m *testing.M) {
	if args := os.Getenv("PRISM_TEST_RUN_MAIN"); args != "" {
		// The test binary as the prism command, for the tests that send it signals.
		os.Args = append([]string{"prism"}, strings.Split(args, "\x1f")...)
		main()
		return
	}
	cleanup := isolateStore() // no test records in the user's store
	code := m.Run()
	cleanup()
	if benchRuns.dir != "" {
		os.RemoveAll(benchRuns.dir)
	}
	os.Exit(code)
}

func readReport(t *testing.T, path string) *bench.Report {
	t.Helper()
	r, err := bench.ReadReportFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBenchJSONMatchesSchema validates `prism bench --json` against docs/bench.schema.json
// and checks that every case was verified and timed.
func TestBenchJSONMatchesSchema(t *testing.T) {
	_, a, _ := twoRuns(t)
	schema := loadSchema(t)
	raw, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if errs := schema.validate(doc); len(errs) > 0 {
		t.Errorf("the report does not match docs/bench.schema.json:\n%s", strings.Join(errs, "\n"))
	}
	rep := readReport(t, a)
	if rep.Schema != bench.SchemaVersion || len(rep.Devices) != 1 {
		t.Fatalf("schema %d, %d devices", rep.Schema, len(rep.Devices))
	}
	d := rep.Devices[0]
	if d.Ceilings.CopyGBs <= 0 || d.Ceilings.FP32GFLOPs <= 0 || (d.Device.FP64 && d.Ceilings.FP64GFLOPs <= 0) {
		t.Errorf("ceilings not measured: %+v", d.Ceilings)
	}
	if d.Telemetry.Available || d.Telemetry.Reason == "" {
		t.Errorf("telemetry on PoCL: %+v, want absent with a reason", d.Telemetry)
	}
	if len(d.Results) != 3*2 {
		t.Fatalf("%d results, want 3 ops x 2 sizes", len(d.Results))
	}
	for _, r := range d.Results {
		if !r.OK() || r.Stats.Runs != 5 || len(r.Stats.Samples) != 5 || r.Fraction <= 0 || r.Bound == "" {
			t.Errorf("%s %d: %+v", r.Case, r.Size, r)
		}
	}
	if rep.Config.Count != 5 || !rep.Config.Quick || len(rep.Config.Sizes) != 2 || len(rep.Command) < 2 {
		t.Errorf("config not recorded: %+v, command %q", rep.Config, rep.Command)
	}
}

// TestSchemaRejects checks that the validator is not vacuous.
func TestSchemaRejects(t *testing.T) {
	schema := loadSchema(t)
	for name, doc := range map[string]string{
		"missing devices": `{"schema": 1, "prism_version": "x", "date": "d", "host": "h", "go_version": "g", "goos": "l", "goarch": "a", "config": {"quick": true, "count": 1, "warmup": 0, "seed": 1, "portable": false}}`,
		"wrong schema":    `{"schema": 2}`,
		"string count":    `{"schema": 1, "prism_version": "x", "date": "d", "host": "h", "go_version": "g", "goos": "l", "goarch": "a", "config": {"quick": true, "count": "1", "warmup": 0, "seed": 1, "portable": false}, "devices": []}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		if errs := schema.validate(v); len(errs) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestCompareTwoRuns compares real runs and doctored copies of them: a run with itself is
// ~ everywhere with p = 1; a case made four times slower on every run is slower with
// p < 0.05 and a CI above 1; a case cut to two runs is ~ for want of samples; a case
// without samples falls back to the ranges; a case gone is listed.
func TestCompareTwoRuns(t *testing.T) {
	dir, a, b := twoRuns(t)
	out, err := execPrism(t, "compare", a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "stream/triad/float32") || !strings.Contains(out, "of 6 cases") || !strings.Contains(out, "n=5+5") {
		t.Errorf("compare output:\n%s", out)
	}
	// A run against itself: identical samples, no change.
	out, err = execPrism(t, "compare", "--json", a, a)
	if err != nil {
		t.Fatal(err)
	}
	var cmp bench.Comparison
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatal(err)
	}
	if len(cmp.Changes) != 6 || cmp.Alpha != bench.DefaultAlpha {
		t.Fatalf("%d changes at alpha %v, want 6 at %v", len(cmp.Changes), cmp.Alpha, bench.DefaultAlpha)
	}
	for _, ch := range cmp.Changes {
		if ch.Verdict != bench.VerdictSame || ch.Test != bench.TestMannWhitney || ch.P != 1 || ch.Ratio != 1 ||
			!(ch.RatioLo <= 1 && 1 <= ch.RatioHi) || ch.N1 != 5 || ch.N2 != 5 {
			t.Errorf("%s against itself: %+v", ch, ch)
		}
	}
	// A doctored copy of the first run: case 0 four times slower or more on every run, case 1
	// as slow but cut to two runs, case 2 without samples, the last case gone.
	rep := readReport(t, a)
	res := rep.Devices[0].Results
	slower := func(st *bench.Stats, keep int) {
		s, add := st.Samples[:keep], 3*st.Max
		for i := range s {
			s[i] += add // every run slower than the slowest before, however noisy
		}
		*st = bench.Summarize(s)
	}
	slower(&res[0].Stats, 5)
	slower(&res[1].Stats, 2)
	res[2].Stats.Samples = nil
	gone := res[len(res)-1]
	rep.Devices[0].Results = res[:len(res)-1]
	slow := filepath.Join(dir, "slow.json")
	saveReport(t, slow, rep)
	if _, err := execPrism(t, "compare", a, slow); err != nil {
		t.Errorf("without --fail-on-regression: %v", err)
	}
	out, err = execPrism(t, "compare", "--json", a, slow)
	if err != nil {
		t.Fatal(err)
	}
	cmp = bench.Comparison{}
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatal(err)
	}
	byCase := map[string]bench.Change{}
	for _, ch := range cmp.Changes {
		byCase[ch.Case+" "+bench.FormatSize(ch.Size)] = ch
	}
	key := func(r bench.Result) string { return r.Case + " " + bench.FormatSize(r.Size) }
	if ch := byCase[key(res[0])]; ch.Verdict != bench.VerdictSlower || ch.P >= 0.05 || ch.RatioLo <= 1 || ch.Ratio < 4 {
		t.Errorf("4x slower: %+v", ch)
	}
	if ch := byCase[key(res[1])]; ch.VerdictText() != "~ (need >= 4 samples)" || ch.N2 != 2 || ch.Ratio < 3 {
		t.Errorf("two runs: %q, %+v", ch.VerdictText(), ch)
	}
	if ch := byCase[key(res[2])]; ch.Test != bench.TestRanges || !strings.Contains(ch.Note, "no per-run samples") {
		t.Errorf("no samples: %+v", ch)
	}
	if ch := byCase[key(gone)]; ch.Verdict != bench.VerdictOnlyOld {
		t.Errorf("gone: %+v", ch)
	}
	out, err = execPrism(t, "compare", "--fail-on-regression", a, slow)
	if err == nil || run(context.Background(), []string{"compare", "--fail-on-regression", a, slow}) == exitOK {
		t.Errorf("--fail-on-regression with a case 4x slower: no error\n%s", out)
	}
	line := regexp.MustCompile(`(?m)^opencl\S*\s+` + regexp.QuoteMeta(res[0].Case) + `\s+` + bench.FormatSize(res[0].Size) + `\s.*p=0\.0\d\d n=5\+5\s+slower\s*$`)
	if !line.MatchString(out) {
		t.Errorf("the slower case is not flagged with its p-value:\n%s", out)
	}
	if !strings.Contains(out, "~ (need >= 4 samples)") || !strings.Contains(out, "only old") || !strings.Contains(out, gone.Case) {
		t.Errorf("the case with two runs or the missing case %s is not listed:\n%s", gone.Case, out)
	}
}

func saveReport(t *testing.T, path string, r *bench.Report) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPlotWritesPNGAndSVG draws the bars of a real run in PNG and SVG, every metric and
// the deprecated names, and the roofline.
func TestPlotWritesPNGAndSVG(t *testing.T) {
	dir, a, _ := twoRuns(t)
	pngPath, svgPath := filepath.Join(dir, "chart.png"), filepath.Join(dir, "chart.svg")
	if _, err := execPrism(t, "plot", a, "-o", pngPath); err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, pngPath)
	if b := img.Bounds(); b.Dx() != 1100 || b.Dy() < 300 {
		t.Errorf("PNG is %v, want 1100 pixels wide", b)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--metric", "roof"}, []string{"Fraction of the roofline ceiling", "stream", "triad/float32 4K", "copy/float32 33000", "100%"}},
		{[]string{"--metric", "time"}, []string{"Median time per run", "µs"}},
		{[]string{"--metric", "rate"}, []string{"Achieved rate", "GB/s"}},
		{[]string{"--metric", "gbs"}, []string{"Achieved rate", "GB/s"}},
		{[]string{"--metric", "fraction"}, []string{"Fraction of the roofline ceiling"}},
		{[]string{"--roofline"}, []string{"Roofline: opencl:0:0", "stream/triad/float32 4K", "fp32 peak", "stream/copy/float32 4K ("}},
	} {
		if _, err := execPrism(t, append([]string{"plot", a, "-o", svgPath}, tc.args...)...); err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		texts, shapes := svgTexts(t, svgPath)
		if shapes < 6 {
			t.Errorf("%s: %d paths/rects, want at least one per case", tc.args, shapes)
		}
		for _, want := range append(tc.want, "prism ", "opencl:0:0") {
			if !strings.Contains(texts, want) {
				t.Errorf("%s: SVG text lacks %q: %q", tc.args, want, texts)
			}
		}
	}
	// A deprecated name works and says what replaces it.
	var errOut bytes.Buffer
	root := newRootCmd()
	root.SetErr(&errOut)
	root.SetOut(io.Discard)
	root.SetArgs([]string{"plot", a, "-o", svgPath, "--metric", "gflops"})
	if err := root.Execute(); err != nil || !strings.Contains(errOut.String(), "deprecated: use --metric rate") {
		t.Errorf("--metric gflops: %v, stderr %q", err, errOut.String())
	}
	// The run has no vendor baselines: the vendor chart is an error that says so.
	if _, err := execPrism(t, "plot", a, "-o", svgPath, "--metric", "vendor"); err == nil || !strings.Contains(err.Error(), "vendor") {
		t.Errorf("--metric vendor without baselines: %v", err)
	}
	// An unsupported extension is a usage error naming the supported ones.
	_, err := execPrism(t, "plot", a, "-o", filepath.Join(dir, "chart.gif"))
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), ".svg") || !strings.Contains(err.Error(), ".png") {
		t.Errorf("chart.gif: %v, want a usage error naming .svg and .png", err)
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s does not decode: %v", path, err)
	}
	return img
}

// svgTexts parses an SVG file and returns its texts joined by "|" and its paths and rects.
func svgTexts(t *testing.T, path string) (string, int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	shapes, texts := 0, []string{}
	dec := xml.NewDecoder(bytes.NewReader(raw))
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "path", "rect":
				shapes++
			case "text":
				inText = true
			}
		case xml.EndElement:
			if tok.Name.Local == "text" {
				inText = false
			}
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		}
	}
	return strings.Join(texts, "|"), shapes
}

// TestReportHTML writes the page of a real run to a file and to stdout.
func TestReportHTML(t *testing.T) {
	dir, a, _ := twoRuns(t)
	page := filepath.Join(dir, "run.html")
	if _, err := execPrism(t, "report", a, "--html", page); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(raw)
	for _, want := range []string{"<!DOCTYPE html>", "<title>prism bench", "stream/triad/float32", "[1] of roof", "Roofline: opencl:0:0"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(html, "<svg"); n != 2 {
		t.Errorf("%d SVG charts, want the bars and one roofline", n)
	}
	out, err := execPrism(t, "report", a, "--html", "-")
	if err != nil || out != html {
		t.Errorf("--html - differs from the file (%v)", err)
	}
	var ue usageError
	if _, err := execPrism(t, "report", a, "--html", page, "--json"); !errors.As(err, &ue) {
		t.Errorf("--html with --json: %v, want a usage error", err)
	}
}

func TestCSVAndBenchstat(t *testing.T) {
	_, a, _ := twoRuns(t)
	rep := readReport(t, a)
	var buf bytes.Buffer
	if err := render.CSV(&buf, rep); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v", err)
	}
	if strings.Join(recs[0], ",") != strings.Join(render.CSVHeader, ",") || len(recs) != 1+6 {
		t.Fatalf("CSV header %q and %d rows", recs[0], len(recs)-1)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, r := range recs[1:] {
		if r[col["status"]] != "ok" {
			t.Errorf("row %q", r)
		}
		for _, c := range []string{"size", "median_ns", "gbs", "fraction"} {
			if v, err := strconv.ParseFloat(r[col[c]], 64); err != nil || v <= 0 {
				t.Errorf("%s = %q", c, r[col[c]])
			}
		}
	}
	buf.Reset()
	if err := render.Benchstat(&buf, rep); err != nil {
		t.Fatal(err)
	}
	result := regexp.MustCompile(`^Benchmark[A-Z][\w.]*/size=\d+/device=[^\s/]+-\d+\s+1\s+\d+ ns/op\s+[\d.]+ GB/s(\s+[\d.]+ GFLOP/s)?$`)
	config := regexp.MustCompile(`^([a-z][\w-]*): \S.*$|^Unit \S+ better=higher$`)
	results, configs := 0, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		switch {
		case result.MatchString(line):
			results++
		case config.MatchString(line):
			configs[strings.SplitN(line, ":", 2)[0]] = true
		default:
			t.Errorf("benchstat line not understood: %q", line)
		}
	}
	if results != 6*5 {
		t.Errorf("%d result lines, want one per timed run (30)", results)
	}
	for _, k := range []string{"goos", "goarch", "pkg", "device", "backend"} {
		if !configs[k] {
			t.Errorf("no %s: line", k)
		}
	}
	// The CLI flags reach the same writers.
	out, err := execPrism(t, "bench", "--ops", "stream/copy/float32", "--sizes", "1K", "--count", "2", "--quick", "--markdown", "-q")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "| case | variant | size |") || !strings.Contains(out, "stream/copy/float32") {
		t.Errorf("markdown:\n%s", out)
	}
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--sizes", "12Q"},
		{"bench", "--ops", "no-such-family"},
		{"bench", "--json", "--csv"},
		{"bench", "--device", "cpu", "--all-devices"},
	} {
		if code := run(context.Background(), args); code != exitUsage {
			t.Errorf("prism %s: exit %d, want %d", strings.Join(args, " "), code, exitUsage)
		}
	}
	for _, args := range [][]string{
		{"plot", "x.json"},
		{"plot", "x.json", "-o", "x.svg", "--metric", "watts"},
		{"compare", "only-one.json"},
		{"compare", "a.json", "b.json", "--threshold", "-1"},
		{"compare", "a.json", "b.json", "--alpha", "1.5"},
	} {
		var ue usageError
		if _, err := execPrism(t, args...); !errors.As(err, &ue) {
			t.Errorf("prism %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// jsonSchema is the subset of JSON Schema (draft 2020-12) that docs/bench.schema.json uses:
// type (a name or a list), required, properties, items, enum, $ref to "#/$defs/..."; the
// annotations $schema, $id, title, description and $defs. Any other keyword is an error, so
// the schema cannot silently rely on one this validator ignores.
type jsonSchema struct {
	root map[string]any
}

func loadSchema(t *testing.T) *jsonSchema {
	t.Helper()
	raw, err := os.ReadFile("../../docs/bench.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatalf("schema: %v", err)
	}
	s := &jsonSchema{root: root}
	if errs := s.checkKeywords(root, "#"); len(errs) > 0 {
		t.Fatalf("schema uses keywords the validator does not implement:\n%s", strings.Join(errs, "\n"))
	}
	return s
}

var schemaKeywords = map[string]bool{"$schema": true, "$id": true, "title": true, "description": true, "$defs": true,
	"type": true, "required": true, "properties": true, "additionalProperties": true, "items": true, "enum": true, "$ref": true}

func (s *jsonSchema) checkKeywords(node map[string]any, at string) []string {
	var errs []string
	for k, v := range node {
		if !schemaKeywords[k] {
			errs = append(errs, at+": keyword "+k)
		}
		switch k {
		case "properties", "$defs":
			for name, sub := range v.(map[string]any) {
				errs = append(errs, s.checkKeywords(sub.(map[string]any), at+"/"+k+"/"+name)...)
			}
		case "items", "additionalProperties":
			errs = append(errs, s.checkKeywords(v.(map[string]any), at+"/"+k)...)
		}
	}
	return errs
}

func (s *jsonSchema) validate(doc any) []string { return s.check(s.root, doc, "$") }

func (s *jsonSchema) check(node map[string]any, v any, at string) []string {
	if ref, ok := node["$ref"].(string); ok {
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		def, found := s.root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok || !found {
			return []string{at + ": unresolved $ref " + ref}
		}
		return s.check(def, v, at)
	}
	var errs []string
	if typ, ok := node["type"]; ok {
		var names []string
		switch typ := typ.(type) {
		case string:
			names = []string{typ}
		case []any:
			for _, n := range typ {
				names = append(names, n.(string))
			}
		}
		match := false
		for _, n := range names {
			match = match || hasType(v, n)
		}
		if !match {
			return []string{fmt.Sprintf("%s: %T %v is not of type %v", at, v, v, names)}
		}
	}
	if enum, ok := node["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || fmt.Sprint(e) == fmt.Sprint(v)
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v not in %v", at, v, enum))
		}
	}
	if obj, ok := v.(map[string]any); ok {
		if req, ok := node["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					errs = append(errs, fmt.Sprintf("%s: required %q missing", at, r))
				}
			}
		}
		if props, ok := node["properties"].(map[string]any); ok {
			for k, sub := range props {
				if pv, ok := obj[k]; ok {
					errs = append(errs, s.check(sub.(map[string]any), pv, at+"."+k)...)
				}
			}
		}
		// A property the schema does not name must match additionalProperties where the
		// schema gives it, else it is an error.
		props, _ := node["properties"].(map[string]any)
		addl, hasAddl := node["additionalProperties"].(map[string]any)
		for k, pv := range obj {
			if _, ok := props[k]; ok {
				continue
			}
			switch {
			case hasAddl:
				errs = append(errs, s.check(addl, pv, at+"."+k)...)
			case props != nil:
				errs = append(errs, fmt.Sprintf("%s: property %q is not in the schema", at, k))
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := node["items"].(map[string]any); ok {
			for i, e := range arr {
				errs = append(errs, s.check(items, e, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return errs
}

func hasType(v any, name string) bool {
	switch name {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "null":
		return v == nil
	}
	return false
}

// TestBenchVendor runs `prism bench --vendor` on an OpenCL device: GEMM and FFT cases carry
// the vendor library's verified, timed result and a "vs vendor" column; an op no library
// computes says so; the JSON still matches the schema.
func TestBenchVendor(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	out, err := execPrism(t, "bench", "--device", ids[0], "--ops", "gemm/nn/float32,fft/c2c/float32,stream/copy/float32",
		"--sizes", "4K", "--count", "3", "--warmup", "1", "--vendor", "--json", "-q")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if errs := loadSchema(t).validate(doc); len(errs) > 0 {
		t.Errorf("the report does not match docs/bench.schema.json:\n%s", strings.Join(errs, "\n"))
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Config.Vendor || len(rep.Devices) != 1 || len(rep.Devices[0].Results) != 3 {
		t.Fatalf("config %+v, %d devices", rep.Config, len(rep.Devices))
	}
	for _, res := range rep.Devices[0].Results {
		switch {
		case res.Family == "stream":
			if res.Vendor != nil || !strings.Contains(res.NoVendor, "no vendor library routine") {
				t.Errorf("%s: vendor %v, no_vendor %q; want none, saying so", res.Case, res.Vendor, res.NoVendor)
			}
		case res.Vendor == nil:
			t.Errorf("%s: no vendor result (%q)", res.Case, res.NoVendor)
		case res.Vendor.Skipped != "":
			t.Logf("%s: vendor library skipped: %s", res.Case, res.Vendor.Skipped)
		case !res.Vendor.OK() || !res.Vendor.VendorLibrary || res.Vendor.Library == "":
			t.Errorf("%s: vendor result %+v, want verified and timed, naming its library", res.Case, *res.Vendor)
		}
	}
	table, err := execPrism(t, "bench", "--device", ids[0], "--ops", "gemm/nn/float32,stream/copy/float32",
		"--sizes", "4K", "--count", "2", "--warmup", "1", "--vendor", "-q")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[1] vs vendor", "none", "vendor libraries:"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestReportMergesVendorReport: `prism report run.json vendor.json` puts a vendor.py report
// (pseudo-device vendor:ID) on the rows of the run's cases, with its time and the ratio in
// a "vs vendor" column (and in the plot's vendor metric); a device in both files is
// refused.
func TestReportMergesVendorReport(t *testing.T) {
	dir, a, _ := twoRuns(t)
	rep := readReport(t, a)
	id := rep.Devices[0].Device.ID
	rep.Devices[0].Device.ID = bench.VendorPrefix + id
	for i := range rep.Devices[0].Results {
		rep.Devices[0].Results[i].Variant, rep.Devices[0].Results[i].VendorLibrary = "vendor", true
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	v := filepath.Join(dir, "vendor.json")
	if err := os.WriteFile(v, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := execPrism(t, "report", a, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[1] " + id, "[2] " + bench.VendorPrefix + id, "[2] vendor", "[1] vs vendor"} {
		if !strings.Contains(out, want) {
			t.Errorf("merged report lacks %q:\n%s", want, out)
		}
	}
	// The same results as baseline: every row of the run has the ratio 1.00x, and no row
	// of the vendor's stands apart.
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "stream/") {
			rows++
			if !strings.HasSuffix(l, "1.00x") {
				t.Errorf("row without its vendor ratio: %q", l)
			}
		}
	}
	if rows != len(rep.Devices[0].Results) {
		t.Errorf("%d rows for %d cases:\n%s", rows, len(rep.Devices[0].Results), out)
	}
	if _, err := execPrism(t, "plot", a, v, "--metric", "vendor", "-o", filepath.Join(dir, "vendor.svg")); err != nil {
		t.Errorf("plot --metric vendor of the merged reports: %v", err)
	}
	if _, err := execPrism(t, "report", a, a); err == nil || !strings.Contains(err.Error(), "is in both") {
		t.Errorf("the same device twice: %v, want an error", err)
	}
}

// TestBenchMemoryFamilies runs the families that move data between host and device,
// overlap copies with compute, allocate and access memory, at the quick size on an OpenCL
// device: each case verified and timed, the overlap cases with their stage figures.
func TestBenchMemoryFamilies(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	out, err := execPrism(t, "bench", "--device", ids[0], "--ops", "transfer,overlap,alloc,access", "--quick", "--count", "2", "--json", "-q")
	if err != nil {
		t.Fatal(err)
	}
	r, err := bench.ReadReport(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, d := range r.Devices {
		for _, res := range d.Results {
			seen[res.Family]++
			if !res.OK() || res.Stats.Median <= 0 {
				t.Errorf("%s: verified %v, error %q, median %v", res.Case, res.Verified, res.Err, res.Stats.Median)
			}
			if res.Family == "overlap" && res.Figures["serial_ns"] <= 0 {
				t.Errorf("%s: figures %v, want the serial pipeline's time", res.Case, res.Figures)
			}
			// Allocations enqueue nothing: the host clock times them, and the case says so.
			if res.Family == "alloc" && res.Timing != bench.TimingHost {
				t.Errorf("%s: timing %q, want %q", res.Case, res.Timing, bench.TimingHost)
			}
			if res.Family == "access" && res.Timing != "" {
				t.Errorf("%s: timing %q, want the device's", res.Case, res.Timing)
			}
		}
	}
	for _, f := range []string{"transfer", "overlap", "alloc", "access"} {
		if seen[f] == 0 {
			t.Errorf("no %s case in the report (families: %v)", f, seen)
		}
	}
}

// TestReportMergesHosts: reports of two nodes, each with the same device ID, merge with
// every device qualified by its host, as the cluster scripts of docs/CLUSTER.md do.
func TestReportMergesHosts(t *testing.T) {
	dir, a, _ := twoRuns(t)
	rep := readReport(t, a)
	id := rep.Devices[0].Device.ID
	var paths []string
	for _, host := range []string{"node0", "node1"} {
		rep.Host = host
		raw, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, host+".json")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out, err := execPrism(t, append([]string{"report"}, paths...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[1] node0/" + id, "[2] node1/" + id, "[2] vs [1]"} {
		if !strings.Contains(out, want) {
			t.Errorf("merged report lacks %q:\n%s", want, out)
		}
	}
}

// TestReportEveryKind runs prism report (table, --wide, --markdown, --csv, --benchstat,
// --json, --html), compare and plot on every kind of report of bench/render/testdata, alone and
// merged: a single device, several, a split, collectives, both as written before they were
// suite reports, a vendor.py report, and merges of them. Each command succeeds and prints
// what the kind holds; the default table fits 120 columns.
func TestReportEveryKind(t *testing.T) {
	td := func(names ...string) []string {
		for i, n := range names {
			names[i] = filepath.Join("..", "..", "bench", "render", "testdata", n)
		}
		return names
	}
	dir := t.TempDir()
	for _, k := range []struct {
		name  string
		files []string
		want  []string // in the table
	}{
		{"single", td("single.json"), []string{"[1] opencl:0:0", "reduce/sum/float32"}},
		{"multi-device", td("multi.json"), []string{"[2] vs [1]", "skipped"}},
		{"split", td("split.json"), []string{"[1]+[2]", "speedup", "[2] alone"}},
		{"collective", td("collective.json"), []string{"collective/all-gather/float64", "busbw GB/s"}},
		{"old split", td("old-split.json"), []string{"[1] opencl:0:0", "[1]+[2]"}},
		{"old collective", td("old-collective.json"), []string{"[2] opencl:0:1", "collective/broadcast/float32"}},
		{"vendor", td("vendor.json"), []string{"[1] vendor", "sort/radix/uint32"}},
		{"merged", td("multi.json", "vendor.json", "split.json", "collective.json"),
			[]string{"[1] vs vendor", "[3] vendor", "[1]+[4]", "collective/all-reduce/float32"}},
	} {
		t.Run(k.name, func(t *testing.T) {
			out, err := execPrism(t, append([]string{"report"}, k.files...)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range k.want {
				if !strings.Contains(out, w) {
					t.Errorf("table lacks %q:\n%s", w, out)
				}
			}
			for _, l := range strings.Split(out, "\n") {
				if n := len([]rune(l)); n > 120 {
					t.Errorf("a line of %d columns: %q", n, l)
				}
			}
			for _, format := range []string{"--wide", "--markdown", "--csv", "--benchstat", "--json"} {
				out, err := execPrism(t, append([]string{"report", format}, k.files...)...)
				if err != nil || len(out) == 0 {
					t.Errorf("report %s: %v", format, err)
				}
				if format != "--json" {
					continue
				}
				var doc any
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatal(err)
				}
				if errs := loadSchema(t).validate(doc); len(errs) > 0 {
					t.Errorf("the JSON does not match docs/bench.schema.json:\n%s", strings.Join(errs, "\n"))
				}
			}
			page := filepath.Join(dir, strings.ReplaceAll(k.name, " ", "-")+".html")
			if _, err := execPrism(t, append([]string{"report", "--html", page}, k.files...)...); err != nil {
				t.Errorf("report --html: %v", err)
			} else if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "</html>") {
				t.Errorf("the page: %v", err)
			}
			metric := "time" // every kind has times; a vendor report alone has no roof
			chart := filepath.Join(dir, strings.ReplaceAll(k.name, " ", "-")+".svg")
			if _, err := execPrism(t, append([]string{"plot", "--metric", metric, "-o", chart}, k.files...)...); err != nil {
				t.Errorf("plot: %v", err)
			}
			if len(k.files) == 1 {
				out, err := execPrism(t, "compare", "--fail-on-regression", k.files[0], k.files[0])
				if err != nil || strings.Contains(out, "failed") && !strings.Contains(out, "0 failed") {
					t.Errorf("compare with itself: %v\n%s", err, out)
				}
			}
		})
	}
	// A split report and the suite's report of the same devices, merged: one device each.
	out, err := execPrism(t, append([]string{"report"}, td("split.json", "multi.json")...)...)
	if err != nil || strings.Count(out, "opencl:0:0  ") != 1 {
		t.Errorf("split and multi-device: %v\n%s", err, out)
	}
	if _, err := execPrism(t, append([]string{"report"}, td("collective.json", "collective.json")...)...); err == nil || !strings.Contains(err.Error(), "is in both") {
		t.Errorf("the same collectives twice: %v, want an error", err)
	}
	// compare: Rusticl's float64, skipped in both, says so.
	out, err = execPrism(t, append([]string{"compare"}, td("multi.json", "multi.json")...)...)
	if err != nil || !strings.Contains(out, "skipped (in both)") {
		t.Errorf("compare: %v\n%s", err, out)
	}
}

// TestBenchVendorTunables: --tunables forces Prism's variant only; the vendor baseline of
// the same run still runs its own routine, verified and timed.
func TestBenchVendorTunables(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	out, err := execPrism(t, "bench", "--device", ids[0], "--ops", "gemm/nn/float32", "--sizes", "4K", "--variant", "portable",
		"--tunables", "TS=32 TSK=16 WPT=4", "--count", "2", "--warmup", "1", "--vendor", "--json", "-q")
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Devices) != 1 || len(rep.Devices[0].Results) != 1 {
		t.Fatalf("%d devices; want one with one result", len(rep.Devices))
	}
	res := rep.Devices[0].Results[0]
	if !res.OK() || !strings.Contains(res.Tunables, "TS=32") {
		t.Errorf("Prism's result %q, tunables %q; want verified with TS=32 forced", res.Err, res.Tunables)
	}
	switch {
	case res.Vendor == nil:
		t.Errorf("no vendor result (%q)", res.NoVendor)
	case res.Vendor.Skipped != "":
		t.Logf("vendor library skipped: %s", res.Vendor.Skipped)
	case !res.Vendor.OK():
		t.Errorf("vendor result %q; want verified and timed (the tunables are not the vendor's)", res.Vendor.Err)
	}
}
