package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
