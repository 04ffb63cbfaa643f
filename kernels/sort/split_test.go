package sort

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// fracName names fixed fractions in a subtest's name, or "measured" for nil.
func fracName(f []float64) string {
	if f == nil {
		return "measured"
	}
	return fmt.Sprint(f)
}

// smallSplitTiles gives the split's sorters small tiles under Oclgrind (fewer simulated
// work-items), until the test ends.
func smallSplitTiles(t *testing.T) {
	if kerneltest.Small() {
		saved := splitGroup
		splitGroup = [2]int{64, 4}
		t.Cleanup(func() { splitGroup = saved })
	}
}

// TestSortSplit splits every sort op across the devices found, with fixed and measured
// shares, at sizes around the tile, and checks the merged result against the host sort
// bit for bit (values too: the merge is stable).
func TestSortSplit(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	smallSplitTiles(t)
	s, err := newSorter[uint32](devs[0], splitGroup[0], splitGroup[1])
	if err != nil {
		t.Fatal(err)
	}
	tile := s.Tile()
	s.Close()
	fractions := append(kerneltest.SplitFractions(len(devs)), nil) // nil: measured
	// Every setup builds the family on each device (about 100 ms on PoCL): per op two
	// shares at 3 tiles and 5 keys, one at 7 or tile+1 (under Oclgrind the first only),
	// the shares in turn across the ops.
	for oi, op := range Family().Ops {
		type tc struct {
			n int
			f []float64
		}
		cases := []tc{{3*tile + 5, fractions[oi%len(fractions)]}}
		if !kerneltest.Small() { // Oclgrind: one case per op
			cases = append(cases, tc{3*tile + 5, fractions[(oi+1)%len(fractions)]}, tc{[]int{7, tile + 1}[oi%2], fractions[(oi+2)%len(fractions)]})
		}
		for _, c := range cases {
			n, f := c.n, c.f
			t.Run(fmt.Sprintf("%s/n=%d/f=%s", op.Name, n, fracName(f)), func(t *testing.T) {
				in, err := op.Split(t.Context(), devs, kernels.Params{Size: n, Seed: uint64(n)}, kernels.SplitOptions{Fractions: f})
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				kerneltest.CheckShares(t, in.Shares(), n, f)
				for range 2 { // a second run sorts and merges afresh
					if err := in.Run(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
				if err := in.Verify(t.Context()); err != nil {
					t.Fatal(err)
				}
				if f != nil {
					kerneltest.CheckRecheck(t, in) // the runs merged over the shares the check tries
				}
				if in.Model() != SortModel(n, op.Name == "sort/pairs/uint32") {
					t.Errorf("Model %+v", in.Model())
				}
			})
		}
	}
}

// TestSortSplitInputs checks that a split draws the one-device op's input keys.
func TestSortSplitInputs(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	q, err := devs[0].NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	const n = 1000
	for _, op := range []kernels.Op{Family().Ops[0], Family().Ops[1]} {
		one, err := op.Setup(t.Context(), q, kernels.Params{Size: n, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		want, err := func() ([]uint32, error) {
			defer one.Close()
			switch in := one.(type) {
			case *sortInstance[uint32]:
				k, err := in.keys.Last(t.Context())
				return k[0], err
			case *sortInstance[float32]:
				k, err := in.keys.Last(t.Context())
				if err != nil {
					return nil, err
				}
				b := make([]uint32, n)
				for i, x := range k[0] {
					b[i] = math.Float32bits(x)
				}
				return b, nil
			}
			return nil, fmt.Errorf("unexpected instance %T", one)
		}()
		if err != nil {
			t.Fatal(err)
		}
		var got []uint32
		if op.Type == "uint32" {
			got = sortKeys[uint32](9, n)
		} else {
			for _, x := range sortKeys[float32](9, n) {
				got = append(got, math.Float32bits(x))
			}
		}
		if err := kernels.CheckEqual(op.Name+" split keys", got, want); err != nil {
			t.Error(err)
		}
	}
}

// TestSortMergeRuns merges up to 9 runs of keys with many duplicates, with values and
// without, and compares with the host sort of the whole; and checks the key maps.
func TestSortMergeRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for runs := 1; runs <= 9; runs++ {
		n := 1000 + rng.IntN(100)
		if runs == 2 || runs == 5 {
			n = 3*mergeSegment + rng.IntN(1000) // merged in segments
		}
		keys := make([]uint32, n)
		for i := range keys {
			keys[i] = uint32(rng.IntN(50))
		}
		vals := make([]uint32, n)
		for i := range vals {
			vals[i] = uint32(i)
		}
		bounds := []int{0}
		for range runs - 1 {
			bounds = append(bounds, rng.IntN(n+1))
		}
		bounds = append(bounds, n)
		slices.Sort(bounds)
		a, av := make([]uint32, n), make([]uint32, n)
		for r := 0; r+1 < len(bounds); r++ {
			k, v := SortPairsRef(keys[bounds[r]:bounds[r+1]], vals[bounds[r]:bounds[r+1]], Ascending)
			copy(a[bounds[r]:], k)
			copy(av[bounds[r]:], v)
		}
		keysOnly := slices.Clone(a)
		got, gotV := mergeRuns(a, make([]uint32, n), av, make([]uint32, n), bounds)
		wantK, wantV := SortPairsRef(keys, vals, Ascending)
		if err := kernels.CheckEqual(fmt.Sprintf("%d runs keys", runs), got, wantK); err != nil {
			t.Fatal(err)
		}
		if err := kernels.CheckEqual(fmt.Sprintf("%d runs values", runs), gotV, wantV); err != nil {
			t.Fatal(err)
		}
		got, _ = mergeRuns(keysOnly, make([]uint32, n), nil, nil, bounds)
		if err := kernels.CheckEqual(fmt.Sprintf("%d runs keys only", runs), got, wantK); err != nil {
			t.Fatal(err)
		}
	}
	floats := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(-1)), float32(math.Inf(1)), -3.5, 7, 1e-45, -1e-45,
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00000)}
	uints := []uint32{0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 12345}
	for _, o := range []SortOrder{Ascending, Descending} {
		checkMapKeys(t, floats, o)
		checkMapKeys(t, uints, o)
	}
}

// checkMapKeys checks mapKeys against SortMapKey, and unmapKeys against the keys.
func checkMapKeys[K SortKey](t *testing.T, keys []K, o SortOrder) {
	t.Helper()
	m := make([]uint32, len(keys))
	mapKeys(m, keys, o)
	back := make([]K, len(keys))
	unmapKeys(back, m, o)
	for i, k := range keys {
		if m[i] != SortMapKey(k, o) || keyBits(back[i]) != keyBits(k) {
			t.Errorf("%v %v: mapKeys %#08x, SortMapKey %#08x, unmapKeys %v", k, o, m[i], SortMapKey(k, o), back[i])
		}
	}
}

func TestSortSplitInvalid(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	smallSplitTiles(t)
	op := Family().Ops[2] // pairs
	ok := kernels.Params{Size: 1000, Seed: 1}
	kerneltest.CheckSplitRefusals(t, op, append(kerneltest.PlacementRefusals(devs, ok), []kerneltest.SplitRefusal{
		{Name: "size 0", Devs: devs, P: kernels.Params{}, Want: engine.ErrInvalidArg},
		{Name: "size too large", Devs: devs, P: kernels.Params{Size: MaxSortLen + 1}, Want: engine.ErrInvalidArg},
		{Name: "tunables", Devs: devs, P: kernels.Params{Size: 1000, Tunables: "WG=64"}, Want: engine.ErrInvalidArg},
		{Name: "variant", Devs: devs, P: kernels.Params{Size: 1000, Variant: "cub"}, Want: engine.ErrUnsupported},
	}...))
	in, err := op.Split(t.Context(), devs, ok, kernels.SplitOptions{Fractions: kerneltest.SplitFractions(len(devs))[0]})
	if err != nil {
		t.Fatal(err)
	}
	kerneltest.CheckSplitLifecycle(t, in, "swapping two values", func() {
		s := in.(*sortSplitInstance[uint32])
		s.outVals[0], s.outVals[1] = s.outVals[1], s.outVals[0]
	})
}
