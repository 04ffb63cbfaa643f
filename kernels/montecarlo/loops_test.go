package montecarlo

import (
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestMonteCarloLoopGroups checks the groups of mc_pi and mc_option against the device's
// loop limit (kernels.LoopLimit): where it has one (Mesa's llvmpipe), mc_pi's grid loop (a
// block of two points a step) over MonteCarloMax points stays within 90% of it; elsewhere
// the cap is 32 groups a compute unit.
func TestMonteCarloLoopGroups(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		m, err := NewMonteCarlo(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		base := max(dev.Info().ComputeUnits, 1) * 32
		limit := kernels.LoopLimit(dev)
		if limit == 0 {
			if m.maxGroups != base {
				t.Errorf("%d groups at most without a loop limit; want %d", m.maxGroups, base)
			}
			return
		}
		nblocks := (MonteCarloMax + 1) / 2
		g := m.reduceGroups(nblocks)
		if steps := (nblocks + g*m.wg - 1) / (g * m.wg); steps+16 > limit/10*9 || m.maxGroups < base {
			t.Errorf("%d points over %d groups of %d: %d steps a work-item, past 90%% of %d (or below %d groups)", MonteCarloMax, g, m.wg, steps, limit, base)
		}
	})
}
