package bench

import (
	"bytes"
	"context"
	"errors"
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
	} {
		r := Result{Type: tc.typ, Flops: tc.flops, Bytes: tc.bytes, GBs: tc.gbs, GFLOPs: tc.gflops}
		r.roofline(c)
		if r.Bound != tc.bound || !near(r.AttainableGFLOPs, tc.attainable) || !near(r.Fraction, tc.fraction) {
			t.Errorf("%s: bound %s, attainable %v, fraction %v; want %s, %v, %v", tc.name, r.Bound, r.AttainableGFLOPs, r.Fraction, tc.bound, tc.attainable, tc.fraction)
		}
		// The fraction is always achieved/attainable where there are FLOPs.
		if tc.flops > 0 && !near(r.Fraction, r.GFLOPs/r.AttainableGFLOPs) {
			t.Errorf("%s: fraction %v != GFLOPs/attainable %v", tc.name, r.Fraction, r.GFLOPs/r.AttainableGFLOPs)
		}
	}
}

func near(a, b float64) bool { return a == b || (a-b)/(a+b) < 1e-9 && (b-a)/(a+b) < 1e-9 }

func TestSizes(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "4096": 4096, "64K": 64 << 10, "16m": 16 << 20, "1G": 1 << 30, "2Ki": 2048, "33000": 33000} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
		if back, _ := ParseSize(FormatSize(want)); back != want {
			t.Errorf("FormatSize(%d) = %q does not read back", want, FormatSize(want))
		}
	}
	for _, in := range []string{"", "0", "-1", "1.5M", "K", "12Q", "1I", "99999999G"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

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

func TestCompare(t *testing.T) {
	old := report(result("same", 100, 95, 110), result("noisy", 100, 90, 150), result("slower", 100, 98, 102),
		result("faster", 100, 98, 102), result("tiny", 100, 99, 100), result("gone", 10, 9, 11))
	cur := report(result("same", 101, 96, 108), result("noisy", 130, 120, 200), result("slower", 120, 118, 125),
		result("faster", 80, 78, 82), result("tiny", 103, 102, 103), result("new", 10, 9, 11))
	cmp := Compare(old, cur, DefaultThreshold)
	want := map[string]string{"same": VerdictSame, "noisy": VerdictSame, "slower": VerdictSlower, "faster": VerdictFaster,
		"tiny": VerdictSame, "gone": VerdictOnlyOld, "new": VerdictOnlyNew}
	if len(cmp.Changes) != len(want) {
		t.Fatalf("%d changes, want %d", len(cmp.Changes), len(want))
	}
	for _, ch := range cmp.Changes {
		if ch.Verdict != want[ch.Case] {
			t.Errorf("%s: %s, want %s", ch.Case, ch.Verdict, want[ch.Case])
		}
	}
	if ch := cmp.Changes[2]; !near(ch.Ratio, 1.2) || !near(ch.RatioMin, 118.0/102) || !near(ch.RatioMax, 125.0/98) {
		t.Errorf("slower: ratio %v in [%v, %v]", ch.Ratio, ch.RatioMin, ch.RatioMax)
	}
	if cmp.Regressions() != 1 {
		t.Errorf("%d regressions, want 1", cmp.Regressions())
	}
	var buf bytes.Buffer
	if err := cmp.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "1 slower, 1 faster") || !strings.Contains(buf.String(), "2 on one side only") {
		t.Errorf("table:\n%s", buf.String())
	}
}

// TestSideBySide checks the table of two devices: rows per case and size, the ratio to the
// baseline, and a baseline that is not in the report.
func TestSideBySide(t *testing.T) {
	a := result("stream/triad/float32", 100, 90, 110)
	a.GBs, a.Bound, a.Fraction = 50, BoundMemory, 0.5
	b := a
	b.Stats.Median = 50 * time.Microsecond
	rep := report(a)
	d2 := DeviceReport{Results: []Result{b, {Case: "gemm/nn/float64", Size: 1024, Skipped: "no fp64"}}}
	d2.Device.ID = "cuda:0"
	rep.Devices = append(rep.Devices, d2)
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf, ""); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"[2] vs [1]", "2.00x", "50.0 GB/s", "50% mem", "skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := rep.WriteTable(&buf, "cuda:0"); err != nil || !strings.Contains(buf.String(), "0.50x") {
		t.Errorf("baseline cuda:0: %v\n%s", err, buf.String())
	}
	if err := rep.WriteTable(&buf, "opencl:9:9"); err == nil {
		t.Error("unknown baseline accepted")
	}
	buf.Reset()
	if err := rep.WriteMarkdown(&buf, ""); err != nil || !strings.Contains(buf.String(), "| stream/triad/float32 | 1K |") {
		t.Errorf("markdown: %v\n%s", err, buf.String())
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
	if want := "opencl:0:0: [2/2] stream/copy/float32 1M\n"; !strings.Contains(buf.String(), want) {
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
