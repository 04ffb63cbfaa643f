package scan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

func TestScan(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("int32", func(t *testing.T) { testScan(t, dev, q, newTestScan[int32](t, dev), true) })
		t.Run("uint32", func(t *testing.T) { testScan(t, dev, q, newTestScan[uint32](t, dev), true) })
		t.Run("float32", func(t *testing.T) { testScan(t, dev, q, newTestScan[float32](t, dev), true) })
	})
}

// TestScanShapes runs the scan at other tile shapes: one vector per item and tile (no
// raking), two, and three (a run of totals that is not a power of two), at the smaller
// sizes.
func TestScanShapes(t *testing.T) {
	shapes := [][2]int{{64, 4}, {64, 8}, {32, 12}}
	if kerneltest.Small() {
		shapes = shapes[:1]
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, sh := range shapes {
			t.Run(fmt.Sprintf("wg=%d/ipt=%d", sh[0], sh[1]), func(t *testing.T) {
				t.Run("int32", func(t *testing.T) { testScan(t, dev, q, newTestScanShape[int32](t, dev, sh[0], sh[1]), false) })
				t.Run("float32", func(t *testing.T) { testScan(t, dev, q, newTestScanShape[float32](t, dev, sh[0], sh[1]), false) })
			})
		}
	})
}

// newTestScan compiles the scan with its default tile, or a small one (four vectors per
// item, as the default) under Oclgrind.
func newTestScan[T ScanElem](t *testing.T, dev *engine.Device) *Scan[T] {
	wg, ipt := 256, 16
	if kerneltest.Small() {
		wg = 32
	}
	return newTestScanShape[T](t, dev, wg, ipt)
}

// newTestScanShape compiles the scan with a work-group of up to wg items and ipt elements
// per item.
func newTestScanShape[T ScanElem](t *testing.T, dev *engine.Device, wg, ipt int) *Scan[T] {
	s, err := newScan[T](dev, wg, ipt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// scanTestInputs returns n seeded inputs: integers over their whole range (the sums wrap),
// floats uniform in [-1, 1).
func scanTestInputs[T ScanElem](rng *rand.Rand, n int) []T {
	x := make([]T, n)
	var z T
	for i := range x {
		if _, ok := any(z).(float32); ok {
			x[i] = T(2*rng.Float32() - 1)
		} else {
			x[i] = T(rng.Uint32())
		}
	}
	return x
}

// testScan checks s at sizes around its vector width, work-group, tile and chunks; large
// adds the sizes where the chunks turn from one tile to several at the default number of
// groups, and for float32 one over 2^24.
func testScan[T ScanElem](t *testing.T, dev *engine.Device, q *engine.Queue, s *Scan[T], large bool) {
	wg, tile := s.WorkGroup(), s.Tile()
	rng := rand.New(rand.NewPCG(5, uint64(tile)))
	// Around the vector width (n%4 of every kind, a vector and its tail), the work-group
	// and the tile (the partial tile's whole vectors and loose elements).
	sizes := append([]int{2, 3, 4, 5, 8, 9}, kerneltest.EdgeSizes(wg)...)
	sizes = append(sizes, 4*wg-1, 4*wg+2, tile-5, tile-1, tile, tile+1, tile+6, 2*tile+1)
	if large && !kerneltest.Small() {
		full := s.maxGroups * tile
		sizes = append(sizes, full-1, full, full+1, full+2, 3*full+5)
		if _, isFloat := any(*new(T)).(float32); kerneltest.Large(dev) && isFloat {
			// Past 2^24 once a mode: the index arithmetic is the same for every type, and
			// float32's sums test the accumulation's error too (the three types took 20 s
			// of PoCL's time here).
			sizes = append(sizes, 1<<24+3)
		}
	}
	for _, n := range sizes {
		scanCase(t, q, s, rng, n, "")
	}
	// Few groups: chunks of several tiles (the carry; with 4 and more tiles the chunk sums'
	// loop of four vectors in flight), offsets of several chunks, a last chunk of every n%4
	// and of one vector less than a tile, at small sizes; and in place.
	s.maxGroups = 3
	for _, n := range []int{2*tile + 1, 3*tile - 1, 3 * tile, 3*tile + 1, 7*tile + 3, 9*tile + 2, 15*tile - 1, 16*tile - 5, 24*tile + 1} {
		scanCase(t, q, s, rng, n, "groups=3/")
	}
	for _, n := range []int{1, 5, 7*tile + 3} {
		scanInPlace(t, q, s, rng, n)
	}
	s.maxGroups = max(dev.Info().ComputeUnits, 1) * 16
	if large && !kerneltest.Small() {
		scanInPlace(t, q, s, rng, 3*s.maxGroups*tile+5)
	}
}

// scanCase checks the inclusive and exclusive scans of n random elements, with guard bands
// after the input (an over-read would show in the last sums), the output and the scratch.
func scanCase[T ScanElem](t *testing.T, q *engine.Queue, s *Scan[T], rng *rand.Rand, n int, prefix string) {
	x := scanTestInputs[T](rng, n)
	bx := kerneltest.Guarded(t, q, x)
	defer bx.Close()
	g := s.Scratch(n)
	for _, exclusive := range []bool{false, true} {
		kind := "inclusive"
		if exclusive {
			kind = "exclusive"
		}
		t.Run(fmt.Sprintf("%s%s/n=%d", prefix, kind, n), func(t *testing.T) {
			y := kerneltest.Guarded(t, q, make([]T, n))
			defer y.Close()
			var part *engine.Buffer[T]
			if g > 1 {
				part = kerneltest.Guarded(t, q, make([]T, g))
				defer part.Close()
			}
			if err := s.Into(q, y, bx, part, n, exclusive); err != nil {
				t.Fatal(err)
			}
			got := kerneltest.Download(t, q, "output", y, n)
			if g > 1 {
				kerneltest.Download(t, q, "scratch", part, g)
			}
			kerneltest.Download(t, q, "input", bx, n)
			if err := checkScan("scan", x, exclusive, s.Chain(n), got); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// scanInPlace checks y == x.
func scanInPlace[T ScanElem](t *testing.T, q *engine.Queue, s *Scan[T], rng *rand.Rand, n int) {
	for _, exclusive := range []bool{false, true} {
		t.Run(fmt.Sprintf("inplace/exclusive=%v/n=%d", exclusive, n), func(t *testing.T) {
			x := scanTestInputs[T](rng, n)
			bx := kerneltest.Guarded(t, q, x)
			defer bx.Close()
			part := kerneltest.Guarded(t, q, make([]T, s.Scratch(n)))
			defer part.Close()
			if err := s.Into(q, bx, bx, part, n, exclusive); err != nil {
				t.Fatal(err)
			}
			if err := checkScan("scan in place", x, exclusive, s.Chain(n), kerneltest.Download(t, q, "output", bx, n)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestScanAPI checks the allocating calls and argument validation.
func TestScanAPI(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		pub, err := NewScan[uint32](dev)
		if err != nil {
			t.Fatal(err)
		}
		pub.Close()
		s := newTestScan[uint32](t, dev)
		n := s.Tile()*3 + 5
		x := make([]uint32, n)
		for i := range x {
			x[i] = uint32(i%7) + 1
		}
		bx, err := engine.Upload(t.Context(), q, x)
		if err != nil {
			t.Fatal(err)
		}
		defer bx.Close()
		by, err := engine.NewBuffer[uint32](dev, n)
		if err != nil {
			t.Fatal(err)
		}
		defer by.Close()
		// One allocating call under Oclgrind: see TestReduceAPI.
		for _, exclusive := range []bool{false, true} {
			if exclusive && kerneltest.Small() {
				break
			}
			call := s.Inclusive
			if exclusive {
				call = s.Exclusive
			}
			if err := call(q, by, bx); err != nil {
				t.Fatal(err)
			}
			got, err := by.Download(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkScan("scan", x, exclusive, 0, got); err != nil {
				t.Error(err)
			}
		}

		short, _ := engine.NewBuffer[uint32](dev, 1)
		defer short.Close()
		s.maxGroups = 3 // so that n needs scratch
		if s.Scratch(n) < 2 {
			t.Fatalf("n=%d needs one group; the scratch cases below need two", n)
		}
		inval := []struct {
			name string
			err  error
		}{
			{"nil input", s.Into(q, by, nil, short, n, false)},
			{"nil output", s.Into(q, nil, bx, short, n, false)},
			{"n=0", s.Into(q, by, bx, short, 0, false)},
			{"n<0", s.Into(q, by, bx, short, -1, true)},
			{"n past the input", s.Into(q, by, bx, short, n+1, false)},
			{"n past the output", s.Into(q, short, bx, short, n, false)},
			{"scratch too short", s.Into(q, by, bx, short, n, false)},
			{"nil scratch", s.Into(q, by, bx, nil, n, true)},
			{"output shorter than input", s.Inclusive(q, short, bx)},
			{"nil input (Exclusive)", s.Exclusive(q, by, nil)},
		}
		for _, c := range inval {
			if !errors.Is(c.err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, c.err)
			}
		}
		if _, err := NewScan[float32](nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewScan(nil): %v, want ErrInvalidArg", err)
		}
		if _, err := newScan[float32](dev, 64, 6); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("newScan with 6 elements per item: %v, want ErrInvalidArg", err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// TestScanReplay runs a multi-group scan of the same buffers six times, new input each
// time, inclusive and exclusive alternating: the second time of each kind captures the two
// kernels as one graph (kernels.Replay) and the third replays it, which must take the
// buffers' new contents, not those of the capture. uint32 sums are exact.
func TestScanReplay(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s := newTestScan[uint32](t, dev)
		n := s.Tile()*5 + 3
		if s.Scratch(n) < 2 {
			t.Fatalf("%d elements make %d group(s); the test needs several", n, s.Scratch(n))
		}
		bx := kerneltest.NewBuffer[uint32](t, dev, n)
		by := kerneltest.NewBuffer[uint32](t, dev, n)
		part := kerneltest.NewBuffer[uint32](t, dev, s.Scratch(n))
		for i := range 6 {
			x := make([]uint32, n)
			for j := range x {
				x[j] = uint32((j*(i+3))%11) + uint32(i)
			}
			if err := bx.Write(t.Context(), q, 0, x); err != nil {
				t.Fatal(err)
			}
			exclusive := i%2 == 1
			if err := s.Into(q, by, bx, part, n, exclusive); err != nil {
				t.Fatal(err)
			}
			got, err := by.Download(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			want := ScanRef(x, exclusive)
			for j := range n {
				if float64(got[j]) != math.Mod(want[j], 1<<32) {
					t.Fatalf("run %d (exclusive %v): y[%d] = %d, want %v", i, exclusive, j, got[j], math.Mod(want[j], 1<<32))
				}
			}
		}
	})
}
