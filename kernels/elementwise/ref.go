package elementwise

import (
	"math"

	"github.com/prism-compute/prism/kernels"
)

// MapRef computes op in float64 on the host: the reference every device result of the
// map family is checked against. in holds the op's inputs in the kernel's order (x; x, y;
// a, b, c: see map.cl), a and b its scalars (ignored where it has none).
func MapRef[T kernels.Float](op MapOp, a, b float64, in ...[]T) []float64 {
	out := make([]float64, len(in[0]))
	mapRefInto(op, a, b, out, in...)
	return out
}

// mapRefInto sets out[i] to element i of MapRef(op, a, b, in...), i < len(out): the
// reference of a chunk of the output from the same chunk of the inputs.
func mapRefInto[T kernels.Float](op MapOp, a, b float64, out []float64, in ...[]T) {
	for i := range out {
		x := float64(in[0][i])
		switch op {
		case MapAxpy:
			out[i] = a*x + float64(in[1][i])
		case MapAxpby:
			out[i] = a*x + b*float64(in[1][i])
		case MapExp:
			out[i] = math.Exp(x)
		case MapRelu:
			out[i] = math.Max(x, 0)
		case MapSigmoid:
			out[i] = 1 / (1 + math.Exp(-x))
		case MapFma:
			out[i] = x*float64(in[1][i]) + float64(in[2][i])
		}
	}
}

// MapTolerance returns, for each element, the largest error allowed between a device
// result of op in T and MapRef on the same inputs (in and a, b as for MapRef). With u the
// unit roundoff of T (Epsilon) and the OpenCL 1.2 accuracy bounds (section 7.4; CUDA's
// are tighter):
//   - relu: exact (0): a comparison and a copy.
//   - axpy, axpby, fma: two roundings at most (a product, then a sum; one when fused or
//     for a correctly rounded fma): 2u (|a x| + |y|), 2u (|a x| + |b y|), 2u (|a b| + |c|).
//   - exp: at most 3 ulp of the result (OpenCL's bound for exp in float and double; CUDA:
//     2 ulp in float, 1 in double), measured in T's ulp of the exact result.
//   - sigmoid: exp(-x) within 3 ulp (6u relative), 1 + e rounded (u; e's error is scaled
//     by e/(1+e) < 1), the division within 2.5 ulp (5u; OpenCL's float bound, CUDA and
//     double division are correctly rounded): 12u relative, here 12.1u for second order.
func MapTolerance[T kernels.Float](op MapOp, a, b float64, in ...[]T) []float64 {
	tol := make([]float64, len(in[0]))
	mapToleranceInto(op, a, b, tol, in...)
	return tol
}

// mapToleranceInto sets tol[i] to element i of MapTolerance(op, a, b, in...), i < len(tol).
func mapToleranceInto[T kernels.Float](op MapOp, a, b float64, tol []float64, in ...[]T) {
	u := kernels.Epsilon[T]()
	for i := range tol {
		x := float64(in[0][i])
		switch op {
		case MapAxpy:
			tol[i] = 2 * u * (math.Abs(a*x) + math.Abs(float64(in[1][i])))
		case MapAxpby:
			tol[i] = 2 * u * (math.Abs(a*x) + math.Abs(b*float64(in[1][i])))
		case MapFma:
			tol[i] = 2 * u * (math.Abs(x*float64(in[1][i])) + math.Abs(float64(in[2][i])))
		case MapExp:
			tol[i] = 3 * kernels.TypeOf[T]().ULP(math.Exp(x))
		case MapSigmoid:
			tol[i] = 12.1*u*(1/(1+math.Exp(-x))) + kernels.TypeOf[T]().ULP(0)
		case MapRelu:
			tol[i] = 0
		}
	}
}
