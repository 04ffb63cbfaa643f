package suite_test

import (
	"errors"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/kernels/suite"
)

// TestOps runs every op of the catalog as `prism bench` and `prism run` do (the same
// Instance), on every device: set up with rotation, run twice (two input sets where the op
// rotates), verified after each run; a size of 0 is refused.
func TestOps(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, op := range suite.Ops() {
			t.Run(op.Name, func(t *testing.T) {
				if _, err := op.Setup(q, kernels.Params{Size: 0}); !errors.Is(err, engine.ErrInvalidArg) {
					t.Errorf("size 0: %v, want ErrInvalidArg", err)
				}
				size := op.QuickSize
				if kerneltest.Small() {
					size = min(size, 1024) // Oclgrind: about 10^4 operations per second
				}
				in, err := op.Setup(q, kernels.Params{Size: size, Seed: 11, Rotate: true})
				if errors.Is(err, engine.ErrUnsupported) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := in.Close(); err != nil {
						t.Error(err)
					}
				}()
				if m := in.Model(); m.Bytes <= 0 || m.Flops < 0 {
					t.Errorf("model %+v", m)
				}
				for run := range 2 {
					if err := in.Run(q); err != nil {
						t.Fatal(err)
					}
					if err := in.Verify(q); err != nil {
						t.Fatalf("run %d (%s): %v", run, in.Shape(), err)
					}
				}
				t.Logf("%s: %s verified", op.Name, in.Shape())
			})
		}
	})
}
