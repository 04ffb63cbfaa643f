package kernels

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine"
)

// FuseTypes gives the type of every input and output of a fused expression by name: a
// buffer's element type ("float32", "float64", "int32", "uint32") or a scalar's,
// prefixed "scalar:" ("scalar:float32"). Locals need no entry.
type FuseTypes map[string]string

// FuseParam is one argument of a fused kernel.
type FuseParam struct {
	// Name is the name in the expression.
	Name string
	// Type is the element type ("float32").
	Type string
	// Scalar marks a scalar argument; else a buffer.
	Scalar bool
	// Output marks a buffer the kernel writes (it may also read it); Input one whose
	// value the expression reads before assigning it (a scalar is always an input).
	Output, Input bool
}

// ftype is the type of an expression node.
type ftype int

const (
	fUntypedInt ftype = iota
	fUntypedFloat
	fBool
	fF32
	fF64
	fI32
	fU32
)

var ftypeNames = map[string]ftype{"float32": fF32, "float64": fF64, "int32": fI32, "uint32": fU32}

func (t ftype) String() string {
	switch t {
	case fUntypedInt:
		return "integer literal"
	case fUntypedFloat:
		return "float literal"
	case fBool:
		return "comparison"
	case fF32:
		return "float32"
	case fF64:
		return "float64"
	case fI32:
		return "int32"
	}
	return "uint32"
}

func (t ftype) float() bool   { return t == fF32 || t == fF64 || t == fUntypedFloat }
func (t ftype) untyped() bool { return t == fUntypedInt || t == fUntypedFloat }

// cName is the type's OpenCL C spelling.
func (t ftype) cName() string {
	return map[ftype]string{fF32: "float", fF64: "double", fI32: "int", fU32: "uint", fBool: "int"}[t]
}

// unit is the unit roundoff of a float type (0 for integers).
func (t ftype) unit() float64 {
	switch t {
	case fF32:
		return 0x1p-24
	case fF64:
		return 0x1p-53
	}
	return 0
}

// Node kinds.
const (
	nLit = iota
	nVar
	nUnary
	nBinary
	nCmp
	nSelect
	nCall
	nConv
)

// fnode is a node of the expression tree.
type fnode struct {
	kind int
	op   string  // operator or function name
	name string  // nVar: the name
	val  float64 // nLit: the value
	text string  // nLit: as written
	args []*fnode
	col  int
	typ  ftype
	// slot is, for nVar, the index of the value it reads in the evaluator's environment.
	slot int
}

// fstmt is one assignment.
type fstmt struct {
	name string
	col  int
	expr *fnode
	// slot is the environment slot the value is stored in.
	slot int
	typ  ftype
}

// funcs are the calls of the language: arity, whether the arguments must be floats, and
// the error of the device's result in units of the result's roundoff u (OpenCL 1.2
// section 7.4's ulp bounds for float, doubled: 1 ulp is at most 2u relative).
var funcs = map[string]struct {
	arity int
	float bool
	cost  float64
}{
	"exp": {1, true, 6}, "exp2": {1, true, 6}, "log": {1, true, 6}, "log2": {1, true, 6}, "log10": {1, true, 6},
	"sqrt": {1, true, 6}, "rsqrt": {1, true, 4}, "sin": {1, true, 8}, "cos": {1, true, 8}, "tan": {1, true, 10},
	"tanh": {1, true, 10}, "pow": {2, true, 32}, "fabs": {1, true, 0}, "floor": {1, true, 0}, "ceil": {1, true, 0},
	"fma": {3, true, 1}, "abs": {1, false, 0}, "min": {2, false, 0}, "max": {2, false, 0}, "clamp": {3, false, 0},
	"float32": {1, false, 0}, "float64": {1, false, 0}, "int32": {1, false, 0}, "uint32": {1, false, 0},
}

// reserved are names an input or output may not take: C and OpenCL C keywords and types,
// and the functions of the language.
var reserved = strings.Fields(`auto bool break case char const constant continue default do double else enum extern
float for global goto half if inline int kernel local long private register restrict return short signed sizeof
static struct switch typedef uint uchar ushort ulong union unsigned void volatile while true false
get_global_id select mad`)

// fuseErr returns the error of a problem at column col of src.
func fuseErr(src string, col int, format string, args ...any) error {
	return fmt.Errorf("kernels: fuse %q: column %d: %s: %w", src, col, fmt.Sprintf(format, args...), engine.ErrInvalidArg)
}

// ftoken is a token: kind 'i' identifier, 'n' number, 'e' end, else the operator text.
type ftoken struct {
	kind byte
	text string
	col  int
}

func lexFuse(src string) ([]ftoken, error) {
	var toks []ftoken
	i := 0
	for i < len(src) {
		c := src[i]
		col := i + 1
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, ftoken{'i', src[i:j], col})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && src[k] >= '0' && src[k] <= '9' {
					for k < len(src) && src[k] >= '0' && src[k] <= '9' {
						k++
					}
					j = k
				}
			}
			if j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z') {
				return nil, fuseErr(src, j+1, "unexpected %q after the number %s", src[j], src[i:j])
			}
			toks = append(toks, ftoken{'n', src[i:j], col})
			i = j
		default:
			two := ""
			if i+1 < len(src) {
				two = src[i : i+2]
			}
			switch two {
			case "<=", ">=", "==", "!=":
				toks = append(toks, ftoken{'o', two, col})
				i += 2
				continue
			}
			if !strings.ContainsRune("+-*/%()<>?:=;,", rune(c)) {
				return nil, fuseErr(src, col, "unexpected character %q", c)
			}
			toks = append(toks, ftoken{'o', string(c), col})
			i++
		}
	}
	return append(toks, ftoken{'e', "", len(src) + 1}), nil
}

// fparser is the recursive-descent parser of the language.
type fparser struct {
	src  string
	toks []ftoken
	pos  int
}

func (p *fparser) peek() ftoken { return p.toks[p.pos] }
func (p *fparser) next() ftoken { t := p.toks[p.pos]; p.pos++; return t }
func (p *fparser) is(op string) bool {
	t := p.peek()
	return t.kind == 'o' && t.text == op
}

func (p *fparser) errAt(t ftoken, format string, args ...any) error {
	return fuseErr(p.src, t.col, format, args...)
}

func describe(t ftoken) string {
	if t.kind == 'e' {
		return "the end of the expression"
	}
	return strconv.Quote(t.text)
}

func (p *fparser) program() ([]*fstmt, error) {
	var stmts []*fstmt
	for {
		if p.peek().kind == 'e' && len(stmts) > 0 {
			return stmts, nil
		}
		t := p.next()
		if t.kind != 'i' {
			return nil, p.errAt(t, "want an assignment `name = expression`, found %s", describe(t))
		}
		if !p.is("=") {
			return nil, p.errAt(p.peek(), "want = after %s, found %s", t.text, describe(p.peek()))
		}
		p.next()
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, &fstmt{name: t.text, col: t.col, expr: e})
		switch u := p.peek(); {
		case u.kind == 'e':
			return stmts, nil
		case p.is(";"):
			p.next()
		default:
			return nil, p.errAt(u, "want ; or the end after an assignment, found %s", describe(u))
		}
	}
}

func (p *fparser) expr() (*fnode, error) {
	c, err := p.cmp()
	if err != nil || !p.is("?") {
		return c, err
	}
	q := p.next()
	a, err := p.expr()
	if err != nil {
		return nil, err
	}
	if !p.is(":") {
		return nil, p.errAt(p.peek(), "want : of the ?: at column %d, found %s", q.col, describe(p.peek()))
	}
	p.next()
	b, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &fnode{kind: nSelect, op: "?:", args: []*fnode{c, a, b}, col: q.col}, nil
}

func (p *fparser) cmp() (*fnode, error) {
	a, err := p.add()
	if err != nil {
		return nil, err
	}
	for _, op := range []string{"<", "<=", ">", ">=", "==", "!="} {
		if p.is(op) {
			t := p.next()
			b, err := p.add()
			if err != nil {
				return nil, err
			}
			for _, op2 := range []string{"<", "<=", ">", ">=", "==", "!="} {
				if p.is(op2) {
					return nil, p.errAt(p.peek(), "comparisons do not chain; use ?: or parentheses")
				}
			}
			return &fnode{kind: nCmp, op: op, args: []*fnode{a, b}, col: t.col}, nil
		}
	}
	return a, nil
}

func (p *fparser) add() (*fnode, error) {
	a, err := p.mul()
	for err == nil && (p.is("+") || p.is("-")) {
		t := p.next()
		var b *fnode
		if b, err = p.mul(); err == nil {
			a = &fnode{kind: nBinary, op: t.text, args: []*fnode{a, b}, col: t.col}
		}
	}
	return a, err
}

func (p *fparser) mul() (*fnode, error) {
	a, err := p.unary()
	for err == nil && (p.is("*") || p.is("/") || p.is("%")) {
		t := p.next()
		var b *fnode
		if b, err = p.unary(); err == nil {
			a = &fnode{kind: nBinary, op: t.text, args: []*fnode{a, b}, col: t.col}
		}
	}
	return a, err
}

func (p *fparser) unary() (*fnode, error) {
	if p.is("-") || p.is("+") {
		t := p.next()
		a, err := p.unary()
		if err != nil || t.text == "+" {
			return a, err
		}
		return &fnode{kind: nUnary, op: "-", args: []*fnode{a}, col: t.col}, nil
	}
	return p.primary()
}

func (p *fparser) primary() (*fnode, error) {
	t := p.next()
	switch {
	case t.kind == 'n':
		isFloat := strings.ContainsAny(t.text, ".eE")
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil || math.IsInf(v, 0) {
			return nil, p.errAt(t, "bad number %s", t.text)
		}
		n := &fnode{kind: nLit, val: v, text: t.text, col: t.col, typ: fUntypedInt}
		if isFloat {
			n.typ = fUntypedFloat
		} else if v > math.MaxUint32 {
			return nil, p.errAt(t, "integer %s above 4294967295", t.text)
		}
		return n, nil
	case t.kind == 'i' && p.is("("):
		f, ok := funcs[t.text]
		if !ok {
			return nil, p.errAt(t, "unknown function %s", t.text)
		}
		p.next()
		var args []*fnode
		for !p.is(")") {
			if len(args) > 0 {
				if !p.is(",") {
					return nil, p.errAt(p.peek(), "want , or ) in the call of %s, found %s", t.text, describe(p.peek()))
				}
				p.next()
			}
			a, err := p.expr()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
		}
		p.next()
		if len(args) != f.arity {
			return nil, p.errAt(t, "%s takes %d arguments, has %d", t.text, f.arity, len(args))
		}
		return &fnode{kind: nCall, op: t.text, args: args, col: t.col}, nil
	case t.kind == 'i':
		return &fnode{kind: nVar, name: t.text, col: t.col}, nil
	case t.kind == 'o' && t.text == "(":
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.is(")") {
			return nil, p.errAt(p.peek(), "want ) to close the ( at column %d, found %s", t.col, describe(p.peek()))
		}
		p.next()
		return e, nil
	}
	return nil, p.errAt(t, "want an operand, found %s", describe(t))
}

// FuseExpr is a checked fused expression: its kernel's source, arguments and reference.
// It needs no device (ParseFuse); Fuse compiles it. It is immutable and safe for concurrent
// use.
type FuseExpr struct {
	src    string
	stmts  []*fstmt
	params []FuseParam
	// pidx maps a parameter's name to its index in params.
	pidx map[string]int
	// inputs are the indices in params of the arguments the expression reads, in the order
	// Ref takes their values.
	inputs []int
	// inSlot[k] is the evaluator's slot of inputs[k].
	inSlot []int
	// outs are the indices in params of the outputs; outSlot their values' slots.
	outs, outSlot []int
	slots         int
	norm          string
	kernel        string
	code          string
	flops         int
	fp64          bool
}

// ParseFuse parses and checks expr with the types of its inputs and outputs, and generates
// its kernel; it needs no device (Fuse compiles the result). Fusing element-wise
// operations reads each input once and writes each output once, where separate kernels
// write and read every intermediate array.
//
// The language:
//
//   - A program is one or more assignments `name = expr`, separated by `;` (a trailing `;`
//     is allowed). A name given a buffer type in FuseTypes is an output buffer; any other
//     assigned name is a local value, usable by the assignments after it. A name read
//     before it is assigned is an input (a buffer or a scalar, as FuseTypes says); once
//     assigned, it stands for the value assigned. Every work-item loads its inputs before
//     it stores its outputs, so an output may be an input (`x = 2*x`).
//   - Expressions: identifiers, numeric literals (`2`, `0.5`, `1e-3`), `+ - * / %`, unary
//     `-` and `+`, comparisons `< <= > >= == !=` (only as the condition of `?:`),
//     `c ? a : b`, parentheses, and the calls exp, exp2, log, log2, log10, sqrt, rsqrt, sin,
//     cos, tan, tanh, pow, fabs, abs, floor, ceil, min, max, clamp, fma, and the
//     conversions float32, float64, int32, uint32.
//   - Types: float32, float64, int32, uint32. `%` on floats is fmod; on integers C's
//     remainder. Integer arithmetic wraps; integer division truncates toward zero (the
//     device's result of a division by zero is undefined). The math functions but abs,
//     min, max and clamp take floats.
//   - Promotion: an integer operand meeting a float converts to the float's type; float32
//     meeting float64 converts to float64; int32 meeting uint32 is an error (convert one).
//     A literal takes the type of the operand it meets (a float literal meeting an integer
//     makes both float32), and a subexpression of literals alone the type of its context:
//     `1/2*x` is `0.5*x` for a float x. An assignment converts an integer value to a
//     float output; a float value assigned to an integer output, or an int32 to a uint32 and the
//     reverse, is an error. A local
//     takes its value's type (float32 or int32 for literals alone). Math functions of
//     integers compute in float32, of literals alone in the type of their context.
//
// Errors wrap engine.ErrInvalidArg and name the 1-based column of the problem. Both sides
// of ?: are computed (an integer division by zero in either is undefined on the device),
// and a NaN result never passes verification against Ref.
func ParseFuse(expr string, types FuseTypes) (*FuseExpr, error) {
	toks, err := lexFuse(expr)
	if err != nil {
		return nil, err
	}
	p := &fparser{src: expr, toks: toks}
	stmts, err := p.program()
	if err != nil {
		return nil, err
	}
	e := &FuseExpr{src: expr, stmts: stmts, pidx: map[string]int{}}
	if err := e.check(types); err != nil {
		return nil, err
	}
	e.generate()
	return e, nil
}

// checker holds the names while type checking.
type checker struct {
	e      *FuseExpr
	types  map[string]ftype
	scalar map[string]bool
	// local maps an assigned name to its slot and type.
	local map[string]*fstmt
	// input maps an input's name to its slot.
	input map[string]int
}

func (e *FuseExpr) check(types FuseTypes) error {
	c := &checker{e: e, types: map[string]ftype{}, scalar: map[string]bool{}, local: map[string]*fstmt{}, input: map[string]int{}}
	names := make([]string, 0, len(types))
	for name := range types {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		spec := types[name]
		s, isScalar := strings.CutPrefix(spec, "scalar:")
		t, ok := ftypeNames[s]
		if !ok {
			return fmt.Errorf("kernels: fuse %q: %s has type %q; want float32, float64, int32 or uint32, prefixed scalar: for a scalar: %w", e.src, name, spec, engine.ErrInvalidArg)
		}
		c.types[name], c.scalar[name] = t, isScalar
	}
	for _, st := range e.stmts {
		if err := c.name(st.name, st.col); err != nil {
			return err
		}
		if err := c.node(st.expr); err != nil {
			return err
		}
		if st.expr.typ == fBool {
			return fuseErr(e.src, st.expr.col, "a comparison is not a value; use c ? 1 : 0")
		}
		t, declared := c.types[st.name]
		if declared && c.scalar[st.name] {
			return fuseErr(e.src, st.col, "%s is a scalar; only buffers and locals are assigned", st.name)
		}
		if !declared {
			t = st.expr.typ
			if prev := c.local[st.name]; prev != nil {
				t = prev.typ
			}
			switch t {
			case fUntypedInt:
				t = fI32
			case fUntypedFloat:
				t = fF32
			}
		}
		x, err := c.convert(st.expr, t, "assigned to "+st.name)
		if err != nil {
			return err
		}
		st.expr, st.typ, st.slot = x, t, e.slots
		e.slots++
		c.local[st.name] = st
		if declared {
			i, ok := e.pidx[st.name]
			if !ok {
				i = e.addParam(st.name, t, false)
			}
			if !e.params[i].Output {
				e.params[i].Output = true
				e.outs = append(e.outs, i)
				e.outSlot = append(e.outSlot, 0)
			}
			e.outSlot[slices.Index(e.outs, i)] = st.slot
		}
	}
	if len(e.outs) == 0 {
		return fmt.Errorf("kernels: fuse %q: no assignment is to a buffer of FuseTypes, so the kernel would write nothing: %w", e.src, engine.ErrInvalidArg)
	}
	for _, name := range names {
		if _, ok := e.pidx[name]; !ok {
			return fmt.Errorf("kernels: fuse %q: %s has a type but the expression does not use it: %w", e.src, name, engine.ErrInvalidArg)
		}
	}
	// The kernel's argument order: outputs, then the buffers read, then the scalars.
	order := func(p FuseParam) int {
		switch {
		case p.Output:
			return 0
		case !p.Scalar:
			return 1
		}
		return 2
	}
	idx := make([]int, len(e.params))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return order(e.params[idx[a]]) < order(e.params[idx[b]]) })
	params := make([]FuseParam, len(idx))
	remap := make([]int, len(idx))
	for to, from := range idx {
		params[to], remap[from] = e.params[from], to
	}
	e.params = params
	for name, i := range e.pidx {
		e.pidx[name] = remap[i]
	}
	for k := range e.outs {
		e.outs[k] = remap[e.outs[k]]
	}
	for k := range e.inputs {
		e.inputs[k] = remap[e.inputs[k]]
	}
	for _, p := range e.params {
		e.fp64 = e.fp64 || p.Type == "float64"
	}
	for _, st := range e.stmts {
		e.fp64 = e.fp64 || st.expr.uses(fF64)
	}
	return nil
}

func (e *FuseExpr) addParam(name string, t ftype, scalar bool) int {
	e.params = append(e.params, FuseParam{Name: name, Type: t.String(), Scalar: scalar})
	e.pidx[name] = len(e.params) - 1
	return len(e.params) - 1
}

// FuseNameError is the error of a fused expression that reads a name which is neither an
// input, given a type in FuseTypes, nor assigned earlier in the expression (a typo, or an
// input whose type was not given). It wraps engine.ErrInvalidArg.
type FuseNameError struct {
	Expr string
	Name string
	Col  int // 1-based column of the name in Expr
	// Inputs are the names given a type in FuseTypes, and Assigned the names assigned
	// before the column, each sorted: the names the expression could read there.
	Inputs, Assigned []string
}

func (e *FuseNameError) Error() string {
	return fmt.Sprintf("kernels: fuse %q: column %d: %s is neither given a type in FuseTypes nor assigned earlier in the expression (%s): %v",
		e.Expr, e.Col, e.Name, e.Known(), engine.ErrInvalidArg)
}

// Unwrap returns engine.ErrInvalidArg.
func (e *FuseNameError) Unwrap() error { return engine.ErrInvalidArg }

// Known says which names the expression could read, or that it could read none.
func (e *FuseNameError) Known() string {
	var parts []string
	if len(e.Inputs) > 0 {
		parts = append(parts, "given a type: "+strings.Join(e.Inputs, ", "))
	}
	if len(e.Assigned) > 0 {
		parts = append(parts, "assigned before: "+strings.Join(e.Assigned, ", "))
	}
	if len(parts) == 0 {
		return "no name is known there"
	}
	return strings.Join(parts, "; ")
}

// names returns the names given a type, sorted.
func (c *checker) names() []string {
	out := make([]string, 0, len(c.types))
	for name := range c.types {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// assigned returns the names assigned so far that have no type of their own (locals),
// sorted.
func (c *checker) assigned() []string {
	var out []string
	for name := range c.local {
		if _, typed := c.types[name]; !typed {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// name checks that a name may be used.
func (c *checker) name(name string, col int) error {
	if strings.HasPrefix(name, "_") || strings.HasPrefix(strings.ToLower(name), "prism") || slices.Contains(reserved, name) || funcs[name].arity > 0 {
		return fuseErr(c.e.src, col, "%s is reserved (C keywords and types, the functions, names starting with _ or prism)", name)
	}
	return nil
}

// node types n and its subtree, inserting conversions.
func (c *checker) node(n *fnode) error {
	src := c.e.src
	switch n.kind {
	case nLit:
		return nil
	case nVar:
		if err := c.name(n.name, n.col); err != nil {
			return err
		}
		if st := c.local[n.name]; st != nil {
			n.typ, n.slot = st.typ, st.slot
			return nil
		}
		t, ok := c.types[n.name]
		if !ok {
			return &FuseNameError{Expr: src, Name: n.name, Col: n.col, Inputs: c.names(), Assigned: c.assigned()}
		}
		slot, seen := c.input[n.name]
		if !seen {
			slot = c.e.slots
			c.e.slots++
			c.input[n.name] = slot
			i := c.e.addParam(n.name, t, c.scalar[n.name])
			c.e.params[i].Input = true
			c.e.inputs = append(c.e.inputs, i)
			c.e.inSlot = append(c.e.inSlot, slot)
		}
		n.typ, n.slot = t, slot
		return nil
	}
	for _, a := range n.args {
		if err := c.node(a); err != nil {
			return err
		}
	}
	for k, a := range n.args {
		if a.typ == fBool && !(n.kind == nSelect && k == 0) {
			return fuseErr(src, a.col, "a comparison is not a value; use c ? 1 : 0")
		}
	}
	switch n.kind {
	case nUnary:
		n.typ = n.args[0].typ
	case nBinary, nCmp:
		t, err := c.unify(n, n.args...)
		if err != nil {
			return err
		}
		n.typ = t
		if n.kind == nCmp {
			n.typ = fBool
			if t.untyped() {
				if err := c.settle(n.args[0], map[bool]ftype{true: fF32, false: fI32}[t.float()]); err != nil {
					return err
				}
				if err := c.settle(n.args[1], n.args[0].typ); err != nil {
					return err
				}
			}
		}
	case nSelect:
		if n.args[0].typ != fBool {
			return fuseErr(src, n.args[0].col, "the condition of ?: must be a comparison")
		}
		t, err := c.unify(n, n.args[1], n.args[2])
		if err != nil {
			return err
		}
		n.typ = t
	case nCall:
		f := funcs[n.op]
		switch n.op {
		case "float32", "float64", "int32", "uint32":
			t, a := ftypeNames[n.op], n.args[0]
			switch {
			case a.typ == fUntypedFloat && !t.float():
				if err := c.settle(a, fF64); err != nil {
					return err
				}
				*n = fnode{kind: nConv, args: []*fnode{a}, col: n.col, typ: t}
			case a.typ.untyped():
				if err := c.settle(a, t); err != nil {
					return err
				}
				*n = *a
			case a.typ == t:
				*n = *a
			default:
				*n = fnode{kind: nConv, args: []*fnode{a}, col: n.col, typ: t}
			}
			return nil
		}
		t, err := c.unify(n, n.args...)
		if err != nil {
			return err
		}
		switch {
		case f.float && t == fUntypedInt:
			t = fUntypedFloat // the literals settle to a float type later
		case f.float && !t.float():
			t = fF32
			for k, a := range n.args {
				if n.args[k], err = c.convert(a, fF32, "an argument of "+n.op); err != nil {
					return err
				}
			}
		}
		n.typ = t
	}
	return nil
}

// uses reports whether n or a node under it has type t.
func (n *fnode) uses(t ftype) bool {
	if n.typ == t {
		return true
	}
	for _, a := range n.args {
		if a.uses(t) {
			return true
		}
	}
	return false
}

// unify converts the operands of n to one type, by the promotion rules, and returns it.
func (c *checker) unify(n *fnode, ops ...*fnode) (ftype, error) {
	t := ops[0].typ
	for _, o := range ops[1:] {
		u := o.typ
		switch {
		case t == u:
		case t.untyped() && u.untyped():
			t = fUntypedFloat
		case t.untyped() || u.untyped():
			typed, lit := t, u
			if t.untyped() {
				typed, lit = u, t
			}
			t = typed
			if lit == fUntypedFloat && !typed.float() {
				t = fF32
			}
		case t.float() && u.float():
			t = fF64
		case t.float() || u.float():
			if u.float() {
				t = u
			}
		default:
			return 0, fuseErr(c.e.src, n.col, "%s mixes %s and %s; convert one with int32() or uint32()", opName(n), t, u)
		}
	}
	if t.untyped() {
		return t, nil
	}
	for k, o := range ops {
		x, err := c.convert(o, t, "an operand of "+opName(n))
		if err != nil {
			return 0, err
		}
		for j := range n.args {
			if n.args[j] == ops[k] {
				n.args[j] = x
			}
		}
	}
	return t, nil
}

func opName(n *fnode) string {
	if n.kind == nCall {
		return n.op
	}
	return strconv.Quote(n.op)
}

// convert returns n as type t: n itself when it has that type, n with its literals
// settled when untyped, or a conversion from an integer to a float or between floats;
// other conversions are the conversion functions'.
func (c *checker) convert(n *fnode, t ftype, what string) (*fnode, error) {
	switch {
	case n.typ == t:
		return n, nil
	case n.typ.untyped():
		return n, c.settle(n, t)
	case n.typ.float() && !t.float(), !n.typ.float() && !t.float() && n.typ != fBool:
		return nil, fuseErr(c.e.src, n.col, "a %s value %s as %s; convert it with %s()", n.typ, what, t, t)
	}
	return &fnode{kind: nConv, args: []*fnode{n}, col: n.col, typ: t}, nil
}

// settle gives the untyped subtree n the type t.
func (c *checker) settle(n *fnode, t ftype) error {
	if !n.typ.untyped() {
		return nil
	}
	if n.typ == fUntypedFloat && !t.float() {
		return fuseErr(c.e.src, n.col, "a float literal where %s is wanted", t)
	}
	if n.kind == nLit {
		switch t {
		case fI32:
			if n.val > math.MaxInt32 {
				return fuseErr(c.e.src, n.col, "%s does not fit int32", n.text)
			}
		case fF32:
			if math.IsInf(float64(float32(n.val)), 0) {
				return fuseErr(c.e.src, n.col, "%s does not fit float32", n.text)
			}
		}
	}
	n.typ = t
	for _, a := range n.args {
		if a.typ == fBool {
			continue
		}
		if err := c.settle(a, t); err != nil {
			return err
		}
	}
	return nil
}

// generate writes the kernel: one statement per operation, each value computed once.
func (e *FuseExpr) generate() {
	var norm strings.Builder
	for k, st := range e.stmts {
		if k > 0 {
			norm.WriteString("; ")
		}
		fmt.Fprintf(&norm, "%s = %s", st.name, st.expr.normal())
	}
	for _, p := range e.params {
		kind := "buffer"
		if p.Scalar {
			kind = "scalar"
		}
		fmt.Fprintf(&norm, "; %s %s %s", p.Name, kind, p.Type)
	}
	e.norm = norm.String()
	sum := sha256.Sum256([]byte(e.norm))
	e.kernel = "fused_" + hex.EncodeToString(sum[:4])

	g := &fgen{e: e, seen: map[string]string{}, val: map[int]string{}}
	for _, st := range e.stmts {
		g.val[st.slot] = g.emit(st.expr)
	}
	var b strings.Builder
	if e.fp64 {
		b.WriteString("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\n")
	}
	fmt.Fprintf(&b, "// %s\n__kernel void %s(", oneLine(e.src), e.kernel)
	for _, p := range e.params {
		t := ftypeNames[p.Type].cName()
		switch {
		case p.Scalar:
			fmt.Fprintf(&b, "const %s %s, ", t, p.Name)
		case p.Output:
			fmt.Fprintf(&b, "__global %s *%s, ", t, p.Name)
		default:
			fmt.Fprintf(&b, "__global const %s *%s, ", t, p.Name)
		}
	}
	b.WriteString("const int _n) {\n    const int _i = (int)get_global_id(0);\n    if (_i < _n) {\n")
	for _, line := range g.lines {
		b.WriteString("        " + line + "\n")
	}
	for k, i := range e.outs {
		fmt.Fprintf(&b, "        %s[_i] = %s;\n", e.params[i].Name, g.val[e.outSlot[k]])
	}
	b.WriteString("    }\n}\n")
	e.code = b.String()
	e.flops = g.flops
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// normal is the node fully parenthesized, with its types: the cache's key.
func (n *fnode) normal() string {
	var args []string
	for _, a := range n.args {
		args = append(args, a.normal())
	}
	switch n.kind {
	case nLit:
		return strconv.FormatFloat(n.val, 'g', -1, 64) + ":" + n.typ.String()
	case nVar:
		return n.name
	case nUnary:
		return "(-" + args[0] + ")"
	case nBinary, nCmp:
		return "(" + args[0] + n.op + args[1] + ")"
	case nSelect:
		return "(" + args[0] + "?" + args[1] + ":" + args[2] + ")"
	case nConv:
		return n.typ.String() + "(" + args[0] + ")"
	}
	return n.op + "(" + strings.Join(args, ",") + ")"
}

// fgen generates the body of the kernel.
type fgen struct {
	e     *FuseExpr
	lines []string
	seen  map[string]string // right-hand side -> the temporary holding it
	val   map[int]string    // slot -> the C expression of its value
	flops int
}

// emit returns the C expression of n's value: a literal, a scalar, or a temporary.
func (g *fgen) emit(n *fnode) string {
	var args []string
	for _, a := range n.args {
		args = append(args, g.emit(a))
	}
	var rhs string
	switch n.kind {
	case nLit:
		return cLiteral(n.val, n.typ)
	case nVar:
		if v, ok := g.val[n.slot]; ok {
			return v
		}
		p := g.e.params[g.e.pidx[n.name]]
		if p.Scalar {
			g.val[n.slot] = p.Name
			return p.Name
		}
		rhs = p.Name + "[_i]"
	case nUnary:
		rhs = "-" + args[0]
	case nBinary:
		if n.op == "%" && n.typ.float() {
			rhs = "fmod(" + args[0] + ", " + args[1] + ")"
		} else {
			rhs = args[0] + " " + n.op + " " + args[1]
		}
	case nCmp:
		rhs = args[0] + " " + n.op + " " + args[1]
	case nSelect:
		rhs = args[0] + " ? " + args[1] + " : " + args[2]
	case nConv:
		rhs = "(" + n.typ.cName() + ")" + args[0]
	case nCall:
		name := n.op
		if name == "abs" {
			if n.typ.float() {
				name = "fabs"
			} else if n.typ == fI32 {
				rhs = "(int)abs(" + args[0] + ")" // OpenCL's abs of an int is a uint
			} else {
				return args[0]
			}
		}
		if rhs == "" {
			rhs = name + "(" + strings.Join(args, ", ") + ")"
		}
	}
	if n.kind != nVar && n.kind != nConv {
		g.flops++
	}
	key := n.typ.cName() + " " + rhs
	if t, ok := g.seen[key]; ok {
		if n.kind != nVar && n.kind != nConv {
			g.flops--
		}
		return t
	}
	t := fmt.Sprintf("_t%d", len(g.seen))
	g.seen[key] = t
	g.lines = append(g.lines, fmt.Sprintf("const %s %s = %s;", n.typ.cName(), t, rhs))
	if n.kind == nVar {
		g.val[n.slot] = t
	}
	return t
}

// cLiteral spells v as an OpenCL C literal of type t.
func cLiteral(v float64, t ftype) string {
	switch t {
	case fI32:
		return strconv.FormatInt(int64(v), 10)
	case fU32:
		return strconv.FormatUint(uint64(v), 10) + "u"
	}
	bits := 64
	if t == fF32 {
		bits = 32
		v = float64(float32(v))
	}
	s := strconv.FormatFloat(v, 'g', -1, bits)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	if t == fF32 {
		s += "f"
	}
	return s
}

// Source returns the OpenCL C source of the kernel.
func (e *FuseExpr) Source() string { return e.code }

// Kernel returns the name of the kernel in Source.
func (e *FuseExpr) Kernel() string { return e.kernel }

// Normal returns the expression fully parenthesized with the types of its literals and
// arguments: equal for expressions that compile to the same kernel.
func (e *FuseExpr) Normal() string { return e.norm }

// Params returns the kernel's arguments in order (outputs, the buffers read, scalars),
// which Launch takes; the kernel's last argument, the element count, follows them.
func (e *FuseExpr) Params() []FuseParam { return slices.Clone(e.params) }

// Inputs returns the arguments the expression reads (buffers and scalars), in the order
// Ref takes their values.
func (e *FuseExpr) Inputs() []FuseParam {
	out := make([]FuseParam, len(e.inputs))
	for k, i := range e.inputs {
		out[k] = e.params[i]
	}
	return out
}

// Outputs returns the output buffers, in the order Ref gives their values.
func (e *FuseExpr) Outputs() []FuseParam {
	out := make([]FuseParam, len(e.outs))
	for k, i := range e.outs {
		out[k] = e.params[i]
	}
	return out
}

// FP64 reports whether the kernel computes in float64 (and needs the device's fp64).
func (e *FuseExpr) FP64() bool { return e.fp64 }

// Flops returns the operations per element: each arithmetic operation, comparison,
// selection and call (a transcendental counted as one), each distinct one once.
func (e *FuseExpr) Flops() int { return e.flops }

// Model returns the work of one run over n elements: Flops per element, and each input
// buffer read and each output written once.
func (e *FuseExpr) Model(n int) Model {
	bytes := 0
	for _, p := range e.params {
		if p.Scalar {
			continue
		}
		size := 4
		if p.Type == "float64" {
			size = 8
		}
		if p.Input {
			bytes += size
		}
		if p.Output {
			bytes += size
		}
	}
	return Model{Flops: float64(e.flops) * float64(n), Bytes: float64(bytes) * float64(n)}
}

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
func (e *FuseExpr) Ref(in, out, tol []float64) {
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
		ty, _ := TypeByName(e.params[i].Type)
		tol[k] = 2*(r.e+t.unit()*math.Abs(r.v)) + float64(e.flops+1)*ty.MinNormal
	}
}

// fval is a value of the reference and the bound of the device's error in it; amb marks
// a comparison whose outcome the error may flip.
type fval struct {
	v, e float64
	amb  bool
}

func (n *fnode) eval(env []fval) fval {
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
func (e *FuseExpr) Eval(n int, args map[string]any) (vals, tols map[string][]float64, err error) {
	ins := e.Inputs()
	get := make([]func(i int) float64, len(ins))
	for k, p := range ins {
		a, ok := args[p.Name]
		if !ok {
			return nil, nil, fmt.Errorf("kernels: fuse %q: Eval: no value for %s: %w", e.src, p.Name, engine.ErrInvalidArg)
		}
		if p.Scalar {
			v, ok := toFloat(a)
			if !ok {
				return nil, nil, fmt.Errorf("kernels: fuse %q: Eval: scalar %s is %T, not a number: %w", e.src, p.Name, a, engine.ErrInvalidArg)
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
			return nil, nil, fmt.Errorf("kernels: fuse %q: Eval: buffer %s is %T, not a slice: %w", e.src, p.Name, a, engine.ErrInvalidArg)
		}
		if l < n {
			return nil, nil, fmt.Errorf("kernels: fuse %q: Eval: %s has %d elements, need %d: %w", e.src, p.Name, l, n, engine.ErrInvalidArg)
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

// Fused is a fused expression compiled for one device (Fuse). It is safe for concurrent use
// by goroutines that each use their own Queue.
type Fused struct {
	*FuseExpr
	dev  *engine.Device
	prog *engine.Program
	k    *engine.Kernel
	wg   int
}

// fuseCache holds the compiled fused kernels of one device.
type fuseCache struct {
	mu     sync.Mutex
	byKey  map[string]*Fused
	builds int
}

var (
	fuseMu     sync.Mutex
	fuseCaches = map[*engine.Device]*fuseCache{}
)

// Fuse compiles expr (the language of ParseFuse) into one kernel for dev. Kernels are
// cached per device by the normalized expression and its types (FuseExpr.Normal) and the
// device's work-group limit: a second Fuse of the same expression, however spaced, builds
// nothing (FuseBuilds counts the builds). The kernels close with the device; the cache of
// a closed device is dropped when Fuse next meets a device it has no cache for.
// Errors wrap engine.ErrInvalidArg for a bad expression (with its column), and
// engine.ErrUnsupported for float64 on a device without fp64.
func Fuse(dev *engine.Device, expr string, types FuseTypes) (*Fused, error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: fuse: nil device: %w", engine.ErrInvalidArg)
	}
	e, err := ParseFuse(expr, types)
	if err != nil {
		return nil, err
	}
	if e.fp64 && !dev.Info().FP64 {
		return nil, fmt.Errorf("kernels: fuse %q: float64 on %s, which has no fp64: %w", expr, dev.ID(), engine.ErrUnsupported)
	}
	c := cacheOf(dev)
	c.mu.Lock()
	defer c.mu.Unlock()
	// The work-group size follows the device's limits, which PRISM_MAX_WORK_GROUP lowers.
	key := fmt.Sprintf("%s; limit %d", e.norm, DeviceLimits(dev).WorkGroup)
	if f, ok := c.byKey[key]; ok {
		return &Fused{FuseExpr: e, dev: dev, prog: f.prog, k: f.k, wg: f.wg}, nil
	}
	b, err := Fit(dev, "fused", func(lim Limits) (*fusedBuild, Shape, error) {
		wg := lim.Group(256)
		prog, err := dev.Build(e.code)
		if err != nil {
			return nil, Shape{}, err
		}
		c.builds++
		k, err := prog.Kernel(e.kernel)
		if err != nil {
			return nil, Shape{}, errors.Join(err, prog.Close())
		}
		f := &Fused{FuseExpr: e, dev: dev, prog: prog, k: k, wg: wg}
		return &fusedBuild{f}, Shape{Items: wg, Kernels: []*engine.Kernel{k}}, nil
	})
	if err != nil {
		return nil, err
	}
	f := b.f
	c.byKey[key] = f
	return f, nil
}

// cacheOf returns dev's cache, dropping those of closed devices.
func cacheOf(dev *engine.Device) *fuseCache {
	fuseMu.Lock()
	defer fuseMu.Unlock()
	c := fuseCaches[dev]
	if c != nil {
		return c
	}
	// A closed device answers a build with ErrClosed before it looks at the source, and an
	// open one refuses the empty source without calling its driver.
	for d := range fuseCaches {
		if _, err := d.Build(""); errors.Is(err, engine.ErrClosed) {
			delete(fuseCaches, d)
		}
	}
	c = &fuseCache{byKey: map[string]*Fused{}}
	fuseCaches[dev] = c
	return c
}

// FuseBuilds returns how many programs Fuse has compiled for dev.
func FuseBuilds(dev *engine.Device) int {
	c := cacheOf(dev)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.builds
}

// fusedBuild is one build of a Fused, which Fit closes when the kernel refuses its
// work-group size. A Fused has no Close: its kernel is the device cache's, closed with
// the device.
type fusedBuild struct{ f *Fused }

func (b *fusedBuild) Close() error { return errors.Join(b.f.k.Close(), b.f.prog.Close()) }

// WorkGroup returns the work-group size of the launches.
func (f *Fused) WorkGroup() int { return f.wg }

// Run launches the kernel over the first n elements: args holds every argument of Params
// by name: a buffer as *engine.Buffer of its element type with at least n elements, a
// scalar as a Go number (converted to the scalar's type).
func (f *Fused) Run(q *engine.Queue, n int, args map[string]any) error {
	list := make([]any, len(f.params))
	for k, p := range f.params {
		a, ok := args[p.Name]
		if !ok {
			return fmt.Errorf("kernels: fuse %q: no argument %s: %w", f.src, p.Name, engine.ErrInvalidArg)
		}
		list[k] = a
	}
	if len(args) != len(f.params) {
		for name := range args {
			if _, ok := f.pidx[name]; !ok {
				return fmt.Errorf("kernels: fuse %q: argument %s is not in the expression: %w", f.src, name, engine.ErrInvalidArg)
			}
		}
	}
	return f.Launch(q, n, list...)
}

// Launch is Run with the arguments in the order of Params.
func (f *Fused) Launch(q *engine.Queue, n int, args ...any) error {
	if len(args) != len(f.params) {
		return fmt.Errorf("kernels: fuse %q: %d arguments, want %d: %w", f.src, len(args), len(f.params), engine.ErrInvalidArg)
	}
	if n < 1 || n > math.MaxInt32 {
		return fmt.Errorf("kernels: fuse %q: n = %d; must be in [1, %d]: %w", f.src, n, math.MaxInt32, engine.ErrInvalidArg)
	}
	list := make([]any, 0, len(args)+1)
	for k, p := range f.params {
		a, err := fuseArg(p, args[k], n)
		if err != nil {
			return fmt.Errorf("kernels: fuse %q: %w", f.src, err)
		}
		list = append(list, a)
	}
	list = append(list, int32(n))
	return q.Launch(f.k, engine.Range1D(engine.RoundUp(n, f.wg), f.wg), list...)
}

// fuseArg checks one argument and converts a scalar to its type.
func fuseArg(p FuseParam, a any, n int) (any, error) {
	if p.Scalar {
		v, ok := toFloat(a)
		if !ok {
			return nil, fmt.Errorf("scalar %s is %T, not a number: %w", p.Name, a, engine.ErrInvalidArg)
		}
		switch p.Type {
		case "float32":
			return float32(v), nil
		case "float64":
			return v, nil
		case "int32":
			return int32(v), nil
		}
		return uint32(v), nil
	}
	var l int
	ok := false
	switch b := a.(type) {
	case *engine.Buffer[float32]:
		ok = p.Type == "float32" && b != nil
		if ok {
			l = b.Len()
		}
	case *engine.Buffer[float64]:
		ok = p.Type == "float64" && b != nil
		if ok {
			l = b.Len()
		}
	case *engine.Buffer[int32]:
		ok = p.Type == "int32" && b != nil
		if ok {
			l = b.Len()
		}
	case *engine.Buffer[uint32]:
		ok = p.Type == "uint32" && b != nil
		if ok {
			l = b.Len()
		}
	}
	if !ok {
		return nil, fmt.Errorf("buffer %s is %T, want a non-nil *engine.Buffer[%s]: %w", p.Name, a, p.Type, engine.ErrInvalidArg)
	}
	if l < n {
		return nil, fmt.Errorf("buffer %s has %d elements, need %d: %w", p.Name, l, n, engine.ErrInvalidArg)
	}
	return a, nil
}
