package stencil

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

func TestStencil(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testStencil[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testStencil[float64](t, dev, q)
		})
	})
}

func testStencil[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue) {
	s, err := NewStencil[T](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tx, ty, tz := s.Tile()
	_, wy := s.WorkGroup()
	shapes2 := [][3]int{{1, 1, 1}, {3, 3, 1}, {7, 5, 1}, {2, 9, 1}, {tx - 1, ty + 1, 1}, {tx + 1, ty - 1, 1}, {tx, ty, 1}}
	shapes3 := [][3]int{{1, 1, 1}, {3, 3, 3}, {7, 9, 5}, {2, 5, 4}, {3, 4, tz + 1}, {5, wy + 1, tz - 1}}
	if kerneltest.Small() {
		shapes3 = append(shapes3, [3]int{tx + 1, 3, 4})
	} else {
		shapes2 = append(shapes2, [3]int{1025, 1031, 1}, [3]int{3, 5000, 1}, [3]int{5000, 3, 1})
		shapes3 = append(shapes3, [3]int{33, 17, 65}, [3]int{tx, wy, tz}, [3]int{1, 3, 3000}, [3]int{101, 103, 105})
	}
	rng := rand.New(rand.NewPCG(5, 0x5374))
	for _, kind := range StencilKinds {
		shapes := shapes3
		if kind.Dims() == 2 {
			shapes = shapes2
		}
		for _, sh := range shapes {
			nx, ny, nz := sh[0], sh[1], sh[2]
			t.Run(fmt.Sprintf("%s/%dx%dx%d", kind, nx, ny, nz), func(t *testing.T) {
				checkStencil(t, q, rng, kind, nx, ny, nz, func(out, in, w *engine.Buffer[T]) error {
					return s.Run(q, kind, out, in, w, nx, ny, nz)
				})
			})
		}
	}
}

// checkStencil runs a stencil of kind on a random nx x ny x nz grid with random weights
// (run: out = stencil(in, w), guarded buffers) and compares every point with StencilRef
// within StencilTolerance.
func checkStencil[T kernels.Float](t *testing.T, q *engine.Queue, rng *rand.Rand, kind StencilKind, nx, ny, nz int,
	run func(out, in, w *engine.Buffer[T]) error) {
	t.Helper()
	n := nx * ny * nz
	a := kernels.RandFloats[T](rng, n, -1, 1)
	w := kernels.RandFloats[T](rng, kind.Points(), -1, 1)
	out := kerneltest.Guarded(t, q, make([]T, n))
	if err := run(out, kerneltest.Guarded(t, q, a), kerneltest.Guarded(t, q, w)); err != nil {
		t.Fatal(err)
	}
	got := kerneltest.Download(t, q, "stencil out", out, n)
	want, mag := StencilRef(kind, a, w, nx, ny, nz)
	for i := range n {
		tol := StencilTolerance[T](kind, mag[i])
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol) {
			t.Fatalf("point %d (x=%d y=%d z=%d) = %v, want %v (|diff| %g > tol %g)", i, i%nx, (i/nx)%ny, i/(nx*ny), got[i], want[i], d, tol)
		}
	}
}

// TestStencilExact checks the neighbour bookkeeping with integer data: with small
// integer weights and inputs every sum is exact in float32, so the device must match the
// reference exactly, and a weight applied to the wrong neighbour cannot hide in rounding.
func TestStencilExact(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewStencil[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, kind := range StencilKinds {
			nx, ny, nz := 37, 11, 1
			if kind.Dims() == 3 {
				nx, ny, nz = 35, 10, 37
			}
			if kerneltest.Small() {
				nx, ny = 7, 6
				if kind.Dims() == 3 {
					nz = 5
				}
			}
			t.Run(fmt.Sprintf("%s/%dx%dx%d", kind, nx, ny, nz), func(t *testing.T) {
				n := nx * ny * nz
				a := make([]float32, n)
				for i := range a {
					a[i] = float32(i%13 - 6)
				}
				w := make([]float32, kind.Points())
				for k := range w {
					w[k] = float32(int(1) << (k % 11)) // distinct powers of two: a misplaced term shows
				}
				out := kerneltest.Guarded(t, q, make([]float32, n))
				if err := s.Run(q, kind, out, kerneltest.Guarded(t, q, a), kerneltest.Guarded(t, q, w), nx, ny, nz); err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, "stencil out", out, n)
				want, _ := StencilRef(kind, a, w, nx, ny, nz)
				g := make([]float64, n)
				for i := range got {
					g[i] = float64(got[i])
				}
				if err := kernels.CheckEqual("stencil out", g, want); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

func TestStencilInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewStencil[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		mk := func(n int) *engine.Buffer[float32] { return kerneltest.NewBuffer[float32](t, dev, n) }
		a, b, w5, w27 := mk(64), mk(64), mk(5), mk(27)
		for _, c := range []struct {
			name       string
			kind       StencilKind
			out, in, w *engine.Buffer[float32]
			nx, ny, nz int
		}{
			{"unknown kind", "9pt", b, a, w27, 4, 4, 1},
			{"nil out", Stencil5pt, nil, a, w5, 4, 4, 1},
			{"nil in", Stencil7pt, b, nil, w27, 4, 4, 4},
			{"nil weights", Stencil27pt, b, a, nil, 4, 4, 4},
			{"in place", Stencil5pt, a, a, w5, 4, 4, 1},
			{"zero nx", Stencil5pt, b, a, w5, 0, 4, 1},
			{"negative nz", Stencil7pt, b, a, w27, 4, 4, -1},
			{"2D with nz 2", Stencil5pt, b, a, w5, 4, 4, 2},
			{"in too short", Stencil27pt, b, a, w27, 4, 4, 5},
			{"out too short", Stencil5pt, mk(10), a, w5, 4, 4, 1},
			{"too few weights", Stencil7pt, b, a, w5, 4, 4, 4},
			{"over 2^31 points", Stencil7pt, b, a, w27, 1 << 11, 1 << 11, 1 << 10},
		} {
			t.Run(c.name, func(t *testing.T) {
				if err := s.Run(q, c.kind, c.out, c.in, c.w, c.nx, c.ny, c.nz); !errors.Is(err, engine.ErrInvalidArg) {
					t.Errorf("Run(%s, %dx%dx%d): %v, want ErrInvalidArg", c.kind, c.nx, c.ny, c.nz, err)
				}
			})
		}
	})
}
