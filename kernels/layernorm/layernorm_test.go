package layernorm

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/kernels/internal/rowwise/rowwisetest"
)

// b2i returns 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestLayerNorm(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testLayerNorm[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testLayerNorm[float64](t, dev, q)
		})
	})
}

func testLayerNorm[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue) {
	l, err := NewLayerNorm[T](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rng := kernels.NewRand(5, 0x1a7e)
	var z T
	_, double := any(z).(float64)
	const eps = 1e-5
	sh, n, w := rowwisetest.Configs(t, l.Config)
	for _, rc := range rowwisetest.Cases(sh, n, w, double) {
		rows, cols := rc[0], rc[1]
		cfg, err := l.Config(cols)
		if err != nil {
			t.Fatal(err)
		}
		for _, inPlace := range []bool{false, true}[:1+b2i(rows == 3 || rows == 4 || rows == sh.Rows()+1)] {
			t.Run(fmt.Sprintf("rows=%d,cols=%d,inplace=%v", rows, cols, inPlace), func(t *testing.T) {
				// Rows: unit, wide (+-80), offset (1000 +- 80: the mean matters), constant
				// (variance 0: eps alone normalizes). gamma of both signs.
				x := rowwisetest.Input[T](rng, rows, cols)
				gamma, beta := kernels.RandFloats[T](rng, cols, -2, 2), kernels.RandFloats[T](rng, cols, -1, 1)
				xb, gb, bb := kerneltest.Guarded(t, q, x), kerneltest.Guarded(t, q, gamma), kerneltest.Guarded(t, q, beta)
				yb := xb
				if !inPlace {
					yb = kerneltest.Guarded(t, q, make([]T, rows*cols))
				}
				if err := l.Rows(q, yb, xb, gb, bb, rows, cols, T(eps)); err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, "layernorm y", yb, rows*cols)
				want := make([]float64, cols)
				for r := range rows {
					xr := x[r*cols : (r+1)*cols]
					st := layerNormRefRow(want, xr, gamma, beta, float64(T(eps)))
					tol := layerNormChainTol[T](cfg.Chain(cols), st)
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

func TestLayerNormInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		l, err := NewLayerNorm[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		buf := func(n int) *engine.Buffer[float32] { return kerneltest.NewBuffer[float32](t, dev, n) }
		m, short, v, vshort := buf(12), buf(11), buf(4), buf(3)
		for _, c := range []struct {
			name       string
			y, x, g, b *engine.Buffer[float32]
			rows, cols int
			eps        float32
		}{
			{"rows=0", m, m, v, v, 0, 4, 1e-5},
			{"cols=0", m, m, v, v, 3, 0, 1e-5},
			{"cols<0", m, m, v, v, 3, -1, 1e-5},
			{"nil y", nil, m, v, v, 3, 4, 1e-5},
			{"nil x", m, nil, v, v, 3, 4, 1e-5},
			{"nil gamma", m, m, nil, v, 3, 4, 1e-5},
			{"nil beta", m, m, v, nil, 3, 4, 1e-5},
			{"short x", m, short, v, v, 3, 4, 1e-5},
			{"short y", short, m, v, v, 3, 4, 1e-5},
			{"short gamma", m, m, vshort, v, 3, 4, 1e-5},
			{"short beta", m, m, v, vshort, 3, 4, 1e-5},
			{"eps=0", m, m, v, v, 3, 4, 0},
			{"eps<0", m, m, v, v, 3, 4, -1},
			{"eps=NaN", m, m, v, v, 3, 4, float32(math.NaN())},
			{"eps=Inf", m, m, v, v, 3, 4, float32(math.Inf(1))},
			{"over 2^31 elements", m, m, v, v, 1 << 16, 1 << 16, 1e-5},
		} {
			if err := l.Rows(q, c.y, c.x, c.g, c.b, c.rows, c.cols, c.eps); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, err)
			}
		}
	})
}

// TestLayerNormClosed checks that Close is idempotent and that the launcher then refuses
// rows of either build with ErrClosed, the wide build never made before Close
// (TestSoftmaxClosed checks one made before it): Config of a wide row too.
func TestLayerNormClosed(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		l, err := NewLayerNorm[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		const wide = 4097
		x := kerneltest.NewBuffer[float32](t, dev, wide)
		for range 2 {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for _, cols := range []int{1, wide} {
			if err := l.Rows(q, x, x, x, x, 1, cols, 1e-5); !errors.Is(err, engine.ErrClosed) {
				t.Errorf("layernorm cols=%d after Close: %v, want ErrClosed", cols, err)
			}
		}
		if _, err := l.Config(wide); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("layernorm Config(%d) after Close: %v, want ErrClosed", wide, err)
		}
	})
}

// TestLayerNormLoopLimit checks rows against the device's loop limit (kernels.LoopLimit):
// where it has one (Mesa's llvmpipe), a row of 800,000 elements, whose three walks would
// pass it, is refused naming the limit, before anything is launched; elsewhere Config takes
// it.
func TestLayerNormLoopLimit(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		l, err := NewLayerNorm[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		const cols = 800_000
		x, g := kerneltest.NewBuffer[float32](t, dev, cols), kerneltest.NewBuffer[float32](t, dev, cols)
		rowwisetest.LoopLimit(t, dev, cols, l.Config, func() error { return l.Rows(q, x, x, g, g, 1, cols, 1e-5) })
	})
}
