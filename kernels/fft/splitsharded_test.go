package fft

import (
	"testing"

	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestSplitFFTSharded sets fft/batched up on sharded data (the transforms scattered by
// rows, each run leaving its outputs where they lie) and checks it as
// kerneltest.CheckSplitSharded does: placement said, no verify before a run, verified after
// each of two runs, each device's predicted time alone in measured shares; the one-transform
// ops have no split at all.
func TestSplitFFTSharded(t *testing.T) {
	kerneltest.CheckSplitSharded(t, Family(), kerneltest.SplitDevices(t, false), []kerneltest.ShardedCase{
		{Op: "fft/batched/float32", Size: 5 * fftBatchLen, Frac: []float64{0.5, 0.5}},
		{Op: "fft/batched/float32", Size: fftBatchLen, Frac: []float64{1, 0}},
		{Op: "fft/batched/float32", Size: 16 * fftBatchLen},
	})
}
