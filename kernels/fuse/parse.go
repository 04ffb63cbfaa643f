package fuse

import (
	"math"
	"strconv"
	"strings"
)

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

// node is a node of the expression tree.
type node struct {
	kind int
	op   string  // operator or function name
	name string  // nVar: the name
	val  float64 // nLit: the value
	text string  // nLit: as written
	args []*node
	col  int
	typ  ftype
	// slot is, for nVar, the index of the value it reads in the evaluator's environment.
	slot int
}

// stmt is one assignment.
type stmt struct {
	name string
	col  int
	expr *node
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

// parser is the recursive-descent parser of the language.
type parser struct {
	src  string
	toks []token
	pos  int
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }
func (p *parser) is(op string) bool {
	t := p.peek()
	return t.kind == 'o' && t.text == op
}

func (p *parser) errAt(t token, format string, args ...any) error {
	return errorAt(p.src, t.col, format, args...)
}

func describe(t token) string {
	if t.kind == 'e' {
		return "the end of the expression"
	}
	return strconv.Quote(t.text)
}

func (p *parser) program() ([]*stmt, error) {
	var stmts []*stmt
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
		stmts = append(stmts, &stmt{name: t.text, col: t.col, expr: e})
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

func (p *parser) expr() (*node, error) {
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
	return &node{kind: nSelect, op: "?:", args: []*node{c, a, b}, col: q.col}, nil
}

func (p *parser) cmp() (*node, error) {
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
			return &node{kind: nCmp, op: op, args: []*node{a, b}, col: t.col}, nil
		}
	}
	return a, nil
}

func (p *parser) add() (*node, error) {
	a, err := p.mul()
	for err == nil && (p.is("+") || p.is("-")) {
		t := p.next()
		var b *node
		if b, err = p.mul(); err == nil {
			a = &node{kind: nBinary, op: t.text, args: []*node{a, b}, col: t.col}
		}
	}
	return a, err
}

func (p *parser) mul() (*node, error) {
	a, err := p.unary()
	for err == nil && (p.is("*") || p.is("/") || p.is("%")) {
		t := p.next()
		var b *node
		if b, err = p.unary(); err == nil {
			a = &node{kind: nBinary, op: t.text, args: []*node{a, b}, col: t.col}
		}
	}
	return a, err
}

func (p *parser) unary() (*node, error) {
	if p.is("-") || p.is("+") {
		t := p.next()
		a, err := p.unary()
		if err != nil || t.text == "+" {
			return a, err
		}
		return &node{kind: nUnary, op: "-", args: []*node{a}, col: t.col}, nil
	}
	return p.primary()
}

func (p *parser) primary() (*node, error) {
	t := p.next()
	switch {
	case t.kind == 'n':
		isFloat := strings.ContainsAny(t.text, ".eE")
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil || math.IsInf(v, 0) {
			return nil, p.errAt(t, "bad number %s", t.text)
		}
		n := &node{kind: nLit, val: v, text: t.text, col: t.col, typ: fUntypedInt}
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
		var args []*node
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
		return &node{kind: nCall, op: t.text, args: args, col: t.col}, nil
	case t.kind == 'i':
		return &node{kind: nVar, name: t.text, col: t.col}, nil
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
