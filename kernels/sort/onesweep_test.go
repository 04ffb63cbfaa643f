package sort

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestOnesweep runs the cuda-onesweep sort on every CUDA device: every key pattern, both
// orders, keys and pairs, in place, at sizes around a warp's keys, a tile and several
// tiles, against the host reference bit for bit with guard bands (checkSort); a second sort
// with the same Onesweep checks that the scratch is cleared between sorts. Other devices
// must refuse it with ErrUnsupported.
func TestOnesweep(t *testing.T) {
	refuse := func(dev *engine.Device) error {
		s, err := NewOnesweep[uint32](dev)
		if err == nil {
			s.Close()
		}
		return err
	}
	kerneltest.ForEachCUDADevice(t, "the cuda-onesweep sort", refuse, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("uint32", func(t *testing.T) { testOnesweep[uint32](t, dev, q) })
		t.Run("float32", func(t *testing.T) { testOnesweep[float32](t, dev, q) })
	})
}

func testOnesweep[K SortKey](t *testing.T, dev *engine.Device, q *engine.Queue) {
	// Both rankings (RANK), at the default's tile.
	for _, tu := range []OnesweepTunables{onesweepDefault, {onesweepItems, onesweepMinBlocks, 1 - onesweepRank}} {
		t.Run(strings.ReplaceAll(tu.String(), " ", "/"), func(t *testing.T) { testOnesweepWith[K](t, dev, q, tu) })
	}
}

func testOnesweepWith[K SortKey](t *testing.T, dev *engine.Device, q *engine.Queue, tu OnesweepTunables) {
	s, err := newOnesweep[K](dev, tu)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const warpKeys = 32 * onesweepItems
	sizes := []int{1, 2, 31, 33, warpKeys - 1, warpKeys + 1, onesweepTile - 1, onesweepTile, onesweepTile + 1,
		3*onesweepTile + 5, 1<<20 + 3, 1<<24 + 1}
	rng := rand.New(rand.NewPCG(5, 8))
	for _, n := range sizes {
		big := n > 1<<16
		pats := sortPatterns[K](rng, n, big)
		for _, name := range []string{"random", "dups", "equal", "sorted", "reversed", "specials"} {
			keys, ok := pats[name]
			if !ok {
				continue
			}
			for _, order := range []SortOrder{Ascending, Descending} {
				for _, pairs := range []bool{false, true} {
					if big && !(name == "random" && order == Ascending || name == "dups" && order == Descending && pairs) {
						continue
					}
					t.Run(fmt.Sprintf("n=%d/%s/%s/pairs=%v", n, name, order, pairs), func(t *testing.T) {
						checkSort(t, s, q, keys, order, pairs, false)
						if n < 1<<20 { // again: the scratch is cleared for every sort
							checkSort(t, s, q, keys, order, pairs, false)
						}
					})
				}
			}
		}
	}
	n := 3*onesweepTile + 5
	keys := sortPatterns[K](rng, n, true)["dups"]
	t.Run(fmt.Sprintf("n=%d/inplace", n), func(t *testing.T) { checkSort(t, s, q, keys, Descending, true, true) })
	if err := s.Keys(q, kerneltest.Guarded(t, q, make([]K, 8)), kerneltest.Guarded(t, q, make([]K, 8)), MaxOnesweepLen+1, Ascending); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("a sort of %d keys: %v, want ErrInvalidArg", MaxOnesweepLen+1, err)
	}
}

// BenchmarkOnesweep times the onesweep sort of 16M uint32 pairs on each CUDA device in
// several shapes (keys per thread, register budget), and the portable sort beside it: bytes are those of
// OnesweepModel for all three, so that their rates compare as their times do.
func BenchmarkOnesweep(b *testing.B) {
	kerneltest.ForEachBenchDevice(b, "cuda", func(b *testing.B, id string, dev *engine.Device, q *engine.Queue) {
		const n = 1 << 24
		rng := rand.New(rand.NewPCG(1, 2))
		keys, vals := make([]uint32, n), make([]uint32, n)
		for i := range keys {
			keys[i], vals[i] = rng.Uint32(), uint32(i)
		}
		wantK, wantV := SortPairsRef(keys, vals, Ascending)
		bufs := make([]*engine.Buffer[uint32], 4)
		for i, data := range [][]uint32{keys, vals, keys, vals} {
			var err error
			if bufs[i], err = engine.Upload(b.Context(), q, data); err != nil {
				b.Fatal(err)
			}
		}
		sorters := []struct {
			name string
			make func() (sorter[uint32], error)
		}{
			{"portable", func() (sorter[uint32], error) { return NewSorter[uint32](dev) }},
		}
		for _, t := range []OnesweepTunables{{16, 1, 0}, {16, 4, 0}, {12, 5, 0}, {8, 6, 0}, {16, 4, 1}, {16, 3, 1}, {12, 5, 1}, {18, 3, 1}} {
			sorters = append(sorters, struct {
				name string
				make func() (sorter[uint32], error)
			}{"onesweep/" + strings.ReplaceAll(t.String(), " ", "/"), func() (sorter[uint32], error) { return newOnesweep[uint32](dev, t) }})
		}
		for _, c := range sorters {
			b.Run(id+"/"+c.name, func(b *testing.B) {
				s, err := c.make()
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				b.SetBytes(int64(OnesweepModel(n, true).Bytes))
				for i := 0; i < b.N+1; i++ {
					if i == 1 { // the first sort builds, allocates and captures
						if err := q.Finish(b.Context()); err != nil {
							b.Fatal(err)
						}
						b.ResetTimer()
					}
					if err := s.Pairs(q, bufs[2], bufs[0], bufs[3], bufs[1], n, Ascending); err != nil {
						b.Fatal(err)
					}
				}
				if err := q.Finish(b.Context()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				gotK, err := bufs[2].Download(b.Context(), q)
				if err == nil {
					err = CheckSortedKeys("keys", gotK[:n], wantK)
				}
				if err != nil {
					b.Fatal(err)
				}
				gotV, err := bufs[3].Download(b.Context(), q)
				if err == nil {
					err = kernels.CheckEqual("values", gotV[:n], wantV)
				}
				if err != nil {
					b.Fatal(err)
				}
			})
		}
		for _, buf := range bufs {
			buf.Close()
		}
	})
}

// TestOnesweepTunables checks that onesweep's candidates read back as written, and that
// malformed tunables are refused with ErrInvalidArg naming the problem.
func TestOnesweepTunables(t *testing.T) {
	for _, c := range onesweepCandidates {
		if got, err := ParseOnesweepTunables(c.String()); err != nil || got != c {
			t.Errorf("ParseOnesweepTunables(%q) = %v, %v", c.String(), got, err)
		}
	}
	// A set written before RANK (a tuning file's) takes the default ranking.
	if got, err := ParseOnesweepTunables("ITEMS=12 MINBLOCKS=5"); err != nil || got != (OnesweepTunables{12, 5, onesweepRank}) {
		t.Errorf("ParseOnesweepTunables(\"ITEMS=12 MINBLOCKS=5\") = %v, %v; want RANK=%d", got, err, onesweepRank)
	}
	for _, c := range []struct{ in, want string }{
		{"ITEMS=16", "want all of ITEMS, MINBLOCKS"},
		{"ITEMS=20 MINBLOCKS=4", "ITEMS=20 is out of its range 4..18"},
		{"ITEMS=16 MINBLOCKS=0", "MINBLOCKS=0 is out of its range 1..8"},
		{"ITEMS=16 MINBLOCKS=4 BLOCK=128", "unknown key BLOCK"},
		{"ITEMS=16 MINBLOCKS=4 RANK=2", "RANK=2 is out of its range 0..1"},
		{"ITEMS=16 MINBLOCKS=4 RANK=-1", "RANK=-1 is out of its range 0..1"},
		{"ITEMS=4 MINBLOCKS=4 RANK=1", "RANK=1 needs ITEMS of at least 8"},
	} {
		if _, err := ParseOnesweepTunables(c.in); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseOnesweepTunables(%q) = %v; want ErrInvalidArg saying %q", c.in, err, c.want)
		}
	}
}
