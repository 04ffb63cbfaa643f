package reduce

import (
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestReduceLoopGroups checks the groups of a whole-array reduction against the device's
// loop limit (kernels.LoopLimit): where it has one (Mesa's llvmpipe), the grid loop of
// argmin and argmax (an element a step) over 2^31-1 elements stays within 90% of it;
// elsewhere the cap is 32 groups a compute unit.
func TestReduceLoopGroups(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		r, err := NewReduce[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		base := max(dev.Info().ComputeUnits, 1) * 32
		limit := kernels.LoopLimit(dev)
		if limit == 0 {
			if r.maxGroups != base {
				t.Errorf("%d groups at most without a loop limit; want %d", r.maxGroups, base)
			}
			return
		}
		g := r.groups(math.MaxInt32)
		if steps := (math.MaxInt32 + g*r.wg - 1) / (g * r.wg); steps+16 > limit/10*9 || r.maxGroups < base {
			t.Errorf("2^31-1 elements over %d groups of %d: %d steps a work-item, past 90%% of %d (or below %d groups)", g, r.wg, steps, limit, base)
		}
	})
}
