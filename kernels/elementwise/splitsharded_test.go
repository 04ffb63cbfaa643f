package elementwise

import (
	"testing"

	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestSplitMapSharded sets the family's map ops up on sharded data and checks them as
// kerneltest.CheckSplitSharded does: placement said, no verify before a run, verified after
// each of two runs, each device's predicted time alone in measured shares, and the ops
// without a split on sharded data refused as unsupported.
func TestSplitMapSharded(t *testing.T) {
	kerneltest.CheckSplitSharded(t, Family(), kerneltest.SplitDevices(t, false), []kerneltest.ShardedCase{
		{Op: "map/axpy/float32", Size: 4097, Frac: []float64{0.5, 0.5}},
		{Op: "map/axpy/float32", Size: 7, Frac: []float64{1, 0}},
		{Op: "map/fma/float32", Size: 100003},
	}) // every map op runs on sharded data
}
