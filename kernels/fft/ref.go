package fft

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/prism-compute/prism/kernels"
)

// FFTRef computes batch DFTs of n complex points (x interleaved re, im; batch contiguous
// transforms) in float64 on the host: forward with e^{-2 pi i jk/n}, or the unnormalized
// inverse with e^{+2 pi i jk/n}. n must be a power of two. It is the reference every
// device result is checked against: an iterative radix-2 FFT whose twiddles are computed
// directly (not by recurrence), so its error, about log2(n) * 2^-53, is negligible next to
// float32's.
func FFTRef[T kernels.Float](x []T, n, batch int, inverse bool) []float64 {
	out := make([]float64, 2*n*batch)
	kernels.ParallelRanges(batch, 1, func(lo, hi int) {
		buf := make([]complex128, n)
		for b := lo; b < hi; b++ {
			for k := range n {
				buf[k] = complex(float64(x[2*(b*n+k)]), float64(x[2*(b*n+k)+1]))
			}
			fftRefC(buf, inverse, hi-lo == batch)
			for k, v := range buf {
				out[2*(b*n+k)], out[2*(b*n+k)+1] = real(v), imag(v)
			}
		}
	})
	return out
}

// FFT2DRef computes the 2D DFT of a rows x cols complex matrix stored row-major in float64:
// row transforms, then column transforms.
func FFT2DRef[T kernels.Float](x []T, rows, cols int, inverse bool) []float64 {
	out := FFTRef(x, cols, rows, inverse)
	kernels.ParallelRanges(cols, 1, func(lo, hi int) {
		col := make([]complex128, rows)
		for c := lo; c < hi; c++ {
			for r := range rows {
				col[r] = complex(out[2*(r*cols+c)], out[2*(r*cols+c)+1])
			}
			fftRefC(col, inverse, false)
			for r, v := range col {
				out[2*(r*cols+c)], out[2*(r*cols+c)+1] = real(v), imag(v)
			}
		}
	})
	return out
}

// RealFFTRef computes batch forward DFTs of n real points (batch contiguous transforms of x)
// in float64 and returns bins 0..n/2 of each, interleaved (re, im): batch*(n/2+1) complex
// values. It transforms the real data as complex data with zero imaginary parts, so it
// shares nothing with the device's half-length algorithm.
func RealFFTRef[T kernels.Float](x []T, n, batch int) []float64 {
	h := n/2 + 1
	out := make([]float64, 2*h*batch)
	kernels.ParallelRanges(batch, 1, func(lo, hi int) {
		buf := make([]complex128, n)
		for b := lo; b < hi; b++ {
			for k := range n {
				buf[k] = complex(float64(x[b*n+k]), 0)
			}
			fftRefC(buf, false, hi-lo == batch)
			for k := range h {
				out[2*(b*h+k)], out[2*(b*h+k)+1] = real(buf[k]), imag(buf[k])
			}
		}
	})
	return out
}

// refTwiddles returns e^{-+2 pi i k/n} for k < n/2.
func refTwiddles(n int, inverse bool) []complex128 {
	tw := make([]complex128, n/2)
	for k := range tw {
		tw[k] = refW(k, n, inverse)
	}
	return tw
}

// refW returns e^{-2 pi i k/n}, or e^{+2 pi i k/n} for the inverse.
func refW(k, n int, inverse bool) complex128 {
	s, c := sincosTurns(k, n)
	if inverse {
		return complex(c, s)
	}
	return complex(c, -s)
}

// fftRefDirect is the longest transform fftRefC does with one radix-2 pass over the data
// (64 KiB of complex128: in cache); longer ones take the four-step form.
const fftRefDirect = 1 << 12

// fftRefC transforms a (power-of-two length) in place in float64. Up to fftRefDirect points
// it is fft64; beyond, the four-step form n = n1*n2 (Bailey): n1 FFTs of n2 points over the
// strided columns, a multiplication by w_n^{j1 k2} (computed directly for each element), and
// n2 FFTs of n1 points, each small enough to stay in cache, spread over the cores when par.
func fftRefC(a []complex128, inverse, par bool) {
	n := len(a)
	if n <= fftRefDirect {
		fft64(a, refTwiddles(n, inverse))
		return
	}
	lg := bits.TrailingZeros(uint(n))
	n1 := 1 << (lg / 2)
	n2 := n / n1
	run := func(m int, f func(lo, hi int)) { kernels.ParallelRanges(m, 1, f) }
	if !par {
		run = func(m int, f func(lo, hi int)) { f(0, m) }
	}
	// x[j1 + n1*j2]: Y[j1][k2] = w_n^{j1 k2} sum_j2 x[j1 + n1 j2] w_n2^{j2 k2}, in tmp[j1*n2 + k2].
	tmp := make([]complex128, n)
	tw2 := refTwiddles(n2, inverse)
	run(n1, func(lo, hi int) {
		for j1 := lo; j1 < hi; j1++ {
			col := tmp[j1*n2 : (j1+1)*n2]
			for j2 := range col {
				col[j2] = a[j1+n1*j2]
			}
			if n2 <= fftRefDirect {
				fft64(col, tw2)
			} else {
				fftRefC(col, inverse, false)
			}
			for k2 := 1; k2 < n2; k2++ {
				col[k2] *= refW(j1*k2, n, inverse)
			}
		}
	})
	// X[k2 + n2*k1] = sum_j1 Y[j1][k2] w_n1^{j1 k1}.
	tw1 := refTwiddles(n1, inverse)
	run(n2, func(lo, hi int) {
		row := make([]complex128, n1)
		for k2 := lo; k2 < hi; k2++ {
			for j1 := range row {
				row[j1] = tmp[j1*n2+k2]
			}
			if n1 <= fftRefDirect {
				fft64(row, tw1)
			} else {
				fftRefC(row, inverse, false)
			}
			for k1, v := range row {
				a[k2+n2*k1] = v
			}
		}
	})
}

// fft64 transforms a (power-of-two length) in place: bit-reversal permutation, then
// radix-2 decimation-in-time butterflies with tw[k] = w_n^k.
func fft64(a []complex128, tw []complex128) {
	n := len(a)
	if n < 2 {
		return
	}
	lg := bits.TrailingZeros(uint(n))
	for i := range a {
		j := int(bits.Reverse(uint(i)) >> (bits.UintSize - lg))
		if i < j {
			a[i], a[j] = a[j], a[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for k := range half {
				t := tw[k*step] * a[start+k+half]
				a[start+k+half] = a[start+k] - t
				a[start+k] += t
			}
		}
	}
}

// DFTRef is the O(n^2) definition, X[k] = sum_j x[j] e^{-+2 pi i jk/n} in float64, for any
// n: the tests check FFTRef against it.
func DFTRef[T kernels.Float](x []T, n int, inverse bool) []float64 {
	out := make([]float64, 2*n)
	for k := range n {
		var s complex128
		for j := range n {
			sn, c := sincosTurns(j*k%n, n)
			w := complex(c, -sn)
			if inverse {
				w = complex(c, sn)
			}
			s += complex(float64(x[2*j]), float64(x[2*j+1])) * w
		}
		out[2*k], out[2*k+1] = real(s), imag(s)
	}
	return out
}

// FFTTolerance returns the bound on the relative 2-norm error ||y - yhat||_2 / ||y||_2 of a
// device FFT (forward or inverse) of n points in T, n the total points of the transform
// (rows*cols for 2D). It is Higham's bound for a Cooley-Tukey FFT (Accuracy and Stability
// of Numerical Algorithms, 2nd ed., Theorem 24.2):
//
//	||y - yhat||_2 / ||y||_2 <= log2(n) eta / (1 - log2(n) eta),  eta = mu + gamma_4 (sqrt(2) + mu),
//
// with mu the error of the computed twiddles. The proof writes the FFT as log2(n) levels of
// butterflies, each a matrix of 2-norm sqrt(2) computed with error at most eta times that
// norm; it holds for this Stockham form too: a radix-4 stage is two radix-2 levels whose
// inner twiddles are the exact +-1, +-i (a rotation by i is a swap and a sign, exact), and
// a Stockham pass of L points is log2(L) levels; the 2D transform is log2(rows) + log2(cols)
// levels of the same kind. The twiddles come from two tables rounded from float64 (each
// entry within u, the unit roundoff of T, times slack for the float64 value, 2^-50 < u/8)
// and, across global passes, as the product of two entries: |w - what| <= u + u + sqrt(2)
// gamma_2 + O(u^2) < 5u. So mu = 5u. For float32 this is 2.5e-6 at n = 16 and 1.5e-5 at
// n = 2^24; the errors measured on PoCL (uniform random inputs, 2026-11-21) were 50 to 80
// times smaller (4.7e-8 at 16 points, 1.8e-7 at 2^22): the bound adds up worst cases of
// errors that are in fact random, but it is the one that holds for every input.
func FFTTolerance[T kernels.Float](n int) float64 {
	u := kernels.Epsilon[T]()
	mu := 5 * u
	eta := mu + kernels.Gamma[T](4)*(math.Sqrt2+mu)
	l := float64(kernels.Log2Ceil(n))
	if l == 0 { // n = 1: a copy
		return 0
	}
	return l * eta / (1 - l*eta)
}

// RealFFTTolerance returns the bound on the relative 2-norm error of the n/2+1 bins of a
// real-input FFT of n points (RealForward), relative to the 2-norm of those bins.
//
// The device computes Z = FFT_h(z), h = n/2, z[k] = x[2k] + i x[2k+1], with relative error
// e = FFTTolerance(h) (0 for h = 1), then X[k] = a Z[k] + b conj(Z[h-k]) with |a|, |b| <= 1.
// Each Z index feeds at most 4 of the h+1 bins (as Z[k] for k and k+h, as Z[h-k] for
// two), so ||dX||_2 <= sqrt(2*(2+2)) ||dZ||_2 = 2 sqrt(2) ||dZ||_2; the post-pass's own
// rounding (a twiddle product with mu = 5u, a sum, a difference, a complex product and a
// sum, halving exact) is within 10u (|Z[k]| + |Z[h-k]|) per bin, which adds
// 2 sqrt(2) * 10u ||Z||_2 the same way. Finally ||Z||_2 = sqrt(h) ||x||_2 and, by Parseval
// for real x, the half spectrum has ||X[0..h]||_2^2 >= n ||x||_2^2 / 2 = ||Z||_2^2, so
//
//	||dX||_2 / ||X[0..h]||_2 <= 2 sqrt(2) (FFTTolerance(h) + 10u).
func RealFFTTolerance[T kernels.Float](n int) float64 {
	return 2 * math.Sqrt2 * (FFTTolerance[T](n/2) + 10*kernels.Epsilon[T]())
}

// CheckFFT compares a device FFT result with the float64 reference, transform by transform:
// got and want hold interleaved complex values, seg complex values per transform. For every
// transform it requires ||got - want||_2 <= rel * ||want||_2 (rel from FFTTolerance or
// RealFFTTolerance) and so, in particular, every element's |got - want| within that bound.
// A mismatch is an error wrapping ErrVerify naming the transform, the worst element, its
// value and the reference.
func CheckFFT[T kernels.Float](what string, got []T, want []float64, seg int, rel float64) error {
	if len(got) < len(want) {
		return fmt.Errorf("%w: %s: %d elements, want %d", kernels.ErrVerify, what, len(got), len(want))
	}
	for b := 0; b < len(want)/(2*seg); b++ {
		var e2, y2, worst float64
		wi := 0
		for k := b * seg; k < (b+1)*seg; k++ {
			dr, di := float64(got[2*k])-want[2*k], float64(got[2*k+1])-want[2*k+1]
			d := dr*dr + di*di
			if d > worst || (math.IsNaN(d) && !math.IsNaN(worst)) {
				worst, wi = d, k
			}
			e2 += d
			y2 += want[2*k]*want[2*k] + want[2*k+1]*want[2*k+1]
		}
		tol := rel * math.Sqrt(y2)
		if !(math.Sqrt(e2) <= tol) {
			return fmt.Errorf("%w: %s: transform %d: ||error||_2 = %.3g > tolerance %.3g (= %.3g * ||reference||_2); worst element %d = (%v, %v), want (%v, %v)", kernels.ErrVerify, what, b, math.Sqrt(e2), tol, rel, wi-b*seg, got[2*wi], got[2*wi+1], want[2*wi], want[2*wi+1])
		}
	}
	return nil
}
