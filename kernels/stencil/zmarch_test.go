package stencil

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// zmarchOdd is a zmarch shape whose every tunable differs from the defaults: 3 rows per
// item, a chunk of 5 planes (odd sizes that divide nothing), 8 x 2 items.
var zmarchOdd = ZMarchTunables{SX: 8, SY: 2, RY: 3, ZC: 5}

// zmarchOddShapes returns the odd shape in each form of stencil kind's kernel: the
// 27-point stencil's with LM 0 and 1.
func zmarchOddShapes(kind StencilKind) []ZMarchTunables {
	c := []ZMarchTunables{zmarchOdd}
	if kind == Stencil27pt {
		lm := zmarchOdd
		lm.LM = 1
		c = append(c, lm)
	}
	return c
}

// zmarchTestShapes returns the zmarch shapes the tests build for stencil kind: the odd
// shapes (the only ones at small sizes), then the default (and for the 27-point stencil
// the default in the other form) and one item per column with a chunk of one plane.
func zmarchTestShapes(kind StencilKind) []ZMarchTunables {
	c := zmarchOddShapes(kind)
	if kerneltest.Small() {
		return c
	}
	d := ZMarchDefault(kind)
	c = append(c, d, ZMarchTunables{SX: 4, SY: 4, RY: 1, ZC: 1})
	if kind == Stencil27pt {
		d.LM = 1 - d.LM
		c = append(c, d)
	}
	return c
}

// zmarchGrids returns the grids that straddle the edges of z's tile (tx x ty columns, tz
// planes): the smallest grids (no interior, and 3 x 3 x 3 with one interior point), grids
// one short of and one past the tile in x, y and z, and a z-chunk that does not divide nz.
func zmarchGrids(tx, ty, tz int) [][3]int {
	g := [][3]int{{1, 1, 1}, {3, 3, 3}, {2, 5, 4}, {4, 3, 2}, {3, 4, tz + 1}, {tx + 1, max(ty-1, 1), 3}, {max(tx-1, 1), ty + 1, 2*tz + 3}}
	if !kerneltest.Small() {
		g = append(g, [3]int{tx, ty, tz}, [3]int{2*tx + 3, 2*ty + 1, tz + 2}, [3]int{33, 17, 40}, [3]int{1, 3, 70})
	}
	return g
}

func TestZMarch(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testZMarch[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testZMarch[float64](t, dev, q)
		})
	})
}

func testZMarch[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue) {
	rng := rand.New(rand.NewPCG(7, 0x7a6d))
	for _, kind := range []StencilKind{Stencil7pt, Stencil27pt} {
		shapes := zmarchTestShapes(kind)
		if engine.SizeOf[T]() == 8 {
			shapes = zmarchOddShapes(kind) // every edge case, once
		}
		for _, sh := range shapes {
			z, err := NewZMarch[T](dev, kind, sh)
			if err != nil {
				t.Fatal(err)
			}
			defer z.Close()
			tx, ty, tz := z.Tile()
			for _, g := range zmarchGrids(tx, ty, tz) {
				nx, ny, nz := g[0], g[1], g[2]
				t.Run(fmt.Sprintf("%s/%s/%dx%dx%d", strings.ReplaceAll(z.Tunables().String(), " ", ","), kind, nx, ny, nz), func(t *testing.T) {
					checkStencil(t, q, rng, kind, nx, ny, nz, func(out, in, w *engine.Buffer[T]) error {
						return z.Run(q, out, in, w, nx, ny, nz)
					})
				})
			}
		}
	}
}

// TestZMarchExact checks the neighbour bookkeeping of the zmarch kernels with integer data
// (every sum exact in float32, see TestStencilExact) on a grid that is no multiple of the
// odd test shape's tile in any dimension.
func TestZMarchExact(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		nx, ny, nz := 19, 11, 13
		if kerneltest.Small() {
			nx, ny, nz = 10, 8, 7
		}
		for _, kind := range []StencilKind{Stencil7pt, Stencil27pt} {
			for _, sh := range zmarchOddShapes(kind) {
				t.Run(fmt.Sprintf("%s/%s/%dx%dx%d", kind, strings.ReplaceAll(sh.String(), " ", ","), nx, ny, nz), func(t *testing.T) {
					z, err := NewZMarch[float32](dev, kind, sh)
					if err != nil {
						t.Fatal(err)
					}
					defer z.Close()
					n := nx * ny * nz
					a := make([]float32, n)
					for i := range a {
						a[i] = float32(i%13 - 6)
					}
					w := make([]float32, kind.Points())
					for k := range w {
						w[k] = float32(int(1) << (k % 11))
					}
					out := kerneltest.Guarded(t, q, make([]float32, n))
					if err := z.Run(q, out, kerneltest.Guarded(t, q, a), kerneltest.Guarded(t, q, w), nx, ny, nz); err != nil {
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
		}
	})
}

// TestZMarchSmallGroups builds the zmarch kernels as a device with at most 8 items per
// work-group would (PRISM_MAX_WORK_GROUP): SX and SY shrink, and the sweep stays right.
func TestZMarchSmallGroups(t *testing.T) {
	t.Setenv(kernels.EnvMaxWorkGroup, "8")
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, kind := range []StencilKind{Stencil7pt, Stencil27pt} {
			d := ZMarchDefault(kind)
			z, err := NewZMarch[float32](dev, kind, d)
			if err != nil {
				t.Fatal(err)
			}
			defer z.Close()
			if sh := z.Tunables(); sh.SX*sh.SY > 8 || sh.RY != d.RY || sh.ZC != d.ZC || sh.LM != d.LM {
				t.Fatalf("%s: built as %s under a limit of 8 items", kind, sh)
			}
			nx, ny, nz := 11, 5, 4
			rng := rand.New(rand.NewPCG(9, 1))
			n := nx * ny * nz
			a := kernels.RandFloats[float32](rng, n, -1, 1)
			w := kernels.RandFloats[float32](rng, kind.Points(), -1, 1)
			out := kerneltest.Guarded(t, q, make([]float32, n))
			if err := z.Run(q, out, kerneltest.Guarded(t, q, a), kerneltest.Guarded(t, q, w), nx, ny, nz); err != nil {
				t.Fatal(err)
			}
			got := kerneltest.Download(t, q, "stencil out", out, n)
			want, mag := StencilRef(kind, a, w, nx, ny, nz)
			for i := range n {
				if d := math.Abs(float64(got[i]) - want[i]); !(d <= StencilTolerance[float32](kind, mag[i])) {
					t.Fatalf("%s: point %d = %v, want %v", kind, i, got[i], want[i])
				}
			}
		}
	})
}

func TestZMarchInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if _, err := NewZMarch[float32](dev, Stencil5pt, ZMarchDefault(Stencil7pt)); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewZMarch(5pt): %v, want ErrInvalidArg", err)
		}
		if _, err := NewZMarch[float32](dev, Stencil7pt, ZMarchTunables{SX: 32, SY: 8, RY: 2, ZC: 32, LM: 1}); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewZMarch(7pt, LM=1): %v, want ErrInvalidArg", err)
		}
		if _, err := NewZMarch[float32](dev, Stencil7pt, ZMarchTunables{SX: 32, SY: 8, RY: 0, ZC: 32}); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewZMarch(RY=0): %v, want ErrInvalidArg", err)
		}
		z, err := NewZMarch[float32](dev, Stencil27pt, ZMarchDefault(Stencil27pt))
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		mk := func(n int) *engine.Buffer[float32] { return kerneltest.NewBuffer[float32](t, dev, n) }
		a, b, w7, w27 := mk(64), mk(64), mk(7), mk(27)
		for _, c := range []struct {
			name       string
			out, in, w *engine.Buffer[float32]
			nx, ny, nz int
		}{
			{"nil in", b, nil, w27, 4, 4, 4},
			{"in place", a, a, w27, 4, 4, 4},
			{"zero ny", b, a, w27, 4, 0, 4},
			{"in too short", b, a, w27, 4, 4, 5},
			{"too few weights", b, a, w7, 4, 4, 4},
		} {
			if err := z.Run(q, c.out, c.in, c.w, c.nx, c.ny, c.nz); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: Run(%dx%dx%d): %v, want ErrInvalidArg", c.name, c.nx, c.ny, c.nz, err)
			}
		}
	})
}

func TestZMarchTunables(t *testing.T) {
	for _, kind := range []StencilKind{Stencil7pt, Stencil27pt} {
		cs := zmarchCandidates(kind)
		if cs[0] != ZMarchDefault(kind) {
			t.Errorf("%s: first candidate %s, want the default %s", kind, cs[0], ZMarchDefault(kind))
		}
		for _, c := range cs {
			got, err := ParseZMarchTunables(kind, c.String())
			if err != nil || got != c {
				t.Errorf("%s: ParseZMarchTunables(%q) = %v, %v", kind, c.String(), got, err)
			}
			if c.LM != 0 && kind != Stencil27pt {
				t.Errorf("%s: candidate %s has LM", kind, c)
			}
		}
		want := ZMarchDefault(kind)
		want.ZC = 64
		if got, err := ParseZMarchTunables(kind, "ZC=64"); err != nil || got != want {
			t.Errorf("%s: ParseZMarchTunables(ZC=64) = %v, %v; want %v", kind, got, err, want)
		}
		for _, bad := range []string{"SX=0", "BM=4", "RY", "RY=x", "RY=17", "ZC=2000", "LM=2", "SY=-1"} {
			if _, err := ParseZMarchTunables(kind, bad); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: ParseZMarchTunables(%q): %v, want ErrInvalidArg", kind, bad, err)
			}
		}
	}
}

// TestZMarchVariant checks the variant lists: the 3D ops run zmarch first and the portable
// kernel last; the 2D op has only its portable kernel; zmarch fits every device and the
// op's setup through it verifies.
func TestZMarchVariant(t *testing.T) {
	for _, op := range Family().Ops {
		names := op.VariantNames()
		want := []string{kernels.PortableName}
		if strings.Contains(op.Name, "/7pt/") || strings.Contains(op.Name, "/27pt/") {
			want = []string{ZMarchName, kernels.PortableName}
		}
		if fmt.Sprint(names) != fmt.Sprint(want) {
			t.Errorf("%s: variants %v, want %v", op.Name, names, want)
		}
		for _, v := range op.Variants {
			if v.Doc == "" || v.Dialect != engine.DialectOpenCL {
				t.Errorf("%s: variant %s: doc %q, dialect %v", op.Name, v.Name, v.Doc, v.Dialect)
			}
			if v.Name == ZMarchName && (v.Tunables == "" || v.Candidates == nil || v.Backend != "" || v.Needs != nil) {
				t.Errorf("%s: zmarch variant %+v", op.Name, v)
			}
		}
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, op := range Family().Ops {
			if len(op.Variants) < 2 {
				continue
			}
			v, err := op.Pick(dev, kernels.Params{})
			if err != nil || v.Name != ZMarchName {
				t.Errorf("%s: picked %s (%v), want %s", op.Name, v.Name, err, ZMarchName)
			}
			for _, tun := range []string{"", "SX=8 SY=2 RY=3 ZC=5"} {
				in, err := v.Setup(t.Context(), q, kernels.Params{Size: 10 * 10 * 10, Seed: 3, Tunables: tun})
				if err != nil {
					t.Fatalf("%s: setup %q: %v", op.Name, tun, err)
				}
				if err := in.Run(t.Context(), q); err != nil {
					t.Fatal(err)
				}
				if err := in.Verify(t.Context(), q); err != nil {
					t.Errorf("%s %q: %v", op.Name, tun, err)
				}
				if tr, ok := in.(kernels.TunablesReporter); !ok || !strings.HasPrefix(tr.Tunables(), "SX=") {
					t.Errorf("%s: tunables reported as %v", op.Name, in)
				}
				in.Close()
			}
		}
	})
}
