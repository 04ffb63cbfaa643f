package sort

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestMergeRuns merges sorted runs on the device (sort_merge, Sorter.mergeRuns) and checks
// the result against the host's stable sort of the whole, keys and values bit for bit: one
// to five runs, empty runs among them, runs shorter and longer than a work-item's outputs,
// all keys equal across runs (the earlier run's first: stability), float32 special keys,
// both orders.
func TestMergeRuns(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("uint32", func(t *testing.T) { testMergeRuns[uint32](t, dev, q) })
		t.Run("float32", func(t *testing.T) { testMergeRuns[float32](t, dev, q) })
	})
}

func testMergeRuns[K SortKey](t *testing.T, dev *engine.Device, q *engine.Queue) {
	s, err := NewSorter[K](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(9, 9))
	key := func(equal bool) K {
		var z K
		switch any(z).(type) {
		case float32:
			if equal {
				return any(float32(1.5)).(K)
			}
			specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-45, -1e-45}
			if rng.IntN(4) == 0 {
				return any(specials[rng.IntN(len(specials))]).(K)
			}
			return any(float32(rng.NormFloat64())).(K)
		default:
			if equal {
				return any(uint32(7)).(K)
			}
			return any(uint32(rng.IntN(50))).(K) // repeats within and across runs
		}
	}
	for _, c := range []struct {
		lens  []int
		equal bool
	}{
		{[]int{1}, false}, {[]int{3, 4}, false}, {[]int{0, 17, 0}, false}, {[]int{100, 1}, false}, {[]int{1, 100}, false},
		{[]int{33, 64, 15, 0, 200}, false}, {[]int{500, 700, 300}, false}, {[]int{40, 40, 40, 40}, true},
	} {
		for _, order := range []SortOrder{Ascending, Descending} {
			name := fmt.Sprintf("runs=%v/equal=%v/%v", c.lens, c.equal, order)
			t.Run(name, func(t *testing.T) {
				var keys []K
				var vals []uint32
				bounds := []int{0}
				for _, l := range c.lens {
					run := make([]K, l)
					for i := range run {
						run[i] = key(c.equal)
					}
					idx := make([]uint32, l)
					for i := range idx {
						idx[i] = uint32(len(keys) + i)
					}
					run, idx = SortPairsRef(run, idx, order)
					keys, vals = append(keys, run...), append(vals, idx...)
					bounds = append(bounds, len(keys))
				}
				n := len(keys)
				wantK, wantV := SortPairsRef(slices.Clone(keys), slices.Clone(vals), order)
				kb, vb := kerneltest.Guarded(t, q, keys), kerneltest.Guarded(t, q, vals)
				tk, tv := kerneltest.Guarded(t, q, make([]K, n)), kerneltest.Guarded(t, q, make([]uint32, n))
				if err := s.mergeRuns(q, kb, tk, vb, tv, bounds, order); err != nil {
					t.Fatal(err)
				}
				gotK, gotV := kerneltest.Download(t, q, "keys", kb, n), kerneltest.Download(t, q, "values", vb, n)
				for i := range n {
					if SortMapKey(gotK[i], order) != SortMapKey(wantK[i], order) || gotV[i] != wantV[i] {
						t.Fatalf("element %d: key %v value %d, want %v %d", i, gotK[i], gotV[i], wantK[i], wantV[i])
					}
				}
				// Keys alone.
				kb2, tk2 := kerneltest.Guarded(t, q, keys), kerneltest.Guarded(t, q, make([]K, n))
				if err := s.mergeRuns(q, kb2, tk2, nil, nil, bounds, order); err != nil {
					t.Fatal(err)
				}
				got2 := kerneltest.Download(t, q, "keys", kb2, n)
				for i := range n {
					if SortMapKey(got2[i], order) != SortMapKey(wantK[i], order) {
						t.Fatalf("keys alone, element %d: %v, want %v", i, got2[i], wantK[i])
					}
				}
			})
		}
	}
}
