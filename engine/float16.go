package engine

import (
	"math"
	"math/bits"
	"strconv"
)

// Half is an IEEE 754 binary16 ("half precision", float16) number held as its bits: a sign,
// 5 exponent bits of bias 15 and 10 fraction bits; 11 significant bits, largest finite
// value 65504, smallest normal 2^-14, smallest subnormal 2^-24. Go has no arithmetic for it:
// a Buffer[Half] holds a device's half-precision data, and the host converts each element
// with HalfFromFloat32 or HalfFromFloat64 and Float32 or Float64.
//
// Every conversion is exact where the value is representable and otherwise rounds to
// nearest, ties to even; values whose rounded magnitude exceeds 65504 become infinities of
// their sign, signed zeros and infinities are kept, and subnormals are produced and read.
// A NaN stays a NaN of the same sign, made quiet (the fraction's leading bit set), with the
// leading bits of its payload kept.
type Half uint16

// BFloat16 is a bfloat16 ("brain floating point") number held as its bits: the upper 16
// bits of a float32, a sign, 8 exponent bits of bias 127 and 7 fraction bits; 8
// significant bits and float32's exponent range (largest finite value about 3.39e38,
// smallest normal 2^-126, smallest subnormal 2^-133). Conversions round as Half's do, to
// nearest with ties to even (never by truncating the lower bits), with float32's special
// values: infinities, signed zeros, quiet NaNs with their sign and leading payload.
type BFloat16 uint16

// minifloat is a binary floating-point format of at most 16 bits, laid out as IEEE 754's
// (sign, biased exponent, fraction). Formats with fn set follow OCP's E4M3: no infinities,
// the patterns with every exponent and fraction bit set are the only NaNs, and the rest of
// the top binade holds finite values.
type minifloat struct {
	exp, frac uint // exponent and fraction bits
	fn        bool // finite: no infinities, only the all-ones NaN
}

var (
	binary16 = minifloat{exp: 5, frac: 10}
	bfloat16 = minifloat{exp: 8, frac: 7}
)

// bias returns the exponent bias, 2^(exp-1) - 1.
func (f minifloat) bias() int { return 1<<(f.exp-1) - 1 }

// sign returns the sign bit.
func (f minifloat) sign() uint64 { return 1 << (f.exp + f.frac) }

// top returns the bits of the first pattern whose exponent bits are all set: +Inf, or in a
// finite format the smallest value of the top binade.
func (f minifloat) top() uint64 { return (1<<f.exp - 1) << f.frac }

// max returns the bits of the largest finite value.
func (f minifloat) max() uint64 {
	if f.fn {
		return f.sign() - 2
	}
	return f.top() - 1
}

// nan returns the bits of the positive quiet NaN without payload.
func (f minifloat) nan() uint64 {
	if f.fn {
		return f.sign() - 1
	}
	return f.top() | 1<<(f.frac-1)
}

// isNaN reports whether b (a pattern of the format) is a NaN.
func (f minifloat) isNaN(b uint64) bool {
	m := b &^ f.sign()
	if f.fn {
		return m == f.nan()
	}
	return m > f.top()
}

// overflow returns the magnitude bits of a value beyond the largest finite one: the
// largest finite value when saturating, else +Inf, or NaN in a format without infinities.
func (f minifloat) overflow(sat bool) uint64 {
	switch {
	case sat:
		return f.max()
	case f.fn:
		return f.nan()
	}
	return f.top()
}

// round returns the bits of (-1)^neg * m * 2^e (m < 2^63) rounded to nearest, ties to
// even: rounded first with the format's precision and an unbounded exponent, then
// replaced by overflow(sat) where the result exceeds the largest finite value.
func (f minifloat) round(neg bool, m uint64, e int, sat bool) uint64 {
	var s uint64
	if neg {
		s = f.sign()
	}
	if m == 0 {
		return s
	}
	emin := 1 - f.bias()
	lead := max(e+bits.Len64(m)-1, emin) // the exponent of the result's binade
	var r uint64                         // the result in units of its last place, 2^(lead-frac)
	switch sh := lead - int(f.frac) - e; {
	case sh <= 0:
		r = m << -sh
	case sh >= 64:
		r = 0 // m < 2^63 is below half a unit
	default:
		r = m >> sh
		rem, half := m&(1<<sh-1), uint64(1)<<(sh-1)
		if rem > half || rem == half && r&1 == 1 {
			r++
		}
	}
	// Below the normal range r < 2^frac is a subnormal's fraction; above, r holds the
	// implicit bit, which adds one to the biased exponent, and a carry out of the fraction
	// moves to the next binade by itself.
	mag := uint64(lead-emin)<<f.frac + r
	if mag > f.max() {
		mag = f.overflow(sat)
	}
	return s | mag
}

// special returns the bits for an infinite (nan false) or NaN source of sign neg; payload
// is the NaN's fraction aligned to 52 bits.
func (f minifloat) special(neg, nan bool, payload uint64, sat bool) uint64 {
	var s uint64
	if neg {
		s = f.sign()
	}
	switch {
	case nan && f.fn:
		return s | f.nan()
	case nan:
		return s | f.nan() | payload>>(52-f.frac)
	}
	return s | f.overflow(sat)
}

// fromFloat32 returns the bits of x rounded to the format.
func (f minifloat) fromFloat32(x float32, sat bool) uint64 {
	b := math.Float32bits(x)
	neg, ef, fr := b>>31 != 0, int(b>>23&0xFF), uint64(b&(1<<23-1))
	switch ef {
	case 0xFF:
		return f.special(neg, fr != 0, fr<<29, sat)
	case 0:
		return f.round(neg, fr, -149, sat)
	}
	return f.round(neg, fr|1<<23, ef-150, sat)
}

// fromFloat64 returns the bits of x rounded to the format, in one rounding.
func (f minifloat) fromFloat64(x float64, sat bool) uint64 {
	b := math.Float64bits(x)
	neg, ef, fr := b>>63 != 0, int(b>>52&0x7FF), b&(1<<52-1)
	switch ef {
	case 0x7FF:
		return f.special(neg, fr != 0, fr, sat)
	case 0:
		return f.round(neg, fr, -1074, sat)
	}
	return f.round(neg, fr|1<<52, ef-1075, sat)
}

// decode splits pattern b into its sign, its class and, for a finite nonzero value, the
// exponent e of its leading bit and its fraction below that bit aligned to 52 bits; for a
// NaN, fr is the payload aligned to 52 bits with the quiet bit set.
func (f minifloat) decode(b uint64) (neg bool, class int, e int, fr uint64) {
	neg = b&f.sign() != 0
	ef, m := int(b>>f.frac&(1<<f.exp-1)), b&(1<<f.frac-1)
	switch {
	case f.isNaN(b):
		if f.fn {
			m = 0
		}
		return neg, classNaN, 0, 1<<51 | m<<(52-f.frac)
	case !f.fn && ef == 1<<f.exp-1:
		return neg, classInf, 0, 0
	case ef == 0 && m == 0:
		return neg, classZero, 0, 0
	case ef == 0: // subnormal: m * 2^(emin-frac), normalized
		n := bits.Len64(m)
		return neg, classFinite, 1 - f.bias() - int(f.frac) + n - 1, m << (53 - n) & (1<<52 - 1)
	}
	return neg, classFinite, ef - f.bias(), m << (52 - f.frac)
}

const (
	classZero = iota
	classFinite
	classInf
	classNaN
)

// toFloat64 returns the value of pattern b, exactly.
func (f minifloat) toFloat64(b uint64) float64 {
	neg, class, e, fr := f.decode(b)
	var s uint64
	if neg {
		s = 1 << 63
	}
	switch class {
	case classZero:
		return math.Float64frombits(s)
	case classInf:
		return math.Float64frombits(s | 0x7FF<<52)
	case classNaN:
		return math.Float64frombits(s | 0x7FF<<52 | fr)
	}
	return math.Float64frombits(s | uint64(e+1023)<<52 | fr)
}

// toFloat32 returns the value of pattern b, exactly. Every value of the format must be a
// normal float32 or zero: it serves binary16 and the 8-bit formats, not bfloat16.
func (f minifloat) toFloat32(b uint64) float32 {
	neg, class, e, fr := f.decode(b)
	var s uint32
	if neg {
		s = 1 << 31
	}
	switch class {
	case classZero:
		return math.Float32frombits(s)
	case classInf:
		return math.Float32frombits(s | 0xFF<<23)
	case classNaN:
		return math.Float32frombits(s | 0xFF<<23 | uint32(fr>>29))
	}
	return math.Float32frombits(s | uint32(e+127)<<23 | uint32(fr>>29))
}

// format32 formats x, a value of a format narrower than float32, as fmt's %v formats a
// float32: the shortest decimal that reads back as the same float32 (strconv 'g', -1, 32).
func format32(x float32) string { return strconv.FormatFloat(float64(x), 'g', -1, 32) }

// HalfFromFloat32 returns f rounded to the nearest Half, ties to even; magnitudes that
// round above 65504 give infinities. See Half for special values.
func HalfFromFloat32(f float32) Half { return Half(binary16.fromFloat32(f, false)) }

// HalfFromFloat64 returns x rounded to the nearest Half, ties to even, in one rounding:
// not through float32, whose own rounding could move a value onto a Half halfway point.
func HalfFromFloat64(x float64) Half { return Half(binary16.fromFloat64(x, false)) }

// Float32 returns the value of h, exactly; a NaN gives a quiet NaN of its sign and payload.
func (h Half) Float32() float32 { return binary16.toFloat32(uint64(h)) }

// Float64 returns the value of h, exactly; a NaN gives a quiet NaN of its sign and payload.
func (h Half) Float64() float64 { return binary16.toFloat64(uint64(h)) }

// String formats h as fmt's %v formats h.Float32(): the shortest decimal that reads back as
// the same float32, as in "0.099975586" for HalfFromFloat32(0.1); "+Inf", "-Inf", "NaN".
func (h Half) String() string { return format32(h.Float32()) }

// BFloat16FromFloat32 returns f rounded to the nearest BFloat16, ties to even; magnitudes
// that round above the largest finite value give infinities. See BFloat16 for special
// values.
func BFloat16FromFloat32(f float32) BFloat16 {
	b := math.Float32bits(f)
	if b&0x7FFF_FFFF > 0x7F80_0000 { // NaN: quiet, sign and leading payload kept
		return BFloat16(b>>16 | 0x0040)
	}
	// Rounding the lower 16 bits away: adding just under half of the last place, plus one
	// when the kept part is odd, carries exactly when the result must round up; a carry
	// out of the fraction moves to the next binade, or from the largest finite value to
	// Inf.
	return BFloat16((b + 0x7FFF + b>>16&1) >> 16)
}

// BFloat16FromFloat64 returns x rounded to the nearest BFloat16, ties to even, in one
// rounding: not through float32, whose own rounding could move a value onto a BFloat16
// halfway point.
func BFloat16FromFloat64(x float64) BFloat16 { return BFloat16(bfloat16.fromFloat64(x, false)) }

// Float32 returns the value of b, exactly: its bits are the upper half of the float32's,
// with a NaN made quiet.
func (b BFloat16) Float32() float32 {
	u := uint32(b) << 16
	if u&0x7FFF_FFFF > 0x7F80_0000 {
		u |= 0x0040_0000
	}
	return math.Float32frombits(u)
}

// Float64 returns the value of b, exactly; a NaN gives a quiet NaN of its sign and payload.
func (b BFloat16) Float64() float64 { return bfloat16.toFloat64(uint64(b)) }

// String formats b as fmt's %v formats b.Float32(): the shortest decimal that reads back as
// the same float32, as in "0.100097656" for BFloat16FromFloat32(0.1); "+Inf", "-Inf", "NaN".
func (b BFloat16) String() string { return format32(b.Float32()) }
