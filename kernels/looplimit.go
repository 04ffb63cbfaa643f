package kernels

import (
	"fmt"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// llvmpipeLoopLimit is Mesa's LP_MAX_TGSI_LOOP_ITERATIONS: llvmpipe ends every loop of a
// work-item once the work-item's loops have run this many iterations in all ("shared
// between every loop").
const llvmpipeLoopLimit = 65535

// LoopLimit returns how many loop iterations, counted over all its loops, a work-item of dev
// may run before the implementation ends its loops, or 0 where none is known. Mesa's
// llvmpipe, the CPU device behind Rusticl, ends them after 65,535 (LP_MAX_TGSI_LOOP_ITERATIONS),
// silently: the kernel goes on with what its loops had done, and its results are wrong (the
// portable attention at head dim 128 there past about 1,700 keys, 2026-12-01). A kernel
// whose work-items loop that long refuses such shapes on such a device
// (engine.ErrUnsupported) instead.
func LoopLimit(dev *engine.Device) int {
	if dev == nil {
		return 0
	}
	if strings.Contains(strings.ToLower(dev.Info().Name), "llvmpipe") {
		return llvmpipeLoopLimit
	}
	return 0
}

// loopBudget is the part of limit a kernel plans to use: 90%, which leaves room for the
// loops a family's count leaves out (ones the compiler does not unroll).
func loopBudget(limit int) int { return limit / 10 * 9 }

// UnitsWithin returns how many units of work (k steps, tiles) of cost loop iterations each,
// after fixed more, one work-item may run within 90% of limit (LoopLimit), at least 1; 0
// where limit is 0. A family that can split its work across launches takes this many units
// a launch on such a device.
func UnitsWithin(limit, cost, fixed int) int {
	if limit <= 0 {
		return 0
	}
	return max((loopBudget(limit)-fixed)/max(cost, 1), 1)
}

// GroupsWithin returns the fewest work-groups over which units units of work (a tile, or
// a step of a grid-stride loop, that each work-item of a group takes in turn) must be
// spread so that a work-item running cost loop iterations a unit, and fixed more, stays
// within 90% of limit (LoopLimit); 0 where limit is 0. A family whose kernels take any
// number of groups raises its cap on groups to this on such a device instead of refusing
// long inputs.
func GroupsWithin(limit, units, cost, fixed int) int {
	if limit <= 0 || units <= 0 {
		return 0
	}
	per := UnitsWithin(limit, cost, fixed)
	return (units + per - 1) / per
}

// CheckLoops returns an error wrapping engine.ErrUnsupported where n loop iterations a
// work-item pass 90% of limit (LoopLimit), naming the work (format and args, formatted only
// then) and the limit: the device would end the loops early and the results would be
// wrong. Nil where limit is 0 or n is within it. A family whose work cannot be split or
// spread refuses such shapes with it.
func CheckLoops(limit, n int, format string, args ...any) error {
	if limit <= 0 || n <= loopBudget(limit) {
		return nil
	}
	return fmt.Errorf("kernels: %s needs about %d loop iterations a work-item; this device (Mesa's llvmpipe) ends a work-item's loops after %d and would return wrong results (PoCL, or a GPU, takes it): %w",
		fmt.Sprintf(format, args...), n, limit, engine.ErrUnsupported)
}
