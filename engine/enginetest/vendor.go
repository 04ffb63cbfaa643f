package enginetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

// vendorNames are the names PRISM_REQUIRE gives the vendor library of each kind on each
// backend, beside the kind itself ("blas", "fft"), which requires it on every backend.
var vendorNames = map[string]map[string]string{
	"blas": {"opencl": "clblast", "cuda": "cublas"},
	"fft":  {"opencl": "clfft", "cuda": "cufft"},
}

// RequireVendorOrSkip handles an error from loading dev's vendor library of kind "blas"
// (Device.BLAS) or "fft" (Device.FFT). It does nothing when err is nil. When the library
// is not installed (engine.ErrUnavailable) or the backend has none (engine.ErrUnsupported)
// it skips the test with err as the reason, unless PRISM_REQUIRE names the kind or the
// backend's library ("clblast", "clfft" for opencl; "cublas", "cufft" for cuda): then, as
// for any other error, the test fails at once.
func RequireVendorOrSkip(t testing.TB, dev *engine.Device, kind string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if !errors.Is(err, engine.ErrUnavailable) && !errors.Is(err, engine.ErrUnsupported) {
		t.Fatalf("%s on %s: %v", kind, dev.ID(), err)
	}
	names := []string{kind}
	if n := vendorNames[kind][dev.Backend()]; n != "" {
		names = append(names, n)
	}
	for _, n := range names {
		if Required(n) {
			t.Fatalf("the vendor %s of %s is unavailable, but PRISM_REQUIRE=%q requires it: %v", kind, dev.ID(), os.Getenv("PRISM_REQUIRE"), err)
		}
	}
	t.Skipf("the vendor %s of %s is unavailable (set PRISM_REQUIRE=%s to make this a failure): %v", kind, dev.ID(), names[len(names)-1], err)
}

// checkLibrary checks what a vendor library reports about itself.
func checkLibrary(t *testing.T, lib engine.Library) {
	t.Helper()
	t.Logf("library: %v", lib)
	if lib.Name == "" || lib.Version == "" || lib.Path == "" {
		t.Errorf("Library() = %+v: want a name, a version and a path", lib)
	}
}

// testBLAS checks the device's vendor GEMM against a float64 reference.
func (s *suite) testBLAS(t *testing.T) {
	if s.opts.SkipVendor != "" {
		t.Skip(s.opts.SkipVendor)
	}
	b, err := s.dev.BLAS()
	RequireVendorOrSkip(t, s.dev, "blas", err)
	checkLibrary(t, b.Library())
	if again, err := s.dev.BLAS(); err != nil || again != b {
		t.Errorf("a second BLAS() = %p, %v; want the same BLAS %p", again, err, b)
	}
	t.Run("float32", func(t *testing.T) { gemmTests[float32](t, s, b) })
	t.Run("float64", func(t *testing.T) {
		if !s.dev.Info().FP64 {
			t.Skip("the device has no fp64")
		}
		gemmTests[float64](t, s, b)
	})
	t.Run("Timed", func(t *testing.T) { s.testGemmTimed(t, b) })
}

// gemmCase is one GEMM of the suite.
type gemmCase struct {
	spec        engine.GemmSpec
	alpha, beta float64
	nanC        bool // C holds NaN: beta must be 0, and C must not be read
}

// gemmCases are the suite's GEMMs: every transpose at odd sizes, dimensions of 1, sizes
// around the 256 edge of tiles and work-groups, leading dimensions wider than the rows,
// strided batches with gaps, alpha and beta of both signs, alpha 0, and beta 0 with NaN in
// C. Small sizes shrink the largest ones.
func gemmCases() []gemmCase {
	big := [3]int{255, 257, 256}
	if Small() {
		big = [3]int{63, 65, 64}
	}
	var cs []gemmCase
	cs = append(cs, gemmCase{spec: engine.GemmSpec{M: 1, N: 1, K: 1}, alpha: 1, beta: 0})
	for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		cs = append(cs,
			gemmCase{spec: engine.GemmSpec{TransA: tr[0], TransB: tr[1], M: 7, N: 5, K: 3}, alpha: 1.5, beta: -0.75},
			gemmCase{spec: engine.GemmSpec{TransA: tr[0], TransB: tr[1], M: 1, N: 9, K: 17}, alpha: -1, beta: 0.5},
			gemmCase{spec: engine.GemmSpec{TransA: tr[0], TransB: tr[1], M: 33, N: 1, K: 1}, alpha: 2, beta: 1},
		)
	}
	cs = append(cs,
		gemmCase{spec: engine.GemmSpec{M: big[0], N: big[1], K: big[2]}, alpha: 1, beta: 1},
		gemmCase{spec: engine.GemmSpec{TransA: true, TransB: true, M: big[2], N: big[0], K: big[1]}, alpha: 0.5, beta: -2},
		gemmCase{spec: engine.GemmSpec{TransA: true, M: big[1], N: big[2], K: big[0]}, alpha: -1.25, beta: 0},
		// Leading dimensions wider than the rows: the gaps hold NaN and must stay untouched.
		gemmCase{spec: engine.GemmSpec{TransA: true, M: 33, N: 17, K: 9, LDA: 33 + 3, LDB: 17 + 5, LDC: 17 + 7}, alpha: -0.5, beta: 2},
		gemmCase{spec: engine.GemmSpec{TransB: true, M: 31, N: 33, K: 17, LDA: 20, LDB: 19, LDC: 40}, alpha: 1, beta: 0, nanC: true},
		gemmCase{spec: engine.GemmSpec{M: 31, N: 33, K: 17, LDC: 40}, alpha: 0, beta: 0.5},
		// Strided batches: packed, and with gaps between the matrices.
		gemmCase{spec: engine.GemmSpec{M: 19, N: 23, K: 29, Batch: 3}, alpha: 1.25, beta: -1},
		gemmCase{spec: engine.GemmSpec{TransB: true, M: 19, N: 23, K: 29, Batch: 4, LDA: 31, LDC: 25,
			StrideA: 19*31 + 11, StrideB: 23*29 + 3, StrideC: 19*25 + 5}, alpha: 0.75, beta: 0.5},
		gemmCase{spec: engine.GemmSpec{TransA: true, TransB: true, M: 8, N: 8, K: 8, Batch: 5, StrideC: 8*8 + 1}, alpha: -1, beta: 0, nanC: true},
	)
	return cs
}

func gemmTests[T float32 | float64](t *testing.T, s *suite, b *engine.BLAS) {
	q := s.queue(t)
	for _, c := range gemmCases() {
		t.Run(fmt.Sprintf("%s/alpha=%g,beta=%g", c.spec, c.alpha, c.beta), func(t *testing.T) { runGemm[T](t, s, b, q, c) })
	}
}

// matrixMask marks the elements of a strided batch of row-major matrices in a buffer of n.
func matrixMask(n, batch, rows, cols, ld, stride int) []bool {
	in := make([]bool, n)
	for z := range batch {
		for r := range rows {
			for c := range cols {
				in[z*stride+r*ld+c] = true
			}
		}
	}
	return in
}

// randomIn returns n sentinels with random values where mask is set.
func randomIn[T float32 | float64](r *rand.Rand, mask []bool) []T {
	out := sentinels[T](len(mask))
	vals := random[T](r, len(mask))
	for i, m := range mask {
		if m {
			out[i] = vals[i]
		}
	}
	return out
}

// runGemm runs one GEMM on buffers whose elements outside the matrices (leading-dimension
// gaps, gaps between matrices, and a guard band after the last one) hold a NaN sentinel,
// and checks the result against a float64 reference and the sentinels bit for bit. C
// reaches the device through a copy enqueued on the queue, so the GEMM must be ordered
// after it.
func runGemm[T float32 | float64](t *testing.T, s *suite, b *engine.BLAS, q *engine.Queue, c gemmCase) {
	r := rng(t)
	sp := c.spec.WithDefaults()
	la, lb, lc := sp.Lens()
	rowsA, colsA := sp.M, sp.K
	if sp.TransA {
		rowsA, colsA = colsA, rowsA
	}
	rowsB, colsB := sp.K, sp.N
	if sp.TransB {
		rowsB, colsB = colsB, rowsB
	}
	maskA := matrixMask(la+guard, sp.Batch, rowsA, colsA, sp.LDA, sp.StrideA)
	maskB := matrixMask(lb+guard, sp.Batch, rowsB, colsB, sp.LDB, sp.StrideB)
	maskC := matrixMask(lc+guard, sp.Batch, sp.M, sp.N, sp.LDC, sp.StrideC)
	a, bm, c0 := randomIn[T](r, maskA), randomIn[T](r, maskB), randomIn[T](r, maskC)
	if c.nanC {
		for i, m := range maskC {
			if m {
				c0[i] = T(math.NaN())
			}
		}
	}
	ab, bb := upload(t, q, a), upload(t, q, bm)
	stage, cb := upload(t, q, c0), newBuffer[T](t, s, len(c0))
	if err := cb.CopyFrom(q, 0, stage, 0, len(c0)); err != nil {
		t.Fatalf("CopyFrom: %v", err)
	}
	if err := engine.Gemm(b, q, c.spec, T(c.alpha), ab, bb, T(c.beta), cb); err != nil {
		t.Fatalf("Gemm: %v", err)
	}
	got := download(t, q, cb)

	u, tiny := math.Ldexp(1, -24), math.Ldexp(1, -126)
	if engine.SizeOf[T]() == 8 {
		u, tiny = math.Ldexp(1, -53), math.Ldexp(1, -1022)
	}
	gamma := func(n int, u float64) float64 { return float64(n) * u / (1 - float64(n)*u) }
	bad := 0
	for i, m := range maskC {
		if !m {
			if bitsOf(got[i]) != bitsOf(c0[i]) {
				if bad < 5 {
					t.Errorf("C[%d], outside the matrices, = %v, want the sentinel untouched", i, got[i])
				}
				bad++
			}
			continue
		}
		z, rc := i/sp.StrideC, i%sp.StrideC
		row, col := rc/sp.LDC, rc%sp.LDC
		var acc, mag float64
		for k := range sp.K {
			ai := z*sp.StrideA + row*sp.LDA + k
			if sp.TransA {
				ai = z*sp.StrideA + k*sp.LDA + row
			}
			bi := z*sp.StrideB + k*sp.LDB + col
			if sp.TransB {
				bi = z*sp.StrideB + col*sp.LDB + k
			}
			p := float64(a[ai]) * float64(bm[bi])
			acc += p
			mag += math.Abs(p)
		}
		want := c.alpha * acc
		mag *= math.Abs(c.alpha)
		if c.beta != 0 {
			want += c.beta * float64(c0[i])
			mag += math.Abs(c.beta * float64(c0[i]))
		}
		// Any order of summation of K products, fused or not, then alpha*acc + beta*c,
		// errs by at most gamma_{K+2} times the sum of magnitudes (Higham, Accuracy and
		// Stability of Numerical Algorithms, 3.5); the float64 reference adds its own
		// gamma_{K+2}, and a term per operation covers underflow.
		tol := (gamma(sp.K+2, u)+gamma(sp.K+2, math.Ldexp(1, -53)))*mag + float64(sp.K+3)*math.Max(1, math.Abs(c.alpha))*tiny
		if diff := math.Abs(float64(got[i]) - want); !(diff <= tol) {
			if bad < 5 {
				t.Errorf("C[%d][%d][%d] = %v, want %v (|diff| %.3g > tolerance %.3g)", z, row, col, got[i], want, diff, tol)
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%d of %d elements of C wrong", bad, len(got))
	}
	checkBits(t, "A after the GEMM", download(t, q, ab), a, 0)
	checkBits(t, "B after the GEMM", download(t, q, bb), bm, 0)
}

// testGemmTimed checks that Queue.Timed counts a GEMM, and a GEMM beside a kernel.
func (s *suite) testGemmTimed(t *testing.T, b *engine.BLAS) {
	ctx := context.Background()
	q := s.queue(t)
	n := 128
	if Small() {
		n = 32
	}
	r := rng(t)
	ab, bb, cb := upload(t, q, random[float32](r, n*n)), upload(t, q, random[float32](r, n*n)), upload(t, q, random[float32](r, n*n))
	spec := engine.GemmSpec{M: n, N: n, K: n}
	// The first call may compile the library's kernels: keep it out of the timing.
	if err := engine.Gemm(b, q, spec, 1, ab, bb, 0, cb); err != nil {
		t.Fatalf("Gemm: %v", err)
	}
	if err := q.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	one, err := q.Timed(ctx, func() error { return engine.Gemm(b, q, spec, 1, ab, bb, 0, cb) })
	if err != nil {
		t.Fatalf("Timed: %v", err)
	}
	two, err := q.Timed(ctx, func() error {
		if err := cb.Fill(q, 0, n*n, 1); err != nil {
			return err
		}
		if err := engine.Gemm(b, q, spec, 1, ab, bb, 1, cb); err != nil {
			return err
		}
		return engine.Gemm(b, q, spec, 1, ab, bb, 1, cb)
	})
	if err != nil {
		t.Fatalf("Timed: %v", err)
	}
	t.Logf("GEMM %d^3: %v; fill and two GEMMs: %v", n, one, two)
	for _, d := range []time.Duration{one, two} {
		if d < 0 || d > time.Minute || (d == 0 && !s.opts.ZeroElapsedOK) {
			t.Errorf("Timed = %v, want a positive device time", d)
		}
	}
}

// testFFT checks the device's vendor FFT against a float64 DFT.
func (s *suite) testFFT(t *testing.T) {
	if s.opts.SkipVendor != "" {
		t.Skip(s.opts.SkipVendor)
	}
	f, err := s.dev.FFT()
	RequireVendorOrSkip(t, s.dev, "fft", err)
	checkLibrary(t, f.Library())
	if again, err := s.dev.FFT(); err != nil || again != f {
		t.Errorf("a second FFT() = %p, %v; want the same FFT %p", again, err, f)
	}
	t.Run("float32", func(t *testing.T) { fftTests[float32](t, s, f) })
	t.Run("float64", func(t *testing.T) {
		if !s.dev.Info().FP64 {
			t.Skip("the device has no fp64")
		}
		fftTests[float64](t, s, f)
	})
	t.Run("Timed", func(t *testing.T) { s.testFFTTimed(t, f) })
	t.Run("PlanClosed", func(t *testing.T) { s.testPlanClosed(t, f) })
}

// fftSpecs are the suite's transforms: lengths of 1, odd lengths and lengths with factors
// 3, 5 and 7 (which every vendor library takes), powers of two to 4096, batches, both
// directions, 2D shapes with an odd dimension, and real-input transforms of even and odd
// lengths in one and two dimensions.
func fftSpecs() []engine.FFTSpec {
	long := 4096
	if Small() {
		long = 512
	}
	var ss []engine.FFTSpec
	for _, n := range []int{1, 2, 7, 15, 64, 256, 1000, long} {
		for _, inv := range []bool{false, true} {
			ss = append(ss, engine.FFTSpec{Kind: engine.C2C, Shape: []int{n}, Batch: 1 + 2*b2i(n < 1000), Inverse: inv})
		}
	}
	for _, sh := range [][]int{{1, 8}, {8, 7}, {16, 32}, {5, 64}, {63, 4}} {
		ss = append(ss, engine.FFTSpec{Kind: engine.C2C, Shape: sh, Batch: 2}, engine.FFTSpec{Kind: engine.C2C, Shape: sh, Inverse: true})
	}
	for _, n := range []int{2, 7, 14, 256, 1000} {
		ss = append(ss, engine.FFTSpec{Kind: engine.R2C, Shape: []int{n}, Batch: 3})
	}
	for _, sh := range [][]int{{6, 16}, {16, 7}, {3, 2}} {
		ss = append(ss, engine.FFTSpec{Kind: engine.R2C, Shape: sh, Batch: 2})
	}
	return ss
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func fftTests[T float32 | float64](t *testing.T, s *suite, f *engine.FFT) {
	q := s.queue(t)
	for _, sp := range fftSpecs() {
		sp.Double = engine.SizeOf[T]() == 8
		t.Run(sp.String(), func(t *testing.T) { runFFT[T](t, s, f, q, sp) })
	}
}

// runFFT runs one plan from a guarded input to a guarded output full of sentinels, and
// checks the output against a float64 DFT transform by transform, the guard band after it
// bit for bit, and the input unchanged.
func runFFT[T float32 | float64](t *testing.T, s *suite, f *engine.FFT, q *engine.Queue, sp engine.FFTSpec) {
	p, err := f.Plan(sp)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	defer p.Close()
	nin, nout := p.Lens()
	r := rng(t)
	x := append(random[T](r, nin), sentinels[T](guard)...)
	in := upload(t, q, x)
	out := upload(t, q, sentinels[T](nout+guard))
	if err := engine.RunFFT(p, q, in, out); err != nil {
		t.Fatalf("RunFFT: %v", err)
	}
	got := download(t, q, out)
	checkBits(t, "the guard band after the output", got[nout:], sentinels[T](guard), 0)
	checkBits(t, "the input after the transform", download(t, q, in), x, 0)

	want := dftRef(sp, x[:nin])
	rows, cols := 1, sp.Shape[0]
	if len(sp.Shape) == 2 {
		rows, cols = sp.Shape[0], sp.Shape[1]
	}
	u := math.Ldexp(1, -24)
	if sp.Double {
		u = math.Ldexp(1, -53)
	}
	// The Cooley-Tukey bound on the relative 2-norm error of one transform is about
	// log2(n) * (mu + gamma_4 (sqrt(2) + mu)), mu the error of the twiddles (Higham, 24.1):
	// about 11u per radix-2 level with twiddles within 5 ulps. 16u per level, one level more
	// than log2(n), leaves room for the radix-3, 5 and 7 butterflies that vendor libraries
	// use; a real-input transform adds a post-pass that can double the error in each of
	// two bins, hence 2 sqrt(2) times the bound (as Prism's RealFFTTolerance argues).
	levels := math.Ceil(math.Log2(float64(rows*cols))) + 1
	rel := 16 * u * levels
	seg := rows * cols // complex outputs per transform
	if sp.Kind == engine.R2C {
		rel *= 2 * math.Sqrt2
		seg = rows * (cols/2 + 1)
	}
	checkSpectrum(t, got[:nout], want, seg, rel)
}

// checkSpectrum compares transforms of seg complex values each: for every transform,
// ||got - want||_2 <= rel * ||want||_2 (at least rel times the norm of the input for a
// zero spectrum), and so every element within that bound.
func checkSpectrum[T float32 | float64](t *testing.T, got []T, want []float64, seg int, rel float64) {
	t.Helper()
	for b := 0; b < len(want)/(2*seg); b++ {
		var e2, y2, worst float64
		wi := 0
		for k := b * seg; k < (b+1)*seg; k++ {
			dr, di := float64(got[2*k])-want[2*k], float64(got[2*k+1])-want[2*k+1]
			d := dr*dr + di*di
			if d > worst || math.IsNaN(d) && !math.IsNaN(worst) {
				worst, wi = d, k
			}
			e2 += d
			y2 += want[2*k]*want[2*k] + want[2*k+1]*want[2*k+1]
		}
		if tol := rel * math.Sqrt(y2); !(math.Sqrt(e2) <= tol) {
			t.Errorf("transform %d: ||error||_2 = %.3g > tolerance %.3g (%.3g * ||reference||_2); worst bin %d = (%v, %v), want (%v, %v)",
				b, math.Sqrt(e2), tol, rel, wi-b*seg, got[2*wi], got[2*wi+1], want[2*wi], want[2*wi+1])
			return
		}
	}
}

// dftRef returns the transforms of sp applied to x by the definition, in float64, laid
// out as the library's output (interleaved complex; for R2C, the first Shape[last]/2+1
// bins of each row).
func dftRef[T float32 | float64](sp engine.FFTSpec, x []T) []float64 {
	rows, cols := 1, sp.Shape[0]
	if len(sp.Shape) == 2 {
		rows, cols = sp.Shape[0], sp.Shape[1]
	}
	n, batch := rows*cols, max(sp.Batch, 1)
	sign := -1.0
	if sp.Inverse {
		sign = 1
	}
	h := cols
	if sp.Kind == engine.R2C {
		h = cols/2 + 1
	}
	out := make([]float64, 0, 2*batch*rows*h)
	re, im := make([]float64, n), make([]float64, n)
	for t := range batch {
		for k := range n {
			if sp.Kind == engine.R2C {
				re[k], im[k] = float64(x[t*n+k]), 0
			} else {
				re[k], im[k] = float64(x[2*(t*n+k)]), float64(x[2*(t*n+k)+1])
			}
		}
		for r := range rows {
			dft1(re[r*cols:], im[r*cols:], cols, 1, sign)
		}
		for c := range cols {
			dft1(re[c:], im[c:], rows, cols, sign)
		}
		for r := range rows {
			for c := range h {
				out = append(out, re[r*cols+c], im[r*cols+c])
			}
		}
	}
	return out
}

// dft1 replaces the m values (re, im)[j*stride], j < m, by their DFT with exponent sign.
// Each angle 2 pi (jk mod m)/m is reduced before it is rounded, so that every twiddle is
// accurate to an ulp of float64.
func dft1(re, im []float64, m, stride int, sign float64) {
	if m == 1 {
		return
	}
	ar, ai := make([]float64, m), make([]float64, m)
	for k := range m {
		var sr, si float64
		for j := range m {
			sn, cs := math.Sincos(sign * 2 * math.Pi * float64(j*k%m) / float64(m))
			xr, xi := re[j*stride], im[j*stride]
			sr += xr*cs - xi*sn
			si += xr*sn + xi*cs
		}
		ar[k], ai[k] = sr, si
	}
	for k := range m {
		re[k*stride], im[k*stride] = ar[k], ai[k]
	}
}

// testFFTTimed checks that Queue.Timed counts a transform, and one beside a fill.
func (s *suite) testFFTTimed(t *testing.T, f *engine.FFT) {
	ctx := context.Background()
	q := s.queue(t)
	sp := engine.FFTSpec{Kind: engine.C2C, Shape: []int{1024}, Batch: 4}
	p, err := f.Plan(sp)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	defer p.Close()
	nin, nout := p.Lens()
	in := upload(t, q, random[float32](rng(t), nin))
	out := newBuffer[float32](t, s, nout)
	// The first run may compile the library's kernels: keep it out of the timing.
	if err := engine.RunFFT(p, q, in, out); err != nil {
		t.Fatalf("RunFFT: %v", err)
	}
	if err := q.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	one, err := q.Timed(ctx, func() error { return engine.RunFFT(p, q, in, out) })
	if err != nil {
		t.Fatalf("Timed: %v", err)
	}
	two, err := q.Timed(ctx, func() error {
		if err := out.Fill(q, 0, nout, 0); err != nil {
			return err
		}
		return engine.RunFFT(p, q, in, out)
	})
	if err != nil {
		t.Fatalf("Timed: %v", err)
	}
	t.Logf("%v: %v; fill and transform: %v", sp, one, two)
	for _, d := range []time.Duration{one, two} {
		if d < 0 || d > time.Minute || (d == 0 && !s.opts.ZeroElapsedOK) {
			t.Errorf("Timed = %v, want a positive device time", d)
		}
	}
}

// testPlanClosed checks that a closed plan is refused, and that closing the FFT closes
// the plans still open.
func (s *suite) testPlanClosed(t *testing.T, f *engine.FFT) {
	q := s.queue(t)
	sp := engine.FFTSpec{Kind: engine.C2C, Shape: []int{16}}
	p, err := f.Plan(sp)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	in, out := newBuffer[float32](t, s, 32), newBuffer[float32](t, s, 32)
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := engine.RunFFT(p, q, in, out); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("RunFFT of a closed plan = %v, want ErrClosed", err)
	}
	// A plan left open is closed with its FFT; the device then loads a new FFT.
	open, err := f.Plan(sp)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("FFT.Close: %v", err)
	}
	if err := engine.RunFFT(open, q, in, out); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("RunFFT of a plan of a closed FFT = %v, want ErrClosed", err)
	}
	if _, err := f.Plan(sp); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Plan on a closed FFT = %v, want ErrClosed", err)
	}
	g, err := s.dev.FFT()
	if err != nil || g == f {
		t.Fatalf("FFT() after Close = %p, %v; want a new FFT", g, err)
	}
	p, err = g.Plan(sp)
	if err != nil {
		t.Fatalf("Plan on the new FFT: %v", err)
	}
	defer p.Close()
	if err := engine.RunFFT(p, q, in, out); err != nil {
		t.Errorf("RunFFT on the new FFT: %v", err)
	}
}

// testVendorConcurrent runs GEMMs and FFTs from several goroutines at once, each on its
// own queue with its own plan, as the libraries' handles allow: on a backend that shares
// one queue per device (PoCL) the library calls must take its lock like every other
// enqueue; on CUDA each stream must keep its own library state.
func (s *suite) testVendorConcurrent(t *testing.T) {
	if s.opts.SkipVendor != "" {
		t.Skip(s.opts.SkipVendor)
	}
	if s.opts.SkipConcurrency {
		t.Skip("Options.SkipConcurrency is set")
	}
	b, err := s.dev.BLAS()
	RequireVendorOrSkip(t, s.dev, "blas", err)
	f, err := s.dev.FFT()
	RequireVendorOrSkip(t, s.dev, "fft", err)
	goroutines, rounds := 4, 5
	if Small() {
		goroutines, rounds = 2, 2
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := []int{48, 56, 60, 64}[g%4] // products of 2, 3, 5 and 7, as every library takes
			if err := s.vendorWorker(t.Context(), b, f, n, rounds, uint64(g)); err != nil {
				t.Errorf("goroutine %d: %v", g, err)
			}
		}()
	}
	wg.Wait()
}

// vendorWorker runs rounds of a GEMM of n x n ones times alpha (every element of C is
// alpha*n, exactly) and an FFT of n ones (bin 0 is n, the others 0) on a queue of its own,
// checking each result. It reports the first failure.
func (s *suite) vendorWorker(ctx context.Context, b *engine.BLAS, f *engine.FFT, n, rounds int, seed uint64) error {
	q, err := s.dev.NewQueue()
	if err != nil {
		return err
	}
	defer q.Close()
	p, err := f.Plan(engine.FFTSpec{Kind: engine.C2C, Shape: []int{n}})
	if err != nil {
		return err
	}
	defer p.Close()
	ones := make([]float32, n*n)
	for i := range ones {
		ones[i] = 1
	}
	a, err := engine.Upload(ctx, q, ones)
	if err != nil {
		return err
	}
	defer a.Close()
	c, err := engine.NewBuffer[float32](s.dev, n*n)
	if err != nil {
		return err
	}
	defer c.Close()
	sig := make([]float32, 2*n)
	for i := 0; i < n; i++ {
		sig[2*i] = 1
	}
	in, err := engine.Upload(ctx, q, sig)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := engine.NewBuffer[float32](s.dev, 2*n)
	if err != nil {
		return err
	}
	defer out.Close()
	r := rand.New(rand.NewPCG(seed, 1))
	for range rounds {
		alpha := float32(1 + r.IntN(3))
		if err := engine.Gemm(b, q, engine.GemmSpec{M: n, N: n, K: n}, alpha, a, a, 0, c); err != nil {
			return err
		}
		if err := engine.RunFFT(p, q, in, out); err != nil {
			return err
		}
		got, err := c.Download(ctx, q)
		if err != nil {
			return err
		}
		for i, v := range got {
			if v != alpha*float32(n) {
				return fmt.Errorf("GEMM of %d x %d ones times %v: C[%d] = %v, want %v", n, n, alpha, i, v, alpha*float32(n))
			}
		}
		spec, err := out.Download(ctx, q)
		if err != nil {
			return err
		}
		// The tolerance bounds the error of an FFT of n points of magnitude 1 (see runFFT).
		tol := 16 * math.Ldexp(1, -24) * (math.Ceil(math.Log2(float64(n))) + 1) * float64(n)
		for k := 0; k < n; k++ {
			want := 0.0
			if k == 0 {
				want = float64(n)
			}
			if math.Hypot(float64(spec[2*k])-want, float64(spec[2*k+1])) > tol {
				return fmt.Errorf("FFT of %d ones: bin %d = (%v, %v), want (%v, 0)", n, k, spec[2*k], spec[2*k+1], want)
			}
		}
	}
	return q.Finish(ctx)
}

// testBLAS1 checks the vendor BLAS's axpy and dot against float64 at sizes around the edges
// of work-groups, with a guard band of sentinels after y and after the dot's output.
func (s *suite) testBLAS1(t *testing.T) {
	if s.opts.SkipVendor != "" {
		t.Skip(s.opts.SkipVendor)
	}
	b, err := s.dev.BLAS()
	RequireVendorOrSkip(t, s.dev, "blas", err)
	t.Run("float32", func(t *testing.T) { blas1Tests[float32](t, s, b) })
	t.Run("float64", func(t *testing.T) {
		if !s.dev.Info().FP64 {
			t.Skip("the device has no fp64")
		}
		blas1Tests[float64](t, s, b)
	})
}

func blas1Tests[T float32 | float64](t *testing.T, s *suite, b *engine.BLAS) {
	q := s.queue(t)
	sizes := []int{1, 7, 255, 256, 257, 4097}
	if !Small() {
		sizes = append(sizes, 1<<20+3)
	}
	const guard = 16
	eps := math.Nextafter32(1, 2) - 1
	u := float64(eps) / 2
	if engine.SizeOf[T]() == 8 {
		u = 0x1p-53
	}
	for _, n := range sizes {
		r := rng(t)
		x, y := random[T](r, n), random[T](r, n)
		alpha := T(1.5)
		t.Run(fmt.Sprintf("axpy/n=%d", n), func(t *testing.T) {
			bx := upload(t, q, x)
			by := upload(t, q, append(append([]T{}, y...), sentinels[T](guard)...))
			err := engine.Axpy(b, q, n, alpha, bx, by)
			if errors.Is(err, engine.ErrUnsupported) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := download(t, q, by)
			for i := range n {
				want := float64(alpha)*float64(x[i]) + float64(y[i])
				tol := 2 * u * (math.Abs(float64(alpha)*float64(x[i])) + math.Abs(float64(y[i])))
				if d := math.Abs(float64(got[i]) - want); !(d <= tol) {
					t.Fatalf("y[%d] = %v, want %v (|diff| %.3g > %.3g)", i, got[i], want, d, tol)
				}
			}
			checkBits(t, "the guard band after y", got[n:], sentinels[T](guard), 0)
		})
		t.Run(fmt.Sprintf("dot/n=%d", n), func(t *testing.T) {
			bx, by := upload(t, q, x), upload(t, q, y)
			out := upload(t, q, sentinels[T](1+guard))
			err := engine.Dot(b, q, n, bx, by, out)
			if errors.Is(err, engine.ErrUnsupported) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := download(t, q, out)
			var want, mag float64
			for i := range n {
				want += float64(x[i]) * float64(y[i])
				mag += math.Abs(float64(x[i]) * float64(y[i]))
			}
			// Any summation order: gamma_{n+1} of the sum of |x_i y_i| (Higham 3.1).
			k := float64(n + 1)
			tol := k * u / (1 - k*u) * mag
			if d := math.Abs(float64(got[0]) - want); !(d <= tol) {
				t.Fatalf("dot = %v, want %v (|diff| %.3g > %.3g)", got[0], want, d, tol)
			}
			checkBits(t, "the guard band after the dot", got[1:], sentinels[T](guard), 0)
		})
		t.Run(fmt.Sprintf("sum/n=%d", n), func(t *testing.T) {
			bx := upload(t, q, x)
			out := upload(t, q, sentinels[T](1+guard))
			err := engine.Sum(b, q, n, bx, out)
			if errors.Is(err, engine.ErrUnsupported) {
				t.Skip(err) // cuBLAS has no plain sum
			}
			if err != nil {
				t.Fatal(err)
			}
			got := download(t, q, out)
			var want, mag float64
			for i := range n {
				want += float64(x[i])
				mag += math.Abs(float64(x[i]))
			}
			k := float64(n)
			tol := k * u / (1 - k*u) * mag
			if d := math.Abs(float64(got[0]) - want); !(d <= tol) {
				t.Fatalf("sum = %v, want %v (|diff| %.3g > %.3g; an absolute sum would be %v)", got[0], want, d, tol, mag)
			}
			checkBits(t, "the guard band after the sum", got[1:], sentinels[T](guard), 0)
		})
	}
	x := upload(t, q, []T{1, 2})
	if err := engine.Axpy(b, q, 3, 1, x, x); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("axpy past the end of its buffers: %v, want ErrInvalidArg", err)
	}
	if err := engine.Dot(b, q, 0, x, x, x); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("dot of 0 elements: %v, want ErrInvalidArg", err)
	}
}
