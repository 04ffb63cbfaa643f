package reduce

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

func TestReduce(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testReduce[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				if _, err := NewReduce[float64](dev); !errors.Is(err, engine.ErrUnsupported) {
					t.Errorf("NewReduce[float64] without fp64: %v, want ErrUnsupported", err)
				}
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testReduce[float64](t, dev, q)
		})
		t.Run("int32", func(t *testing.T) { testReduce[int32](t, dev, q) })
	})
}

// reduceTestWG is the work-group the tests ask for: small under Oclgrind.
func reduceTestWG() int {
	if kerneltest.Small() {
		return 64
	}
	return 256
}

// reduceTestInputs returns n seeded inputs of three kinds: "rand" (floats uniform in
// [-1, 1), int32 over the whole range, so that sums wrap), "ties" (integers in [-4, 4], so
// that the extremes repeat and argmin/argmax must return the first occurrence) and "ints"
// (integers in [1, 8]: a float sum of them is exact while it stays below 2^24, and an
// element missed or read twice changes it by at least 1).
func reduceTestInputs[T ReduceElem](rng *rand.Rand, n int) map[string][]T {
	rnd, ties, ints := make([]T, n), make([]T, n), make([]T, n)
	var z T
	_, isInt := any(z).(int32)
	for i := range n {
		if isInt {
			rnd[i] = T(int32(rng.Uint32()))
		} else {
			rnd[i] = T(2*rng.Float64() - 1)
		}
		ties[i] = T(rng.IntN(9) - 4)
		ints[i] = T(1 + rng.IntN(8))
	}
	return map[string][]T{"rand": rnd, "ties": ties, "ints": ints}
}

// reduceVecSizes returns lengths around the 4-element vectors of the whole-array loop
// (reduce.cl, RED_GRID) for a work-group of wg items: every n%4 below and around one
// vector, and around 4*wg (one vector per item of a group).
func reduceVecSizes(wg int) []int {
	return []int{2, 3, 4, 5, 8, 9, 4*wg - 1, 4 * wg, 4*wg + 1, 4*wg + 2, 4*wg + 3}
}

// reduceStrideSizes returns lengths around the edges of the whole-array loop for a grid
// of gs work-items: below and at 3*gs vectors (the first with a four-vector iteration),
// around 4*gs vectors (exactly one such iteration), and several iterations followed by
// single vectors and a tail.
func reduceStrideSizes(gs int) []int {
	return []int{12*gs - 1, 12 * gs, 12*gs + 1, 16*gs - 1, 16 * gs, 16*gs + 3, 4*(8*gs+2*gs+5) + 2}
}

func testReduce[T ReduceElem](t *testing.T, dev *engine.Device, q *engine.Queue) {
	r, err := newReduce[T](dev, reduceTestWG())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	wg := r.WorkGroup()
	rng := rand.New(rand.NewPCG(2, uint64(wg)))
	sizes := append(kerneltest.EdgeSizes(wg), reduceVecSizes(wg)...)
	if !kerneltest. // where pass 1 reaches its group limit and the grid-stride loop turns
			Small() {
		full := r.maxGroups * wg
		sizes = append(sizes, full-1, full, full+1, 3*full+5, 4*full-1, 4*full+1)
		sizes = append(sizes, reduceStrideSizes(full)...)
	}
	for _, n := range sizes {
		reduceWhole(t, q, r, rng, n, "")
	}
	// Few groups: the grid-stride loop iterates and pass 2 runs, at small sizes.
	r.maxGroups = 3
	for _, n := range append([]int{2*wg + 1, 3*wg - 1, 3 * wg, 3*wg + 1, 7*3*wg + 3}, reduceStrideSizes(3*wg)...) {
		reduceWhole(t, q, r, rng, n, "groups=3/")
	}
	r.maxGroups = max(dev.Info().ComputeUnits, 1) * 32

	rowSizes, colSizes := []int{1, 5, 1000}, []int{1, 7, wg - 1, wg + 1, 3000}
	if kerneltest.Small() {
		rowSizes, colSizes = []int{1, 5}, []int{1, 7, wg - 1, wg + 1}
	}
	for _, rows := range rowSizes {
		for _, cols := range colSizes {
			reduceRows(t, q, r, rng, rows, cols)
		}
	}
	if kerneltest.Small() {
		reduceRows(t, q, r, rng, 1, 3000)
	}
}

// reduceWhole checks every op over n elements of both input kinds, with guard bands after
// the input (an over-read would show in the sum), the outputs and the scratch buffers.
func reduceWhole[T ReduceElem](t *testing.T, q *engine.Queue, r *Reduce[T], rng *rand.Rand, n int, prefix string) {
	for kind, x := range reduceTestInputs[T](rng, n) {
		bx := kerneltest.Guarded(t, q, x)
		g := r.Scratch(n)
		// A sum of "ints" below 2^24 is exact in every element type: no tolerance.
		chain := r.Chain(n)
		if kind == "ints" && 8*n < 1<<24 {
			chain = 0
		}
		for _, op := range ReduceOps {
			if kerneltest.Small() && (op == ReduceSum) != (kind != "ties") {
				continue // under Oclgrind: sums of "rand" and "ints", selections of "ties" only
			}
			t.Run(fmt.Sprintf("%s%s/%s/n=%d", prefix, op, kind, n), func(t *testing.T) {
				out, idx := kerneltest.Guarded(t, q, make([]T, 1)), kerneltest.Guarded(t, q, make([]int32, 1))
				var part *engine.Buffer[T]
				var pidx *engine.Buffer[int32]
				if g > 1 {
					part, pidx = kerneltest.Guarded(t, q, make([]T, g)), kerneltest.Guarded(t, q, make([]int32, g))
				}
				var err error
				if op.IsArg() {
					err = r.ArgInto(q, op, out, idx, part, pidx, bx, n)
				} else {
					err = r.Into(q, op, out, part, bx, n)
				}
				if err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, "output", out, 1)
				gotIdx := kerneltest.Download(t, q, "index", idx, 1)
				if g > 1 {
					kerneltest.Download(t, q, "scratch", part, g)
					kerneltest.Download(t, q, "index scratch", pidx, g)
				}
				if err := checkReduce("reduce "+string(op), op, x, 1, n, chain, got, gotIdx); err != nil {
					t.Fatal(err)
				}
			})
		}
		bx.Close()
	}
}

// reduceRows checks every op per row of a rows x cols matrix: sums on "rand" inputs,
// selections on "ties".
func reduceRows[T ReduceElem](t *testing.T, q *engine.Queue, r *Reduce[T], rng *rand.Rand, rows, cols int) {
	in := reduceTestInputs[T](rng, rows*cols)
	for _, op := range ReduceOps {
		t.Run(fmt.Sprintf("row%s/rows=%d/cols=%d", op, rows, cols), func(t *testing.T) {
			x := in["ties"]
			if op == ReduceSum {
				x = in["rand"]
			}
			bx := kerneltest.Guarded(t, q, x)
			out, idx := kerneltest.Guarded(t, q, make([]T, rows)), kerneltest.Guarded(t, q, make([]int32, rows))
			var err error
			if op.IsArg() {
				err = r.ArgRows(q, op, out, idx, bx, rows, cols)
			} else {
				err = r.Rows(q, op, out, bx, rows, cols)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := kerneltest.Download(t, q, "output", out, rows)
			gotIdx := kerneltest.Download(t, q, "index", idx, rows)
			if err := checkReduce("reduce row"+string(op), op, x, rows, cols, r.RowChain(cols), got, gotIdx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReduceNaN checks that min, max, argmin and argmax ignore NaNs, and what they return
// when nothing but NaNs is left (+-Inf, index -1).
func TestReduceNaN(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		r, err := newReduce[float32](dev, reduceTestWG())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		wg := r.WorkGroup()
		r.maxGroups = 3
		nan := float32(math.NaN())
		rng := rand.New(rand.NewPCG(3, 3))
		// 5*wg+3: single vectors and a tail; 60*wg+3: one four-vector iteration per item, then
		// one vector each and a tail (3 groups: a grid of 3*wg items).
		for _, n := range []int{5*wg + 3, 60*wg + 3} {
			some := make([]float32, n)
			for i := range some {
				some[i] = float32(rng.IntN(9) - 4)
				if i%3 == 0 || i < wg { // every group's first items see NaNs first
					some[i] = nan
				}
			}
			all := make([]float32, n)
			for i := range all {
				all[i] = nan
			}
			for name, x := range map[string][]float32{"some": some, "all": all} {
				bx := kerneltest.Guarded(t, q, x)
				for _, op := range ReduceOps[1:] {
					t.Run(fmt.Sprintf("%s/%s/n=%d", op, name, n), func(t *testing.T) {
						out, idx := kerneltest.Guarded(t, q, make([]float32, 1)), kerneltest.Guarded(t, q, make([]int32, 1))
						part, pidx := kerneltest.Guarded(t, q, make([]float32, 3)), kerneltest.Guarded(t, q, make([]int32, 3))
						if op.IsArg() {
							err = r.ArgInto(q, op, out, idx, part, pidx, bx, n)
						} else {
							err = r.Into(q, op, out, part, bx, n)
						}
						if err != nil {
							t.Fatal(err)
						}
						got, gotIdx := kerneltest.Download(t, q, "output", out, 1), kerneltest.Download(t, q, "index", idx, 1)
						if err := checkReduce("reduce "+string(op), op, x, 1, n, 0, got, gotIdx); err != nil {
							t.Fatal(err)
						}
						if name == "all" && op.IsArg() && gotIdx[0] != -1 {
							t.Fatalf("all NaN: index %d, want -1", gotIdx[0])
						}
					})
					t.Run(fmt.Sprintf("row%s/%s/rows=5/cols=%d", op, name, n/5), func(t *testing.T) {
						out, idx := kerneltest.Guarded(t, q, make([]float32, 5)), kerneltest.Guarded(t, q, make([]int32, 5))
						if op.IsArg() {
							err = r.ArgRows(q, op, out, idx, bx, 5, n/5)
						} else {
							err = r.Rows(q, op, out, bx, 5, n/5)
						}
						if err != nil {
							t.Fatal(err)
						}
						got, gotIdx := kerneltest.Download(t, q, "output", out, 5), kerneltest.Download(t, q, "index", idx, 5)
						if err := checkReduce("reduce row"+string(op), op, x, 5, n/5, 0, got, gotIdx); err != nil {
							t.Fatal(err)
						}
					})
				}
				bx.Close()
			}
		}
	})
}

// TestReduceAPI checks the allocating convenience calls and argument validation.
func TestReduceAPI(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		r, err := NewReduce[int32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		r, err = NewReduce[int32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		n := 5000
		if kerneltest.Small() {
			n = 700
		}
		rng := rand.New(rand.NewPCG(4, 4))
		x := make([]int32, n)
		for i := range x {
			x[i] = int32(rng.IntN(201) - 100)
		}
		bx, err := engine.Upload(t.Context(), q, x)
		if err != nil {
			t.Fatal(err)
		}
		defer bx.Close()
		// The allocating calls free their scratch on return. Under Oclgrind a buffer
		// allocated in place of a freed one that a kernel used reads as uninitialized in
		// the next kernel even after a kernel wrote it (a false positive, seen as well with
		// two calls of Stream.Dot), so the Oclgrind run makes one allocating call only.
		ops := []ReduceOp{ReduceSum, ReduceMin, ReduceMax}
		if kerneltest.Small() {
			ops = ops[:1]
		}
		for _, op := range ops {
			got, err := r.Reduce(t.Context(), q, op, bx)
			if want, _ := ReduceRef(op, x); err != nil || float64(got) != want {
				t.Errorf("%s = %d, %v; want %v", op, got, err, want)
			}
		}
		for _, op := range []ReduceOp{ReduceArgMin, ReduceArgMax} {
			if kerneltest.Small() {
				break
			}
			v, i, err := r.Arg(t.Context(), q, op, bx)
			if want, wi := ReduceRef(op, x); err != nil || float64(v) != want || int(i) != wi {
				t.Errorf("%s = %d at %d, %v; want %v at %d", op, v, i, err, want, wi)
			}
		}
		if !kerneltest.Small() {
			if s, err := r.Sum(t.Context(), q, bx); err != nil || s != sumInt32(x) {
				t.Errorf("Sum = %d, %v", s, err)
			}
			v, i, err := r.ArgMax(t.Context(), q, bx)
			if want, wi := ReduceRef(ReduceArgMax, x); err != nil || float64(v) != want || int(i) != wi {
				t.Errorf("ArgMax = %d at %d, %v; want %v at %d", v, i, err, want, wi)
			}
			v, i, err = r.ArgMin(t.Context(), q, bx)
			if want, wi := ReduceRef(ReduceArgMin, x); err != nil || float64(v) != want || int(i) != wi {
				t.Errorf("ArgMin = %d at %d, %v; want %v at %d", v, i, err, want, wi)
			}
			if m, err := r.Max(t.Context(), q, bx); err != nil || m != 100 && n > 1000 {
				t.Errorf("Max = %d, %v", m, err)
			}
			if m, err := r.Min(t.Context(), q, bx); err != nil || m != -100 && n > 1000 {
				t.Errorf("Min = %d, %v", m, err)
			}
		}

		one, _ := engine.NewBuffer[int32](dev, 1)
		defer one.Close()
		oneIdx, _ := engine.NewBuffer[int32](dev, 1)
		defer oneIdx.Close()
		short, _ := engine.NewBuffer[int32](dev, 1) // scratch too short for n
		defer short.Close()
		big := n
		if r.Scratch(big) < 2 {
			t.Fatalf("n=%d needs one group; the scratch cases below need two", big)
		}
		inval := []struct {
			name string
			err  error
		}{
			{"no such op", r.Into(q, "mean", one, short, bx, n)},
			{"argmin through Into", r.Into(q, ReduceArgMin, one, short, bx, n)},
			{"sum through ArgInto", r.ArgInto(q, ReduceSum, one, oneIdx, one, oneIdx, bx, n)},
			{"nil input", r.Into(q, ReduceSum, one, short, nil, n)},
			{"nil output", r.Into(q, ReduceSum, nil, short, bx, n)},
			{"nil index output", r.ArgInto(q, ReduceArgMax, one, nil, one, oneIdx, bx, n)},
			{"n=0", r.Into(q, ReduceSum, one, short, bx, 0)},
			{"n<0", r.Into(q, ReduceMax, one, short, bx, -3)},
			{"n past the input", r.Into(q, ReduceSum, one, short, bx, n+1)},
			{"scratch too short", r.Into(q, ReduceSum, one, short, bx, big)},
			{"nil scratch", r.Into(q, ReduceMin, one, nil, bx, big)},
			{"index scratch too short", r.ArgInto(q, ReduceArgMin, one, oneIdx, one, short, bx, big)},
			{"rows=0", r.Rows(q, ReduceSum, one, bx, 0, 10)},
			{"cols<0", r.Rows(q, ReduceSum, one, bx, 1, -1)},
			{"matrix past the input", r.Rows(q, ReduceSum, one, bx, 1, n+1)},
			{"matrix over 2^31", r.Rows(q, ReduceSum, one, bx, 1<<16, 1<<16)},
			{"row output too short", r.Rows(q, ReduceMax, one, bx, 2, n/2)},
			{"row index output too short", r.ArgRows(q, ReduceArgMax, bx, oneIdx, bx, 2, n/2)},
			{"argmax through Rows", r.Rows(q, ReduceArgMax, bx, bx, 2, n/2)},
			{"max through ArgRows", r.ArgRows(q, ReduceMax, bx, oneIdx, bx, 2, n/2)},
			{"nil row output", r.ArgRows(q, ReduceArgMin, nil, oneIdx, bx, 1, n)},
			{"nil Reduce input", func() error { _, err := r.Reduce(t.Context(), q, ReduceSum, nil); return err }()},
			{"Arg of sum", func() error { _, _, err := r.Arg(t.Context(), q, ReduceSum, bx); return err }()},
		}
		for _, c := range inval {
			if !errors.Is(c.err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, c.err)
			}
		}
		if _, err := NewReduce[float32](nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewReduce(nil): %v, want ErrInvalidArg", err)
		}
	})
}

func sumInt32(x []int32) int32 {
	var s int32
	for _, v := range x {
		s += v
	}
	return s
}
