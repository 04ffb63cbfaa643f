package kernels

import "github.com/prism-compute/prism/engine"

// Grown returns b where it holds n elements, else a new buffer of n elements on dev, b
// closed first (nil with the error where either fails): the growth of a kernel's per-queue
// scratch (the wgmma GEMM's split-K workspaces and padded copies, the float8 attention's
// transposed V). Closing at once is safe with launches in flight: engine's pool hands the
// memory out again only once the queues that used it have completed them, and a graph that
// captured b refuses to launch.
func Grown[T engine.Scalar](dev *engine.Device, b *engine.Buffer[T], n int) (*engine.Buffer[T], error) {
	if b != nil && b.Len() >= n {
		return b, nil
	}
	if b != nil {
		if err := b.Close(); err != nil {
			return nil, err
		}
	}
	return engine.NewBuffer[T](dev, n)
}
