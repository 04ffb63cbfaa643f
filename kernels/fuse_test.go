package kernels_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// axpyExpTypes are the types of "y = a*x + exp(-z)" in float32.
var axpyExpTypes = kernels.FuseTypes{"x": "float32", "z": "float32", "a": "scalar:float32", "y": "float32"}

// TestParseFuse checks the normal form, arguments, operation count and model of good
// expressions: precedence, promotion, literals settled by their context, locals, an
// output that is also an input, and a value computed once however often it is written.
func TestParseFuse(t *testing.T) {
	for _, c := range []struct {
		expr   string
		types  kernels.FuseTypes
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
		{"y = 1 + 2 * x - x / 4 % 3", kernels.FuseTypes{"x": "float32", "y": "float32"},
			"y = ((1:float32+(2:float32*x))-((x/4:float32)%3:float32)); y buffer float32; x buffer float32",
			"y:float32:o x:float32:i", 5},
		{"y = 1/2*x", kernels.FuseTypes{"x": "float64", "y": "float64"},
			"y = ((1:float64/2:float64)*x); y buffer float64; x buffer float64", "y:float64:o x:float64:i", 2},
		{"y = i + x", kernels.FuseTypes{"i": "int32", "x": "float32", "y": "float64"},
			"y = float64((float32(i)+x)); y buffer float64; i buffer int32; x buffer float32",
			"y:float64:o i:int32:i x:float32:i", 1},
		{"k = i * 2 + 0.5", kernels.FuseTypes{"i": "int32", "k": "float32"},
			"k = (float32((i*2:int32))+0.5:float32); k buffer float32; i buffer int32", "k:float32:o i:int32:i", 2},
		{"t = x*x; y = t > 1 ? sqrt(t) : t; x = 2*x", kernels.FuseTypes{"x": "float32", "y": "float32"},
			"t = (x*x); y = ((t>1:float32)?sqrt(t):t); x = (2:float32*x); x buffer float32; y buffer float32",
			"x:float32:oi y:float32:o", 5},
		{"y = x*x; w = x*x + min(n, 3)", kernels.FuseTypes{"x": "float32", "y": "float32", "w": "float32", "n": "scalar:int32"},
			"y = (x*x); w = ((x*x)+float32(min(n,3:int32))); y buffer float32; w buffer float32; x buffer float32; n scalar int32",
			"y:float32:o w:float32:o x:float32:i n:int32:si", 3},
		{"y = 2", kernels.FuseTypes{"y": "float32"}, "y = 2:float32; y buffer float32", "y:float32:o", 0},
		{"y = x; z = int32(-y)", kernels.FuseTypes{"x": "uint32", "y": "uint32", "z": "int32"},
			"y = x; z = int32((-y)); y buffer uint32; z buffer int32; x buffer uint32", "y:uint32:o z:int32:o x:uint32:i", 1},
		{"u = int32(x) % 7; v = uint32(3) * w", kernels.FuseTypes{"x": "float32", "u": "int32", "w": "uint32", "v": "uint32"},
			"u = (int32(x)%7:int32); v = (3:uint32*w); u buffer int32; v buffer uint32; x buffer float32; w buffer uint32",
			"u:int32:o v:uint32:o x:float32:i w:uint32:i", 2},
	} {
		e, err := kernels.ParseFuse(c.expr, c.types)
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
	e, err := kernels.ParseFuse("y = a*x + exp(-z)", axpyExpTypes)
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

// TestParseFuseErrors checks that bad expressions fail with ErrInvalidArg and the column
// of the problem.
func TestParseFuseErrors(t *testing.T) {
	f32 := kernels.FuseTypes{"x": "float32", "y": "float32"}
	for _, c := range []struct {
		expr  string
		types kernels.FuseTypes
		col   int // 0: no column
		want  string
	}{
		{"y = x +", f32, 8, "want an operand"},
		{"y = exp(x", f32, 10, "want , or )"},
		{"y = (x", f32, 7, "want ) to close the ( at column 5"},
		{"y = foo(x)", f32, 5, "unknown function foo"},
		{"y = x $ 2", f32, 7, "unexpected character '$'"},
		{"y x", f32, 3, "want = after y"},
		{"y = 1.5ex", f32, 8, "after the number 1.5"},
		{"y = 2 x", f32, 7, "want ; or the end"},
		{"; y = x", f32, 1, "want an assignment"},
		{"y = q * 2", f32, 5, "q is neither given a type in FuseTypes nor assigned earlier in the expression (given a type: x, y)"},
		{"t = 2*x; y = t + u", f32, 18, "u is neither given a type in FuseTypes nor assigned earlier in the expression (given a type: x, y; assigned before: t)"},
		{"y = pow(x)", f32, 5, "pow takes 2 arguments, has 1"},
		{"y = x < 1 < 2", f32, 11, "comparisons do not chain"},
		{"y = x < 1", f32, 7, "a comparison is not a value"},
		{"y = (x < 1) + 2", f32, 8, "a comparison is not a value"},
		{"y = x ? 1 : 2", f32, 5, "the condition of ?: must be a comparison"},
		{"y = x > 0 ? 1", f32, 14, "want : of the ?: at column 11"},
		{"y = 2*x; _t0 = x", f32, 10, "_t0 is reserved"},
		{"y = int + x", f32, 5, "int is reserved"},
		{"y = i + u", kernels.FuseTypes{"i": "int32", "u": "uint32", "y": "float32"}, 7, "mixes int32 and uint32"},
		{"k = x", kernels.FuseTypes{"x": "float32", "k": "int32"}, 5, "a float32 value assigned to k as int32; convert it with int32()"},
		{"k = i + 0.5", kernels.FuseTypes{"i": "int32", "k": "int32"}, 7, "a float32 value assigned to k"},
		{"k = 2 * u", kernels.FuseTypes{"u": "uint32", "k": "int32"}, 7, "a uint32 value assigned to k as int32; convert it with int32()"},
		{"k = i + 3000000000", kernels.FuseTypes{"i": "int32", "k": "int32"}, 9, "3000000000 does not fit int32"},
		{"y = x + 1e39", f32, 9, "1e39 does not fit float32"},
		{"y = x + 99999999999", f32, 9, "above 4294967295"},
		{"a = x", kernels.FuseTypes{"x": "float32", "a": "scalar:float32"}, 1, "a is a scalar"},
		{"", f32, 1, "want an assignment"},
		{"t = x", kernels.FuseTypes{"x": "float32"}, 0, "no assignment is to a buffer"},
		{"y = x", kernels.FuseTypes{"x": "float16", "y": "float32"}, 0, `x has type "float16"`},
		{"y = x", kernels.FuseTypes{"x": "float32", "y": "float32", "w": "float32"}, 0, "w has a type but the expression does not use it"},
	} {
		_, err := kernels.ParseFuse(c.expr, c.types)
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

// TestFuseSource checks the code generated for a few expressions, character for
// character: argument order, one temporary per distinct value, literals of their type,
// stores after every load.
func TestFuseSource(t *testing.T) {
	for _, c := range []struct {
		expr  string
		types kernels.FuseTypes
		want  string
	}{
		{"y = a*x + exp(-z)", axpyExpTypes, `// y = a*x + exp(-z)
__kernel void fused_d87bc2ea(__global float *y, __global const float *x, __global const float *z, const float a, const int _n) {
    const int _i = (int)get_global_id(0);
    if (_i < _n) {
        const float _t0 = x[_i];
        const float _t1 = a * _t0;
        const float _t2 = z[_i];
        const float _t3 = -_t2;
        const float _t4 = exp(_t3);
        const float _t5 = _t1 + _t4;
        y[_i] = _t5;
    }
}
`},
		{"t = x*x; y = t > 1 ? sqrt(t) : 0.5*t; x = 2*x", kernels.FuseTypes{"x": "float64", "y": "float64"}, `#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// t = x*x; y = t > 1 ? sqrt(t) : 0.5*t; x = 2*x
__kernel void fused_fc6b338e(__global double *x, __global double *y, const int _n) {
    const int _i = (int)get_global_id(0);
    if (_i < _n) {
        const double _t0 = x[_i];
        const double _t1 = _t0 * _t0;
        const int _t2 = _t1 > 1.0;
        const double _t3 = sqrt(_t1);
        const double _t4 = 0.5 * _t1;
        const double _t5 = _t2 ? _t3 : _t4;
        const double _t6 = 2.0 * _t0;
        y[_i] = _t5;
        x[_i] = _t6;
    }
}
`},
		{"k = i % 7 + abs(i); f = float32(i) / 3; u = w * 2654435761", kernels.FuseTypes{"i": "int32", "k": "int32", "f": "float32", "w": "uint32", "u": "uint32"}, `// k = i % 7 + abs(i); f = float32(i) / 3; u = w * 2654435761
__kernel void fused_0b72583d(__global int *k, __global float *f, __global uint *u, __global const int *i, __global const uint *w, const int _n) {
    const int _i = (int)get_global_id(0);
    if (_i < _n) {
        const int _t0 = i[_i];
        const int _t1 = _t0 % 7;
        const int _t2 = (int)abs(_t0);
        const int _t3 = _t1 + _t2;
        const float _t4 = (float)_t0;
        const float _t5 = _t4 / 3.0f;
        const uint _t6 = w[_i];
        const uint _t7 = _t6 * 2654435761u;
        k[_i] = _t3;
        f[_i] = _t5;
        u[_i] = _t7;
    }
}
`},
	} {
		e, err := kernels.ParseFuse(c.expr, c.types)
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		if got := e.Source(); got != c.want {
			t.Errorf("%q: source\n%s\nwant\n%s", c.expr, got, c.want)
		}
	}
}

// fuseCase is an expression run on a device against its reference, with the interval of
// its random inputs.
type fuseCase struct {
	expr   string
	types  kernels.FuseTypes
	lo, hi float64
}

var fuseCases = []fuseCase{
	{"y = a*x + exp(-z)", axpyExpTypes, -1, 1},
	{"t = x*x + 1; y = t > 1.5 ? sqrt(t) : rsqrt(t) * tanh(x); w = min(max(x, -0.5), 0.5) + pow(t, 0.5) - log(t)",
		kernels.FuseTypes{"x": "float32", "y": "float32", "w": "float32"}, -2, 2},
	{"y = clamp(sin(x) + cos(x), -1, 1) * a + floor(x * 4) / (1 + fabs(x)) + tan(x) - exp2(x) + log2(2 + x) + log10(3 + x) + ceil(x) % 3",
		kernels.FuseTypes{"x": "float32", "y": "float32", "a": "scalar:float32"}, -1, 1},
	{"x = 2*x + 1; y = x * x", kernels.FuseTypes{"x": "float32", "y": "float32"}, -10, 10},
	{"y = fma(a, x, b) / (1 + fabs(x)) - log(1 + x*x) + (x < 0 ? -x : x)",
		kernels.FuseTypes{"x": "float64", "y": "float64", "a": "scalar:float64", "b": "scalar:float64"}, -3, 3},
	{"k = i * 3 + j % 5 - abs(i) + i / 7; f = float32(i) / 4 + j",
		kernels.FuseTypes{"i": "int32", "j": "int32", "k": "int32", "f": "float32"}, -1000, 1000},
	{"g = float64(i) * 0.1 + x", kernels.FuseTypes{"i": "int32", "x": "float32", "g": "float64"}, -1000, 1000},
	{"u = v * 2654435761 + 7 - v / 3; m = v % 10 == 0 ? v : min(v, s)",
		kernels.FuseTypes{"v": "uint32", "u": "uint32", "m": "uint32", "s": "scalar:uint32"}, 0, 1e9},
}

// TestFuseTolerance checks that the reference's bound is a few roundings, not more: for
// y = a*x + exp(-z) in float32 at most 16u (|a x| + exp(-z)), against the 8u or so the
// operations' bounds add up to; and that integer results get none.
func TestFuseTolerance(t *testing.T) {
	e, err := kernels.ParseFuse("y = a*x + exp(-z)", axpyExpTypes)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	u := kernels.Epsilon[float32]()
	in, out, tol := make([]float64, 3), make([]float64, 1), make([]float64, 1)
	for range 1000 {
		a, x, z := rng.Float64()*4-2, rng.Float64()*2-1, rng.Float64()*2-1
		for k, p := range e.Inputs() {
			in[k] = map[string]float64{"a": a, "x": x, "z": z}[p.Name]
		}
		e.Ref(in, out, tol)
		if want := a*x + math.Exp(-z); out[0] != want {
			t.Fatalf("Ref(a=%v x=%v z=%v) = %v, want %v", a, x, z, out[0], want)
		}
		mag := math.Abs(a*x) + math.Exp(-z)
		if tol[0] <= 0 || tol[0] > 16*u*mag+1e-30 {
			t.Fatalf("tolerance %g at a=%v x=%v z=%v: above 16u * %g", tol[0], a, x, z, mag)
		}
	}
	e, err = kernels.ParseFuse("k = 3*i - i/2", kernels.FuseTypes{"i": "int32", "k": "int32"})
	if err != nil {
		t.Fatal(err)
	}
	e.Ref([]float64{-2147483647}, out, tol)
	i := int32(-2147483647)
	if out[0] != float64(3*i-i/2) || tol[0] != 0 {
		t.Errorf("int32 wrap: %v within %v", out[0], tol[0])
	}
}

// randArg returns n random values of type ty in [lo, hi) as a Go slice.
func randArg(rng *rand.Rand, ty string, n int, lo, hi float64) any {
	switch ty {
	case "float32":
		return kernels.RandFloats[float32](rng, n, lo, hi)
	case "float64":
		return kernels.RandFloats[float64](rng, n, lo, hi)
	case "int32":
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(lo + rng.Float64()*(hi-lo))
		}
		return s
	}
	s := make([]uint32, n)
	for i := range s {
		s[i] = uint32(lo + rng.Float64()*(hi-lo))
	}
	return s
}

// TestFuse runs each expression on every device at edge sizes on random inputs, with
// guard bands after every buffer, and compares each output with the float64 reference
// within its bound (kernels.FuseExpr.Ref).
func TestFuse(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		rng := rand.New(rand.NewPCG(4, 5))
		for _, c := range fuseCases {
			t.Run(c.expr, func(t *testing.T) {
				f, err := kernels.Fuse(dev, c.expr, c.types)
				if f != nil && f.FP64() && !dev.Info().FP64 || err != nil && errors.Is(err, engine.ErrUnsupported) {
					if !errors.Is(err, engine.ErrUnsupported) {
						t.Fatalf("float64 on a device without fp64: %v, want ErrUnsupported", err)
					}
					t.Skipf("%s reports no fp64", dev.ID())
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range []int{1, 7, f.WorkGroup() - 1, f.WorkGroup() + 1, 1000, 4097} {
					if n < 1 {
						continue
					}
					testFuseAt(t, q, f, rng, c, n)
				}
			})
		}
	})
}

func testFuseAt(t *testing.T, q *engine.Queue, f *kernels.Fused, rng *rand.Rand, c fuseCase, n int) {
	t.Helper()
	host, dev := map[string]any{}, map[string]any{}
	for _, p := range f.Params() {
		v := randArg(rng, p.Type, n, c.lo, c.hi)
		if p.Scalar {
			switch s := v.(type) {
			case []float32:
				host[p.Name], dev[p.Name] = s[0], s[0]
			case []float64:
				host[p.Name], dev[p.Name] = s[0], s[0]
			case []int32:
				host[p.Name], dev[p.Name] = s[0], s[0]
			case []uint32:
				host[p.Name], dev[p.Name] = s[0], s[0]
			}
			continue
		}
		host[p.Name] = v
		switch s := v.(type) {
		case []float32:
			dev[p.Name] = kerneltest.Guarded(t, q, s)
		case []float64:
			dev[p.Name] = kerneltest.Guarded(t, q, s)
		case []int32:
			dev[p.Name] = kerneltest.Guarded(t, q, s)
		case []uint32:
			dev[p.Name] = kerneltest.Guarded(t, q, s)
		}
	}
	want, tol, err := f.Eval(n, host)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Run(q, n, dev); err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Params() {
		if p.Scalar {
			continue
		}
		what := fmt.Sprintf("n=%d %s", n, p.Name)
		var err error
		switch b := dev[p.Name].(type) {
		case *engine.Buffer[float32]:
			err = check(p, kerneltest.Download(t, q, what, b, n), want, tol, what)
		case *engine.Buffer[float64]:
			err = check(p, kerneltest.Download(t, q, what, b, n), want, tol, what)
		case *engine.Buffer[int32]:
			err = check(p, kerneltest.Download(t, q, what, b, n), want, tol, what)
		case *engine.Buffer[uint32]:
			err = check(p, kerneltest.Download(t, q, what, b, n), want, tol, what)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// check compares an output with the reference; an input that is not an output must come
// back unchanged (its guard band is checked by Download).
func check[T kernels.Number](p kernels.FuseParam, got []T, want, tol map[string][]float64, what string) error {
	if !p.Output {
		return nil
	}
	w, tl := want[p.Name], tol[p.Name]
	return kernels.CheckClose(what, got, w, func(i int) float64 { return tl[i] })
}

// TestFuseCache checks that a second Fuse of an expression, however spaced, builds
// nothing; that other types build again; that float64 on a device without fp64 is
// refused; and that Run and Launch refuse bad arguments.
func TestFuseCache(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		before := kernels.FuseBuilds(dev)
		f, err := kernels.Fuse(dev, "y = a*x + exp(-z)", axpyExpTypes)
		if err != nil {
			t.Fatal(err)
		}
		built := kernels.FuseBuilds(dev)
		if built <= before {
			t.Fatalf("first Fuse: builds %d -> %d, want a build", before, built)
		}
		g, err := kernels.Fuse(dev, " y = a * x + exp( -z );", axpyExpTypes)
		if err != nil {
			t.Fatal(err)
		}
		if n := kernels.FuseBuilds(dev); n != built {
			t.Errorf("second Fuse of the same expression: builds %d -> %d, want none", built, n)
		}
		if g.Kernel() != f.Kernel() {
			t.Errorf("kernels %s and %s for one expression", f.Kernel(), g.Kernel())
		}
		if _, err := kernels.Fuse(dev, "y = a*x + exp(-z)", kernels.FuseTypes{"x": "float32", "z": "float32", "a": "scalar:int32", "y": "float32"}); err != nil {
			t.Fatal(err)
		}
		if n := kernels.FuseBuilds(dev); n <= built {
			t.Errorf("Fuse with other types: builds %d -> %d, want a build", built, n)
		}
		if !dev.Info().FP64 {
			if _, err := kernels.Fuse(dev, "y = 2*x", kernels.FuseTypes{"x": "float64", "y": "float64"}); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("float64 without fp64: %v, want ErrUnsupported", err)
			}
			if _, err := kernels.Fuse(dev, "y = float64(x)", kernels.FuseTypes{"x": "float32", "y": "float32"}); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("a float64 conversion without fp64: %v, want ErrUnsupported", err)
			}
		}
		if _, err := kernels.Fuse(nil, "y = x", nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("nil device: %v, want ErrInvalidArg", err)
		}
		x := kerneltest.NewBuffer[float32](t, dev, 100)
		short := kerneltest.NewBuffer[float32](t, dev, 99)
		ints := kerneltest.NewBuffer[int32](t, dev, 100)
		ok := map[string]any{"y": x, "x": x, "z": x, "a": 2.0}
		if err := f.Run(q, 100, ok); err != nil {
			t.Fatalf("in place: %v", err)
		}
		with := func(k string, v any) map[string]any {
			m := map[string]any{}
			for a, b := range ok {
				m[a] = b
			}
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
			return m
		}
		for name, err := range map[string]error{
			"missing":      f.Run(q, 100, with("z", nil)),
			"extra":        f.Run(q, 100, with("w", x)),
			"short":        f.Run(q, 100, with("z", short)),
			"wrong type":   f.Run(q, 100, with("z", ints)),
			"nil buffer":   f.Run(q, 100, with("z", (*engine.Buffer[float32])(nil))),
			"scalar":       f.Run(q, 100, with("a", "two")),
			"n zero":       f.Run(q, 0, ok),
			"launch count": f.Launch(q, 100, x, x),
		} {
			if !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", name, err)
			}
		}
	})
}
