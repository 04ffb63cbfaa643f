package fused

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/fuse"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestOps sets every op of the family up on every device at edge sizes, runs it on
// rotated inputs and verifies it against the float64 reference; a changed output
// element must then fail verification. The separate form must count more bytes than
// the fused one, the same operations, and launch one kernel per step.
func TestOps(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, op := range Family().Ops {
			t.Run(op.Name, func(t *testing.T) {
				for _, n := range []int{1, 7, 1000, 4097} {
					in, err := op.Setup(t.Context(), q, kernels.Params{Size: n, Seed: uint64(n), Rotate: true})
					if kernels.TypeOf[float64]().Name == op.Type && !dev.Info().FP64 {
						if !errors.Is(err, engine.ErrUnsupported) {
							t.Fatalf("float64 without fp64: %v, want ErrUnsupported", err)
						}
						t.Skipf("%s reports no fp64", dev.ID())
					}
					if err != nil {
						t.Fatal(err)
					}
					for range 2 {
						if err := in.Run(t.Context(), q); err != nil {
							t.Fatal(err)
						}
						if err := in.Verify(t.Context(), q); err != nil {
							t.Fatalf("n=%d: %v", n, err)
						}
					}
					if in.Shape() != fmt.Sprintf("n=%d", n) {
						t.Errorf("shape %q", in.Shape())
					}
					checkModel(t, op, in.Model(), n)
					corrupt(t, q, in, n)
					if err := in.Close(); err != nil {
						t.Fatal(err)
					}
					if err := in.Close(); err != nil {
						t.Fatalf("second Close: %v", err)
					}
				}
			})
		}
	})
}

// checkModel checks an op's model: 4 operations per element either way; the fused
// kernel moves x, z and y once (3 arrays), the separate kernels 7 (a*x: 2, exp(-z): 2,
// u + v: 3).
func checkModel(t *testing.T, op kernels.Op, m kernels.Model, n int) {
	t.Helper()
	size := 4
	if op.Type == "float64" {
		size = 8
	}
	arrays := 3
	if strings.Contains(op.Name, "-separate/") {
		arrays = 7
	}
	if m.Flops != float64(4*n) || m.Bytes != float64(arrays*n*size) {
		t.Errorf("%s n=%d: model %+v, want %d flops and %d bytes", op.Name, n, m, 4*n, arrays*n*size)
	}
}

// corrupt changes the last element of the output and expects Verify to name it.
func corrupt(t *testing.T, q *engine.Queue, in kernels.Instance, n int) {
	t.Helper()
	var err error
	switch x := in.(type) {
	case *instance[float32]:
		err = x.out.Fill(q, n-1, 1, 1e4)
	case *instance[float64]:
		err = x.out.Fill(q, n-1, 1, 1e4)
	default:
		t.Fatalf("instance %T", in)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), fmt.Sprint(n-1)) {
		t.Errorf("n=%d: a changed last element: %v, want ErrVerify naming element %d", n, err, n-1)
	}
}

// TestRunner checks that the fused and separate forms give the same result, within
// the reference's bound, and the number of kernels each launches.
func TestRunner(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		const n = 1001
		x := Exprs[0]
		fused, err := NewRunner[float32](dev, x, false, n)
		if err != nil {
			t.Fatal(err)
		}
		defer fused.Close()
		sep, err := NewRunner[float32](dev, x, true, n)
		if err != nil {
			t.Fatal(err)
		}
		defer sep.Close()
		if fused.Kernels() != 1 || sep.Kernels() != len(x.Steps) {
			t.Errorf("kernels %d and %d, want 1 and %d", fused.Kernels(), sep.Kernels(), len(x.Steps))
		}
		xs, zs := make([]float32, n), make([]float32, n)
		for i := range xs {
			xs[i], zs[i] = float32(i%13)/8-0.75, float32(i%7)/4-0.75
		}
		bx, bz := kerneltest.Guarded(t, q, xs), kerneltest.Guarded(t, q, zs)
		y1, y2 := kerneltest.Guarded(t, q, make([]float32, n)), kerneltest.Guarded(t, q, make([]float32, n))
		if err := fused.Run(q, n, map[string]any{"x": bx, "z": bz, "a": float32(1.5), "y": y1}); err != nil {
			t.Fatal(err)
		}
		if err := sep.Run(q, n, map[string]any{"x": bx, "z": bz, "a": float32(1.5), "y": y2}); err != nil {
			t.Fatal(err)
		}
		want, tol, err := fused.Ref().Eval(n, map[string]any{"x": xs, "z": zs, "a": 1.5})
		if err != nil {
			t.Fatal(err)
		}
		for k, y := range []*engine.Buffer[float32]{y1, y2} {
			got := kerneltest.Download(t, q, "y", y, n)
			if err := kernels.CheckClose(fmt.Sprint("form ", k), got, want["y"], func(i int) float64 { return tol["y"][i] }); err != nil {
				t.Error(err)
			}
		}
		if fused.String() != "axpy-exp fused" || sep.String() != "axpy-exp in 3 kernels" {
			t.Errorf("names %q, %q", fused, sep)
		}
	})
}

// TestSource checks the family's generated source: the header's sections, and every
// expression's kernels.
func TestSource(t *testing.T) {
	f := Family()
	if h := kernels.Header(f.Source); !strings.HasPrefix(h, "fused.cl: ") {
		t.Errorf("header starts %q", strings.SplitN(h, "\n", 2)[0])
	}
	for _, s := range []string{"Purpose", "Arguments", "Tunables", "Variants", "Launch"} {
		if !strings.Contains(f.Source, "// "+s) {
			t.Errorf("header lacks %s", s)
		}
	}
	if kernels.HeaderSection(f.Source, "Tunables") == "" {
		t.Error("no Tunables section")
	}
	for _, x := range Exprs {
		for _, s := range append([]string{x.Fused}, x.Steps...) {
			e, err := fuse.Parse(s, x.types("float32", s))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(f.Source, e.Source()) {
				t.Errorf("source lacks the kernel of %q", s)
			}
		}
	}
	var names []string
	for _, op := range f.Ops {
		names = append(names, op.Name)
		if n := len(op.Variants); n != 1 || op.Variants[0].Name != kernels.PortableName {
			t.Errorf("%s: variants %v", op.Name, op.VariantNames())
		}
		if op.QuickSize > op.DefaultSize || op.DefaultSize != 1<<25 {
			t.Errorf("%s: sizes %d, %d", op.Name, op.QuickSize, op.DefaultSize)
		}
	}
	if got := strings.Join(names, " "); got != "fused/axpy-exp/float32 fused/axpy-exp/float64 fused/axpy-exp-separate/float32 fused/axpy-exp-separate/float64" {
		t.Errorf("ops %s", got)
	}
}
