package kernels_test

import (
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestLoopLimit checks that LoopLimit names Mesa's llvmpipe (Rusticl's CPU device) with
// its 65,535 iterations and no other device, and nil with none.
func TestLoopLimit(t *testing.T) {
	if got := kernels.LoopLimit(nil); got != 0 {
		t.Errorf("LoopLimit(nil) = %d, want 0", got)
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		want := 0
		if strings.Contains(strings.ToLower(dev.Info().Name), "llvmpipe") {
			want = 65535
		}
		if got := kernels.LoopLimit(dev); got != want {
			t.Errorf("%s (%s): LoopLimit %d, want %d", dev.ID(), dev.Info().Name, got, want)
		}
	})
}
