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

// TestGroupsWithin checks the groups a long loop is spread over: none without a limit,
// enough that every work-item stays within 90% of it, and no more than that.
func TestGroupsWithin(t *testing.T) {
	for _, c := range []struct{ limit, units, cost, fixed, want int }{
		{0, 1 << 30, 11, 6, 0},
		{65535, 0, 11, 6, 0},
		{65535, 5361, 11, 6, 1},      // (58,981 - 6) / 11 = 5361 units a group
		{65535, 5362, 11, 6, 2},      // one more: two groups
		{65535, 1 << 22, 11, 6, 783}, // 2^30 keys in tiles of 256 (sort_scatter)
		{100, 1000, 200, 0, 1000},    // a unit over the limit: one a group
	} {
		got := kernels.GroupsWithin(c.limit, c.units, c.cost, c.fixed)
		if got != c.want {
			t.Errorf("GroupsWithin(%d, %d, %d, %d) = %d, want %d", c.limit, c.units, c.cost, c.fixed, got, c.want)
		}
		if got > 0 && c.cost*((c.units+got-1)/got)+c.fixed > c.limit/10*9 && (c.units+got-1)/got > 1 {
			t.Errorf("GroupsWithin(%d, %d, %d, %d) = %d leaves %d units a group, past 90%% of the limit", c.limit, c.units, c.cost, c.fixed, got, (c.units+got-1)/got)
		}
	}
}
