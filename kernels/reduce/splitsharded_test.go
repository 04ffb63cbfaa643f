package reduce

import (
	"testing"

	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestSplitReduceSharded sets the family's reductions up on sharded data and checks them as
// kerneltest.CheckSplitSharded does: placement said, no verify before a run, verified after
// each of two runs, each device's predicted time alone in measured shares, and the ops
// without a split on sharded data refused as unsupported.
func TestSplitReduceSharded(t *testing.T) {
	kerneltest.CheckSplitSharded(t, Family(), kerneltest.SplitDevices(t, false), []kerneltest.ShardedCase{
		{Op: "reduce/sum/float32", Size: 3*4096 + 5, Frac: []float64{0.5, 0.5}},
		{Op: "reduce/max/float32", Size: 7, Frac: []float64{0, 1}},
		{Op: "reduce/sum/float32", Size: 100003},
	}, "reduce/argmin/float32")
}
