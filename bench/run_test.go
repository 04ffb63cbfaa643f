package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	_ "github.com/prism-compute/prism/cl"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels/suite"
)

// TestRunVerifiesAndTimes runs the stream cases at a small size on the first OpenCL device
// and checks that every case was verified and timed, and that the JSON round-trips.
func TestRunVerifiesAndTimes(t *testing.T) {
	ctx := context.Background()
	dev := firstOpenCL(t)
	size := 100_003
	if enginetest.Small() {
		size = 1001
	}
	ops, err := suite.Match("stream")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, Config{Ops: ops, Sizes: []int{size}, Quick: true, Count: 3, Warmup: 1, Seed: 7}, []*engine.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Check(); err != nil {
		t.Fatal(err)
	}
	d := rep.Devices[0]
	if d.Ceilings.CopyGBs <= 0 || d.Ceilings.CopyHow == "" {
		t.Errorf("copy ceiling %v GB/s by %q", d.Ceilings.CopyGBs, d.Ceilings.CopyHow)
	}
	if c := d.Ceilings; c.FP32GFLOPs <= 0 || c.PeakHow == "" || (d.Device.FP64 && c.FP64GFLOPs <= 0) {
		t.Errorf("peaks not measured: %+v", c)
	}
	if d.Telemetry.Available || d.Telemetry.Reason == "" {
		t.Errorf("telemetry %+v: want none on PoCL, with a reason", d.Telemetry)
	}
	if o := d.Overheads; o.FirstBuild <= 0 || o.SecondBuild <= 0 || o.LaunchAsync <= 0 || o.LaunchSync <= 0 {
		t.Errorf("overheads not measured: %+v", o)
	}
	if len(d.Results) != len(ops) {
		t.Fatalf("%d results for %d cases", len(d.Results), len(ops))
	}
	for _, r := range d.Results {
		if r.Skipped != "" {
			continue
		}
		if !r.Verified || r.Stats.Runs != 3 || r.Stats.Median <= 0 || r.Stats.Min > r.Stats.Median || r.Stats.Median > r.Stats.Max || r.GBs <= 0 ||
			r.Bound == "" || r.Fraction <= 0 || len(r.Stats.Samples) != 3 {
			t.Errorf("%s: verified %v, stats %+v, %v GB/s", r.Case, r.Verified, r.Stats, r.GBs)
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not parse: %v", err)
	}
	if back.Schema != SchemaVersion || back.Devices[0].Device.ID != dev.ID() || len(back.Devices[0].Results) != len(d.Results) {
		t.Errorf("JSON round trip lost data: %+v", back.Devices[0].Device)
	}
}

// TestCeilingFailureKeepsDevice makes the copy ceiling fail and checks that the device's
// cases still run and verify, that the report says why the ceiling is missing, and that the
// memory-bound cases say they have no roof.
func TestCeilingFailureKeepsDevice(t *testing.T) {
	ctx := context.Background()
	dev := firstOpenCL(t)
	saved := measureCopy
	defer func() { measureCopy = saved }()
	measureCopy = func(context.Context, Config, *engine.Queue) (float64, string, int64, error) {
		return 0, "", 0, errors.New("copy kernel: injected failure")
	}
	ops, err := suite.Match("stream/copy/float32")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, Config{Ops: ops, Sizes: []int{1001}, Quick: true, Count: 2, Seed: 7}, []*engine.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Check(); err != nil {
		t.Fatal(err)
	}
	d := rep.Devices[0]
	if d.Err != "" || !strings.Contains(d.Ceilings.CopyAbsent, "injected failure") || d.Ceilings.CopyGBs != 0 {
		t.Fatalf("device error %q, copy_absent %q, copy %v GB/s: want no device error and the ceiling missing with its reason", d.Err, d.Ceilings.CopyAbsent, d.Ceilings.CopyGBs)
	}
	if len(d.Results) != 1 || !d.Results[0].Verified || !strings.Contains(d.Results[0].RoofMissing, "copy ceiling missing") {
		t.Fatalf("results %+v: want one verified case whose roof is missing", d.Results)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize(durations(5, 1, 4, 2, 3))
	if s.Median != 3 || s.Min != 1 || s.Max != 5 || s.Runs != 5 {
		t.Errorf("odd: %+v", s)
	}
	if s := Summarize(durations(4, 1, 2, 3)); s.Median != 2 { // (2+3)/2 in integer ns
		t.Errorf("even: median %v, want 2", s.Median)
	}
}

// firstOpenCL opens the first OpenCL device (the test skips where there is none, or fails
// where PRISM_REQUIRE names opencl), closed when the test ends.
func firstOpenCL(t *testing.T) *engine.Device {
	t.Helper()
	dev, err := engine.Open(context.Background(), enginetest.DeviceIDs(t, "opencl")[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dev
}

// firstOpenCLQueue is firstOpenCL with a queue on the device, closed before it.
func firstOpenCLQueue(t *testing.T) (*engine.Device, *engine.Queue) {
	t.Helper()
	dev := firstOpenCL(t)
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return dev, q
}

func durations(ns ...int64) []time.Duration {
	out := make([]time.Duration, len(ns))
	for i, n := range ns {
		out[i] = time.Duration(n)
	}
	return out
}

// TestWarmupFloor times a small fill on the first OpenCL device: without a budget the
// warm-up goes on past --warmup's runs until warmupFloor has passed, and timeRuns says how
// many it ran; with a budget (--quick, a CPU's default sizes) it runs --warmup's alone, and
// --warmup 0 runs none.
func TestWarmupFloor(t *testing.T) {
	ctx := context.Background()
	dev, q := firstOpenCLQueue(t)
	buf, err := engine.NewBuffer[float32](dev, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	for _, c := range []struct {
		budget      Budget
		warmup      int
		floor       bool
		least, most int
	}{
		{Budget{}, 1, true, 2, 1 << 30}, // a fill takes far less than the floor: more runs
		{QuickBudget, 1, false, 1, 1},
		{Budget{}, 0, false, 0, 0},
	} {
		var calls []time.Time
		run := func(_ context.Context, q *engine.Queue) error {
			calls = append(calls, time.Now())
			return buf.Fill(q, 0, 1024, float32(len(calls)))
		}
		samples, warm, err := timeRuns(ctx, Config{Warmup: c.warmup, Count: 2, budget: c.budget}, q, run)
		if err != nil {
			t.Fatal(err)
		}
		if len(samples) != 2 || len(calls) != warm+2 || warm < c.least || warm > c.most {
			t.Errorf("%+v, warm-up %d: %d warm-up runs of %d calls, %d samples; want %d to %d warm-up runs and 2 samples",
				c.budget, c.warmup, warm, len(calls), len(samples), c.least, c.most)
			continue
		}
		if c.floor {
			if d := calls[warm].Sub(calls[0]); d < warmupFloor {
				t.Errorf("the first timed run came %v after the first warm-up run; want at least %v", d, warmupFloor)
			}
		}
	}
}
