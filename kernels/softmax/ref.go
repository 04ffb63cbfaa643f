package softmax

import (
	"math"

	"github.com/prism-compute/prism/kernels"
)

// SoftmaxRef computes the row-wise softmax of the row-major [rows, cols] matrix x in
// float64, stably (the row maximum subtracted before exp): the reference of softmax.cl.
func SoftmaxRef[T kernels.Float](x []T, rows, cols int) []float64 {
	out := make([]float64, rows*cols)
	for r := range rows {
		softmaxRefRow(out[r*cols:(r+1)*cols], x[r*cols:(r+1)*cols])
	}
	return out
}

// softmaxRefRow writes the softmax of x into out and returns the row's maximum and
// minimum, the inputs of SoftmaxTolerance.
func softmaxRefRow[T kernels.Float](out []float64, x []T) (hi, lo float64) {
	hi, lo = math.Inf(-1), math.Inf(1)
	for _, v := range x {
		hi, lo = math.Max(hi, float64(v)), math.Min(lo, float64(v))
	}
	var s kernels.CompensatedSum
	for i, v := range x {
		out[i] = math.Exp(float64(v) - hi)
		s.Add(out[i])
	}
	sum := s.Sum()
	for i := range out {
		out[i] /= sum
	}
	return hi, lo
}

// SoftmaxTolerance returns the largest error allowed between a device softmax output and
// the float64 reference y, for a row of cols elements on a work-group of wg items; online
// says whether the kernel took its online path (!Config.Cached(cols)). rowMax and rowMin are the
// row's largest and smallest inputs, x the element's own input.
//
// Derivation (first order in u, the unit roundoff of T; y_i = e_i / s, e_i = exp(x_i - M)):
//   - M, the row max, is exact (max does not round). d_i = fl(x_i - M) errs by u*|x_i - M|,
//     which exp turns into a relative error u*|x_i - M| of e_i; exp itself adds ExpErrU*u.
//   - s sums the e_j along chains of k = ceil(cols/wg) + log2(wg) additions (each item's
//     strided terms, then the tree; Config.Chain gives k of the short-row kernels, whose
//     items sum 4-element vectors): all terms are positive, so s errs relatively by at most
//     gamma_k plus the largest relative error of a term, u*(M - min) + ExpErrU*u.
//   - Online path only: each item's running sum is rescaled by exp(m_old - m_new) at most
//     once per element and once per tree level, k times in all, each rescale costing an exp
//     (ExpErrU*u) and a product (u); the rounding of the exp arguments telescopes to at most
//     u*(M - min) over the chain.
//   - The division adds DivErrU*u.
//
// The reference's own error adds RefU*((M - x_i) + (M - min) + 7) (Go's exp under 1 ulp,
// a compensated sum, one division). The relative bound rel is the sum of these terms,
// applied as rel/(1-rel) to absorb the second-order terms. Outputs below the smallest normal number tiny may be flushed (e_i
// underflows to zero or a denormal; s >= 1 since the max term is exp(0)), so tiny*2 is
// allowed absolutely.
func SoftmaxTolerance[T kernels.Float](cols, wg int, online bool, rowMax, rowMin, x, y float64) float64 {
	return softmaxRowTol[T](cols, wg, online, rowMax, rowMin)(x, y)
}

// softmaxRowTol returns SoftmaxTolerance of one row as a function of (x, y), with the
// row's share computed once.
func softmaxRowTol[T kernels.Float](cols, wg int, online bool, rowMax, rowMin float64) func(x, y float64) float64 {
	return softmaxChainTol[T](Config{WorkGroup: wg}.Chain(cols), online, rowMax, rowMin)
}

// softmaxChainTol is softmaxRowTol for sums along chains of k additions (Config.Chain: the
// short-row kernels sum otherwise than in k = ceil(cols/wg) + log2(wg) steps).
func softmaxChainTol[T kernels.Float](k int, online bool, rowMax, rowMin float64) func(x, y float64) float64 {
	u := kernels.Epsilon[T]()
	span := rowMax - rowMin
	base := kernels.ExpErrU*u + // e_i, less its argument's rounding u*(rowMax - x)
		u*span + kernels.ExpErrU*u + kernels.Gamma[T](k) + kernels. // s
		DivErrU*
		u
	if online {
		base += float64(k)*(kernels.ExpErrU+1)*u + u*span
	}
	base += kernels.RefU * (span + 7)
	tiny2 := 2 * kernels.TypeOf[T]().MinNormal // GPUs flush denormal results to zero
	return func(x, y float64) float64 {
		rel := base + (u+kernels.RefU)*(rowMax-x)
		if !(rel < 1) {
			return math.Inf(1)
		}
		return math.Abs(y)*rel/(1-rel) + tiny2
	}
}
