package engine

// Float8E4M3 is an 8-bit floating-point number in the E4M3 encoding of the OCP 8-bit
// Floating Point Specification (OFP8, the "E4M3FN" of ML libraries, NVIDIA's __nv_fp8_e4m3),
// held as its bits: a sign, 4 exponent bits of bias 7 and 3 fraction bits. It has no
// infinities: S.1111.111 are its only NaNs, and the rest of the top binade is finite, so
// that the largest finite value is S.1111.110 = 448. The smallest normal value is 2^-6,
// the smallest subnormal 2^-9.
//
// Conversions round to nearest, ties to even. Float8E4M3FromFloat32 and
// Float8E4M3FromFloat64 follow OFP8's non-saturating mode: a value whose rounded magnitude
// exceeds 448 (any magnitude above 464, the point halfway to 480), and an infinity, become
// NaN. Float8E4M3FromFloat32Sat and Float8E4M3FromFloat64Sat saturate instead, as NVIDIA's
// cvt.rn.satfinite does: such values, infinities included, become ±448. In both modes a NaN
// becomes NaN of the same sign, and signed zeros are kept.
type Float8E4M3 uint8

// Float8E5M2 is an 8-bit floating-point number in the E5M2 encoding of the OCP 8-bit
// Floating Point Specification (NVIDIA's __nv_fp8_e5m2), held as its bits: a sign, 5
// exponent bits of bias 15 and 2 fraction bits, with IEEE 754's special values (the upper
// byte of a Half): infinities S.11111.00 and NaNs S.11111.{01,10,11}. The largest finite
// value is 57344, the smallest normal 2^-14, the smallest subnormal 2^-16.
//
// Conversions round to nearest, ties to even. Float8E5M2FromFloat32 and
// Float8E5M2FromFloat64 follow OFP8's non-saturating mode, as IEEE 754 does: a value whose
// rounded magnitude exceeds 57344 (any magnitude of at least 61440, the point halfway to
// 65536) becomes an infinity of its sign, and infinities stay infinities.
// Float8E5M2FromFloat32Sat and Float8E5M2FromFloat64Sat saturate instead, as NVIDIA's
// cvt.rn.satfinite does: such values, infinities included, become ±57344. In both modes a
// NaN becomes a quiet NaN (S.11111.1x) of the same sign, and signed zeros are kept.
type Float8E5M2 uint8

var (
	e4m3 = minifloat{exp: 4, frac: 3, fn: true}
	e5m2 = minifloat{exp: 5, frac: 2}
)

// Float8E4M3FromFloat32 returns f rounded to the nearest Float8E4M3, ties to even, NaN where
// the rounded magnitude exceeds 448 or f is infinite (OFP8's non-saturating mode).
func Float8E4M3FromFloat32(f float32) Float8E4M3 { return Float8E4M3(e4m3.fromFloat32(f, false)) }

// Float8E4M3FromFloat64 returns x rounded to the nearest Float8E4M3, ties to even, in one
// rounding; NaN where the rounded magnitude exceeds 448 or x is infinite.
func Float8E4M3FromFloat64(x float64) Float8E4M3 { return Float8E4M3(e4m3.fromFloat64(x, false)) }

// Float8E4M3FromFloat32Sat returns f rounded to the nearest Float8E4M3, ties to even, ±448
// where the rounded magnitude exceeds 448 or f is infinite (saturating, as NVIDIA's
// cvt.rn.satfinite.e4m3x2.f32); a NaN stays NaN.
func Float8E4M3FromFloat32Sat(f float32) Float8E4M3 { return Float8E4M3(e4m3.fromFloat32(f, true)) }

// Float8E4M3FromFloat64Sat returns x rounded to the nearest Float8E4M3, ties to even, in one
// rounding, ±448 where the rounded magnitude exceeds 448 or x is infinite; a NaN stays NaN.
func Float8E4M3FromFloat64Sat(x float64) Float8E4M3 { return Float8E4M3(e4m3.fromFloat64(x, true)) }

// Float32 returns the value of v, exactly; a NaN gives a quiet NaN of its sign.
func (v Float8E4M3) Float32() float32 { return e4m3.toFloat32(uint64(v)) }

// Float64 returns the value of v, exactly; a NaN gives a quiet NaN of its sign.
func (v Float8E4M3) Float64() float64 { return e4m3.toFloat64(uint64(v)) }

// String formats v as fmt's %v formats v.Float32(): the shortest decimal that reads back as
// the same float32, which for every E4M3 value is its exact value ("448", "0.001953125",
// "NaN").
func (v Float8E4M3) String() string { return format32(v.Float32()) }

// Float8E5M2FromFloat32 returns f rounded to the nearest Float8E5M2, ties to even, an
// infinity where the rounded magnitude exceeds 57344 (OFP8's non-saturating mode).
func Float8E5M2FromFloat32(f float32) Float8E5M2 { return Float8E5M2(e5m2.fromFloat32(f, false)) }

// Float8E5M2FromFloat64 returns x rounded to the nearest Float8E5M2, ties to even, in one
// rounding; an infinity where the rounded magnitude exceeds 57344.
func Float8E5M2FromFloat64(x float64) Float8E5M2 { return Float8E5M2(e5m2.fromFloat64(x, false)) }

// Float8E5M2FromFloat32Sat returns f rounded to the nearest Float8E5M2, ties to even,
// ±57344 where the rounded magnitude exceeds 57344 or f is infinite (saturating, as
// NVIDIA's cvt.rn.satfinite.e5m2x2.f32); a NaN stays NaN.
func Float8E5M2FromFloat32Sat(f float32) Float8E5M2 { return Float8E5M2(e5m2.fromFloat32(f, true)) }

// Float8E5M2FromFloat64Sat returns x rounded to the nearest Float8E5M2, ties to even, in one
// rounding, ±57344 where the rounded magnitude exceeds 57344 or x is infinite; a NaN stays
// NaN.
func Float8E5M2FromFloat64Sat(x float64) Float8E5M2 { return Float8E5M2(e5m2.fromFloat64(x, true)) }

// Float32 returns the value of v, exactly; a NaN gives a quiet NaN of its sign and payload.
func (v Float8E5M2) Float32() float32 { return e5m2.toFloat32(uint64(v)) }

// Float64 returns the value of v, exactly; a NaN gives a quiet NaN of its sign and payload.
func (v Float8E5M2) Float64() float64 { return e5m2.toFloat64(uint64(v)) }

// String formats v as fmt's %v formats v.Float32(): the shortest decimal that reads back as
// the same float32 ("57344", "1.5258789e-05" for 2^-16, "+Inf", "NaN").
func (v Float8E5M2) String() string { return format32(v.Float32()) }
