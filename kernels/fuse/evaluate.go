package fuse

import (
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Ref evaluates the expression at one element on the host: in holds the values of the
// inputs in the order of Inputs (a buffer's element, a scalar's value); Ref sets out[k]
// and tol[k] for output k of Outputs. The value is computed in float64 as if every
// operation were exact (integer operations wrap, as on the device); the tolerance is a
// first-order bound of the device's error: each operation's own error (a rounding of +, -,
// *, conversions and fma: u|v| for the unit roundoff u of its type; division 2.5 ulp; the
// math functions their OpenCL 1.2 ulp bounds: exp, log, sqrt 3, rsqrt 2, sin, cos 4, tan,
// tanh 5, pow 16), each carried forward by the derivative of the operations after it; the
// final rounding to the output's type; a result near a comparison's tie or a discontinuity
// (floor, ceil, conversion to an integer, %) allowed either side. The bound is doubled for
// second-order terms, and widened by the output type's smallest normal per operation for
// results flushed to zero.
func (e *Expr) Ref(in, out, tol []float64) {
	var buf [32]fval
	env := buf[:0]
	if e.slots > len(buf) {
		env = make([]fval, 0, e.slots)
	}
	env = env[:e.slots]
	for k, slot := range e.inSlot {
		env[slot] = fval{v: in[k]}
	}
	for _, st := range e.stmts {
		env[st.slot] = st.expr.eval(env)
	}
	for k, i := range e.outs {
		r := env[e.outSlot[k]]
		t := ftypeNames[e.params[i].Type]
		out[k] = r.v
		if !t.float() {
			tol[k] = 2 * r.e
			continue
		}
		ty, _ := kernels.TypeByName(e.params[i].Type)
		tol[k] = 2*(r.e+t.unit()*math.Abs(r.v)) + float64(e.flops+1)*ty.MinNormal
	}
}

// fval is a value of the reference and the bound of the device's error in it; amb marks
// a comparison whose outcome the error may flip.
type fval struct {
	v, e float64
	amb  bool
}

func (n *node) eval(env []fval) fval {
	switch n.kind {
	case nLit:
		r := fval{v: n.val}
		if n.typ == fF32 {
			r.e = math.Abs(float64(float32(n.val)) - n.val)
		}
		return r
	case nVar:
		return env[n.slot]
	}
	var a [3]fval
	for k, x := range n.args {
		a[k] = x.eval(env)
	}
	x, y := a[0], a[1]
	u := n.typ.unit()
	var r fval
	switch n.kind {
	case nUnary:
		r = fval{v: -x.v, e: x.e}
		if !n.typ.float() {
			r.v = wrap(r.v, n.typ)
		}
		return r
	case nConv:
		r = fval{v: x.v, e: x.e}
		if !n.typ.float() {
			if n.args[0].typ.float() {
				r.v = math.Trunc(x.v)
				if x.e > 0 {
					r.e = x.e + 1
				}
			}
			r.v = wrap(r.v, n.typ)
			return r
		}
		r.e += u * math.Abs(r.v)
		return r
	case nCmp:
		var c bool
		switch n.op {
		case "<":
			c = x.v < y.v
		case "<=":
			c = x.v <= y.v
		case ">":
			c = x.v > y.v
		case ">=":
			c = x.v >= y.v
		case "==":
			c = x.v == y.v
		case "!=":
			c = x.v != y.v
		}
		r = fval{amb: (x.e > 0 || y.e > 0) && math.Abs(x.v-y.v) <= x.e+y.e}
		if c {
			r.v = 1
		}
		return r
	case nSelect:
		r = a[1]
		if x.v == 0 {
			r = a[2]
		}
		if x.amb {
			r.e = max(a[1].e, a[2].e) + math.Abs(a[1].v-a[2].v)
		}
		return r
	case nBinary:
		if !n.typ.float() {
			return fval{v: intOp(n.op, x.v, y.v, n.typ), e: linErr(n.op, x, y)}
		}
		switch n.op {
		case "+":
			r.v = x.v + y.v
		case "-":
			r.v = x.v - y.v
		case "*":
			r.v = x.v * y.v
		case "/":
			r.v = x.v / y.v
		case "%":
			r.v = math.Mod(x.v, y.v)
		}
		r.e = linErr(n.op, x, y)
		cost := 1.0
		if n.op == "/" {
			cost = 5
		}
		r.e += cost * u * math.Abs(r.v)
		return r
	}
	// A call.
	f := funcs[n.op]
	z := a[2]
	var d float64 // |derivative| for one-argument functions
	switch n.op {
	case "exp":
		r.v = math.Exp(x.v)
		d = r.v
	case "exp2":
		r.v = math.Exp2(x.v)
		d = r.v * math.Ln2
	case "log":
		r.v, d = math.Log(x.v), 1/math.Abs(x.v)
	case "log2":
		r.v, d = math.Log2(x.v), 1/(math.Abs(x.v)*math.Ln2)
	case "log10":
		r.v, d = math.Log10(x.v), 1/(math.Abs(x.v)*math.Ln10)
	case "sqrt":
		r.v = math.Sqrt(x.v)
		d = 0.5 / r.v
	case "rsqrt":
		r.v = 1 / math.Sqrt(x.v)
		d = 0.5 * r.v / math.Abs(x.v)
	case "sin":
		r.v, d = math.Sin(x.v), math.Abs(math.Cos(x.v))
	case "cos":
		r.v, d = math.Cos(x.v), math.Abs(math.Sin(x.v))
	case "tan":
		r.v = math.Tan(x.v)
		d = 1 + r.v*r.v
	case "tanh":
		r.v = math.Tanh(x.v)
		d = 1 - r.v*r.v
	case "fabs":
		r.v, d = math.Abs(x.v), 1
	case "abs":
		r.v, d = math.Abs(x.v), 1
		if !n.typ.float() {
			r.v = wrap(r.v, n.typ)
		}
	case "floor", "ceil":
		r.v = math.Floor(x.v)
		if n.op == "ceil" {
			r.v = math.Ceil(x.v)
		}
		if x.e > 0 {
			r.e = x.e + 1
		}
		return r
	case "pow":
		r.v = math.Pow(x.v, y.v)
		r.e = math.Abs(y.v*math.Pow(x.v, y.v-1))*x.e + math.Abs(r.v*math.Log(math.Abs(x.v)))*y.e
	case "min":
		r.v, r.e = math.Min(x.v, y.v), max(x.e, y.e)
	case "max":
		r.v, r.e = math.Max(x.v, y.v), max(x.e, y.e)
	case "clamp":
		r.v, r.e = math.Min(math.Max(x.v, y.v), z.v), max(x.e, y.e, z.e)
	case "fma":
		r.v = x.v*y.v + z.v
		r.e = math.Abs(y.v)*x.e + math.Abs(x.v)*y.e + z.e
	}
	if f.arity == 1 && x.e > 0 {
		r.e += d * x.e
	}
	if math.IsNaN(r.e) {
		r.e = math.Inf(1)
	}
	r.e += f.cost * u * math.Abs(r.v)
	return r
}

// linErr is the error carried through + - * / % by their operands' errors.
func linErr(op string, x, y fval) float64 {
	switch op {
	case "+", "-":
		return x.e + y.e
	case "*":
		return math.Abs(y.v)*x.e + math.Abs(x.v)*y.e + x.e*y.e
	case "/":
		if x.e == 0 && y.e == 0 {
			return 0
		}
		return x.e/math.Abs(y.v) + math.Abs(x.v)*y.e/(y.v*y.v)
	case "%":
		if x.e == 0 && y.e == 0 {
			return 0
		}
		return x.e + math.Abs(math.Trunc(x.v/y.v))*y.e + math.Abs(y.v)
	}
	return 0
}

// intOp is an integer operation of type t, wrapping as the device does (0 for a division
// by zero, whose device result is undefined).
func intOp(op string, a, b float64, t ftype) float64 {
	x, y := int64(a), int64(b)
	var r int64
	switch op {
	case "+":
		r = x + y
	case "-":
		r = x - y
	case "*":
		if t == fU32 {
			r = int64(uint32(x) * uint32(y))
		} else {
			r = int64(int32(x) * int32(y))
		}
	case "/", "%":
		if y == 0 {
			return 0
		}
		if t == fI32 && int32(x) == math.MinInt32 && y == -1 {
			return wrap(float64(x), t)
		}
		if op == "/" {
			r = x / y
		} else {
			r = x % y
		}
	}
	return wrap(float64(r), t)
}

// wrap reduces an integer value modulo 2^32 into the range of t.
func wrap(v float64, t ftype) float64 {
	x := int64(v)
	if t == fU32 {
		return float64(uint32(x))
	}
	return float64(int32(uint32(x)))
}

// Eval evaluates the expression over n elements on the host (Ref at each element): args
// holds each input buffer as a Go slice of its element type ([]float32, []float64,
// []int32, []uint32) of at least n elements, and each scalar as a Go number. It returns
// each output's values and tolerances by name.
func (e *Expr) Eval(n int, args map[string]any) (vals, tols map[string][]float64, err error) {
	ins := e.Inputs()
	get := make([]func(i int) float64, len(ins))
	for k, p := range ins {
		a, ok := args[p.Name]
		if !ok {
			return nil, nil, fmt.Errorf("fuse %q: Eval: no value for %s: %w", e.src, p.Name, engine.ErrInvalidArg)
		}
		if p.Scalar {
			v, ok := toFloat(a)
			if !ok {
				return nil, nil, fmt.Errorf("fuse %q: Eval: scalar %s is %T, not a number: %w", e.src, p.Name, a, engine.ErrInvalidArg)
			}
			get[k] = func(int) float64 { return v }
			continue
		}
		var l int
		switch s := a.(type) {
		case []float32:
			l, get[k] = len(s), func(i int) float64 { return float64(s[i]) }
		case []float64:
			l, get[k] = len(s), func(i int) float64 { return s[i] }
		case []int32:
			l, get[k] = len(s), func(i int) float64 { return float64(s[i]) }
		case []uint32:
			l, get[k] = len(s), func(i int) float64 { return float64(s[i]) }
		default:
			return nil, nil, fmt.Errorf("fuse %q: Eval: buffer %s is %T, not a slice: %w", e.src, p.Name, a, engine.ErrInvalidArg)
		}
		if l < n {
			return nil, nil, fmt.Errorf("fuse %q: Eval: %s has %d elements, need %d: %w", e.src, p.Name, l, n, engine.ErrInvalidArg)
		}
	}
	outs := e.Outputs()
	vals, tols = map[string][]float64{}, map[string][]float64{}
	for _, p := range outs {
		vals[p.Name], tols[p.Name] = make([]float64, n), make([]float64, n)
	}
	in := make([]float64, len(ins))
	o, t := make([]float64, len(outs)), make([]float64, len(outs))
	for i := range n {
		for k := range in {
			in[k] = get[k](i)
		}
		e.Ref(in, o, t)
		for k, p := range outs {
			vals[p.Name][i], tols[p.Name][i] = o[k], t[k]
		}
	}
	return vals, tols, nil
}

func toFloat(a any) (float64, bool) {
	switch v := a.(type) {
	case float32:
		return float64(v), true
	case float64:
		return v, true
	case int:
		return float64(v), true
	case int32:
		return float64(v), true
	case uint32:
		return float64(v), true
	case int64:
		return float64(v), true
	}
	return 0, false
}
