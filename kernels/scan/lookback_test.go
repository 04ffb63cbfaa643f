package scan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestLookback checks the cuda-lookback scan on every CUDA device at sizes around its tile
// (one tile, several, a partial last one, thousands: long look-backs), inclusive and
// exclusive, with guard bands after input and output, and in place; elsewhere NewLookback
// must refuse with ErrUnsupported. The persistent builds (sm_80 and newer) run as well, at
// sizes around their grid besides.
func TestLookback(t *testing.T) {
	refuse := func(dev *engine.Device) error {
		l, err := NewLookback[float32](dev)
		if err == nil {
			l.Close()
		}
		return err
	}
	kerneltest.ForEachCUDADevice(t, "the cuda-lookback scan", refuse, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("int32", func(t *testing.T) { testLookback[int32](t, dev, q) })
		t.Run("uint32", func(t *testing.T) { testLookback[uint32](t, dev, q) })
		t.Run("float32", func(t *testing.T) { testLookback[float32](t, dev, q) })
		// NewLookback's build: the persistent kernel from sm_80 on.
		t.Run("default", func(t *testing.T) {
			l, err := NewLookback[float32](dev)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			cc := dev.Info().ComputeCapability
			if want := cc >= lookbackPersistCompute; (l.grid > 0) != want {
				t.Errorf("sm_%d: NewLookback built a persistent grid of %d blocks; want persistent %v", cc, l.grid, want)
			}
		})
		// The scalar loads and stores of full tiles, and a register budget for 4 blocks.
		t.Run("float32/VEC=1", func(t *testing.T) {
			testLookbackShape[float32](t, dev, q, lookbackShape{lookbackBlock, 16, 1, 4, 0, 0})
		})
		// Smaller blocks: two warps (the block scan's warp-total step over two lanes), and four.
		t.Run("float32/BLOCK=64", func(t *testing.T) { testLookbackShape[float32](t, dev, q, lookbackShape{64, 32, 4, 24, 0, 0}) })
		t.Run("int32/BLOCK=128", func(t *testing.T) { testLookbackShape[int32](t, dev, q, lookbackShape{128, 24, 4, 16, 0, 0}) })
		// The scan within the tile during the look-back, the prefix added as it stores.
		for _, sh := range []lookbackShape{{lookbackBlock, lookbackItems, 4, 4, 1, 0}, {lookbackBlock, 16, 4, 8, 1, 0}, {64, 5, 1, 24, 1, 0}} {
			t.Run("float32/"+strings.ReplaceAll(sh.String(), " ", ","), func(t *testing.T) { testLookbackShape[float32](t, dev, q, sh) })
			t.Run("int32/"+strings.ReplaceAll(sh.String(), " ", ","), func(t *testing.T) { testLookbackShape[int32](t, dev, q, sh) })
		}
		// The persistent kernel: the benchmark's builds in every element type, and tiles of
		// other shapes: blocks of two warps (one worker warp) with one vector per thread
		// (tiles of 256 elements, many per block) and with eight and the early scan, three
		// vectors (no spare slots) with the early scan, six (two-way shared conflicts), and
		// blocks of 1024 threads (a block scan over 32 warps, 31 worker warps).
		for _, sh := range lookbackPersistent {
			name := strings.ReplaceAll(sh.String(), " ", ",")
			t.Run("int32/"+name, func(t *testing.T) { testLookbackShape[int32](t, dev, q, sh) })
			t.Run("uint32/"+name, func(t *testing.T) { testLookbackShape[uint32](t, dev, q, sh) })
			t.Run("float32/"+name, func(t *testing.T) { testLookbackShape[float32](t, dev, q, sh) })
		}
		for _, sh := range []lookbackShape{{64, 4, 4, 8, 0, 8}, {64, 32, 4, 8, 1, 8}, {128, 12, 4, 4, 1, 4}, {128, 24, 4, 4, 0, 4}, {1024, 8, 4, 1, 1, 2}} {
			name := strings.ReplaceAll(sh.String(), " ", ",")
			t.Run("float32/"+name, func(t *testing.T) { testLookbackShape[float32](t, dev, q, sh) })
			t.Run("int32/"+name, func(t *testing.T) { testLookbackShape[int32](t, dev, q, sh) })
		}
	})
}

func testLookback[T ScanElem](t *testing.T, dev *engine.Device, q *engine.Queue) {
	testLookbackShape[T](t, dev, q, lookbackDefault)
}

func testLookbackShape[T ScanElem](t *testing.T, dev *engine.Device, q *engine.Queue, shape lookbackShape) {
	l, err := newLookback[T](dev, shape)
	if shape.persist > 0 && errors.Is(err, engine.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tile := shape.block * shape.items
	rng := rand.New(rand.NewPCG(9, uint64(tile)))
	sizes := []int{1, 2, 31, 33, tile - 1, tile, tile + 1, 2*tile + 1, 33*tile - 5, 1<<20 + 3}
	inplace := []int{5*tile + 3}
	if g := l.grid; g > 0 {
		// Fewer tiles than blocks, as many (the last one full), one more (a block takes a
		// second tile), and several per block (the last partial).
		t.Logf("persistent grid: %d blocks, %d bytes of shared memory each", g, l.shared)
		if g > 2 {
			sizes = append(sizes, (g/2)*tile+7)
		}
		sizes = append(sizes, g*tile, g*tile+1, 3*g*tile+tile/2)
		inplace = append(inplace, g*tile+1, 3*g*tile+tile/2)
	}
	if !kerneltest.Small() {
		sizes = append(sizes, 1<<24+7) // 4097 tiles: look-backs over many windows of 32
	}
	for _, n := range sizes {
		x := scanTestInputs[T](rng, n)
		bx := kerneltest.Guarded(t, q, x)
		for _, exclusive := range []bool{false, true} {
			t.Run(fmt.Sprintf("exclusive=%v/n=%d", exclusive, n), func(t *testing.T) {
				y := kerneltest.Guarded(t, q, make([]T, n))
				defer y.Close()
				if err := l.Into(q, y, bx, n, exclusive); err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, "output", y, n)
				kerneltest.Download(t, q, "input", bx, n)
				if err := checkScan("look-back scan", x, exclusive, l.Chain(n), got); err != nil {
					t.Fatal(err)
				}
				checkLookbackState(t, q, l, n)
			})
		}
		bx.Close()
	}
	for _, n := range inplace {
		for _, exclusive := range []bool{false, true} {
			t.Run(fmt.Sprintf("inplace/exclusive=%v/n=%d", exclusive, n), func(t *testing.T) {
				x := scanTestInputs[T](rng, n)
				bx := kerneltest.Guarded(t, q, x)
				defer bx.Close()
				if err := l.Into(q, bx, bx, n, exclusive); err != nil {
					t.Fatal(err)
				}
				if err := checkScan("look-back scan in place", x, exclusive, l.Chain(n), kerneltest.Download(t, q, "output", bx, n)); err != nil {
					t.Fatal(err)
				}
				checkLookbackState(t, q, l, n)
			})
		}
	}
	for _, bad := range []struct {
		name string
		n    int
	}{{"zero", 0}, {"past the input", 1 << 20}} {
		b := kerneltest.Guarded(t, q, make([]T, 5))
		if err := l.Into(q, b, b, bad.n, false); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s: %v, want ErrInvalidArg", bad.name, err)
		}
	}
}

// checkLookbackState checks the scratch a scan of n elements left: every tile's status
// word holds its inclusive prefix (flag 2), word 1 is untouched, and the counter took every
// tile once: as many numbers as tiles with a block per tile; with the persistent grid,
// exactly one past the last tile per block besides (a block ends at the first number past
// the last tile that it takes, and takes none after it).
func checkLookbackState[T ScanElem](t *testing.T, q *engine.Queue, l *Lookback[T], n int) {
	t.Helper()
	st, err := l.state.Download(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	tiles, blocks := l.tiles(n), l.blocks(n)
	want := tiles
	if l.grid > 0 {
		want = tiles + blocks
	}
	if c := int(st[0]); c != want {
		t.Errorf("n=%d: the tile counter reads %d after %d tiles in %d blocks; want %d", n, c, tiles, blocks, want)
	}
	if st[1] != 0 {
		t.Errorf("n=%d: state word 1 reads %#x, want 0", n, st[1])
	}
	for j := range tiles {
		if f := st[3+2*j]; f != 2 {
			t.Fatalf("n=%d: tile %d of %d: status flag %d, want 2 (its inclusive prefix)", n, j, tiles, f)
		}
	}
}

// BenchmarkLookback times the look-back scan of 2^28 float32 (inclusive) on each CUDA
// device in several builds of scan.cu, to choose its shape: the candidates, then the
// persistent builds (reporting their grid in blocks); bytes are 8 per element (x read, y
// written once).
func BenchmarkLookback(b *testing.B) {
	kerneltest.ForEachBenchDevice(b, "cuda", func(b *testing.B, id string, dev *engine.Device, q *engine.Queue) {
		const n = 1 << 28
		x, err := engine.NewBuffer[float32](dev, n)
		if err != nil {
			b.Fatal(err)
		}
		y, err := engine.NewBuffer[float32](dev, n)
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Fill(q, 0, n, 1); err != nil {
			b.Fatal(err)
		}
		for _, sh := range append(slices.Clip(lookbackCandidates), lookbackPersistent...) {
			b.Run(id+"/"+strings.ReplaceAll(sh.String(), " ", "/"), func(b *testing.B) {
				l, err := newLookback[float32](dev, sh)
				if sh.persist > 0 && errors.Is(err, engine.ErrUnsupported) {
					b.Skip(err)
				}
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				if l.grid > 0 {
					b.ReportMetric(float64(l.blocks(n)), "blocks")
				}
				b.SetBytes(8 * n)
				for i := 0; i < b.N+1; i++ {
					if i == 1 {
						if err := q.Finish(b.Context()); err != nil {
							b.Fatal(err)
						}
						b.ResetTimer() // the first run builds and warms
					}
					if err := l.Into(q, y, x, n, false); err != nil {
						b.Fatal(err)
					}
				}
				if err := q.Finish(b.Context()); err != nil {
					b.Fatal(err)
				}
			})
		}
		x.Close()
		y.Close()
	})
}

// TestLookbackTunables checks that the look-back scan's candidates read back as written,
// and that malformed tunables are refused with ErrInvalidArg naming the problem.
func TestLookbackTunables(t *testing.T) {
	for _, c := range append(slices.Clip(lookbackCandidates), lookbackPersistent...) {
		if got, err := parseLookbackShape(c.String()); err != nil || got != c {
			t.Errorf("parseLookbackShape(%q) = %v, %v", c.String(), got, err)
		}
	}
	// Tuning files written before BLOCK was a tunable read as BLOCK=256; PERSIST=0 is the
	// kernel of a block per tile, as when it is left out.
	if got, err := parseLookbackShape("ITEMS=32 VEC=4 MINBLOCKS=4"); err != nil || got != lookbackDefault {
		t.Errorf("parseLookbackShape of the spelling without BLOCK = %v, %v; want %v", got, err, lookbackDefault)
	}
	if got, err := parseLookbackShape(lookbackDefault.String() + " PERSIST=0"); err != nil || got != lookbackDefault {
		t.Errorf("parseLookbackShape with PERSIST=0 = %v, %v; want %v", got, err, lookbackDefault)
	}
	// The persistent kernel's two stages: 9 bytes per element of the tile where ITEMS/4 is
	// even (a spare slot per 8), 8 where it is odd (scan.cu's header).
	for _, c := range []struct {
		sh   lookbackShape
		want int64
	}{{lookbackShape{256, 32, 4, 3, 0, 3}, 9 * 8192}, {lookbackShape{256, 16, 4, 6, 0, 6}, 9 * 4096}, {lookbackShape{128, 24, 4, 4, 0, 4}, 9 * 3072},
		{lookbackShape{128, 12, 4, 4, 1, 4}, 8 * 1536}, {lookbackShape{64, 4, 4, 8, 0, 8}, 8 * 256}} {
		if got := c.sh.persistShared(); got != c.want {
			t.Errorf("%v: persistShared() = %d bytes, want %d", c.sh, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"ITEMS=16 VEC=2 MINBLOCKS=8", "VEC=2: 1 or 4"},
		{"ITEMS=18 VEC=4 MINBLOCKS=8", "ITEMS=18 is not a multiple of VEC=4"},
		{"ITEMS=16 VEC=4", "MINBLOCKS missing"},
		{"BLOCK=128", "ITEMS, VEC, MINBLOCKS missing"},
		{"ITEMS=16 VEC=4 MINBLOCKS=33", "MINBLOCKS=33 is out of its range 1..32"},
		{"ITEMS=16 VEC=4 MINBLOCKS=9", "MINBLOCKS=9 blocks of BLOCK=256 are 2304 threads"},
		{"BLOCK=100 ITEMS=16 VEC=4 MINBLOCKS=8", "BLOCK=100 is not a whole number of warps"},
		{"BLOCK=512 ITEMS=32 VEC=4 MINBLOCKS=2", "16384 elements does not fit"},
		{"ITEMS=16 VEC=4 MINBLOCKS=8 GRID=2", "unknown key GRID"},
		{"ITEMS=16 VEC=4 MINBLOCKS=8 EARLY=2", "EARLY=2 is out of its range 0..1"},
		{"ITEMS=16 VEC=4 MINBLOCKS=8 PERSIST=33", "PERSIST=33 is out of its range 0..32"},
		{"ITEMS=16 VEC=4 MINBLOCKS=8 PERSIST=-1", "PERSIST=-1 is out of its range 0..32"},
		{"ITEMS=16 VEC=1 MINBLOCKS=8 PERSIST=4", "PERSIST=4 needs VEC=4"},
		{"BLOCK=32 ITEMS=8 VEC=4 MINBLOCKS=8 PERSIST=8", "PERSIST=8 needs BLOCK of at least 64"},
		{"ITEMS=16 VEC=4 MINBLOCKS=4 PERSIST=9", "PERSIST=9 blocks of BLOCK=256 are 2304 threads"},
		{"BLOCK=1024 ITEMS=8 VEC=4 MINBLOCKS=1 PERSIST=3", "PERSIST=3 blocks of BLOCK=1024 are 3072 threads"},
		{"BLOCK=512 ITEMS=32 VEC=4 MINBLOCKS=2 PERSIST=2", "16384 elements does not fit"},
	} {
		if _, err := parseLookbackShape(c.in); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseLookbackShape(%q) = %v; want ErrInvalidArg saying %q", c.in, err, c.want)
		}
	}
}
