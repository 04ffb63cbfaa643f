package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/suite"
)

// TestRunCaseLaunches runs stream/triad on the first OpenCL device and checks that the
// result records the kernel it launched, with its block and the attributes OpenCL reports,
// and no occupancy (OpenCL cannot tell); and that the JSON leaves out what is not
// reported.
func TestRunCaseLaunches(t *testing.T) {
	ctx := context.Background()
	_, q := firstOpenCLQueue(t)
	op, err := suite.Lookup("stream/triad/float32")
	if err != nil {
		t.Fatal(err)
	}
	res := RunCase(ctx, Config{Count: 2, Warmup: 1, Seed: 7}, q, op, 4096, "")
	if !res.OK() {
		t.Fatalf("%+v", res)
	}
	if len(res.Launches) != 1 {
		t.Fatalf("launches %+v; want the triad kernel", res.Launches)
	}
	l := res.Launches[0]
	if l.Kernel == "" || len(l.Block) != 1 || l.Block[0] <= 0 || l.Block[0] > l.MaxWorkGroupSize || l.PreferredMultiple <= 0 {
		t.Errorf("launch %+v: want the kernel's name, its 1-D block within its limit, its multiple", l)
	}
	if l.ActiveBlocks != 0 || l.Occupancy != 0 || l.Limiter != "" || l.Registers != 0 {
		t.Errorf("launch %+v: OpenCL reports no registers or occupancy", l)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"occupancy", "limiter", "registers", "active_blocks_per_sm", "dynamic_shared_bytes"} {
		if strings.Contains(string(b), `"`+absent+`"`) {
			t.Errorf("%s: %q should be left out", b, absent)
		}
	}
	t.Logf("%s", b)
}

// TestLaunchesOf checks that launches differing only in their global size are one, that
// another block or dynamic size is another, in the order of first launch, and that the
// block keeps the range's dimensions.
func TestLaunchesOf(t *testing.T) {
	dev := firstOpenCL(t)
	prog, err := dev.Build(`__kernel void a(__global float *x) { x[get_global_id(0)] = 0; }
__kernel void b(__global float *x) { x[get_global_id(1) * get_global_size(0) + get_global_id(0)] = 1; }`)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	ka, err := prog.Kernel("a")
	if err != nil {
		t.Fatal(err)
	}
	defer ka.Close()
	kb, err := prog.Kernel("b")
	if err != nil {
		t.Fatal(err)
	}
	defer kb.Close()
	notes := []engine.LaunchNote{
		{Kernel: ka, Range: engine.Range1D(1024, 64)},
		{Kernel: kb, Range: engine.Range2D(64, 64, 8, 4)},
		{Kernel: ka, Range: engine.Range1D(4096, 64)}, // another global size: the same
		{Kernel: ka, Range: engine.Range1D(4096, 32)},
		{Kernel: nil},
	}
	got, err := LaunchesOf(notes)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, l := range got {
		blocks = append(blocks, l.Kernel+" "+l.BlockString())
	}
	if want := "a 64, b 8x4, a 32"; strings.Join(blocks, ", ") != want {
		t.Errorf("launches %q; want %q", strings.Join(blocks, ", "), want)
	}
	// The entry of a 64 stands for its two launches: four in all, the nil note none.
	if len(got) == 3 && (got[0].Count != 2 || got[1].Count != 1 || launchCount(got) != 4) {
		t.Errorf("counts %d, %d; %d launches in all; want 2, 1 and 4", got[0].Count, got[1].Count, launchCount(got))
	}
	// A report written before launches were counted: each entry once.
	if n := launchCount([]Launch{{Kernel: "a"}, {Kernel: "b"}}); n != 2 {
		t.Errorf("uncounted entries: %d launches, want 2", n)
	}
	if got, err := LaunchesOf(nil); got != nil || err != nil {
		t.Errorf("no notes: %v, %v", got, err)
	}
}
