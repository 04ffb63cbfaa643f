package montecarlo

import (
	"fmt"
	"testing"

	"github.com/prism-compute/prism/engine"
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
		kerneltest.LoopGroups(t, dev, m.maxGroups, 32, func() (int, string) {
			nblocks := (MonteCarloMax + 1) / 2
			g := m.reduceGroups(nblocks)
			return (nblocks+g*m.wg-1)/(g*m.wg) + 16, fmt.Sprintf("%d points over %d groups of %d", MonteCarloMax, g, m.wg)
		})
	})
}
