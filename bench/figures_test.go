package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/suite"
)

// TestRooflineLinkAndLatency: a copy over the host link has no roof (the device's copy
// ceiling is not its ceiling), a pipeline over the link is judged against the compute peak
// alone, and a latency (a model of no work) gets no bound at all.
func TestRooflineLinkAndLatency(t *testing.T) {
	c := Ceilings{CopyGBs: 100, FP32GFLOPs: 1000}
	copyRes := Result{Type: "uint8", Bytes: 1 << 20, Link: true, GBs: 25}
	copyRes.roofline(c, 1<<30)
	if copyRes.Bound != BoundMemory || copyRes.Fraction != 0 || !strings.Contains(copyRes.RoofMissing, "host link") || copyRes.CacheResident {
		t.Errorf("copy over the link: bound %q, fraction %v, roof missing %q, cache-resident %v", copyRes.Bound, copyRes.Fraction, copyRes.RoofMissing, copyRes.CacheResident)
	}
	// 512 FLOPs a link byte: against the copy ceiling that would be a roof of 51200.
	pipe := Result{Type: "float32", Flops: 512 << 20, Bytes: 1 << 20, Link: true, GFLOPs: 500}
	pipe.roofline(c, 0)
	if pipe.Bound != BoundCompute || pipe.AttainableGFLOPs != 1000 || pipe.Fraction != 0.5 {
		t.Errorf("pipeline over the link: bound %q, attainable %v, fraction %v; want compute, 1000, 0.5", pipe.Bound, pipe.AttainableGFLOPs, pipe.Fraction)
	}
	lat := Result{Type: "uint8", Verified: true, Stats: Stats{Runs: 1, Median: time.Microsecond}}
	lat.roofline(c, 1<<30)
	if !lat.Latency() || lat.Bound != "" || lat.Fraction != 0 || lat.RoofMissing != "" {
		t.Errorf("latency: bound %q, fraction %v, roof missing %q", lat.Bound, lat.Fraction, lat.RoofMissing)
	}
}

// TestFormatFigures: names in order, nanoseconds as durations, the rest with three
// significant digits.
func TestFormatFigures(t *testing.T) {
	got := FormatFigures(map[string]float64{"speedup": 2.4567, "serial_ns": 12.3e6, "hidden_fraction": 0.8812})
	if want := "hidden_fraction 0.881, serial 12.30ms, speedup 2.46"; got != want {
		t.Errorf("FormatFigures = %q, want %q", got, want)
	}
	if f := finiteFigures(map[string]float64{"a": math.NaN(), "b": math.Inf(1)}); f != nil {
		t.Errorf("finiteFigures kept %v", f)
	}
}

// TestRunFiguresLinkLatency runs an overlap pipeline, a pinned copy and a pooled
// allocation on the first OpenCL device, and checks what reports make of them: the
// pipeline's figures (JSON and the table's figures lines), the copy's host link in the
// roof column, the allocation a latency without rate or roof, and no GB/s column for it in
// the benchstat output.
func TestRunFiguresLinkLatency(t *testing.T) {
	ctx := context.Background()
	dev := firstOpenCL(t)
	ops, err := suite.Match("overlap/q2/float32", "transfer/h2d-pinned/uint8", "alloc/pool/uint8")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, Config{Ops: ops, Sizes: []int{1000}, Quick: true, Count: 3, Warmup: 1, Seed: 7}, []*engine.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Check(); err != nil {
		t.Fatal(err)
	}
	res := map[string]Result{}
	for _, r := range rep.Devices[0].Results {
		res[r.Family] = r
	}
	ov := res["overlap"]
	for _, k := range []string{"serial_ns", "copy_in_ns", "compute_ns", "copy_out_ns", "hidden_fraction", "speedup"} {
		_, ok := ov.Figures[k]
		why, na := ov.FiguresNA[k]
		if ok == na || (na && why == "") {
			t.Errorf("overlap figures %v, not applicable %v: want %s in exactly one", ov.Figures, ov.FiguresNA, k)
		}
	}
	if _, na := ov.FiguresNA["hidden_fraction"]; na != (dev.Info().Kind == engine.KindCPU) {
		t.Errorf("overlap on %s (%v): hidden_fraction not applicable %v, want it so exactly on a CPU", dev.ID(), dev.Info().Kind, na)
	}
	if !ov.Link || ov.Bound != BoundCompute {
		t.Errorf("overlap: link %v, bound %q; want the link, compute-bound", ov.Link, ov.Bound)
	}
	if tr := res["transfer"]; !tr.Link || tr.GBs <= 0 || tr.Figures != nil {
		t.Errorf("transfer: link %v, %v GB/s, figures %v", tr.Link, tr.GBs, tr.Figures)
	}
	if al := res["alloc"]; !al.Latency() || al.Bound != "" || al.Stats.Median <= 0 {
		t.Errorf("alloc: latency %v, bound %q, median %v", al.Latency(), al.Bound, al.Stats.Median)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, r := range back.Devices[0].Results {
		if want := res[r.Family]; len(r.Figures) != len(want.Figures) || r.Link != want.Link {
			t.Errorf("%s: JSON round trip gave figures %v and link %v, want %v and %v", r.Case, r.Figures, r.Link, want.Figures, want.Link)
		}
	}
}
