package bench

import (
	"context"
	"strings"
	"testing"

	_ "github.com/prism-compute/prism/cl"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/suite"
)

// TestRunSplitsSaysPlan: every split case of the report says where its data lives and
// what the planner chose, in the planner's words, on two OpenCL devices (the first opened
// twice where there is one).
func TestRunSplitsSaysPlan(t *testing.T) {
	infos, err := engine.Devices(t.Context(), "opencl")
	if err != nil || len(infos) == 0 {
		t.Skipf("no OpenCL device: %v", err)
	}
	ids := []string{"opencl:" + infos[0].ID, "opencl:" + infos[len(infos)-1].ID}
	var devs []*engine.Device
	for _, id := range ids {
		d, err := engine.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		devs = append(devs, d)
	}
	ops, err := suite.Match("map/axpy/float32")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunSplits(t.Context(), SplitConfig{Ops: ops, Sizes: []int{1 << 14}, Count: 2, Warmup: 1}, devs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Splits) != 1 {
		t.Fatalf("%d split cases, want 1", len(rep.Splits))
	}
	s := rep.Splits[0]
	if s.Placement != PlacementHost {
		t.Errorf("placement %q, want %q", s.Placement, PlacementHost)
	}
	if !strings.HasPrefix(s.Plan, "one device: ") && !strings.HasPrefix(s.Plan, "split over 2 devices") {
		t.Errorf("plan %q: want the planner's choice", s.Plan)
	}
	used := 0
	for _, sh := range s.Shares {
		if sh.Units > 0 {
			used++
		}
		if sh.Alone <= 0 || sh.Predicted <= 0 {
			t.Errorf("share %+v: want the predicted times", sh)
		}
	}
	if strings.HasPrefix(s.Plan, "one device: ") != (used == 1) {
		t.Errorf("plan %q with %d devices used", s.Plan, used)
	}
	t.Logf("%s: %s", s.Case, s.Plan)
}
