package softmax

import (
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/kernels/internal/rowwise/rowwisetest"
)

// TestShortRowsSmallGroups runs the short-row kernels as devices with fewer work-items per
// group would build them (rowwisetest.ShortRowsSmallGroups: 1, 2, 8 and 32 items, the
// widths around each build's vectors and limit), against the float64 reference, guard
// bands checked. layernorm's test of the same name runs its kernels so.
func TestShortRowsSmallGroups(t *testing.T) {
	rowwisetest.ShortRowsSmallGroups(t, func(t *testing.T, dev *engine.Device) rowwisetest.ShortRows {
		s, err := NewSoftmax[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := s.Config(1)
		if err != nil {
			s.Close()
			t.Fatal(err)
		}
		return rowwisetest.ShortRows{Config: cfg, Close: s.Close,
			Check: func(t *testing.T, q *engine.Queue, _ *rand.Rand, x []float32, rows, cols int) {
				xb := kerneltest.Guarded(t, q, x)
				yb := kerneltest.Guarded(t, q, make([]float32, rows*cols))
				if err := s.Rows(q, yb, xb, rows, cols); err != nil {
					t.Fatal(err)
				}
				checkSoftmax(t, s, kerneltest.Download(t, q, "softmax y", yb, rows*cols), x, rows, cols)
			}}
	})
}
