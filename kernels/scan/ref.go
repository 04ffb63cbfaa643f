package scan

import (
	"math"

	"github.com/prism-compute/prism/kernels"
)

// ScanRef computes the inclusive (exclusive == false) or exclusive prefix sums of x on the
// host: the reference device results are checked against. int32 and uint32 sums wrap
// modulo 2^32 exactly as the device's (and are exact in float64); float32 sums are running
// Neumaier compensated sums in float64 (error about 2u_64 of the running sum of |x|).
func ScanRef[T ScanElem](x []T, exclusive bool) []float64 {
	out := make([]float64, len(x))
	var z T
	if _, ok := any(z).(float32); !ok {
		var s T // wraps modulo 2^32
		for i, v := range x {
			if exclusive {
				out[i] = float64(s)
				s += v
			} else {
				s += v
				out[i] = float64(s)
			}
		}
		return out
	}
	var s, c float64 // Neumaier: s + c is the running sum
	for i, v := range x {
		if exclusive {
			out[i] = s + c
		}
		f := float64(v)
		t := s + f
		if math.Abs(s) >= math.Abs(f) {
			c += (s - t) + f
		} else {
			c += (f - t) + s
		}
		s = t
		if !exclusive {
			out[i] = s + c
		}
	}
	return out
}

// ScanAbsPrefix returns the inclusive prefix sums of |x| in float64: the magnitudes that
// ScanTolerance scales.
func ScanAbsPrefix[T ScanElem](x []T) []float64 {
	out := make([]float64, len(x))
	s := 0.0
	for i, v := range x {
		s += math.Abs(float64(v))
		out[i] = s
	}
	return out
}

// ScanTolerance returns the largest error allowed between a device prefix sum in T at
// element i and the reference, where chain is Scan.Chain(n) and absPrefix the sum of |x[j]|
// for j <= i (ScanAbsPrefix).
//
// Integer scans wrap modulo 2^32 on both sides: exact (0). A float32 output y[i] is a
// summation tree over x[0..i] (never a subtraction) in which every input passes through at
// most chain roundings, so its error is at most gamma_chain * sum_{j<=i} |x[j]|, with
// gamma_k = k*u/(1-k*u) and u = 2^-24 (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed., 4.2); the compensated float64 reference adds at most about
// 2u_64 * sum|x|, covered by gamma_3 in float64.
func ScanTolerance[T ScanElem](chain int, absPrefix float64) float64 {
	if !kernels.TypeOf[T]().Float {
		return 0
	}
	return (kernels.Gamma[T](chain) + kernels.Gamma[float64](3)) * absPrefix
}
