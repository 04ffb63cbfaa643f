package rows

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// rowCases returns the [rows, cols] shapes the row-op tests run for the launcher's
// short-row kernel s, narrow build n and wide build w (rowConfigs): widths around the
// short-row kernel's 4-element vectors and their scalar path (1 to 5, 31 to 33, 127), at
// the edges of a row's vectors over its items (4*RowItems) and at its limit (1023, 1024,
// 1025); cols at the narrow build's work-group edges, at each build's cached/online
// boundary WorkGroup*Cache and past it, and the widths of transformers around the
// thresholds (1023 to 16385, the odd prime 12289). Rows 1, 3 and 1000 up to 4097 columns
// (the last gives the cases over a million elements), and for rows the short-row kernel
// takes, one more than it packs into a work-group (so that the last work-group is part
// empty); 1, 4 and 64 beyond (few rows of wide cols: PoCL runs them at a few GB/s); for
// float64 the largest row count only at 1024, 4097 and 16385. Under Small (Oclgrind) 1 and
// 3 rows that the narrow build caches (for float64 only at 5, 1024 and n.WorkGroup+1
// columns) and two work-groups of short rows at 5 and 1024 columns, one row of up to 4097
// columns on the wide build (float64: 4097), and for float32 one row past its boundary
// (16385 where the device takes work-groups of 1024).
func rowCases(s, n, w Config, double bool) [][2]int {
	scap, ncap, wcap := s.PerRow()*s.Cache, n.WorkGroup*n.Cache, w.WorkGroup*w.Cache
	v := 4 * s.PerRow()
	colsList := []int{1, 2, 3, 4, 5, 7, 31, 32, 33, 127, v - 1, v, v + 1, scap - 1, scap, scap + 1,
		n.WorkGroup - 1, n.WorkGroup, n.WorkGroup + 1, ncap, ncap + 1, 1023, 1024, 1025, 2048,
		3000, 4097, 8192, 12289, 16384, 16385, w.WorkGroup - 1, w.WorkGroup + 1, wcap, wcap + 1}
	slices.Sort(colsList)
	colsList = slices.Compact(colsList)
	var out [][2]int
	for _, c := range colsList {
		if c < 1 {
			continue
		}
		rowsList := []int{1, 3, 1000}
		if c <= scap {
			rowsList = []int{1, 3, s.Rows() + 1, 1000}
		}
		if c > 4097 {
			rowsList = []int{1, 4, 64}
		}
		for _, r := range rowsList {
			// Oclgrind: about 0.25 s per work-group of 256 items, 1 s of 1024.
			small := kerneltest.Small()
			short := c <= scap && r == s.Rows()+1 && r > 3
			switch {
			case small && c > 4097 && (double || r > 1 || c != wcap+1):
				continue
			case small && c > ncap && (r > 1 || (double && c != 4097)):
				continue
			case small && short && c != 5 && c != scap:
				continue
			case small && !short && r > 3:
				continue
			case small && double && c <= ncap && c != 5 && c != scap && c != n.WorkGroup+1:
				continue
			case double && r == 1000 && c != 1024 && c != 4097 && c != 16385:
				continue
			}
			out = append(out, [2]int{r, c})
		}
	}
	return out
}

// rowConfigs returns the short-row kernel's build, the narrow and the wide build of a
// launcher (Config(1), Config of the first width past the short-row kernel's, and
// Config(math.MaxInt32)), checking that rows of up to rowItems*4*rowVecs elements take the
// short-row kernel where the work-group holds rowItems items, and that the wide build
// caches more than the narrow one unless it is the narrow one.
func rowConfigs(t *testing.T, config func(cols int) (Config, error)) (s, n, w Config) {
	t.Helper()
	s, err := config(1)
	if err != nil {
		t.Fatal(err)
	}
	if s.RowItems < 1 || s.WorkGroup%s.RowItems != 0 || s.Cache != 4*rowVecs {
		t.Fatalf("short rows take %v, want the short-row kernel", s)
	}
	if s.RowItems == rowItems {
		if c, err := config(rowItems * 4 * rowVecs); err != nil || c != s {
			t.Fatalf("rows of %d take %v (%v), want %v", rowItems*4*rowVecs, c, err, s)
		}
	}
	if n, err = config(s.PerRow()*s.Cache + 1); err != nil {
		t.Fatal(err)
	}
	if n.RowItems != 0 {
		t.Fatalf("rows past the short-row kernel's take %v", n)
	}
	if w, err = config(math.MaxInt32); err != nil {
		t.Fatal(err)
	}
	if w != n && (w.Cache != rowWideCache || w.WorkGroup*w.Cache <= n.WorkGroup*n.Cache) {
		t.Fatalf("wide build %v caches no more than the narrow one %v", w, n)
	}
	t.Logf("builds: %v, %v, %v", s, n, w)
	return s, n, w
}

// rowTestInput returns a [rows, cols] input whose rows cycle through kinds: uniform in
// [-1, 1); wide, uniform in [-80, 80) (exp spans e^160: stability, underflow to 0); offset,
// 1000 plus [-80, 80); constant (every element equal).
func rowTestInput[T kernels.Float](rng *rand.Rand, rows, cols int) []T {
	x := make([]T, rows*cols)
	for r := range rows {
		off, mag := 0.0, 1.0
		switch r % 4 {
		case 1:
			mag = 80
		case 2:
			off, mag = 1000, 80
		case 3:
			off, mag = 4*rng.Float64()-2, 0
		}
		for c := range cols {
			x[r*cols+c] = T(off + mag*(2*rng.Float64()-1))
		}
	}
	return x
}

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
	sh, n, w := rowConfigs(t, s.Config)
	for _, rc := range rowCases(sh, n, w, double) {
		rows, cols := rc[0], rc[1]
		// Rows of 3 and 4, and a part-empty last work-group of short rows, run in place
		// (y = x) too.
		for _, inPlace := range []bool{false, true}[:1+b2i(rows == 3 || rows == 4 || rows == sh.Rows()+1)] {
			t.Run(fmt.Sprintf("rows=%d,cols=%d,inplace=%v", rows, cols, inPlace), func(t *testing.T) {
				x := rowTestInput[T](rng, rows, cols)
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

// TestRowsClosed checks that Close is idempotent and that the launchers then refuse rows of
// either build with ErrClosed, whether the wide build was made before Close (softmax) or not
// (layernorm).
func TestRowsClosed(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewSoftmax[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewLayerNorm[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		const wide = 4097
		if _, err := s.Config(wide); err != nil {
			t.Fatal(err)
		}
		x := kerneltest.NewBuffer[float32](t, dev, wide)
		for range 2 {
			if err := errors.Join(s.Close(), l.Close()); err != nil {
				t.Fatal(err)
			}
		}
		for _, cols := range []int{1, wide} {
			if err := s.Rows(q, x, x, 1, cols); !errors.Is(err, engine.ErrClosed) {
				t.Errorf("softmax cols=%d after Close: %v, want ErrClosed", cols, err)
			}
			if err := l.Rows(q, x, x, x, x, 1, cols, 1e-5); !errors.Is(err, engine.ErrClosed) {
				t.Errorf("layernorm cols=%d after Close: %v, want ErrClosed", cols, err)
			}
		}
		if _, err := l.Config(wide); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("layernorm Config(%d) after Close: %v, want ErrClosed", wide, err)
		}
	})
}
