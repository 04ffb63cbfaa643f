package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// TestCommittedSection: the "Current results" of docs/PERFORMANCE.md are what the
// committed reports in docs/results make (run go run ./scripts/perfdoc when it fails).
func TestCommittedSection(t *testing.T) {
	const page, results = "../../docs/PERFORMANCE.md", "../../docs/results"
	doc, err := readFile(page)
	if err != nil {
		t.Fatal(err)
	}
	have, err := section(doc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(results, page)
	if err != nil {
		t.Fatal(err)
	}
	if have != want {
		t.Errorf("docs/PERFORMANCE.md's current results are not what docs/results makes: run go run ./scripts/perfdoc\n%s", firstDiff(have, want))
	}
	if !strings.Contains(want, "### NVIDIA H100 80GB HBM3, CUDA") || !strings.Contains(want, "### NVIDIA H200, OpenCL") {
		t.Errorf("the section lacks the H100 CUDA or the H200 OpenCL table:\n%s", want)
	}
	if err := run([]string{"-check", "-doc", page, "-results", results}, io.Discard); err != nil {
		t.Errorf("-check on the committed page: %v", err)
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n  committed: " + x + "\n  generated: " + y
		}
	}
	return ""
}

var (
	day1 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	day2 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
)

// result returns a verified, timed result.
func result(cas, variant string, size int, median time.Duration) bench.Result {
	return bench.Result{Case: cas, Variant: variant, Size: size, Verified: true, Bound: bench.BoundMemory,
		Bytes: 1e6, GBs: 1e6 / float64(median), Fraction: 0.5,
		Stats: bench.Stats{Runs: 5, Median: median, Min: median, Max: median}}
}

// device returns a device report of the given ID, name and backend.
func device(id, name, backend string, results ...bench.Result) bench.DeviceReport {
	return bench.DeviceReport{Device: engine.DeviceInfo{ID: id, Name: name, DriverVersion: "580.1"}, Backend: backend, Results: results}
}

// writeReport writes a report file into dir.
func writeReport(t *testing.T, dir, name string, date time.Time, commit string, devs ...bench.DeviceReport) {
	t.Helper()
	writeJSON(t, dir, name, bench.Report{Schema: bench.SchemaVersion, Date: date, Commit: commit, Command: []string{"prism", "bench", "--ops=" + name}, Devices: devs})
}

// writeJSON writes rep as the file name of dir.
func writeJSON(t *testing.T, dir, name string, rep bench.Report) {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture writes two runs of one GPU through two APIs and the vendor baselines of the
// second beside it, and returns the folder.
func fixture(t *testing.T) string {
	dir := t.TempDir()
	skipped := result("reduce/sum/float64", "portable", 1<<20, time.Millisecond)
	skipped.Verified, skipped.Skipped = false, "no fp64"
	cublas := result("gemm/nn/float32", "cuBLAS", 1<<20, 300*time.Microsecond)
	cublas.VendorLibrary = true
	writeReport(t, dir, "2026-11-20-gpu-suite-bench.json", day1, "1111111aaaaaaa",
		device("cuda:0", "GPU X", "cuda",
			result("stream/triad/float32", "portable", 1<<20, 100*time.Microsecond),
			result("gemm/nn/float32", "", 4<<20, 2*time.Millisecond), // before variants were recorded
			result("gemm/nn/float32", "portable", 1<<20, 600*time.Microsecond),
			cublas, skipped),
		device("opencl:1:0", "GPU X", "opencl", result("stream/triad/float32", "portable", 1<<20, 110*time.Microsecond)))
	withVendor := result("map/axpy/float32", "portable", 1<<20, 50*time.Microsecond)
	v := result("map/axpy/float32", "cuBLAS", 1<<20, 55*time.Microsecond)
	withVendor.Vendor = &v
	writeReport(t, dir, "2026-11-22-gpu-rows-bench.json", day2, "2222222bbbbbbb-dirty",
		device("cuda:0", "GPU X", "cuda",
			result("stream/triad/float32", "portable", 1<<20, 80*time.Microsecond),
			result("gemm/nn/float32", "portable", 4<<20, 1500*time.Microsecond),
			result("scan/inclusive/float32", "portable", 1<<20, 100*time.Microsecond),
			withVendor))
	torch := result("scan/inclusive/float32", "vendor", 1<<20, 200*time.Microsecond)
	torch.VendorLibrary, torch.Library = true, "cuBLAS/cuFFT/CUB via PyTorch 2.11.0+cu130 (CUDA 13.0)"
	// vendor.py's axpy is faster than the in-process baseline: the ratio is against it.
	torchAxpy := result("map/axpy/float32", "vendor", 1<<20, 40*time.Microsecond)
	torchAxpy.VendorLibrary, torchAxpy.Library = true, torch.Library
	writeReport(t, dir, "2026-11-22-gpu-rows-vendor.json", day2.Add(time.Minute), "", device("vendor:cuda:0", "GPU X", "", torch, torchAxpy))
	// A device listing (prism devices --json) is no report with results: left out.
	if err := os.WriteFile(filepath.Join(dir, "2026-11-22-gpu-devices.json"),
		[]byte(`{"devices": [{"id": "cuda:0", "name": "GPU X"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCurrent(t *testing.T) {
	sources, err := loadResults(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) != 2 {
		t.Fatalf("%d sources, want the two bench reports", len(sources))
	}
	if got := sources[1].vendorFiles; len(got) != 1 || got[0] != "2026-11-22-gpu-rows-vendor.json" {
		t.Errorf("vendor files beside the second run: %v", got)
	}
	tables := current(sources)
	if len(tables) != 2 || tables[0].backend != "cuda" || tables[1].backend != "opencl" {
		t.Fatalf("want a CUDA and an OpenCL table of GPU X, got %d", len(tables))
	}
	type want struct {
		cas, variant string
		size         int
		median       time.Duration
		file         string
		vendor       time.Duration // 0: none
	}
	wants := []want{
		{"gemm/nn/float32", "portable", 1 << 20, 600 * time.Microsecond, "2026-11-20-gpu-suite-bench.json", 300 * time.Microsecond},
		{"gemm/nn/float32", "portable", 4 << 20, 1500 * time.Microsecond, "2026-11-22-gpu-rows-bench.json", 0},
		{"map/axpy/float32", "portable", 1 << 20, 50 * time.Microsecond, "2026-11-22-gpu-rows-bench.json", 40 * time.Microsecond},
		{"scan/inclusive/float32", "portable", 1 << 20, 100 * time.Microsecond, "2026-11-22-gpu-rows-bench.json", 200 * time.Microsecond},
		{"stream/triad/float32", "portable", 1 << 20, 80 * time.Microsecond, "2026-11-22-gpu-rows-bench.json", 0},
	}
	cu := tables[0]
	if len(cu.rows) != len(wants) {
		for _, r := range cu.rows {
			t.Logf("row %s %s %d from %s", r.res.Case, r.res.Variant, r.res.Size, r.src.file)
		}
		t.Fatalf("%d CUDA rows, want %d (newest per case, variant and size; no skipped or vendor rows)", len(cu.rows), len(wants))
	}
	for i, w := range wants {
		r := cu.rows[i]
		if r.res.Case != w.cas || r.res.Variant != w.variant || r.res.Size != w.size || r.res.Stats.Median != w.median || r.src.file != w.file {
			t.Errorf("row %d: %s %s %d %v from %s, want %+v", i, r.res.Case, r.res.Variant, r.res.Size, r.res.Stats.Median, r.src.file, w)
		}
		switch {
		case w.vendor == 0 && r.vendor != nil:
			t.Errorf("row %d (%s): a vendor baseline of %v, want none", i, w.cas, r.vendor.Stats.Median)
		case w.vendor != 0 && (r.vendor == nil || r.vendor.Stats.Median != w.vendor):
			t.Errorf("row %d (%s): vendor baseline %v, want %v", i, w.cas, r.vendor, w.vendor)
		}
	}
	if len(cu.sources) != 2 || cu.sources[0].file != "2026-11-22-gpu-rows-bench.json" || cu.from != cu.sources[0] {
		t.Errorf("the CUDA table's reports are not newest first")
	}
	if cl := tables[1]; len(cl.rows) != 1 || cl.rows[0].res.Stats.Median != 110*time.Microsecond {
		t.Errorf("the OpenCL table: %+v", cl.rows)
	}

	md := render(tables, currentSplits(sources), "results")
	for _, s := range []string{
		"### GPU X, CUDA", "### GPU X, OpenCL",
		"1. 2026-11-22 10:00 UTC, commit 2222222 with uncommitted changes: `prism bench --ops=2026-11-22-gpu-rows-bench.json`; [2026-11-22-gpu-rows-bench.json](results/2026-11-22-gpu-rows-bench.json), vendor baselines from [2026-11-22-gpu-rows-vendor.json](results/2026-11-22-gpu-rows-vendor.json)\n",
		"2. 2026-11-20 10:00 UTC, commit 1111111: ",
		"| scan/inclusive/float32 | portable | 1M | 100 µs | 10 GB/s | 50% | 2.00 PyTorch | 1 |",
		"| map/axpy/float32 | portable | 1M | 50 µs | 20 GB/s | 50% | 0.80 PyTorch | 1 |",
		"| gemm/nn/float32 | portable | 1M | 600 µs | 1.667 GB/s | 50% | 0.50 cuBLAS | 2 |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("the Markdown lacks %q:\n%s", s, md)
		}
	}
	if strings.Contains(md, "reduce/sum/float64") {
		t.Errorf("a skipped case is listed:\n%s", md)
	}
}

// TestCurrentSplits: a report of splits alone is read; per set of devices (by name) the
// newest verified split of each case, size and placement is kept, splits with given shares,
// failed ones and older ones left out; the table gives the plan, the time, the speedup and
// its interval, and names its reports.
func TestCurrentSplits(t *testing.T) {
	dir := t.TempDir()
	samples := func(mean time.Duration, offs ...int) bench.Stats {
		out := make([]time.Duration, len(offs))
		for i, o := range offs {
			out[i] = mean + time.Duration(o)*mean/100
		}
		return bench.Summarize(out)
	}
	offs := []int{-3, 1, 0, 4, -2, 2, -1, 3, -4, 5}
	split := func(cas, place, plan string, speedup float64, median time.Duration) bench.SplitResult {
		st := samples(median, offs...)
		paired := samples(time.Duration(float64(median)*speedup), offs...)
		return bench.SplitResult{Case: cas, Devices: []string{"cuda:0", "cuda:1"}, Size: 1 << 20, Placement: place, Plan: plan,
			Stats: st, Paired: &paired, Speedup: speedup, Verified: true}
	}
	write := func(name string, date time.Time, splits ...bench.SplitResult) {
		writeJSON(t, dir, name, bench.Report{Schema: bench.SchemaVersion, Date: date, Commit: "3333333ccc", Command: []string{"prism", "bench", "--split"},
			Devices: []bench.DeviceReport{device("cuda:0", "GPU X", "cuda"), device("cuda:1", "GPU X", "cuda")}, Splits: splits})
	}
	failed := split("reduce/sum/float32", "host", "split over 2 devices (predicted 9% faster)", 0.5, 10*time.Microsecond)
	failed.Verified, failed.Err = false, "wrong sum"
	write("2026-11-20-pair-split-bench.json", day1,
		split("map/axpy/float32", "sharded", "split over 2 devices (predicted 40% faster than cuda:0 alone)", 1.5, 100*time.Microsecond),
		split("map/axpy/float32", "host", "split over 2 devices (predicted 40% faster than cuda:0 alone)", 1.7, 5*time.Millisecond))
	write("2026-11-22-pair-split-bench.json", day2,
		split("map/axpy/float32", "sharded", "split over 2 devices (predicted 45% faster than cuda:0 alone)", 1.9, 80*time.Microsecond),
		split("sort/keys/uint32", "sharded", "split over 2 devices (shares given)", 1.2, time.Millisecond),
		failed)
	sources, err := loadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	tables := currentSplits(sources)
	if len(tables) != 1 || tables[0].name != "GPU X + GPU X" {
		t.Fatalf("split tables %+v; want one, over GPU X + GPU X", tables)
	}
	sp := tables[0]
	if len(sp.rows) != 2 || sp.rows[0].s.Placement != "host" || sp.rows[1].s.Speedup != 1.9 {
		t.Fatalf("rows %+v; want map/axpy on host data (day 1) and on sharded data (day 2)", sp.rows)
	}
	md := render(nil, tables, "results")
	for _, w := range []string{
		"### Splits over GPU X + GPU X",
		"1. 2026-11-22 10:00 UTC, commit 3333333: `prism bench --split`; [2026-11-22-pair-split-bench.json](results/2026-11-22-pair-split-bench.json)\n",
		"| map/axpy/float32 | 1M | sharded | split over 2 devices | 80.4 µs | 1.90x | 1.84-1.96 | 1 |",
		"| map/axpy/float32 | 1M | host | split over 2 devices | 5.025 ms | 1.70x | 1.65-1.75 | 2 |",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("the Markdown lacks %q:\n%s", w, md)
		}
	}
	if strings.Contains(md, "sort/keys") || strings.Contains(md, "reduce/sum") {
		t.Errorf("a split with given shares or a failed one is listed:\n%s", md)
	}
}

func TestLoadResultsRefusesNonReports(t *testing.T) {
	dir := fixture(t)
	bad := filepath.Join(dir, "2026-11-23-gpu-notes.json")
	if err := os.WriteFile(bad, []byte(`[1, 2]`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadResults(dir)
	if err == nil || !strings.Contains(err.Error(), "2026-11-23-gpu-notes.json") || !strings.HasPrefix(err.Error(), "perfdoc: ") {
		t.Errorf("a file that is not a report: %v, want an error naming it", err)
	}
	if _, err := loadResults(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no report") {
		t.Errorf("an empty folder: %v", err)
	}
}

func TestSplice(t *testing.T) {
	doc := "# Title\n\nintro\n\n" + beginMarker + "\nold table\n" + endMarker + "\n\nrest\n"
	out, err := splice(doc, "new table\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Title\n\nintro\n\n" + beginMarker + "\nnew table\n" + endMarker + "\n\nrest\n"; out != want {
		t.Errorf("splice:\n%s\nwant:\n%s", out, want)
	}
	if s, err := section(out); err != nil || s != "new table\n" {
		t.Errorf("section = %q, %v", s, err)
	}
	if again, _ := splice(out, "new table\n"); again != out {
		t.Errorf("splicing the same section twice changed the page")
	}
	for name, bad := range map[string]string{
		"no markers":   "# Title\n",
		"no end":       beginMarker + "\n",
		"two begins":   beginMarker + "\n" + beginMarker + "\n" + endMarker + "\n",
		"out of order": endMarker + "\n" + beginMarker + "\n",
	} {
		if _, err := splice(bad, "x\n"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestRunWritesAndChecks(t *testing.T) {
	dir := fixture(t)
	page := filepath.Join(dir, "PAGE.md")
	doc := "# Performance\n\n" + beginMarker + "\nstale\n" + endMarker + "\n\n## After\n"
	if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-doc", page, "-results", dir}
	if err := run(append([]string{"-check"}, args...), io.Discard); !errors.Is(err, errStale) {
		t.Fatalf("-check on a stale page: %v, want errStale", err)
	}
	if b, _ := os.ReadFile(page); string(b) != doc {
		t.Fatalf("-check changed the page")
	}
	if err := run(args, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(page)
	got := string(b)
	if !strings.HasPrefix(got, "# Performance\n\n"+beginMarker+"\n") || !strings.HasSuffix(got, endMarker+"\n\n## After\n") ||
		strings.Contains(got, "stale") || !strings.Contains(got, "(2026-11-22-gpu-rows-bench.json)") {
		t.Errorf("the page after a run:\n%s", got)
	}
	if err := run(append([]string{"-check"}, args...), io.Discard); err != nil {
		t.Errorf("-check after a run: %v", err)
	}
	if err := run([]string{"extra"}, io.Discard); err == nil {
		t.Errorf("an argument: no error")
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{formatTime(742900 * time.Nanosecond), "742.9 µs"},
		{formatTime(13780 * time.Microsecond), "13.78 ms"},
		{formatTime(850 * time.Nanosecond), "850 ns"},
		{formatTime(2119 * time.Millisecond), "2.119 s"},
		{sig(2959.31), "2959"},
		{sig(65656.4), "65656"},
		{sig(0.021346), "0.02135"},
		{formatSize(64 << 20), "64M"},
		{formatSize(1 << 30), "1G"},
		{formatSize(1000), "1000"},
		{commit("de572035ab1cc4729dd60f9d5d38b55bb9a24e8f"), "commit de57203"},
		{commit("20f67d552626d5910999afe33c2ff41033491bbb-dirty"), "commit 20f67d5 with uncommitted changes"},
		{commit(""), "commit not recorded"},
		{command(nil), "command not recorded"},
		{command([]string{"prism", "bench", "--ops=collective/*"}), "`prism bench '--ops=collective/*'`"},
		{cell("a|b\x1b[2J"), `a\|b [2J`},
		{library(&bench.Result{Variant: "CLBlast", Library: "CLBlast 1.5.3"}), "CLBlast"},
		{library(&bench.Result{Variant: "vendor", Library: "cuBLAS/cuFFT/CUB via PyTorch 2.11.0+cu130"}), "PyTorch"},
		{roof(bench.Result{Fraction: 0.873}), "87%"},
		{roof(bench.Result{Fraction: 0.001}), "<1%"},
		{roof(bench.Result{Fraction: 1.3, CacheResident: true}), "cache-resident"},
		{roof(bench.Result{}), "-"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
