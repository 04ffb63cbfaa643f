package kernels

import "math"

// CompensatedSum is Neumaier's compensated sum (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., 4.3): its error is about 2u|sum| plus n*u^2*sum|x|, so
// that a float64 reference stays more accurate than a float64 device result (whose sums
// run in chains of k roundings) and its own error can be bounded by a few u, independent
// of n. The zero value is an empty sum.
type CompensatedSum struct{ s, c float64 }

// Add adds x to the sum.
func (k *CompensatedSum) Add(x float64) {
	t := k.s + x
	if math.Abs(k.s) >= math.Abs(x) {
		k.c += (k.s - t) + x
	} else {
		k.c += (x - t) + k.s
	}
	k.s = t
}

// Sum returns the sum.
func (k *CompensatedSum) Sum() float64 { return k.s + k.c }

// RefU is the unit roundoff of the float64 references, whose own error a tolerance adds
// (it matters only when the device computes in float64 too).
const RefU = 0x1p-53

// Error bounds of the device math functions, in units of the unit roundoff u of the
// element type (one ulp of a normal number is at most 2u relative to it). OpenCL 1.2
// (section 7.4) allows exp 3 ulp, rsqrt 2 ulp and single-precision division 2.5 ulp
// (double division is correctly rounded); CUDA documents expf 2 ulp, exp 1 ulp, rsqrtf 2
// ulp, rsqrt 1 ulp and IEEE division. The bounds take the larger, the OpenCL ones, for
// both float32 and float64.
const (
	ExpErrU   = 6 // exp: 3 ulp
	DivErrU   = 5 // division: 2.5 ulp
	RsqrtErrU = 4 // rsqrt: 2 ulp
)
