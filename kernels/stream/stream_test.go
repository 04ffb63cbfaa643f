package stream

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

func TestStream(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testStream[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testStream[float64](t, dev, q)
		})
	})
}

func testStream[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue) {
	s, err := NewStream[T](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, uint64(dev.Info().ComputeUnits)))
	for _, n := range kerneltest.EdgeSizes(s.WorkGroup()) {
		a, b, c := kernels.RandFloats[T](rng, n, -1, 1), kernels.RandFloats[T](rng, n, -1, 1), kernels.RandFloats[T](rng, n, -1, 1)
		k := T(rng.Float64()*4 - 2)
		up := func(x []T) *engine.Buffer[T] {
			buf, err := engine.Upload(t.Context(), q, kerneltest.WithGuard(x))
			if err != nil {
				t.Fatal(err)
			}
			return buf
		}
		ba, bb, bc := up(a), up(b), up(c)
		for _, op := range []StreamOp{OpCopy, OpScale, OpAdd, OpTriad} {
			t.Run(fmt.Sprintf("%s/n=%d", op, n), func(t *testing.T) {
				out := up(make([]T, n)) // zeros, then guards
				defer out.Close()
				var want []float64
				var mag float64
				var err error
				switch op {
				case OpCopy: // c = a
					err, want = s.runN(q, op, int32(n), 0, out, ba), StreamRef(op, a, nil, nil, 0)
					mag = kernels.MaxAbs(a)
				case OpScale: // b = k*c
					err, want = s.runN(q, op, int32(n), k, out, bc), StreamRef(op, nil, nil, c, float64(k))
					mag = math.Abs(float64(k)) * kernels.MaxAbs(c)
				case OpAdd: // c = a + b
					err, want = s.runN(q, op, int32(n), 0, out, ba, bb), StreamRef(op, a, b, nil, 0)
					mag = kernels.MaxAbs(a) + kernels.MaxAbs(b)
				case OpTriad: // a = b + k*c
					err, want = s.runN(q, op, int32(n), k, out, bb, bc), StreamRef(op, nil, b, c, float64(k))
					mag = kernels.MaxAbs(b) + math.Abs(float64(k))*kernels.MaxAbs(c)
				}
				if err != nil {
					t.Fatal(err)
				}
				got, err := out.Download(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				kerneltest.CheckGuard(t, string(op), got, n)
				tol := StreamTolerance[T](op, n, s.WorkGroup(), mag)
				for i := range n {
					if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol) {
						t.Fatalf("%s n=%d: element %d = %v, want %v (|diff| %g > tol %g)", op, n, i, got[i], want[i], d, tol)
					}
				}
			})
		}
		t.Run(fmt.Sprintf("dot/n=%d", n), func(t *testing.T) {
			out := up(make([]T, 1))
			part := up(make([]T, s.DotScratch(n)))
			defer out.Close()
			defer part.Close()
			if err := s.dotN(q, int32(n), out, part, ba, bb); err != nil {
				t.Fatal(err)
			}
			got, err := out.Download(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			kerneltest.CheckGuard(t, "dot", got, 1)
			want := StreamRef(OpDot, a, b, nil, 0)[0]
			var mag float64
			for i := range a {
				mag += math.Abs(float64(a[i]) * float64(b[i]))
			}
			tol := StreamTolerance[T](OpDot, n, s.WorkGroup(), mag)
			if d := math.Abs(float64(got[0]) - want); !(d <= tol) {
				t.Fatalf("dot n=%d = %v, want %v (|diff| %g > tol %g)", n, got[0], want, d, tol)
			}
		})
		ba.Close()
		bb.Close()
		bc.Close()
	}
}

// TestStreamPublicAPI checks the exported launchers, which size the op from the buffers,
// and their validation.
func TestStreamPublicAPI(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewStream[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		const n = 1000
		a := make([]float32, n)
		b := make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(i%17)-8, float32(i%5)+0.5
		}
		ba, _ := engine.Upload(t.Context(), q, a)
		bb, _ := engine.Upload(t.Context(), q, b)
		bc, err := engine.NewBuffer[float32](dev, n)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Triad(q, bc, ba, bb, 3); err != nil {
			t.Fatal(err)
		}
		got, err := bc.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if want := a[i] + 3*b[i]; got[i] != want { // small integers and halves: exact
				t.Fatalf("triad[%d] = %v, want %v", i, got[i], want)
			}
		}
		dot, err := s.Dot(t.Context(), q, ba, bb)
		if err != nil {
			t.Fatal(err)
		}
		want := StreamRef(OpDot, a, b, nil, 0)[0]
		if float64(dot) != want { // exact: partial sums are multiples of 0.5 below 2^24
			t.Fatalf("dot = %v, want %v", dot, want)
		}
		short, _ := engine.NewBuffer[float32](dev, n-1)
		defer short.Close()
		if err := s.Add(q, bc, ba, short); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Add with mismatched lengths: %v, want ErrInvalidArg", err)
		}
		if err := s.Copy(q, nil, ba); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Copy to nil: %v, want ErrInvalidArg", err)
		}
		if err := s.Run(q, OpDot, 0, ba, bb); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Run(dot): %v, want ErrInvalidArg", err)
		}
		if err := q.Finish(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
