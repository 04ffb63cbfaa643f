package gemm

import (
	"math"

	"github.com/prism-compute/prism/kernels"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// gemmAt returns op(X)[i][l] of the matrix starting at x[0] with leading dimension ld.
func gemmAt[T kernels.Float](x []T, trans bool, ld, i, l int) float64 {
	if trans {
		return float64(x[l*ld+i])
	}
	return float64(x[i*ld+l])
}

// GEMMRefAt returns element (i, j) of matrix z of alpha*op(A)*op(B) + beta*C for shape s,
// computed in float64, and its magnitude |alpha| * sum_l |op(A)[i][l]*op(B)[l][j]| +
// |beta*C[i][j]| (the scale of GEMMTolerance). C is not read when beta is 0. The shape must
// be valid and the slices at least s.Lens() long.
func GEMMRefAt[T kernels.Float](s GEMMShape, alpha float64, a, b []T, beta float64, c []T, z, i, j int) (want, mag float64) {
	s = s.WithDefaults()
	a, b = a[z*s.StrideA:], b[z*s.StrideB:]
	var sum, abs float64
	for l := range s.K {
		p := gemmAt(a, s.TransA, s.LDA, i, l) * gemmAt(b, s.TransB, s.LDB, l, j)
		sum += p
		abs += math.Abs(p)
	}
	want, mag = alpha*sum, math.Abs(alpha)*abs
	if beta != 0 {
		cij := float64(c[z*s.StrideC+i*s.LDC+j])
		want += beta * cij
		mag += math.Abs(beta * cij)
	}
	return want, mag
}

// GEMMRef computes what C holds after an in-place GEMM of shape s (GEMM.Run): elements of
// its matrices are alpha*op(A)*op(B) + beta*C in float64 (gonum's blas64.Gemm on exact
// float64 copies of the inputs); elements between them (ldc > N, strideC larger than a
// matrix) keep their values from c. mag holds, per element, the scale of GEMMTolerance:
// |alpha| * sum_l |op(A)[i][l]*op(B)[l][j]| + |beta*C[i][j]| (0 outside the matrices).
// C is not read inside the matrices when beta is 0. The shape must be valid and the slices
// at least s.Lens() long; len(want) = len(mag) = len(c).
func GEMMRef[T kernels.Float](s GEMMShape, alpha float64, a, b []T, beta float64, c []T) (want, mag []float64) {
	s = s.WithDefaults()
	want, mag = make([]float64, len(c)), make([]float64, len(c))
	for i, v := range c {
		want[i] = float64(v)
	}
	// op(A) M x K and op(B) K x N as dense float64 matrices, values and absolute values.
	opA, absA := make([]float64, s.M*s.K), make([]float64, s.M*s.K)
	opB, absB := make([]float64, s.K*s.N), make([]float64, s.K*s.N)
	res, resAbs := make([]float64, s.M*s.N), make([]float64, s.M*s.N)
	dense := func(data []float64, r, c int) blas64.General {
		return blas64.General{Rows: r, Cols: c, Stride: c, Data: data}
	}
	for z := range s.Batch {
		az, bz := a[z*s.StrideA:], b[z*s.StrideB:]
		for i := range s.M {
			for l := range s.K {
				v := gemmAt(az, s.TransA, s.LDA, i, l)
				opA[i*s.K+l], absA[i*s.K+l] = v, math.Abs(v)
			}
		}
		for l := range s.K {
			for j := range s.N {
				v := gemmAt(bz, s.TransB, s.LDB, l, j)
				opB[l*s.N+j], absB[l*s.N+j] = v, math.Abs(v)
			}
		}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, alpha, dense(opA, s.M, s.K), dense(opB, s.K, s.N), 0, dense(res, s.M, s.N))
		blas64.Gemm(blas.NoTrans, blas.NoTrans, math.Abs(alpha), dense(absA, s.M, s.K), dense(absB, s.K, s.N), 0, dense(resAbs, s.M, s.N))
		for i := range s.M {
			for j := range s.N {
				o := z*s.StrideC + i*s.LDC + j
				w, m := res[i*s.N+j], resAbs[i*s.N+j]
				if beta != 0 {
					w += beta * float64(c[o])
					m += math.Abs(beta * float64(c[o]))
				}
				want[o], mag[o] = w, m
			}
		}
	}
	return want, mag
}

// GEMMTolerance returns the largest error allowed between a device GEMM element in T and the
// float64 reference, for inner dimension k, scalar alpha, and mag = |alpha| * sum_l
// |a_il*b_lj| + |beta*c_ij| (GEMMRef, GEMMRefAt):
//
//	(gamma_{k+2}(u_T) + gamma_{k+2}(2^-53)) * mag + (k+3) * max(1, |alpha|) * tiny_T
//
// Derivation (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 3.1 and
// 3.5): the inputs, alpha and beta are exact in T and in float64. Each work-item forms one
// dot product sequentially, acc = acc + a_il*b_lj for l = 0..k-1 in T (zero padding adds
// exact zeros); with a rounding for each product and each sum (fewer when the compiler
// fuses them into fma) the computed acc = sum_l a_il*b_lj*(1+theta_l), |theta_l| <=
// gamma_k. Then alpha*acc rounds once more and beta*c once, and their sum once: the result
// is alpha*sum_l a_il*b_lj*(1+eta_l) + beta*c_ij*(1+eta_c), with |eta_l| and |eta_c| at most
// gamma_{k+2}, so |D - D_exact| <= gamma_{k+2}(u_T) * mag. The float64 reference obeys the
// same bound with u = 2^-53 (gonum sums in another order, which the bound does not depend
// on), hence the sum of the two gammas. The last term covers devices that flush
// subnormal results to zero (GPUs in float32): each of the k+2 operations can then lose up
// to the smallest normal number tiny_T (2^-126 or 2^-1022), scaled by at most |alpha|.
// The bound grows with k times the unit roundoff, as a worst case must; random inputs stay
// far below it (errors of independent signs grow like sqrt(k)).
func GEMMTolerance[T kernels.Float](k int, alpha, mag float64) float64 {
	tiny := kernels.TypeOf[T]().MinNormal
	return (kernels.Gamma[T](k+2)+kernels.Gamma[float64](k+2))*mag + float64(k+3)*math.Max(1, math.Abs(alpha))*tiny
}
