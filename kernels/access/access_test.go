package access

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

func TestAccess(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testAccess[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testAccess[float64](t, dev, q)
		})
	})
}

// testAccess runs every kernel at the edge sizes, the strided one at the suite's strides and
// at 1 (a copy), 3 (no power of two, so that the last row is ragged) and 100 (more columns
// than most sizes have elements), gather and scatter through a permutation and through one
// with indices at and past n: outputs and inputs keep their guard bands, inputs unchanged.
func testAccess[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue) {
	a, err := NewAccess[T](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	strides := append(append([]int{1, 3}, Strides...), 100)
	rng := rand.New(rand.NewPCG(7, accessStream))
	for _, n := range kerneltest.EdgeSizes(a.WorkGroup()) {
		x := kernels.RandFloats[T](rng, n, -1, 1)
		perm := randPerm(rng, n)
		holes := slices.Clone(perm) // every fifth index out of range: gather reads 0, scatter skips
		for i := 0; i < n; i += 5 {
			holes[i] = uint32(n + i)
		}
		holes[n-1] = 0xffffffff
		bx := kerneltest.Guarded(t, q, x)
		// check runs launch into a zeroed output with guard bands and compares it with want.
		check := func(t *testing.T, what string, want []T, launch func(y *engine.Buffer[T]) error) {
			y := kerneltest.Guarded(t, q, make([]T, n))
			if err := launch(y); err != nil {
				t.Fatal(err)
			}
			if err := kernels.CheckEqual(what, kerneltest.Download(t, q, what, y, n), want); err != nil {
				t.Fatal(err)
			}
		}
		t.Run(fmt.Sprintf("sequential/n=%d", n), func(t *testing.T) {
			check(t, "sequential y", AccessRef(OpSequential, x, nil, 0), func(y *engine.Buffer[T]) error {
				return a.Sequential(q, y, bx, n)
			})
		})
		for _, s := range strides {
			t.Run(fmt.Sprintf("stride%d/n=%d", s, n), func(t *testing.T) {
				check(t, "strided y", AccessRef(OpStrided, x, nil, s), func(y *engine.Buffer[T]) error {
					return a.Strided(q, y, bx, n, s)
				})
			})
		}
		for _, ix := range []struct {
			name string
			idx  []uint32
		}{{"perm", perm}, {"holes", holes}} {
			bi := kerneltest.Guarded(t, q, ix.idx)
			for _, op := range []AccessOp{OpGather, OpScatter} {
				t.Run(fmt.Sprintf("%s/%s/n=%d", op, ix.name, n), func(t *testing.T) {
					check(t, string(op)+" y", AccessRef(op, x, ix.idx, 0), func(y *engine.Buffer[T]) error {
						if op == OpGather {
							return a.Gather(q, y, bx, bi, n)
						}
						return a.Scatter(q, y, bx, bi, n)
					})
				})
			}
			if err := kernels.CheckEqual("idx", kerneltest.Download(t, q, "idx", bi, n), ix.idx); err != nil {
				t.Fatal(err)
			}
		}
		if err := kernels.CheckEqual("x", kerneltest.Download(t, q, "x", bx, n), x); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAccessRef checks the strided layout on the host: a small case by hand, the closed form
// where the stride divides n, and a permutation (every element of x read once) for every
// size and stride up to 70.
func TestAccessRef(t *testing.T) {
	x := []int32{0, 1, 2, 3, 4, 5, 6}
	// Rows of 3: [0 1 2] [3 4 5] [6]; columns 0 3 6 | 1 4 | 2 5.
	if got, want := AccessRef(OpStrided, x, nil, 3), []int32{0, 3, 6, 1, 4, 2, 5}; !slices.Equal(got, want) {
		t.Errorf("strided 3 of 0..6 = %v, want %v", got, want)
	}
	for n := 1; n <= 70; n++ {
		x := make([]int32, n)
		for i := range x {
			x[i] = int32(i)
		}
		for s := 1; s <= 70; s++ {
			y := AccessRef(OpStrided, x, nil, s)
			sorted := slices.Sorted(slices.Values(y))
			if !slices.Equal(sorted, x) {
				t.Fatalf("n=%d stride=%d: %v is no permutation of 0..n-1", n, s, y)
			}
			if n%s == 0 {
				for i, v := range y {
					if want := int32(i*s%n + i*s/n); v != want {
						t.Fatalf("n=%d stride=%d: y[%d] = %d, want x[%d*%d mod n + %d*%d/n] = %d", n, s, i, v, i, s, i, s, want)
					}
				}
			}
			if n > 1 && s > 1 && s < n && y[1] != int32(s) {
				t.Fatalf("n=%d stride=%d: y[1] = %d; neighbours must read stride elements apart", n, s, y[1])
			}
		}
	}
	idx := []uint32{2, 0, 7, 1} // 7 is out of range
	if got, want := AccessRef(OpGather, []int32{10, 11, 12, 13}, idx, 0), []int32{12, 10, 0, 11}; !slices.Equal(got, want) {
		t.Errorf("gather = %v, want %v", got, want)
	}
	if got, want := AccessRef(OpScatter, []int32{10, 11, 12, 13}, idx, 0), []int32{11, 13, 10, 0}; !slices.Equal(got, want) {
		t.Errorf("scatter = %v, want %v", got, want)
	}
	p := randPerm(kernels.NewRand(1, permStream), 1000)
	if !slices.Equal(slices.Sorted(slices.Values(p)), sortedIndices(1000)) {
		t.Error("randPerm(1000) is no permutation of 0..999")
	}
}

// sortedIndices returns 0..n-1.
func sortedIndices(n int) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = uint32(i)
	}
	return s
}

// TestFamily checks the names and order of the ops, what their Docs say, and that the model
// counts the useful bytes: the same for every stride as for the sequential copy.
func TestFamily(t *testing.T) {
	f := Family()
	var names []string
	for _, op := range f.Ops {
		names = append(names, op.Name)
		if op.Family != "access" || op.Type != "float32" || op.Doc == "" || op.QuickSize > op.DefaultSize {
			t.Errorf("%s: %+v", op.Name, op)
		}
	}
	want := "access/sequential/float32 access/stride2/float32 access/stride4/float32 access/stride8/float32 " +
		"access/stride16/float32 access/stride32/float32 access/stride64/float32 access/gather/float32 access/scatter/float32"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("ops:\n%s\nwant:\n%s", got, want)
	}
	if d := f.Ops[3].Doc; !strings.Contains(d, "32 bytes apart") || !strings.Contains(d, "useful bytes") {
		t.Errorf("stride8 doc %q says neither how far apart its reads are nor what GB/s counts", d)
	}
	const n = 1000
	seq := AccessModel(OpSequential, n, 4)
	if seq.Bytes != 8*n || seq.Flops != 0 {
		t.Errorf("sequential model %+v, want 8n bytes", seq)
	}
	if m := AccessModel(OpStrided, n, 4); m != seq {
		t.Errorf("strided model %+v, want the sequential one %+v (useful bytes only)", m, seq)
	}
	for _, op := range []AccessOp{OpGather, OpScatter} {
		if m := AccessModel(op, n, 4); m.Bytes != 12*n {
			t.Errorf("%s model %+v, want 12n bytes (x, y, idx)", op, m)
		}
	}
}

func TestAccessInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		a, err := NewAccess[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		x := kerneltest.NewBuffer[float32](t, dev, 12)
		y := kerneltest.NewBuffer[float32](t, dev, 12)
		idx := kerneltest.NewBuffer[uint32](t, dev, 12)
		short := kerneltest.NewBuffer[uint32](t, dev, 11)
		for _, c := range []struct {
			name string
			err  error
		}{
			{"nil y", a.Sequential(q, nil, x, 12)},
			{"nil x", a.Strided(q, y, nil, 12, 2)},
			{"nil idx", a.Gather(q, y, x, nil, 12)},
			{"in place", a.Scatter(q, x, x, idx, 12)},
			{"zero elements", a.Sequential(q, y, x, 0)},
			{"x too short", a.Sequential(q, y, x, 13)},
			{"idx too short", a.Scatter(q, y, x, short, 12)},
			{"over 2^31-1 elements", a.Gather(q, y, x, idx, 1<<31)},
			{"stride 0", a.Strided(q, y, x, 12, 0)},
			{"stride above MaxStride", a.Strided(q, y, x, 12, MaxStride+1)},
		} {
			if !errors.Is(c.err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, c.err)
			}
		}
		if _, err := NewAccess[float32](nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewAccess(nil): %v, want ErrInvalidArg", err)
		}
	})
}
