package softmax

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

func TestSoftmax(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testSoftmax[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testSoftmax[float64](t, dev, q)
		})
	})
}

func testSoftmax[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue) {
	s, err := NewSoftmax[T](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := kernels.NewRand(3, 0x50f7)
	var z T
	_, double := any(z).(float64)
	sh, n, w := rowwisetest.Configs(t, s.Config)
	for _, rc := range rowwisetest.Cases(sh, n, w, double) {
		rows, cols := rc[0], rc[1]
		// Rows of 3 and 4, and a part-empty last work-group of short rows, run in place
		// (y = x) too.
		for _, inPlace := range []bool{false, true}[:1+b2i(rows == 3 || rows == 4 || rows == sh.Rows()+1)] {
			t.Run(fmt.Sprintf("rows=%d,cols=%d,inplace=%v", rows, cols, inPlace), func(t *testing.T) {
				x := rowwisetest.Input[T](rng, rows, cols)
				xb := kerneltest.Guarded(t, q, x)
				yb := xb
				if !inPlace {
					yb = kerneltest.Guarded(t, q, make([]T, rows*cols))
				}
				if err := s.Rows(q, yb, xb, rows, cols); err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, "softmax y", yb, rows*cols)
				checkSoftmax(t, s, got, x, rows, cols)
			})
		}
	}
}

// checkSoftmax compares got row by row with SoftmaxRef under SoftmaxTolerance, and checks
// that each row sums to 1 within the sum of its tolerances.
func checkSoftmax[T kernels.Float](t *testing.T, s *Softmax[T], got, x []T, rows, cols int) {
	t.Helper()
	want := make([]float64, cols)
	for r := range rows {
		xr, gr := x[r*cols:(r+1)*cols], got[r*cols:(r+1)*cols]
		hi, lo := softmaxRefRow(want, xr)
		cfg, err := s.Config(cols)
		if err != nil {
			t.Fatal(err)
		}
		tol := softmaxChainTol[T](cfg.Chain(cols), !cfg.Cached(cols), hi, lo)
		if err := kernels.CheckClose(fmt.Sprintf("softmax row %d", r), gr, want, func(c int) float64 { return tol(float64(xr[c]), want[c]) }); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSoftmaxInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewSoftmax[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		buf := func(n int) *engine.Buffer[float32] { return kerneltest.NewBuffer[float32](t, dev, n) }
		b12, b11 := buf(12), buf(11)
		for _, c := range []struct {
			name       string
			y, x       *engine.Buffer[float32]
			rows, cols int
		}{
			{"rows=0", b12, b12, 0, 4},
			{"cols=0", b12, b12, 3, 0},
			{"cols<0", b12, b12, 3, -4},
			{"nil y", nil, b12, 3, 4},
			{"nil x", b12, nil, 3, 4},
			{"short x", b12, b11, 3, 4},
			{"short y", b11, b12, 3, 4},
			{"over 2^31 elements", b12, b12, 1 << 16, 1 << 16},
		} {
			if err := s.Rows(q, c.y, c.x, c.rows, c.cols); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, err)
			}
		}
	})
}

// TestSoftmaxTolerance checks the bound's shape: relative to y, growing with the row's
// range and, on the online path, with its length.
func TestSoftmaxTolerance(t *testing.T) {
	u := kernels.Epsilon[float32]()
	if tol := SoftmaxTolerance[float32](1024, 256, false, 0, -1, 0, 0.5); tol < 0.5*17*u || tol > 0.5*40*u {
		t.Errorf("cached tolerance %g for y = 0.5, want a few tens of u", tol)
	}
	a := SoftmaxTolerance[float32](1024, 256, false, 80, -80, 80, 0.5)
	b := SoftmaxTolerance[float32](8192, 256, true, 80, -80, 80, 0.5)
	if !(a < b) || !(a > 0.5*160*u) {
		t.Errorf("tolerances %g (cached, range 160), %g (online): want cached < online and above 160u*y", a, b)
	}
	if tol := SoftmaxTolerance[float32](10, 256, false, 0, -200, -200, 0); tol <= 0 || tol > 1e-37 {
		t.Errorf("tolerance of an underflowing output %g", tol)
	}
	if math.IsInf(SoftmaxTolerance[float64](1<<20, 256, true, 1, -1, 0, 1), 0) {
		t.Error("float64 tolerance infinite")
	}
}

// TestSoftmaxClosed checks that Close is idempotent and that the launcher then refuses rows
// of either build with ErrClosed, the wide build made before Close (TestLayerNormClosed
// checks a launcher closed before it).
func TestSoftmaxClosed(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewSoftmax[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		const wide = 4097
		if _, err := s.Config(wide); err != nil {
			t.Fatal(err)
		}
		x := kerneltest.NewBuffer[float32](t, dev, wide)
		for range 2 {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for _, cols := range []int{1, wide} {
			if err := s.Rows(q, x, x, 1, cols); !errors.Is(err, engine.ErrClosed) {
				t.Errorf("softmax cols=%d after Close: %v, want ErrClosed", cols, err)
			}
		}
	})
}

// TestSoftmaxLoopLimit checks rows against the device's loop limit (kernels.LoopLimit):
// where it has one (Mesa's llvmpipe), a row of 1.1M elements, whose two walks would pass
// it, is refused naming the limit, before anything is launched; elsewhere Config takes it.
func TestSoftmaxLoopLimit(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewSoftmax[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		const cols = 1_100_000
		x := kerneltest.NewBuffer[float32](t, dev, cols)
		rowwisetest.LoopLimit(t, dev, cols, s.Config, func() error { return s.Rows(q, x, x, 1, cols) })
	})
}
