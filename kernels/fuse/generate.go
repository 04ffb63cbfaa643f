package fuse

import (
	"fmt"
	"strconv"
	"strings"

	"crypto/sha256"
	"encoding/hex"
)

// generate writes the kernel: one statement per operation, each value computed once.
func (e *Expr) generate() {
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

	g := &generator{e: e, seen: map[string]string{}, val: map[int]string{}}
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
func (n *node) normal() string {
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

// generator generates the body of the kernel.
type generator struct {
	e     *Expr
	lines []string
	seen  map[string]string // right-hand side -> the temporary holding it
	val   map[int]string    // slot -> the C expression of its value
	flops int
}

// emit returns the C expression of n's value: a literal, a scalar, or a temporary.
func (g *generator) emit(n *node) string {
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
