package kernels_test

import (
	"errors"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestGrown checks the growth of the kernels' per-queue scratch (Grown): a buffer that holds n elements is kept, a smaller one is closed and
// replaced by one of n, and none yet gets one of n.
func TestGrown(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		b, err := kernels.Grown[float32](dev, nil, 4)
		if err != nil || b.Len() != 4 {
			t.Fatalf("Grown(nil, 4) = %v, %v; want 4 elements", b, err)
		}
		if same, err := kernels.Grown(dev, b, 3); err != nil || same != b {
			t.Errorf("Grown(4 elements, 3) = %p, %v; want the same buffer %p", same, err, b)
		}
		big, err := kernels.Grown(dev, b, 9)
		if err != nil || big == b || big.Len() != 9 {
			t.Fatalf("Grown(4 elements, 9) = %v, %v; want a new buffer of 9", big, err)
		}
		defer big.Close()
		if err := b.Fill(q, 0, 1, 0); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("the outgrown buffer: Fill gave %v, want ErrClosed (closed by Grown)", err)
		}
	})
}
