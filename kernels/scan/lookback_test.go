package scan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestLookback checks the cuda-lookback scan on every CUDA device at sizes around its tile
// (one tile, several, a partial last one, thousands: long look-backs), inclusive and
// exclusive, with guard bands after input and output, and in place; elsewhere NewLookback
// must refuse with ErrUnsupported.
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
		// The scalar loads and stores of full tiles, and a register budget for 4 blocks.
		t.Run("float32/VEC=1", func(t *testing.T) {
			testLookbackShape[float32](t, dev, q, lookbackShape{lookbackBlock, 16, 1, 4, 0})
		})
		// Smaller blocks: two warps (the block scan's warp-total step over two lanes), and four.
		t.Run("float32/BLOCK=64", func(t *testing.T) { testLookbackShape[float32](t, dev, q, lookbackShape{64, 32, 4, 24, 0}) })
		t.Run("int32/BLOCK=128", func(t *testing.T) { testLookbackShape[int32](t, dev, q, lookbackShape{128, 24, 4, 16, 0}) })
		// The scan within the tile during the look-back, the prefix added as it stores.
		for _, sh := range []lookbackShape{{lookbackBlock, lookbackItems, 4, 4, 1}, {lookbackBlock, 16, 4, 8, 1}, {64, 5, 1, 24, 1}} {
			t.Run("float32/"+strings.ReplaceAll(sh.String(), " ", ","), func(t *testing.T) { testLookbackShape[float32](t, dev, q, sh) })
			t.Run("int32/"+strings.ReplaceAll(sh.String(), " ", ","), func(t *testing.T) { testLookbackShape[int32](t, dev, q, sh) })
		}
	})
}

func testLookback[T ScanElem](t *testing.T, dev *engine.Device, q *engine.Queue) {
	testLookbackShape[T](t, dev, q, lookbackDefault)
}

func testLookbackShape[T ScanElem](t *testing.T, dev *engine.Device, q *engine.Queue, shape lookbackShape) {
	l, err := newLookback[T](dev, shape)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tile := shape.block * shape.items
	rng := rand.New(rand.NewPCG(9, uint64(tile)))
	sizes := []int{1, 2, 31, 33, tile - 1, tile, tile + 1, 2*tile + 1, 33*tile - 5, 1<<20 + 3}
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
			})
		}
		bx.Close()
	}
	t.Run("inplace", func(t *testing.T) {
		n := 5*tile + 3
		x := scanTestInputs[T](rng, n)
		bx := kerneltest.Guarded(t, q, x)
		defer bx.Close()
		if err := l.Into(q, bx, bx, n, false); err != nil {
			t.Fatal(err)
		}
		if err := checkScan("look-back scan in place", x, false, l.Chain(n), kerneltest.Download(t, q, "output", bx, n)); err != nil {
			t.Fatal(err)
		}
	})
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

// BenchmarkLookback times the look-back scan of 2^28 float32 (inclusive) on each CUDA
// device in several builds of scan.cu, to choose its shape: bytes are 8 per element (x read,
// y written once).
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
		for _, sh := range lookbackCandidates {
			b.Run(id+"/"+strings.ReplaceAll(sh.String(), " ", "/"), func(b *testing.B) {
				l, err := newLookback[float32](dev, sh)
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
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
	for _, c := range lookbackCandidates {
		if got, err := parseLookbackShape(c.String()); err != nil || got != c {
			t.Errorf("parseLookbackShape(%q) = %v, %v", c.String(), got, err)
		}
	}
	// Tuning files written before BLOCK was a tunable read as BLOCK=256.
	if got, err := parseLookbackShape("ITEMS=32 VEC=4 MINBLOCKS=4"); err != nil || got != lookbackDefault {
		t.Errorf("parseLookbackShape of the spelling without BLOCK = %v, %v; want %v", got, err, lookbackDefault)
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
	} {
		if _, err := parseLookbackShape(c.in); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseLookbackShape(%q) = %v; want ErrInvalidArg saying %q", c.in, err, c.want)
		}
	}
}
