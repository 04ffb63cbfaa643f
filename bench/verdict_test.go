package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Ceilings and overheads measured on an H100 host (docs/results/2026-11-21-h100-suite-bench.json):
// the H100 through CUDA, with its 50 MiB L2, and PoCL on the host's CPU.
var (
	h100Ceilings  = Ceilings{CopyGBs: 2820.648285137862, FP32GFLOPs: 66193.02946163694, FP64GFLOPs: 33545.26151499477}
	h100Overheads = Overheads{LaunchAsync: 34618, LaunchSync: 57349}
	h100Cache     = int64(50 << 20)
	poclCeilings  = Ceilings{CopyGBs: 70.07269368859987, FP32GFLOPs: 372.5299037538463, FP64GFLOPs: 334.48654289256785}
	poclOverheads = Overheads{LaunchAsync: 39446, LaunchSync: 68830}
)

// timedCase returns a verified result of typ that did flops and bytes in median, its rates
// from them, with one launch recorded.
func timedCase(typ string, flops, bytes float64, median time.Duration) Result {
	s := median.Seconds()
	return Result{Case: "test/op/" + typ, Type: typ, Flops: flops, Bytes: bytes, GBs: bytes / s / 1e9, GFLOPs: flops / s / 1e9,
		Verified: true, Stats: Stats{Runs: 5, Median: median, Min: median, Max: median},
		Launches: []Launch{{Kernel: "k", Block: []int{256}}}}
}

// judged runs the roofline and the verdict of res on a device, as runCase does.
func judged(res Result, c Ceilings, o Overheads, cache int64, timing string) Result {
	if res.OK() {
		res.roofline(c, cache)
	}
	res.judge(c, o, cache, timing)
	return res
}

func TestVerdict(t *testing.T) {
	triad := 3 * 4 * float64(64<<20) // stream/triad/float32 at 64M elements: 768 MiB
	// 768 MiB at 2600 GB/s on the H100: 92% of its copy roof.
	triadH100 := time.Duration(triad / 2600e9 * 1e9)
	gemm := func(n float64) (float64, float64) { return 2 * n * n * n, 3 * 4 * n * n }
	gf, gb := gemm(4096)
	// 4096^3 GEMM at 25 TFLOP/s: 38% of the H100's fp32 peak.
	gemmH100 := time.Duration(gf / 25000e9 * 1e9)
	alloc := Result{Case: "alloc/pool/uint8", Type: "uint8", Verified: true, Stats: Stats{Runs: 5, Median: 12 * time.Microsecond, Min: 11 * time.Microsecond}}
	launches := Result{Case: "launch/async/uint32", Type: "uint32", Verified: true, Stats: Stats{Runs: 5, Median: 230 * time.Microsecond},
		Figures: map[string]float64{"per_launch_ns": 2300}}
	graph := Result{Case: "launch/graph/uint32", Type: "uint32", Verified: true, Stats: Stats{Runs: 5, Median: 16 * time.Microsecond},
		Figures: map[string]float64{"per_kernel_ns": 800}}
	link := timedCase("uint8", 0, 256<<20, 10*time.Millisecond)
	link.Link = true
	bf16 := timedCase("bfloat16", gf, 3*2*4096*4096, 2*time.Millisecond)
	h100Launch := 2 * h100Overheads.LaunchAsync // the launch-bound boundary of one launch
	small := timedCase("float32", 2*float64(4<<10), 3*4*float64(4<<10), h100Launch)
	twoKernels := small
	twoKernels.Launches = append(twoKernels.Launches, Launch{Kernel: "k2", Block: []int{256}})
	twoKernels.Stats.Median, twoKernels.Stats.Min = 3*h100Overheads.LaunchAsync, 3*h100Overheads.LaunchAsync
	// PoCL, 100 µs a run: above 2 async launches (78.9 µs) but below 2 round trips (137.7 µs).
	poclRun := timedCase("float32", 2*float64(64<<10), 3*4*float64(64<<10), 100*time.Microsecond)
	// 24 MiB in 100 µs on PoCL is 252 GB/s, far above its DRAM copy roof: its L3 serves it.
	cached := timedCase("float32", 0, 24<<20, 100*time.Microsecond)
	failed := small
	failed.Err = "opencl: out of resources"
	skipped := Result{Case: "stream/triad/float64", Skipped: "the device has no fp64"}
	invalid := small
	invalid.Invalid = InvalidPrefix + "2 of 5 device times are not positive"
	for _, tc := range []struct {
		name   string
		res    Result
		c      Ceilings
		o      Overheads
		cache  int64
		timing string
		kind   string
		text   string
	}{
		{"failed", failed, h100Ceilings, h100Overheads, h100Cache, TimingEvents, "", ""},
		{"skipped", skipped, h100Ceilings, h100Overheads, h100Cache, TimingEvents, "", ""},
		{"invalid", invalid, h100Ceilings, h100Overheads, h100Cache, TimingEvents, "", ""},
		{"latency", alloc, h100Ceilings, h100Overheads, h100Cache, TimingEvents, VerdictLatency, "latency: 12.0µs per run"},
		{"launches", launches, h100Ceilings, h100Overheads, h100Cache, TimingEvents, VerdictLatency, "latency: 2.3µs per launch (230.0µs per run)"},
		{"graph", graph, h100Ceilings, h100Overheads, h100Cache, TimingEvents, VerdictLatency, "latency: 0.8µs per kernel in a replayed graph (16.0µs per run)"},
		{"host link", link, h100Ceilings, h100Overheads, h100Cache, TimingEvents, VerdictLink,
			"host link: 26.8 GB/s across the host-device link, which no ceiling here measures"},
		{"memory near the limit", timedCase("float32", 2*float64(64<<20), triad, triadH100), h100Ceilings, h100Overheads, h100Cache, TimingEvents,
			VerdictMemory, "memory-bound at 92% of copy: near the limit"},
		{"compute far from the limit", timedCase("float32", gf, gb, gemmH100), h100Ceilings, h100Overheads, h100Cache, TimingEvents,
			VerdictCompute, "compute-bound at 38% of the fp32 FMA peak: far from the limit"},
		{"compute fp64 room left", timedCase("float64", gf, 2*gb, time.Duration(gf/20000e9*1e9)), h100Ceilings, h100Overheads, h100Cache, TimingEvents,
			VerdictCompute, "compute-bound at 60% of the fp64 FMA peak: room left"},
		{"launch-bound at the boundary", small, h100Ceilings, h100Overheads, h100Cache, TimingEvents,
			VerdictLaunch, "launch-bound: 69.2µs a run, 1 launch costs 34.6µs; below ~93 MiB the fixed cost dominates"},
		{"two kernels, two launches", twoKernels, h100Ceilings, h100Overheads, h100Cache, TimingEvents,
			VerdictLaunch, "launch-bound: 103.9µs a run, 2 launches cost 69.2µs; below ~186 MiB the fixed cost dominates"},
		{"launch-bound without a copy roof", small, Ceilings{FP32GFLOPs: 66193, CopyAbsent: "opencl: out of memory"}, h100Overheads, h100Cache, TimingEvents,
			VerdictLaunch, "launch-bound: 69.2µs a run, 1 launch costs 34.6µs; the fixed cost dominates"},
		{"device events: 2 async launches", poclRun, poclCeilings, poclOverheads, 0, TimingEvents,
			VerdictMemory, "memory-bound at 11% of copy: far from the limit"},
		{"host clock: the run waits for its launch", poclRun, poclCeilings, poclOverheads, 0, TimingHost,
			VerdictLaunch, "launch-bound: 100.0µs a run, 1 launch costs 68.8µs; below ~5 MiB the fixed cost dominates"},
		{"no overheads: no launch verdict", small, h100Ceilings, Overheads{Absent: "opencl: build failed"}, h100Cache, TimingEvents,
			VerdictMemory, "memory-bound at 0% of copy: far from the limit"},
		{"cache-resident", cached, poclCeilings, poclOverheads, 32 << 20, TimingEvents,
			VerdictCache, "cache-resident: working set 24 MiB fits in the 32 MiB last-level cache; 359% of the DRAM copy roof"},
		{"above the roof, no cache reported", cached, poclCeilings, poclOverheads, 0, TimingEvents,
			VerdictMemory, "memory-bound at 359% of copy: above the measured roof"},
		{"no ceiling for bfloat16", bf16, h100Ceilings, h100Overheads, h100Cache, TimingEvents,
			VerdictNone, "no verdict: no ceiling measures bfloat16 arithmetic"},
		{"fp32 peak missing", timedCase("float32", gf, gb, gemmH100), Ceilings{CopyGBs: 2820.6, FP32Absent: "cuda: launch failed"}, h100Overheads, h100Cache, TimingEvents,
			VerdictNone, "no verdict: fp32 peak missing: cuda: launch failed"},
		{"no ceilings measured", timedCase("float32", 2*float64(64<<20), triad, triadH100), Ceilings{}, Overheads{}, 0, TimingEvents,
			VerdictNone, "no verdict: the device has no measured ceilings"},
		{"ceilings not valid", timedCase("float32", 2*float64(64<<20), triad, triadH100), Ceilings{Invalid: "copy: buffer copy: 2 of 2 device times are not positive"}, h100Overheads, 0, TimingEvents,
			VerdictNone, "no verdict: the device's ceilings are not valid measurements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := judged(tc.res, tc.c, tc.o, tc.cache, tc.timing)
			if res.Verdict.Kind != tc.kind || res.Verdict.Text != tc.text {
				t.Errorf("verdict %q: %q; want %q: %q", res.Verdict.Kind, res.Verdict.Text, tc.kind, tc.text)
			}
			if res.Verdict.IsZero() != (tc.kind == "") {
				t.Errorf("IsZero %v for kind %q", res.Verdict.IsZero(), tc.kind)
			}
		})
	}
}

// TestVerdictLaunchBoundary: launch-bound up to launchBoundFactor times the fixed cost, and
// not a nanosecond beyond.
func TestVerdictLaunchBoundary(t *testing.T) {
	for _, tc := range []struct {
		median time.Duration
		kind   string
	}{
		{launchBoundFactor * h100Overheads.LaunchAsync, VerdictLaunch},
		{launchBoundFactor*h100Overheads.LaunchAsync + 1, VerdictMemory},
		{h100Overheads.LaunchAsync / 2, VerdictLaunch},
	} {
		res := judged(timedCase("float32", 0, 1<<20, tc.median), h100Ceilings, h100Overheads, h100Cache, TimingEvents)
		if res.Verdict.Kind != tc.kind {
			t.Errorf("median %v against 1 launch of %v: %q (%s); want %q", tc.median, h100Overheads.LaunchAsync, res.Verdict.Kind, res.Verdict.Text, tc.kind)
		}
	}
}

// TestVerdictCountsLaunches: a run that launches one kernel several times pays each
// launch: 4 launches of one kernel at 2x their fixed cost are launch-bound, where the one
// entry counted once would not be.
func TestVerdictCountsLaunches(t *testing.T) {
	res := timedCase("float32", 0, 1<<20, 2*4*h100Overheads.LaunchAsync)
	res.Launches = []Launch{{Kernel: "pass", Block: []int{256}, Count: 4}}
	res = judged(res, h100Ceilings, h100Overheads, h100Cache, TimingEvents)
	if res.Verdict.Kind != VerdictLaunch || !strings.Contains(res.Verdict.Text, "4 launches cost") {
		t.Errorf("4 launches of one kernel: %q (%s); want launch-bound, 4 launches", res.Verdict.Kind, res.Verdict.Text)
	}
}

func TestQualify(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "far from the limit"},
		{0.4999, "far from the limit"},
		{0.5, "room left"},
		{0.7999, "room left"},
		{0.8, "near the limit"},
		{1.0, "near the limit"},
		{1.1, "near the limit"},
		{1.1001, "above the measured roof"},
	} {
		if got := qualify(tc.f); got != tc.want {
			t.Errorf("qualify(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// TestVerdictJSON: a verdict is written as an object and read back as written; a report
// from before verdicts gets them on read from its ceilings and overheads, its vendor
// baselines too; a result read as invalid has none, whatever the file says.
func TestVerdictJSON(t *testing.T) {
	triad := timedCase("float32", 2*float64(64<<20), 3*4*float64(64<<20), 300*time.Millisecond)
	vendor := timedCase("float32", 2*float64(64<<20), 3*4*float64(64<<20), 200*time.Millisecond)
	triad.Vendor = &vendor
	zero := timedCase("float32", 2*float64(64<<20), 3*4*float64(64<<20), 300*time.Millisecond)
	zero.Stats = Summarize([]time.Duration{0, 0, 0})
	zero.Verdict = Verdict{VerdictMemory, "memory-bound at 99% of copy: near the limit"}
	failed := Result{Case: "test/op/float32", Err: "opencl: out of resources"}
	d := DeviceReport{Ceilings: poclCeilings, Overheads: poclOverheads, Results: []Result{triad, zero, failed}}
	d.Device.ID = "opencl:0:0"
	for i := range d.Results[:1] {
		d.Results[i].roofline(d.Ceilings, 0)
		d.Results[i].Vendor.roofline(d.Ceilings, 0)
	}
	rep := &Report{Schema: SchemaVersion, Devices: []DeviceReport{d}}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"verdict"`); n != 1 {
		t.Errorf("a report of no verdicts but one written with %d \"verdict\" fields; want 1 (the zero verdict left out)", n)
	}
	got, err := ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	rs := got.Devices[0].Results
	if want := (Verdict{VerdictMemory, "memory-bound at 4% of copy: far from the limit"}); rs[0].Verdict != want {
		t.Errorf("verdict on read: %+v; want %+v", rs[0].Verdict, want)
	}
	if want := (Verdict{VerdictMemory, "memory-bound at 6% of copy: far from the limit"}); rs[0].Vendor == nil || rs[0].Vendor.Verdict != want {
		t.Errorf("vendor baseline's verdict on read: %+v; want %+v", rs[0].Vendor, want)
	}
	if !rs[1].Verdict.IsZero() || rs[1].Invalid == "" {
		t.Errorf("a result of zero times read with verdict %+v, invalid %q; want none, invalid", rs[1].Verdict, rs[1].Invalid)
	}
	if !rs[2].Verdict.IsZero() {
		t.Errorf("a failed result read with verdict %+v", rs[2].Verdict)
	}
	// A verdict written is read as it is, not judged again.
	var doc map[string]any
	if err := json.Unmarshal(mustJSON(t, got), &doc); err != nil {
		t.Fatal(err)
	}
	res0 := doc["devices"].([]any)[0].(map[string]any)["results"].([]any)[0].(map[string]any)
	res0["verdict"] = map[string]any{"kind": "memory", "text": "as written"}
	raw, _ := json.Marshal(doc)
	again, err := ReadReport(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if v := again.Devices[0].Results[0].Verdict; v.Text != "as written" {
		t.Errorf("a written verdict read as %+v", v)
	}
}

func mustJSON(t *testing.T, r *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
