package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// TestMeasured: a case whose device times are all positive gets its rates; one with a time
// of zero or less (Rusticl's profiling gives 0 for some kernels; a NaN from a driver
// becomes a negative Duration), or a model that is not finite, is an invalid measurement
// with no rate and not OK.
func TestMeasured(t *testing.T) {
	us := time.Microsecond
	for _, tc := range []struct {
		name         string
		samples      []time.Duration
		flops, bytes float64
		invalid      string // a part of Result.Invalid; "" for a valid measurement
		gbs          float64
	}{
		{"valid", []time.Duration{10 * us, 20 * us, 30 * us}, 0, 20000, "", 1},
		{"all zero", []time.Duration{0, 0, 0}, 0, 262144, "3 of 3 device times are not positive", 0},
		{"one zero", []time.Duration{0, 2, 2}, 0, 262144, "1 of 3 device times", 0},
		{"negative (a NaN from the driver)", []time.Duration{math.MinInt64, 10 * us}, 0, 262144, "the least is -9223372036854775808 ns", 0},
		{"one nanosecond is a time", []time.Duration{1, 1, 1}, 0, 1, "", 1},
		{"NaN FLOPs in the model", []time.Duration{10 * us}, math.NaN(), 100, "the op's model gives NaN FLOPs", 0},
		{"infinite bytes in the model", []time.Duration{10 * us}, 0, math.Inf(1), "+Inf bytes", 0},
		{"rate overflows", []time.Duration{1}, 0, math.MaxFloat64, "no finite rate", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Result{Case: "stream/copy/float32", Verified: true}
			res.measured(tc.samples, tc.flops, tc.bytes)
			if tc.invalid == "" {
				if res.Invalid != "" || !res.OK() || !near(res.GBs, tc.gbs) {
					t.Errorf("invalid %q, OK %v, %v GB/s; want a valid %v GB/s", res.Invalid, res.OK(), res.GBs, tc.gbs)
				}
				return
			}
			if !strings.HasPrefix(res.Invalid, InvalidPrefix) || !strings.Contains(res.Invalid, tc.invalid) || res.OK() {
				t.Errorf("invalid %q, OK %v; want %q", res.Invalid, res.OK(), tc.invalid)
			}
			if res.GBs != 0 || res.GFLOPs != 0 || !finite(res.Flops) || !finite(res.Bytes) || res.Stats.Runs != len(tc.samples) {
				t.Errorf("an invalid result: %v GB/s, %v GFLOP/s, model %v/%v, %d runs", res.GBs, res.GFLOPs, res.Flops, res.Bytes, res.Stats.Runs)
			}
			// Not placed on a roof: runDevice draws the roofline of OK results only, and the
			// roofline of one is finite anyway.
			res.roofline(Ceilings{CopyGBs: 100, FP32GFLOPs: 1000}, 0)
			if !res.finite() {
				t.Errorf("roofline of an invalid result: %+v", res)
			}
		})
	}
}

// TestCeilingInvalid: a ceiling measured without a valid time is 0 and says why, and the
// report says which.
func TestCeilingInvalid(t *testing.T) {
	c := Ceilings{CopyHow: InvalidPrefix + "buffer copy: 2 of 2 device times are not positive", PeakHow: "8 independent mad chains"}
	c.noteInvalid("copy", &c.CopyHow)
	c.noteInvalid("fp32 peak", &c.PeakHow) // a valid measurement: nothing noted
	fp64 := InvalidPrefix + "1 lanes: 3 of 3 device times are not positive"
	c.noteInvalid("fp64 peak", &fp64)
	if c.CopyHow != "" || c.PeakHow != "8 independent mad chains" {
		t.Errorf("how: copy %q, peak %q", c.CopyHow, c.PeakHow)
	}
	if want := "copy: buffer copy: 2 of 2 device times are not positive; fp64 peak: 1 lanes: 3 of 3 device times are not positive"; c.Invalid != want {
		t.Errorf("Invalid %q, want %q", c.Invalid, want)
	}
	rep := report(result("stream/copy/float32", 10, 9, 11))
	rep.Devices[0].Ceilings = c
	if err := rep.Check(); err == nil || !strings.Contains(err.Error(), "no valid device time") {
		t.Errorf("Check: %v", err)
	}
}

// TestWriteJSONNonFinite: a report holding +Inf and NaN figures (an infinite copy ceiling,
// a NaN rate, a vendor baseline's infinite fraction, a NaN power reading) is still written
// (encoding/json refuses them), each as 0 with its result or ceiling marked invalid; the
// report in memory is not changed.
func TestWriteJSONNonFinite(t *testing.T) {
	good := result("stream/triad/float32", 10, 9, 11)
	good.GBs, good.Fraction = 40, 0.4
	bad := result("stream/copy/float32", 10, 9, 11)
	bad.GBs, bad.Fraction = math.NaN(), math.Inf(1)
	withVendor := result("gemm/nn/float32", 10, 9, 11)
	v := result("gemm/nn/float32", 10, 9, 11)
	v.Fraction = math.Inf(-1)
	withVendor.Vendor = &v
	rep := report(good, bad, withVendor)
	rep.Devices[0].Ceilings.CopyGBs = math.Inf(1)
	rep.Devices[0].Telemetry = Telemetry{Available: true, Samples: 1, PowerW: &Spread{Min: math.NaN()}, SMClockMHz: &Spread{Min: 1, Median: 2, Max: 3}}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	back, err := ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	d := back.Devices[0]
	if d.Ceilings.CopyGBs != 0 || !strings.Contains(d.Ceilings.Invalid, "copy: +Inf") {
		t.Errorf("ceilings: %+v", d.Ceilings)
	}
	if r := d.Results[0]; r.Invalid != "" || r.GBs != 40 {
		t.Errorf("a finite result changed: %+v", r)
	}
	if r := d.Results[1]; !strings.Contains(r.Invalid, "gbs NaN, fraction +Inf") || r.OK() || r.Fraction != 0 {
		t.Errorf("NaN result: %+v", r)
	}
	if r := d.Results[2]; r.Invalid != "" || r.Vendor == nil || !strings.Contains(r.Vendor.Invalid, "fraction -Inf") {
		t.Errorf("vendor baseline: %+v", r.Vendor)
	}
	if tel := d.Telemetry; tel.PowerW != nil || tel.SMClockMHz == nil || !strings.Contains(strings.Join(tel.Missing, ","), "power_w") {
		t.Errorf("telemetry: %+v", tel)
	}
	// The report in memory keeps its figures.
	if !math.IsInf(rep.Devices[0].Ceilings.CopyGBs, 1) || !math.IsNaN(rep.Devices[0].Results[1].GBs) || !math.IsInf(v.Fraction, -1) || rep.Devices[0].Results[1].Invalid != "" {
		t.Error("WriteJSON changed the report")
	}
	// A report without a non-finite figure is written as it is.
	if rep := report(good); rep.finiteReport() != rep {
		t.Error("finiteReport copied a finite report")
	}
	var raw map[string]any
	buf.Reset()
	if err := rep.WriteJSON(&buf); err != nil || json.Unmarshal(buf.Bytes(), &raw) != nil {
		t.Errorf("JSON: %v", err)
	}
}
