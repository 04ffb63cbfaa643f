package layernorm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/kernels/internal/rowwise/rowwisetest"
)

// TestShortRowsSmallGroups runs the short-row kernels as devices with fewer work-items per
// group would build them (rowwisetest.ShortRowsSmallGroups: 1, 2, 8 and 32 items, the
// widths around each build's vectors and limit), against the float64 reference with
// random gamma and beta, guard bands checked. softmax's test of the same name runs its
// kernels so.
func TestShortRowsSmallGroups(t *testing.T) {
	rowwisetest.ShortRowsSmallGroups(t, func(t *testing.T, dev *engine.Device) rowwisetest.ShortRows {
		l, err := NewLayerNorm[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := l.Config(1)
		if err != nil {
			l.Close()
			t.Fatal(err)
		}
		return rowwisetest.ShortRows{Config: cfg, Close: l.Close,
			Check: func(t *testing.T, q *engine.Queue, rng *rand.Rand, x []float32, rows, cols int) {
				xb := kerneltest.Guarded(t, q, x)
				yb := kerneltest.Guarded(t, q, make([]float32, rows*cols))
				gamma, beta := kernels.RandFloats[float32](rng, cols, -2, 2), kernels.RandFloats[float32](rng, cols, -1, 1)
				gb, bb := kerneltest.Guarded(t, q, gamma), kerneltest.Guarded(t, q, beta)
				if err := l.Rows(q, yb, xb, gb, bb, rows, cols, 1e-5); err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, "layernorm y", yb, rows*cols)
				lc, err := l.Config(cols)
				if err != nil {
					t.Fatal(err)
				}
				want := make([]float64, cols)
				for r := range rows {
					xr := x[r*cols : (r+1)*cols]
					tol := layerNormChainTol[float32](lc.Chain(cols), layerNormRefRow(want, xr, gamma, beta, float64(float32(1e-5))))
					if err := kernels.CheckClose(fmt.Sprintf("layernorm row %d", r), got[r*cols:(r+1)*cols], want, func(c int) float64 {
						return tol(float64(xr[c]), float64(gamma[c]), float64(beta[c]))
					}); err != nil {
						t.Fatal(err)
					}
				}
			}}
	})
}
