package fuse_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/fuse"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// fuseCase is an expression run on a device against its reference, with the interval of
// its random inputs.
type fuseCase struct {
	expr   string
	types  fuse.Types
	lo, hi float64
}

var fuseCases = []fuseCase{
	{"y = a*x + exp(-z)", axpyExpTypes, -1, 1},
	{"t = x*x + 1; y = t > 1.5 ? sqrt(t) : rsqrt(t) * tanh(x); w = min(max(x, -0.5), 0.5) + pow(t, 0.5) - log(t)",
		fuse.Types{"x": "float32", "y": "float32", "w": "float32"}, -2, 2},
	{"y = clamp(sin(x) + cos(x), -1, 1) * a + floor(x * 4) / (1 + fabs(x)) + tan(x) - exp2(x) + log2(2 + x) + log10(3 + x) + ceil(x) % 3",
		fuse.Types{"x": "float32", "y": "float32", "a": "scalar:float32"}, -1, 1},
	{"x = 2*x + 1; y = x * x", fuse.Types{"x": "float32", "y": "float32"}, -10, 10},
	{"y = fma(a, x, b) / (1 + fabs(x)) - log(1 + x*x) + (x < 0 ? -x : x)",
		fuse.Types{"x": "float64", "y": "float64", "a": "scalar:float64", "b": "scalar:float64"}, -3, 3},
	{"k = i * 3 + j % 5 - abs(i) + i / 7; f = float32(i) / 4 + j",
		fuse.Types{"i": "int32", "j": "int32", "k": "int32", "f": "float32"}, -1000, 1000},
	{"g = float64(i) * 0.1 + x", fuse.Types{"i": "int32", "x": "float32", "g": "float64"}, -1000, 1000},
	{"u = v * 2654435761 + 7 - v / 3; m = v % 10 == 0 ? v : min(v, s)",
		fuse.Types{"v": "uint32", "u": "uint32", "m": "uint32", "s": "scalar:uint32"}, 0, 1e9},
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
// within its bound (fuse.Expr.Ref).
func TestFuse(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		rng := rand.New(rand.NewPCG(4, 5))
		for _, c := range fuseCases {
			t.Run(c.expr, func(t *testing.T) {
				f, err := fuse.Compile(dev, c.expr, c.types)
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

func testFuseAt(t *testing.T, q *engine.Queue, f *fuse.Kernel, rng *rand.Rand, c fuseCase, n int) {
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
func check[T kernels.Number](p fuse.Param, got []T, want, tol map[string][]float64, what string) error {
	if !p.Output {
		return nil
	}
	w, tl := want[p.Name], tol[p.Name]
	return kernels.CheckClose(what, got, w, func(i int) float64 { return tl[i] })
}

// TestFuseCache checks that a second Compile of an expression, however spaced, builds
// nothing; that other types build again; that float64 on a device without fp64 is
// refused; and that Run and Launch refuse bad arguments.
func TestFuseCache(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		before := fuse.Builds(dev)
		f, err := fuse.Compile(dev, "y = a*x + exp(-z)", axpyExpTypes)
		if err != nil {
			t.Fatal(err)
		}
		built := fuse.Builds(dev)
		if built <= before {
			t.Fatalf("first Compile: builds %d -> %d, want a build", before, built)
		}
		g, err := fuse.Compile(dev, " y = a * x + exp( -z );", axpyExpTypes)
		if err != nil {
			t.Fatal(err)
		}
		if n := fuse.Builds(dev); n != built {
			t.Errorf("second Compile of the same expression: builds %d -> %d, want none", built, n)
		}
		if g.Kernel() != f.Kernel() {
			t.Errorf("kernels %s and %s for one expression", f.Kernel(), g.Kernel())
		}
		if _, err := fuse.Compile(dev, "y = a*x + exp(-z)", fuse.Types{"x": "float32", "z": "float32", "a": "scalar:int32", "y": "float32"}); err != nil {
			t.Fatal(err)
		}
		if n := fuse.Builds(dev); n <= built {
			t.Errorf("Compile with other types: builds %d -> %d, want a build", built, n)
		}
		if !dev.Info().FP64 {
			if _, err := fuse.Compile(dev, "y = 2*x", fuse.Types{"x": "float64", "y": "float64"}); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("float64 without fp64: %v, want ErrUnsupported", err)
			}
			if _, err := fuse.Compile(dev, "y = float64(x)", fuse.Types{"x": "float32", "y": "float32"}); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("a float64 conversion without fp64: %v, want ErrUnsupported", err)
			}
		}
		if _, err := fuse.Compile(nil, "y = x", nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("nil device: %v, want ErrInvalidArg", err)
		}
		x := kerneltest.Guarded(t, q, make([]float32, 100)) // written: the in-place run reads it
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
