package kernels_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestInputs checks the rotation of input sets: how many sets Params asks for, that Next
// takes them in turn with their arrays in order, that Last is the set of the last Next, and
// that Close is idempotent.
func TestInputs(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, c := range []struct {
			p        kernels.Params
			setBytes int
			sets     int
		}{
			{kernels.Params{Rotate: false}, 80, 1},
			{kernels.Params{Rotate: true}, 80, 8},
			{kernels.Params{Rotate: true}, kernels.RotationBytes(dev) / 4, 4},
			{kernels.Params{Rotate: true}, kernels.RotationBytes(dev), 1},
		} {
			calls := 0
			in, err := kernels.NewInputs(t.Context(), q, c.p, c.setBytes, func(set int) [][]int32 {
				if set != calls {
					t.Errorf("gen called for set %d, want %d", set, calls)
				}
				calls++
				return [][]int32{{int32(set), 1}, {int32(set), 2, 3}}
			})
			if err != nil {
				t.Fatal(err)
			}
			if in.Sets() != c.sets || calls != c.sets {
				t.Fatalf("%+v, %d bytes a set: %d sets, gen called %d times; want %d", c.p, c.setBytes, in.Sets(), calls, c.sets)
			}
			if got, err := in.Last(t.Context()); err != nil || got[0][0] != 0 {
				t.Errorf("Last before Next = %v, %v; want set 0", got, err)
			}
			for run := range 2*c.sets + 1 {
				bufs := in.Next()
				want := int32(run % c.sets)
				if last, err := in.Last(t.Context()); err != nil || last[0][0] != want || len(last) != 2 || len(last[1]) != 3 {
					t.Fatalf("run %d: Last = %v, %v; want set %d", run, last, err, want)
				}
				a, err := bufs[0].Download(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				b, err := bufs[1].Download(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(a, []int32{want, 1}) || !slices.Equal(b, []int32{want, 2, 3}) {
					t.Fatalf("run %d: device arrays %v %v, want set %d", run, a, b, want)
				}
			}
			if c.sets > 1 {
				// A kernel that writes into an input: Last must notice, not verify against it.
				in.Next()
				if err := in.LastBuffers()[1].Fill(q, 0, 1, 99); err != nil {
					t.Fatal(err)
				}
				if _, err := in.Last(t.Context()); !errors.Is(err, kernels.ErrVerify) {
					t.Errorf("Last of a set changed on the device: %v, want ErrVerify", err)
				}
			}
			if err := in.Close(); err != nil {
				t.Fatal(err)
			}
			if err := in.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		}
		var none *kernels.Inputs[float32]
		if err := none.Close(); err != nil {
			t.Errorf("nil Inputs Close: %v", err)
		}
	})
}

func TestRotated(t *testing.T) {
	x := []float32{0, 1, 2, 3, 4}
	if got := kernels.Rotated(x, 0); &got[0] != &x[0] {
		t.Error("Rotated by 0 copied x")
	}
	if got := kernels.Rotated(x, 7); !slices.Equal(got, []float32{2, 3, 4, 0, 1}) {
		t.Errorf("Rotated(x, 7) = %v", got)
	}
	if !slices.Equal(x, []float32{0, 1, 2, 3, 4}) {
		t.Errorf("Rotated changed x: %v", x)
	}
}
