package reduce

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestSumShfl checks the cuda-shfl sum on every device that builds CUDA C++, at sizes around
// its vector width, block and grid edges, three launches in a row per size (the completion
// counter must come back to 0 after each), with a guard band after the output; elsewhere
// NewSumShfl must refuse with ErrUnsupported.
func TestSumShfl(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if !dev.Builds(engine.DialectCUDA) {
			if _, err := NewSumShfl[float32](q); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("NewSumShfl on %s, which builds no CUDA C++: %v, want ErrUnsupported", dev.ID(), err)
			}
			t.Skipf("%s builds no CUDA C++ (%v)", dev.ID(), dev.Dialects())
		}
		t.Run("float32", func(t *testing.T) { testSumShfl[float32](t, q) })
		t.Run("float64", func(t *testing.T) { testSumShfl[float64](t, q) })
		t.Run("int32", func(t *testing.T) { testSumShfl[int32](t, q) })
	})
}

func testSumShfl[T ReduceElem](t *testing.T, q *engine.Queue) {
	s, err := NewSumShfl[T](q)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	vec := 16 / engine.SizeOf[T]()
	full := s.grid * shflBlock * vec // one vector per thread of the whole grid
	sizes := []int{1, 2, vec - 1, vec, vec + 1, shflBlock*vec - 1, shflBlock * vec, shflBlock*vec + 1, 4097,
		full - 1, full, full + 1, 4*full + 3, 4*4*full + 7}
	rng := rand.New(rand.NewPCG(7, 11))
	for _, n := range sizes {
		x := reduceTestInputs[T](rng, n)["rand"]
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			bx := kerneltest.Guarded(t, q, x)
			out := kerneltest.Guarded(t, q, make([]T, 1))
			for run := range 3 {
				if err := s.Into(q, out, bx, n); err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, "output", out, 1)
				if err := checkReduce(fmt.Sprintf("cuda-shfl sum, launch %d", run+1), ReduceSum, x, 1, n, s.Chain(n), got, nil); err != nil {
					t.Fatal(err)
				}
			}
			count, err := s.count.Download(t.Context(), q)
			if err != nil || count[0] != 0 {
				t.Errorf("completion counter after three launches = %v, %v; want 0", count, err)
			}
		})
	}
	if err := s.Into(q, nil, nil, 1); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("nil buffers: %v, want ErrInvalidArg", err)
	}
}
