package render

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prism-compute/prism/bench"
)

// verdictReport is a report of one device with a result of each kind of verdict and one
// that failed, read as a report from before verdicts: the reader judges them from the
// device's ceilings and overheads (PoCL's of docs/results/2026-11-21-h100-suite-bench.json).
const verdictReport = `{"schema": 1, "devices": [{"device": {"id": "opencl:0:0", "cache_bytes": 33554432},
	"ceilings": {"copy_gbs": 70.07, "fp32_gflops": 372.5, "fp64_gflops": 334.5},
	"overheads": {"launch_async_ns": 39446, "launch_sync_ns": 68830},
	"results": [
	{"case": "stream/triad/float32", "type": "float32", "size": 67108864, "verified": true, "flops": 134217728, "bytes": 805306368,
	 "gbs": 63.77, "gflops": 10.63, "bound": "memory", "fraction": 0.91,
	 "stats": {"runs": 3, "median_ns": 12628000, "min_ns": 12600000, "max_ns": 12700000}},
	{"case": "gemm/nn/float32", "type": "float32", "size": 1048576, "verified": true, "flops": 2147483648, "bytes": 12582912,
	 "gbs": 0.0, "gflops": 141.6, "bound": "compute", "fraction": 0.38,
	 "stats": {"runs": 3, "median_ns": 15165000, "min_ns": 15100000, "max_ns": 15200000}},
	{"case": "stream/copy/float32", "type": "float32", "size": 1024, "verified": true, "bytes": 8192,
	 "gbs": 0.16, "bound": "memory", "fraction": 0.0023,
	 "stats": {"runs": 3, "median_ns": 50000, "min_ns": 49000, "max_ns": 51000}},
	{"case": "alloc/pool/uint8", "type": "uint8", "size": 1048576, "verified": true,
	 "stats": {"runs": 3, "median_ns": 12000, "min_ns": 11000, "max_ns": 13000}},
	{"case": "stream/scale/float32", "type": "float32", "size": 1024, "error": "opencl: out of resources"}]}]}`

// TestVerdictRenders: the table lists each case's verdict under it, within TableWidth;
// Markdown and HTML have a verdict column per device, CSV the verdict's kind and line; a
// failed case has none anywhere.
func TestVerdictRenders(t *testing.T) {
	rep, err := bench.ReadReport(strings.NewReader(verdictReport))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"memory-bound at 91% of copy: near the limit",
		"compute-bound at 38% of the fp32 FMA peak: far from the limit",
		"launch-bound: 50.0µs a run, 1 launch costs 39.4µs; below ~3 MiB the fixed cost dominates",
		"latency: 12.0µs per run",
	}
	var buf bytes.Buffer
	if err := Table(&buf, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	table := buf.String()
	for _, l := range strings.Split(table, "\n") {
		if n := utf8.RuneCountInString(l); n > TableWidth {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	lines := []string{"[1] stream/triad/float32 64M: " + want[0], "[1] gemm/nn/float32 1M: " + want[1],
		"[1] stream/copy/float32 1K: launch-bound", "[1] alloc/pool/uint8 1M: " + want[3]}
	for _, w := range append(lines, "verdicts (what limits each case") {
		if !strings.Contains(table, w) {
			t.Errorf("the table lacks %q:\n%s", w, table)
		}
	}
	if strings.Count(table, "stream/scale/float32 1K:") != 1 { // its FAILED line alone
		t.Errorf("a verdict for the failed case:\n%s", table)
	}

	buf.Reset()
	if err := Markdown(&buf, rep, ""); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if !strings.Contains(md, "| [1] verdict |") {
		t.Errorf("markdown without a verdict column:\n%s", md)
	}
	for _, w := range want {
		if !strings.Contains(md, "| "+w+" |") {
			t.Errorf("markdown lacks the cell %q:\n%s", w, md)
		}
	}

	buf.Reset()
	if err := CSV(&buf, rep); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	kind, text := len(CSVHeader)-3, len(CSVHeader)-2
	if CSVHeader[kind] != "verdict" || CSVHeader[text] != "verdict_text" {
		t.Fatalf("CSV header %q", CSVHeader)
	}
	wantCSV := [][2]string{{"memory", want[0]}, {"compute", want[1]}, {"launch", want[2]}, {"latency", want[3]}, {"", ""}}
	if len(recs) != 1+len(wantCSV) {
		t.Fatalf("%d CSV rows, want %d", len(recs), 1+len(wantCSV))
	}
	for i, w := range wantCSV {
		if got := [2]string{recs[i+1][kind], recs[i+1][text]}; got != w {
			t.Errorf("CSV row %d (%s): verdict %q, want %q", i+1, recs[i+1][3], got, w)
		}
	}

	buf.Reset()
	if err := HTML(&buf, rep, ""); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, w := range []string{"<th>[1] verdict</th>", `<td class="verdict">` + want[0] + "</td>", `<td class="verdict">` + want[3] + "</td>", `<td class="verdict muted">-</td>`} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
}
