package engine_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// The conversions are checked against a reference written from the formats' definitions
// alone: every pattern's value from its fields (refFormat.value), and rounding as a search
// of the sorted list of every finite value for the nearest, the even pattern on ties
// (refFormat.nearest). Nothing of engine's rounding is reused.

// refFormat is a binary floating-point format of at most 16 bits, as the reference sees it.
type refFormat struct {
	name      string
	exp, frac uint // exponent and fraction bits
	fn        bool // no infinities; the only NaNs have every exponent and fraction bit set
	// The largest finite value, the smallest normal and the smallest subnormal, as the
	// formats' specifications give them.
	max, minNormal, minSub float64

	vals []float64 // every non-negative finite value, ascending, then the next one beyond
	pats []uint64  // their patterns; the one beyond is the largest finite pattern plus one
}

func newRefFormat(name string, exp, frac uint, fn bool, max, minNormal, minSub float64) *refFormat {
	f := &refFormat{name: name, exp: exp, frac: frac, fn: fn, max: max, minNormal: minNormal, minSub: minSub}
	for b := uint64(0); b < f.sign(); b++ {
		if f.kind(b) != "finite" {
			break
		}
		f.vals, f.pats = append(f.vals, f.value(b)), append(f.pats, b)
	}
	// The next value beyond the largest finite one, had the exponent no bound: the value
	// the largest pattern plus one would have with its fields read as a normal number's.
	next := f.pats[len(f.pats)-1] + 1
	f.vals, f.pats = append(f.vals, f.fields(next)), append(f.pats, next)
	return f
}

var (
	refHalf = newRefFormat("Half", 5, 10, false, 65504, 0x1p-14, 0x1p-24)
	refBF16 = newRefFormat("BFloat16", 8, 7, false, 0x1.FEp127, 0x1p-126, 0x1p-133)
	refE4M3 = newRefFormat("Float8E4M3", 4, 3, true, 448, 0x1p-6, 0x1p-9)
	refE5M2 = newRefFormat("Float8E5M2", 5, 2, false, 57344, 0x1p-14, 0x1p-16)
)

func (f *refFormat) sign() uint64 { return 1 << (f.exp + f.frac) }
func (f *refFormat) bias() int    { return 1<<(f.exp-1) - 1 }

// kind returns "finite", "inf" or "nan" for pattern b.
func (f *refFormat) kind(b uint64) string {
	m := b &^ f.sign()
	ef, fr := m>>f.frac, m&(1<<f.frac-1)
	switch {
	case f.fn && m == f.sign()-1:
		return "nan"
	case !f.fn && ef == 1<<f.exp-1 && fr == 0:
		return "inf"
	case !f.fn && ef == 1<<f.exp-1:
		return "nan"
	}
	return "finite"
}

// fields returns the value of b's fields: (-1)^s * 0.fraction * 2^(1-bias) for exponent
// field 0, (-1)^s * 1.fraction * 2^(e-bias) otherwise.
func (f *refFormat) fields(b uint64) float64 {
	ef, fr := int(b>>f.frac&(1<<f.exp-1)), float64(b&(1<<f.frac-1))
	var v float64
	if ef == 0 {
		v = math.Ldexp(fr, 1-f.bias()-int(f.frac))
	} else {
		v = math.Ldexp(1+math.Ldexp(fr, -int(f.frac)), ef-f.bias())
	}
	if b&f.sign() != 0 {
		v = math.Copysign(v, -1) // -0 too
	}
	return v
}

// value returns the value of pattern b: ±Inf, NaN or fields(b).
func (f *refFormat) value(b uint64) float64 {
	switch f.kind(b) {
	case "nan":
		return math.NaN()
	case "inf":
		if b&f.sign() != 0 {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	return f.fields(b)
}

// nearest returns the pattern of x rounded to nearest, ties to the even pattern, and
// whether it overflows: the rounded magnitude exceeds the largest finite value (then the
// pattern is not the format's).
func (f *refFormat) nearest(x float64) (b uint64, overflow bool) {
	var s uint64
	if math.Signbit(x) {
		s = f.sign()
	}
	ax := math.Abs(x)
	last := len(f.vals) - 1
	i := sort.SearchFloat64s(f.vals, ax) // vals[i-1] < ax <= vals[i]
	switch {
	case i > last:
		return s, true
	case f.vals[i] == ax:
		return s | f.pats[i], i == last
	}
	lo, hi := i-1, i
	mid := (f.vals[lo] + f.vals[hi]) / 2 // exact: both have few significant bits
	pick := lo
	if ax > mid || ax == mid && f.pats[lo]&1 == 1 {
		pick = hi
	}
	return s | f.pats[pick], pick == last
}

// maxPattern returns the largest finite pattern.
func (f *refFormat) maxPattern() uint64 { return f.pats[len(f.pats)-2] }

// conv is a format's conversions under test, on patterns.
type conv struct {
	ref             *refFormat
	from32          func(float32) uint64
	from64          func(float64) uint64
	from32s         func(float32) uint64 // saturating, where the format has it
	from64s         func(float64) uint64
	to32            func(uint64) float32
	to64            func(uint64) float64
	str             func(uint64) string
	overflowPattern uint64 // what non-saturating conversions give past the largest finite value
}

var convs = []conv{
	{
		ref:             refHalf,
		from32:          func(x float32) uint64 { return uint64(engine.HalfFromFloat32(x)) },
		from64:          func(x float64) uint64 { return uint64(engine.HalfFromFloat64(x)) },
		to32:            func(b uint64) float32 { return engine.Half(b).Float32() },
		to64:            func(b uint64) float64 { return engine.Half(b).Float64() },
		str:             func(b uint64) string { return engine.Half(b).String() },
		overflowPattern: 0x7C00,
	},
	{
		ref:             refBF16,
		from32:          func(x float32) uint64 { return uint64(engine.BFloat16FromFloat32(x)) },
		from64:          func(x float64) uint64 { return uint64(engine.BFloat16FromFloat64(x)) },
		to32:            func(b uint64) float32 { return engine.BFloat16(b).Float32() },
		to64:            func(b uint64) float64 { return engine.BFloat16(b).Float64() },
		str:             func(b uint64) string { return engine.BFloat16(b).String() },
		overflowPattern: 0x7F80,
	},
	{
		ref:             refE4M3,
		from32:          func(x float32) uint64 { return uint64(engine.Float8E4M3FromFloat32(x)) },
		from64:          func(x float64) uint64 { return uint64(engine.Float8E4M3FromFloat64(x)) },
		from32s:         func(x float32) uint64 { return uint64(engine.Float8E4M3FromFloat32Sat(x)) },
		from64s:         func(x float64) uint64 { return uint64(engine.Float8E4M3FromFloat64Sat(x)) },
		to32:            func(b uint64) float32 { return engine.Float8E4M3(b).Float32() },
		to64:            func(b uint64) float64 { return engine.Float8E4M3(b).Float64() },
		str:             func(b uint64) string { return engine.Float8E4M3(b).String() },
		overflowPattern: 0x7F, // NaN
	},
	{
		ref:             refE5M2,
		from32:          func(x float32) uint64 { return uint64(engine.Float8E5M2FromFloat32(x)) },
		from64:          func(x float64) uint64 { return uint64(engine.Float8E5M2FromFloat64(x)) },
		from32s:         func(x float32) uint64 { return uint64(engine.Float8E5M2FromFloat32Sat(x)) },
		from64s:         func(x float64) uint64 { return uint64(engine.Float8E5M2FromFloat64Sat(x)) },
		to32:            func(b uint64) float32 { return engine.Float8E5M2(b).Float32() },
		to64:            func(b uint64) float64 { return engine.Float8E5M2(b).Float64() },
		str:             func(b uint64) string { return engine.Float8E5M2(b).String() },
		overflowPattern: 0x7C, // Inf
	},
}

// TestFormatReference checks the reference's tables against the limits the formats'
// specifications state, so that the reference itself is not wrong in the same way as the
// code.
func TestFormatReference(t *testing.T) {
	for _, f := range []*refFormat{refHalf, refBF16, refE4M3, refE5M2} {
		n := len(f.vals) - 1
		if f.vals[0] != 0 || f.vals[1] != f.minSub || f.vals[n-1] != f.max {
			t.Errorf("%s: smallest values %v, %v, largest %v; want 0, %v, %v", f.name, f.vals[0], f.vals[1], f.vals[n-1], f.minSub, f.max)
		}
		if got := f.vals[1<<f.frac]; got != f.minNormal {
			t.Errorf("%s: first normal %v, want %v", f.name, got, f.minNormal)
		}
		if !sort.Float64sAreSorted(f.vals) {
			t.Errorf("%s: values not ascending", f.name)
		}
		wantN := map[string]int{"Half": 0x7C00, "BFloat16": 0x7F80, "Float8E4M3": 0x7F, "Float8E5M2": 0x7C}[f.name]
		if n != wantN {
			t.Errorf("%s: %d non-negative finite values, want %d", f.name, n, wantN)
		}
	}
}

// TestDecodeAll checks Float32 and Float64 of every pattern of every format against the
// value of its fields: bit for bit, signed zeros included; NaNs as quiet NaNs of the
// pattern's sign.
func TestDecodeAll(t *testing.T) {
	for _, c := range convs {
		f := c.ref
		bad := 0
		for b := uint64(0); b < 2*f.sign(); b++ {
			want := f.value(b)
			got64, got32 := c.to64(b), c.to32(b)
			neg := b&f.sign() != 0
			ok := true
			if math.IsNaN(want) {
				ok = math.IsNaN(got64) && math.IsNaN(float64(got32)) && math.Signbit(got64) == neg &&
					math.Signbit(float64(got32)) == neg &&
					math.Float64bits(got64)&(1<<51) != 0 && math.Float32bits(got32)&(1<<22) != 0
			} else {
				ok = math.Float64bits(got64) == math.Float64bits(want) &&
					math.Float32bits(got32) == math.Float32bits(float32(want)) && float64(float32(want)) == want
			}
			if !ok {
				if bad++; bad <= 5 {
					t.Errorf("%s(%#x): Float64() = %v (%#x), Float32() = %v (%#x); want %v", f.name, b,
						got64, math.Float64bits(got64), got32, math.Float32bits(got32), want)
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d patterns decoded wrong", f.name, bad)
		}
	}
}

// TestRoundTripAll converts every pattern of every format to float32 and float64 and back:
// the same pattern for every number and infinity; for a NaN, a NaN of the same sign, the
// same pattern where the NaN was quiet.
func TestRoundTripAll(t *testing.T) {
	for _, c := range convs {
		f := c.ref
		bad := 0
		for b := uint64(0); b < 2*f.sign(); b++ {
			x32, x64 := c.to32(b), c.to64(b)
			got := []uint64{c.from32(x32), c.from64(x64)}
			if c.from32s != nil && f.kind(b) == "finite" {
				got = append(got, c.from32s(x32), c.from64s(x64))
			}
			for _, g := range got {
				ok := g == b
				if f.kind(b) == "nan" {
					quiet := f.fn || b&(1<<(f.frac-1)) != 0
					ok = f.kind(g) == "nan" && g&f.sign() == b&f.sign() && (g == b || !quiet)
				}
				if !ok {
					if bad++; bad <= 5 {
						t.Errorf("%s(%#x) = %v: back from float32 %v and float64 %v gives %#x", f.name, b, x64, x32, x64, g)
					}
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d patterns do not round-trip", f.name, bad)
		}
	}
}

// edgeInputs returns float64 inputs at every place rounding can go wrong in f: every
// value, every halfway point between neighbours (and between the largest finite value and
// the next beyond it, the overflow threshold), the float64 and float32 numbers just either
// side of each, twice the overflow threshold, the largest float32, infinities, NaNs;
// each with both signs.
func edgeInputs(f *refFormat) []float64 {
	var xs []float64
	add := func(x float64) {
		xs = append(xs, x, -x)
		if x32 := float32(x); float64(x32) == x {
			xs = append(xs, float64(math.Nextafter32(x32, float32(math.Inf(1)))), float64(math.Nextafter32(x32, 0)))
		}
		xs = append(xs, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, 0))
	}
	for i, v := range f.vals {
		add(v)
		if i > 0 {
			add((f.vals[i-1] + v) / 2)
			add(f.vals[i-1] + (v-f.vals[i-1])/4) // between a value and a halfway point
		}
	}
	last := f.vals[len(f.vals)-1]
	add(2 * last)
	add(math.MaxFloat32)
	add(math.SmallestNonzeroFloat32)
	add(math.SmallestNonzeroFloat64)
	add(math.MaxFloat64)
	add(math.Inf(1))
	xs = append(xs, math.NaN(), math.Copysign(math.NaN(), -1))
	return xs
}

// checkConv compares one conversion of x (from float32 when x32, else float64) with the
// reference; it returns a description of the difference, or "".
func (c conv) check(x float64, x32 bool) string {
	f := c.ref
	var got, gotSat uint64
	hasSat := c.from32s != nil
	if x32 {
		got = c.from32(float32(x))
		if hasSat {
			gotSat = c.from32s(float32(x))
		}
	} else {
		got = c.from64(x)
		if hasSat {
			gotSat = c.from64s(x)
		}
	}
	var s uint64
	if math.Signbit(x) {
		s = f.sign()
	}
	var want, wantSat uint64
	switch {
	case math.IsNaN(x):
		if f.kind(got) != "nan" || got&f.sign() != s || hasSat && (f.kind(gotSat) != "nan" || gotSat&f.sign() != s) {
			return fmt.Sprintf("NaN gives %#x and saturating %#x, want a NaN of the same sign", got, gotSat)
		}
		return ""
	case math.IsInf(x, 0):
		want, wantSat = s|c.overflowPattern, s|f.maxPattern()
	default:
		b, over := f.nearest(x)
		want, wantSat = b, b
		if over {
			want, wantSat = s|c.overflowPattern, s|f.maxPattern()
		}
	}
	switch {
	case got != want:
		return fmt.Sprintf("gives %#x (%v), want %#x (%v)", got, c.to64(got), want, c.to64(want))
	case hasSat && gotSat != wantSat:
		return fmt.Sprintf("saturating gives %#x (%v), want %#x (%v)", gotSat, c.to64(gotSat), wantSat, c.to64(wantSat))
	}
	return ""
}

// TestConvertEdges checks the conversions from float32 and float64 at every edge of every
// format against the reference.
func TestConvertEdges(t *testing.T) {
	for _, c := range convs {
		bad := 0
		for _, x := range edgeInputs(c.ref) {
			for _, x32 := range []bool{false, true} {
				if x32 && !math.IsNaN(x) && float64(float32(x)) != x {
					continue // not a float32
				}
				if msg := c.check(x, x32); msg != "" {
					if bad++; bad <= 5 {
						from := map[bool]string{false: "float64", true: "float32"}[x32]
						t.Errorf("%s from %s %v (%#x): %s", c.ref.name, from, x, math.Float64bits(x), msg)
					}
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d edge inputs converted wrong", c.ref.name, bad)
		}
	}
}

// TestConvertRandom checks the conversions of random float32 and float64 bit patterns,
// millions of them, against the reference: uniform over all patterns (mostly beyond the
// formats' ranges), and with exponents spread over each format's range and a little
// beyond.
func TestConvertRandom(t *testing.T) {
	n := 1 << 21
	if testing.Short() {
		n = 1 << 16
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range convs {
		f := c.ref
		emin, emax := int(math.Floor(math.Log2(f.minSub)))-3, int(math.Log2(f.max))+3
		bad := 0
		report := func(from string, x float64, msg string) {
			if bad++; bad <= 5 {
				t.Errorf("%s from %s %v (%#x): %s", f.name, from, x, math.Float64bits(x), msg)
			}
		}
		for range n {
			x := float64(math.Float32frombits(r.Uint32()))
			if msg := c.check(x, true); msg != "" {
				report("float32", x, msg)
			}
			// An exponent within the format's range; the fraction's trailing bits mostly
			// zero, to hit halfway points and exact values often.
			fr := r.Uint32() & (1<<23 - 1)
			if r.IntN(2) == 0 {
				fr &^= 1<<r.UintN(24) - 1
			}
			e := max(emin+r.IntN(emax-emin+1), -126)
			x = float64(math.Float32frombits(r.Uint32()&(1<<31) | uint32(e+127)<<23 | fr))
			if msg := c.check(x, true); msg != "" {
				report("float32", x, msg)
			}
			x = math.Float64frombits(r.Uint64())
			if msg := c.check(x, false); msg != "" {
				report("float64", x, msg)
			}
			fr64 := r.Uint64() & (1<<52 - 1)
			if r.IntN(2) == 0 {
				fr64 &^= 1<<r.UintN(53) - 1
			}
			e = emin + r.IntN(emax-emin+1)
			x = math.Float64frombits(r.Uint64()&(1<<63) | uint64(e+1023)<<52 | fr64)
			if msg := c.check(x, false); msg != "" {
				report("float64", x, msg)
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d of %d random inputs converted wrong", f.name, bad, 4*n)
		}
	}
}

// TestDoubleRounding: from float64 the conversions round once. Just above a halfway
// point, by less than float32 can hold, they round up, where rounding through float32
// would land on the halfway point and round to even, down.
func TestDoubleRounding(t *testing.T) {
	x := 1 + 0x1p-11 + 0x1p-40 // above the halfway point between 1 and 1+2^-10
	if got, via32 := engine.HalfFromFloat64(x), engine.HalfFromFloat32(float32(x)); got.Float64() != 1+0x1p-10 || via32.Float64() != 1 {
		t.Errorf("Half: from float64 %v, through float32 %v; want %v and 1", got, via32, 1+0x1p-10)
	}
	x = 1 + 0x1p-8 + 0x1p-40 // above the halfway point between 1 and 1+2^-7
	if got, via32 := engine.BFloat16FromFloat64(x), engine.BFloat16FromFloat32(float32(x)); got.Float64() != 1+0x1p-7 || via32.Float64() != 1 {
		t.Errorf("BFloat16: from float64 %v, through float32 %v; want %v and 1", got, via32, 1+0x1p-7)
	}
	x = 464 + 0x1p-20 // above the halfway point between 448 and 480
	if got, via32 := engine.Float8E4M3FromFloat64(x), engine.Float8E4M3FromFloat32(float32(x)); !math.IsNaN(got.Float64()) || via32.Float64() != 448 {
		t.Errorf("Float8E4M3: from float64 %v, through float32 %v; want NaN and 448", got, via32)
	}
}

// TestSpecialValues16 spells out results that Half's and BFloat16's documentation
// promises.
func TestSpecialValues16(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		name string
		got  uint64
		want uint64
	}{
		{"Half(65504)", uint64(engine.HalfFromFloat64(65504)), 0x7BFF},
		{"Half(65519.99)", uint64(engine.HalfFromFloat64(65519.99)), 0x7BFF},
		{"Half(65520)", uint64(engine.HalfFromFloat32(65520)), 0x7C00},
		{"Half(-Inf)", uint64(engine.HalfFromFloat32(float32(-inf))), 0xFC00},
		{"Half(-0)", uint64(engine.HalfFromFloat64(math.Copysign(0, -1))), 0x8000},
		{"Half(2^-24)", uint64(engine.HalfFromFloat32(0x1p-24)), 0x0001},
		{"Half(2^-25)", uint64(engine.HalfFromFloat32(0x1p-25)), 0x0000},
		{"Half(-2^-25-)", uint64(engine.HalfFromFloat64(-0x1.0000000001p-25)), 0x8001},
		{"Half(3*2^-25)", uint64(engine.HalfFromFloat32(3 * 0x1p-25)), 0x0002},
		{"Half(NaN)", uint64(engine.HalfFromFloat64(nan)), 0x7E00},
		{"Half(-NaN payload)", uint64(engine.HalfFromFloat32(math.Float32frombits(0xFFA0_0001))), 0xFF00},
		{"BFloat16(max float32)", uint64(engine.BFloat16FromFloat32(math.MaxFloat32)), 0x7F80},
		{"BFloat16(0x7F7F7FFF)", uint64(engine.BFloat16FromFloat32(math.Float32frombits(0x7F7F_7FFF))), 0x7F7F},
		{"BFloat16(0x7F7F8000)", uint64(engine.BFloat16FromFloat32(math.Float32frombits(0x7F7F_8000))), 0x7F80},
		{"BFloat16(1+2^-8)", uint64(engine.BFloat16FromFloat32(1 + 0x1p-8)), 0x3F80},
		{"BFloat16(1+3*2^-8)", uint64(engine.BFloat16FromFloat32(1 + 3*0x1p-8)), 0x3F82},
		{"BFloat16(smallest float32)", uint64(engine.BFloat16FromFloat32(math.SmallestNonzeroFloat32)), 0x0000},
		{"BFloat16(sNaN)", uint64(engine.BFloat16FromFloat32(math.Float32frombits(0x7F80_0001))), 0x7FC0},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

// TestFloatStrings checks String of every format against fmt's formatting of the float32
// value, and a few of Half's and BFloat16's in full.
func TestFloatStrings(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{engine.HalfFromFloat32(1).String(), "1"},
		{engine.HalfFromFloat32(0.1).String(), "0.099975586"},
		{engine.HalfFromFloat32(-65504).String(), "-65504"},
		{engine.HalfFromFloat32(0x1p-24).String(), "5.9604645e-08"},
		{engine.Half(0x8000).String(), "-0"},
		{engine.Half(0x7C00).String(), "+Inf"},
		{engine.Half(0xFE00).String(), "NaN"},
		{engine.BFloat16FromFloat32(0.1).String(), "0.100097656"},
		{engine.BFloat16FromFloat32(math.MaxFloat32).String(), "+Inf"},
		{engine.BFloat16(0x0001).String(), "9.1835e-41"},
	} {
		if c.got != c.want {
			t.Errorf("String() = %q, want %q", c.got, c.want)
		}
	}
	for _, c := range convs {
		for b := uint64(0); b < 2*c.ref.sign(); b += 7 {
			if got, want := c.str(b), fmt.Sprint(c.to32(b)); got != want {
				t.Errorf("%s(%#x).String() = %q, fmt.Sprint(Float32()) = %q", c.ref.name, b, got, want)
			}
		}
	}
}

// BenchmarkHalfFromFloat32 times the conversion that fills a Buffer[Half] from float32
// data.
func BenchmarkHalfFromFloat32(b *testing.B) {
	xs := make([]float32, 4096)
	for i := range xs {
		xs[i] = float32(i) * 0.37
	}
	out := make([]engine.Half, len(xs))
	b.SetBytes(int64(4 * len(xs)))
	for b.Loop() {
		for i, x := range xs {
			out[i] = engine.HalfFromFloat32(x)
		}
	}
}

// ExampleHalfFromFloat32 converts float32 values to half precision and back: 0.1 rounds
// to the nearest Half, 65520 (halfway between the largest Half and 2^16) rounds to even,
// beyond the format.
func ExampleHalfFromFloat32() {
	for _, x := range []float32{1.5, 0.1, 65504, 65520, 1e-8} {
		h := engine.HalfFromFloat32(x)
		fmt.Printf("%v -> %#04x = %v\n", x, uint16(h), h.Float32())
	}
	// Output:
	// 1.5 -> 0x3e00 = 1.5
	// 0.1 -> 0x2e66 = 0.099975586
	// 65504 -> 0x7bff = 65504
	// 65520 -> 0x7c00 = +Inf
	// 1e-08 -> 0x0000 = 0
}

// ExampleHalfFromFloat64 shows the single rounding from float64: x lies just above the
// halfway point between 1 and the next Half, by less than float32 resolves, so that
// rounding through float32 lands on the halfway point and rounds to even.
func ExampleHalfFromFloat64() {
	x := 1 + 0x1p-11 + 0x1p-40
	fmt.Println(engine.HalfFromFloat64(x), engine.HalfFromFloat32(float32(x)))
	// Output: 1.0009766 1
}

// ExampleBFloat16FromFloat32 rounds float32 values to bfloat16: to nearest, ties to even,
// rather than truncating their lower 16 bits.
func ExampleBFloat16FromFloat32() {
	for _, x := range []float32{3.14159, 1 + 0x1p-8, 1 + 3*0x1p-8, 1e38} {
		b := engine.BFloat16FromFloat32(x)
		fmt.Printf("%v -> %#04x = %v\n", x, uint16(b), b)
	}
	// Output:
	// 3.14159 -> 0x4049 = 3.140625
	// 1.0039062 -> 0x3f80 = 1
	// 1.0117188 -> 0x3f82 = 1.015625
	// 1e+38 -> 0x7e96 = 9.96921e+37
}

// ExampleHalf moves half-precision data through a device buffer: the host converts, the
// buffer holds the bits. Here the fake backend stands in for a device.
func ExampleHalf() {
	fake.Register()
	ctx := context.Background()
	dev, err := engine.Open(ctx, "fake:0")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		log.Fatal(err)
	}

	src := []float32{0.5, -2, 1e5, 3.14159}
	data := make([]engine.Half, len(src))
	for i, x := range src {
		data[i] = engine.HalfFromFloat32(x)
	}
	buf, err := engine.Upload(ctx, q, data)
	if err != nil {
		log.Fatal(err)
	}
	if err := buf.Fill(q, 0, 1, engine.HalfFromFloat32(0.25)); err != nil {
		log.Fatal(err)
	}
	out, err := buf.Download(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(buf.Bytes(), out)
	// Output: 8 [0.25 -2 +Inf 3.140625]
}
