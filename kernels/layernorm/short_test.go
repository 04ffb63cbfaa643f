package layernorm

import (
	"fmt"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/kernels/internal/rowwise"
	"github.com/prism-compute/prism/kernels/internal/rowwise/rowwisetest"
)

// TestShortRowsSmallGroups runs the short-row kernels as devices with fewer work-items per
// group would build them (kernels.EnvMaxWorkGroup): 1 and 2 items per row (the scalar
// trees of the row partials), 8, and 32 in a work-group of one row. Each item then keeps
// the same 4*RowVecs elements, so fewer columns take the short-row kernels; the widths
// straddle the 4-element vectors, the items' vectors and that limit, with row counts that
// leave the last work-group part empty, against the float64 reference, guard bands
// checked. On the first device only (the other runs the same code). softmax's test of the
// same name runs its kernels so.
func TestShortRowsSmallGroups(t *testing.T) {
	for _, wg := range []int{1, 2, 8, 32} {
		t.Run(fmt.Sprintf("wg=%d", wg), func(t *testing.T) {
			t.Setenv(kernels.EnvMaxWorkGroup, fmt.Sprint(wg))
			first := true
			kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
				if !first { // one device: each limit is a build of its own, slow for CPU compilers
					t.Skip("the limited work-groups run on the first device")
				}
				first = false
				l, err := NewLayerNorm[float32](dev)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				cfg, err := l.Config(1)
				if err != nil {
					t.Fatal(err)
				}
				if cfg.RowItems != min(wg, rowwise.RowItems) || cfg.WorkGroup != wg {
					t.Fatalf("short rows take %v under a limit of %d items", cfg, wg)
				}
				limit := cfg.PerRow() * cfg.Cache
				rng := kernels.NewRand(11, 0x5e7)
				colsList := []int{1, 3, 4, 5, 4*cfg.PerRow() + 1, limit - 1, limit, limit + 1}
				rowsList := []int{1, cfg.Rows() + 1, 2*cfg.Rows() + 1}
				if kerneltest.Small() {
					colsList, rowsList = []int{5, limit}, []int{cfg.Rows() + 1}
				}
				for _, cols := range colsList {
					for _, rows := range rowsList {
						t.Run(fmt.Sprintf("rows=%d,cols=%d", rows, cols), func(t *testing.T) {
							x := rowwisetest.Input[float32](rng, rows, cols)
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
						})
					}
				}
			})
		})
	}
}
