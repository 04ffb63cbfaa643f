package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/store"
)

// TestBenchShapesUsage: bad --shapes are usage errors (exit 2) that name the problem,
// before any device is looked for (the device named does not exist) and with no report
// written: zero and negative dimensions, two numbers, a shape past the kernels' int32
// indices (for a batch too), an op that takes no shape, a shape of the other family's
// spelling (GEMM for attention and back), an attention head dim above 256, --shapes with
// --sizes, --split or collectives.
func TestBenchShapesUsage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ops", "gemm/nn/float32", "--shapes", "0x64x64"}, `--shapes: kernels: gemm: shape "0x64x64": M is 0; every dimension is at least 1`},
		{[]string{"--ops", "gemm/nn/float32", "--shapes", "64x-3x64"}, `shape "64x-3x64": N is -3`},
		{[]string{"--ops", "gemm/nn/float32", "--shapes", "4096x4096"}, `shape "4096x4096": 2 numbers; a shape is batch x heads x seq x dim written BxHxSxD (attention, e.g. 4x32x4096x128) or M x N x K written MxNxK (gemm, e.g. 4096x1024x512)`},
		{[]string{"--ops", "gemm/nn/float32", "--shapes", "64x64x64x64"}, `4 numbers`},
		{[]string{"--ops", "gemm/nn/float32", "--shapes", "8Kx8Kx8K"}, `M "8k" is not a whole number`},
		{[]string{"--ops", "gemm/nn/float32", "--shapes", "100000x100000x100000"}, "gemm/nn/float32: shape 100000x100000x100000: kernels: gemm: A spans 10000000000 elements; the kernel's int indices reach 2^31-1"},
		{[]string{"--ops", "gemm/batched/float32", "--shapes", "sweep"}, "gemm/batched/float32: shape 16384x16384x16384: kernels: gemm: A spans 2147483648 elements"},
		{[]string{"--ops", "stream/triad", "--shapes", "64x64x64"}, "--shapes: bench: stream/triad/float32 takes a size, not a shape: only the ops of the attention and gemm families take shapes"},
		{[]string{"--ops", "attention/full/bfloat16", "--shapes", "4096x4096x4096"}, `--shapes: kernels: attention/full/bfloat16: shape "4096x4096x4096": 3 numbers, the gemm family's spelling (M x N x K written MxNxK); the attention ops take batch x heads x seq x dim written BxHxSxD, e.g. 4x32x4096x128`},
		{[]string{"--ops", "attention/full/bfloat16", "--shapes", "4x32x4096x300"}, "attention/full/bfloat16: shape 4x32x4096x300: dim 300 is above 256, the largest head dimension its kernels take (the portable kernel takes any dim from 1 to 256, cuda-mma 64 and 128, cuda-wgmma 64, 128 and 256)"},
		{[]string{"--ops", "attention", "--shapes", "4x0x4096x128"}, `--shapes: kernels: attention: shape "4x0x4096x128": heads is 0; every dimension is at least 1`},
		{[]string{"--ops", "gemm/nn/float32", "--shapes", "4x32x4096x128"}, `gemm/nn/float32: shape "4x32x4096x128": 4 numbers, the attention family's spelling`},
		{[]string{"--shapes", "64x64x64"}, "takes a size, not a shape"}, // the whole suite
		{[]string{"--ops", "gemm", "--shapes", "64x64x64", "--sizes", "1M"}, "--sizes and --shapes exclude each other"},
		{[]string{"--ops", "gemm/nn/float32", "--shapes", "64x64x64", "--split"}, "--shapes applies to ops on one device at a time, not to --split"},
		{[]string{"--ops", "collective/all-reduce", "--shapes", "64x64x64"}, "--shapes: collectives take sizes (--sizes), not shapes"},
	} {
		args := append([]string{"bench", "-q", "--no-store", "--device", "nosuch:0", "--json", "-o", out}, tc.args...)
		_, err := execPrism(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want %q", tc.args, err, tc.want)
		}
		if code := run(context.Background(), args); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tc.args, code, exitUsage)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: a report was written", tc.args)
		}
	}
}

// TestBenchShapes runs gemm/nn/float32 on PoCL at two shapes of one size (96x32x128 and
// 32x96x128, 3072 elements of C) and a square one: the report keeps the two as two cases,
// each with the shape asked for and set up, the square as the case of its size, and the
// config records the shapes; in the store, prism history shows them as two series.
func TestBenchShapes(t *testing.T) {
	useStore(t)
	out := filepath.Join(t.TempDir(), "r.json")
	if _, err := execPrism(t, "bench", "-q", "--device", "opencl:0:0", "--ops", "gemm/nn/float32", "--portable",
		"--shapes", "96x32x128,32X96X128,48x48x48,96x32x128", "--count", "2", "--warmup", "0", "--json", "-o", out); err != nil {
		t.Fatal(err)
	}
	rep, err := bench.ReadReportFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Config.Shapes, ","); got != "96x32x128,32x96x128,48x48x48" {
		t.Errorf("config shapes %s; want each once, canonical", got)
	}
	var got []string
	for _, r := range rep.Devices[0].Results {
		if !r.OK() {
			t.Errorf("%s %s: not verified: %s%s", r.Case, r.Dims, r.Err, r.Skipped)
		}
		b, _ := json.Marshal([]any{r.Size, r.Dims, r.Shape})
		got = append(got, string(b))
	}
	want := []string{`[3072,"96x32x128","M=96 N=32 K=128"]`, `[3072,"32x96x128","M=32 N=96 K=128"]`, `[2304,"","M=N=K=48"]`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("results (size, dims, shape) %v; want %v", got, want)
	}
	hist, err := execPrism(t, "history", "gemm/nn/float32", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var hs []caseHistory
	if err := json.Unmarshal([]byte(hist), &hs); err != nil || len(hs) != 1 {
		t.Fatalf("history: %v %v\n%s", hs, err, hist)
	}
	var dims []string
	for _, p := range hs[0].Points {
		dims = append(dims, fmt.Sprint(p.Size, ":", p.Dims))
	}
	if got := strings.Join(dims, " "); got != "3072:96x32x128 3072:32x96x128 2304:" {
		t.Errorf("history points (size:dims) %s; want the two shapes of 3072 apart", got)
	}
	// --shape keeps one shape's series: a rectangle by its dims, a square by its size.
	for shape, want := range map[string]string{"32X96X128": "3072:32x96x128", "48x48x48": "2304:"} {
		out, err := execPrism(t, "history", "gemm/nn/float32", "--shape", shape, "--json")
		var hs []caseHistory
		if err != nil || json.Unmarshal([]byte(out), &hs) != nil || len(hs) != 1 || len(hs[0].Points) != 1 ||
			fmt.Sprint(hs[0].Points[0].Size, ":", hs[0].Points[0].Dims) != want {
			t.Errorf("history --shape %s: %v %v; want the one point %s", shape, hs, err, want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shape", "0x1x1"}, `--shape: kernels: gemm: shape "0x1x1": M is 0`},
		{[]string{"--shape", "96x32x128", "--size", "2304"}, "--shape 96x32x128 is size 3K of gemm/nn/float32, not the --size given (2304)"},
	} {
		_, err := execPrism(t, append([]string{"history", "gemm/nn/float32"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("history %v: %v; want %q", c.args, err, c.want)
		}
	}
}

// TestBenchAttentionShapes runs attention/causal/bfloat16 and attention/full/float32 on
// PoCL at explicit shapes of head dims 64 and 256, seq 1 among them, and at the shape the
// bfloat16 ops' size 384 gives (1x3x1x128): each is verified; the shape of a size is
// that size's case (no dims), the others keep their BxHxSxD and report the shape set up;
// prism history --shape finds one by its dims.
func TestBenchAttentionShapes(t *testing.T) {
	useStore(t)
	out := filepath.Join(t.TempDir(), "r.json")
	if _, err := execPrism(t, "bench", "-q", "--device", "opencl:0:0", "--ops", "attention/causal/bfloat16,attention/full/float32", "--portable",
		"--shapes", "1x2x24x64,1X2X24X256,2x1x1x80,1x3x1x128", "--count", "2", "--warmup", "0", "--json", "-o", out); err != nil {
		t.Fatal(err)
	}
	rep, err := bench.ReadReportFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Devices[0].Results {
		if !r.OK() {
			t.Errorf("%s %s: not verified: %s%s", r.Case, r.Dims, r.Err, r.Skipped)
		}
		b, _ := json.Marshal([]any{r.Case, r.Size, r.Dims, r.Shape})
		got = append(got, string(b))
	}
	want := []string{
		// The suite's order: float32 before bfloat16.
		`["attention/full/float32",3072,"1x2x24x64","batch=1 heads=2 seq=24 dim=64"]`,
		`["attention/full/float32",12288,"1x2x24x256","batch=1 heads=2 seq=24 dim=256"]`,
		`["attention/full/float32",160,"2x1x1x80","batch=2 heads=1 seq=1 dim=80"]`,
		`["attention/full/float32",384,"1x3x1x128","batch=1 heads=3 seq=1 dim=128"]`,
		`["attention/causal/bfloat16",3072,"1x2x24x64","batch=1 heads=2 seq=24 dim=64 causal"]`,
		`["attention/causal/bfloat16",12288,"1x2x24x256","batch=1 heads=2 seq=24 dim=256 causal"]`,
		`["attention/causal/bfloat16",160,"2x1x1x80","batch=2 heads=1 seq=1 dim=80 causal"]`,
		`["attention/causal/bfloat16",384,"","batch=1 heads=3 seq=1 dim=128 causal"]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("results (case, size, dims, shape)\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	hist, err := execPrism(t, "history", "attention/full/float32", "--shape", "1x2x24x256", "--json")
	var hs []caseHistory
	if err != nil || json.Unmarshal([]byte(hist), &hs) != nil || len(hs) != 1 || len(hs[0].Points) != 1 || hs[0].Points[0].Dims != "1x2x24x256" {
		t.Errorf("history --shape 1x2x24x256: %v %v", hs, err)
	}
}

// TestHistorySeriesByShape: a point's change is reckoned against the previous point of its
// own shape, never against another shape of the same size.
func TestHistorySeriesByShape(t *testing.T) {
	dev := store.Device{ID: "cuda:0", Fingerprint: "fp"}
	pts := []store.Point{
		{Run: 1, Device: dev, Size: 3072, Dims: "96x32x128", Median: 100},
		{Run: 1, Device: dev, Size: 3072, Dims: "32x96x128", Median: 1000},
		{Run: 2, Device: dev, Size: 3072, Dims: "96x32x128", Median: 110},
		{Run: 2, Device: dev, Size: 3072, Dims: "32x96x128", Median: 900},
	}
	h := withChanges(pts)
	for i, want := range []float64{0.1, -0.1} {
		p := h[2+i]
		if p.Change == nil || math.Abs(*p.Change-want) > 1e-12 || p.previousRun != 1 {
			t.Errorf("run 2 %s: change %v against run %d; want %+.0f%% against run 1", p.Dims, p.Change, p.previousRun, 100*want)
		}
	}
}
