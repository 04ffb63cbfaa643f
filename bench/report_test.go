package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/suite"
)

func TestRoofline(t *testing.T) {
	c := Ceilings{CopyGBs: 100, FP32GFLOPs: 1000, FP64GFLOPs: 500}
	for _, tc := range []struct {
		name                 string
		typ                  string
		flops, bytes         float64
		gbs, gflops          float64
		bound                string
		attainable, fraction float64
	}{
		{"no flops", "float32", 0, 8, 50, 0, BoundMemory, 0, 0.5},
		{"triad-like", "float32", 2, 12, 60, 10, BoundMemory, 100 * 2.0 / 12, 0.6},
		{"gemm-like fp32", "float32", 2000, 8, 0.4, 100, BoundCompute, 1000, 0.1},
		{"gemm-like fp64 uses the fp64 peak", "float64", 2000, 16, 0.4, 250, BoundCompute, 500, 0.5},
		{"int type: no peak, memory roof", "int32", 10, 8, 40, 50, BoundMemory, 125, 0.4},
		{"tensor-core gemm: no roof measured", "bfloat16", 2000, 6, 0.3, 3000, "", 0, 0},
	} {
		r := Result{Type: tc.typ, Flops: tc.flops, Bytes: tc.bytes, GBs: tc.gbs, GFLOPs: tc.gflops}
		r.roofline(c, 0)
		if (tc.bound == "") != (r.RoofMissing != "") {
			t.Errorf("%s: roof missing %q with bound %q", tc.name, r.RoofMissing, r.Bound)
		}
		if r.CacheResident {
			t.Errorf("%s: cache-resident on a device that reports no cache", tc.name)
		}
		if r.Bound != tc.bound || !near(r.AttainableGFLOPs, tc.attainable) || !near(r.Fraction, tc.fraction) {
			t.Errorf("%s: bound %s, attainable %v, fraction %v; want %s, %v, %v", tc.name, r.Bound, r.AttainableGFLOPs, r.Fraction, tc.bound, tc.attainable, tc.fraction)
		}
		// The fraction is always achieved/attainable where there are FLOPs and a roof.
		if tc.flops > 0 && tc.bound != "" && !near(r.Fraction, r.GFLOPs/r.AttainableGFLOPs) {
			t.Errorf("%s: fraction %v != GFLOPs/attainable %v", tc.name, r.Fraction, r.GFLOPs/r.AttainableGFLOPs)
		}
	}
}

// Ceilings of the kinds of device the tensor roofs distinguish: an H200-like GPU with every
// tensor peak (DMMA above the fp64 FMA peak), an sm_80 GPU without float8 tensor cores, a
// CPU whose tensor-core precisions compute in float32, and a report from before the
// tensor peaks.
var (
	ceilH200 = Ceilings{CopyGBs: 4000, FP32GFLOPs: 60000, FP64GFLOPs: 30000, TF32GFLOPs: 450000, FP16GFLOPs: 900000,
		BF16GFLOPs: 880000, FP8GFLOPs: 1800000, FP64TensorGFLOPs: 60000}
	ceilSM80 = Ceilings{CopyGBs: 1500, FP32GFLOPs: 19000, FP64GFLOPs: 9500, TF32GFLOPs: 150000, FP16GFLOPs: 300000,
		BF16GFLOPs: 300000, FP64TensorGFLOPs: 19000, FP32Roof: []string{"float8e4m3", "float8e5m2"},
		TensorAbsent: map[string]string{"fp8": "sm_80 has no float8 tensor cores"}}
	ceilCPU = Ceilings{CopyGBs: 50, FP32GFLOPs: 1000, FP64GFLOPs: 500,
		FP32Roof: []string{"tf32", "float32x3tf32", "float16", "bfloat16", "float8e4m3", "float8e5m2"}}
	ceilOld = Ceilings{CopyGBs: 4000, FP32GFLOPs: 60000, FP64GFLOPs: 30000}
)

// TestPeakGFLOPs checks the roof of every result type on each kind of device: the tensor
// peak of its arithmetic, tf32's third for float32x3tf32, the better of the FMA and DMMA
// peaks for float64, and the fp32 peak where the device computes the type in float32.
func TestPeakGFLOPs(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Ceilings
		want map[string]float64
		peak map[string]string
	}{
		{"H200", ceilH200, map[string]float64{"float32": 60000, "float64": 60000, "tf32": 450000, "float32x3tf32": 150000,
			"float16": 900000, "bfloat16": 880000, "float8e4m3": 1800000, "float8e5m2": 1800000, "int32": 0},
			map[string]string{"float64": "fp64 DMMA", "float32x3tf32": "tf32 tensor / 3", "float8e5m2": "fp8 tensor", "int32": ""}},
		{"sm_80", ceilSM80, map[string]float64{"float32": 19000, "float64": 19000, "tf32": 150000, "float32x3tf32": 50000,
			"float16": 300000, "bfloat16": 300000, "float8e4m3": 19000, "float8e5m2": 19000},
			map[string]string{"float8e4m3": "fp32", "bfloat16": "bf16 tensor"}},
		{"CPU", ceilCPU, map[string]float64{"float32": 1000, "float64": 500, "tf32": 1000, "float32x3tf32": 1000,
			"float16": 1000, "bfloat16": 1000, "float8e4m3": 1000, "float8e5m2": 1000, "uint32": 0},
			map[string]string{"float64": "fp64", "float16": "fp32", "tf32": "fp32"}},
		{"DMMA below the FMA peak", Ceilings{FP32GFLOPs: 100, FP64GFLOPs: 50, FP64TensorGFLOPs: 40}, map[string]float64{"float64": 50},
			map[string]string{"float64": "fp64"}},
		{"before the tensor peaks", ceilOld, map[string]float64{"float32": 60000, "float64": 30000, "tf32": 0, "float32x3tf32": 0,
			"float16": 0, "bfloat16": 0, "float8e4m3": 0}, nil},
	} {
		for typ, want := range tc.want {
			if got := tc.c.PeakGFLOPs(typ); got != want {
				t.Errorf("%s: PeakGFLOPs(%s) = %v, want %v", tc.name, typ, got, want)
			}
		}
		for typ, want := range tc.peak {
			if got := tc.c.PeakName(typ); got != want {
				t.Errorf("%s: PeakName(%s) = %q, want %q", tc.name, typ, got, want)
			}
		}
	}
}

// TestRooflineTensor checks the roofline of GEMM-like cases of every arithmetic against the
// tensor roofs: a fraction of the tensor peak on the GPU (no case above 100% of its roof:
// DGEMM on DMMA against the DMMA peak), of the fp32 peak on the CPU, and a missing roof,
// saying why, where the tensor peak failed, where the fp32 peak that roofs a CPU's float16
// failed, and in a report from before the tensor peaks; and that the verdict names the
// roof ("of the fp16 tensor peak").
func TestRooflineTensor(t *testing.T) {
	failedFP8 := ceilH200
	failedFP8.FP8GFLOPs, failedFP8.TensorAbsent = 0, map[string]string{"fp8": "kernels: ceiling: injected"}
	cpuNoFP32 := ceilCPU
	cpuNoFP32.FP32GFLOPs, cpuNoFP32.FP32Absent = 0, "peak kernel: injected"
	for _, tc := range []struct {
		name       string
		c          Ceilings
		typ        string
		gflops     float64
		bound      string
		attainable float64
		missing    string
	}{
		{"H200 float16 gemm", ceilH200, "float16", 720000, BoundCompute, 900000, ""},
		{"H200 bfloat16 gemm", ceilH200, "bfloat16", 704000, BoundCompute, 880000, ""},
		{"H200 tf32 gemm", ceilH200, "tf32", 360000, BoundCompute, 450000, ""},
		{"H200 3xtf32 gemm", ceilH200, "float32x3tf32", 120000, BoundCompute, 150000, ""},
		{"H200 float8 gemm", ceilH200, "float8e5m2", 1440000, BoundCompute, 1800000, ""},
		{"H200 DGEMM on DMMA", ceilH200, "float64", 53700, BoundCompute, 60000, ""},
		{"sm_80 float8 gemm in float32", ceilSM80, "float8e4m3", 9500, BoundCompute, 19000, ""},
		{"CPU float16 gemm", ceilCPU, "float16", 500, BoundCompute, 1000, ""},
		{"CPU tf32 gemm", ceilCPU, "tf32", 250, BoundCompute, 1000, ""},
		{"CPU float8 gemm", ceilCPU, "float8e4m3", 100, BoundCompute, 1000, ""},
		{"fp8 peak failed", failedFP8, "float8e4m3", 1000000, "", 0, "fp8 tensor peak missing: kernels: ceiling: injected"},
		{"CPU fp32 peak failed", cpuNoFP32, "float16", 500, BoundMemory, 50 * 20000.0 / 6, "fp32 peak missing: peak kernel: injected"},
		{"before the tensor peaks", ceilOld, "bfloat16", 700000, "", 0, "no ceiling measures bfloat16 arithmetic"},
	} {
		r := Result{Type: tc.typ, Flops: 20000, Bytes: 6, GFLOPs: tc.gflops, GBs: tc.gflops * 6 / 20000, Verified: true,
			Stats: Stats{Runs: 3, Median: time.Millisecond, Min: time.Millisecond, Max: time.Millisecond}}
		r.roofline(tc.c, 0)
		if r.Bound != tc.bound || !near(r.AttainableGFLOPs, tc.attainable) || r.RoofMissing != tc.missing {
			t.Errorf("%s: bound %q, attainable %v, roof missing %q; want %q, %v, %q", tc.name, r.Bound, r.AttainableGFLOPs, r.RoofMissing, tc.bound, tc.attainable, tc.missing)
		}
		r.judge(tc.c, Overheads{}, 0, TimingEvents)
		if want := map[string]string{"H200 float16 gemm": "compute-bound at 80% of the fp16 tensor peak: ",
			"H200 3xtf32 gemm": "compute-bound at 80% of the tf32 tensor peak / 3: ", "H200 DGEMM on DMMA": "compute-bound at 90% of the fp64 DMMA peak: ",
			"CPU float16 gemm": "compute-bound at 50% of the fp32 FMA peak: "}[tc.name]; want != "" && !strings.HasPrefix(r.Verdict.Text, want) {
			t.Errorf("%s: verdict %q, want %q...", tc.name, r.Verdict.Text, want)
		}
		switch {
		case tc.missing != "" && r.Fraction != 0:
			t.Errorf("%s: fraction %v without a roof", tc.name, r.Fraction)
		case tc.missing == "" && (!near(r.Fraction, tc.gflops/tc.attainable) || r.Fraction > 1):
			t.Errorf("%s: fraction %v, want %v (at most 1)", tc.name, r.Fraction, tc.gflops/tc.attainable)
		}
	}
}

// TestCacheResident: a memory-bound case above the copy roof is cache-resident only when its
// working set fits in the last-level cache; a compute-bound one never is.
func TestCacheResident(t *testing.T) {
	c := Ceilings{CopyGBs: 100, FP32GFLOPs: 1000}
	for _, tc := range []struct {
		name         string
		bytes, flops float64
		gbs, gflops  float64
		cache        int64
		want         bool
	}{
		{"fits, above the roof", 12 << 20, 0, 150, 0, 32 << 20, true},
		{"fits, below the roof", 12 << 20, 0, 90, 0, 32 << 20, false},
		{"too large for the cache", 64 << 20, 0, 150, 0, 32 << 20, false},
		{"no cache reported", 12 << 20, 0, 150, 0, 0, false},
		{"compute-bound", 1 << 20, 1 << 40, 150, 1200, 32 << 20, false},
	} {
		r := Result{Type: "float32", Bytes: tc.bytes, Flops: tc.flops, GBs: tc.gbs, GFLOPs: tc.gflops}
		r.roofline(c, tc.cache)
		if r.CacheResident != tc.want || r.WorkingSetBytes != tc.bytes {
			t.Errorf("%s: cache-resident %v, working set %v; want %v, %v", tc.name, r.CacheResident, r.WorkingSetBytes, tc.want, tc.bytes)
		}
	}
}

func near(a, b float64) bool { return a == b || (a-b)/(a+b) < 1e-9 && (b-a)/(a+b) < 1e-9 }

// result returns an OK result of case c with the given median, min and max in µs.
func result(c string, med, lo, hi int) Result {
	us := time.Microsecond
	return Result{Case: c, Size: 1024, Verified: true, Stats: Stats{Runs: 3, Median: time.Duration(med) * us, Min: time.Duration(lo) * us, Max: time.Duration(hi) * us}}
}

func report(results ...Result) *Report {
	d := DeviceReport{Results: results}
	d.Device.ID = "opencl:0:0"
	return &Report{Schema: SchemaVersion, Devices: []DeviceReport{d}}
}

// sampled returns an OK result of case c timed at the given µs, one sample per run.
func sampled(c string, us ...float64) Result {
	samples := make([]time.Duration, len(us))
	for i, v := range us {
		samples[i] = time.Duration(v * float64(time.Microsecond))
	}
	return Result{Case: c, Size: 1024, Verified: true, Stats: Summarize(samples)}
}

func TestCompare(t *testing.T) {
	base := []float64{100, 101, 99, 102, 98, 100.5, 99.5, 101.5}
	scaled := func(f float64, xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = f * x
		}
		return out
	}
	old := report(sampled("same", base...), sampled("slower", base...), sampled("faster", base...),
		sampled("tiny", base...), sampled("few", 100, 101, 99), sampled("noisy", 100, 150, 60, 130, 80, 110),
		result("legacy", 100, 98, 102), sampled("gone", base...))
	cur := report(sampled("same", base...), sampled("slower", scaled(1.2, base)...), sampled("faster", scaled(0.8, base)...),
		sampled("tiny", scaled(1.03, base)...), sampled("few", 200, 201, 199), sampled("noisy", 120, 70, 140, 95, 160, 105),
		result("legacy", 120, 118, 125), sampled("new", base...))
	cmp := Compare(old, cur, DefaultCompareOptions)
	want := map[string]string{"same": VerdictSame, "slower": VerdictSlower, "faster": VerdictFaster, "tiny": VerdictSame,
		"few": VerdictSame, "noisy": VerdictSame, "legacy": VerdictSlower, "gone": VerdictOnlyOld, "new": VerdictOnlyNew}
	if len(cmp.Changes) != len(want) {
		t.Fatalf("%d changes, want %d", len(cmp.Changes), len(want))
	}
	byCase := map[string]Change{}
	for _, ch := range cmp.Changes {
		byCase[ch.Case] = ch
		if ch.Verdict != want[ch.Case] {
			t.Errorf("%s: %s (p=%v), want %s", ch.Case, ch.VerdictText(), ch.P, want[ch.Case])
		}
	}
	// Identical samples: p = 1, a CI around 1.
	if ch := byCase["same"]; ch.Test != TestMannWhitney || ch.P != 1 || !(ch.RatioLo < 1 && 1 < ch.RatioHi) || ch.N1 != 8 {
		t.Errorf("same: %+v", ch)
	}
	// 20% slower on every run: significant, and the CI holds 1.2 and not 1.
	if ch := byCase["slower"]; !near(ch.Ratio, 1.2) || ch.P >= 0.05 || !(ch.RatioLo <= 1.2 && 1.2 <= ch.RatioHi) || ch.RatioLo <= 1 || ch.Confidence != 0.95 {
		t.Errorf("slower: ratio %v, p %v, CI [%v, %v] at %v", ch.Ratio, ch.P, ch.RatioLo, ch.RatioHi, ch.Confidence)
	}
	// 3% slower and significant, but under the threshold; with threshold 0 it is flagged.
	if ch := byCase["tiny"]; ch.P >= 0.05 {
		t.Errorf("tiny: p %v", ch.P)
	}
	if ch := Compare(old, cur, CompareOptions{}).Changes[3]; ch.Case != "tiny" || ch.Verdict != VerdictSlower {
		t.Errorf("threshold 0: %s", ch)
	}
	// Three runs a side: twice as slow, yet no decision, and the reason.
	if ch := byCase["few"]; ch.VerdictText() != "~ (need >= 4 samples)" || ch.RatioLo != 0 {
		t.Errorf("few: %q, CI [%v, %v]", ch.VerdictText(), ch.RatioLo, ch.RatioHi)
	}
	if ch := byCase["legacy"]; ch.Test != TestRanges || ch.Note == "" {
		t.Errorf("legacy: %+v", ch)
	}
	if cmp.Regressions() != 2 {
		t.Errorf("%d regressions, want 2", cmp.Regressions())
	}
}

func TestUTest(t *testing.T) {
	// The exact null distribution of U for 5 and 5 values: C(10,5) = 252 orderings, 1, 1, 2,
	// 3 of them with U = 0, 1, 2, 3.
	pmf := uPMF(5, 5)
	sum := 0.0
	for _, p := range pmf {
		sum += p
	}
	if len(pmf) != 26 || !near(sum, 1) || !near(pmf[0], 1.0/252) || !near(pmf[3], 3.0/252) || !near(pmf[12], pmf[13]) {
		t.Errorf("pmf(5, 5) = %v (sum %v)", pmf, sum)
	}
	if !near(uCDF(5, 5, 2), 4.0/252) || uCDF(5, 5, -1) != 0 || !near(uCDF(5, 5, 25), 1) {
		t.Errorf("cdf(5, 5)")
	}
	// The normal approximation beyond the exact limit agrees with the exact count at it.
	exact := 0.0
	for _, p := range uPMF(51, 51)[:1100] {
		exact += p
	}
	if approx := uCDF(51, 51, 1099); math.Abs(approx-exact) > 0.002 || exact < 0.01 {
		t.Errorf("P(U <= 1099) for 51, 51: normal approximation %v, exact %v", approx, exact)
	}
	if got := uMinSamples(0.05); got != 4 {
		t.Errorf("uMinSamples(0.05) = %d, want 4 (benchmath agrees)", got)
	}
	if !near(uMinP(4, 4), 2.0/70) || uMinP(3, 3) <= 0.05 || uMinP(0, 5) != 1 {
		t.Errorf("uMinP")
	}
	// Moses' interval for 5 and 5 at 95%: the 3rd smallest to the 3rd largest of the 25
	// differences; here the differences are 10*j - i for i, j in 0..4, so -4..40.
	xs, ys := []float64{0, 1, 2, 3, 4}, []float64{0, 10, 20, 30, 40}
	lo, hi, ok := shiftCI(xs, ys, 0.05)
	if !ok || lo != -2 || hi != 38 {
		t.Errorf("shiftCI = [%v, %v] %v, want [-2, 38]", lo, hi, ok)
	}
	if _, _, ok := shiftCI(xs[:3], ys[:3], 0.05); ok {
		t.Error("shiftCI with 3 and 3 values at 95% is finite")
	}
}

type fakeSampler struct{ n atomic.Int32 }

func (f *fakeSampler) Sample(busID string) (Reading, error) {
	i := float64(f.n.Add(1))
	if i == 2 {
		return Reading{}, errors.New("busy")
	}
	return Reading{SMClockMHz: 1000 + 100*i, PowerW: 100 * i, TemperatureC: 40 + i}, nil
}

func TestTelemetrySummary(t *testing.T) {
	f := &fakeSampler{}
	stop := sampleEvery(context.Background(), f, "0000:17:00.0", time.Millisecond)
	for f.n.Load() < 6 {
		time.Sleep(time.Millisecond)
	}
	tel := stop()
	if !tel.Available || tel.Samples < 5 || tel.Errors != 1 || tel.BusID != "0000:17:00.0" {
		t.Fatalf("%+v", tel)
	}
	if tel.SMClockMHz.Min != 1100 || tel.SMClockMHz.Max < 1600 || tel.PowerW.Min != 100 || tel.TemperatureC.Min != 41 {
		t.Errorf("spreads: clock %v, power %v, temperature %v", tel.SMClockMHz, tel.PowerW, tel.TemperatureC)
	}
	// Devices NVML cannot read say why, without opening the sampler; an NVIDIA GPU opens it
	// once, and a failure to open is the reason.
	opens := 0
	src := newTelemetrySource(func() (Sampler, error) { opens++; return nil, errors.New("no libnvidia-ml.so.1") })
	defer src.close()
	var dev DeviceReport
	if tel := src.start(context.Background(), dev.Device, 0)(); tel.Available || !strings.Contains(tel.Reason, "PCI bus ID") {
		t.Errorf("no bus ID: %+v", tel)
	}
	dev.Device.PCIBusID, dev.Device.Vendor = "0000:17:00.0", "AMD"
	if tel := src.start(context.Background(), dev.Device, 0)(); tel.Available || !strings.Contains(tel.Reason, "NVIDIA") {
		t.Errorf("AMD GPU: %+v", tel)
	}
	if opens != 0 {
		t.Error("sampler opened for a device NVML cannot read")
	}
	dev.Device.Vendor = "NVIDIA Corporation"
	for range 2 {
		if tel := src.start(context.Background(), dev.Device, 0)(); tel.Available || !strings.Contains(tel.Reason, "libnvidia-ml") {
			t.Errorf("NVML missing: %+v", tel)
		}
	}
	if opens != 1 {
		t.Errorf("sampler opened %d times, want once", opens)
	}
}

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, false)
	p.begin(2)
	p.step("opencl:0:0", "copy ceiling")
	p.step("opencl:0:0", "stream/copy/float32 1M")
	p.end()
	if want := "opencl:0:0: [2/2 0:00] stream/copy/float32 1M\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("plain progress:\n%s", buf.String())
	}
	buf.Reset()
	p = NewProgress(&buf, true)
	p.begin(4)
	p.step("cuda:0", "fp32 peak")
	p.end()
	if out := buf.String(); !strings.HasPrefix(out, "\r\x1b[K[") || !strings.Contains(out, "1/4") || strings.Count(out, "\n") != 1 {
		t.Errorf("live progress: %q", out)
	}
	var nilP *Progress
	nilP.begin(1)
	nilP.step("x", "y")
	nilP.end()
}

// TestReadLegacyReport reads a report from before schema 1 (docs/results).
func TestReadLegacyReport(t *testing.T) {
	f, err := os.Open("../docs/results/2026-11-21-h100-cuda-opencl-pocl-stream.json")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	r, err := ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Device("cuda:0")
	if d == nil || d.Ceilings.CopyGBs < 1000 || len(d.Results) == 0 || d.Results[0].Size != 67108864 || d.Results[0].Fraction <= 0 || r.Config.Count != 20 {
		t.Fatalf("legacy report: %+v", d)
	}
	if _, err := ReadReport(strings.NewReader(`{"schema": 99}`)); err == nil {
		t.Error("schema 99 accepted")
	}
}

// TestTensorPlan checks which tensor peaks each kind of device measures and which result
// types it roofs by the fp32 peak: every peak from sm_89 on, all but float8 on sm_80 to
// sm_87, none below sm_80 nor on a CPU, and the tf32 and 16-bit ones on NVIDIA's OpenCL
// (the opencl-mma GEMM's precisions, float8 and 3xTF32 computing in float32 there).
func TestTensorPlan(t *testing.T) {
	all := []string{"tf32", "float32x3tf32", "float16", "bfloat16", "float8e4m3", "float8e5m2"}
	fp8 := []string{"float8e4m3", "float8e5m2"}
	for _, tc := range []struct {
		name    string
		backend string
		info    engine.DeviceInfo
		measure []string
		inFP32  []string
	}{
		{"H200", "cuda", engine.DeviceInfo{ComputeCapability: 90, Kind: engine.KindGPU}, []string{"tf32", "fp16", "bf16", "fp8", "fp64_tensor"}, nil},
		{"L40S", "cuda", engine.DeviceInfo{ComputeCapability: 89, Kind: engine.KindGPU}, []string{"tf32", "fp16", "bf16", "fp8", "fp64_tensor"}, nil},
		{"A100", "cuda", engine.DeviceInfo{ComputeCapability: 80, Kind: engine.KindGPU}, []string{"tf32", "fp16", "bf16", "fp64_tensor"}, fp8},
		{"V100", "cuda", engine.DeviceInfo{ComputeCapability: 70, Kind: engine.KindGPU}, nil, all},
		{"H200 through NVIDIA's OpenCL", "opencl", engine.DeviceInfo{ComputeCapability: 90, Kind: engine.KindGPU, Platform: "NVIDIA CUDA"},
			[]string{"tf32", "fp16", "bf16"}, []string{"float32x3tf32", "float8e4m3", "float8e5m2"}},
		{"PoCL", "opencl", engine.DeviceInfo{Kind: engine.KindCPU, Platform: "Portable Computing Language"}, nil, all},
		{"PoCL's CUDA device", "opencl", engine.DeviceInfo{Kind: engine.KindGPU, Platform: "Portable Computing Language", Vendor: "NVIDIA Corporation"}, nil, all},
	} {
		measure, inFP32, why := tensorPlan(tc.backend, tc.info)
		var keys []string
		for _, m := range measure {
			keys = append(keys, m.key)
		}
		if !slices.Equal(keys, tc.measure) || !slices.Equal(inFP32, tc.inFP32) {
			t.Errorf("%s: measures %v, fp32 roof %v; want %v, %v", tc.name, keys, inFP32, tc.measure, tc.inFP32)
		}
		if (len(inFP32) > 0) != strings.Contains(why, "fp32 peak is their roof") {
			t.Errorf("%s: why %q for fp32 roof %v", tc.name, why, inFP32)
		}
	}
}

// TestTensorRoofsOnCPU runs the GEMM of every precision on the first OpenCL device (PoCL:
// no tensor cores) and checks that each case has a roof and a fraction: the tf32, 16-bit
// and 8-bit precisions against the fp32 peak, as the report's ceilings say.
func TestTensorRoofsOnCPU(t *testing.T) {
	ctx := context.Background()
	dev := firstOpenCL(t)
	if dev.Info().Kind != engine.KindCPU {
		t.Skipf("%s is not a CPU device", dev.ID())
	}
	ops, err := suite.Match("gemm/nn/")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, Config{Ops: ops, Sizes: []int{64 * 64}, Quick: true, Count: 2, Seed: 7}, []*engine.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Check(); err != nil {
		t.Fatal(err)
	}
	d := rep.Devices[0]
	c := d.Ceilings
	if len(c.FP32Roof) != 6 || c.TF32GFLOPs != 0 || c.FP16GFLOPs != 0 || !strings.Contains(c.TensorHow, "fp32 peak is their roof") {
		t.Errorf("ceilings %+v: want no tensor peak and the six tensor-core types under the fp32 peak", c)
	}
	types := map[string]bool{}
	for _, r := range d.Results {
		types[r.Type] = true
		if r.RoofMissing != "" || r.Fraction <= 0 || r.AttainableGFLOPs <= 0 || r.AttainableGFLOPs > c.FP32GFLOPs*(1+1e-12) && r.Type != "float64" {
			t.Errorf("%s: roof missing %q, fraction %v, attainable %v (fp32 peak %v)", r.Case, r.RoofMissing, r.Fraction, r.AttainableGFLOPs, c.FP32GFLOPs)
		}
	}
	if len(types) < 7 {
		t.Errorf("result types %v: want every GEMM precision", types)
	}
}
