package bench

import (
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Case is one benchmarkable operation of the suite, e.g. stream triad in float32.
type Case interface {
	// Name is "family/op/type", e.g. "stream/triad/float32".
	Name() string
	// Setup prepares the operation over n elements on q's device, with seeded random inputs.
	// It returns engine.ErrUnsupported (wrapped) when the device cannot run it.
	Setup(q *engine.Queue, n int, seed uint64) (Instance, error)
}

// Instance is a Case set up on one device at one size.
type Instance interface {
	// Run enqueues the operation once.
	Run(q *engine.Queue) error
	// Verify reads the result of the last Run back and compares it with the float64
	// reference; it returns an error describing the first mismatch.
	Verify(q *engine.Queue) error
	// Model is the work of one Run.
	Model() kernels.Model
	Close() error
}
