package fuse

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/engine"
)

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

// reserved are names an input or output may not take: C and OpenCL C keywords and types,
// and the functions of the language.
var reserved = strings.Fields(`auto bool break case char const constant continue default do double else enum extern
float for global goto half if inline int kernel local long private register restrict return short signed sizeof
static struct switch typedef uint uchar ushort ulong union unsigned void volatile while true false
get_global_id select mad`)

// checker holds the names while type checking.
type checker struct {
	e      *Expr
	types  map[string]ftype
	scalar map[string]bool
	// local maps an assigned name to its slot and type.
	local map[string]*stmt
	// input maps an input's name to its slot.
	input map[string]int
}

func (e *Expr) check(types Types) error {
	c := &checker{e: e, types: map[string]ftype{}, scalar: map[string]bool{}, local: map[string]*stmt{}, input: map[string]int{}}
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
			return fmt.Errorf("fuse %q: %s has type %q; want float32, float64, int32 or uint32, prefixed scalar: for a scalar: %w", e.src, name, spec, engine.ErrInvalidArg)
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
			return errorAt(e.src, st.expr.col, "a comparison is not a value; use c ? 1 : 0")
		}
		t, declared := c.types[st.name]
		if declared && c.scalar[st.name] {
			return errorAt(e.src, st.col, "%s is a scalar; only buffers and locals are assigned", st.name)
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
		return fmt.Errorf("fuse %q: no assignment is to a buffer of fuse.Types, so the kernel would write nothing: %w", e.src, engine.ErrInvalidArg)
	}
	for _, name := range names {
		if _, ok := e.pidx[name]; !ok {
			return fmt.Errorf("fuse %q: %s has a type but the expression does not use it: %w", e.src, name, engine.ErrInvalidArg)
		}
	}
	// The kernel's argument order: outputs, then the buffers read, then the scalars.
	order := func(p Param) int {
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
	params := make([]Param, len(idx))
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

func (e *Expr) addParam(name string, t ftype, scalar bool) int {
	e.params = append(e.params, Param{Name: name, Type: t.String(), Scalar: scalar})
	e.pidx[name] = len(e.params) - 1
	return len(e.params) - 1
}

// NameError is the error of a fused expression that reads a name which is neither an
// input, given a type in Types, nor assigned earlier in the expression (a typo, or an
// input whose type was not given). It wraps engine.ErrInvalidArg.
type NameError struct {
	Expr string
	Name string
	Col  int // 1-based column of the name in Expr
	// Inputs are the names given a type in Types, and Assigned the names assigned
	// before the column, each sorted: the names the expression could read there.
	Inputs, Assigned []string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("fuse %q: column %d: %s is neither given a type in fuse.Types nor assigned earlier in the expression (%s): %v",
		e.Expr, e.Col, e.Name, e.Known(), engine.ErrInvalidArg)
}

// Unwrap returns engine.ErrInvalidArg.
func (e *NameError) Unwrap() error { return engine.ErrInvalidArg }

// Known says which names the expression could read, or that it could read none.
func (e *NameError) Known() string {
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
		return errorAt(c.e.src, col, "%s is reserved (C keywords and types, the functions, names starting with _ or prism)", name)
	}
	return nil
}

// node types n and its subtree, inserting conversions.
func (c *checker) node(n *node) error {
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
			return &NameError{Expr: src, Name: n.name, Col: n.col, Inputs: c.names(), Assigned: c.assigned()}
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
			return errorAt(src, a.col, "a comparison is not a value; use c ? 1 : 0")
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
			return errorAt(src, n.args[0].col, "the condition of ?: must be a comparison")
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
				*n = node{kind: nConv, args: []*node{a}, col: n.col, typ: t}
			case a.typ.untyped():
				if err := c.settle(a, t); err != nil {
					return err
				}
				*n = *a
			case a.typ == t:
				*n = *a
			default:
				*n = node{kind: nConv, args: []*node{a}, col: n.col, typ: t}
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
func (n *node) uses(t ftype) bool {
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
func (c *checker) unify(n *node, ops ...*node) (ftype, error) {
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
			return 0, errorAt(c.e.src, n.col, "%s mixes %s and %s; convert one with int32() or uint32()", opName(n), t, u)
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

func opName(n *node) string {
	if n.kind == nCall {
		return n.op
	}
	return strconv.Quote(n.op)
}

// convert returns n as type t: n itself when it has that type, n with its literals
// settled when untyped, or a conversion from an integer to a float or between floats;
// other conversions are the conversion functions'.
func (c *checker) convert(n *node, t ftype, what string) (*node, error) {
	switch {
	case n.typ == t:
		return n, nil
	case n.typ.untyped():
		return n, c.settle(n, t)
	case n.typ.float() && !t.float(), !n.typ.float() && !t.float() && n.typ != fBool:
		return nil, errorAt(c.e.src, n.col, "a %s value %s as %s; convert it with %s()", n.typ, what, t, t)
	}
	return &node{kind: nConv, args: []*node{n}, col: n.col, typ: t}, nil
}

// settle gives the untyped subtree n the type t.
func (c *checker) settle(n *node, t ftype) error {
	if !n.typ.untyped() {
		return nil
	}
	if n.typ == fUntypedFloat && !t.float() {
		return errorAt(c.e.src, n.col, "a float literal where %s is wanted", t)
	}
	if n.kind == nLit {
		switch t {
		case fI32:
			if n.val > math.MaxInt32 {
				return errorAt(c.e.src, n.col, "%s does not fit int32", n.text)
			}
		case fF32:
			if math.IsInf(float64(float32(n.val)), 0) {
				return errorAt(c.e.src, n.col, "%s does not fit float32", n.text)
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
