package translate

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// The generated test of the built-in functions: genBuiltins writes one OpenCL C program
// that calls every supported row of builtins.tsv at every type and width the row lists,
// on inputs from tables of the program (domains chosen per function), and writes every
// component of every result, and of every second result through a pointer, as 64 bits
// into out (floats as their bits, integers extended by their signedness). Each output
// component is a genSlot, which knows its row, type, width, lane and inputs, so that the
// same slots are read from the CPU run of the translation, from an OpenCL device, and
// checked against the Go references of builtins_ref_test.go.

// A genType is an element type of OpenCL C.
type genType struct {
	name   string
	float  bool
	bits   int
	signed bool
}

var genTypes = map[string]genType{
	"char": {"char", false, 8, true}, "uchar": {"uchar", false, 8, false}, "short": {"short", false, 16, true},
	"ushort": {"ushort", false, 16, false}, "int": {"int", false, 32, true}, "uint": {"uint", false, 32, false},
	"long": {"long", false, 64, true}, "ulong": {"ulong", false, 64, false}, "float": {"float", true, 32, true},
	"double": {"double", true, 64, true},
}

// sint and uint return the integer types of t's size.
func (t genType) sint() genType {
	return genTypes[map[int]string{8: "char", 16: "short", 32: "int", 64: "long"}[t.bits]]
}
func (t genType) uint() genType {
	return genTypes[map[int]string{8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}[t.bits]]
}

// wide returns the type twice as wide, of t's signedness (upsample).
func (t genType) wide() genType {
	return genTypes[map[string]string{"char": "short", "uchar": "ushort", "short": "int", "ushort": "uint", "int": "long", "uint": "ulong"}[t.name]]
}

// vec names t's vector type of width w (t itself for 1).
func (t genType) vec(w int) string {
	if w == 1 {
		return t.name
	}
	return t.name + strconv.Itoa(w)
}

// bits64 writes an OpenCL C expression of t as 64 bits.
func (t genType) bits64(e string) string {
	switch {
	case t.name == "float":
		return "(ulong)as_uint(" + e + ")"
	case t.name == "double":
		return "as_ulong(" + e + ")"
	case t.signed:
		return "(ulong)(long)(" + e + ")"
	}
	return "(ulong)(" + e + ")"
}

// num is an input or output value: f for floats, i for integers.
type num struct {
	f float64
	i *big.Int
}

// decode reads the 64 bits of a component of type t.
func (t genType) decode(u uint64) num {
	switch t.name {
	case "float":
		return num{f: float64(math.Float32frombits(uint32(u)))}
	case "double":
		return num{f: math.Float64frombits(u)}
	}
	v := new(big.Int).SetUint64(u)
	if t.signed {
		v.SetInt64(int64(u))
	}
	return t.wrap(v)
}

// wrap reduces v to t's range, as a conversion to t does.
func (t genType) wrap(v *big.Int) num {
	m := new(big.Int).Lsh(big.NewInt(1), uint(t.bits))
	r := new(big.Int).Mod(v, m)
	if t.signed && r.Cmp(new(big.Int).Rsh(m, 1)) >= 0 {
		r.Sub(r, m)
	}
	return num{i: r}
}

// limits returns t's smallest and largest values.
func (t genType) limits() (*big.Int, *big.Int) {
	one := big.NewInt(1)
	if !t.signed {
		return big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(one, uint(t.bits)), one)
	}
	half := new(big.Int).Lsh(one, uint(t.bits-1))
	return new(big.Int).Neg(half), new(big.Int).Sub(half, one)
}

// sat clamps v to t's range.
func (t genType) sat(v *big.Int) num {
	lo, hi := t.limits()
	switch {
	case v.Cmp(lo) < 0:
		return num{i: lo}
	case v.Cmp(hi) > 0:
		return num{i: hi}
	}
	return num{i: new(big.Int).Set(v)}
}

// literal writes v as an OpenCL C constant of type t.
func (t genType) literal(v num) string {
	switch t.name {
	case "float", "double":
		switch {
		case math.IsNaN(v.f):
			return "(" + t.name + ")NAN"
		case math.IsInf(v.f, 1):
			return "(" + t.name + ")INFINITY"
		case math.IsInf(v.f, -1):
			return "(" + t.name + ")-INFINITY"
		}
	}
	switch t.name {
	case "float":
		f := float32(v.f)
		if f == 0 && math.Signbit(float64(f)) {
			return "-0.0f"
		}
		return strconv.FormatFloat(float64(f), 'e', -1, 32) + "f"
	case "double":
		if v.f == 0 && math.Signbit(v.f) {
			return "-0.0"
		}
		return strconv.FormatFloat(v.f, 'e', -1, 64)
	}
	lo, _ := t.limits()
	if t.signed && v.i.Cmp(lo) == 0 {
		return fmt.Sprintf("(%s)(%s - 1)", t.name, new(big.Int).Add(lo, big.NewInt(1)).String()+"L")
	}
	if t.signed {
		return fmt.Sprintf("(%s)(%sL)", t.name, v.i.String())
	}
	return fmt.Sprintf("(%s)(%sUL)", t.name, v.i.String())
}

// callsPerKernel is about how many calls a generated kernel holds.
const callsPerKernel = 120

// domainSize is the number of values of each input table; a call reads 16 of them from an
// offset below domainSize-16.
const domainSize = 32

// floatDomains are the input tables of the float functions, by name.
var floatDomains = map[string][]float64{
	"any":  {-3.7, -1.25, -0.5, 0, 0.3, 0.75, 1, 1.5, 2.25, 3.3, 5.5, 7.1, -2.5, 10.25, -0.1, 4, -7.9, 0.01, 12.5, -0.875, 2, 6.75, -4.2, 0.6, 1.1, -1, 8.8, -9.5, 3, 0.45, -6.1, 15.3},
	"pos":  {0.1, 0.25, 0.5, 1, 1.5, 2, 3.3, 4.7, 7.25, 10, 12.5, 17, 0.03, 0.9, 1.1, 2.718, 5, 6.6, 8.1, 9.9, 11.3, 13, 14.2, 15.9, 19.5, 0.6, 0.75, 3.9, 4.1, 0.07, 2.5, 1.9},
	"unit": {-0.95, -0.8, -0.6, -0.45, -0.3, -0.1, 0, 0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, -0.7, 0.7, -0.25, 0.25, -0.55, 0.55, -0.05, 0.15, -0.15, 0.45, -0.35, 0.3, 0.6, -0.65, 0.85, -0.85, 0.4, -0.4},
	"neg":  {-0.1, -0.25, -0.5, -1, -1.5, -2, -3.3, -4.7, -7.25, -10, -12.5, -17, -0.03, -0.9, -1.1, -2.718, -5, -6.6, -8.1, -9.9, -11.3, -13, -14.2, -15.9, -19.5, -0.6, -0.75, -3.9, -4.1, -0.07, -2.5, -1.9},
	"ge1":  {1, 1.1, 1.5, 2, 2.5, 3, 4, 5.5, 7, 9, 12, 15, 20, 1.01, 1.25, 3.7, 6.2, 8.8, 10.5, 13.3, 17.6, 1.75, 2.2, 4.4, 5, 6, 7.5, 11, 14, 16, 18, 19},
	"exp":  {-5, -3.3, -2, -1.25, -0.5, -0.1, 0, 0.2, 0.6, 1, 1.7, 2.5, 3.1, 4, 4.9, -4.4, -0.75, 0.33, 1.25, 2, 3.5, -2.7, -1.6, 0.9, 1.4, 2.2, 3.8, -3.9, 4.5, -0.3, 0.05, -4.95},
	"gam":  {-3.7, -2.5, -1.5, -0.5, 0.3, 0.75, 1, 1.5, 2.25, 3.3, 5.5, 7.1, 0.1, 4, 6, 8.5, -0.25, -1.75, 0.6, 1.2, 2, 2.8, 3.9, 4.6, 5.1, 6.6, 9.2, -2.2, -3.1, 0.45, 1.9, 10},
	"nz":   {-3.7, -1.25, -0.5, 0.25, 0.3, 0.75, 1, 1.5, 2.25, 3.3, 5.5, 7.1, -2.5, 10.25, -0.1, 4, -7.9, 0.01, 12.5, -0.875, 2, 6.75, -4.2, 0.6, 1.1, -1, 8.8, -9.5, 3, 0.45, -6.1, 15.3},
	"rel":  {1, math.NaN(), math.Inf(1), math.Copysign(0, -1), 2, math.Inf(-1), 1e-40, -3, 1, 2, math.NaN(), 4, -3, 0, 7, 1e-310, -1, 5, 2, math.NaN(), 0.5, -0.5, 3, 3, 6, 7, -8, 9, math.Inf(1), 1e-45, 2.5, -2.5},
	"half": {1, -2.5, 65504, 65520, 70000, -1e-6, 1e-7, 3.14159265, 0.1, -0.2, 1.0009765625 + 1.0/4096, 2049, -2049, 1e-4, 6e-5, -0.0, 100.3, 1000.7, -33.33, 0.5, 1.0 / 3, 2.0 / 3, -65519, 65519, 7e-8, 3e-8, 12345.678, -4097, 0.999, 1.001, 5e-5, 8.75},
}

// floatDomain returns the table argument k of function name reads (float types).
func floatDomain(name string, k int) string {
	switch name {
	case "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "pow", "powr", "rootn", "half_log", "half_log2", "half_log10",
		"half_sqrt", "half_rsqrt", "half_powr", "native_log", "native_log2", "native_log10", "native_sqrt", "native_rsqrt",
		"native_powr", "half_recip", "native_recip", "logb", "ilogb":
		if name == "pow" && k == 1 || name == "powr" && k == 1 || name == "half_powr" && k == 1 || name == "native_powr" && k == 1 {
			return "exp"
		}
		return "pos"
	case "asin", "acos", "atanh", "asinpi", "acospi":
		return "unit"
	case "acosh":
		return "ge1"
	case "exp", "exp2", "exp10", "expm1", "sinh", "cosh", "half_exp", "half_exp2", "half_exp10", "native_exp",
		"native_exp2", "native_exp10", "erf", "erfc":
		return "exp"
	case "tgamma", "lgamma", "lgamma_r":
		return "gam"
	case "smoothstep": // undefined where edge0 >= edge1
		switch k {
		case 0:
			return "neg"
		case 1:
			return "pos"
		}
	case "fmod", "remainder", "remquo", "divide", "half_divide", "native_divide":
		if k == 1 {
			return "nz"
		}
	case "isequal", "isnotequal", "isgreater", "isgreaterequal", "isless", "islessequal", "islessgreater", "isordered",
		"isunordered", "isfinite", "isinf", "isnan", "isnormal", "signbit":
		return "rel"
	}
	return "any"
}

// intDomain returns the input table of an integer argument of type t: for function name's
// argument k, small values where the function needs them, else values that reach the
// type's edges.
func intDomain(t genType, name string, k int) []num {
	lo, hi := t.limits()
	var vals []*big.Int
	small := func(from, to int64) {
		for v := from; len(vals) < domainSize; v++ {
			if v > to {
				v = from
			}
			vals = append(vals, big.NewInt(v))
		}
	}
	switch {
	case name == "mul24" || name == "mad24":
		if t.signed {
			for i := int64(0); i < domainSize; i++ {
				vals = append(vals, big.NewInt((i*i*7919+i*104729)%(1<<20)-(1<<19)))
			}
		} else {
			for i := int64(0); i < domainSize; i++ {
				vals = append(vals, big.NewInt((i*i*7919+i*104729)%(1<<23)))
			}
		}
	case name == "clamp" && k == 1:
		if t.signed {
			small(-20, -1)
		} else {
			small(0, 9)
		}
	case name == "clamp" && k == 2:
		small(20, 60)
	case name == "ldexp" || name == "pown":
		small(-5, 6)
	case name == "rootn":
		small(1, 5)
	case name == "nan":
		small(0, 31)
	default:
		one := big.NewInt(1)
		base := []*big.Int{big.NewInt(0), one, big.NewInt(2), big.NewInt(3), big.NewInt(7), big.NewInt(100), lo, hi,
			new(big.Int).Sub(hi, one), new(big.Int).Add(lo, one), new(big.Int).Rsh(hi, 1), new(big.Int).Rsh(hi, 3)}
		if t.signed {
			base = append(base, big.NewInt(-1), big.NewInt(-2), big.NewInt(-100), new(big.Int).Quo(lo, big.NewInt(2)))
		}
		x := uint64(0x9e3779b97f4a7c15 + uint64(k)*0x632be59bd9b4e019)
		for len(base) < domainSize {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			base = append(base, t.wrap(new(big.Int).SetUint64(x)).i)
		}
		// A different order for each argument.
		for i := range base {
			vals = append(vals, base[(i*(2*k+1)+k)%len(base)])
		}
	}
	out := make([]num, len(vals))
	for i, v := range vals {
		out[i] = t.wrap(v)
	}
	return out
}

// genArg is an argument of a generated call.
type genArg struct {
	code   string // the signature's code: g, i, u, m, pg, pi, ...
	typ    genType
	width  int
	table  string // the OpenCL C name of its input table, "" for a pointer output
	offset int
	vals   []num // the table
}

// genSlot is one component of one output of a generated call.
type genSlot struct {
	row   builtin
	typ   genType // the call's type
	width int
	lane  int
	out   int     // 0 the result, 1 the second result (through a pointer)
	otyp  genType // the output's element type
	args  []num   // the lane's inputs
	note  string  // what the call was, for messages
}

// genProgram is a generated program: its source and its slots, out's elements in order.
type genProgram struct {
	src   string
	slots []genSlot
	rows  map[string]int // calls per row name (for the report)
	// kernels names the program's kernels, each of the same parameters (out, scratch), to
	// be run one after the other.
	kernels []string
	// firstSlot holds, per kernel, the index of its first slot; the slots of kernel i end
	// where kernel i+1's begin.
	firstSlot []int
	// locals declares the kernel's __local arrays, at its outermost scope as OpenCL asks.
	locals strings.Builder
}

// genBuiltins generates the program of every supported row of rows (see the file's
// comment), in kernels builtins0, builtins1, ... of parameters (__global ulong *out, __global ulong
// *scratch).
func genBuiltins(rows []builtin) (*genProgram, error) { return genBuiltinsPer(rows, callsPerKernel) }

// genBuiltinsPer is genBuiltins with kernels of about per calls; with per = 1 each row
// has a kernel of its own (to find which row a failing kernel holds faults).
func genBuiltinsPer(rows []builtin, per int) (*genProgram, error) {
	g := &genProgram{rows: map[string]int{}}
	var tables strings.Builder
	var body, kernels strings.Builder
	haveTable := map[string]bool{}
	start := 0 // the first slot of the kernel being written
	// flush ends the kernel written so far: the calls go into kernels of about
	// callsPerKernel calls each, which compilers optimize far faster than one.
	flush := func() {
		if body.Len() == 0 {
			return
		}
		name := fmt.Sprintf("builtins%d", len(g.kernels))
		g.kernels = append(g.kernels, name)
		g.firstSlot = append(g.firstSlot, start)
		start = len(g.slots)
		fmt.Fprintf(&kernels, "__kernel void %s(__global ulong *out, __global ulong *scratch) {\n", name)
		kernels.WriteString(tables.String())
		kernels.WriteString(g.locals.String())
		kernels.WriteString(body.String())
		kernels.WriteString("}\n")
		tables.Reset()
		g.locals.Reset()
		body.Reset()
		haveTable = map[string]bool{}
	}
	table := func(t genType, name string, vals []num) string {
		id := "dom_" + name + "_" + t.name
		if !haveTable[id] {
			haveTable[id] = true
			fmt.Fprintf(&tables, "  const %s %s[%d] = {", t.name, id, len(vals))
			for i, v := range vals {
				if i > 0 {
					tables.WriteString(", ")
				}
				tables.WriteString(t.literal(v))
			}
			tables.WriteString("};\n")
		}
		return id
	}
	floatVals := func(t genType, dom string) []num {
		out := make([]num, domainSize)
		for i, f := range floatDomains[dom] {
			if t.name == "float" {
				f = float64(float32(f))
			}
			out[i] = num{f: f}
		}
		return out
	}
	calls, flushed := 0, 0
	next := func() int { calls++; return (calls * 7) % (domainSize - 16) }
	elem := func(v string, w, i int) string {
		if w == 1 {
			return v
		}
		return fmt.Sprintf("%s.s%x", v, i)
	}
	emitOut := func(b *strings.Builder, v string, w int, t genType, mk func(lane int) genSlot) {
		for i := 0; i < w; i++ {
			fmt.Fprintf(b, "    out[%d] = %s;\n", len(g.slots), t.bits64(elem(v, w, i)))
			g.slots = append(g.slots, mk(i))
		}
	}
	load := func(a genArg) string {
		if a.width == 1 {
			return fmt.Sprintf("%s[%d]", a.table, a.offset)
		}
		return fmt.Sprintf("vload%d(0, %s + %d)", a.width, a.table, a.offset)
	}
	for _, row := range rows {
		if row.state != "supported" || row.section == "2.0+" { // 2.0+ needs a device with the feature: subgroups_test.go
			continue
		}
		if calls-flushed >= per {
			flush()
			flushed = calls
		}
		res, argCodes, _ := strings.Cut(row.signature, ":")
		generic := false
		switch row.group {
		case "math", "half_math", "native_math", "integer", "common", "geometric", "relational":
			generic = true
		}
		if row.name == "upsample" {
			generic = true
		}
		if !generic {
			if err := g.special(&body, row, next, table, floatVals, emitOut); err != nil {
				return nil, err
			}
			continue
		}
		for _, tn := range row.types {
			t := genTypes[tn]
			for _, ws := range row.widths {
				w, _ := strconv.Atoi(ws)
				var args []genArg
				for k, code := range strings.Split(argCodes, ",") {
					a := genArg{code: code, width: w}
					switch code {
					case "g":
						a.typ = t
					case "i", "pi":
						a.typ = genTypes["int"]
					case "u":
						a.typ = t.uint()
					case "m":
						a.typ = t.sint()
					case "pg":
						a.typ = t
					default:
						return nil, fmt.Errorf("%s: argument code %q", row.name, code)
					}
					if !strings.HasPrefix(code, "p") {
						switch {
						case a.typ.float:
							dom := floatDomain(row.name, k)
							a.vals = floatVals(a.typ, dom)
							a.table = table(a.typ, dom, a.vals)
						default:
							a.vals = intDomain(a.typ, row.name, k)
							a.table = table(a.typ, fmt.Sprintf("%s_%d", row.name, k), a.vals)
						}
						a.offset = next()
					}
					args = append(args, a)
				}
				var rt genType
				switch res {
				case "g", "s":
					rt = t
				case "i", "b":
					rt = genTypes["int"]
				case "u":
					rt = t.uint()
				case "m":
					rt = genTypes["int"]
					if w > 1 {
						rt = t.sint()
					}
				case "w":
					rt = t.wide()
				default:
					return nil, fmt.Errorf("%s: result code %q", row.name, res)
				}
				rw := w
				if res == "s" || res == "b" {
					rw = 1
				}
				var call []string
				fmt.Fprintf(&body, "  { // %s %s\n", row.name, t.vec(w))
				for k, a := range args {
					if strings.HasPrefix(a.code, "p") {
						fmt.Fprintf(&body, "    %s a%d;\n", a.typ.vec(w), k)
						call = append(call, fmt.Sprintf("&a%d", k))
						continue
					}
					fmt.Fprintf(&body, "    %s a%d = %s;\n", a.typ.vec(w), k, load(a))
					call = append(call, fmt.Sprintf("a%d", k))
				}
				fmt.Fprintf(&body, "    %s r = %s(%s);\n", rt.vec(rw), row.name, strings.Join(call, ", "))
				note := fmt.Sprintf("%s(%s)", row.name, t.vec(w))
				inputs := func(lane int) []num {
					var in []num
					for _, a := range args {
						if a.vals != nil {
							in = append(in, a.vals[a.offset+lane])
						}
					}
					return in
				}
				emitOut(&body, "r", rw, rt, func(lane int) genSlot {
					in := inputs(lane)
					if rw == 1 && w > 1 { // a reduction: every lane's inputs
						in = nil
						for l := 0; l < w; l++ {
							in = append(in, inputs(l)...)
						}
					}
					return genSlot{row: row, typ: t, width: w, lane: lane, otyp: rt, args: in, note: note}
				})
				for k, a := range args {
					if strings.HasPrefix(a.code, "p") {
						emitOut(&body, fmt.Sprintf("a%d", k), w, a.typ, func(lane int) genSlot {
							return genSlot{row: row, typ: t, width: w, lane: lane, out: 1, otyp: a.typ, args: inputs(lane), note: note + " through the pointer"}
						})
					}
				}
				body.WriteString("  }\n")
				g.rows[row.name]++
			}
		}
	}
	var src strings.Builder
	src.WriteString("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n")
	src.WriteString("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n")
	src.WriteString("#pragma OPENCL EXTENSION cl_khr_global_int32_base_atomics : enable\n#pragma OPENCL EXTENSION cl_khr_global_int32_extended_atomics : enable\n")
	flush()
	src.WriteString(kernels.String())
	g.src = src.String()
	return g, nil
}

// special writes the calls of the rows whose signatures the generic path does not take:
// work-item functions, loads and stores, fences and barriers, asynchronous copies,
// atomics, vec_step, shuffle and shuffle2, printf (which writes nothing to out).
func (g *genProgram) special(body *strings.Builder, row builtin, next func() int, table func(genType, string, []num) string,
	floatVals func(genType, string) []num, emitOut func(*strings.Builder, string, int, genType, func(int) genSlot)) error {
	ulong := genTypes["ulong"]
	one := func(expr string, want num) {
		fmt.Fprintf(body, "  { // %s\n    ulong r = (ulong)(%s);\n", row.name, expr)
		emitOut(body, "r", 1, ulong, func(int) genSlot {
			return genSlot{row: row, typ: ulong, width: 1, otyp: ulong, args: []num{want}, note: expr}
		})
		body.WriteString("  }\n")
		g.rows[row.name]++
	}
	widths := func() []int {
		var out []int
		for _, s := range row.widths {
			w, _ := strconv.Atoi(s)
			out = append(out, w)
		}
		return out
	}
	vals := func(t genType, name string) ([]num, string) {
		if t.float {
			v := floatVals(t, "any")
			if strings.Contains(name, "half") {
				v = floatVals(t, "half")
			}
			return v, table(t, strings.TrimPrefix(name, "v"), v)
		}
		v := intDomain(t, name, 0)
		return v, table(t, "load", v)
	}
	switch row.group {
	case "work-item":
		want := int64(0)
		if strings.Contains(row.name, "size") || row.name == "get_num_groups" {
			want = 1
		}
		for d := 0; d < 3; d++ {
			one(fmt.Sprintf("%s(%d)", row.name, d), num{i: big.NewInt(want)})
		}
		return nil
	case "sync":
		one(fmt.Sprintf("(%s(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE), 1)", row.name), num{i: big.NewInt(1)})
		return nil
	case "printf":
		body.WriteString("  printf(\"builtins printf %d %.3f %s %c %5.1e %x\\n\", 7, 1.5f, \"text\", 'c', 12345.0, 255u);\n")
		g.rows[row.name]++
		return nil
	}
	switch row.name {
	case "vload{n}", "vstore{n}":
		for _, tn := range row.types {
			t := genTypes[tn]
			v, tab := vals(t, "load")
			for _, w := range widths() {
				off := next() % (domainSize - 2*w + 1) // vload reads the second w from off
				fmt.Fprintf(body, "  { // %s %s\n    %s r = vload%d(1, %s + %d);\n", row.name, t.vec(w), t.vec(w), w, tab, off)
				if row.name == "vstore{n}" {
					fmt.Fprintf(body, "    %s p[48];\n    vstore%d(r, 2, p);\n    r = vload%d(2, p);\n", t.name, w, w)
				}
				emitOut(body, "r", w, t, func(lane int) genSlot {
					return genSlot{row: row, typ: t, width: w, lane: lane, otyp: t, args: []num{v[off+w+lane]}, note: row.name}
				})
				body.WriteString("  }\n")
				g.rows[row.name]++
			}
		}
		return nil
	case "vload_half", "vload_half{n}", "vloada_half{n}":
		half := genTypes["ushort"]
		var hv []num
		for _, f := range floatDomains["half"] {
			hv = append(hv, num{i: new(big.Int).SetUint64(uint64(halfBits(f, "_rte")))})
		}
		tab := table(half, "half", hv)
		for _, w := range widths() {
			stride := w
			if row.name == "vloada_half{n}" && w == 3 {
				stride = 4
			}
			off := next() % (domainSize - stride - w + 1)
			fn := strings.ReplaceAll(row.name, "{n}", strconv.Itoa(w))
			ft := genTypes["float"]
			fmt.Fprintf(body, "  { // %s\n    ushort h[%d];\n    for (int k = 0; k < %d; k++) h[k] = %s[%d + k];\n", fn, domainSize, domainSize-off, tab, off)
			fmt.Fprintf(body, "    %s r = %s(1, (half *)h);\n", ft.vec(w), fn)
			emitOut(body, "r", w, ft, func(lane int) genSlot {
				return genSlot{row: row, typ: ft, width: w, lane: lane, otyp: ft, args: []num{hv[off+stride+lane]}, note: fn}
			})
			body.WriteString("  }\n")
			g.rows[row.name]++
		}
		return nil
	}
	if strings.HasPrefix(row.name, "vstore_half") || strings.HasPrefix(row.name, "vstorea_half") {
		mode := row.name[strings.LastIndex(row.name, "half")+4:]
		mode = strings.TrimPrefix(mode, "{n}")
		for _, tn := range row.types {
			t := genTypes[tn]
			v, tab := vals(t, "vhalf")
			for _, w := range widths() {
				off := next()
				stride := w
				if strings.HasPrefix(row.name, "vstorea") && w == 3 {
					stride = 4
				}
				fn := strings.ReplaceAll(row.name, "{n}", strconv.Itoa(w))
				src := fmt.Sprintf("%s[%d]", tab, off)
				if w > 1 {
					src = fmt.Sprintf("vload%d(0, %s + %d)", w, tab, off)
				}
				fmt.Fprintf(body, "  { // %s %s\n    ushort h[48];\n    %s(%s, 1, (half *)h);\n    ushort%s r = ", fn, t.vec(w), fn, src, map[bool]string{true: "", false: strconv.Itoa(w)}[w == 1])
				if w == 1 {
					fmt.Fprintf(body, "h[1];\n")
				} else {
					fmt.Fprintf(body, "vload%d(0, h + %d);\n", w, stride)
				}
				emitOut(body, "r", w, genTypes["ushort"], func(lane int) genSlot {
					return genSlot{row: row, typ: t, width: w, lane: lane, otyp: genTypes["ushort"], args: []num{v[off+lane]}, note: fn + mode}
				})
				body.WriteString("  }\n")
				g.rows[row.name]++
			}
		}
		return nil
	}
	if row.name == "wait_group_events" {
		g.locals.WriteString("  __local uint lwait[2];\n")
		body.WriteString("  { // wait_group_events\n    event_t e[2];\n    e[0] = async_work_group_copy(lwait, (__global const uint *)scratch, 2, 0);\n    e[1] = async_work_group_copy((__global uint *)scratch + 2, lwait, 2, 0);\n    wait_group_events(2, e);\n  }\n")
		g.rows[row.name]++
		return nil
	}
	switch row.group {
	case "async":
		for _, tn := range row.types {
			t := genTypes[tn]
			v, tab := vals(t, "load")
			for _, w := range widths() {
				off, n := 0, min(4, domainSize/w) // n elements of the type from the table
				vt := t.vec(w)
				id := len(g.slots)
				fmt.Fprintf(&g.locals, "  __local %s la%d[4], lb%d[4];\n", vt, id, id)
				fmt.Fprintf(body, "  { // %s %s\n    __local %s *a = la%d, *b = lb%d;\n    __global %s *s = (__global %s *)scratch;\n", row.name, vt, vt, id, id, vt, vt)
				fmt.Fprintf(body, "    for (int k = 0; k < %d; k++) a[k] = %s;\n", n, map[bool]string{true: tab + "[k]", false: fmt.Sprintf("vload%d(k, %s)", w, tab)}[w == 1])
				switch row.name {
				case "async_work_group_copy":
					fmt.Fprintf(body, "    event_t e = async_work_group_copy(s, a, %d, 0);\n    wait_group_events(1, &e);\n", n)
					fmt.Fprintf(body, "    e = async_work_group_copy(b, s, %d, 0);\n    wait_group_events(1, &e);\n", n)
				case "async_work_group_strided_copy":
					fmt.Fprintf(body, "    event_t e = async_work_group_strided_copy(s, a, %d, 3, 0);\n    wait_group_events(1, &e);\n", n)
					fmt.Fprintf(body, "    e = async_work_group_strided_copy(b, s, %d, 3, 0);\n    wait_group_events(1, &e);\n", n)
				case "prefetch":
					fmt.Fprintf(body, "    prefetch(s, 4);\n    for (int k = 0; k < %d; k++) b[k] = a[k];\n", n)
				}
				for k := 0; k < n; k++ {
					emitOut(body, fmt.Sprintf("b[%d]", k), w, t, func(lane int) genSlot {
						return genSlot{row: row, typ: t, width: w, lane: lane, otyp: t, args: []num{v[off+k*w+lane]}, note: row.name}
					})
				}
				if row.name == "async_work_group_strided_copy" { // the scatter left every third element
					for k := 0; k < n; k++ {
						emitOut(body, fmt.Sprintf("s[%d]", 3*k), w, t, func(lane int) genSlot {
							return genSlot{row: row, typ: t, width: w, lane: lane, otyp: t, args: []num{v[off+k*w+lane]}, note: row.name + " (scatter)"}
						})
					}
				}
				body.WriteString("  }\n")
				g.rows[row.name]++
			}
		}
		return nil
	}
	switch row.group {
	case "atomic", "atomic64":
		op := row.name[strings.Index(row.name, "_")+1:]
		for _, tn := range row.types {
			t := genTypes[tn]
			init, val := intDomain(t, row.name, 0)[next()], intDomain(t, row.name, 1)[next()]
			if t.float {
				init, val = num{f: 2.5}, num{f: -7.25}
			}
			fmt.Fprintf(body, "  { // %s %s\n    volatile __global %s *p = (volatile __global %s *)scratch;\n    *p = %s;\n", row.name, t.name, t.name, t.name, t.literal(init))
			switch op {
			case "inc", "dec":
				fmt.Fprintf(body, "    %s r = %s(p);\n", t.name, row.name)
			case "cmpxchg":
				fmt.Fprintf(body, "    %s r = %s(p, %s, %s);\n", t.name, row.name, t.literal(init), t.literal(val))
			default:
				fmt.Fprintf(body, "    %s r = %s(p, %s);\n    %s q = *p;\n", t.name, row.name, t.literal(val), t.name)
			}
			if op == "inc" || op == "dec" || op == "cmpxchg" {
				fmt.Fprintf(body, "    %s q = *p;\n", t.name)
			}
			emitOut(body, "r", 1, t, func(int) genSlot {
				return genSlot{row: row, typ: t, width: 1, otyp: t, args: []num{init, val}, note: row.name + " (old value)"}
			})
			emitOut(body, "q", 1, t, func(int) genSlot {
				return genSlot{row: row, typ: t, width: 1, out: 1, otyp: t, args: []num{init, val}, note: row.name + " (new value)"}
			})
			body.WriteString("  }\n")
			g.rows[row.name]++
		}
		return nil
	case "misc_vector":
		for _, tn := range row.types {
			t := genTypes[tn]
			v, tab := vals(t, "load")
			ws := widths()
			for j, w := range ws {
				switch row.name {
				case "vec_step":
					want := int64(w)
					if w == 3 {
						want = 4
					}
					fmt.Fprintf(body, "  { // vec_step %s\n    %s x = (%s)(0);\n    ulong r = vec_step(%s) + 100 * vec_step(x);\n", t.vec(w), t.vec(w), t.vec(w), t.vec(w))
					emitOut(body, "r", 1, ulong, func(int) genSlot {
						return genSlot{row: row, typ: t, width: w, otyp: ulong, args: []num{{i: big.NewInt(101 * want)}}, note: "vec_step(" + t.vec(w) + ")"}
					})
					body.WriteString("  }\n")
				case "shuffle", "shuffle2":
					m := ws[(j+1)%len(ws)] // the operands' width; w is the mask's
					ut := t.uint()
					mv := make([]num, domainSize)
					for k := range mv {
						mv[k] = num{i: big.NewInt(int64((k*5 + 3) % 37))}
					}
					mtab := table(ut, "mask", mv)
					xo, yo, mo := next(), next(), next()
					fmt.Fprintf(body, "  { // %s %s of %s\n    %s x = vload%d(0, %s + %d), y = vload%d(0, %s + %d);\n    %s mask = vload%d(0, %s + %d);\n",
						row.name, t.vec(w), t.vec(m), t.vec(m), m, tab, xo, m, tab, yo, ut.vec(w), w, mtab, mo)
					if row.name == "shuffle" {
						fmt.Fprintf(body, "    %s r = shuffle(x, mask);\n", t.vec(w))
					} else {
						fmt.Fprintf(body, "    %s r = shuffle2(x, y, mask);\n", t.vec(w))
					}
					emitOut(body, "r", w, t, func(lane int) genSlot {
						k := int(mv[mo+lane].i.Int64())
						var want num
						if row.name == "shuffle" {
							want = v[xo+k%m]
						} else if k%(2*m) < m {
							want = v[xo+k%(2*m)]
						} else {
							want = v[yo+k%(2*m)-m]
						}
						return genSlot{row: row, typ: t, width: w, lane: lane, otyp: t, args: []num{want}, note: fmt.Sprintf("%s(%s, mask %v)", row.name, t.vec(m), k)}
					})
					body.WriteString("  }\n")
				}
				g.rows[row.name]++
			}
		}
		return nil
	}
	return fmt.Errorf("builtins.tsv: no generator for %s (group %s, signature %s)", row.name, row.group, row.signature)
}

// halfBits converts x to half's bits, rounding as mode says (_rte, _rtz, _rtp, _rtn, or
// "" for _rte), exactly: beyond the largest half, infinity (or 65504 where the rounding
// goes toward zero).
func halfBits(x float64, mode string) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
		x = -x
	}
	if math.IsNaN(x) {
		return 0x7e00
	}
	neg := sign != 0
	// the rounding direction for this sign: up (away from zero) or not, or nearest
	up := func(frac float64, odd bool) bool {
		switch mode {
		case "_rtz":
			return false
		case "_rtp":
			return frac > 0 && !neg
		case "_rtn":
			return frac > 0 && neg
		}
		return frac > 0.5 || frac == 0.5 && odd
	}
	big := sign | 0x7c00
	if mode == "_rtz" || mode == "_rtp" && neg || mode == "_rtn" && !neg {
		big = sign | 0x7bff
	}
	if math.IsInf(x, 0) {
		return sign | 0x7c00
	}
	if x == 0 {
		return sign
	}
	e := 0
	if x != 0 {
		_, e = math.Frexp(x)
		e-- // x = m * 2^e, 1 <= m < 2
	}
	if e > 15 {
		return big
	}
	if e < -14 {
		e = -14
	}
	m := math.Ldexp(x, 10-e) // in units of the last place
	n := math.Floor(m)
	frac := m - n
	if up(frac, int64(n)&1 == 1) {
		n++
	}
	bits := (e+15)<<10 + int(n) - 1024
	if bits >= 0x7c00 {
		return big
	}
	return sign | uint16(bits)
}

// TestGenKernelCalls checks the map from kernels to their calls that a failing kernel's
// message prints: the kernels' slots tile out's elements in order, and every kernel names
// the calls of its own slots only.
func TestGenKernelCalls(t *testing.T) {
	g, err := genBuiltins(builtins())
	if err != nil {
		t.Fatal(err)
	}
	if len(g.firstSlot) != len(g.kernels) || len(g.kernels) < 2 || g.firstSlot[0] != 0 {
		t.Fatalf("%d kernels, first slots %v", len(g.kernels), g.firstSlot)
	}
	for i := 1; i < len(g.firstSlot); i++ {
		if g.firstSlot[i] < g.firstSlot[i-1] || g.firstSlot[i] > len(g.slots) { // a kernel may write nothing (barriers, printf)
			t.Fatalf("kernel %d starts at slot %d after %d (of %d slots)", i, g.firstSlot[i], g.firstSlot[i-1], len(g.slots))
		}
	}
	// One kernel per row: remquo's and rootn's calls apart.
	var two []builtin
	for _, b := range builtins() {
		if b.name == "remquo" || b.name == "rootn" {
			two = append(two, b)
		}
	}
	if g2, err := genBuiltinsPer(two, 1); err != nil || len(g2.kernels) != 2 || strings.Contains(g2.kernelCalls(0), "rootn") ||
		!strings.Contains(g2.kernelCalls(1), "rootn(double16)") {
		t.Errorf("remquo and rootn a kernel each: %v; %d kernels", err, len(g2.kernels))
	}
	first := g.kernelCalls(0)
	if !strings.Contains(first, "\n  "+g.slots[0].note+"\n") || strings.Contains(first, g.slots[g.firstSlot[1]].note) {
		t.Errorf("kernel 0's calls:\n%s", first)
	}
	k := len(g.kernels) - 1 // the last kernel that writes a slot
	for g.firstSlot[k] == len(g.slots) {
		k--
	}
	if last := g.kernelCalls(k); !strings.HasSuffix(last, "\n  "+g.slots[len(g.slots)-1].note) {
		t.Errorf("kernel %d's calls end:\n%s", k, last[max(0, len(last)-200):])
	}
}
