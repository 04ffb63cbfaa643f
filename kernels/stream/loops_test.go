package stream

import (
	"fmt"
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
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
		kerneltest.LoopGroups(t, dev, s.maxGroups, 32, func() (int, string) {
			items := s.dotGrid(math.MaxInt32).Global[0]
			return (math.MaxInt32+items-1)/items + 16, fmt.Sprintf("2^31-1 elements over %d work-items", items)
		})
	})
}
