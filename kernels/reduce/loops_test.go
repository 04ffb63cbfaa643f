package reduce

import (
	"errors"
	"fmt"
	"math"
	"strings"
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
		kerneltest.LoopGroups(t, dev, r.maxGroups, 32, func() (int, string) {
			g := r.groups(math.MaxInt32)
			return (math.MaxInt32+g*r.wg-1)/(g*r.wg) + 16, fmt.Sprintf("2^31-1 elements over %d groups of %d", g, r.wg)
		})
	})
}

// TestReduceRowsLoopLimit checks per-row reductions against the device's loop limit: where
// it has one (Mesa's llvmpipe), rows of 2.2M elements, whose walks would pass it, are
// refused naming the limit by Rows and ArgRows before anything is launched; elsewhere the
// check lets them through.
func TestReduceRowsLoopLimit(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		r, err := NewReduce[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		const cols = 2_200_000
		limit := kernels.LoopLimit(dev)
		if limit == 0 {
			if err := r.checkRowLoops(ReduceSum, cols); err != nil {
				t.Errorf("rows of %d without a loop limit: %v", cols, err)
			}
			return
		}
		x := kerneltest.NewBuffer[float32](t, dev, cols)
		out := kerneltest.NewBuffer[float32](t, dev, 1)
		idx := kerneltest.NewBuffer[int32](t, dev, 1)
		for _, err := range []error{r.Rows(q, ReduceSum, out, x, 1, cols), r.ArgRows(q, ReduceArgMax, out, idx, x, 1, cols)} {
			if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "llvmpipe") || !strings.Contains(err.Error(), fmt.Sprint(limit)) {
				t.Errorf("a row of %d: %v; want ErrUnsupported naming llvmpipe's limit %d", cols, err, limit)
			}
		}
	})
}
