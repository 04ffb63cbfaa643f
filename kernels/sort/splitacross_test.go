package sort

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestSortLast sorts keys, alone and with values, with Sorter.sortToLast and sortLast, the
// last pass splitting the sorted keys between two buffers at offsets (as a sharded sort's
// last pass writes into two devices' landing buffers, here both on one device), and checks
// each buffer's range against the host's stable sort bit for bit, every element outside
// the ranges untouched, and the input as it was: one key to several tiles a work-group,
// cuts at 0, n and between, float32 special values, both orders. Cuts past n are refused.
func TestSortLast(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("uint32", func(t *testing.T) { testSortLast[uint32](t, dev, q) })
		t.Run("float32", func(t *testing.T) { testSortLast[float32](t, dev, q) })
	})
}

func testSortLast[K SortKey](t *testing.T, dev *engine.Device, q *engine.Queue) {
	wg, items := 256, sortItems
	if kerneltest.Small() { // Oclgrind: small tiles, fewer simulated work-items
		wg, items = 64, 4
	}
	s, err := newSorter[K](dev, wg, items)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tile := s.Tile()
	sizes := []int{1, 7, tile + 1, s.maxGroups*tile + 5}
	_, isFloat := any(*new(K)).(float32)
	if isFloat && kerneltest.Small() {
		sizes = sizes[:3] // the float map is one kernel argument: uint32 covers the sizes
	}
	if err := s.Reserve(sizes[len(sizes)-1], true); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(31, 32))
	for si, n := range sizes {
		pats := sortPatterns[K](rng, n, false)
		for pi, pat := range []string{"random", "dups", "specials"} {
			keys, ok := pats[pat]
			if !ok {
				continue
			}
			for ci, cut := range []int{0, n, rng.IntN(n + 1)} {
				if kerneltest.Small() && ci != (si+pi)%3 {
					continue // Oclgrind: one cut a pattern, in turn
				}
				order := []SortOrder{Ascending, Descending}[(si+ci)%2]
				pairs := (si+pi+ci)%2 == 0
				name := fmt.Sprintf("n=%d/%s/cut=%d/%s/pairs=%v", n, pat, cut, order, pairs)
				checkSortLast(t, s, q, name, keys, cut, 3+ci, 5*pi, order, pairs)
			}
		}
	}
	src := kerneltest.Guarded(t, q, make([]K, 10))
	tmp := kerneltest.NewBuffer[K](t, dev, 10)
	if err := s.sortToLast(q, tmp, src, nil, nil, 10, Ascending); err != nil {
		t.Fatal(err)
	}
	if err := s.sortLast(q, tmp, src, nil, nil, 10, Ascending, splitOut{lo: tmp, hi: tmp, cut: 11}); err == nil {
		t.Error("a cut past the keys: no error")
	}
	if err := s.sortToLast(q, src, src, nil, nil, 10, Ascending); err == nil {
		t.Error("the passes' buffer is the input: no error")
	}
}

// checkSortLast sorts keys (values 0..n-1 alongside where pairs) split at cut into two
// buffers, the first cut keys at loOff of one, the rest at hiOff of the other, and checks
// them.
func checkSortLast[K SortKey](t *testing.T, s *Sorter[K], q *engine.Queue, name string, keys []K, cut, loOff, hiOff int, order SortOrder, pairs bool) {
	t.Helper()
	n := len(keys)
	idx := make([]uint32, n)
	for i := range idx {
		idx[i] = uint32(i)
	}
	var vals []uint32
	if pairs {
		vals = idx
	}
	wantK, wantV := SortPairsRef(keys, vals, order)
	src := kerneltest.Guarded(t, q, keys)
	tmp := kerneltest.NewBuffer[K](t, q.Device(), n)
	// lo holds loOff sentinels, its cut keys and the guard band; hi likewise.
	lo := kerneltest.Guarded(t, q, sentinels[K](loOff+cut))
	hi := kerneltest.Guarded(t, q, sentinels[K](hiOff+n-cut))
	out := splitOut{lo: lo, hi: hi, cut: cut, loOff: loOff, hiOff: hiOff}
	var vsrc, vtmp, vlo, vhi *engine.Buffer[uint32]
	if pairs {
		vsrc, vtmp = kerneltest.Guarded(t, q, idx), kerneltest.NewBuffer[uint32](t, q.Device(), n)
		vlo, vhi = kerneltest.Guarded(t, q, sentinels[uint32](loOff+cut)), kerneltest.Guarded(t, q, sentinels[uint32](hiOff+n-cut))
		out.vlo, out.vhi = vlo, vhi
	}
	if err := s.sortToLast(q, tmp, src, vtmp, vsrc, n, order); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := s.sortLast(q, tmp, src, vtmp, vsrc, n, order, out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	check := func(what string, b *engine.Buffer[K], off, from, to int) {
		got := kerneltest.Download(t, q, name+" "+what, b, off+to-from)
		for i := range off {
			if !kerneltest.IsSentinel(got[i]) {
				t.Fatalf("%s: %s: element %d before the offset %d was written", name, what, i, off)
			}
		}
		if err := CheckSortedKeys(name+" "+what, got[off:], wantK[from:to]); err != nil {
			t.Fatal(err)
		}
	}
	check("low keys", lo, loOff, 0, cut)
	check("high keys", hi, hiOff, cut, n)
	if pairs {
		for _, c := range []struct {
			what          string
			b             *engine.Buffer[uint32]
			off, from, to int
		}{{"low values", vlo, loOff, 0, cut}, {"high values", vhi, hiOff, cut, n}} {
			got := kerneltest.Download(t, q, name+" "+c.what, c.b, c.off+c.to-c.from)
			if err := kernels.CheckEqual(name+" "+c.what, got, append(sentinels[uint32](c.off), wantV[c.from:c.to]...)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := CheckSortedKeys(name+" input", kerneltest.Download(t, q, name+" input", src, n), keys); err != nil {
		t.Fatal(err)
	}
}

// sentinels returns n sentinels of T.
func sentinels[T kerneltest.Element](n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = kerneltest.Sentinel[T]()
	}
	return s
}

// TestSortBelow counts the keys a splitter keeps below it with Sorter.below (sort_below)
// and checks the count against the host's: splitters at keys that occur, with position
// limits from 0 to past the end (equal keys divided), below every key and past every key,
// random and few distinct keys, float32 special values, both orders, one key to several
// groups' worth.
func TestSortBelow(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("uint32", func(t *testing.T) { testSortBelow[uint32](t, dev, q) })
		t.Run("float32", func(t *testing.T) { testSortBelow[float32](t, dev, q) })
	})
}

func testSortBelow[K SortKey](t *testing.T, dev *engine.Device, q *engine.Queue) {
	s, err := NewSorter[K](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(33, 34))
	sizes := []int{1, 5, s.WorkGroup() + 1, 100003}
	if kerneltest.Small() {
		sizes = sizes[:3]
	}
	for _, n := range sizes {
		pats := sortPatterns[K](rng, n, false)
		for _, pat := range []string{"random", "dups", "specials"} {
			keys, ok := pats[pat]
			if !ok {
				continue
			}
			src := kerneltest.Guarded(t, q, keys)
			for _, order := range []SortOrder{Ascending, Descending} {
				for c := range 6 {
					key, lim := SortMapKey(keys[rng.IntN(n)], order), uint32(rng.IntN(n+2))
					switch c {
					case 0:
						key, lim = 0, 0 // nothing below
					case 1:
						key, lim = ^uint32(0), ^uint32(0) // everything below
					case 2:
						lim = ^uint32(0)
					}
					want := 0
					for i, k := range keys {
						if mk := SortMapKey(k, order); mk < key || mk == key && uint32(i) < lim {
							want++
						}
					}
					got, err := s.below(t.Context(), q, src, n, key, lim, order)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Fatalf("n=%d %s %s: below (%#x, %d): %d keys, want %d", n, pat, order, key, lim, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkShardedSort sorts 2^27 random uint32 keys split evenly over the first two CUDA
// devices and resident there with ShardedSort, across in the last pass (the default) and
// by the merge from the runs (mergeFirst), and the same keys on the first device alone
// with the sort the one-device op uses (Sorter): the ratio is what two devices gain. A
// sort ends when both devices have finished. It skips with fewer than two CUDA devices.
func BenchmarkShardedSort(b *testing.B) {
	devs, qs := twoCUDADevices(b)
	ctx := b.Context()
	const n = 1 << 27
	rng := rand.New(rand.NewPCG(5, 6))
	keys := make([]uint32, n)
	for i := range keys {
		keys[i] = rng.Uint32()
	}
	sk, err := shard.Scatter(ctx, qs[:], keys, shard.ByRows(1), shard.Even(n, 2))
	if err != nil {
		b.Fatal(err)
	}
	defer sk.Close()
	s, err := NewShardedSort[uint32](devs[:])
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	timed := func(b *testing.B, run func() error) {
		for i := range b.N + 1 {
			if i == 1 {
				b.ResetTimer()
			}
			if err := run(); err != nil {
				b.Fatal(err)
			}
			for _, q := range qs {
				if err := q.Finish(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for _, mergeFirst := range []bool{false, true} {
		b.Run(acrossPath(mergeFirst), func(b *testing.B) {
			s.mergeFirst = mergeFirst
			timed(b, func() error {
				out, _, err := s.Sort(ctx, sk, nil, Ascending)
				if err != nil {
					return err
				}
				return out.Close()
			})
		})
	}
	b.Run("one", func(b *testing.B) {
		src, err := engine.Upload(ctx, qs[0], keys)
		if err != nil {
			b.Fatal(err)
		}
		defer src.Close()
		dst, err := engine.NewBuffer[uint32](devs[0], n)
		if err != nil {
			b.Fatal(err)
		}
		defer dst.Close()
		timed(b, func() error { return s.sorters[0].Keys(qs[0], dst, src, n, Ascending) })
	})
}
