package layernorm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/kernels/internal/rowwise"
	"github.com/prism-compute/prism/kernels/internal/rowwise/rowwisetest"
)

// TestWarp checks the cuda-warp layernorm (rowwise.Warp) on every device that builds CUDA
// C++, at widths around the 16-byte loads and the warp's 1024 elements and at row counts
// around the block's 8 rows, in place too, against the float64 reference with guard bands
// after every buffer; elsewhere NewWarp must refuse with ErrUnsupported. softmax's TestWarp
// checks the warp softmax so.
func TestWarp(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if !dev.Builds(engine.DialectCUDA) {
			if _, err := rowwise.NewWarp(dev); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("NewWarp on %s, which builds no CUDA C++: %v, want ErrUnsupported", dev.ID(), err)
			}
			t.Skipf("%s builds no CUDA C++ (%v)", dev.ID(), dev.Dialects())
		}
		w, err := rowwise.NewWarp(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		rng := kernels.NewRand(9, 0x3a4)
		const eps = 1e-5
		for _, rows := range []int{1, 7, 8, 9, 33} {
			for _, cols := range []int{1, 3, 4, 31, 32, 127, 128, 129, 1000, 1021, 1023, 1024} {
				for _, inPlace := range []bool{false, true} {
					t.Run(fmt.Sprintf("rows=%d,cols=%d,inplace=%v", rows, cols, inPlace), func(t *testing.T) {
						x := rowwisetest.Input[float32](rng, rows, cols)
						gamma, beta := kernels.RandFloats[float32](rng, cols, -2, 2), kernels.RandFloats[float32](rng, cols, -1, 1)
						want := make([]float64, cols)
						xb := kerneltest.Guarded(t, q, x)
						yb := xb
						if !inPlace {
							yb = kerneltest.Guarded(t, q, make([]float32, rows*cols))
						}
						gb, bb := kerneltest.Guarded(t, q, gamma), kerneltest.Guarded(t, q, beta)
						if err := w.LayerNorm(q, yb, xb, gb, bb, rows, cols, eps); err != nil {
							t.Fatal(err)
						}
						got := kerneltest.Download(t, q, "layernorm y", yb, rows*cols)
						for r := range rows {
							xr := x[r*cols : (r+1)*cols]
							st := layerNormRefRow(want, xr, gamma, beta, float64(float32(eps)))
							tol := layerNormRowTol[float32](cols, 32, st)
							if err := kernels.CheckClose(fmt.Sprintf("layernorm row %d", r), got[r*cols:(r+1)*cols], want, func(c int) float64 {
								return tol(float64(xr[c]), float64(gamma[c]), float64(beta[c]))
							}); err != nil {
								t.Fatal(err)
							}
						}
					})
				}
			}
		}
		// Widths past a warp's and bad buffers are refused before a launch.
		b := kerneltest.Guarded(t, q, make([]float32, 2048))
		if err := w.LayerNorm(q, b, b, b, b, 1, 1025, eps); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("a row of 1025 columns: %v, want ErrInvalidArg", err)
		}
		if err := w.LayerNorm(q, b, b, nil, b, 1, 16, eps); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("nil gamma: %v, want ErrInvalidArg", err)
		}
	})
}
