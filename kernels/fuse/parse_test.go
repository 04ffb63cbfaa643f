package fuse_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/fuse"
)

// axpyExpTypes are the types of "y = a*x + exp(-z)" in float32.
var axpyExpTypes = fuse.Types{"x": "float32", "z": "float32", "a": "scalar:float32", "y": "float32"}

// TestParse checks the normal form, arguments, operation count and model of good
// expressions: precedence, promotion, literals settled by their context, locals, an
// output that is also an input, and a value computed once however often it is written.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		expr   string
		types  fuse.Types
		normal string
		params string // name:type:kinds, kernel order
		flops  int
	}{
		{"y = a*x + exp(-z)", axpyExpTypes,
			"y = ((a*x)+exp((-z))); y buffer float32; x buffer float32; z buffer float32; a scalar float32",
			"y:float32:o x:float32:i z:float32:i a:float32:si", 4},
		{"  y=a * x+exp( - z ) ; ", axpyExpTypes,
			"y = ((a*x)+exp((-z))); y buffer float32; x buffer float32; z buffer float32; a scalar float32",
			"y:float32:o x:float32:i z:float32:i a:float32:si", 4},
		{"y = 1 + 2 * x - x / 4 % 3", fuse.Types{"x": "float32", "y": "float32"},
			"y = ((1:float32+(2:float32*x))-((x/4:float32)%3:float32)); y buffer float32; x buffer float32",
			"y:float32:o x:float32:i", 5},
		{"y = 1/2*x", fuse.Types{"x": "float64", "y": "float64"},
			"y = ((1:float64/2:float64)*x); y buffer float64; x buffer float64", "y:float64:o x:float64:i", 2},
		{"y = i + x", fuse.Types{"i": "int32", "x": "float32", "y": "float64"},
			"y = float64((float32(i)+x)); y buffer float64; i buffer int32; x buffer float32",
			"y:float64:o i:int32:i x:float32:i", 1},
		{"k = i * 2 + 0.5", fuse.Types{"i": "int32", "k": "float32"},
			"k = (float32((i*2:int32))+0.5:float32); k buffer float32; i buffer int32", "k:float32:o i:int32:i", 2},
		{"t = x*x; y = t > 1 ? sqrt(t) : t; x = 2*x", fuse.Types{"x": "float32", "y": "float32"},
			"t = (x*x); y = ((t>1:float32)?sqrt(t):t); x = (2:float32*x); x buffer float32; y buffer float32",
			"x:float32:oi y:float32:o", 5},
		{"y = x*x; w = x*x + min(n, 3)", fuse.Types{"x": "float32", "y": "float32", "w": "float32", "n": "scalar:int32"},
			"y = (x*x); w = ((x*x)+float32(min(n,3:int32))); y buffer float32; w buffer float32; x buffer float32; n scalar int32",
			"y:float32:o w:float32:o x:float32:i n:int32:si", 3},
		{"y = 2", fuse.Types{"y": "float32"}, "y = 2:float32; y buffer float32", "y:float32:o", 0},
		{"y = x; z = int32(-y)", fuse.Types{"x": "uint32", "y": "uint32", "z": "int32"},
			"y = x; z = int32((-y)); y buffer uint32; z buffer int32; x buffer uint32", "y:uint32:o z:int32:o x:uint32:i", 1},
		{"u = int32(x) % 7; v = uint32(3) * w", fuse.Types{"x": "float32", "u": "int32", "w": "uint32", "v": "uint32"},
			"u = (int32(x)%7:int32); v = (3:uint32*w); u buffer int32; v buffer uint32; x buffer float32; w buffer uint32",
			"u:int32:o v:uint32:o x:float32:i w:uint32:i", 2},
	} {
		e, err := fuse.Parse(c.expr, c.types)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		if got := e.Normal(); got != c.normal {
			t.Errorf("%q: normal form\n%s\nwant\n%s", c.expr, got, c.normal)
		}
		var ps []string
		for _, p := range e.Params() {
			kinds := ""
			if p.Scalar {
				kinds += "s"
			}
			if p.Output {
				kinds += "o"
			}
			if p.Input {
				kinds += "i"
			}
			ps = append(ps, p.Name+":"+p.Type+":"+kinds)
		}
		if got := strings.Join(ps, " "); got != c.params {
			t.Errorf("%q: params %s, want %s", c.expr, got, c.params)
		}
		if e.Flops() != c.flops {
			t.Errorf("%q: %d flops, want %d", c.expr, e.Flops(), c.flops)
		}
	}
	e, err := fuse.Parse("y = a*x + exp(-z)", axpyExpTypes)
	if err != nil {
		t.Fatal(err)
	}
	if m := e.Model(1000); m.Flops != 4000 || m.Bytes != 12000 {
		t.Errorf("model %+v, want 4000 flops and 12000 bytes", m)
	}
	if e.FP64() {
		t.Error("float32 expression reports fp64")
	}
}

// TestParseErrors checks that bad expressions fail with ErrInvalidArg and the column
// of the problem.
func TestParseErrors(t *testing.T) {
	f32 := fuse.Types{"x": "float32", "y": "float32"}
	for _, c := range []struct {
		expr  string
		types fuse.Types
		col   int // 0: no column
		want  string
	}{
		{"y = x +", f32, 8, "want an operand"},
		{"y = exp(x", f32, 10, "want , or )"},
		{"y = (x", f32, 7, "want ) to close the ( at column 5"},
		{"y = foo(x)", f32, 5, "unknown function foo"},
		{"y = x $ 2", f32, 7, "unexpected character '$'"},
		{"y = x é 2", f32, 7, "unexpected character 'é'"}, // the character written, not its first byte (Ã)
		{"y x", f32, 3, "want = after y"},
		{"y = 1.5ex", f32, 8, "after the number 1.5"},
		{"y = 2 x", f32, 7, "want ; or the end"},
		{"; y = x", f32, 1, "want an assignment"},
		{"y = q * 2", f32, 5, "q is neither given a type in fuse.Types nor assigned earlier in the expression (given a type: x, y)"},
		{"t = 2*x; y = t + u", f32, 18, "u is neither given a type in fuse.Types nor assigned earlier in the expression (given a type: x, y; assigned before: t)"},
		{"y = pow(x)", f32, 5, "pow takes 2 arguments, has 1"},
		{"y = x < 1 < 2", f32, 11, "comparisons do not chain"},
		{"y = x < 1", f32, 7, "a comparison is not a value"},
		{"y = (x < 1) + 2", f32, 8, "a comparison is not a value"},
		{"y = x ? 1 : 2", f32, 5, "the condition of ?: must be a comparison"},
		{"y = x > 0 ? 1", f32, 14, "want : of the ?: at column 11"},
		{"y = 2*x; _t0 = x", f32, 10, "_t0 is reserved"},
		{"y = int + x", f32, 5, "int is reserved"},
		{"y = i + u", fuse.Types{"i": "int32", "u": "uint32", "y": "float32"}, 7, "mixes int32 and uint32"},
		{"k = x", fuse.Types{"x": "float32", "k": "int32"}, 5, "a float32 value assigned to k as int32; convert it with int32()"},
		{"k = i + 0.5", fuse.Types{"i": "int32", "k": "int32"}, 7, "a float32 value assigned to k"},
		{"k = 2 * u", fuse.Types{"u": "uint32", "k": "int32"}, 7, "a uint32 value assigned to k as int32; convert it with int32()"},
		{"k = i + 3000000000", fuse.Types{"i": "int32", "k": "int32"}, 9, "3000000000 does not fit int32"},
		{"y = x + 1e39", f32, 9, "1e39 does not fit float32"},
		{"y = x + 99999999999", f32, 9, "above 4294967295"},
		{"a = x", fuse.Types{"x": "float32", "a": "scalar:float32"}, 1, "a is a scalar"},
		{"", f32, 1, "want an assignment"},
		{"t = x", fuse.Types{"x": "float32"}, 0, "no assignment is to a buffer"},
		{"y = x", fuse.Types{"x": "float16", "y": "float32"}, 0, `x has type "float16"`},
		{"y = x", fuse.Types{"x": "float32", "y": "float32", "w": "float32"}, 0, "w has a type but the expression does not use it"},
	} {
		_, err := fuse.Parse(c.expr, c.types)
		if !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%q: %v, want ErrInvalidArg", c.expr, err)
			continue
		}
		msg := err.Error()
		if c.col > 0 && !strings.Contains(msg, fmt.Sprintf("column %d: ", c.col)) {
			t.Errorf("%q: %v, want column %d", c.expr, err, c.col)
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%q: %v, want it to say %q", c.expr, err, c.want)
		}
	}
}
