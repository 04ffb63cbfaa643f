package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

// The fuzz targets feed the report reader, compare and every renderer with arbitrary
// input: whatever the reader accepts, nothing may panic, and the JSON written must read
// back. Their seeds run with every `go test`; `make fuzz` runs each for a while:
//
//	go test -run '^$' -fuzz FuzzReadReport -fuzztime 30s ./bench

// fuzzSeeds are reports in the shapes the reader meets: the smallest, a chart report with
// vendor baselines, one from before schema 1, one with escape sequences, zero times and
// extreme figures, and a few that are not reports.
func fuzzSeeds(t testing.TB) [][]byte {
	var chart bytes.Buffer
	if err := chartReport().WriteJSON(&chart); err != nil {
		t.Fatal(err)
	}
	hostile := report(
		bench.Result{Case: "stream/copy\x1b[2J/float32", Family: "stream", Type: "float32", Size: -5, Verified: true, Bytes: 1e308, GBs: 1e308, Fraction: 1e300, Bound: bench.BoundMemory,
			Stats: bench.Stats{Runs: 2, Median: 0, Min: -1, Max: 1, Samples: []time.Duration{-1, 1}}},
		bench.Result{Case: "gemm/\u202enn/float64", Family: "gemm", Type: "float64", Size: 1 << 40, Verified: true, Flops: 1e300, Bytes: 1e-300, GFLOPs: 1e300, GBs: 1e-300,
			Bound: bench.BoundCompute, AttainableGFLOPs: 1e300, Fraction: 1e300, Stats: bench.Stats{Runs: 1, Median: 1, Min: 1, Max: 1}},
		bench.Result{Case: "", Size: 0, Skipped: "no fp64", Vendor: &bench.Result{Case: "x", Verified: true, Stats: bench.Stats{Runs: 1, Median: 5, Min: 5, Max: 5}}},
	)
	hostile.Devices[0].Ceilings = bench.Ceilings{CopyGBs: 1e-300, FP32GFLOPs: 1e300, FP64GFLOPs: 1e-300}
	hostile.Devices = append(hostile.Devices, bench.DeviceReport{Device: hostile.Devices[0].Device, Err: "\x1b]0;x\x07"})
	hostile.Devices[1].Device.ID = bench.VendorPrefix + "opencl:0:0"
	var h bytes.Buffer
	if err := hostile.WriteJSON(&h); err != nil {
		t.Fatal(err)
	}
	return [][]byte{
		[]byte(minimalReport),
		chart.Bytes(),
		h.Bytes(),
		[]byte(`{"count": 3, "devices": [{"device": {"id": "cuda:0"}, "copy_gbs": 2000, "results": [{"case": "stream/copy/float32", "n": 1024, "fraction_of_copy": 0.8, "verified": true, "stats": {"runs": 3, "median_ns": 5, "min_ns": 4, "max_ns": 6}}]}]}`),
		[]byte(`null`), []byte(`{}`), []byte(`{"schema": 1, "devices": []}`), []byte("\x00"),
	}
}

// watchdog crashes the process, so that the fuzzer keeps the input, when the test has not
// called the returned stop within 10 s: reading and rendering a report of 1 MiB takes
// milliseconds, and no input may make it hang.
func watchdog(data ...[]byte) (stop func() bool) {
	return time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("bench: input still running after 10 s: %q", data)) }).Stop
}

// renderAll runs every renderer over r, charts included when charts is set; errors are
// fine, panics are not.
func renderAll(t *testing.T, r *bench.Report, charts bool) {
	for _, rd := range renderers {
		if rd.name == "html" && !charts {
			continue
		}
		rd.write(r, io.Discard)
	}
	if len(r.Devices) > 0 {
		Table(io.Discard, r, TableOptions{Baseline: r.Devices[len(r.Devices)-1].Device.ID})
	}
	if !charts {
		return
	}
	for _, m := range PlotMetrics {
		Plot(io.Discard, r, "svg", m)
	}
	Plot(io.Discard, r, "png", MetricRoof)
	Roofline(io.Discard, r, "svg")
	Roofline(io.Discard, r, "pdf")
}

// FuzzReadReport: the reader never panics, and every report it accepts renders in every
// text format without panicking and writes JSON that reads back to as many devices and
// results.
func FuzzReadReport(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog(data)()
		r, err := (bench.ReportReader{MaxBytes: 1 << 20}).Read(bytes.NewReader(data))
		if err != nil {
			if r != nil {
				t.Fatal("a report and an error")
			}
			return
		}
		renderAll(t, r, false)
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatalf("WriteJSON of an accepted report: %v", err)
		}
		back, err := bench.ReadReport(&buf)
		if err != nil {
			t.Fatalf("the JSON written does not read back: %v\n%s", err, buf.String())
		}
		if len(back.Devices) != len(r.Devices) {
			t.Fatalf("%d devices read back, want %d", len(back.Devices), len(r.Devices))
		}
		for i := range back.Devices {
			if len(back.Devices[i].Results) != len(r.Devices[i].Results) {
				t.Fatalf("device %d: %d results read back, want %d", i, len(back.Devices[i].Results), len(r.Devices[i].Results))
			}
		}
	})
}

// FuzzRenderCharts: every report the reader accepts draws (or refuses with an error) the
// bar charts of every metric, PNG included, the rooflines and the HTML page, and no text
// renderer lets a control character through.
func FuzzRenderCharts(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog(data)()
		r, err := (bench.ReportReader{MaxBytes: 64 << 10}).Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		renderAll(t, r, true)
		var buf bytes.Buffer
		if err := Table(&buf, r, TableOptions{}); err == nil {
			if i := strings.IndexFunc(buf.String(), func(c rune) bool { return c < 0x20 && c != '\n' || c == 0x7f || c == 0x202e }); i >= 0 {
				t.Fatalf("control character %q in the table at %d", buf.String()[i], i)
			}
		}
	})
}

// FuzzCompare: any two reports the reader accepts compare, print and gate without panic,
// and a report compared with itself shows no regression.
func FuzzCompare(f *testing.F) {
	seeds := fuzzSeeds(f)
	for i, a := range seeds {
		f.Add(a, seeds[(i+1)%len(seeds)])
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		defer watchdog(a, b)()
		old, err := (bench.ReportReader{MaxBytes: 1 << 20}).Read(bytes.NewReader(a))
		if err != nil {
			return
		}
		cur, err := (bench.ReportReader{MaxBytes: 1 << 20}).Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, opt := range []bench.CompareOptions{bench.DefaultCompareOptions, {Threshold: 0, Alpha: 0.01}} {
			cmp := bench.Compare(old, cur, opt)
			Comparison(io.Discard, cmp)
			cmp.Gate()
			if self := bench.Compare(old, old, opt); self.Regressions() != 0 {
				t.Fatalf("a report against itself: %d regressions", self.Regressions())
			}
		}
	})
}
