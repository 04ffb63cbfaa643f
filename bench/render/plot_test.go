package render

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// chartReport returns a report of two devices and the vendor baselines of the first:
// three families, a case without FLOPs, a compute-bound case, a skipped one.
func chartReport() *bench.Report {
	res := func(c string, flops, bytes float64, us int, bound string, frac float64) bench.Result {
		fam, _, _ := strings.Cut(c, "/")
		r := bench.Result{Case: c, Family: fam, Type: "float32", Size: 1 << 20, Flops: flops, Bytes: bytes, Verified: true, Bound: bound, Fraction: frac}
		d := time.Duration(us) * time.Microsecond
		r.Stats = bench.Summarize([]time.Duration{d, d + time.Microsecond, d - time.Microsecond, d, d})
		r.GBs, r.GFLOPs = bytes/d.Seconds()/1e9, flops/d.Seconds()/1e9
		return r
	}
	gpu := bench.DeviceReport{Backend: "cuda", Ceilings: bench.Ceilings{CopyGBs: 2000, FP32GFLOPs: 50000, FP64GFLOPs: 25000}, Results: []bench.Result{
		res("stream/copy/float32", 0, 8<<20, 5, bench.BoundMemory, 0.8),
		res("stream/triad/float32", 2<<20, 12<<20, 8, bench.BoundMemory, 0.78),
		res("gemm/nn/float32", 2e9, 12<<20, 100, bench.BoundCompute, 0.4),
		res("reduce/sum/float32", 1<<20, 4<<20, 4, bench.BoundMemory, 0.5),
	}}
	gpu.Device.ID, gpu.Device.Name = "cuda:0", "Test GPU"
	cpu := bench.DeviceReport{Backend: "opencl", Ceilings: bench.Ceilings{CopyGBs: 50, FP32GFLOPs: 300}, Results: []bench.Result{
		res("stream/copy/float32", 0, 8<<20, 200, bench.BoundMemory, 0.83),
		res("stream/triad/float32", 2<<20, 12<<20, 300, bench.BoundMemory, 0.83),
		res("gemm/nn/float32", 2e9, 12<<20, 20000, bench.BoundCompute, 0.33),
		{Case: "reduce/sum/float32", Family: "reduce", Size: 1 << 20, Skipped: "no reason"},
	}}
	cpu.Device.ID, cpu.Device.Name = "opencl:0:0", "Test CPU"
	vendor := bench.DeviceReport{Backend: "cuda", Results: []bench.Result{res("gemm/nn/float32", 2e9, 12<<20, 80, bench.BoundCompute, 0.5)}}
	vendor.Device.ID, vendor.Device.Name = bench.VendorPrefix+"cuda:0", "cuBLAS"
	return &bench.Report{Schema: bench.SchemaVersion, Prism: "devel", Commit: "0123456789abcdef", Host: "test", Date: time.Date(2026, 11, 21, 16, 31, 0, 0, time.UTC),
		Config: bench.ConfigInfo{Count: 5}, Devices: []bench.DeviceReport{gpu, cpu, vendor}}
}

// svgTexts parses an SVG and returns its text content and the number of shapes.
func svgTexts(t *testing.T, svg []byte) (string, int) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var texts []string
	shapes, inText := 0, false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "path", "rect":
				shapes++
			case "text":
				inText = true
			}
		case xml.EndElement:
			inText = inText && tok.Name.Local != "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		}
	}
	return strings.Join(texts, "|"), shapes
}

func TestPlotMetric(t *testing.T) {
	for in, want := range map[string]string{"": MetricRoof, "roof": MetricRoof, "vendor": MetricVendor, "time": MetricTime,
		"rate": MetricRate, "fraction": MetricRoof, "gbs": MetricRate, "gflops": MetricRate} {
		if got, err := PlotMetric(in); got != want || err != nil {
			t.Errorf("PlotMetric(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := PlotMetric("watts"); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "roof, vendor, time, rate") {
		t.Errorf("PlotMetric(watts): %v", err)
	}
}

// TestBarChart draws every metric: rows grouped by family, one bar per device, the value
// of each metric where it is defined, and a height that grows with the rows.
func TestBarChart(t *testing.T) {
	rep := chartReport()
	for _, tc := range []struct {
		metric string
		want   []string // texts
		lacks  []string
	}{
		{MetricRoof, []string{"Fraction of the roofline ceiling", "stream", "gemm", "reduce", "triad/float32", "nn/float32", "cuda:0 · Test GPU", "opencl:0:0 · Test CPU", "100%", "size 1M"}, []string{"stream/triad"}},
		{MetricTime, []string{"Median time per run", "10µs", "1ms"}, nil},
		{MetricRate, []string{"Achieved rate", "nn/float32 (GFLOP/s)", "triad/float32"}, []string{"triad/float32 (GFLOP/s)"}},
		{MetricVendor, []string{"Speed relative to the vendor library", "nn/float32", "cuda:0 · Test GPU", "0.80x"}, []string{"triad/float32", "Test CPU", "vendor:cuda:0"}},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Plot(&buf, rep, "svg", tc.metric); err != nil {
				t.Fatal(err)
			}
			texts, shapes := svgTexts(t, buf.Bytes())
			for _, w := range tc.want {
				if !strings.Contains(texts, w) {
					t.Errorf("no %q in %q", w, texts)
				}
			}
			for _, w := range tc.lacks {
				if strings.Contains(texts, w) {
					t.Errorf("%q in %q", w, texts)
				}
			}
			if shapes < 4 {
				t.Errorf("%d shapes", shapes)
			}
			if !bytes.Contains(buf.Bytes(), []byte("Arial")) {
				t.Error("the SVG names no fallback font")
			}
		})
	}
	// PDF too, bold titles and "·" included.
	var pdf bytes.Buffer
	if err := Plot(&pdf, rep, "pdf", MetricRoof); err != nil || !bytes.HasPrefix(pdf.Bytes(), []byte("%PDF")) {
		t.Errorf("PDF: %v", err)
	}
	// The vendor metric's values: vendor time / prism time.
	series, rows, err := view{rep}.barData(MetricVendor)
	if err != nil || len(series) != 1 || len(rows) != 1 || !near(rows[0].vals[0], 80.0/100) {
		t.Errorf("vendor data: %v %+v %v", series, rows, err)
	}
	// A baseline in the field that is faster than the pseudo-device's is the one taken.
	gemm := &rep.Devices[0].Results[2]
	gemm.Vendor = &bench.Result{Case: gemm.Case, Size: gemm.Size, Verified: true, Stats: bench.Summarize([]time.Duration{50 * time.Microsecond})}
	if b := rep.VendorBaseline(0, gemm); b != gemm.Vendor {
		t.Errorf("VendorBaseline ignores Result.Vendor")
	}
	gemm.Vendor = nil
	// The skipped case has no bar, the others one per device.
	_, rows, _ = view{rep}.barData(MetricRoof)
	if len(rows) != 4 || rows[0].family != "stream" || rows[3].label != "sum/float32" || !math.IsNaN(rows[3].vals[1]) || !near(rows[2].vals[0], 40) {
		t.Errorf("roof rows: %+v", rows)
	}
	// More rows, a taller chart of the same width.
	small, _ := view{rep}.barChart(MetricRoof)
	rep.Devices[0].Results = append(rep.Devices[0].Results, rep.Devices[0].Results[1])
	rep.Devices[0].Results[4].Case = "stream/add/float32"
	big, _ := view{rep}.barChart(MetricRoof)
	if big.w != small.w || big.h <= small.h || small.w != chartWidth {
		t.Errorf("chart sizes %vx%v then %vx%v", small.w, small.h, big.w, big.h)
	}
	// Without vendor baselines the vendor chart is an error that says why.
	rep.Devices = rep.Devices[:2]
	if err := Plot(io.Discard, rep, "svg", MetricVendor); err == nil || !strings.Contains(err.Error(), "vendor:") {
		t.Errorf("vendor chart without baselines: %v", err)
	}
	if err := Plot(io.Discard, (&bench.Report{}), "svg", MetricRoof); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("empty report: %v", err)
	}
}

// TestRooflineChart draws the rooflines: one chart per device with ceilings, cases with FLOPs
// as numbered points with a key, the cases without FLOPs listed, the roofs labelled.
func TestRooflineChart(t *testing.T) {
	rep := chartReport()
	charts, ids, skipped := view{rep}.rooflineCharts()
	if len(charts) != 2 || ids[0] != "cuda:0" || ids[1] != "opencl:0:0" || len(skipped) != 1 || !strings.Contains(skipped[0], "vendor:cuda:0 has no measured ceilings") {
		t.Fatalf("charts for %v, skipped %q", ids, skipped)
	}
	var buf bytes.Buffer
	if err := Roofline(&buf, rep, "svg"); err != nil {
		t.Fatal(err)
	}
	texts, _ := svgTexts(t, buf.Bytes())
	for _, w := range []string{"Roofline: cuda:0 · Test GPU", "Roofline: opencl:0:0 · Test CPU", "fp32 peak 50000 GFLOP/s", "fp64 peak 25000 GFLOP/s",
		"copy 2000 GB/s × FLOP/byte", "fp32 peak 300 GFLOP/s", "stream/triad/float32", "gemm/nn/float32", "reduce/sum/float32",
		"arithmetic intensity (FLOP/byte, log scale)", "stream/copy/float32 (80% of copy)"} {
		if !strings.Contains(texts, w) {
			t.Errorf("no %q in %q", w, texts)
		}
	}
	if strings.Contains(texts, "fp64 peak 0") {
		t.Error("a roof for the CPU's missing fp64")
	}
	buf.Reset()
	if err := Roofline(&buf, rep, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil || img.Bounds().Dx() != 1100 || img.Bounds().Dy() < 1200 {
		t.Errorf("PNG of two rooflines: %v, %v", img.Bounds(), err)
	}
	// No device with ceilings: an error.
	rep.Devices = rep.Devices[2:]
	if err := Roofline(io.Discard, rep, "svg"); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("no ceilings: %v", err)
	}
}

// TestPlaceLabel places labels around one point until its first ring is full: none
// overlaps another, and the later ones go farther out.
func TestPlaceLabel(t *testing.T) {
	bounds := vg.Rectangle{Max: vg.Point{X: 400, Y: 300}}
	var taken []vg.Rectangle
	pt := vg.Point{X: 100, Y: 100}
	farOnes := 0
	for range 12 {
		pos, sty, far := placeLabel(pt, "12", taken, bounds)
		r := textRect(sty, pos, "12")
		for _, o := range taken {
			if overlap(r, o) > 0 {
				t.Fatalf("label %v overlaps %v", r, o)
			}
		}
		if r.Min.X < 0 || r.Min.Y < 0 {
			t.Fatalf("label %v out of bounds", r)
		}
		if far {
			farOnes++
		}
		taken = append(taken, r)
	}
	if farOnes == 0 {
		t.Error("twelve labels around one point, all on the first ring")
	}
}

// TestSavePlotKeepsOldFileOnError renders a chart that cannot be drawn (a report without
// results) over an existing chart: the old chart must stay as it was.
func TestSavePlotKeepsOldFileOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chart.svg")
	if err := os.WriteFile(path, []byte("<svg>old</svg>"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := &bench.Report{Schema: bench.SchemaVersion, Devices: []bench.DeviceReport{{Backend: "opencl"}}}
	if err := SavePlot(path, empty, ""); err == nil {
		t.Fatal("a chart of no results was drawn")
	}
	if b, _ := os.ReadFile(path); string(b) != "<svg>old</svg>" {
		t.Fatalf("the old chart was replaced by %q", b)
	}
}
