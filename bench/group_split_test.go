package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/prism-compute/prism/cl"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
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
	ops, err := suite.Match("map/axpy/float32", "sort/keys/float32", "reduce/argmin/float32")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunSplits(t.Context(), SplitConfig{Ops: ops, Sizes: []int{1 << 14}, Count: 2, Warmup: 1}, devs)
	if err != nil {
		t.Fatal(err)
	}
	// map/axpy and sort/keys: a case on host data, then one on sharded data;
	// reduce/argmin (no split on sharded data): its host case alone.
	var got []string
	for _, s := range rep.Splits {
		got = append(got, s.Case+" "+s.Placement)
	}
	want := []string{"map/axpy/float32 host", "map/axpy/float32 sharded", "reduce/argmin/float32 host", "sort/keys/float32 host", "sort/keys/float32 sharded"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("split cases %q, want %q", got, want)
	}
	for _, s := range rep.Splits {
		if !s.Verified {
			t.Errorf("%s %s: not verified: %s", s.Case, s.Placement, s.Err)
		}
		if !strings.HasPrefix(s.Plan, "one device: ") && !strings.HasPrefix(s.Plan, "split over 2 devices") {
			t.Errorf("%s %s: plan %q: want the planner's choice", s.Case, s.Placement, s.Plan)
		}
		used := 0
		for _, sh := range s.Shares {
			if sh.Units > 0 {
				used++
			}
			if sh.Alone <= 0 || sh.Predicted <= 0 {
				t.Errorf("%s %s: share %+v: want the predicted times", s.Case, s.Placement, sh)
			}
		}
		if strings.HasPrefix(s.Plan, "one device: ") != (used == 1) {
			t.Errorf("%s %s: plan %q with %d devices used", s.Case, s.Placement, s.Plan, used)
		}
		// The devices alone are measured once, in the host case.
		if s.Speedup <= 0 || s.Fastest == "" || len(s.Single) != map[string]int{PlacementHost: 2, PlacementSharded: 0}[s.Placement] {
			t.Errorf("%s %s: speedup %v against %q, %d single devices", s.Case, s.Placement, s.Speedup, s.Fastest, len(s.Single))
		}
		// Either placement: the fastest device alone is timed again through the split, its
		// data placed the same way, in turn with the split, and the speedup divides those
		// two medians; on sharded data the fastest is the fastest resident device.
		switch {
		case s.Paired == nil || len(s.Paired.Samples) != len(s.Stats.Samples) ||
			len(s.Stats.Samples) != map[bool]int{true: shortPairs, false: 2}[Summarize(s.Stats.Samples[:2]).Median < shortRun]:
			// --count 2, or ShortPairs each where the split's first two runs were short
			t.Errorf("%s %s: paired timing %+v beside the split's %+v, want the fastest device's runs, as many as the split's", s.Case, s.Placement, s.Paired, s.Stats)
		case math.Abs(s.Speedup-float64(s.Paired.Median)/float64(s.Stats.Median)) > 1e-9:
			t.Errorf("%s %s: speedup %v, want paired %v over split %v", s.Case, s.Placement, s.Speedup, s.Paired.Median, s.Stats.Median)
		case s.SpeedupResident <= 0:
			t.Errorf("%s %s: no speedup against the resident op", s.Case, s.Placement)
		}
		t.Logf("%s %s: %s, speedup %.2f", s.Case, s.Placement, s.Plan, s.Speedup)
	}
	if err := rep.reconcile(); err != nil {
		t.Errorf("the report with paired timings: %v", err)
	}
	// The host and sharded cases are two cases of the report: it reads back and merges,
	// and each is a row of its own (CSV, benchstat, prism compare).
	if _, err := Merge([]string{"report"}, rep); err != nil {
		t.Errorf("merge: %v", err)
	}
	rows := map[string]bool{}
	for _, g := range rep.GroupRows() {
		k := g.Kind + " " + g.Device + " " + g.Result.Case + " " + FormatSize(g.Result.Size)
		if rows[k] {
			t.Errorf("row %q twice", k)
		}
		rows[k] = true
	}
	// The sharded case is compared with the fastest device at the resident op, through
	// the split with all of the data on it (paired), and with the resident op itself.
	if sh := rep.Splits[1]; sh.Fastest == "" || sh.SpeedupResident <= 0 || sh.Paired == nil {
		t.Errorf("sharded: fastest %q, speedup against resident data %v, paired %v: want all three", sh.Fastest, sh.SpeedupResident, sh.Paired)
	}
}

// TestSplitResultChecked: a split whose shares hold a plan's check (its times, or why the
// device alone could not run) says so; one without, not.
func TestSplitResultChecked(t *testing.T) {
	two := []kernels.Share{{Device: "a", Units: 5}, {Device: "b", Units: 5}}
	if (SplitResult{Shares: two}).Checked() {
		t.Errorf("shares without a check read as checked")
	}
	ran := slices.Clone(two)
	ran[0].Ran, ran[1].Ran = time.Millisecond, time.Millisecond
	failed := slices.Clone(two)
	failed[0].Ran, failed[1].Ran = time.Millisecond, time.Millisecond
	failed[0].RanOneErr, failed[1].RanOneErr = "out of memory", "out of memory"
	for _, sh := range [][]kernels.Share{ran, failed} {
		if !(SplitResult{Shares: sh}).Checked() {
			t.Errorf("shares %+v: want checked", sh)
		}
	}
}

// TestRunSplitsPlacement narrows the splits to one placement: sharded gives each op's
// case on sharded data (verified, against the devices resident), and an op without a
// split on sharded data a case saying so; host gives the host cases alone.
func TestRunSplitsPlacement(t *testing.T) {
	infos, err := engine.Devices(t.Context(), "opencl")
	if err != nil || len(infos) == 0 {
		t.Skipf("no OpenCL device: %v", err)
	}
	var devs []*engine.Device
	for _, id := range []string{"opencl:" + infos[0].ID, "opencl:" + infos[len(infos)-1].ID} {
		d, err := engine.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		devs = append(devs, d)
	}
	ops, err := suite.Match("map/axpy/float32", "reduce/argmin/float32")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ placement, want string }{
		{PlacementSharded, "map/axpy/float32 sharded true, reduce/argmin/float32 sharded false"},
		{PlacementHost, "map/axpy/float32 host true, reduce/argmin/float32 host true"},
	} {
		rep, err := RunSplits(t.Context(), SplitConfig{Ops: ops, Sizes: []int{1 << 12}, Count: 2, Warmup: 1, Placement: c.placement}, devs)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range rep.Splits {
			got = append(got, fmt.Sprint(s.Case, " ", s.Placement, " ", s.Verified))
			if c.placement == PlacementSharded {
				if s.Verified && len(s.Single) != len(devs) {
					t.Errorf("%s: %d devices alone in the sharded case, want %d (resident)", s.Case, len(s.Single), len(devs))
				}
				for _, sd := range s.Single {
					if sd.Stats.Median != 0 || sd.Err == "" && sd.Resident.Median <= 0 {
						t.Errorf("%s alone on %s: host-data time %v, resident %v: want resident only", s.Case, sd.Device, sd.Stats.Median, sd.Resident.Median)
					}
				}
				if !s.Verified && !strings.Contains(s.Err, "no split on sharded data") {
					t.Errorf("%s: %q: want it to say the op has no split on sharded data", s.Case, s.Err)
				}
			}
		}
		if strings.Join(got, ", ") != c.want {
			t.Errorf("placement %s: cases %q, want %q", c.placement, strings.Join(got, ", "), c.want)
		}
	}
}
