package kernels

import "math"

// SoftmaxRef computes the row-wise softmax of the row-major [rows, cols] matrix x in
// float64, stably (the row maximum subtracted before exp): the reference of softmax.cl.
func SoftmaxRef[T Float](x []T, rows, cols int) []float64 {
	out := make([]float64, rows*cols)
	for r := range rows {
		softmaxRefRow(out[r*cols:(r+1)*cols], x[r*cols:(r+1)*cols])
	}
	return out
}

// softmaxRefRow writes the softmax of x into out and returns the row's maximum and
// minimum, the inputs of SoftmaxTolerance.
func softmaxRefRow[T Float](out []float64, x []T) (hi, lo float64) {
	hi, lo = math.Inf(-1), math.Inf(1)
	for _, v := range x {
		hi, lo = math.Max(hi, float64(v)), math.Min(lo, float64(v))
	}
	var s ksum
	for i, v := range x {
		out[i] = math.Exp(float64(v) - hi)
		s.add(out[i])
	}
	sum := s.sum()
	for i := range out {
		out[i] /= sum
	}
	return hi, lo
}

// ksum is Neumaier's compensated sum (Higham, 4.3): its error is about 2u|sum| plus
// n*u^2*sum|x|, so that the float64 references stay more accurate than a float64 device
// result (whose sums run in chains of k roundings) and their own error can be bounded by a
// few u, independent of n.
type ksum struct{ s, c float64 }

func (k *ksum) add(x float64) {
	t := k.s + x
	if math.Abs(k.s) >= math.Abs(x) {
		k.c += (k.s - t) + x
	} else {
		k.c += (x - t) + k.s
	}
	k.s = t
}

func (k *ksum) sum() float64 { return k.s + k.c }

// refU is the unit roundoff of the float64 references, whose own error every tolerance
// adds (it matters only when T is float64).
const refU = 0x1p-53

// Error bounds of the device math functions, in units of the unit roundoff u of T (one ulp
// of a normal number is at most 2u relative to it). OpenCL 1.2 (section 7.4) allows exp 3
// ulp, rsqrt 2 ulp and single-precision division 2.5 ulp (double division is correctly
// rounded); CUDA documents expf 2 ulp, exp 1 ulp, rsqrtf 2 ulp, rsqrt 1 ulp and IEEE
// division. The bounds below take the larger, the OpenCL ones, for both types.
const (
	expErrU   = 6 // 3 ulp
	divErrU   = 5 // 2.5 ulp
	rsqrtErrU = 4 // 2 ulp
)

// SoftmaxTolerance returns the largest error allowed between a device softmax output and
// the float64 reference y, for a row of cols elements on a work-group of wg items; online
// says whether the kernel took its online path (Softmax.Online). rowMax and rowMin are the
// row's largest and smallest inputs, x the element's own input.
//
// Derivation (first order in u, the unit roundoff of T; y_i = e_i / s, e_i = exp(x_i - M)):
//   - M, the row max, is exact (max does not round). d_i = fl(x_i - M) errs by u*|x_i - M|,
//     which exp turns into a relative error u*|x_i - M| of e_i; exp itself adds expErrU*u.
//   - s sums the e_j along chains of k = ceil(cols/wg) + log2(wg) additions (each item's
//     strided terms, then the tree): all terms are positive, so s errs relatively by at most
//     gamma_k plus the largest relative error of a term, u*(M - min) + expErrU*u.
//   - Online path only: each item's running sum is rescaled by exp(m_old - m_new) at most
//     once per element and once per tree level, k times in all, each rescale costing an exp
//     (expErrU*u) and a product (u); the rounding of the exp arguments telescopes to at most
//     u*(M - min) over the chain.
//   - The division adds divErrU*u.
//
// The reference's own error adds refU*((M - x_i) + (M - min) + 7) (Go's exp under 1 ulp,
// a compensated sum, one division). The relative bound rel is the sum of these terms,
// applied as rel/(1-rel) to absorb the second-order terms. Outputs below the smallest normal number tiny may be flushed (e_i
// underflows to zero or a denormal; s >= 1 since the max term is exp(0)), so tiny*2 is
// allowed absolutely.
func SoftmaxTolerance[T Float](cols, wg int, online bool, rowMax, rowMin, x, y float64) float64 {
	return softmaxRowTol[T](cols, wg, online, rowMax, rowMin)(x, y)
}

// softmaxRowTol returns SoftmaxTolerance of one row as a function of (x, y), with the
// row's share computed once.
func softmaxRowTol[T Float](cols, wg int, online bool, rowMax, rowMin float64) func(x, y float64) float64 {
	u := Epsilon[T]()
	k := (cols+wg-1)/wg + Log2Ceil(wg)
	span := rowMax - rowMin
	base := expErrU*u + // e_i, less its argument's rounding u*(rowMax - x)
		u*span + expErrU*u + Gamma[T](k) + // s
		divErrU*u
	if online {
		base += float64(k)*(expErrU+1)*u + u*span
	}
	base += refU * (span + 7)
	tiny2 := 2 * TypeOf[T]().MinNormal // GPUs flush denormal results to zero
	return func(x, y float64) float64 {
		rel := base + (u+refU)*(rowMax-x)
		if !(rel < 1) {
			return math.Inf(1)
		}
		return math.Abs(y)*rel/(1-rel) + tiny2
	}
}
