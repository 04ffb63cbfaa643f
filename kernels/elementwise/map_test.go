package elementwise

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

func TestMap(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, vec := range []int{1, 4} {
			t.Run(fmt.Sprintf("float32/vec=%d", vec), func(t *testing.T) { testMap[float32](t, dev, q, vec) })
		}
		for _, vec := range []int{1, 2} {
			t.Run(fmt.Sprintf("float64/vec=%d", vec), func(t *testing.T) {
				if !dev.Info().FP64 {
					t.Skipf("%s reports no fp64", dev.ID())
				}
				testMap[float64](t, dev, q, vec)
			})
		}
	})
}

func testMap[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue, vec int) {
	m, err := newMap[T](dev, vec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	wg := m.WorkGroup()
	rng := rand.New(rand.NewPCG(2, uint64(vec)))
	sizes := append(kerneltest.EdgeSizes(wg), 2, 3, 4, 5, 1023, 1025, 4*wg-1, 4*wg+1, vec*wg-1, vec*wg+1)
	for _, n := range sizes {
		for _, op := range MapOps {
			lo, hi := mapRange(op)
			var in [][]T
			for range mapInputs(op) {
				in = append(in, kernels.RandFloats[T](rng, n, lo, hi))
			}
			a, b := T(rng.Float64()*4-2), T(rng.Float64()*4-2)
			t.Run(fmt.Sprintf("%s/n=%d", op, n), func(t *testing.T) {
				bufs := []*engine.Buffer[T]{kerneltest.Guarded(t, q, make([]T, n))}
				for _, x := range in {
					bufs = append(bufs, kerneltest.Guarded(t, q, x))
				}
				if err := m.run(q, op, n, a, b, bufs...); err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, string(op), bufs[0], n)
				for i := range in {
					kerneltest.Download(t, q, fmt.Sprintf("input %d", i), bufs[i+1], n) // inputs' guards too
				}
				want := MapRef(op, float64(a), float64(b), in...)
				tol := MapTolerance(op, float64(a), float64(b), in...)
				if err := kernels.CheckClose(string(op), got, want, func(i int) float64 { return tol[i] }); err != nil {
					t.Fatal(err)
				}
				if op == MapRelu {
					for i := range got {
						if got[i] != T(want[i]) || math.Signbit(float64(got[i])) {
							t.Fatalf("relu element %d = %v, want exactly %v", i, got[i], want[i])
						}
					}
				}
			})
		}
	}
}

// TestMapPublicAPI checks the exported launchers, in place (out = y, as BLAS axpy) and
// out of place, and the op-by-name entry.
func TestMapPublicAPI(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		m, err := NewMap[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		const n = 1001
		x, y, z := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i], z[i] = float32(i%17)-8, float32(i%5)+0.5, float32(i%3)-1
		}
		up := func(v []float32) *engine.Buffer[float32] {
			b, err := engine.Upload(t.Context(), q, v)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}
		check := func(what string, b *engine.Buffer[float32], want func(i int) float32) {
			t.Helper()
			got, err := b.Download(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != want(i) { // small integers and halves: exact
					t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want(i))
				}
			}
		}
		bx, by, bz, out := up(x), up(y), up(z), up(make([]float32, n))
		if err := m.Axpy(q, by, bx, by, 3); err != nil { // in place
			t.Fatal(err)
		}
		check("axpy in place", by, func(i int) float32 { return 3*x[i] + y[i] })
		if err := m.Axpby(q, out, bx, bz, 2, -0.5); err != nil {
			t.Fatal(err)
		}
		check("axpby", out, func(i int) float32 { return 2*x[i] - 0.5*z[i] })
		if err := m.Fma(q, out, bx, bz, bx); err != nil {
			t.Fatal(err)
		}
		check("fma", out, func(i int) float32 { return x[i]*z[i] + x[i] })
		if err := m.Relu(q, bx, bx); err != nil { // in place
			t.Fatal(err)
		}
		check("relu in place", bx, func(i int) float32 { return max(x[i], 0) })
		if err := m.Exp(q, out, bz); err != nil {
			t.Fatal(err)
		}
		got, _ := out.Download(t.Context(), q)
		for i, v := range got {
			if w := math.Exp(float64(z[i])); math.Abs(float64(v)-w) > 3*kernels.TypeOf[float32]().ULP(w) {
				t.Fatalf("exp[%d] = %v, want %v", i, v, w)
			}
		}
		if err := m.Sigmoid(q, out, bz); err != nil {
			t.Fatal(err)
		}
		got, _ = out.Download(t.Context(), q)
		for i, v := range got {
			if w := 1 / (1 + math.Exp(-float64(z[i]))); math.Abs(float64(v)-w) > 12.1*kernels.Epsilon[float32]()*w {
				t.Fatalf("sigmoid[%d] = %v, want %v", i, v, w)
			}
		}
	})
}

func TestMapInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		m, err := NewMap[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := engine.NewBuffer[float32](dev, 100)
		defer a.Close()
		b, _ := engine.NewBuffer[float32](dev, 100)
		defer b.Close()
		short, _ := engine.NewBuffer[float32](dev, 99)
		defer short.Close()
		for _, c := range []struct {
			name string
			err  error
		}{
			{"axpy nil out", m.Axpy(q, nil, a, b, 1)},
			{"axpy nil x", m.Axpy(q, a, nil, b, 1)},
			{"axpy lengths", m.Axpy(q, a, b, short, 1)},
			{"axpby lengths", m.Axpby(q, short, a, b, 1, 2)},
			{"exp nil", m.Exp(q, a, nil)},
			{"relu lengths", m.Relu(q, a, short)},
			{"sigmoid nil out", m.Sigmoid(q, nil, a)},
			{"fma nil c", m.Fma(q, a, a, b, nil)},
			{"fma lengths", m.Fma(q, a, a, short, b)},
			{"Run unknown op", m.Run(q, "tanh", 0, 0, a, b)},
			{"Run buffer count", m.Run(q, MapExp, 0, 0, a, b, b)},
			{"Run no buffers", m.Run(q, MapRelu, 0, 0)},
			{"run n zero", m.run(q, MapExp, 0, 0, 0, a, b)},
			{"run n above buffers", m.run(q, MapExp, 101, 0, 0, a, b)},
			{"run n above limit", m.run(q, MapExp, MapMax+1, 0, 0, a, b)},
		} {
			if !errors.Is(c.err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, c.err)
			}
		}
		if _, err := NewMap[float32](nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewMap(nil): %v, want ErrInvalidArg", err)
		}
		if !dev.Info().FP64 {
			if _, err := NewMap[float64](dev); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("NewMap[float64] without fp64: %v, want ErrUnsupported", err)
			}
		}
		if err := m.Close(); err != nil {
			t.Error(err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}
