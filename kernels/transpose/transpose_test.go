package transpose

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

func TestTranspose(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testTranspose[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testTranspose[float64](t, dev, q)
		})
	})
}

func testTranspose[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue) {
	tr, err := NewTranspose[T](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tile, _ := tr.Tile()
	shapes := [][2]int{{1, 1}, {1, 7}, {7, 1}, {tile - 1, tile + 1}, {tile, tile}, {tile + 1, tile - 1},
		{2*tile + 3, 5}, {3, 3*tile + 1}}
	if kerneltest.Small() {
		shapes = append(shapes, [2]int{45, 67})
	} else {
		shapes = append(shapes, [2]int{1000, 1025}, [2]int{1, 5000}, [2]int{5000, 1}, [2]int{1031, 1029})
	}
	rng := rand.New(rand.NewPCG(3, 0x7452))
	for _, s := range shapes {
		rows, cols := s[0], s[1]
		t.Run(fmt.Sprintf("rows=%d/cols=%d", rows, cols), func(t *testing.T) {
			a := kernels.RandFloats[T](rng, rows*cols, -1, 1)
			in := kerneltest.Guarded(t, q, a)
			out := kerneltest.Guarded(t, q, make([]T, rows*cols))
			if err := tr.Run(q, out, in, rows, cols); err != nil {
				t.Fatal(err)
			}
			got := kerneltest.Download(t, q, "transpose out", out, rows*cols)
			if err := kernels.CheckEqual("transpose out", got, TransposeRef(a, rows, cols)); err != nil {
				t.Fatal(err)
			}
			kerneltest.Download(t, q, "transpose in", in, rows*cols) // the input's guards too
		})
	}
}

func TestTransposeInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		tr, err := NewTranspose[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		checkRunRefuses(t, dev, q, tr.Run)
	})
}

// checkRunRefuses checks that run (a transpose's Run) refuses nil and aliased buffers, empty
// and negative shapes, a short input and shapes past 2^31 elements with ErrInvalidArg.
func checkRunRefuses(t *testing.T, dev *engine.Device, q *engine.Queue,
	run func(q *engine.Queue, out, in *engine.Buffer[float32], rows, cols int) error) {
	t.Helper()
	a, _ := engine.NewBuffer[float32](dev, 12)
	b, _ := engine.NewBuffer[float32](dev, 12)
	defer a.Close()
	defer b.Close()
	for _, c := range []struct {
		name       string
		out, in    *engine.Buffer[float32]
		rows, cols int
	}{
		{"nil out", nil, a, 3, 4},
		{"nil in", b, nil, 3, 4},
		{"in place", a, a, 3, 4},
		{"zero rows", b, a, 0, 4},
		{"negative cols", b, a, 3, -1},
		{"in too short", b, a, 4, 4},
		{"over 2^31 elements", b, a, 1 << 16, 1 << 15},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := run(q, c.out, c.in, c.rows, c.cols); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("Run(%d x %d): %v, want ErrInvalidArg", c.rows, c.cols, err)
			}
		})
	}
}
