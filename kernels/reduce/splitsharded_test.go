package reduce

import (
	"errors"
	"fmt"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestSplitReduceSharded sets ops up on sharded data (kernels.PlaceSharded: the inputs
// scattered over the devices once, each run leaving its result there) with given and
// measured shares, and checks that the instance says so, refuses to verify before a run,
// and verifies after each of two runs (Verify gathers the result); measured shares carry
// the gather a device alone would pay. An op with no split on sharded data is refused as
// unsupported.
func TestSplitReduceSharded(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	byName := func(name string) kernels.Op {
		for _, op := range Family().Ops {
			if op.Name == name {
				return op
			}
		}
		t.Fatalf("no op %s", name)
		return kernels.Op{}
	}
	for _, c := range []struct {
		op   string
		size int
		frac []float64
	}{
		{"reduce/sum/float32", 3*4096 + 5, []float64{0.5, 0.5}},
		{"reduce/max/float32", 7, []float64{0, 1}},
		{"reduce/sum/float32", 100003, nil},
	} {
		frac := c.frac
		if frac != nil && len(devs) != 2 {
			frac = kerneltest.Evenly(len(devs))
		}
		t.Run(fmt.Sprintf("%s/%d/%v", c.op, c.size, frac), func(t *testing.T) {
			o := kernels.SplitOptions{Fractions: frac, Placement: kernels.PlaceSharded}
			si, err := byName(c.op).Split(t.Context(), devs, kernels.Params{Size: c.size, Seed: 3}, o)
			if err != nil {
				t.Fatal(err)
			}
			defer si.Close()
			if p := kernels.PlacementOf(si); p != kernels.PlaceSharded {
				t.Fatalf("placement %v, want sharded", p)
			}
			if err := si.Verify(t.Context()); !errors.Is(err, engine.ErrInvalidArg) {
				t.Fatalf("verify before a run: %v, want invalid argument", err)
			}
			for range 2 {
				if err := si.Run(t.Context()); err != nil {
					t.Fatal(err)
				}
				if err := si.Verify(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if frac == nil && len(devs) > 1 {
				for _, sh := range si.Shares() {
					if sh.Gather <= 0 || sh.Alone <= sh.Gather {
						t.Errorf("%s: gather %v, alone %v: want a gather, within the time alone", sh.Device, sh.Gather, sh.Alone)
					}
				}
			}
			t.Logf("%s", kernels.PlanSummary(si.Shares()))
		})
	}
	if bad := "reduce/argmin/float32"; bad != "" {
		_, err := byName(bad).Split(t.Context(), devs, kernels.Params{Size: 64, Seed: 3}, kernels.SplitOptions{Placement: kernels.PlaceSharded})
		if !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("%s on sharded data: %v, want unsupported", bad, err)
		}
	}
}
