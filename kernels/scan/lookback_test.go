package scan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestLookback checks the cuda-lookback scan on every CUDA device at sizes around its tile
// (one tile, several, a partial last one, thousands: long look-backs), inclusive and
// exclusive, with guard bands after input and output, and in place; elsewhere NewLookback
// must refuse with ErrUnsupported.
func TestLookback(t *testing.T) {
	ran := false
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if dev.Backend() != "cuda" {
			if _, err := NewLookback[float32](dev); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("NewLookback on %s: %v, want ErrUnsupported", dev.ID(), err)
			}
			t.Skipf("the cuda-lookback scan is CUDA C++; %s is %s", dev.ID(), dev.Backend())
		}
		ran = true
		t.Run("int32", func(t *testing.T) { testLookback[int32](t, dev, q) })
		t.Run("uint32", func(t *testing.T) { testLookback[uint32](t, dev, q) })
		t.Run("float32", func(t *testing.T) { testLookback[float32](t, dev, q) })
	})
	if !ran && enginetest.Required("cuda") {
		t.Fatal("PRISM_REQUIRE names cuda, but no CUDA device ran the look-back scan")
	}
}

func testLookback[T ScanElem](t *testing.T, dev *engine.Device, q *engine.Queue) {
	l, err := NewLookback[T](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const tile = lookbackTile
	rng := rand.New(rand.NewPCG(9, tile))
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
