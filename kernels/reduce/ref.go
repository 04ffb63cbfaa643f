package reduce

import (
	"math"

	"github.com/prism-compute/prism/kernels"
)

// ReduceRef computes op over x on the host: the reference device results are checked
// against. It returns the value in float64 and, for argmin and argmax, the index of the
// first occurrence (-1 otherwise, and when every element is NaN). Semantics follow
// reduce.cl: a float sum is computed with Neumaier's compensated summation (error about
// 2u_64 of the sum of |x|); an int32 sum wraps modulo 2^32 exactly as the device's; min,
// max, argmin and argmax ignore NaNs and give +-Inf (floats) or MaxInt32/MinInt32 (int32)
// when nothing is left.
func ReduceRef[T ReduceElem](op ReduceOp, x []T) (float64, int) {
	switch op {
	case ReduceSum:
		var z T
		if _, ok := any(z).(int32); ok {
			var s int32
			for _, v := range x {
				s += int32(v) // wraps modulo 2^32, as the device
			}
			return float64(s), -1
		}
		var s, c float64 // Neumaier: s + c is the sum
		for _, v := range x {
			f := float64(v)
			t := s + f
			if math.Abs(s) >= math.Abs(f) {
				c += (s - t) + f
			} else {
				c += (f - t) + s
			}
			s = t
		}
		return s + c, -1
	case ReduceMin, ReduceArgMin, ReduceMax, ReduceArgMax:
		less := op == ReduceMin || op == ReduceArgMin
		best, bi := reduceIdentity[T](less), -1
		for i, v := range x {
			f := float64(v)
			if f != f {
				continue
			}
			if bi < 0 || (less && f < best) || (!less && f > best) {
				best, bi = f, i
			}
		}
		if !op.IsArg() {
			bi = -1
		}
		return best, bi
	}
	return math.NaN(), -1
}

// reduceIdentity is the value min (less) or max returns over no element: +-Inf for floats,
// MaxInt32 or MinInt32 for int32, as ELEM_MAX and ELEM_LOWEST in reduce.cl.
func reduceIdentity[T ReduceElem](less bool) float64 {
	var z T
	_, isInt := any(z).(int32)
	switch {
	case isInt && less:
		return math.MaxInt32
	case isInt:
		return math.MinInt32
	case less:
		return math.Inf(1)
	}
	return math.Inf(-1)
}

// ReduceRowsRef computes op over each row of the row-major rows x cols matrix x: one value
// per row and, for argmin and argmax, the column index of the first occurrence.
func ReduceRowsRef[T ReduceElem](op ReduceOp, x []T, rows, cols int) ([]float64, []int) {
	vals, idx := make([]float64, rows), make([]int, rows)
	for r := range rows {
		vals[r], idx[r] = ReduceRef(op, x[r*cols:(r+1)*cols])
	}
	return vals, idx
}

// ReduceTolerance returns the largest error allowed between a device result of op in T and
// the reference. chain is the longest chain of additions by which the device accumulates
// any one element (Reduce.Chain, Reduce.RowChain); sumAbs is the sum of |x| over the
// elements reduced.
//
// Min, max, argmin and argmax select an element: exact (0). An int32 sum wraps modulo 2^32
// on both sides: exact. A float sum in T is a summation tree in which every element passes
// through at most chain roundings, so its error is at most gamma_chain * sum|x| with
// gamma_k = k*u/(1-k*u), u the unit roundoff of T (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., 4.2); the compensated float64 reference adds at most
// about 2u_64 * sum|x|, covered by gamma_3 in float64.
func ReduceTolerance[T ReduceElem](op ReduceOp, chain int, sumAbs float64) float64 {
	if op != ReduceSum || !kernels.TypeOf[T]().Float {
		return 0
	}
	return (kernels.Gamma[T](chain) + kernels.Gamma[float64](3)) * sumAbs
}
