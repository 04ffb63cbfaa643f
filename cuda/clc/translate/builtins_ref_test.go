package translate

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// The Go references of the generated test (builtins_gen_test.go): each slot's expected
// value from its inputs, and the tolerance it is held to.
//
// Tolerances, from the specification's table of maximum errors (section 7.4, tables 7.1
// and 7.2, the row's ulp_float and ulp_double): a float result is measured in ulp of float
// against the reference computed in float64 (as good as exact at float's precision) and
// may be off by the row's bound, at least half an ulp (0, correctly rounded); a double
// result is measured against Go's float64 function, which is itself off by up to an ulp
// or two, so it may be off by the bound plus goSlack ulp (exactly equal for the functions
// that are exact in Go: floor, fmod, ldexp, ...). Where the specification states no bound,
// the row's note says what is used: lgamma and lgamma_r within 1e-4 relative (or 1e-4
// absolute near its zeros); mad (any precision) within 1e-5 relative of x*y+z; native_*
// (the implementation's precision) within 2^-10 relative of the full function; half_*
// within their 8192 ulp; the common and geometric functions, which table 7.1 does not
// list, within 4 ulp (common) and 1e-5 (float) or 1e-12 (double) relative (geometric,
// 1e-3 for fast_*). Integer, relational, load, store, copy, atomic and shuffle results
// are exact.

// goSlack is the error of Go's float64 math functions, in ulp, allowed on top of a
// double's bound.
const goSlack = 2

// tolerance is what a slot is held to.
type tolerance struct {
	ulp    float64 // ulp of the result's type, against the reference; -1: not in ulp
	rel    float64 // relative (with an absolute floor of rel where the reference is below 1)
	exact  bool
	nanAny bool // any NaN passes (nan's payload is the implementation's)
}

func (t tolerance) String() string {
	switch {
	case t.exact:
		return "exact"
	case t.nanAny:
		return "a NaN"
	case t.ulp >= 0:
		return fmt.Sprintf("%g ulp", t.ulp)
	}
	return fmt.Sprintf("%g relative", t.rel)
}

// floatRef computes function name in float64: the result and the second result (a pointer's).
func floatRef(name string, a []float64) (float64, float64, bool) {
	x := a[0]
	y := func() float64 { return a[1] }
	name = strings.TrimPrefix(strings.TrimPrefix(name, "half_"), "native_")
	switch name {
	case "acos":
		return math.Acos(x), 0, true
	case "acosh":
		return math.Acosh(x), 0, true
	case "acospi":
		return math.Acos(x) / math.Pi, 0, true
	case "asin":
		return math.Asin(x), 0, true
	case "asinh":
		return math.Asinh(x), 0, true
	case "asinpi":
		return math.Asin(x) / math.Pi, 0, true
	case "atan":
		return math.Atan(x), 0, true
	case "atan2":
		return math.Atan2(x, y()), 0, true
	case "atanh":
		return math.Atanh(x), 0, true
	case "atanpi":
		return math.Atan(x) / math.Pi, 0, true
	case "atan2pi":
		return math.Atan2(x, y()) / math.Pi, 0, true
	case "cbrt":
		return math.Cbrt(x), 0, true
	case "ceil":
		return math.Ceil(x), 0, true
	case "copysign":
		return math.Copysign(x, y()), 0, true
	case "cos":
		return math.Cos(x), 0, true
	case "cosh":
		return math.Cosh(x), 0, true
	case "cospi":
		return cospiRef(x), 0, true
	case "erfc":
		return math.Erfc(x), 0, true
	case "erf":
		return math.Erf(x), 0, true
	case "exp":
		return math.Exp(x), 0, true
	case "exp2":
		return math.Exp2(x), 0, true
	case "exp10":
		return math.Pow(10, x), 0, true
	case "expm1":
		return math.Expm1(x), 0, true
	case "fabs":
		return math.Abs(x), 0, true
	case "fdim":
		return math.Dim(x, y()), 0, true
	case "floor":
		return math.Floor(x), 0, true
	case "fma", "mad":
		return math.FMA(x, a[1], a[2]), 0, true
	case "fmax", "max":
		return math.Max(x, y()), 0, true
	case "fmin", "min":
		return math.Min(x, y()), 0, true
	case "fmod":
		return math.Mod(x, y()), 0, true
	case "fract":
		f := math.Floor(x)
		return x - f, f, true
	case "frexp":
		m, e := math.Frexp(x)
		return m, float64(e), true
	case "hypot":
		return math.Hypot(x, y()), 0, true
	case "ilogb":
		return float64(math.Ilogb(x)), 0, true
	case "ldexp":
		return math.Ldexp(x, int(a[1])), 0, true
	case "lgamma", "lgamma_r":
		l, s := math.Lgamma(x)
		return l, float64(s), true
	case "log":
		return math.Log(x), 0, true
	case "log2":
		return math.Log2(x), 0, true
	case "log10":
		return math.Log10(x), 0, true
	case "log1p":
		return math.Log1p(x), 0, true
	case "logb":
		return math.Logb(x), 0, true
	case "maxmag", "minmag":
		ax, ay := math.Abs(x), math.Abs(y())
		if (name == "maxmag") == (ax > ay) && ax != ay {
			return x, 0, true
		}
		if ax != ay {
			return y(), 0, true
		}
		if name == "maxmag" {
			return math.Max(x, y()), 0, true
		}
		return math.Min(x, y()), 0, true
	case "modf":
		i, f := math.Modf(x)
		return f, i, true
	case "nextafter":
		return math.Nextafter(x, y()), 0, true
	case "pow", "powr", "pown":
		return math.Pow(x, y()), 0, true
	case "recip":
		return 1 / x, 0, true
	case "divide":
		return x / y(), 0, true
	case "remainder":
		return math.Remainder(x, y()), 0, true
	case "remquo":
		r := math.Remainder(x, y())
		q := math.RoundToEven((x - r) / y())
		k := math.Mod(math.Abs(q), 128)
		return r, math.Copysign(k, q), true
	case "rint":
		return math.RoundToEven(x), 0, true
	case "rootn":
		n := a[1]
		if x < 0 {
			return -math.Pow(-x, 1/n), 0, true
		}
		return math.Pow(x, 1/n), 0, true
	case "round":
		return math.Round(x), 0, true
	case "rsqrt":
		return 1 / math.Sqrt(x), 0, true
	case "sin":
		return math.Sin(x), 0, true
	case "sincos":
		return math.Sin(x), math.Cos(x), true
	case "sinh":
		return math.Sinh(x), 0, true
	case "sinpi":
		return sinpiRef(x), 0, true
	case "sqrt":
		return math.Sqrt(x), 0, true
	case "tan":
		return math.Tan(x), 0, true
	case "tanh":
		return math.Tanh(x), 0, true
	case "tanpi":
		return sinpiRef(x) / cospiRef(x), 0, true
	case "tgamma":
		return math.Gamma(x), 0, true
	case "trunc":
		return math.Trunc(x), 0, true
	// common
	case "clamp":
		return math.Min(math.Max(x, a[1]), a[2]), 0, true
	case "degrees":
		return x * 180 / math.Pi, 0, true
	case "radians":
		return x * math.Pi / 180, 0, true
	case "mix":
		return x + (a[1]-x)*a[2], 0, true
	case "step":
		if a[1] < x {
			return 0, 0, true
		}
		return 1, 0, true
	case "smoothstep":
		t := math.Min(math.Max((a[2]-x)/(a[1]-x), 0), 1)
		return t * t * (3 - 2*t), 0, true
	case "sign":
		switch {
		case x > 0:
			return 1, 0, true
		case x < 0:
			return -1, 0, true
		}
		return x * 0, 0, true
	}
	return 0, 0, false
}

// reference returns slot s's expected value and tolerance, or false where none exists.
func reference(s genSlot) (num, tolerance, bool) {
	name := s.row.name
	exact := tolerance{ulp: -1, exact: true}
	switch s.row.group {
	case "work-item", "sync", "misc_vector", "vload", "async":
		if strings.HasPrefix(name, "vstore_half") || strings.HasPrefix(name, "vstorea_half") {
			mode := strings.TrimPrefix(name[strings.LastIndex(name, "half")+4:], "{n}")
			return num{i: big.NewInt(int64(halfBits(s.args[0].f, mode)))}, exact, true
		}
		if strings.HasPrefix(name, "vload_half") || strings.HasPrefix(name, "vloada_half") {
			return num{f: halfToFloat(uint16(s.args[0].i.Uint64()))}, exact, true
		}
		return s.args[0], exact, true
	case "atomic", "atomic64":
		return atomicRef(s), exact, true
	case "relational":
		return relationalRef(s)
	case "geometric":
		return geometricRef(s)
	}
	if !s.typ.float {
		return integerRef(s)
	}
	in := make([]float64, len(s.args))
	for i, a := range s.args {
		if a.i != nil {
			in[i], _ = new(big.Float).SetInt(a.i).Float64()
		} else {
			in[i] = a.f
		}
	}
	r, second, ok := floatRef(name, in)
	if !ok {
		return num{}, tolerance{}, false
	}
	if name == "nextafter" && s.typ.name == "float" {
		r = float64(math.Nextafter32(float32(in[0]), float32(in[1])))
	}
	if s.out == 1 {
		r = second
	}
	if s.otyp.name == "int" { // ilogb, frexp's exponent, lgamma_r's sign, remquo's quotient
		return num{i: big.NewInt(int64(r))}, exact, true
	}
	bound := s.row.ulpFloat
	if s.typ.name == "double" {
		bound = s.row.ulpDouble
	}
	tol := tolerance{ulp: -1}
	switch {
	case name == "nan":
		return num{f: math.NaN()}, tolerance{ulp: -1, nanAny: true}, true
	case name == "lgamma" || name == "lgamma_r":
		tol.rel = 1e-4
	case name == "mad":
		tol.rel = 1e-5
	case bound == "impl":
		tol.rel = 1.0 / 1024
	case s.row.group == "common":
		tol.ulp = 4
		if name == "clamp" || name == "max" || name == "min" || name == "step" || name == "sign" {
			tol.ulp = 0.5
		}
		if name == "mix" || name == "smoothstep" {
			tol.ulp, tol.rel = -1, 1e-6
			if s.typ.name == "double" {
				tol.rel = 1e-14
			}
		}
	default:
		b, err := strconv.ParseFloat(bound, 64)
		if err != nil {
			return num{}, tolerance{}, false
		}
		tol.ulp = math.Max(b, 0.5)
		if s.typ.name == "double" && b > 0 {
			tol.ulp = b + goSlack
		}
		if s.out == 1 && name == "sincos" {
			tol.ulp = math.Max(b, 0.5)
			if s.typ.name == "double" {
				tol.ulp += goSlack
			}
		}
	}
	return num{f: r}, tol, true
}

// ulpOf returns the size of an ulp of typ at x.
func ulpOf(x float64, typ genType) float64 {
	x = math.Abs(x)
	if typ.name == "float" {
		f := float32(x)
		if math.IsInf(float64(f), 0) {
			f = math.MaxFloat32
		}
		return float64(math.Nextafter32(f, float32(math.Inf(1))) - f)
	}
	if math.IsInf(x, 0) {
		x = math.MaxFloat64
	}
	return math.Nextafter(x, math.Inf(1)) - x
}

// check compares a result with its reference within tol, and returns "" or why not.
func check(got, want num, tol tolerance, typ genType) string {
	if want.i != nil || got.i != nil {
		if got.i == nil || want.i == nil || got.i.Cmp(want.i) != 0 {
			return fmt.Sprintf("got %v, want %v", got.i, want.i)
		}
		return ""
	}
	g, w := got.f, want.f
	switch {
	case tol.nanAny:
		if !math.IsNaN(g) {
			return fmt.Sprintf("got %v, want a NaN", g)
		}
		return ""
	case math.IsNaN(w) || math.IsNaN(g):
		if math.IsNaN(w) != math.IsNaN(g) {
			return fmt.Sprintf("got %v, want %v", g, w)
		}
		return ""
	case math.IsInf(w, 0) || math.IsInf(g, 0):
		if tol.exact || tol.ulp >= 0 {
			// a reference just past the type's largest value rounds to infinity
			if float64(float32(w)) == g && typ.name == "float" || g == w {
				return ""
			}
			return fmt.Sprintf("got %v, want %v", g, w)
		}
	}
	switch {
	case tol.exact:
		if g != w || math.Signbit(g) != math.Signbit(w) {
			return fmt.Sprintf("got %v, want %v", g, w)
		}
	case tol.ulp >= 0:
		if typ.name == "float" && float64(float32(w)) == g {
			return "" // the reference, rounded
		}
		if d := math.Abs(g-w) / ulpOf(w, typ); d > tol.ulp {
			return fmt.Sprintf("got %v, want %v: %.2f ulp, beyond %v", g, w, d, tol)
		}
	default:
		if d := math.Abs(g - w); d > tol.rel*math.Max(1, math.Abs(w)) {
			return fmt.Sprintf("got %v, want %v: %.3g apart, beyond %v", g, w, d, tol)
		}
	}
	return ""
}

// halfToFloat converts half's bits to float64.
func halfToFloat(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e, m := int(h>>10)&0x1f, float64(h&0x3ff)
	switch e {
	case 0:
		return s * m * math.Ldexp(1, -24)
	case 31:
		if m != 0 {
			return math.NaN()
		}
		return s * math.Inf(1)
	}
	return s * (1 + m/1024) * math.Ldexp(1, e-15)
}

// relationalRef computes the relational functions, select and bitselect.
func relationalRef(s genSlot) (num, tolerance, bool) {
	exact := tolerance{ulp: -1, exact: true}
	name := s.row.name
	if name == "any" || name == "all" {
		return num{}, exact, false // set by the reduction below
	}
	t := s.typ
	truth := func(b bool) (num, tolerance, bool) {
		v := int64(0)
		if b {
			v = 1
			if s.width > 1 {
				v = -1
			}
		}
		return num{i: big.NewInt(v)}, exact, true
	}
	bitsOf := func(a num) *big.Int {
		if a.i != nil {
			return new(big.Int).And(a.i, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(t.bits)), big.NewInt(1)))
		}
		if t.name == "float" {
			return new(big.Int).SetUint64(uint64(math.Float32bits(float32(a.f))))
		}
		return new(big.Int).SetUint64(math.Float64bits(a.f))
	}
	fromBits := func(b *big.Int) num {
		switch t.name {
		case "float":
			return num{f: float64(math.Float32frombits(uint32(b.Uint64())))}
		case "double":
			return num{f: math.Float64frombits(b.Uint64())}
		}
		return t.wrap(b)
	}
	switch name {
	case "bitselect":
		a, b, c := bitsOf(s.args[0]), bitsOf(s.args[1]), bitsOf(s.args[2])
		mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(t.bits)), big.NewInt(1))
		r := new(big.Int).Or(new(big.Int).And(a, new(big.Int).Xor(c, mask)), new(big.Int).And(b, c))
		return fromBits(r), exact, true
	case "select":
		c := s.args[2].i
		pick := c.Sign() != 0
		if s.width > 1 {
			pick = c.Sign() < 0
		}
		if pick {
			return s.args[1], exact, true
		}
		return s.args[0], exact, true
	}
	x := s.args[0].f
	var y float64
	if len(s.args) > 1 {
		y = s.args[1].f
	}
	min := math.SmallestNonzeroFloat64 * (1 << 52)
	if t.name == "float" {
		min = 1.1754943508222875e-38
	}
	switch name {
	case "isequal":
		return truth(x == y)
	case "isnotequal":
		return truth(x != y)
	case "isgreater":
		return truth(x > y)
	case "isgreaterequal":
		return truth(x >= y)
	case "isless":
		return truth(x < y)
	case "islessequal":
		return truth(x <= y)
	case "islessgreater":
		return truth(x < y || x > y)
	case "isordered":
		return truth(x == x && y == y)
	case "isunordered":
		return truth(x != x || y != y)
	case "isfinite":
		return truth(!math.IsInf(x, 0) && !math.IsNaN(x))
	case "isinf":
		return truth(math.IsInf(x, 0))
	case "isnan":
		return truth(math.IsNaN(x))
	case "isnormal":
		return truth(!math.IsInf(x, 0) && !math.IsNaN(x) && math.Abs(x) >= min)
	case "signbit":
		return truth(math.Signbit(x))
	}
	return num{}, tolerance{}, false
}

// geometricRef computes the geometric functions in float64 from every lane's inputs (the
// slot's args hold, for a reduction, the inputs of all lanes; else of its own lane, and the
// call's other lanes are read from the row's table by lane).
func geometricRef(s genSlot) (num, tolerance, bool) {
	rel := 1e-5
	if s.typ.name == "double" {
		rel = 1e-12
	}
	if strings.HasPrefix(s.row.name, "fast_") {
		rel = 1e-3
	}
	tol := tolerance{ulp: -1, rel: rel}
	w := s.width
	nargs := len(s.args)
	vec := func(k int) []float64 { // argument k of every lane
		if s.row.signature[0] == 's' { // a reduction: args are lane-major
			per := nargs / w
			v := make([]float64, w)
			for l := 0; l < w; l++ {
				v[l] = s.args[l*per+k].f
			}
			return v
		}
		return nil
	}
	switch strings.TrimPrefix(s.row.name, "fast_") {
	case "dot":
		a, b := vec(0), vec(1)
		d := 0.0
		for i := range a {
			d += a[i] * b[i]
		}
		return num{f: d}, tol, true
	case "length":
		a := vec(0)
		d := 0.0
		for i := range a {
			d += a[i] * a[i]
		}
		return num{f: math.Sqrt(d)}, tol, true
	case "distance":
		a, b := vec(0), vec(1)
		d := 0.0
		for i := range a {
			d += (a[i] - b[i]) * (a[i] - b[i])
		}
		return num{f: math.Sqrt(d)}, tol, true
	}
	return num{}, tolerance{}, false // normalize and cross need every lane: checked by lanes below
}

// integerRef computes the integer functions exactly.
func integerRef(s genSlot) (num, tolerance, bool) {
	exact := tolerance{ulp: -1, exact: true}
	t := s.typ
	a := make([]*big.Int, len(s.args))
	for i, v := range s.args {
		a[i] = v.i
	}
	add := func(x, y *big.Int) *big.Int { return new(big.Int).Add(x, y) }
	sub := func(x, y *big.Int) *big.Int { return new(big.Int).Sub(x, y) }
	mul := func(x, y *big.Int) *big.Int { return new(big.Int).Mul(x, y) }
	floorDiv2 := func(x *big.Int) *big.Int { return new(big.Int).Rsh(x, 1) } // Rsh floors for negatives
	u := func(x *big.Int) uint64 { return t.uint().wrap(x).i.Uint64() }
	switch s.row.name {
	case "abs":
		return t.uint().wrap(new(big.Int).Abs(a[0])), exact, true
	case "abs_diff":
		return t.uint().wrap(new(big.Int).Abs(sub(a[0], a[1]))), exact, true
	case "add_sat":
		return t.sat(add(a[0], a[1])), exact, true
	case "sub_sat":
		return t.sat(sub(a[0], a[1])), exact, true
	case "hadd":
		return t.wrap(floorDiv2(add(a[0], a[1]))), exact, true
	case "rhadd":
		return t.wrap(floorDiv2(add(add(a[0], a[1]), big.NewInt(1)))), exact, true
	case "clamp":
		x := a[0]
		if x.Cmp(a[1]) < 0 {
			x = a[1]
		}
		if x.Cmp(a[2]) > 0 {
			x = a[2]
		}
		return num{i: x}, exact, true
	case "max":
		if a[0].Cmp(a[1]) > 0 {
			return num{i: a[0]}, exact, true
		}
		return num{i: a[1]}, exact, true
	case "min":
		if a[0].Cmp(a[1]) < 0 {
			return num{i: a[0]}, exact, true
		}
		return num{i: a[1]}, exact, true
	case "clz":
		return num{i: big.NewInt(int64(bits.LeadingZeros64(u(a[0])) - (64 - t.bits)))}, exact, true
	case "popcount":
		return num{i: big.NewInt(int64(bits.OnesCount64(u(a[0]))))}, exact, true
	case "mul_hi":
		return t.wrap(new(big.Int).Rsh(mul(a[0], a[1]), uint(t.bits))), exact, true
	case "mad_hi":
		return t.wrap(add(new(big.Int).Rsh(mul(a[0], a[1]), uint(t.bits)), a[2])), exact, true
	case "mad_sat":
		return t.sat(add(mul(a[0], a[1]), a[2])), exact, true
	case "mul24":
		return t.wrap(mul(a[0], a[1])), exact, true
	case "mad24":
		return t.wrap(add(mul(a[0], a[1]), a[2])), exact, true
	case "rotate":
		n := u(a[1]) % uint64(t.bits)
		v := u(a[0])
		r := v<<n | v>>((uint64(t.bits)-n)%uint64(t.bits))
		if t.bits < 64 {
			r &= 1<<t.bits - 1
		}
		return t.wrap(new(big.Int).SetUint64(r)), exact, true
	case "upsample":
		return t.wide().wrap(new(big.Int).Or(new(big.Int).Lsh(a[0], uint(t.bits)), a[1])), exact, true
	}
	return num{}, tolerance{}, false
}

// atomicRef gives an atomic's old value (out 0) or the value it leaves (out 1).
func atomicRef(s genSlot) num {
	init, val := s.args[0], s.args[1]
	if s.out == 0 {
		return init
	}
	t := s.typ
	op := s.row.name[strings.Index(s.row.name, "_")+1:]
	if t.float {
		return val // xchg
	}
	x, v := init.i, val.i
	switch op {
	case "add":
		return t.wrap(new(big.Int).Add(x, v))
	case "sub":
		return t.wrap(new(big.Int).Sub(x, v))
	case "inc":
		return t.wrap(new(big.Int).Add(x, big.NewInt(1)))
	case "dec":
		return t.wrap(new(big.Int).Sub(x, big.NewInt(1)))
	case "xchg", "cmpxchg":
		return val
	case "min":
		if x.Cmp(v) < 0 {
			return init
		}
		return val
	case "max":
		if x.Cmp(v) > 0 {
			return init
		}
		return val
	}
	ux, uv := t.uint().wrap(x).i.Uint64(), t.uint().wrap(v).i.Uint64()
	switch op {
	case "and":
		return t.wrap(new(big.Int).SetUint64(ux & uv))
	case "or":
		return t.wrap(new(big.Int).SetUint64(ux | uv))
	}
	return t.wrap(new(big.Int).SetUint64(ux ^ uv))
}

// sinpiRef is sin(pi x), exact at integers (+0 or -0, x's sign) and half-integers (1 or -1).
func sinpiRef(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return math.NaN()
	}
	a, s := math.Mod(math.Abs(x), 2), math.Copysign(1, x)
	if a >= 1 {
		a, s = a-1, -s
	}
	if a > 0.5 {
		a = 1 - a
	}
	if a == 0 {
		return math.Copysign(0, x)
	}
	return s * math.Sin(math.Pi*a)
}

// cospiRef is cos(pi x), +0 at half-integers.
func cospiRef(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return math.NaN()
	}
	a := math.Mod(math.Abs(x), 2)
	if a == 0.5 || a == 1.5 {
		return 0
	}
	return sinpiRef(a + 0.5)
}
