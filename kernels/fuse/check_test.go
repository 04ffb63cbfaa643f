package fuse_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/fuse"
)

// TestNameError checks the fields of the error of an unknown name, which callers (prism
// exec --expr) read to name what the expression could have read there: the names given a
// type, and the locals assigned before the column, each sorted, and nothing assigned after.
func TestNameError(t *testing.T) {
	for _, c := range []struct {
		expr     string
		types    fuse.Types
		name     string
		col      int
		inputs   []string
		assigned []string
		known    string
	}{
		{"t = 2*x; s = t; y = s + u", fuse.Types{"y": "float32", "x": "float32"}, "u", 25,
			[]string{"x", "y"}, []string{"s", "t"}, "given a type: x, y; assigned before: s, t"},
		{"y = q; t = 1", fuse.Types{"y": "float32"}, "q", 5, []string{"y"}, nil, "given a type: y"},
		{"t = q", nil, "q", 5, nil, nil, "no name is known there"},
	} {
		_, err := fuse.Parse(c.expr, c.types)
		var ne *fuse.NameError
		if !errors.As(err, &ne) {
			t.Errorf("%q: %v, want a *fuse.NameError", c.expr, err)
			continue
		}
		if !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%q: %v does not wrap ErrInvalidArg", c.expr, err)
		}
		if ne.Expr != c.expr || ne.Name != c.name || ne.Col != c.col || !slices.Equal(ne.Inputs, c.inputs) || !slices.Equal(ne.Assigned, c.assigned) {
			t.Errorf("%q: %+v, want name %s at column %d, inputs %v, assigned %v", c.expr, *ne, c.name, c.col, c.inputs, c.assigned)
		}
		if got := ne.Known(); got != c.known {
			t.Errorf("%q: Known() = %q, want %q", c.expr, got, c.known)
		}
	}
}
