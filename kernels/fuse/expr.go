package fuse

import (
	"slices"

	"github.com/prism-compute/prism/kernels"
)

// Types gives the type of every input and output of a fused expression by name: a
// buffer's element type ("float32", "float64", "int32", "uint32") or a scalar's,
// prefixed "scalar:" ("scalar:float32"). Locals need no entry.
type Types map[string]string

// Param is one argument of a fused kernel.
type Param struct {
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

// Expr is a checked fused expression: its kernel's source, arguments and reference.
// It needs no device (Parse); Compile compiles it. It is immutable and safe for concurrent
// use.
type Expr struct {
	src    string
	stmts  []*stmt
	params []Param
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

// Parse parses and checks expr, in the language of the package documentation, with the
// types of its inputs and outputs, and generates its kernel; it needs no device (Compile
// compiles the result).
//
// Errors wrap engine.ErrInvalidArg and name the 1-based column of the problem. Both sides
// of ?: are computed (an integer division by zero in either is undefined on the device),
// and a NaN result never passes verification against Ref.
func Parse(expr string, types Types) (*Expr, error) {
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{src: expr, toks: toks}
	stmts, err := p.program()
	if err != nil {
		return nil, err
	}
	e := &Expr{src: expr, stmts: stmts, pidx: map[string]int{}}
	if err := e.check(types); err != nil {
		return nil, err
	}
	e.generate()
	return e, nil
}

// Source returns the OpenCL C source of the kernel.
func (e *Expr) Source() string { return e.code }

// Kernel returns the name of the kernel in Source.
func (e *Expr) Kernel() string { return e.kernel }

// Normal returns the expression fully parenthesized with the types of its literals and
// arguments: equal for expressions that compile to the same kernel.
func (e *Expr) Normal() string { return e.norm }

// Params returns the kernel's arguments in order (outputs, the buffers read, scalars),
// which Launch takes; the kernel's last argument, the element count, follows them.
func (e *Expr) Params() []Param { return slices.Clone(e.params) }

// Inputs returns the arguments the expression reads (buffers and scalars), in the order
// Ref takes their values.
func (e *Expr) Inputs() []Param {
	out := make([]Param, len(e.inputs))
	for k, i := range e.inputs {
		out[k] = e.params[i]
	}
	return out
}

// Outputs returns the output buffers, in the order Ref gives their values.
func (e *Expr) Outputs() []Param {
	out := make([]Param, len(e.outs))
	for k, i := range e.outs {
		out[k] = e.params[i]
	}
	return out
}

// FP64 reports whether the kernel computes in float64 (and needs the device's fp64).
func (e *Expr) FP64() bool { return e.fp64 }

// Flops returns the operations per element: each arithmetic operation, comparison,
// selection and call (a transcendental counted as one), each distinct one once.
func (e *Expr) Flops() int { return e.flops }

// Model returns the work of one run over n elements: Flops per element, and each input
// buffer read and each output written once.
func (e *Expr) Model(n int) kernels.Model {
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
	return kernels.Model{Flops: float64(e.flops) * float64(n), Bytes: float64(bytes) * float64(n)}
}
