package conv

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

func TestConv(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testConv[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testConv[float64](t, dev, q)
		})
	})
}

// convTestShapes covers every filter side 1..7, strides 1..3, paddings 0..3 (padding
// wider than the filter too, where whole outputs see only zeros), C = 1, 3, 5, images that
// are not multiples of the tiles, K below, at and above the tile, and batches of 2.
func convTestShapes(tileK, smallK, tileN int) []ConvShape {
	s := []ConvShape{
		{N: 1, C: 1, H: 1, W: 1, K: 1, R: 1, Stride: 1, Pad: 0},
		{N: 2, C: 1, H: 7, W: 9, K: 3, R: 1, Stride: 1, Pad: 0},
		{N: 2, C: 3, H: 5, W: 6, K: 2, R: 1, Stride: 2, Pad: 3},
		{N: 2, C: 3, H: 13, W: 11, K: 5, R: 3, Stride: 1, Pad: 1},
		{N: 2, C: 5, H: 9, W: 8, K: 4, R: 2, Stride: 2, Pad: 0},
		{N: 2, C: 1, H: 3, W: 3, K: 2, R: 3, Stride: 1, Pad: 0}, // one output: filter = image
		{N: 2, C: 3, H: 10, W: 7, K: smallK + 1, R: 4, Stride: 3, Pad: 2},
		{N: 2, C: 5, H: 11, W: 12, K: smallK, R: 5, Stride: 2, Pad: 2},
		{N: 2, C: 1, H: 5, W: 4, K: 3, R: 6, Stride: 1, Pad: 3},
		{N: 2, C: 3, H: 9, W: 10, K: 2, R: 7, Stride: 3, Pad: 3},
		{N: 2, C: 1, H: 2, W: 9, K: 1, R: 7, Stride: 2, Pad: 3},
	}
	if !kerneltest.Small() {
		s = append(s,
			ConvShape{N: 2, C: 5, H: 31, W: 33, K: tileK, R: 3, Stride: 1, Pad: 1},
			ConvShape{N: 2, C: 5, H: 11, W: 12, K: tileK + 1, R: 5, Stride: 2, Pad: 2},
			ConvShape{N: 2, C: 3, H: 17, W: 19, K: 2*tileK - 1, R: 7, Stride: 1, Pad: 3},
			ConvShape{N: 2, C: 16, H: tileN + 1, W: tileN - 1, K: 9, R: 1, Stride: 1, Pad: 0},
			ConvShape{N: 2, C: 8, H: 256, W: 256, K: 4, R: 3, Stride: 2, Pad: 1}, // input over 1M elements
		)
	}
	return s
}

func testConv[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue) {
	c, err := NewConv[T](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tk, tn := c.Tile(1 << 20)
	sk, _ := c.Tile(1)
	rng := rand.New(rand.NewPCG(7, 0x436f))
	// Under Oclgrind float64 runs four of float32's shapes (its kernels are float32's
	// source and tiles in another type; the shape is arguments): 1x1, padding wider than
	// the filter (stride 2), the filter as large as the image with a bias, and the big
	// tiles (K = smallK + 1, stride 3, padding 2). float32 runs them all (there float64
	// took 21 s, float32 16 s).
	_, f64 := any(T(0)).(float64)
	f64Small := []int{0, 2, 5, 6}
	for i, s := range convTestShapes(tk, sk, tn) {
		if kerneltest.Small() && f64 && !slices.Contains(f64Small, i) {
			continue
		}
		withBias := i%2 == 1
		t.Run(fmt.Sprintf("N%dC%dH%dW%dK%dR%ds%dp%d/bias=%v", s.N, s.C, s.H, s.W, s.K, s.R, s.Stride, s.Pad, withBias), func(t *testing.T) {
			checkConv(t, q, rng, s, withBias, c.Run)
		})
	}
}

// checkConv runs a convolution of shape s (run: Conv.Run or Regtile.Run) on random inputs,
// filters and, withBias, biases, into an output filled with sentinels (so an output left
// unwritten fails), and compares every output with ConvRef within ConvTolerance.
func checkConv[T kernels.Float](t *testing.T, q *engine.Queue, rng *rand.Rand, s ConvShape, withBias bool,
	run func(q *engine.Queue, out, in, filt, bias *engine.Buffer[T], s ConvShape) error) {
	t.Helper()
	a := kernels.RandFloats[T](rng, s.InLen(), -1, 1)
	f := kernels.RandFloats[T](rng, s.FilterLen(), -1, 1)
	var bias []T
	var bb *engine.Buffer[T]
	if withBias {
		bias = kernels.RandFloats[T](rng, s.K, -1, 1)
		bb = kerneltest.Guarded(t, q, bias)
	}
	init := make([]T, s.OutLen())
	for i := range init {
		init[i] = kerneltest.Sentinel[T]()
	}
	out := kerneltest.Guarded(t, q, init)
	if err := run(q, out, kerneltest.Guarded(t, q, a), kerneltest.Guarded(t, q, f), bb, s); err != nil {
		t.Fatal(err)
	}
	got := kerneltest.Download(t, q, "conv out", out, s.OutLen())
	want, mag := ConvRef(a, f, bias, s)
	for i := range want {
		tol := ConvTolerance[T](s, withBias, mag[i])
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol) {
			t.Fatalf("%v: output %d = %v, want %v (|diff| %g > tol %g)", s, i, got[i], want[i], d, tol)
		}
	}
}

// TestConvExact checks the index bookkeeping with small integers, whose sums are exact in
// float32: the device must match the reference exactly.
func TestConvExact(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		c, err := NewConv[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s := ConvShape{N: 2, C: 3, H: 11, W: 13, K: 6, R: 3, Stride: 2, Pad: 1}
		a, f, b := make([]float32, s.InLen()), make([]float32, s.FilterLen()), make([]float32, s.K)
		for i := range a {
			a[i] = float32(i%7 - 3)
		}
		for i := range f {
			f[i] = float32(i%5 - 2)
		}
		for i := range b {
			b[i] = float32(100 * i)
		}
		out := kerneltest.Guarded(t, q, make([]float32, s.OutLen()))
		if err := c.Run(q, out, kerneltest.Guarded(t, q, a), kerneltest.Guarded(t, q, f), kerneltest.Guarded(t, q, b), s); err != nil {
			t.Fatal(err)
		}
		got := kerneltest.Download(t, q, "conv out", out, s.OutLen())
		want, _ := ConvRef(a, f, b, s)
		g := make([]float64, len(got))
		for i := range got {
			g[i] = float64(got[i])
		}
		if err := kernels.CheckEqual("conv out", g, want); err != nil {
			t.Fatal(err)
		}
	})
}

func TestConvInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		c, err := NewConv[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		mk := func(n int) *engine.Buffer[float32] {
			b, err := engine.Upload(t.Context(), q, make([]float32, n)) // written: Oclgrind flags reads of unwritten memory
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}
		ok := ConvShape{N: 1, C: 2, H: 6, W: 6, K: 3, R: 3, Stride: 1, Pad: 1}
		in, f, out, bias := mk(ok.InLen()), mk(ok.FilterLen()), mk(ok.OutLen()), mk(ok.K)
		if err := c.Run(q, out, in, f, bias, ok); err != nil {
			t.Fatalf("valid shape %v: %v", ok, err)
		}
		with := func(edit func(*ConvShape)) ConvShape { s := ok; edit(&s); return s }
		for _, tc := range []struct {
			name             string
			out, in, f, bias *engine.Buffer[float32]
			s                ConvShape
		}{
			{"nil out", nil, in, f, nil, ok},
			{"nil in", out, nil, f, nil, ok},
			{"nil filters", out, in, nil, nil, ok},
			{"out is in", in, in, f, nil, ok},
			{"out is bias", out, in, f, out, ok},
			{"zero N", out, in, f, nil, with(func(s *ConvShape) { s.N = 0 })},
			{"zero C", out, in, f, nil, with(func(s *ConvShape) { s.C = 0 })},
			{"negative W", out, in, f, nil, with(func(s *ConvShape) { s.W = -6 })},
			{"zero K", out, in, f, nil, with(func(s *ConvShape) { s.K = 0 })},
			{"R 0", out, in, f, nil, with(func(s *ConvShape) { s.R = 0 })},
			{"R 8", out, in, f, nil, with(func(s *ConvShape) { s.R = 8 })},
			{"zero stride", out, in, f, nil, with(func(s *ConvShape) { s.Stride = 0 })},
			{"negative pad", out, in, f, nil, with(func(s *ConvShape) { s.Pad = -1 })},
			{"image smaller than filter", out, in, f, nil, with(func(s *ConvShape) { s.H, s.W, s.Pad = 2, 2, 0 })},
			{"in too short", out, in, f, nil, with(func(s *ConvShape) { s.C = 3 })},
			{"filters too short", out, in, f, nil, with(func(s *ConvShape) { s.K = 4 })},
			{"out too short", out, in, f, nil, with(func(s *ConvShape) { s.Pad = 2 })},
			{"bias too short", out, in, f, mk(2), ok},
			{"input over 2^31", out, in, f, nil, with(func(s *ConvShape) { s.N, s.C, s.H, s.W = 64, 64, 1<<10, 1<<10 })},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := c.Run(q, tc.out, tc.in, tc.f, tc.bias, tc.s); !errors.Is(err, engine.ErrInvalidArg) {
					t.Errorf("Run(%v): %v, want ErrInvalidArg", tc.s, err)
				}
			})
		}
	})
}

// TestConvLongReduction runs the reduction split into launches (Run's ranges of jChunk)
// on every device, the limit lowered so that a range is one or two steps of CBK: whole and
// partial ranges, with and without bias, the big and the small tiles, padding and stride.
// On a device that ends a work-item's loops (Mesa's llvmpipe) it also runs a 3 x 3
// convolution over 1,100 channels at the device's own limit, which gave wrong sums there in
// one launch.
func TestConvLongReduction(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		c, err := NewConv[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		rng := rand.New(rand.NewPCG(7, 3))
		if limit := kernels.LoopLimit(dev); limit > 0 && !kerneltest.Small() {
			s := ConvShape{N: 1, C: 1100, H: 5, W: 4, K: c.big.bm + 1, R: 3, Stride: 1, Pad: 1}
			if ch := c.big.jChunk(limit); ch <= 0 || ch >= s.C*s.R*s.R {
				t.Errorf("a range of %d reduction indices on a device that ends loops after %d: want below %d", ch, limit, s.C*9)
			}
			t.Run("device limit", func(t *testing.T) { checkConv(t, q, rng, s, true, c.Run) })
		}
		for _, steps := range []int{1, 2} {
			v := c.big
			c.loops = (steps*v.loopsPerStep()+64)*10/9 + 10
			if ch := v.jChunk(c.loops); ch != steps*v.bk {
				t.Fatalf("jChunk %d at a limit of %d; want %d steps of %d", ch, c.loops, steps, v.bk)
			}
			shapes := []ConvShape{
				{N: 2, C: 3, H: 6, W: 5, K: c.big.bm + 3, R: 3, Stride: 1, Pad: 1},
				{N: 1, C: 5, H: 7, W: 7, K: c.small.bm, R: 2, Stride: 2, Pad: 0},
			}
			if kerneltest.Small() {
				// Oclgrind: the big tiles in one-step ranges, with a bias.
				if steps > 1 {
					break
				}
				shapes = []ConvShape{{N: 1, C: 3, H: 3, W: 3, K: c.big.bm + 1, R: 3, Stride: 1, Pad: 1}}
			}
			for i, s := range shapes {
				withBias := i == 0
				t.Run(fmt.Sprintf("steps=%d/N%dC%dK%dR%d", steps, s.N, s.C, s.K, s.R), func(t *testing.T) { checkConv(t, q, rng, s, withBias, c.Run) })
			}
		}
	})
}
