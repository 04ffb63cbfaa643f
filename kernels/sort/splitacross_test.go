package sort

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// sentinels returns n sentinels of T.
func sentinels[T kerneltest.Element](n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = kerneltest.Sentinel[T]()
	}
	return s
}

// BenchmarkShardedSort sorts 2^27 random uint32 keys split evenly over the first two CUDA
// devices and resident there with ShardedSort, across in the first pass (the default, and
// that pass partitioning alone or sorting a digit too) and by the merge from the runs
// (acrossPaths), and the same keys on the first device alone
// with the sort the one-device op uses (onesweep): the ratio is what two devices gain. A
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
	for _, path := range acrossPaths {
		b.Run(path.name, func(b *testing.B) {
			s.mergeFirst, s.crossBits = path.mergeFirst, path.crossBits
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
		one := pickSorter(s.sorters[0], s.runners[0], n) // the one-device op's: onesweep on CUDA
		timed(b, func() error { return one.Keys(qs[0], dst, src, n, Ascending) })
	})
}

// TestCrossPass sorts two parts of keys with the crossing pass and the passes after it
// (crossCount, crossStarts, crossSides, crossScatter, passesAfterCross), as
// sortAcross does on two devices, here with two Sorters of one device: the keys the
// splitter keeps below it must land, sorted, in the first sorter's result and the rest in
// the second's, the two together the host's sort of both parts bit for bit, the guard
// bands untouched and the inputs as they were. Splitters below every key, past every key,
// at a drawn key with its position (equal keys divided), and the one sort_pick picks from
// the parts' samples (crossPick, checked against pickRef's); parts of
// one key to several tiles a work-group, even and not; random, few distinct and equal
// keys, float32 special values, both orders.
//
// Each key type runs on a device of its own opening. On one device the float32 sorters'
// key scratch took memory that the uint32 cases had written from the host (their guarded
// inputs and results, closed with those cases), and Oclgrind 21.10's --uninitialized
// keeps one record of a buffer's initialized bytes per allocation, sized by the last write
// from the host and kept when the memory is closed and handed out again (by the pool, or
// by Oclgrind to a new buffer): the scratch's words past that write were reported
// uninitialized when the passes after the crossing one read them (sort_count's counters
// indexed by them), though the crossing scatter had written them and the keys checked.
// Within one key type every buffer written from the host stays open to its end, so that
// no kernel's buffer takes such memory; a device opened anew starts a new context, whose
// records start empty.
func TestCrossPass(t *testing.T) {
	t.Run("uint32", func(t *testing.T) { kerneltest.ForEachDevice(t, testCrossPass[uint32]) })
	t.Run("float32", func(t *testing.T) { kerneltest.ForEachDevice(t, testCrossPass[float32]) })
}

func testCrossPass[K SortKey](t *testing.T, dev *engine.Device, q *engine.Queue) {
	wg, items := 256, sortItems
	if kerneltest.Small() { // Oclgrind: small tiles, fewer simulated work-items
		wg, items = 64, 4
	}
	var srt [2]*Sorter[K]
	for i := range srt {
		s, err := newSorter[K](dev, wg, items)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		srt[i] = s
	}
	// The onesweep sort's passes after the crossing one, where the device has it (CUDA).
	var osw *Onesweep[K]
	if run, err := newRunSorter[K](dev); err != nil {
		t.Fatal(err)
	} else if run != nil {
		defer run.Close()
		osw = run.(*Onesweep[K])
	}
	tile := srt[0].Tile()
	sizes := [][2]int{{1, 1}, {7, 3}, {tile + 1, tile - 1}, {srt[0].maxGroups*tile + 5, 2*tile + 3}}
	if osw != nil { // parts of many onesweep tiles, and the last of them short
		sizes = append(sizes, [2]int{5*onesweepTile + 7, 3*onesweepTile - 1})
	}
	_, isFloat := any(*new(K)).(float32)
	if kerneltest.Small() {
		sizes = sizes[:3]
	}
	// Rusticl (Slow) takes Oclgrind's selection of splitters, passes after and digit
	// widths at every size (40 s there, 3 on PoCL, which runs every combination).
	spot := kerneltest.Spot(dev)
	rng := rand.New(rand.NewPCG(35, 36))
	for si, n := range sizes {
		pats := [2]map[string][]K{sortPatterns[K](rng, n[0], false), sortPatterns[K](rng, n[1], false)}
		for pi, pat := range []string{"random", "dups", "equal", "specials"} {
			if _, ok := pats[0][pat]; !ok {
				continue
			}
			keys := [2][]K{pats[0][pat], pats[1][pat]}
			order := []SortOrder{Ascending, Descending}[(si+pi)%2]
			drawn := [2][]K{}
			for i := range 2 {
				m := min(n[i], srt[0].crossSamples()/2)
				for g := range m {
					drawn[i] = append(drawn[i], keys[i][sampleAt(g, n[i], m, sampleSeed(i))])
				}
			}
			at := rng.IntN(2)
			pos := rng.IntN(n[at])
			splitters := map[string]place{
				"below all": beforeAll, "past all": afterAll,
				"drawn":   {key: SortMapKey(keys[at][pos], order), part: at, pos: pos},
				"sampled": pickRef(drawn[:], []int{n[0], n[1]}, order),
			}
			for sname, sp := range splitters {
				if spot && isFloat && sname != "drawn" {
					continue // the float map is one kernel argument: uint32 covers the splitters
				}
				name := fmt.Sprintf("n=%v/%s/%s/%s", n, pat, sname, order)
				pick := kerneltest.Guarded(t, q, pickWords(sp))
				if sname == "sampled" && !kerneltest.Small() { // the device's own pick, from the samples (TestCrossPick's under Oclgrind)
					pick = devicePick(t, srt[0], q, name, drawn, n, order, sp)
				}
				// Under Oclgrind and on Rusticl the passes after run for one splitter of the largest
				// parts (they are sort.cl's passes, which TestSort runs there): the
				// landings are checked key for key against crossLandingRef for every
				// splitter.
				after := !spot || sname == "drawn" && si == len(sizes)-1
				// Both digit widths: a digit of sortRadixBits, and a partition alone,
				// after which only onesweep sorts (every bit). The pass is built again
				// for each; the splitter stays in pick.
				for _, bits := range []int{sortRadixBits, crossPartition} {
					if spot && bits == crossPartition && (si+pi)%2 == 1 {
						continue
					}
					for i := range srt {
						if err := srt[i].setCrossBits(bits); err != nil {
							t.Fatal(err)
						}
					}
					if sname == "sampled" && !kerneltest.Small() && bits == crossPartition {
						pick = devicePick(t, srt[0], q, name, drawn, n, order, sp) // the pass rebuilt: picked again
					}
					checkCrossPass(t, srt, osw, q, fmt.Sprintf("%s/bits=%d", name, bits), keys, pick, sp, order, after)
				}
				for i := range srt {
					if err := srt[i].setCrossBits(sortRadixBits); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

// pickWords returns splitter sp as crossPick writes it: (key, lim) of part 0, then of
// part 1 (bucketOf).
func pickWords(sp place) []uint32 {
	b0, b1 := bucketOf(sp, 0), bucketOf(sp, 1)
	return []uint32{b0.key, b0.lim, b1.key, b1.lim}
}

// devicePick runs crossPick on the samples drawn from two parts of n keys with srt and
// checks its splitter against want (pickRef's); it returns the buffer it is in.
func devicePick[K SortKey](t *testing.T, srt *Sorter[K], q *engine.Queue, name string, drawn [2][]K, n [2]int, order SortOrder, want place) *engine.Buffer[uint32] {
	t.Helper()
	var smp [2]*engine.Buffer[K]
	for i := range 2 {
		smp[i] = kerneltest.Guarded(t, q, slices.Concat(drawn[i], []K{kerneltest.Sentinel[K]()})) // never empty
	}
	if err := srt.crossPick(q, smp[0], len(drawn[0]), n[0], smp[1], len(drawn[1]), n[1], order); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := kerneltest.Download(t, q, name+": the pick", srt.cross.picked, 4)
	if w := pickWords(want); !slices.Equal(got, w) {
		t.Fatalf("%s: sort_pick's splitter %v, want %v (%+v)", name, got, w, want)
	}
	return srt.cross.picked
}

// pickRef is sort_pick on the host, for the tests: the samples drawn from two parts of
// counts keys (sampleAt's positions, seeds sampleSeed(0) and (1)) in the order of their
// places, each weighing its part's keys times the other part's samples plus one; the
// first at which the weights reach part 0's keys times both parts' samples plus one.
func pickRef[K SortKey](drawn [][]K, counts []int, order SortOrder) place {
	if counts[0] == 0 {
		return beforeAll
	}
	all := append(placesOf(drawn[0], counts[0], 0, order), placesOf(drawn[1], counts[1], 1, order)...)
	slices.SortFunc(all, place.compare)
	m0, m1 := uint64(len(drawn[0])+1), uint64(len(drawn[1])+1)
	w := [2]uint64{uint64(counts[0]) * m1, uint64(counts[1]) * m0}
	need, reached := uint64(counts[0])*m0*m1, uint64(0)
	for _, p := range all {
		if reached += w[p.part]; reached >= need {
			return p
		}
	}
	return afterAll
}

// checkCrossPass runs the crossing pass of the two parts' keys across the splitter sp,
// whose words (pickWords) are in pick, with the two sorters, and checks the landings key for
// key against crossLandingRef, with too little room and with enough; with after, it then
// sorts each landing with the passes after (the Sorter's, and osw's where it is not nil) and
// checks the result (TestCrossPass).
func checkCrossPass[K SortKey](t *testing.T, srt [2]*Sorter[K], osw *Onesweep[K], q *engine.Queue, name string, keys [2][]K, pick *engine.Buffer[uint32], sp place, order SortOrder, after bool) {
	t.Helper()
	all := append(append([]K(nil), keys[0]...), keys[1]...)
	want := SortRef(all, order)
	below := 0
	for i := range 2 {
		b := bucketOf(sp, i)
		for p, k := range keys[i] {
			if mk := SortMapKey(k, order); mk < b.key || mk == b.key && uint32(p) < b.lim {
				below++
			}
		}
	}
	var src [2]*engine.Buffer[K]
	var starts [2][]uint32
	for i := range 2 {
		src[i] = kerneltest.Guarded(t, q, keys[i])
		if err := srt[i].crossCount(q, src[i], len(keys[i]), order, pick, 2*i); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var err error
		if starts[i], err = srt[i].crossStarts(t.Context(), q, len(keys[i])); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	side := crossSides(starts)
	if side[0] != below || side[1] != len(all)-below {
		t.Fatalf("%s: sides of %d and %d keys, want %d and %d", name, side[0], side[1], below, len(all)-below)
	}
	land := crossLandingRef(keys, sp, order, srt[0].crossDigitBits())
	checkLanding := func(j, room int) {
		t.Helper()
		what := fmt.Sprintf("%s: landing %d of room %d for %d keys", name, j, room, side[j])
		got := kerneltest.Download(t, q, what, srt[j].keyScratch, max(room, 1))
		for o := range min(room, side[j]) {
			if b := keyBits(got[o]); b != land[j][o] {
				t.Fatalf("%s: position %d holds %#x, want %#x", what, o, b, land[j][o])
			}
		}
	}
	scatter := func(room [2]int) {
		t.Helper()
		for j := range 2 { // landings of exactly the room, guarded
			if err := srt[j].keyScratch.Close(); err != nil {
				t.Fatal(err)
			}
			srt[j].keyScratch = kerneltest.Guarded(t, q, sentinels[K](max(room[j], 1)))
		}
		for i := range 2 {
			w := crossWay{part: i, pick: pick, other: srt[1-i].crossTable(), otherN: len(keys[1-i]), lo: srt[0].keyScratch, hi: srt[1].keyScratch, room: room}
			if err := srt[i].crossScatter(q, src[i], len(keys[i]), order, w); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	if side[0] > 1 || side[1] > 1 {
		// Landings with less room than the sides (as sortAcross's can be, before it runs
		// the pass again): the keys past the room are not written.
		short := [2]int{side[0] / 2, side[1] / 2}
		scatter(short)
		for j := range 2 {
			checkLanding(j, short[j])
		}
	}
	scatter(side)
	for j := range 2 {
		checkLanding(j, side[j])
	}
	if !after {
		return
	}
	from := 0
	for j := range 2 {
		if osw != nil { // first: the Sorter's passes after use the landing as their scratch
			dst := kerneltest.Guarded(t, q, sentinels[K](side[j]))
			if err := osw.afterCross(q, dst, srt[j].keyScratch, side[j], order, srt[j].crossDigitBits()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := kerneltest.Download(t, q, name, dst, side[j])
			if err := CheckSortedKeys(fmt.Sprintf("%s: device %d's keys, onesweep after", name, j), got, want[from:from+side[j]]); err != nil {
				t.Fatal(err)
			}
			checkLanding(j, side[j]) // only read
		}
		dst := kerneltest.Guarded(t, q, sentinels[K](side[j]))
		if srt[j].crossDigitBits() != sortRadixBits { // a partition: sort.cl's passes after do not take it
			if err := srt[j].passesAfterCross(q, dst, side[j], order); side[j] > 0 && !errors.Is(err, engine.ErrUnsupported) {
				t.Fatalf("%s: sort.cl's passes after a partition: %v, want ErrUnsupported", name, err)
			}
			from += side[j]
			continue
		}
		if err := srt[j].passesAfterCross(q, dst, side[j], order); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := kerneltest.Download(t, q, name, dst, side[j])
		if err := CheckSortedKeys(fmt.Sprintf("%s: device %d's keys", name, j), got, want[from:from+side[j]]); err != nil {
			t.Fatal(err)
		}
		from += side[j]
	}
	for i := range 2 {
		if err := CheckSortedKeys(fmt.Sprintf("%s: input %d", name, i), kerneltest.Download(t, q, name, src[i], len(keys[i])), keys[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// crossLandingRef returns what the crossing pass leaves in each device's landing for the
// parts' keys and splitter sp (crossWay): the mapped keys of each side, by digit 0, within
// a digit part 0's before part 1's, each part's in their input order.
func crossLandingRef[K SortKey](keys [2][]K, sp place, order SortOrder, bits int) [2][]uint32 {
	half := 1 << bits         // a side's buckets
	var buckets [2][][]uint32 // part, bucket (side, digit)
	for i := range 2 {
		buckets[i] = make([][]uint32, 2*half)
		b := bucketOf(sp, i)
		for p, k := range keys[i] {
			mk := SortMapKey(k, order)
			side := 1
			if mk < b.key || mk == b.key && uint32(p) < b.lim {
				side = 0
			}
			d := side*half + int(mk&uint32(half-1))
			buckets[i][d] = append(buckets[i][d], mk)
		}
	}
	var land [2][]uint32
	for d := range 2 * half {
		for i := range 2 {
			land[d/half] = append(land[d/half], buckets[i][d]...)
		}
	}
	return land
}

// TestCrossPick checks sort_pick's splitter (crossPick) against pickRef's from the same
// samples, on every device: random keys, few distinct keys, all equal, float32 keys of both
// signs, even and uneven parts, a part of one key, no keys in part 0, part 1 too small to
// reach part 0's count (every key below), both orders. (pickSplitters, the merge path's
// pick, sums the same weights in float64, which can reach a count one sample late.)
func TestCrossPick(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		wg, items := 256, sortItems
		if kerneltest.Small() {
			wg, items = 64, 4
		}
		su, err := newSorter[uint32](dev, wg, items)
		if err != nil {
			t.Fatal(err)
		}
		defer su.Close()
		sf, err := newSorter[float32](dev, wg, items)
		if err != nil {
			t.Fatal(err)
		}
		defer sf.Close()
		rng := rand.New(rand.NewPCG(37, 38))
		sets, pats := [][2]int{{1 << 26, 1 << 26}, {1000, 300000}, {1, 5000}, {0, 4000}, {70000, 1}, {2047, 2047}}, []string{"random", "dups", "equal", "float"}
		if kerneltest.Small() { // Oclgrind: a simulated work-group sorts 2048 samples a pick
			sets, pats = [][2]int{{1 << 26, 1 << 26}, {70000, 1}}, []string{"dups", "float"}
		}
		for _, counts := range sets {
			for pi, pat := range pats {
				for oi, order := range []SortOrder{Ascending, Descending} {
					if kerneltest.Small() && (pi+oi)%2 == 1 {
						continue
					}
					var drawn [2][]uint32
					for i := range 2 {
						for range min(counts[i], su.crossSamples()/2) {
							k := rng.Uint32()
							switch pat {
							case "dups":
								k %= 5
							case "equal":
								k = 7
							case "float":
								k = math.Float32bits(float32(rng.NormFloat64()))
							}
							drawn[i] = append(drawn[i], k)
						}
					}
					name := fmt.Sprintf("%v/%s/%s", counts, pat, order)
					want := pickRef(drawn[:], counts[:], order)
					if pat != "float" {
						devicePick(t, su, q, name, drawn, counts, order, want)
						continue
					}
					var df [2][]float32
					for i := range 2 {
						for _, k := range drawn[i] {
							df[i] = append(df[i], math.Float32frombits(k))
						}
					}
					devicePick(t, sf, q, name, df, counts, order, pickRef(df[:], counts[:], order))
				}
			}
		}
	})
}

// placesOf returns the places of part i's samples drawn from its n keys (at sampleAt's
// positions, seed sampleSeed(i)), in order.
func placesOf[K SortKey](drawn []K, n, i int, order SortOrder) []place {
	// The places of one part order as (mapped key, position): one word each, sorted.
	packed := make([]uint64, len(drawn))
	for g, k := range drawn {
		packed[g] = uint64(SortMapKey(k, order))<<32 | uint64(sampleAt(g, n, len(drawn), sampleSeed(i)))
	}
	slices.Sort(packed)
	places := make([]place, len(packed))
	for g, w := range packed {
		places[g] = place{key: uint32(w >> 32), part: i, pos: int(uint32(w))}
	}
	return places
}

// bucketOf returns splitter sp as the crossing pass takes it for the keys of part i
// (sort.cl's SPLIT: a key is below it where its mapped key is below key, or equal to key
// at a position of the part below lim): a key of part i equal to the splitter's stays
// below it when part i precedes the splitter's part, or is its part and the key lies at
// or before the splitter's own position.
func bucketOf(sp place, i int) struct{ key, lim uint32 } {
	var lim uint32 // part i after sp's: no equal key stays below
	switch {
	case i < sp.part:
		lim = math.MaxUint32
	case i == sp.part:
		lim = uint32(sp.pos + 1)
	}
	return struct{ key, lim uint32 }{sp.key, lim}
}

// crossSamples returns the samples of both parts that s's crossPick takes, at most (0
// where its crossing pass cannot be built).
func (s *Sorter[K]) crossSamples() int {
	c, err := s.crossKernels()
	if err != nil {
		return 0
	}
	return c.samples
}
