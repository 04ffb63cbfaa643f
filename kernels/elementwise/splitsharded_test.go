package elementwise

import (
	"testing"

	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestSplitMapSharded sets the family's map ops up on sharded data and checks them as
// kerneltest.CheckSplitSharded does: placement said, no verify before a run, verified after
// each of two runs, the gather a device alone would pay in measured shares, and the ops
// without a split on sharded data refused as unsupported.
func TestSplitMapSharded(t *testing.T) {
	kerneltest.CheckSplitSharded(t, Family(), kerneltest.SplitDevices(t, false), []kerneltest.ShardedCase{
		{Op: "map/axpy/float32", Size: 4097, Frac: []float64{0.5, 0.5}},
		{Op: "map/axpy/float32", Size: 7, Frac: []float64{1, 0}},
		{Op: "map/fma/float32", Size: 100003},
	}) // every map op runs on sharded data
}

// TestSplitMapShardedCheckPlan checks the plan's check on sharded data with real devices:
// a split of given halves is checked (SplitRun.CheckPlan), which scatters the inputs again
// for the device of the larger share alone and, where the split was faster, back over
// both; whichever
// it kept, the output verifies, the shares cover the work and hold both times, and later
// runs verify on the layout kept.
func TestSplitMapShardedCheckPlan(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)[:2]
	for _, op := range []MapOp{MapAxpy, MapFma} {
		t.Run(string(op), func(t *testing.T) {
			o := kernels.SplitOptions{Fractions: []float64{0.5, 0.5}, Placement: kernels.PlaceSharded}
			si, err := setupMapSplit[float32](t.Context(), "map/"+string(op)+"/float32", op, devs, kernels.Params{Size: 50001, Seed: 3}, o)
			if err != nil {
				t.Fatal(err)
			}
			defer si.Close()
			in := si.(*mapSplitInstance[float32])
			if err := in.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			in.sran = false
			if err := in.CheckPlan(t.Context(), in.runSharded, in.rescatter); err != nil {
				t.Fatal(err)
			}
			in.sran = true
			if err := in.Verify(t.Context()); err != nil {
				t.Fatalf("after the check: %v", err)
			}
			sh := in.Shares()
			t.Logf("%s", kernels.PlanSummary(sh))
			units := 0
			for _, s := range sh {
				units += s.Units
				if s.Ran <= 0 || s.RanOne <= 0 {
					t.Errorf("share %+v holds no check", s)
				}
			}
			if units != 50001 || (sh[0].Units == 0) != (sh[1].Units == 50001) || (sh[1].Units == 0) != (sh[0].Units == 50001) {
				t.Errorf("shares %+v: want both devices' or all the work on one", sh)
			}
			for range 2 {
				if err := in.Run(t.Context()); err != nil {
					t.Fatal(err)
				}
				if err := in.Verify(t.Context()); err != nil {
					t.Fatalf("a run after the check: %v", err)
				}
			}
		})
	}
}
