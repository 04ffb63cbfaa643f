package overlap

import "math"

// Ref returns overlap_compute's result on v in float64: iters steps y = a*y + v from y = v.
func Ref(v float64, iters int, a float64) float64 {
	y := v
	for range iters {
		y = a*y + v
	}
	return y
}

// Tolerance returns the bound on |float32 result - Ref| for input v and contraction a
// (|a| < 1), whatever the number of steps. Every |y| of the chain stays below |v|/(1-|a|);
// a step rounds its product and its sum (once where they are fused), each by at most u
// times that (u = 2^-24), and the error a step inherits shrinks by |a|, so the errors sum
// to at most 2u|v|/(1-|a|)^2, 2^-7 |v| at the suite's a (the result is about 256 v).
// 2^-126/(1-|a|), beyond any result of a subnormal v, covers a device that flushes
// subnormals to zero (a normal v keeps the chain normal: y grows from v).
func Tolerance(v, a float64) float64 {
	c := 1 - math.Abs(a)
	return 2*0x1p-24*math.Abs(v)/(c*c) + 0x1p-126/c
}
