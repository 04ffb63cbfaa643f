package gemm

import (
	"testing"

	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestSplitGEMMSharded sets the family's GEMM up on sharded data and checks them as
// kerneltest.CheckSplitSharded does: placement said, no verify before a run, verified after
// each of two runs, each device's predicted time alone in measured shares, and the ops
// without a split on sharded data refused as unsupported.
func TestSplitGEMMSharded(t *testing.T) {
	kerneltest.CheckSplitSharded(t, Family(), kerneltest.SplitDevices(t, false), []kerneltest.ShardedCase{
		{Op: "gemm/nn/float32", Size: 33 * 33, Frac: []float64{0.5, 0.5}},
		{Op: "gemm/nn/float32", Size: 7 * 7, Frac: []float64{0, 1}},
		{Op: "gemm/nt/float32", Size: 67 * 67},
	}, "gemm/tn/float32")
}
