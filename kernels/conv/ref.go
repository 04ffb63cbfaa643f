package conv

import (
	"math"

	"github.com/prism-compute/prism/kernels"
)

// ConvRefAt returns, in float64, output element i (= ((n*K + k)*P + p)*Q + q) of the
// convolution of shape s (see Conv.Run; bias may be nil), and mag, the sum of |terms|
// (|bias[k]| and every |filt * in| product), for the tolerance.
func ConvRefAt[T kernels.Float](in, filt, bias []T, s ConvShape, i int) (val, mag float64) {
	P, Q := s.Out()
	q := i % Q
	p := (i / Q) % P
	k := (i / (P * Q)) % s.K
	n := i / (s.K * P * Q)
	if bias != nil {
		val, mag = float64(bias[k]), math.Abs(float64(bias[k]))
	}
	for c := range s.C {
		img := in[(n*s.C+c)*s.H*s.W:]
		f := filt[(k*s.C+c)*s.R*s.R:]
		for r := range s.R {
			h := p*s.Stride - s.Pad + r
			if h < 0 || h >= s.H {
				continue
			}
			for t := range s.R {
				w := q*s.Stride - s.Pad + t
				if w < 0 || w >= s.W {
					continue
				}
				prod := float64(f[r*s.R+t]) * float64(img[h*s.W+w])
				val += prod
				mag += math.Abs(prod)
			}
		}
	}
	return val, mag
}

// ConvRef returns the float64 reference of the whole output of the convolution of shape
// s, and each element's mag (see ConvRefAt).
func ConvRef[T kernels.Float](in, filt, bias []T, s ConvShape) (want, mag []float64) {
	n := s.OutLen()
	want, mag = make([]float64, n), make([]float64, n)
	for i := range n {
		want[i], mag[i] = ConvRefAt(in, filt, bias, s, i)
	}
	return want, mag
}

// ConvTolerance returns the largest error allowed at an output of the convolution of
// shape s whose terms have sum of |terms| mag (ConvRefAt), with or without bias.
//
// Each output is a sum of m = C*R*R products (the padding's zero products included),
// plus the bias when there is one, accumulated in T one term after another with fma
// (conv.cl): every term passes through at most m roundings (one per accumulation step
// after it enters; an fma rounds product and sum once), so the computed value differs from
// the exact one by at most gamma_m * sum |terms|, gamma_m = m*u/(1-m*u), u the unit roundoff
// of T (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 3.1 and 4.2),
// with m = C*R*R, or C*R*R + 1 with a bias. Inputs, filters and bias are T values, exact in
// float64.
func ConvTolerance[T kernels.Float](s ConvShape, bias bool, mag float64) float64 {
	m := s.C * s.R * s.R
	if bias {
		m++
	}
	return kernels.Gamma[T](m) * mag
}
