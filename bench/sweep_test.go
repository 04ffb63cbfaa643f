package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/gemm"
	"github.com/prism-compute/prism/kernels/suite"
)

// TestSweepShapes checks the named sweep: every shape reads back as written, once; it
// holds the squares 512 to 16384, the off-tile 4095 and 6000, skinny M and N of 64, 128
// and 256; the three layouts of one matrix take all of it, and its count is the one the
// help and the docs give (23 cases per op and variant).
func TestSweepShapes(t *testing.T) {
	got, err := ParseShapes([]string{"sweep"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, SweepShapes) || len(got) != 23 {
		t.Errorf("sweep %v (%d); want SweepShapes, each once as written, 23", got, len(got))
	}
	var ms, ns []int
	for _, s := range SweepShapes {
		sh, _ := gemm.ParseShape(s)
		ms, ns = append(ms, sh.M), append(ns, sh.N)
	}
	for _, n := range []int{512, 1024, 2048, 4096, 8192, 16384, 4095, 6000} {
		if !slices.Contains(SweepShapes, strings.Repeat("x"+strconv.Itoa(n), 3)[1:]) {
			t.Errorf("the sweep lacks %d^3", n)
		}
	}
	for _, n := range []int{64, 128, 256} {
		if !slices.Contains(ms, n) || !slices.Contains(ns, n) {
			t.Errorf("the sweep lacks M = %d or N = %d", n, n)
		}
	}
	var ops []kernels.Op
	for _, name := range []string{"gemm/nn/float32", "gemm/nt/float32", "gemm/tn/float32", "gemm/nn/bfloat16"} {
		ops = append(ops, kernels.Op{Name: name, Family: "gemm"})
	}
	if err := CheckShapes(ops, SweepShapes); err != nil {
		t.Errorf("the sweep on one matrix: %v", err)
	}
	// A batch of 8 16384^2 matrices spans more than the kernels' int32 indices.
	err = CheckShapes([]kernels.Op{{Name: "gemm/batched/float32", Family: "gemm"}}, SweepShapes)
	if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "16384x16384x16384") {
		t.Errorf("the sweep on gemm/batched: %v; want 16384^3 refused", err)
	}
}

// TestParseShapes reads shapes canonically, each once, the sweep among them, and names a
// bad one; CheckShapes refuses an op that takes no shape, naming it.
func TestParseShapes(t *testing.T) {
	got, err := ParseShapes([]string{"4096X1024x512", " 512x512x512 ", "SWEEP", "17x33x5", "4096x1024x512"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "4096x1024x512" || got[1] != "512x512x512" || got[len(got)-1] != "17x33x5" || len(got) != 2+len(SweepShapes)-2+1 {
		t.Errorf("ParseShapes = %v", got)
	}
	for _, in := range [][]string{{"64x64"}, {"0x1x1"}, {"sweep", "1x1"}, {}} {
		if _, err := ParseShapes(in); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("ParseShapes(%q) = %v; want ErrInvalidArg", in, err)
		}
	}
	err = CheckShapes([]kernels.Op{{Name: "gemm/nn/float32", Family: "gemm"}, {Name: "fft/c2c/float32", Family: "fft"}}, []string{"64x64x64"})
	if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "fft/c2c/float32 takes a size, not a shape: only the ops of the attention and gemm families take shapes") {
		t.Errorf("a shape for fft: %v", err)
	}
	if err := (Config{Ops: []kernels.Op{{Name: "gemm/nn/float32", Family: "gemm"}}, Sizes: []int{64}, Shapes: []string{"8x8x8"}}).checkShapesConfig(); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("sizes and shapes: %v; want ErrInvalidArg", err)
	}
	// A square shape is its size's case; another shape keeps its dims.
	cfg := Config{Shapes: []string{"64x64x64", "96x32x128"}}
	pts := cfg.points(kernels.Op{Name: "gemm/batched/float32", Family: "gemm"}, engine.KindGPU)
	if want := []point{{8 * 64 * 64, ""}, {8 * 96 * 32, "96x32x128"}}; !slices.Equal(pts, want) {
		t.Errorf("points %v; want %v", pts, want)
	}
}

// sweepReport is a report of one device whose gemm/nn/float32 ran at four shapes (two of
// them of one size) in two variants, with the vendor's times in each result (--vendor),
// and a float64 case whose baseline comes from a vendor pseudo-device (scripts/vendor.py
// merged in) holding the same case at two shapes of one size.
func sweepReport() *Report {
	res := func(typ, variant, dims, shape string, size int, prism, vendor time.Duration) Result {
		r := Result{Case: "gemm/nn/" + typ, Family: "gemm", Type: typ, Size: size, Dims: dims, Shape: shape, Variant: variant, Requested: variant,
			Verified: true, Stats: Stats{Runs: 3, Median: prism, Min: prism, Max: prism}}
		if vendor > 0 {
			r.Vendor = &Result{Case: r.Case, Family: "gemm", Type: typ, Size: size, Dims: dims, Variant: "cuBLAS", VendorLibrary: true,
				Library: "cuBLAS 13.0", Verified: true, Stats: Stats{Runs: 3, Median: vendor, Min: vendor, Max: vendor}}
		}
		return r
	}
	const mn = 4096 * 1024
	dev := DeviceReport{Device: engine.DeviceInfo{ID: "cuda:0", Name: "GPU"}, Results: []Result{
		// ratios vendor/prism: simt 0.5, 2, 4, 1; mma 1, 1, 1, 2 (faster in the first three)
		res("float32", "cuda-simt", "4096x1024x512", "M=4096 N=1024 K=512", mn, 200, 100),
		res("float32", "cuda-mma", "4096x1024x512", "M=4096 N=1024 K=512", mn, 100, 100),
		res("float32", "cuda-simt", "1024x4096x512", "M=1024 N=4096 K=512", mn, 100, 200),
		res("float32", "cuda-mma", "1024x4096x512", "M=1024 N=4096 K=512", mn, 200, 200),
		res("float32", "cuda-simt", "", "M=N=K=4096", 4096*4096, 100, 400),
		res("float32", "cuda-mma", "", "M=N=K=4096", 4096*4096, 400, 400),
		res("float32", "cuda-simt", "64x8192x8192", "M=64 N=8192 K=8192", 64*8192, 300, 300),
		res("float32", "cuda-mma", "64x8192x8192", "M=64 N=8192 K=8192", 64*8192, 150, 300),
		// no baseline: left out
		res("float32", "cuda-simt", "128x8192x8192", "M=128 N=8192 K=8192", 128*8192, 300, 0),
		// float64: baselines from the pseudo-device, 0.25 and 1
		res("float64", "cuda-mma", "4096x1024x512", "M=4096 N=1024 K=512", mn, 400, 0),
		res("float64", "cuda-mma", "1024x4096x512", "M=1024 N=4096 K=512", mn, 400, 0),
		// attention bfloat16 against SDPA's pseudo-device results: ratios 0.5 (dims 64) and 0.8
		// (dims 256), one summary of its own though bfloat16 is also a GEMM precision
		{Case: "attention/full/bfloat16", Family: "attention", Type: "bfloat16", Size: 4 * 32 * 4096 * 64, Dims: "4x32x4096x64",
			Shape: "batch=4 heads=32 seq=4096 dim=64", Variant: "cuda-wgmma", Requested: "cuda-wgmma", Verified: true, Stats: Stats{Runs: 3, Median: 200, Min: 200, Max: 200}},
		{Case: "attention/full/bfloat16", Family: "attention", Type: "bfloat16", Size: 4 * 32 * 4096 * 256, Dims: "4x32x4096x256",
			Shape: "batch=4 heads=32 seq=4096 dim=256", Variant: "cuda-wgmma", Requested: "cuda-wgmma", Verified: true, Stats: Stats{Runs: 3, Median: 500, Min: 500, Max: 500}},
		// another family: left out
		{Case: "fft/c2c/float32", Family: "fft", Type: "float32", Size: 1024, Variant: "portable", Verified: true,
			Stats: Stats{Runs: 1, Median: 10, Min: 10, Max: 10}, Vendor: &Result{Verified: true, Stats: Stats{Runs: 1, Median: 1, Min: 1, Max: 1}}},
	}}
	vend := DeviceReport{Device: engine.DeviceInfo{ID: "vendor:cuda:0", Name: "GPU"}, Results: []Result{
		{Case: "gemm/nn/float64", Family: "gemm", Type: "float64", Size: mn, Dims: "1024x4096x512", Variant: "vendor", VendorLibrary: true,
			Library: "PyTorch", Verified: true, Stats: Stats{Runs: 1, Median: 400, Min: 400, Max: 400}},
		{Case: "gemm/nn/float64", Family: "gemm", Type: "float64", Size: mn, Dims: "4096x1024x512", Variant: "vendor", VendorLibrary: true,
			Library: "PyTorch", Verified: true, Stats: Stats{Runs: 1, Median: 100, Min: 100, Max: 100}},
		{Case: "attention/full/bfloat16", Family: "attention", Type: "bfloat16", Size: 4 * 32 * 4096 * 64, Dims: "4x32x4096x64", Variant: "vendor",
			VendorLibrary: true, Library: "PyTorch SDPA (flash)", Verified: true, Stats: Stats{Runs: 1, Median: 100, Min: 100, Max: 100}},
		{Case: "attention/full/bfloat16", Family: "attention", Type: "bfloat16", Size: 4 * 32 * 4096 * 256, Dims: "4x32x4096x256", Variant: "vendor",
			VendorLibrary: true, Library: "PyTorch SDPA (flash)", Verified: true, Stats: Stats{Runs: 1, Median: 400, Min: 400, Max: 400}},
	}}
	return &Report{Schema: SchemaVersion, Devices: []DeviceReport{dev, vend}}
}

// TestVendorSummaries checks the summary's exact figures on a constructed report: the
// geometric mean and the worst ratio per precision and variant, the best of the variants
// case by case, baselines from the result's own vendor run and from a vendor pseudo-device
// paired by shape (two shapes of one size never swapped), cases without a baseline and
// other families left out.
func TestVendorSummaries(t *testing.T) {
	got := sweepReport().VendorSummaries()
	type want struct {
		family, typ, variant string
		cases                int
		geomean, worst       float64
		worstDims, worstLib  string
	}
	wants := []want{
		{"gemm", "float32", "cuda-simt", 4, math.Pow(0.5*2*4*1, 0.25), 0.5, "4096x1024x512", "cuBLAS 13.0"},
		{"gemm", "float32", "cuda-mma", 4, math.Pow(2, 0.25), 1, "4096x1024x512", "cuBLAS 13.0"},
		// best: mma 1 (100 < 200), simt 2 (100 < 200), simt 4 (100 < 400), mma 2 (150 < 300)
		{"gemm", "float32", BestVariant, 4, math.Pow(1*2*4*2, 0.25), 1, "4096x1024x512", "cuBLAS 13.0"},
		// the pseudo-device's 4096x1024x512 took 100 against Prism's 400, 1024x4096x512 400
		{"gemm", "float64", "cuda-mma", 2, math.Sqrt(0.25 * 1), 0.25, "4096x1024x512", "PyTorch"},
		{"attention", "bfloat16", "cuda-wgmma", 2, math.Sqrt(0.5 * 0.8), 0.5, "4x32x4096x64", "PyTorch SDPA (flash)"},
	}
	if len(got) != len(wants) {
		t.Fatalf("%d summaries: %+v; want %d", len(got), got, len(wants))
	}
	for i, w := range wants {
		g := got[i]
		worstCase := "gemm/nn/" + w.typ
		if w.family == "attention" {
			worstCase = "attention/full/" + w.typ
		}
		if g.Device != "cuda:0" || g.Family != w.family || g.Type != w.typ || g.Variant != w.variant || g.Cases != w.cases || math.Abs(g.GeoMean-w.geomean) > 1e-12 ||
			g.Worst != w.worst || g.WorstDims != w.worstDims || g.WorstCase != worstCase || g.Library != w.worstLib {
			t.Errorf("summary %d: %+v; want %+v", i, g, w)
		}
	}
	if v := got[2].Variants; !slices.Equal(v, []string{"cuda-simt", "cuda-mma"}) {
		t.Errorf("best of %v; want cuda-simt, cuda-mma", v)
	}
	// In JSON, as "vendor_summary", beside the report.
	var buf bytes.Buffer
	if err := sweepReport().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary []VendorSummary `json:"vendor_summary"`
		Devices []DeviceReport  `json:"devices"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Summary) != 5 || doc.Summary[3].Worst != 0.25 || doc.Summary[4].Family != "attention" || doc.Summary[3].WorstShape != "M=4096 N=1024 K=512" || len(doc.Devices) != 2 {
		t.Errorf("JSON summary %+v", doc.Summary)
	}
	if _, err := ReadReport(bytes.NewReader(buf.Bytes())); err != nil {
		t.Errorf("a report with its summary does not read back: %v", err)
	}
}

// TestShapeIdentity: two shapes of one size are two cases everywhere a case is matched:
// the report's keys, the vendor pseudo-device's pairing, and prism compare, which pairs
// each shape with its own (the old report's shapes swapped in time would read as a 4x
// change if they were paired across).
func TestShapeIdentity(t *testing.T) {
	rep := sweepReport()
	a, b := &rep.Devices[0].Results[9], &rep.Devices[0].Results[10]
	if a.Size != b.Size || a.Key() == b.Key() {
		t.Fatalf("keys %v and %v; want two cases of one size", a.Key(), b.Key())
	}
	if v := rep.VendorBaseline(0, a); v == nil || v.Dims != a.Dims {
		t.Errorf("baseline of %s: %+v", a.Dims, v)
	}
	if v := rep.VendorBaseline(0, b); v == nil || v.Dims != b.Dims {
		t.Errorf("baseline of %s: %+v", b.Dims, v)
	}
	old, new := sweepReport(), sweepReport()
	o := old.Devices[0].Results
	o[0].Stats, o[2].Stats = o[2].Stats, o[0].Stats // the same times, in the other shape
	cmp := Compare(old, new, DefaultCompareOptions)
	for _, ch := range cmp.Changes {
		if ch.Case != "gemm/nn/float32" || ch.Old == nil || ch.New == nil {
			continue
		}
		if ch.Old.Dims != ch.New.Dims || ch.Dims != ch.New.Dims {
			t.Errorf("compare paired %q with %q", ch.Old.Dims, ch.New.Dims)
		}
	}
	var ratios []float64
	for _, ch := range cmp.Changes {
		if ch.Case == "gemm/nn/float32" && ch.Old.Variant == "cuda-simt" && ch.Old.Size == 4096*1024 {
			ratios = append(ratios, ch.Ratio)
		}
	}
	if !slices.Equal(ratios, []float64{2, 0.5}) {
		t.Errorf("ratios of the two shapes %v; want 2 and 0.5 (each against its own shape)", ratios)
	}
	if s := (Change{Device: "cuda:0", Case: "gemm/nn/float32", Size: 4096 * 1024, Dims: "1024x4096x512", Verdict: VerdictSame}).String(); !strings.Contains(s, "1024x4096x512") {
		t.Errorf("a change of a shape reads %q", s)
	}
}

// TestAttentionShapes: --shapes reads attention shapes (BxHxSxD) beside GEMM ones, each
// once and canonical; CheckShapes takes them for the attention ops and refuses, naming the
// op, the spelling it takes, a GEMM shape for an attention op and an attention shape for
// a GEMM op, a head dim above 256, and an attention shape for an op that takes none; the
// shape an op's size gives is that size's case (no dims: it pairs with the results of
// --sizes), the others cases of their own at the size that counts their elements.
func TestAttentionShapes(t *testing.T) {
	got, err := ParseShapes([]string{"4X32X4096X64", "4x32x4096x128", "4x32x4096x64", "64x64x64", "1x1x1x1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"4x32x4096x64", "4x32x4096x128", "64x64x64", "1x1x1x1"}; !slices.Equal(got, want) {
		t.Errorf("ParseShapes = %v; want %v", got, want)
	}
	for _, in := range [][]string{{"4x32"}, {"0x32x4096x128"}, {"4x32x4096x128x1"}, {"4x32xx128"}} {
		if _, err := ParseShapes(in); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("ParseShapes(%q) = %v; want ErrInvalidArg", in, err)
		}
	}
	bf16 := kernels.Op{Name: "attention/full/bfloat16", Family: "attention", Type: "bfloat16"}
	f32 := kernels.Op{Name: "attention/causal/float32", Family: "attention", Type: "float32"}
	gemmOp := kernels.Op{Name: "gemm/nn/float32", Family: "gemm"}
	shapes := []string{"4x32x4096x64", "4x32x4096x128", "4x32x4096x256", "1x8x4096x64"}
	if err := CheckShapes([]kernels.Op{bf16, f32}, shapes); err != nil {
		t.Errorf("head dims 64, 128 and 256: %v", err)
	}
	for _, c := range []struct {
		ops    []kernels.Op
		shapes []string
		want   string
	}{
		{[]kernels.Op{bf16}, []string{"4x32x4096x128", "4096x4096x4096"}, `attention/full/bfloat16: shape "4096x4096x4096": 3 numbers, the gemm family's spelling (M x N x K written MxNxK); the attention ops take batch x heads x seq x dim written BxHxSxD`},
		{[]kernels.Op{gemmOp}, []string{"4x32x4096x128"}, `gemm/nn/float32: shape "4x32x4096x128": 4 numbers, the attention family's spelling`},
		{[]kernels.Op{f32}, []string{"4x32x4096x300"}, "attention/causal/float32: shape 4x32x4096x300: dim 300 is above 256"},
		{[]kernels.Op{{Name: "softmax/rows/float32", Family: "softmax"}}, []string{"4x32x4096x128"}, "softmax/rows/float32 takes a size, not a shape"},
	} {
		if err := CheckShapes(c.ops, c.shapes); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckShapes(%s, %v) = %v; want ErrInvalidArg with %q", c.ops[0].Name, c.shapes, err, c.want)
		}
	}
	cfg := Config{Ops: []kernels.Op{bf16}, Shapes: shapes}
	if err := cfg.checkShapesConfig(); err != nil {
		t.Fatal(err)
	}
	// 4x32x4096x128 is the bfloat16 ops' size 64M, 1x8x4096x64 the float32 ops' 2M.
	if pts, want := cfg.points(bf16, engine.KindGPU), []point{{1 << 25, "4x32x4096x64"}, {1 << 26, ""}, {1 << 27, "4x32x4096x256"}, {1 << 21, "1x8x4096x64"}}; !slices.Equal(pts, want) {
		t.Errorf("bfloat16 points %v; want %v", pts, want)
	}
	if pts, want := cfg.points(f32, engine.KindGPU), []point{{1 << 25, "4x32x4096x64"}, {1 << 26, "4x32x4096x128"}, {1 << 27, "4x32x4096x256"}, {1 << 21, ""}}; !slices.Equal(pts, want) {
		t.Errorf("float32 points %v; want %v", pts, want)
	}
	if got := SizeText(1<<25, "4x32x4096x64"); got != "4x32x4096x64" {
		t.Errorf("SizeText = %q", got)
	}
}

// TestNcuStallsPy runs scripts/test_ncu_stalls.py: the summary of Nsight Compute's source
// page that scripts/gpu-run.sh's MODE=profile writes beside a profile (the stall samples by
// opcode, by reason and by instruction), on CSVs written as ncu writes them.
func TestNcuStallsPy(t *testing.T) { runPyTests(t, "test_ncu_stalls.py") }

// runPyTests runs the Python tests of scripts/ named (unittest, no GPU) and returns the
// interpreter's path; it skips without python3 and fails on the script's failure.
func runPyTests(t *testing.T, script string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	if out, err := exec.Command(py, "../scripts/"+script).CombinedOutput(); err != nil {
		t.Fatalf("scripts/%s: %v\n%s", script, err, out)
	}
	return py
}

// TestVendorPyAttentionShapes runs scripts/test_vendor.py (vendor.py's command line, cases
// and records, with no PyTorch), then pairs the records vendor.py writes at
// --attention-shapes with Prism's results of the same shapes: each of Prism's results
// (its size and dims from suite.CheckShape, as prism bench --shapes records them) finds
// the vendor pseudo-device's result of its own shape, never another shape of its size,
// and the shape of a size pairs with the baseline of that size.
func TestVendorPyAttentionShapes(t *testing.T) {
	py := runPyTests(t, "test_vendor.py")
	// 1x8x512x64 and 8x1x512x64 are one size (the first the float32 ops' 256K),
	// 4x32x4096x128 the float16 and bfloat16 ops' size 64M, 1x8x4096x64 the float32 ops' 2M.
	shapes := []string{"1x8x512x64", "8x1x512x64", "4x32x4096x128", "1x8x4096x64", "2x3x7x256"}
	script := `import json, sys
sys.path.insert(0, "../scripts")
import vendor
shapes = vendor.parse_attention_shapes(sys.argv[1])
recs = [vendor.record(c["case"], c["size"], c["shape"], c["dims"], c["flops"], c["bytes"], "SDPA") for c in vendor.attention_cases(shapes, 1)]
json.dump(recs, sys.stdout)`
	out, err := exec.Command(py, "-c", script, strings.Join(shapes, ",")).Output()
	if err != nil {
		t.Fatalf("vendor.py records: %v\n%s", err, out)
	}
	var recs []Result
	if err := json.Unmarshal(out, &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3*2*len(shapes) {
		t.Fatalf("%d records; want %d", len(recs), 3*2*len(shapes))
	}
	prism := DeviceReport{Device: engine.DeviceInfo{ID: "cuda:0", Name: "GPU"}}
	vend := DeviceReport{Device: engine.DeviceInfo{ID: "vendor:cuda:0", Name: "GPU"}}
	for i, r := range recs { // each baseline's time tells its shape apart
		r.Verified, r.Stats = true, Stats{Runs: 1, Median: time.Duration(1000 + i), Min: 1, Max: 1}
		vend.Results = append(vend.Results, r)
	}
	var squares int
	for _, typ := range []string{"float32", "float16", "bfloat16"} {
		for _, kind := range []string{"full", "causal"} {
			op := kernels.Op{Name: "attention/" + kind + "/" + typ, Family: "attention", Type: typ}
			for _, text := range shapes {
				sh, _, err := suite.CheckShape(op, text)
				if err != nil {
					t.Fatal(err)
				}
				dims := sh.Canon
				if sh.Square {
					dims, squares = "", squares+1
				}
				prism.Results = append(prism.Results, Result{Case: op.Name, Family: "attention", Type: typ, Size: sh.Size, Dims: dims,
					Shape: text, Verified: true, Stats: Stats{Runs: 1, Median: 1, Min: 1, Max: 1}})
			}
		}
	}
	if squares != 4+4 { // 1x8x512x64 and 1x8x4096x64 for float32, 4x32x4096x128 for the others
		t.Errorf("%d results of a size's own shape; want 8", squares)
	}
	rep := &Report{Schema: SchemaVersion, Devices: []DeviceReport{prism, vend}}
	for i := range rep.Devices[0].Results {
		res := &rep.Devices[0].Results[i]
		v := rep.VendorBaseline(0, res)
		if v == nil {
			t.Errorf("%s %s (size %d, dims %q): no baseline", res.Case, res.Shape, res.Size, res.Dims)
			continue
		}
		want := "batch=" + strings.Replace(strings.Replace(strings.Replace(res.Shape, "x", " heads=", 1), "x", " seq=", 1), "x", " dim=", 1)
		if v.Case != res.Case || v.Size != res.Size || v.Dims != res.Dims || v.Shape != want {
			t.Errorf("%s %s (size %d, dims %q): paired with %s %s (size %d, dims %q)", res.Case, res.Shape, res.Size, res.Dims, v.Case, v.Shape, v.Size, v.Dims)
		}
	}
}
