package scan

import (
	"fmt"
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestScanLoopGroups checks the chunks of a scan against the device's loop limit
// (kernels.LoopLimit): where it has one (Mesa's llvmpipe), scan_down's walk over a chunk of
// 2^31-1 elements stays within 90% of it; elsewhere the cap is 16 groups a compute unit.
func TestScanLoopGroups(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewScan[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		kerneltest.LoopGroups(t, dev, s.maxGroups, 16, func() (int, string) {
			chunk, groups := s.split(math.MaxInt32)
			tiles := (chunk + s.Tile() - 1) / s.Tile()
			return tiles*(kernels.Log2Ceil(s.wg)+2) + 16, fmt.Sprintf("2^31-1 elements in %d chunks of %d tiles", groups, tiles)
		})
	})
}
