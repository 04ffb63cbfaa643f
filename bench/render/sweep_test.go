package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench"
)

// shapesReport is gemm/nn/float32 at two shapes of one size and a square, each with its
// vendor baseline: ratios 0.5, 2 and 4 (geometric mean 2^(2/3) = 1.59), the worst
// 4096x1024x512.
func shapesReport() *bench.Report {
	var rs []bench.Result
	for _, c := range []struct {
		dims, shape    string
		size, prism, v int
	}{{"4096x1024x512", "M=4096 N=1024 K=512", 4096 * 1024, 200, 100}, {"1024x4096x512", "M=1024 N=4096 K=512", 4096 * 1024, 100, 200},
		{"", "M=N=K=2048", 2048 * 2048, 100, 400}} {
		r := result("gemm/nn/float32", c.prism, c.prism, c.prism)
		r.Family, r.Type, r.Variant, r.Size, r.Dims, r.Shape = "gemm", "float32", "portable", c.size, c.dims, c.shape
		v := result("gemm/nn/float32", c.v, c.v, c.v)
		v.Variant, v.VendorLibrary, v.Library = "CLBlast", true, "CLBlast 1.5.3"
		r.Vendor = &v
		rs = append(rs, r)
	}
	return report(rs...)
}

// TestVendorSummaryRendered: the text, Markdown and HTML reports show each shape of one
// size on a row of its own, named by its MxNxK, and end with the summary against the
// vendor: the geometric mean and the worst ratio with its shape.
func TestVendorSummaryRendered(t *testing.T) {
	rep := shapesReport()
	var tb, md, ht bytes.Buffer
	if err := Table(&tb, rep, TableOptions{Wide: true}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, rep, ""); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&ht, rep, ""); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		tb.String(): {"[1] gemm float32 portable: 3 cases, geomean 1.59x, worst 0.50x (gemm/nn/float32 4096x1024x512) vs CLBlast 1.5.3",
			"against the vendor library over the GEMM and attention cases", "  4096x1024x512  ", "  1024x4096x512  ", "  4M  ", "0.50x", "2.00x"},
		md.String(): {"*Against the vendor library over the GEMM and attention cases*", "| [1] opencl:0:0 | gemm | float32 | portable | 3 | 1.59x | 0.50x | gemm/nn/float32 4096x1024x512 | CLBlast 1.5.3 |",
			"| gemm/nn/float32 | portable | 4096x1024x512 |", "| gemm/nn/float32 | portable | 1024x4096x512 |"},
		ht.String(): {`<h2 id="vendor-summary">Against the vendor library over the GEMM and attention cases</h2>`, `<td class="num">1.59x</td><td class="num">0.50x</td><td>gemm/nn/float32 4096x1024x512</td>`},
	} {
		for _, w := range want {
			if !strings.Contains(name, w) {
				t.Errorf("a report lacks %q:\n%s", w, name)
			}
		}
	}
	// One case with a baseline is no summary: its ratio is the table's own.
	one := report(shapesReport().Devices[0].Results[0])
	tb.Reset()
	if err := Table(&tb, one, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tb.String(), "geomean") {
		t.Errorf("a summary of one case:\n%s", tb.String())
	}
}

// TestBenchstatShapes: two shapes of one size are two benchmarks in benchstat's format.
func TestBenchstatShapes(t *testing.T) {
	var b bytes.Buffer
	if err := Benchstat(&b, shapesReport()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"BenchmarkGemm_nn_float32/size=4194304/device=opencl:0:0/shape=4096x1024x512-", "/size=4194304/device=opencl:0:0/shape=1024x4096x512-", "BenchmarkGemm_nn_float32/size=4194304/device=opencl:0:0-"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("benchstat lacks %q:\n%s", w, b.String())
		}
	}
}
