package stream

import "github.com/prism-compute/prism/kernels"

// StreamRef computes op in float64 on the host: the reference every device result is
// checked against. For copy, scale, add and triad it returns the output array; for dot, a
// one-element slice. a, b, c and k play the roles of the kernel arguments of the same names
// in stream.cl.
func StreamRef[T kernels.Float](op StreamOp, a, b, c []T, k float64) []float64 {
	switch op {
	case OpCopy, OpAdd:
		out := make([]float64, len(a))
		streamRefInto(op, out, a, b, c, k)
		return out
	case OpScale:
		out := make([]float64, len(c))
		streamRefInto(op, out, a, b, c, k)
		return out
	case OpTriad:
		out := make([]float64, len(b))
		streamRefInto(op, out, a, b, c, k)
		return out
	case OpDot:
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return []float64{s}
	}
	return nil
}

// streamRefInto sets out[i] to element i of StreamRef(op, a, b, c, k) for an element-wise
// op (copy, scale, add, triad), i < len(out): the reference of a chunk of the output from
// the same chunk of the inputs.
func streamRefInto[T kernels.Float](op StreamOp, out []float64, a, b, c []T, k float64) {
	switch op {
	case OpCopy: // c = a
		for i := range out {
			out[i] = float64(a[i])
		}
	case OpScale: // b = k*c
		for i := range out {
			out[i] = k * float64(c[i])
		}
	case OpAdd: // c = a + b
		for i := range out {
			out[i] = float64(a[i]) + float64(b[i])
		}
	case OpTriad: // a = b + k*c
		for i := range out {
			out[i] = float64(b[i]) + k*float64(c[i])
		}
	}
}

// StreamTolerance returns the largest error allowed between a device result of op and the
// float64 reference over n elements, for a stream family compiled with work-group size wg.
// mag is, for dot, the sum of |a[i]*b[i]|; otherwise the largest |term| of the expression.
//
// Element-wise ops round at most twice in T (a product, then a sum; or once when the
// compiler fuses them into an fma): 2u times the largest term, u the unit roundoff of T.
// Dot adds n products along chains of at most k additions: ceil(n/wg) in the grid-stride
// loop (at least one work-group of wg items), log2(wg) in each of the two tree reductions,
// and ceil(groups/wg) <= ceil(n/wg^2)+1 in the final loop. Recursive summation along a
// chain of k additions errs by at most gamma_k * sum|a_i b_i|, gamma_k = k*u/(1-k*u)
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 4.2), and the
// products add one rounding each, hence k+1.
func StreamTolerance[T kernels.Float](op StreamOp, n, wg int, mag float64) float64 {
	u := kernels.Epsilon[T]()
	if op != OpDot {
		return 2 * u * mag
	}
	log2 := 0
	for w := wg; w > 1; w >>= 1 {
		log2++
	}
	k := float64((n+wg-1)/wg + 2*log2 + (n+wg*wg-1)/(wg*wg) + 2)
	return k * u / (1 - k*u) * mag
}
