package main

import (
	"math"
	"math/bits"
)

// The expected outputs of the corpus kernels of built-in functions
// (cuda/clc/translate/testdata/corpus/math_builtins.cl, select.cl and half.cl), computed in float64 from
// the OpenCL C 1.2 specification's definitions. Tolerances of the math functions are the
// specification's maximum errors for single precision (sqrt 3 ulp, rsqrt 2, exp and log 3,
// sin and cos 4, pow 16); the geometric functions, for which it gives no ulp bound, are
// allowed 4 ulp on inputs where nothing cancels; integer, select and half results are
// exact.

// builtinHalf rounds x to IEEE binary16 as vstore_half does: mode 'e' to nearest even,
// 'z' toward zero, 'p' toward +infinity, 'n' toward -infinity. Beyond the largest half,
// 65504, the rounding gives infinity, except toward zero (and toward the other infinity),
// which gives 65504; below 2^-14 the halves are subnormal, multiples of 2^-24.
func builtinHalf(x float64, mode byte) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	a, neg := math.Abs(x), x < 0
	e := max(math.Ilogb(a), -14)
	q := math.Ldexp(1, e-10) // the result's last place
	m := a / q
	n := math.Floor(m)
	frac := m - n
	switch {
	case mode == 'e' && (frac > 0.5 || frac == 0.5 && math.Mod(n, 2) == 1),
		mode == 'p' && frac > 0 && !neg,
		mode == 'n' && frac > 0 && neg:
		n++
	}
	r := n * q
	if r > 65504 {
		if mode == 'z' || mode == 'p' && neg || mode == 'n' && !neg {
			r = 65504
		} else {
			r = math.Inf(1)
		}
	}
	if neg {
		r = -r
	}
	return r
}

// builtinBool is 1 for true, 0 for false: a scalar relational function's result.
func builtinBool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

var corpusBuiltinChecks = map[string]corpusCheck{
	"vector_math": {ulps: []float64{3, 2, 3, 3, 4, 4, 16, 1}, ref: func(in [][]float64) [][]float64 {
		x, n := in[8], int(in[9][0])
		return perItem(1024, n, []int{4, 4, 4, 4, 4, 4, 4, 16}, func(i int, o [][]float64) {
			for c := range 4 {
				v := x[4*i+c]
				a := f32(math.Abs(v) + 0.5)
				o[0][c], o[1][c] = math.Sqrt(a), 1/math.Sqrt(a)
				o[2][c], o[3][c] = math.Exp(v), math.Log(a)
				o[4][c], o[5][c] = math.Sin(v), math.Cos(v)
				o[6][c] = math.Pow(a, v)
				o[7][c] = min(max(v, -0.5), 0.5)
				step, sign := builtinBool(v >= 0), 0.0
				if v > 0 {
					sign = 1
				} else if v < 0 {
					sign = -1
				}
				o[7][4+c] = step + sign
				o[7][8+c] = f32(min(v, 0.25) + max(v, -0.25))
				o[7][12+c] = f32(1.25 * a)
			}
		})
	}},
	"geometry": {ulps: []float64{4, 4, 4, 4}, ref: func(in [][]float64) [][]float64 {
		pa, pb, k, n := in[6], in[7], in[8], int(in[9][0])
		return perItem(1024, n, []int{1, 1, 1, 4, 3, 1}, func(i int, o [][]float64) {
			var dot, sq, dist float64
			var p [4]float64
			for c := range 4 {
				p[c] = f32(math.Abs(pa[4*i+c]) + 0.5)
				q := f32(math.Abs(pb[4*i+c]) + 0.5)
				dot += p[c] * q
				sq += p[c] * p[c]
				dist += (p[c] - q) * (p[c] - q)
			}
			o[0][0], o[1][0], o[2][0] = dot, math.Sqrt(sq), math.Sqrt(dist)
			for c := range 4 {
				o[3][c] = p[c] / math.Sqrt(sq)
			}
			u, v := k[6*i:6*i+3], k[6*i+3:6*i+6]
			o[4][0] = u[1]*v[2] - u[2]*v[1]
			o[4][1] = u[2]*v[0] - u[0]*v[2]
			o[4][2] = u[0]*v[1] - u[1]*v[0]
			o[5][0] = u[0]*v[0] + u[1]*v[1] + u[2]*v[2]
		})
	}},
	"integer_math": {ref: func(in [][]float64) [][]float64 {
		a, b, n := in[1], in[2], int(in[3][0])
		sat := func(v int64) float64 { return float64(min(max(v, math.MinInt32), math.MaxInt32)) }
		return perItem(256, n, []int{48}, func(i int, out [][]float64) {
			o := out[0]
			for c := range 4 {
				x, y := int64(a[4*i+c]), int64(b[4*i+c])
				X, Y := x<<25, y<<25
				o[c] = float64(max(x, -x))
				o[4+c] = float64(min(x, y))
				o[8+c] = float64(max(x, 3))
				o[12+c] = float64(min(max(x, -10), 10))
				o[16+c] = float64(max(x-y, y-x))
				o[20+c] = sat(X + Y)
				o[24+c] = sat(X - Y)
				o[28+c] = float64((x + y) >> 1)
				o[32+c] = float64((x + y + 1) >> 1)
				o[36+c] = float64(int32(bits.RotateLeft32(uint32(int32(x)), int(y&31))))
				o[40+c] = float64((X * (y * 12345679)) >> 32)
				o[44+c] = float64(bits.OnesCount32(uint32(int32(x))) + bits.LeadingZeros32(uint32(int32(x)))<<6)
			}
		})
	}},
	"char_sat": {ref: func(in [][]float64) [][]float64 {
		a, b, n := in[4], in[5], int(in[6][0])
		return perItem(256, n, []int{16, 16, 16, 16}, func(i int, o [][]float64) {
			for c := range 16 {
				x, y := int(a[16*i+c]), int(b[16*i+c])
				o[0][c] = float64(min(max(x+2*y, -128), 127))
				o[1][c] = float64(min(max(x-2*y, -128), 127))
				o[2][c] = float64(max(x, -x) + max(x-y, y-x))
				o[3][c] = float64((x + y + 1) >> 1)
			}
		})
	}},
	"select_float": {ref: func(in [][]float64) [][]float64 {
		a, b, k, n := in[5], in[6], in[7], int(in[8][0])
		return perItem(1024, n, []int{4, 4, 4, 1, 1}, func(i int, o [][]float64) {
			anyNeg, allBig, anyLess := false, true, false
			for c := range 4 {
				x, y, m := a[4*i+c], b[4*i+c], int32(k[4*i+c])
				o[0][c] = x
				if m < 0 {
					o[0][c] = y
				}
				o[1][c] = max(x, y)
				mb := uint32(m)
				o[2][c] = float64(math.Float32frombits(math.Float32bits(float32(x))&^mb | math.Float32bits(float32(y))&mb))
				anyNeg = anyNeg || m < 0
				allBig = allBig && x > -0.5
				anyLess = anyLess || x < y
			}
			o[3][0] = a[4*i]
			if k[4*i] != 0 {
				o[3][0] = b[4*i]
			}
			o[4][0] = builtinBool(anyNeg) + 2*builtinBool(allBig) + 4*builtinBool(anyLess)
		})
	}},
	"select_int": {ref: func(in [][]float64) [][]float64 {
		a, b, n := in[4], in[5], int(in[6][0])
		return perItem(512, n, []int{8, 8, 1, 8}, func(i int, o [][]float64) {
			for c := range 8 {
				x, y := int32(a[8*i+c]), int32(b[8*i+c])
				o[0][c] = float64(min(x, y))
				o[1][c] = float64(x&^0x0f0f0f0f | y&0x0f0f0f0f)
				o[3][c] = float64(x + 64)
				if x < 0 {
					o[3][c] = float64(y + 64)
				}
			}
			o[2][0] = a[8*i]
			if int32(a[8*i+1])&1 != 0 {
				o[2][0] = b[8*i]
			}
		})
	}},
	"half_store": {ref: func(in [][]float64) [][]float64 {
		x, big, tiny, n := in[5], in[6][0], in[7][0], int(in[8][0])
		return perItem(1024, n, []int{2, 2, 2, 2, 1}, func(i int, o [][]float64) {
			f, g := f32(x[i]*big), f32(x[i]*tiny)
			for j, mode := range []byte{'e', 'z', 'p', 'n'} {
				o[j][0], o[j][1] = builtinHalf(f, mode), builtinHalf(g, mode)
			}
			o[4][0] = builtinHalf(x[i], 'e')
		})
	}},
	"half_load": {ref: func(in [][]float64) [][]float64 {
		h, n := in[4], int(in[5][0])
		tenth := f32(0.1)
		return perItem(1024, n, []int{1, 4, 4, 4}, func(i int, o [][]float64) {
			v := h[4*i : 4*i+4]
			o[0][0] = f32(v[0] + v[3])
			for c := range 4 {
				o[1][c] = 2*v[c] + 1
				o[2][c] = builtinHalf(3*v[c], 'n')
			}
			for c := range 3 {
				o[3][c] = builtinHalf(f32(v[c]*tenth), 'p')
			}
		})
	}},
}
