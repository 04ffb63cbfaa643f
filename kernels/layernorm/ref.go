package layernorm

import (
	"math"

	"github.com/prism-compute/prism/kernels"
)

// LayerNormRef computes row-wise layer normalization of the row-major [rows, cols] matrix x
// in float64 (two-pass mean and biased variance): the reference of layernorm.cl.
func LayerNormRef[T kernels.Float](x, gamma, beta []T, rows, cols int, eps float64) []float64 {
	out := make([]float64, rows*cols)
	for r := range rows {
		layerNormRefRow(out[r*cols:(r+1)*cols], x[r*cols:(r+1)*cols], gamma, beta, eps)
	}
	return out
}

// LayerNormStats are the row statistics LayerNormTolerance needs.
type LayerNormStats struct {
	Mean    float64 // the row's mean
	AbsMean float64 // the mean of |x| over the row
	Std     float64 // sqrt(var + eps)
}

// layerNormRefRow writes the normalized row into out and returns its statistics.
func layerNormRefRow[T kernels.Float](out []float64, x, gamma, beta []T, eps float64) LayerNormStats {
	n := float64(len(x))
	var s, ss kernels.CompensatedSum
	var sa float64
	for _, v := range x {
		s.Add(float64(v))
		sa += math.Abs(float64(v))
	}
	mean := s.Sum() / n
	for _, v := range x {
		d := float64(v) - mean
		ss.Add(d * d)
	}
	std := math.Sqrt(ss.Sum()/n + eps)
	for c, v := range x {
		out[c] = (float64(v)-mean)/std*float64(gamma[c]) + float64(beta[c])
	}
	return LayerNormStats{Mean: mean, AbsMean: sa / n, Std: std}
}

// LayerNormTolerance returns the largest error allowed between a device layernorm output
// and the float64 reference, for a row of cols elements with statistics st on a work-group
// of wg items; x, g and b are the element's input, gamma and beta.
//
// Derivation (first order in u, the unit roundoff of T; Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., 4.2 and 1.9). Each work-group sum runs along chains of
// k = ceil(cols/wg) + log2(wg) additions (each item's strided terms, then the tree;
// Config.Chain gives k of the short-row kernels, whose items sum 4-element vectors).
//   - mean: the sum errs by gamma_k * sum|x|, the division by DivErrU*u*|mean|, so
//     dmu = |mean' - mean| <= (gamma_k + DivErrU*u) * mean|x|.
//   - variance, two-pass: sum (x - mean')^2 = sum (x - mean)^2 + cols*dmu^2 exactly, and the
//     computed sum of the rounded squares of the rounded differences errs relatively by
//     gamma_{k+3} (all terms >= 0); the division adds DivErrU*u and the + eps u. Relative to
//     var + eps = std^2: rho_v = (gamma_{k+3} + (DivErrU+1)*u)*(1 + (dmu/std)^2) + (dmu/std)^2.
//   - rstd = rsqrt(var' + eps) errs relatively by rho_r = rho_v/2 + RsqrtErrU*u.
//   - y = ((x - mean')*rstd)*g + b: the difference carries dmu absolutely and u relatively,
//     the two products u each, the sum u*|y|. With z = (x - mean)/std:
//     |y' - y| <= |g|*(dmu/std + |z|*(rho_r + 3u)) + u*(|g*z| + |b|).
//
// The bound grows with mean|x|/std: rows with a large offset and a small spread (or constant
// rows, where std = sqrt(eps)) lose relative accuracy in the normalized values, as they must.
// A factor 1 + 1e-3 covers the second-order terms. The reference's own error is bounded the
// same way with RefU, compensated sums (2 roundings for gamma_k), a correctly rounded
// division and sqrt, and one more division (x - mean)/std, and added.
func LayerNormTolerance[T kernels.Float](cols, wg int, st LayerNormStats, x, g, b float64) float64 {
	return layerNormRowTol[T](cols, wg, st)(x, g, b)
}

// layerNormRowTol returns LayerNormTolerance of one row as a function of (x, g, b), with
// the row's share computed once.
func layerNormRowTol[T kernels.Float](cols, wg int, st LayerNormStats) func(x, g, b float64) float64 {
	return layerNormChainTol[T](Config{WorkGroup: wg}.Chain(cols), st)
}

// layerNormChainTol is layerNormRowTol for sums along chains of k additions (Config.Chain:
// the short-row kernels sum otherwise than in k = ceil(cols/wg) + log2(wg) steps).
func layerNormChainTol[T kernels.Float](k int, st LayerNormStats) func(x, g, b float64) float64 {
	u := kernels.Epsilon[T]()
	dev := layerNormBound(st, u, kernels.Gamma[T](k), kernels.Gamma[T](k+3), kernels.DivErrU*u, kernels.RsqrtErrU*u, 3*u)
	ref := layerNormBound(st, kernels.RefU, 2*kernels.RefU, 5*kernels.RefU, kernels.RefU, 2*kernels.RefU, 3*kernels.RefU)
	return func(x, g, b float64) float64 { return dev(x, g, b) + ref(x, g, b) }
}

// layerNormBound is LayerNormTolerance's formula for unit roundoff u, relative errors
// sumErr of the mean's sum and sqErr of the variance's sum, divErr of a division, rsqrtErr
// of the reciprocal square root and outErr of the output's chain (difference, products).
func layerNormBound(st LayerNormStats, u, sumErr, sqErr, divErr, rsqrtErr, outErr float64) func(x, g, b float64) float64 {
	dmu := (sumErr + divErr) * st.AbsMean
	e := dmu / st.Std
	rhoV := (sqErr+divErr+u)*(1+e*e) + e*e
	rhoR := rhoV/2 + rsqrtErr
	return func(x, g, b float64) float64 {
		z := (x - st.Mean) / st.Std
		return (math.Abs(g)*(e+math.Abs(z)*(rhoR+outErr)) + u*(math.Abs(g*z)+math.Abs(b))) * (1 + 1e-3)
	}
}
