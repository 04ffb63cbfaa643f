package transpose

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// tiledTestShapes returns the tiled shapes the tests build: the default (as fitted to the
// device), a small tile with vectors and one without (so that small matrices cross several
// tiles and both paths of the kernel run), and beyond small sizes the classic 32 x 8 shape
// and the widest vector shape (one vector a pass).
func tiledTestShapes() []TiledTunables {
	s := []TiledTunables{TiledDefault, {Tile: 8, WG: 16, Vec: 2}, {Tile: 4, WG: 8, Vec: 1}}
	if !kerneltest.Small() {
		s = append(s, TiledTunables{Tile: 32, WG: 256, Vec: 1}, TiledTunables{Tile: 16, WG: 128, Vec: 2})
	}
	return s
}

// tiledMatrices returns the matrices the tests transpose with a tile of side tile: 1 x 1, a
// row and a column, sides one short of and one past the tile (odd and even, so that the
// vector and scalar accesses both run), non-square ones over several tiles, and with large
// (unless the tests run small) large ones with odd and even sides.
func tiledMatrices(tile int, large bool) [][2]int {
	m := [][2]int{{1, 1}, {1, 2}, {2, 1}, {1, 3*tile + 5}, {3*tile + 5, 1}, {max(tile-1, 1), tile + 1}, {tile + 1, max(tile-1, 1)},
		{tile, tile}, {tile + 1, tile + 1}, {2*tile + 3, 5}, {4, 3*tile + 2}, {2*tile + 2, tile + 2}}
	if kerneltest.Small() || !large {
		m = append(m, [2]int{45, 67}, [2]int{46, 66})
	} else {
		m = append(m, [2]int{1000, 1025}, [2]int{1025, 1000}, [2]int{1, 5000}, [2]int{5000, 1}, [2]int{1031, 1029}, [2]int{1024, 1026})
	}
	var out [][2]int // without the repeats of small tiles
	for _, x := range m {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestTiled(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testTiled[float32](t, dev, q, tiledTestShapes(), true) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testTiled[float64](t, dev, q, tiledTestShapes(), true)
		})
	})
}

// TestTiledSmallDevice builds the tiled variant as devices with fewer items per work-group
// and less local memory would (PRISM_MAX_WORK_GROUP, PRISM_MAX_LOCAL_MEMORY): Rusticl's 32
// items (32 x 32 tiles moved by 32 items), 8 items and 4 KiB (8 x 8 tiles: a work-group
// spans at least a tile row), and 1 item and 512 bytes (1 x 1 tiles). The default shape, fitted down, must
// still transpose exactly, and build no shape beyond the limits.
func TestTiledSmallDevice(t *testing.T) {
	for _, lim := range []struct{ wg, local string }{{"32", ""}, {"8", "4096"}, {"1", "512"}} {
		t.Run("wg="+lim.wg+",local="+lim.local, func(t *testing.T) {
			t.Setenv(kernels.EnvMaxWorkGroup, lim.wg)
			t.Setenv(kernels.EnvMaxLocalBytes, lim.local)
			kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
				t.Run("float32", func(t *testing.T) { testTiled[float32](t, dev, q, []TiledTunables{TiledDefault}, false) })
				t.Run("float64", func(t *testing.T) {
					if !dev.Info().FP64 {
						t.Skipf("%s reports no fp64", dev.ID())
					}
					testTiled[float64](t, dev, q, []TiledTunables{TiledDefault}, false)
				})
			})
		})
	}
}

// testTiled builds each of shapes on dev and transposes tiledMatrices with it (the large
// ones only with large), against the reference, exactly, with guard bands.
func testTiled[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue, shapes []TiledTunables, large bool) {
	rng := rand.New(rand.NewPCG(5, 0x7452))
	for _, sh := range shapes {
		tl, err := NewTiled[T](dev, sh)
		if err != nil {
			t.Fatalf("NewTiled(%s): %v", sh, err)
		}
		got := tl.Tunables()
		if err := got.check(); err != nil {
			t.Errorf("NewTiled(%s) built %v", sh, err)
		}
		lim := kernels.DeviceLimits(dev)
		if !lim.Fits(got.WG, 1) || (lim.LocalBytes > 0 && int64(got.Tile*(got.Tile+1)*engine.SizeOf[T]()) > lim.LocalBytes) {
			t.Errorf("NewTiled(%s) built %s, beyond the device's limits %+v", sh, got, lim)
		}
		t.Run(got.String(), func(t *testing.T) {
			for _, m := range tiledMatrices(got.Tile, large) {
				rows, cols := m[0], m[1]
				t.Run(fmt.Sprintf("rows=%d/cols=%d", rows, cols), func(t *testing.T) {
					a := kernels.RandFloats[T](rng, rows*cols, -1, 1)
					in := kerneltest.Guarded(t, q, a)
					out := kerneltest.Guarded(t, q, make([]T, rows*cols))
					if err := tl.Run(q, out, in, rows, cols); err != nil {
						t.Fatal(err)
					}
					res := kerneltest.Download(t, q, "transpose out", out, rows*cols)
					if err := kernels.CheckEqual("transpose out", res, TransposeRef(a, rows, cols)); err != nil {
						t.Fatal(err)
					}
					if err := kernels.CheckEqual("transpose in", kerneltest.Download(t, q, "transpose in", in, rows*cols), a); err != nil {
						t.Fatal(err) // the input untouched, its guards too
					}
				})
			}
		})
		if err := tl.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestTiledInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, sh := range []TiledTunables{{Tile: 0, WG: 1, Vec: 1}, {Tile: 3, WG: 3, Vec: 1}, {Tile: 32, WG: 16, Vec: 1},
			{Tile: 4, WG: 16, Vec: 2}, {Tile: 32, WG: 256, Vec: 3}, {Tile: 1, WG: 1, Vec: 2}, {Tile: 256, WG: 256, Vec: 1}} {
			if tl, err := NewTiled[float32](dev, sh); !errors.Is(err, engine.ErrInvalidArg) {
				tl.Close()
				t.Errorf("NewTiled(%s): %v, want ErrInvalidArg", sh, err)
			}
		}
		tl, err := NewTiled[float32](dev, TiledDefault)
		if err != nil {
			t.Fatal(err)
		}
		defer tl.Close()
		checkRunRefuses(t, dev, q, tl.Run)
	})
}

// TestFitTiled checks the shapes fitTiled derives from limits: items lowered before the
// tile, the tile lowered for local memory, vectors kept within the tile, and no shape
// where not even a 1 x 1 tile fits.
func TestFitTiled(t *testing.T) {
	lim := func(wg int, local int64) kernels.Limits {
		return kernels.Limits{WorkGroup: wg, ItemSizes: [3]int{wg, wg, wg}, LocalBytes: local}
	}
	for _, c := range []struct {
		lim  kernels.Limits
		es   int
		in   TiledTunables
		want TiledTunables
		ok   bool
	}{
		{lim(1024, 48<<10), 4, TiledDefault, TiledDefault, true},
		{kernels.Limits{}, 4, TiledDefault, TiledDefault, true},
		{lim(1024, 48<<10), 8, TiledTunables{Tile: 64, WG: 1024, Vec: 2}, TiledTunables{Tile: 64, WG: 1024, Vec: 2}, true},
		{lim(256, 32<<10), 8, TiledDefault, TiledTunables{Tile: 32, WG: 256, Vec: 2}, true}, // 64 x 65 doubles: 33 KiB
		{lim(128, 64<<10), 4, TiledDefault, TiledTunables{Tile: 64, WG: 128, Vec: 2}, true},
		{lim(32, 64<<10), 4, TiledDefault, TiledTunables{Tile: 32, WG: 32, Vec: 2}, true}, // Rusticl
		{lim(32, 4096), 8, TiledDefault, TiledTunables{Tile: 16, WG: 32, Vec: 2}, true},   // 32 x 33 doubles: 8.25 KiB
		{lim(1, 64<<10), 4, TiledDefault, TiledTunables{Tile: 1, WG: 1, Vec: 1}, true},
		{lim(1024, 15), 8, TiledDefault, TiledTunables{Tile: 1}, false},
	} {
		got, ok := fitTiled(c.lim, c.es, c.in)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("fitTiled(%+v, %d, %s) = %s, %v; want %s, %v", c.lim, c.es, c.in, got, ok, c.want, c.ok)
		}
		if ok {
			if err := got.check(); err != nil {
				t.Errorf("fitTiled(%+v, %d, %s): %v", c.lim, c.es, c.in, err)
			}
		}
	}
}

func TestParseTiledTunables(t *testing.T) {
	for _, c := range []struct {
		s    string
		want TiledTunables
	}{
		{"TILE=32 WG=256 VEC=1", TiledTunables{Tile: 32, WG: 256, Vec: 1}},
		{"vec=1", TiledTunables{Tile: 64, WG: 256, Vec: 1}},
		{"", TiledDefault},
		{TiledDefault.String(), TiledDefault},
	} {
		if got, err := ParseTiledTunables(c.s); err != nil || got != c.want {
			t.Errorf("ParseTiledTunables(%q) = %s, %v; want %s", c.s, got, err, c.want)
		}
	}
	for _, s := range []string{"TILE=48", "WG=100", "VEC=4", "TILE=32 WG=16", "TILE=8 WG=64 VEC=2", "TILE=64 TILE=32", "ROWS=8", "TILE=x", "TILE=256"} {
		if got, err := ParseTiledTunables(s); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("ParseTiledTunables(%q) = %s, %v; want ErrInvalidArg", s, got, err)
		}
	}
	for _, c := range tiledCandidates {
		if got, err := ParseTiledTunables(c.String()); err != nil || got != c {
			t.Errorf("candidate %s reads back as %s, %v", c, got, err)
		}
	}
}

// TestVariants checks the op's variants: tiled first (OpenCL C, every backend, with
// candidates), portable last, and that both run and verify through the op on every device,
// the tiled one reporting its shape.
func TestVariants(t *testing.T) {
	op := Family().Ops[0]
	if got := op.VariantNames(); !slices.Equal(got, []string{TiledName, kernels.PortableName}) {
		t.Fatalf("variants %v, want [%s %s]", got, TiledName, kernels.PortableName)
	}
	v := op.Variants[0]
	if v.Dialect != engine.DialectOpenCL || v.Backend != "" || v.MinCompute != 0 || v.Needs != nil || v.Vendor || v.Candidates == nil {
		t.Errorf("tiled variant %+v: want OpenCL C for every backend, with candidates", v)
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if err := v.Fits(dev); err != nil {
			t.Errorf("tiled does not fit %s: %v", dev.ID(), err)
		}
		size := 5000
		if kerneltest.Small() {
			size = 700
		}
		for _, c := range []struct{ variant, tunables string }{{TiledName, ""}, {TiledName, "TILE=16 WG=32 VEC=1"}, {kernels.PortableName, ""}} {
			t.Run(c.variant+"/"+c.tunables, func(t *testing.T) {
				in, err := op.Setup(t.Context(), q, kernels.Params{Size: size, Seed: 9, Variant: c.variant, Tunables: c.tunables})
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				if err := in.Run(t.Context(), q); err != nil {
					t.Fatal(err)
				}
				if err := in.Verify(t.Context(), q); err != nil {
					t.Fatal(err)
				}
				tr, _ := in.(kernels.TunablesReporter)
				if got := tr.Tunables(); (c.variant == TiledName) != (got != "") {
					t.Errorf("Tunables() = %q", got)
				}
			})
		}
	})
}
