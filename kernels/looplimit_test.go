package kernels_test

import (
	"errors"
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
		{65535, 5361, 11, 6, 1},      // (58,977 - 6) / 11 = 5361 units a group
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

// TestCheckLoops checks the refusal of a work-item's loops past 90% of a limit (58,977 of
// llvmpipe's 65,535): none without a limit or within it, ErrUnsupported naming the work,
// the count and the limit past it; and UnitsWithin's units, which never reach past it but for a single unit.
func TestCheckLoops(t *testing.T) {
	for _, c := range []struct {
		limit, n int
		refused  bool
	}{{0, 1 << 30, false}, {65535, 58977, false}, {65535, 58978, true}} {
		err := kernels.CheckLoops(c.limit, c.n, "op %s", "x")
		if got := errors.Is(err, engine.ErrUnsupported); got != c.refused {
			t.Errorf("CheckLoops(%d, %d): %v; want refused %v", c.limit, c.n, err, c.refused)
		}
		if c.refused && !strings.Contains(err.Error(), "op x needs about 58978") || c.refused && !strings.Contains(err.Error(), "65535") {
			t.Errorf("CheckLoops(%d, %d): %q does not name the work, the count and the limit", c.limit, c.n, err)
		}
	}
	for _, c := range []struct{ limit, cost, fixed, want int }{{0, 84, 32, 0}, {65535, 84, 32, 701}, {65535, 1 << 20, 0, 1}} {
		if got := kernels.UnitsWithin(c.limit, c.cost, c.fixed); got != c.want {
			t.Errorf("UnitsWithin(%d, %d, %d) = %d, want %d", c.limit, c.cost, c.fixed, got, c.want)
		}
	}
}
