package bench

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
)

func TestBudgetCounts(t *testing.T) {
	cfg := Config{Count: 10, Warmup: 2}
	for _, c := range []struct {
		b             Budget
		one           time.Duration
		warmup, count int
	}{
		{Budget{}, time.Second, 2, 10},                      // no budget: the config's
		{QuickBudget, 0, 2, 10},                             // unknown pace
		{QuickBudget, time.Millisecond, 1, 10},              // fast: all 10 fit in 150 ms; the pace run was a warm-up
		{QuickBudget, 20 * time.Millisecond, 0, 7},          // 150/20: 7 runs, no warm-up after a long run
		{QuickBudget, 100 * time.Millisecond, 0, 3},         // never fewer than 3
		{CPUBudget, 300 * time.Millisecond, 0, 6},           // 2 s / 300 ms
		{Budget{MaxRun: 1, CaseTime: 1}, time.Second, 0, 3}, // the floor again
		{Budget{MaxRun: 1, CaseTime: time.Hour}, 1, 1, 10},  // a budget never raises the count
	} {
		w, n := c.b.counts(cfg, c.one)
		if w != c.warmup || n != c.count {
			t.Errorf("%+v with a run of %v: warm-up %d, count %d; want %d, %d", c.b, c.one, w, n, c.warmup, c.count)
		}
	}
	if _, n := QuickBudget.counts(Config{Count: 2, Warmup: 0}, time.Second); n != 2 {
		t.Errorf("--count 2 became %d: the floor of 3 must not exceed the count asked for", n)
	}
}

func TestBudgetQuarters(t *testing.T) {
	b := Budget{MaxRun: 25 * time.Millisecond}
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{26 * time.Millisecond, 1}, {100 * time.Millisecond, 1}, {101 * time.Millisecond, 2}, {400 * time.Millisecond, 2}, {time.Second, 3}} {
		if got := b.quarters(c.d); got != c.want {
			t.Errorf("a run of %v over %v: %d quarterings, want %d", c.d, b.MaxRun, got, c.want)
		}
	}
}

func TestStartSizeAndBudgetFor(t *testing.T) {
	op := kernels.Op{Name: "x/y/float32", DefaultSize: 1 << 24, QuickSize: 1 << 20}
	for _, c := range []struct {
		kind  engine.Kind
		quick bool
		want  int
	}{{engine.KindGPU, false, 1 << 24}, {engine.KindGPU, true, 1 << 20}, {engine.KindCPU, false, 1 << 20}, {engine.KindCPU, true, 1 << 20}} {
		if got := StartSize(op, c.kind, c.quick); got != c.want {
			t.Errorf("StartSize(%v, quick %v) = %d, want %d", c.kind, c.quick, got, c.want)
		}
	}
	for _, c := range []struct {
		cfg  Config
		kind engine.Kind
		want Budget
	}{
		{Config{}, engine.KindGPU, Budget{}},
		{Config{}, engine.KindCPU, CPUBudget},
		{Config{Quick: true}, engine.KindGPU, QuickBudget},
		{Config{Quick: true, Sizes: []int{64}}, engine.KindCPU, Budget{}}, // sizes given: run as given
		{Config{Sizes: []int{64}}, engine.KindCPU, Budget{}},
	} {
		if got := c.cfg.BudgetFor(c.kind); got != c.want {
			t.Errorf("BudgetFor(%v) with quick %v, sizes %v = %+v, want %+v", c.kind, c.cfg.Quick, c.cfg.Sizes, got, c.want)
		}
	}
}

func TestFittedStart(t *testing.T) {
	f := newFitted()
	a := kernels.Op{Name: "gemm/nn/float32", Family: "gemm"}
	b := kernels.Op{Name: "gemm/nt/float32", Family: "gemm"}
	if s, why := f.start("d0", a, 1<<16); s != 1<<16 || why != "" {
		t.Errorf("first start %d (%q), want the size itself", s, why)
	}
	f.record("d0", a, 1<<12, 2) // quartered twice on d0
	if s, why := f.start("d0", b, 1<<16); s != 1<<12 || !strings.Contains(why, "family") {
		t.Errorf("the family's next op starts at %d (%q), want 4K for the family", s, why)
	}
	if s, why := f.start("d1", b, 1<<16); s != 1<<16 || why != "" {
		t.Errorf("another device starts %s at %d (%q): the family's quarterings are per device", b.Name, s, why)
	}
	if s, why := f.start("d1", a, 1<<16); s != 1<<12 || !strings.Contains(why, "slowest device") {
		t.Errorf("another device starts %s at %d (%q), want the smallest size chosen", a.Name, s, why)
	}
	f.record("d1", a, 1<<14, 1) // a larger size does not replace the smallest
	if f.smallest(a) != 1<<12 {
		t.Errorf("smallest %d, want 4K", f.smallest(a))
	}
}

// TestRunFitsCases runs quick cases with no sizes given under a budget no run can meet:
// every case is quartered as far as it goes (1/64 of its quick size), still verified and
// timed at least minCount times, with a note that says so, at the same size on every
// device (PoCL and Rusticl here), and the summary counts them. Every device builds ahead,
// with its vendor library (CLBlast's sum, where it loads).
func TestRunFitsCases(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	ctx := context.Background()
	var devs []*engine.Device
	for _, id := range ids[:min(2, len(ids))] {
		dev, err := engine.Open(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		devs = append(devs, dev)
	}
	saved, savedSlow := QuickBudget, slowBuild
	QuickBudget = Budget{MaxRun: time.Nanosecond, CaseTime: time.Nanosecond}
	slowBuild = 0 // every device builds ahead
	defer func() { QuickBudget, slowBuild = saved, savedSlow }()
	ops, err := suite.Match("stream/triad/float32", "reduce/sum/float32", "stream/dot/float64")
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	rep, err := Run(ctx, Config{Ops: ops, Quick: true, Count: 5, Warmup: 1, Seed: 3, Vendor: true, Progress: NewProgress(&progress, false)}, devs)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Check(); err != nil {
		t.Fatal(err)
	}
	for _, d := range rep.Devices {
		if d.Budget == nil || *d.Budget != QuickBudget {
			t.Errorf("%s: budget %+v recorded, want %+v", d.Device.ID, d.Budget, QuickBudget)
		}
		if len(d.Results) != len(ops) {
			t.Fatalf("%s: %d results for %d ops", d.Device.ID, len(d.Results), len(ops))
		}
		for i, r := range d.Results {
			want := ops[i].QuickSize >> (2 * maxShrink)
			if r.Vendor != nil && (!r.Vendor.OK() || r.Vendor.Size != r.Size) {
				t.Errorf("%s %s: vendor ok %v at %d, want verified at the case's size %d", d.Device.ID, r.Case, r.Vendor.OK(), r.Vendor.Size, r.Size)
			}
			cpu := d.Device.Kind == engine.KindCPU // --quick leaves out a CPU's costly baselines only
			if left := strings.HasPrefix(r.NoVendor, "left out by --quick"); r.Skipped == "" && left != (cpu && r.Case == "stream/dot/float64") {
				t.Errorf("%s %s: no vendor %q: --quick on a CPU keeps the baseline of reduce/sum/float32 and leaves out stream/dot/float64's", d.Device.ID, r.Case, r.NoVendor)
			}
			if r.Skipped != "" {
				continue // Rusticl's float64
			}
			if !r.OK() || r.Size != want || r.Stats.Runs != minCount || r.SizeNote == "" || !strings.Contains(r.SizeNote, FormatSize(ops[i].QuickSize)) {
				t.Errorf("%s %s: ok %v, size %d (want %d), %d runs (want %d), note %q", d.Device.ID, r.Case, r.OK(), r.Size, want, r.Stats.Runs, minCount, r.SizeNote)
			}
		}
	}
	out := progress.String()
	want := rep.Summary().String()
	if !strings.Contains(out, "bench: "+want+" in ") || !strings.Contains(want, "verified") {
		t.Errorf("progress does not end with the summary %q:\n%s", want, out)
	}
	checkProgressCount(t, out)
}

// checkProgressCount checks that a run's plain progress lines count their steps up to the
// total they announce, and reach it.
func checkProgressCount(t *testing.T, out string) {
	t.Helper()
	last, total := 0, 0
	for _, m := range regexp.MustCompile(`\[(\d+)/(\d+) `).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		total, _ = strconv.Atoi(m[2])
		if n != last+1 || n > total {
			t.Errorf("progress step %d/%d after step %d:\n%s", n, total, last, out)
			return
		}
		last = n
	}
	if last == 0 || last != total {
		t.Errorf("progress ended at step %d of %d:\n%s", last, total, out)
	}
}

// TestStepsBefore checks the steps a device's progress counts before its cases: the four
// every device takes and the tensor peaks its plan measures.
func TestStepsBefore(t *testing.T) {
	for _, c := range []struct {
		backend string
		info    engine.DeviceInfo
		want    int
	}{
		{"cuda", engine.DeviceInfo{ComputeCapability: 90}, 9},
		{"cuda", engine.DeviceInfo{ComputeCapability: 80}, 8},
		{"cuda", engine.DeviceInfo{ComputeCapability: 75}, 4},
		{"opencl", engine.DeviceInfo{Platform: "NVIDIA CUDA", ComputeCapability: 90}, 7},
		{"opencl", engine.DeviceInfo{Platform: "Portable Computing Language", Kind: engine.KindCPU}, 4},
	} {
		if got := stepsBefore(c.backend, c.info); got != c.want {
			t.Errorf("stepsBefore(%s, sm_%d %q) = %d, want %d", c.backend, c.info.ComputeCapability, c.info.Platform, got, c.want)
		}
	}
}

// TestVendorLeftOut checks which cases --quick leaves without a vendor baseline: on a CPU,
// in a whole-suite run, all but one float32 case per vendor routine.
func TestVendorLeftOut(t *testing.T) {
	vendor := []kernels.Variant{{Name: "portable"}, {Name: "CLBlast", Vendor: true}}
	gemm, dgemm := kernels.Op{Name: "gemm/nn/float32", Variants: vendor}, kernels.Op{Name: "gemm/nn/float64", Variants: vendor}
	triad := kernels.Op{Name: "stream/triad/float64", Variants: vendor[:1]}
	for _, c := range []struct {
		cfg  Config
		kind engine.Kind
		op   kernels.Op
		left bool
	}{
		{Config{Quick: true}, engine.KindCPU, dgemm, true},
		{Config{Quick: true}, engine.KindCPU, gemm, false},
		{Config{Quick: true}, engine.KindCPU, triad, false}, // no vendor routine: runVendor says so
		{Config{Quick: true}, engine.KindGPU, dgemm, false},
		{Config{}, engine.KindCPU, dgemm, false},
		{Config{Quick: true, Patterns: []string{"gemm"}}, engine.KindCPU, dgemm, false},
	} {
		if why := c.cfg.vendorLeftOut(c.kind, c.op); (why != "") != c.left {
			t.Errorf("quick %v, ops %q, %v, %s: left out %q, want %v", c.cfg.Quick, c.cfg.Patterns, c.kind, c.op.Name, why, c.left)
		}
	}
	for name := range quickVendorCases {
		if _, err := suite.Match(name); err != nil {
			t.Errorf("quickVendorCases names %s: %v", name, err)
		}
	}
}

// TestCaseLeftOut checks which cases --quick leaves out on a CPU in a whole-suite run: the
// emulated tensor-core GEMM types in every layout but nn.
func TestCaseLeftOut(t *testing.T) {
	op := func(name string) kernels.Op {
		ops, err := suite.Match(name)
		if err != nil || len(ops) != 1 {
			t.Fatalf("suite.Match(%q): %d ops, %v", name, len(ops), err)
		}
		return ops[0]
	}
	quick := Config{Quick: true}
	for _, c := range []struct {
		cfg  Config
		kind engine.Kind
		op   string
		left bool
	}{
		{quick, engine.KindCPU, "gemm/nt/float16", true},
		{quick, engine.KindCPU, "gemm/batched/float8e4m3", true},
		{quick, engine.KindCPU, "gemm/tn/tf32", true},
		{quick, engine.KindCPU, "gemm/nn/float16", false},
		{quick, engine.KindCPU, "gemm/nt/float32", false},
		{quick, engine.KindCPU, "gemm/batched/float32", false},
		{quick, engine.KindCPU, "attention/full/float16", false},
		{quick, engine.KindGPU, "gemm/nt/float16", false},
		{Config{}, engine.KindCPU, "gemm/nt/float16", false},
		{Config{Quick: true, Patterns: []string{"gemm"}}, engine.KindCPU, "gemm/nt/float16", false},
	} {
		why := c.cfg.caseLeftOut(c.kind, op(c.op))
		if (why != "") != c.left {
			t.Errorf("quick %v, ops %q, %v, %s: left out %q, want %v", c.cfg.Quick, c.cfg.Patterns, c.kind, c.op, why, c.left)
		}
		if r := SkipReason(why, "opencl:0:0"); why != "" && r != quickLeftOut {
			t.Errorf("the summary counts %q as %q, want %q", why, r, quickLeftOut)
		}
	}
	for typ := range quickEmulatedTypes {
		op("gemm/nn/" + typ) // every type named is one the suite has
	}
}

func TestSummary(t *testing.T) {
	rep := &Report{Devices: []DeviceReport{{
		Device: engine.DeviceInfo{ID: "opencl:1:0"},
		Results: []Result{
			{Case: "a", Verified: true, Stats: Stats{Runs: 3}},
			{Case: "b", Skipped: "kernels: opencl:1:0 has no fp64: unsupported"},
			{Case: "c", Skipped: "kernels: no variant of fused/axpy-exp/float64 runs on opencl:1:0 (portable needs fp64): unsupported"},
			{Case: "d", Skipped: "kernels: opencl:1:0 runs no CUDA C++: unsupported"},
			{Case: "e", Err: "kernels: gemm: differs", Mismatch: true},
			{Case: "f", Err: "setup: out of memory"},
		},
	}, {Device: engine.DeviceInfo{ID: "cuda:0"}, Err: "no context"}}}
	s := rep.Summary()
	if s.Cases != 6 || s.Verified != 1 || s.Failed != 3 || s.Mismatched != 1 || s.Skipped["no fp64"] != 2 || s.Skipped["the device runs no CUDA C++"] != 1 {
		t.Errorf("summary %+v", s)
	}
	want := "6 cases: 1 verified, 3 skipped (no fp64: 2, the device runs no CUDA C++: 1), 3 failed (1 differ from the reference)"
	if got := s.String(); got != want {
		t.Errorf("summary line\n %q, want\n %q", got, want)
	}
}

func TestProgressClock(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	p := NewProgress(&buf, false)
	p.now = func() time.Time { return now }
	p.begin(10)
	for i := range 5 {
		now = now.Add(10 * time.Second)
		p.step("dev", "case"+string(rune('a'+i)))
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// At the fifth step, 50 s have passed over 4 finished steps: 12.5 s a step, 6 to go.
	if got, want := lines[4], "dev: [5/10 0:50, ~1:15 left] casee"; got != want {
		t.Errorf("progress line %q, want %q", got, want)
	}
	if got, want := lines[0], "dev: [1/10 0:10] casea"; got != want {
		t.Errorf("first line %q, want %q (no estimate before 3 steps finished)", got, want)
	}
}

func TestFiguresText(t *testing.T) {
	r := Result{Figures: map[string]float64{"speedup": 1.04, "serial_ns": 2e6}, FiguresNA: map[string]string{"hidden_fraction": "no copy engine"}}
	if got, want := r.FiguresText(), "serial 2.00ms, speedup 1.04; hidden_fraction n/a (no copy engine)"; got != want {
		t.Errorf("FiguresText %q, want %q", got, want)
	}
	if got := (Result{}).FiguresText(); got != "" {
		t.Errorf("no figures: %q", got)
	}
}

// TestRememberedSizes: a run given the sizes an earlier run fitted (RememberedSizes) starts
// its cases there and says why, so that the two line up for compare and history.
func TestRememberedSizes(t *testing.T) {
	ctx := context.Background()
	dev := firstOpenCL(t)
	ops, err := suite.Match("stream/triad/float32", "reduce/sum/float32")
	if err != nil {
		t.Fatal(err)
	}
	saved := QuickBudget
	defer func() { QuickBudget = saved }()
	QuickBudget = Budget{MaxRun: time.Nanosecond, CaseTime: time.Nanosecond} // every case quartered
	first, err := Run(ctx, Config{Ops: ops, Quick: true, Count: 3, Warmup: 0, Seed: 3}, []*engine.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	sizes := RememberedSizes(first, true)
	if len(sizes) != len(ops) {
		t.Fatalf("RememberedSizes: %v, want the %d reduced cases", sizes, len(ops))
	}
	if RememberedSizes(first, false) != nil {
		t.Error("sizes of a --quick run remembered for a run without --quick")
	}
	QuickBudget = Budget{MaxRun: time.Hour, CaseTime: time.Millisecond} // nothing needs reducing
	second, err := Run(ctx, Config{Ops: ops, Quick: true, Count: 3, Warmup: 0, Seed: 3, Remembered: sizes}, []*engine.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range second.Devices[0].Results {
		want := first.Devices[0].Results[i].Size
		if !r.OK() || r.Size != want || !strings.Contains(r.SizeNote, "earlier run") {
			t.Errorf("%s: ok %v, size %d, note %q; want the earlier run's %d, said so", r.Case, r.OK(), r.Size, r.SizeNote, want)
		}
	}
	third, err := Run(ctx, Config{Ops: ops, Quick: true, Count: 3, Warmup: 0, Seed: 3}, []*engine.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range third.Devices[0].Results {
		if r.Size != ops[i].QuickSize {
			t.Errorf("%s without remembered sizes: size %d, want its quick size %d", r.Case, r.Size, ops[i].QuickSize)
		}
	}
}
