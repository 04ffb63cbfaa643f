package fused

import (
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/fuse"
)

// Expr is one expression of the family: the fused program, the same computation as
// separate steps of one operation each, and the types of its names.
type Expr struct {
	// Name is the op's name within the family ("axpy-exp").
	Name string
	// Fused is the expression of the fused kernel, e.g. "y = a*x + exp(-z)".
	Fused string
	// Steps are the separate kernels, in order: each one map (one operation) from
	// buffers and scalars into a buffer. They compute Fused's outputs.
	Steps []string
	// Inputs are the input buffers, in the order of the op's input arrays; Scalars the
	// scalars, each drawn from [-2, 2); Temps the intermediate buffers of Steps; Output the
	// buffer both write.
	Inputs, Scalars, Temps []string
	Output                 string
	// Lo and Hi bound the random inputs.
	Lo, Hi float64
}

// Exprs are the family's expressions.
var Exprs = []Expr{
	{
		Name:   "axpy-exp",
		Fused:  "y = a*x + exp(-z)",
		Steps:  []string{"u = a*x", "v = exp(-z)", "y = u + v"},
		Inputs: []string{"x", "z"}, Scalars: []string{"a"}, Temps: []string{"u", "v"}, Output: "y",
		Lo: -1, Hi: 1,
	},
}

// types returns the fuse.Types of program over x's names in element type t, for the names
// program uses.
func (x Expr) types(t string, program string) fuse.Types {
	all := fuse.Types{x.Output: t}
	for _, n := range append(append([]string{}, x.Inputs...), x.Temps...) {
		all[n] = t
	}
	for _, n := range x.Scalars {
		all[n] = "scalar:" + t
	}
	out := fuse.Types{}
	for n, ty := range all {
		if usesName(program, n) {
			out[n] = ty
		}
	}
	return out
}

// usesName reports whether program contains the identifier name.
func usesName(program, name string) bool {
	isID := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i+len(name) <= len(program); i++ {
		if program[i:i+len(name)] == name && (i == 0 || !isID(program[i-1])) && (i+len(name) == len(program) || !isID(program[i+len(name)])) {
			return true
		}
	}
	return false
}

// Parse returns x's fused expression checked in element type t ("float32", "float64").
func (x Expr) Parse(t string) (*fuse.Expr, error) {
	return fuse.Parse(x.Fused, x.types(t, x.Fused))
}

// Runner runs one expression of the family on one device, fused or as separate steps.
// It is safe for concurrent use by goroutines that each use their own Queue, but the
// separate steps share their intermediate buffers: one Run at a time.
type Runner[T kernels.Float] struct {
	x     Expr
	ref   *fuse.Expr
	fused *fuse.Kernel
	steps []*fuse.Kernel
	temps map[string]*engine.Buffer[T]
}

// NewRunner compiles x for dev in element type T: the fused kernel, or with separate the
// step kernels and n elements of intermediate buffers each. It returns an error wrapping
// engine.ErrUnsupported for float64 on a device without fp64.
func NewRunner[T kernels.Float](dev *engine.Device, x Expr, separate bool, n int) (_ *Runner[T], err error) {
	t := kernels.TypeName[T]()
	r := &Runner[T]{x: x, temps: map[string]*engine.Buffer[T]{}}
	if r.ref, err = x.Parse(t); err != nil {
		return nil, err
	}
	if !separate {
		if r.fused, err = fuse.Compile(dev, x.Fused, x.types(t, x.Fused)); err != nil {
			return nil, err
		}
		return r, nil
	}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	for _, s := range x.Steps {
		f, err := fuse.Compile(dev, s, x.types(t, s))
		if err != nil {
			return nil, err
		}
		r.steps = append(r.steps, f)
	}
	for _, name := range x.Temps {
		if r.temps[name], err = engine.NewBuffer[T](dev, n); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Ref returns the checked fused expression: the reference and model of both forms.
func (r *Runner[T]) Ref() *fuse.Expr { return r.ref }

// Run computes the expression over the first n elements: args holds the inputs, the
// scalars and the output by name.
func (r *Runner[T]) Run(q *engine.Queue, n int, args map[string]any) error {
	if r.fused != nil {
		return r.fused.Run(q, n, args)
	}
	all := map[string]any{}
	for k, v := range args {
		all[k] = v
	}
	for k, v := range r.temps {
		all[k] = v
	}
	for _, s := range r.steps {
		sub := map[string]any{}
		for _, p := range s.Params() {
			sub[p.Name] = all[p.Name]
		}
		if err := s.Run(q, n, sub); err != nil {
			return err
		}
	}
	return nil
}

// Model returns the work of one Run over n elements: the same operations either way; the
// separate steps each read their inputs and write their output.
func (r *Runner[T]) Model(n int) kernels.Model {
	if r.fused != nil {
		return r.fused.Model(n)
	}
	var m kernels.Model
	for _, s := range r.steps {
		sm := s.Model(n)
		m.Flops += sm.Flops
		m.Bytes += sm.Bytes
	}
	return m
}

// Kernels returns how many kernels one Run launches.
func (r *Runner[T]) Kernels() int {
	if r.fused != nil {
		return 1
	}
	return len(r.steps)
}

// Close releases the intermediate buffers (the kernels are the device's, kept by
// fuse.Compile's cache). Idempotent.
func (r *Runner[T]) Close() error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, b := range r.temps {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}

// String names the runner's form.
func (r *Runner[T]) String() string {
	if r.fused != nil {
		return fmt.Sprintf("%s fused", r.x.Name)
	}
	return fmt.Sprintf("%s in %d kernels", r.x.Name, len(r.steps))
}
