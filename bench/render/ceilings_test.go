package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

// tensorReport returns a report of an H200-like GPU with every tensor peak, an sm_80 one
// without float8 tensor cores, and a CPU whose tensor-core precisions compute in float32,
// each with a float16 GEMM (and the GPU a DGEMM on DMMA and a float32 GEMM).
func tensorReport() *bench.Report {
	res := func(c, typ string, gflops float64, roof float64) bench.Result {
		fam, _, _ := strings.Cut(c, "/")
		d := 100 * time.Microsecond
		r := bench.Result{Case: c, Family: fam, Type: typ, Size: 1 << 20, Flops: gflops * 1e9 * d.Seconds(), Bytes: 12 << 20, Verified: true,
			Bound: bench.BoundCompute, AttainableGFLOPs: roof, Fraction: gflops / roof, GFLOPs: gflops}
		r.Stats = bench.Summarize([]time.Duration{d, d, d})
		r.GBs = r.Bytes / d.Seconds() / 1e9
		return r
	}
	h200 := bench.DeviceReport{Backend: "cuda", Ceilings: bench.Ceilings{CopyGBs: 4000, FP32GFLOPs: 60000, FP64GFLOPs: 30000,
		TF32GFLOPs: 450000, FP16GFLOPs: 900000, BF16GFLOPs: 880000, FP8GFLOPs: 1800000, FP64TensorGFLOPs: 60000},
		Results: []bench.Result{res("gemm/nn/float16", "float16", 700000, 900000), res("gemm/nn/float64", "float64", 50000, 60000),
			res("gemm/nn/float32", "float32", 40000, 60000)}}
	h200.Device.ID, h200.Device.Name = "cuda:0", "Test H200"
	a100 := bench.DeviceReport{Backend: "cuda", Ceilings: bench.Ceilings{CopyGBs: 1500, FP32GFLOPs: 19000, FP64GFLOPs: 9500,
		TF32GFLOPs: 150000, FP16GFLOPs: 300000, BF16GFLOPs: 300000, FP64TensorGFLOPs: 19000, FP32Roof: []string{"float8e4m3", "float8e5m2"},
		TensorAbsent: map[string]string{"fp8": "sm_80 has no float8 tensor cores"}},
		Results: []bench.Result{res("gemm/nn/float16", "float16", 200000, 300000)}}
	a100.Device.ID, a100.Device.Name = "cuda:1", "Test A100"
	cpu := bench.DeviceReport{Backend: "opencl", Ceilings: bench.Ceilings{CopyGBs: 50, FP32GFLOPs: 300,
		FP32Roof: []string{"tf32", "float32x3tf32", "float16", "bfloat16", "float8e4m3", "float8e5m2"}},
		Results: []bench.Result{res("gemm/nn/float16", "float16", 150, 300)}}
	cpu.Device.ID, cpu.Device.Name = "opencl:0:0", "Test CPU"
	return &bench.Report{Schema: bench.SchemaVersion, Prism: "devel", Host: "test", Date: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC),
		Config: bench.ConfigInfo{Count: 3}, Devices: []bench.DeviceReport{h200, a100, cpu}}
}

// TestTensorCeilingLines checks the device lines of the tensor ceilings: the peaks measured,
// float8 under the fp32 peak on sm_80, and every tensor-core precision under it on a CPU.
func TestTensorCeilingLines(t *testing.T) {
	lines := view{tensorReport()}.deviceLines()
	for i, want := range []string{
		"tensor peaks: tf32 450000, fp16 900000, bf16 880000, fp8 1800000, fp64 DMMA 60000 GFLOP/s",
		"fp32 roof: float8e4m3, float8e5m2 compute in float32 here (no tensor cores for them)",
		"tensor peaks: none: tf32, float32x3tf32, float16, bfloat16, float8e4m3, float8e5m2 compute in float32 here, under the fp32 peak",
	} {
		if all := strings.Join(lines[i], "\n"); !strings.Contains(all, want) {
			t.Errorf("device %d: no %q in\n%s", i+1, want, all)
		}
	}
	if all := strings.Join(lines[1], "\n"); !strings.Contains(all, "tensor peaks: tf32 150000, fp16 300000, bf16 300000, fp64 DMMA 19000 GFLOP/s") ||
		strings.Contains(all, "fp8 tensor peak missing") {
		t.Errorf("sm_80's lines:\n%s", all)
	}
	var md bytes.Buffer
	if err := Markdown(&md, tensorReport(), ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "tensor peaks: tf32 450000") {
		t.Errorf("the Markdown report lacks the tensor peaks:\n%s", md.String())
	}
}

// TestRooflineTensorRoofs checks that a roofline chart draws the roofs of its cases'
// arithmetics: the fp16 tensor peak under a float16 GEMM, the DMMA peak under a DGEMM that
// beats the FMA fp64 peak, and no tensor roof on a CPU, whose float16 GEMM sits under the
// fp32 peak.
func TestRooflineTensorRoofs(t *testing.T) {
	var buf bytes.Buffer
	if err := Roofline(&buf, tensorReport(), "svg"); err != nil {
		t.Fatal(err)
	}
	texts, _ := svgTexts(t, buf.Bytes())
	for _, w := range []string{"fp16 tensor peak 900000 GFLOP/s", "fp64 DMMA peak 60000 GFLOP/s", "fp32 peak 60000 GFLOP/s", "fp32 peak 300 GFLOP/s",
		"fp16 tensor peak 300000 GFLOP/s"} {
		if !strings.Contains(texts, w) {
			t.Errorf("no %q in %q", w, texts)
		}
	}
	for _, w := range []string{"fp8 tensor peak", "bf16 tensor peak", "tf32 tensor peak"} {
		if strings.Contains(texts, w) {
			t.Errorf("a roof %q that no case on the charts takes", w)
		}
	}
}
