package fft

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

// TestFFTRef checks the float64 reference against the O(n^2) definition, the real-input
// reference against the complex one, and the twiddle tables against float64.
func TestFFTRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		x := kernels.RandFloats[float64](rng, 2*n, -1, 1)
		for _, inv := range []bool{false, true} {
			got, want := FFTRef(x, n, 1, inv), DFTRef(x, n, inv)
			for i := range want {
				if d := math.Abs(got[i] - want[i]); d > 1e-12*float64(n) {
					t.Fatalf("n=%d inverse=%v: element %d = %v, want %v", n, inv, i, got[i], want[i])
				}
			}
		}
		if n >= 2 {
			re := kernels.RandFloats[float64](rng, n, -1, 1)
			cx := make([]float64, 2*n)
			for i, v := range re {
				cx[2*i] = v
			}
			got, full := RealFFTRef(re, n, 1), FFTRef(cx, n, 1, false)
			for i := range got {
				if got[i] != full[i] {
					t.Fatalf("real n=%d: element %d = %v, want %v", n, i, got[i], full[i])
				}
			}
		}
	}
	// The four-step form of the reference (over 4096 points) against the direct radix-2 one.
	for _, n := range []int{1 << 13, 1 << 15} {
		x := kernels.RandFloats[float64](rng, 2*n, -1, 1)
		for _, inv := range []bool{false, true} {
			got := FFTRef(x, n, 1, inv)
			a := make([]complex128, n)
			for k := range a {
				a[k] = complex(x[2*k], x[2*k+1])
			}
			fft64(a, refTwiddles(n, inv))
			for k, v := range a {
				if d := math.Hypot(got[2*k]-real(v), got[2*k+1]-imag(v)); d > 1e-11 {
					t.Fatalf("four-step n=%d inverse=%v: element %d = (%v, %v), want %v", n, inv, k, got[2*k], got[2*k+1], v)
				}
			}
		}
	}
	coarse, fine := FFTTwiddles[float32]()
	for i := 0; i < len(coarse)/2; i++ {
		for _, tab := range []struct {
			v []float32
			n float64
		}{{coarse, 4096}, {fine, 1 << 24}} {
			a := -2 * math.Pi * float64(i) / tab.n
			d := math.Hypot(float64(tab.v[2*i])-math.Cos(a), float64(tab.v[2*i+1])-math.Sin(a))
			if d > kernels.Epsilon[float32]() {
				t.Fatalf("twiddle %d of 1/%v: error %g > u", i, tab.n, d)
			}
		}
	}
	if FFTTolerance[float32](1<<24) > 2e-5 || FFTTolerance[float32](2) <= 0 {
		t.Errorf("FFTTolerance: %g at 2^24, %g at 2", FFTTolerance[float32](1<<24), FFTTolerance[float32](2))
	}
}

func TestFFT(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testFFT[float32](t, dev, q, false) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testFFT[float64](t, dev, q, true)
		})
	})
}

// fftLengths are the 1D lengths the tests transform: every power of two to 2^12, then 2^16
// and 2^20 (to 2^10 when small; 2^20 only where kerneltest.Large).
func fftLengths(short bool) []int {
	var ns []int
	top := 12
	if kerneltest.Small() {
		top = 10
	}
	for lg := 0; lg <= top; lg++ {
		ns = append(ns, 1<<lg)
	}
	if short {
		ns = []int{1, 2, 8, 64, 1 << 10}
		if kerneltest.Small() {
			ns = ns[:4]
		}
	}
	if !kerneltest.Small() {
		if short {
			return append(ns, 1<<13)
		}
		ns = append(ns, 1<<13, 1<<16, 1<<20)
	}
	return ns
}

func testFFT[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue, short bool) {
	f, err := NewFFT[T](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	t.Logf("work-group %d, local length %d", f.WorkGroup(), f.LocalLen())
	testFFTOn(t, dev, q, f, short)
}

// testFFTOn checks f (the portable FFT or the regradix variant) at the family's test
// lengths: every 1D length of fftLengths, batches, 2D shapes and real-input transforms.
func testFFTOn[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue, f *FFT[T], short bool) {
	rng := rand.New(rand.NewPCG(7, uint64(dev.Info().ComputeUnits)))
	for _, n := range fftLengths(short) {
		if n > 1<<16 && !kerneltest.Large(dev) {
			continue // 2^20: PoCL runs it
		}
		fftCheckC2C(t, q, f, rng, n)
	}
	// Batches of 3 (a last work-group left partly empty), out of place and in place.
	batchNs := []int{2, 8, 32, 2048, 1 << 13}
	if kerneltest.Small() {
		batchNs = []int{2, 8, 32, 256}
	}
	if short {
		batchNs = batchNs[1:3]
	}
	for _, n := range batchNs {
		fftCheckBatch(t, q, f, rng, n, 3)
	}
	shapes := [][2]int{{4, 8}, {1, 16}, {16, 1}, {64, 32}, {1024, 512}}
	if kerneltest.Small() {
		shapes = [][2]int{{4, 8}, {1, 16}, {16, 1}, {16, 32}}
	}
	if short {
		shapes = shapes[:1]
	}
	for _, s := range shapes {
		fftCheck2D(t, q, f, rng, s[0], s[1])
	}
	// Real input: every power of two from 2 to 2^18 (2^10 when small), batch 1 and 3.
	top := 18
	if kerneltest.Small() {
		top = 10
	}
	if short {
		top = 6
	}
	for lg := 1; lg <= top; lg++ {
		fftCheckR2C(t, q, f, rng, 1<<lg, 1)
		if lg <= 12 && (!kerneltest.Small() || lg <= 8) {
			fftCheckR2C(t, q, f, rng, 1<<lg, 3)
		}
	}
}

// TestFFTMultiPass runs the multi-pass path on small data: FFTs compiled with a local length
// of 64 points (16 work-items of 4 elements) split every transform over 64 points into
// passes of 4, so that 2^10 points take 5 passes (an odd count: in place, the last lands in
// the scratch and is copied back), in radix 4 and radix 2.
func TestFFTMultiPass(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, radix := range []int{4, 2} {
			t.Run(fmt.Sprintf("radix=%d", radix), func(t *testing.T) {
				f, err := newFFT[float32](dev, 16, 4, radix)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if f.LocalLen() != 64 {
					t.Skipf("local length %d on this device, want 64", f.LocalLen())
				}
				rng := rand.New(rand.NewPCG(9, uint64(radix)))
				if kerneltest.Small() { // Oclgrind: each path once, on the smallest data that takes it
					for _, n := range []int{2, 32, 64, 128} {
						fftCheckC2C(t, q, f, rng, n)
					}
					fftCheckBatch(t, q, f, rng, 128, 3) // 4 passes, a partial last group
					fftCheckBatch(t, q, f, rng, 512, 1) // 5 passes: in place copies back
					fftCheck2D(t, q, f, rng, 8, 128)    // 4 + 2 passes
					fftCheckR2C(t, q, f, rng, 256, 1)
					return
				}
				for lg := 0; lg <= 14; lg++ {
					fftCheckC2C(t, q, f, rng, 1<<lg)
				}
				fftCheckBatch(t, q, f, rng, 256, 3)  // 4 passes
				fftCheckBatch(t, q, f, rng, 1024, 3) // 5 passes: in place copies back
				fftCheck2D(t, q, f, rng, 32, 64)
				fftCheck2D(t, q, f, rng, 128, 2)
				fftCheckR2C(t, q, f, rng, 512, 3)
			})
		}
	})
}

// fftCheckC2C checks Forward and Inverse of one transform of n points against the
// reference, the round trip, the guard bands and that the source is untouched.
func fftCheckC2C[T kernels.Float](t *testing.T, q *engine.Queue, f *FFT[T], rng *rand.Rand, n int) {
	t.Helper()
	t.Run(fmt.Sprintf("c2c/n=%d/passes=%v", n, f.Passes(n)), func(t *testing.T) {
		x := kernels.RandFloats[T](rng, 2*n, -1, 1)
		src := kerneltest.Guarded(t, q, x)
		fwd := kerneltest.Guarded(t, q, make([]T, 2*n))
		back := kerneltest.Guarded(t, q, make([]T, 2*n))
		if err := f.Forward(q, fwd, src, n, 1); err != nil {
			t.Fatal(err)
		}
		if err := f.Inverse(q, back, fwd, n, 1); err != nil {
			t.Fatal(err)
		}
		y := kerneltest.Download(t, q, "forward", fwd, 2*n)
		tol := FFTTolerance[T](n)
		if err := CheckFFT("forward", y, FFTRef(x, n, 1, false), n, tol); err != nil {
			t.Fatal(err)
		}
		inv := kerneltest.Download(t, q, "inverse", back, 2*n)
		if err := CheckFFT("inverse", inv, FFTRef(y, n, 1, true), n, tol); err != nil {
			t.Fatal(err)
		}
		// Round trip: n*x within the two transforms' errors.
		if err := CheckFFT("inverse(forward(x))", inv, scaled(x, n), n, 2*tol+tol*tol); err != nil {
			t.Fatal(err)
		}
		if err := kernels.CheckEqual("source", kerneltest.Download(t, q, "source", src, 2*n), x); err != nil {
			t.Fatal(err) // out of place: the input is untouched
		}
	})
}

// scaled returns n*x in float64.
func scaled[T kernels.Float](x []T, n int) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(n) * float64(v)
	}
	return out
}

// fftCheckBatch checks batch transforms of n points out of place, then forward and inverse
// in place.
func fftCheckBatch[T kernels.Float](t *testing.T, q *engine.Queue, f *FFT[T], rng *rand.Rand, n, batch int) {
	t.Helper()
	t.Run(fmt.Sprintf("batch=%d/n=%d/passes=%v", batch, n, f.Passes(n)), func(t *testing.T) {
		x := kernels.RandFloats[T](rng, 2*n*batch, -1, 1)
		want := FFTRef(x, n, batch, false)
		tol := FFTTolerance[T](n)
		src := kerneltest.Guarded(t, q, x)
		dst := kerneltest.Guarded(t, q, make([]T, 2*n*batch))
		if err := f.Forward(q, dst, src, n, batch); err != nil {
			t.Fatal(err)
		}
		if err := CheckFFT("batched forward", kerneltest.Download(t, q, "batched", dst, 2*n*batch), want, n, tol); err != nil {
			t.Fatal(err)
		}
		if err := f.Forward(q, src, src, n, batch); err != nil {
			t.Fatal(err)
		}
		if err := CheckFFT("in-place forward", kerneltest.Download(t, q, "in place", src, 2*n*batch), want, n, tol); err != nil {
			t.Fatal(err)
		}
		if err := f.Inverse(q, src, src, n, batch); err != nil {
			t.Fatal(err)
		}
		if err := CheckFFT("in-place round trip", kerneltest.Download(t, q, "in place", src, 2*n*batch), scaled(x, n), n, 2*tol+tol*tol); err != nil {
			t.Fatal(err)
		}
	})
}

// fftCheck2D checks Forward2D and Inverse2D of a rows x cols matrix.
func fftCheck2D[T kernels.Float](t *testing.T, q *engine.Queue, f *FFT[T], rng *rand.Rand, rows, cols int) {
	t.Helper()
	t.Run(fmt.Sprintf("2d/%dx%d", rows, cols), func(t *testing.T) {
		m := rows * cols
		x := kernels.RandFloats[T](rng, 2*m, -1, 1)
		src := kerneltest.Guarded(t, q, x)
		dst := kerneltest.Guarded(t, q, make([]T, 2*m))
		back := kerneltest.Guarded(t, q, make([]T, 2*m))
		if err := f.Forward2D(q, dst, src, rows, cols); err != nil {
			t.Fatal(err)
		}
		if err := f.Inverse2D(q, back, dst, rows, cols); err != nil {
			t.Fatal(err)
		}
		y := kerneltest.Download(t, q, "2d", dst, 2*m)
		tol := FFTTolerance[T](m)
		if err := CheckFFT("2d forward", y, FFT2DRef(x, rows, cols, false), m, tol); err != nil {
			t.Fatal(err)
		}
		if err := CheckFFT("2d inverse", kerneltest.Download(t, q, "2d inverse", back, 2*m), FFT2DRef(y, rows, cols, true), m, tol); err != nil {
			t.Fatal(err)
		}
		if err := kernels.CheckEqual("2d source", kerneltest.Download(t, q, "2d source", src, 2*m), x); err != nil {
			t.Fatal(err)
		}
	})
}

// fftCheckR2C checks RealForward of batch transforms of n real points.
func fftCheckR2C[T kernels.Float](t *testing.T, q *engine.Queue, f *FFT[T], rng *rand.Rand, n, batch int) {
	t.Helper()
	t.Run(fmt.Sprintf("r2c/n=%d/batch=%d", n, batch), func(t *testing.T) {
		x := kernels.RandFloats[T](rng, n*batch, -1, 1)
		src := kerneltest.Guarded(t, q, x)
		bins := (n/2 + 1) * batch
		dst := kerneltest.Guarded(t, q, make([]T, 2*bins))
		if err := f.RealForward(q, dst, src, n, batch); err != nil {
			t.Fatal(err)
		}
		if err := CheckFFT("r2c", kerneltest.Download(t, q, "r2c", dst, 2*bins), RealFFTRef(x, n, batch), n/2+1, RealFFTTolerance[T](n)); err != nil {
			t.Fatal(err)
		}
		if err := kernels.CheckEqual("r2c source", kerneltest.Download(t, q, "r2c source", src, n*batch), x); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFFTInvalid checks that every launcher refuses bad shapes and buffers with
// ErrInvalidArg before anything is enqueued.
func TestFFTInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		f, err := NewFFT[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		buf := func(n int) *engine.Buffer[float32] { return kerneltest.NewBuffer[float32](t, dev, n) }
		a, b, short := buf(64), buf(64), buf(63)
		cases := []struct {
			name string
			call func() error
		}{
			{"n=0", func() error { return f.Forward(q, b, a, 0, 1) }},
			{"n=3", func() error { return f.Forward(q, b, a, 3, 1) }},
			{"n=12", func() error { return f.Inverse(q, b, a, 12, 1) }},
			{"n=-4", func() error { return f.Forward(q, b, a, -4, 1) }},
			{"n=2^25", func() error { return f.Forward(q, b, a, 1<<25, 1) }},
			{"batch=0", func() error { return f.Forward(q, b, a, 4, 0) }},
			{"batch=-1", func() error { return f.Forward(q, b, a, 4, -1) }},
			{"batch overflow", func() error { return f.Forward(q, b, a, 1<<24, 1<<8) }},
			{"huge batch", func() error { return f.Forward(q, b, a, 2, math.MaxInt/4) }},
			{"short src", func() error { return f.Forward(q, b, short, 32, 1) }},
			{"short dst", func() error { return f.Inverse(q, short, a, 32, 1) }},
			{"nil src", func() error { return f.Forward(q, b, nil, 4, 1) }},
			{"nil dst", func() error { return f.Forward(q, nil, a, 4, 1) }},
			{"nil queue", func() error { return f.Forward(nil, b, a, 4, 1) }},
			{"2d rows=3", func() error { return f.Forward2D(q, b, a, 3, 4) }},
			{"2d cols=6", func() error { return f.Forward2D(q, b, a, 4, 6) }},
			{"2d rows=0", func() error { return f.Inverse2D(q, b, a, 0, 4) }},
			{"2d too big", func() error { return f.Forward2D(q, b, a, 8, 8) }},
			{"r2c n=1", func() error { return f.RealForward(q, b, a, 1, 1) }},
			{"r2c n=6", func() error { return f.RealForward(q, b, a, 6, 1) }},
			{"r2c short dst", func() error { return f.RealForward(q, buf(33), a, 32, 1) }},
			{"r2c dst too short for n+2", func() error { return f.RealForward(q, buf(64), a, 64, 1) }},
			{"r2c in place", func() error { return f.RealForward(q, a, a, 16, 1) }},
		}
		for _, c := range cases {
			if err := c.call(); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if err := f.Forward(q, b, a, 4, 1); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("after Close: %v, want ErrClosed", err)
		}
	})
}
