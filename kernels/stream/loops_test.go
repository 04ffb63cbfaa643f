package stream

import (
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestDotLoopGroups checks stream_dot's groups against the device's loop limit
// (kernels.LoopLimit): where it has one (Mesa's llvmpipe), its grid loop (an element a step)
// over 2^31-1 elements stays within 90% of it; elsewhere the cap is 32 groups a compute
// unit.
func TestDotLoopGroups(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewStream[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		base := max(dev.Info().ComputeUnits, 1) * 32
		limit := kernels.LoopLimit(dev)
		if limit == 0 {
			if s.maxGroups != base {
				t.Errorf("%d groups at most without a loop limit; want %d", s.maxGroups, base)
			}
			return
		}
		items := s.dotGrid(math.MaxInt32).Global[0]
		if steps := (math.MaxInt32 + items - 1) / items; steps+16 > limit/10*9 || s.maxGroups < base {
			t.Errorf("2^31-1 elements over %d work-items: %d steps a work-item, past 90%% of %d (or below %d groups)", items, steps, limit, base)
		}
	})
}
