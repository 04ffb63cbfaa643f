package sort

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/platform"
)

// TestSortSplitSharded sets the sort ops up on sharded data (the keys, and values for pairs,
// scattered by rows; each run sorting them where they lie and leaving them there by key
// range) and checks them as kerneltest.CheckSplitSharded does: placement said, no verify
// before a run, verified after each of two runs (Verify gathers the parts in device order
// and compares with the host sort bit for bit), each device's predicted time alone in
// measured shares. Sizes of 1 and 7 keys leave a device nothing; a size of 0 is refused.
func TestSortSplitSharded(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	smallSplitTiles(t)
	cases := []kerneltest.ShardedCase{
		{Op: "sort/keys/uint32", Size: 100003, Frac: []float64{0.5, 0.5}},
		{Op: "sort/pairs/uint32", Size: 100003, Frac: []float64{0.13, 0.87}},
		{Op: "sort/keys/float32", Size: 1000, Frac: []float64{0.5, 0.5}},
		{Op: "sort/desc/float32", Size: 7, Frac: []float64{0, 1}},
		{Op: "sort/pairs/uint32", Size: 1, Frac: []float64{1, 0}},
		{Op: "sort/desc/float32", Size: 100003},
	}
	if kerneltest.Small() { // Oclgrind: small sizes
		cases = []kerneltest.ShardedCase{{Op: "sort/pairs/uint32", Size: 3*64*4 + 5, Frac: []float64{0.5, 0.5}}}
	}
	kerneltest.CheckSplitSharded(t, Family(), devs, cases)
	_, err := Family().Ops[0].Split(t.Context(), devs, kernels.Params{}, kernels.SplitOptions{Placement: kernels.PlaceSharded})
	if !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("size 0 on sharded data: %v, want invalid argument", err)
	}
}

// TestSortSplitShardedKeys runs the split on sharded data over keys chosen to find order
// faults: float32 keys with both zeros, NaNs of both signs and payloads, infinities and
// subnormals, ascending and descending, and uint32 pairs of few distinct keys (stability
// across parts), at a size that gives both devices a part. Verify must catch a key changed
// on a device; a closed instance refuses to run.
func TestSortSplitShardedKeys(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	smallSplitTiles(t)
	s, err := newSorter[uint32](devs[0], splitGroup[0], splitGroup[1])
	if err != nil {
		t.Fatal(err)
	}
	n := 3*s.Tile() + 5
	s.Close()
	frac := kerneltest.Evenly(len(devs))
	o := kernels.SplitOptions{Fractions: frac, Placement: kernels.PlaceSharded}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, order := range []SortOrder{Ascending, Descending} {
		t.Run("float32/"+order.String(), func(t *testing.T) {
			in, err := setupSortSplitKeys(t.Context(), "sort/keys/float32", false, order, devs, kernels.Params{Size: n}, o, specialFloats(rng, n))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			checkShardedRuns(t, in)
		})
	}
	t.Run("pairs/uint32/few keys", func(t *testing.T) {
		keys := make([]uint32, n)
		for i := range keys {
			keys[i] = uint32(rng.IntN(4))
		}
		in, err := setupSortSplitKeys(t.Context(), "sort/pairs/uint32", true, Ascending, devs, kernels.Params{Size: n}, o, keys)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		checkShardedRuns(t, in)
		// A key changed on the device that holds the last range: Verify gathers and sees it.
		parts := in.sout.Parts()
		last := parts[len(parts)-1]
		if err := last.Buf.Write(t.Context(), last.Queue, last.Len-1, []uint32{7}); err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(t.Context()); !errors.Is(err, kernels.ErrVerify) {
			t.Errorf("verify after a key changed on %s: %v, want a verify error", last.Queue.Device().ID(), err)
		}
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		if err := in.Run(t.Context()); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("run after close: %v, want closed", err)
		}
		if err := in.Verify(t.Context()); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("verify after close: %v, want closed", err)
		}
	})
}

// checkShardedRuns runs in twice, verifying each, and checks that every device of the
// scatter held a part of the input and of the result.
func checkShardedRuns[K SortKey](t *testing.T, in *sortSplitInstance[K]) {
	t.Helper()
	for range 2 {
		if err := in.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if c := in.skeys.Counts(); len(c) < 2 {
		t.Fatalf("input over %v: want a part on every device", c)
	}
	for i, c := range in.sout.Counts() {
		if c == 0 {
			t.Errorf("device %d holds no key of the result (%v)", i, in.sout.Counts())
		}
	}
}

// specialFloats returns n float32 keys, half of them drawn from both zeros, NaNs of both
// signs (quiet and signalling payloads), infinities, subnormals and a few small values
// (many equal keys), the others random over many binades.
func specialFloats(rng *rand.Rand, n int) []float32 {
	nan := math.Float32frombits
	pool := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		nan(0x7fc00000), nan(0x7fc00001), nan(0xffc00000), nan(0x7f800001), nan(0xff800001),
		1e-45, -1e-45, -3.5, 7, 1, -1}
	keys := make([]float32, n)
	for i := range keys {
		if rng.IntN(2) == 0 {
			keys[i] = pool[rng.IntN(len(pool))]
		} else {
			keys[i] = float32(math.Ldexp(2*rng.Float64()-1, rng.IntN(40)-20))
		}
	}
	return keys
}

// shardedDevices returns the split devices, with the first opened once more where there
// are two (three parts: splitters between parts that neither begin nor end the order).
func shardedDevices(t *testing.T) []*engine.Device {
	devs := kerneltest.SplitDevices(t, false)
	if len(devs) == 2 {
		d, err := engine.Open(context.Background(), devs[0].ID())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		devs = append(devs, d)
	}
	return devs
}

// TestSplitShardedSort sorts keys scattered by rows with ShardedSort and checks, for each
// count of parts from 1 to the devices found (three at least), key type, order and layout
// of the parts (even, uneven, all on the first, all on the last), that the gathered result
// is the host's stable sort bit for bit (values too), that the input is left as it was,
// and that a second sort gives the same. Where the input is even and large, each device
// ends with about its part's count of keys, also when every key is equal (equal keys are
// divided between devices too, in input order).
func TestSplitShardedSort(t *testing.T) {
	if kerneltest.Small() {
		t.Skip("Oclgrind: the split tests of the family cover the sharded sort at small sizes")
	}
	devs := shardedDevices(t)
	qs := kerneltest.Queues(t, devs)
	su, err := NewShardedSort[uint32](devs)
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close()
	sf, err := NewShardedSort[float32](devs)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for p := 1; p <= len(devs); p++ {
		for _, n := range []int{1, 7, 1000, 100003} {
			layouts := map[string][]int{"even": shard.Even(n, p)}
			if p > 1 {
				layouts["first"], layouts["last"], layouts["uneven"] = oneHolds(n, p, 0), oneHolds(n, p, p-1), uneven(n, p)
			}
			for lname, counts := range layouts {
				name := fmt.Sprintf("p=%d/n=%d/%s", p, n, lname)
				balanced := lname == "even" && n == 100003
				uk := make([]uint32, n)
				for i := range uk {
					uk[i] = rng.Uint32()
				}
				checkShardedSort(t, name+"/uint32", su, qs[:p], uk, counts, Ascending, false, balanced)
				few := make([]uint32, n)
				for i := range few {
					few[i] = uint32(rng.IntN(3))
				}
				checkShardedSort(t, name+"/pairs few keys", su, qs[:p], few, counts, Descending, true, balanced)
				fk := specialFloats(rng, n)
				for _, o := range []SortOrder{Ascending, Descending} {
					checkShardedSort(t, name+"/float32 "+o.String(), sf, qs[:p], fk, counts, o, o == Descending, balanced)
				}
				if balanced {
					checkShardedSort(t, name+"/pairs equal keys", su, qs[:p], make([]uint32, n), counts, Ascending, true, true)
				}
			}
		}
	}
}

// TestSplitShardedSortPeer sorts with ShardedSort over CUDA devices, whose kernels reach
// each other's memory: keys alone over two devices that both hold keys cross in their
// sorts' first pass (sortAcross; with mergeFirst, and for pairs and more devices, the merge
// reads the pieces from the other devices' runs directly: mergeFromRuns), each path
// checked to be taken: the CUDA device and a second opening of it (two devices to the engine, one
// to the driver), and every other CUDA GPU found (three parts or more: merges of more than
// one pass). Keys alone and pairs, even and uneven parts, checked as TestSplitShardedSort
// checks them. Devices whose driver does not copy between two openings (OpenCL's) must
// take the host-staged exchange instead.
func TestSplitShardedSortPeer(t *testing.T) {
	open := func(t *testing.T, id string) *engine.Device {
		d, err := engine.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	kerneltest.ForEachCUDADevice(t, "the sharded sort's peer exchange", func(dev *engine.Device) error {
		qs := kerneltest.Queues(t, []*engine.Device{dev, open(t, dev.ID())})
		if engine.PeerPath(qs[1], qs[0]) == "peer" {
			return fmt.Errorf("%s copies between two openings directly", dev.ID())
		}
		return engine.ErrUnsupported
	}, func(t *testing.T, dev *engine.Device, _ *engine.Queue) {
		devs := []*engine.Device{dev, open(t, dev.ID())}
		dis, err := platform.Discover(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dis.Devices {
			if d.Backend == "cuda" && d.ID != dev.ID() {
				devs = append(devs, open(t, d.ID))
			}
		}
		qs := kerneltest.Queues(t, devs)
		if !peerAll([]shard.Part[uint32]{{Queue: qs[0]}, {Queue: qs[1]}}) {
			t.Fatalf("%s: two openings do not copy between each other directly", dev.ID())
		}
		su, err := NewShardedSort[uint32](devs)
		if err != nil {
			t.Fatal(err)
		}
		defer su.Close()
		// The device and its second opening; the device and the next GPU; all of them.
		sets := [][]*engine.Queue{qs[:2]}
		if len(qs) > 2 {
			sets = append(sets, []*engine.Queue{qs[0], qs[2]}, qs)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for si, qs := range sets {
			p := len(qs)
			for _, n := range []int{1, 1000, 100003, 1<<22 + 3} {
				for lname, counts := range map[string][]int{"even": shard.Even(n, p), "uneven": uneven(n, p), "first": oneHolds(n, p, 0)} {
					keys := make([]uint32, n)
					for i := range keys {
						keys[i] = rng.Uint32()
					}
					if lname == "uneven" && n > 1000 {
						for i := range keys { // few distinct keys: equal keys on both sides of the splitter
							keys[i] %= 5
						}
					}
					name := fmt.Sprintf("set %d/p=%d/n=%d/%s", si, p, n, lname)
					balanced := lname == "even" && n > 1000
					for _, path := range acrossPaths {
						su.mergeFirst, su.crossBits = path.mergeFirst, path.crossBits
						merged, across := mergedFromRuns.Load(), sortedAcross.Load()
						checkShardedSort(t, name+"/keys/"+path.name, su, qs, keys, counts, Ascending, false, balanced)
						// Keys alone over two devices, both holding some, go across.
						wantAcross := !path.mergeFirst && p == 2 && lname != "first" && n > 1
						if got := sortedAcross.Load() > across; got != wantAcross {
							t.Errorf("%s/keys/%s: sorted across %v, want %v", name, path.name, got, wantAcross)
						}
						if !wantAcross && lname != "first" && n > 1 && mergedFromRuns.Load() == merged {
							t.Errorf("%s/keys/%s: no sort merged from the runs across devices", name, path.name)
						}
					}
					su.mergeFirst, su.crossBits = false, 0
					merged := mergedFromRuns.Load()
					checkShardedSort(t, name+"/pairs", su, qs, keys, counts, Descending, true, false)
					if lname != "first" && n > 1 && mergedFromRuns.Load() == merged {
						t.Errorf("%s/pairs: no sort merged from the runs across devices", name)
					}
				}
			}
		}
		// Landings given too little room ahead: the crossing pass runs again with the room
		// the sides need, and the sort is right.
		defer func(f func(n, total int) int) { roomFor = f }(roomFor)
		roomFor = func(n, total int) int { return n / 2 }
		keys := make([]uint32, 100003)
		for i := range keys {
			keys[i] = rng.Uint32()
		}
		again := outOfRoom.Load()
		checkShardedSort(t, "landings short of room", su, qs[:2], keys, shard.Even(len(keys), 2), Ascending, false, true)
		if outOfRoom.Load() == again {
			t.Error("landings short of room: the crossing pass did not run again")
		}
	})
}

// acrossPaths are the paths ShardedSort takes for keys over two devices that reach each
// other: across in the first pass, its digit as crossBitsFor picks it (the default),
// partitioning alone or sorting a digit of sortRadixBits, or the merge from the runs
// (mergeFirst).
var acrossPaths = []struct {
	name       string
	mergeFirst bool
	crossBits  int
}{{"first", false, 0}, {"first-partition", false, crossPartition}, {"first-digit", false, sortRadixBits}, {"merge", true, 0}}

// oneHolds returns counts of n over p parts, all on part i.
func oneHolds(n, p, i int) []int {
	c := make([]int, p)
	c[i] = n
	return c
}

// uneven returns counts of n over p parts, the first holding 13% and the others the rest
// evenly.
func uneven(n, p int) []int {
	c := append([]int{n * 13 / 100}, shard.Even(n-n*13/100, p-1)...)
	return c
}

// checkShardedSort scatters keys (with values 0..n-1 when pairs) over qs by counts, sorts
// them twice with s and checks the gathered results against SortPairsRef bit for bit and
// the input against keys; balanced asks each device to end within an eighth of the keys of
// its part's count.
func checkShardedSort[K SortKey](t *testing.T, name string, s *ShardedSort[K], qs []*engine.Queue, keys []K, counts []int, order SortOrder, pairs, balanced bool) {
	t.Helper()
	ctx := t.Context()
	n := len(keys)
	var idx []uint32
	sk, err := shard.Scatter(ctx, qs, keys, shard.ByRows(1), counts)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	var sv *shard.Buffer[uint32]
	if pairs {
		idx = make([]uint32, n)
		for i := range idx {
			idx[i] = uint32(i)
		}
		if sv, err = shard.Scatter(ctx, qs, idx, shard.ByRows(1), counts); err != nil {
			t.Fatal(err)
		}
		defer sv.Close()
	}
	wantK, wantV := SortPairsRef(keys, idx, order)
	for run := range 2 {
		ok, ov, err := s.Sort(ctx, sk, sv, order)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := ok.Gather(ctx)
		if err == nil && pairs {
			var gotV []uint32
			if gotV, err = ov.Gather(ctx); err == nil {
				err = kernels.CheckEqual(name+" values", gotV, wantV)
			}
		}
		if err == nil {
			err = CheckSortedKeys(name+" keys", got, wantK)
		}
		outCounts := ok.Counts()
		ok.Close()
		ov.Close()
		if err != nil {
			t.Fatalf("%s (run %d, parts of %v, result over %v): %v", name, run+1, counts, outCounts, err)
		}
		if pairs != (ov != nil) {
			t.Fatalf("%s: values result %v with pairs %v", name, ov, pairs)
		}
		for i, c := range outCounts {
			if balanced && math.Abs(float64(c-counts[i])) > float64(n)/8 {
				t.Errorf("%s: device %d ends with %d keys, its part held %d (result over %v)", name, i, c, counts[i], outCounts)
			}
		}
	}
	in, err := sk.Gather(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSortedKeys(name+" input after the sort", in, keys); err != nil {
		t.Error(err)
	}
}

// TestSplitShardedSortInvalid: ShardedSort refuses keys not laid out by rows of one, values
// laid out otherwise, a device it has no sorter for, an unknown order and closed keys.
func TestSplitShardedSortInvalid(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	qs := kerneltest.Queues(t, devs)
	s, err := NewShardedSort[uint32](devs[:1])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	keys := make([]uint32, 100)
	scatter := func(qs []*engine.Queue, l shard.Layout, counts []int) *shard.Buffer[uint32] {
		b, err := shard.Scatter(ctx, qs, keys, l, counts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	one := scatter(qs[:1], shard.ByRows(1), []int{100})
	closed := scatter(qs[:1], shard.ByRows(1), []int{100})
	closed.Close()
	for _, c := range []struct {
		name       string
		keys, vals *shard.Buffer[uint32]
		order      SortOrder
		want       error
	}{
		{"by blocks", scatter(qs[:1], shard.ByBlocks(10), nil), nil, Ascending, engine.ErrInvalidArg},
		{"rows of 2", scatter(qs[:1], shard.ByRows(2), []int{50}), nil, Ascending, engine.ErrInvalidArg},
		{"values laid out otherwise", one, scatter(qs[:1], shard.ByBlocks(10), nil), Ascending, engine.ErrInvalidArg},
		{"a device without a sorter", scatter(qs[:2], shard.ByRows(1), []int{50, 50}), nil, Ascending, engine.ErrInvalidArg},
		{"unknown order", one, nil, SortOrder(7), engine.ErrInvalidArg},
		{"closed keys", closed, nil, Ascending, engine.ErrClosed},
		{"nil keys", nil, nil, Ascending, engine.ErrInvalidArg},
	} {
		k, v, err := s.Sort(ctx, c.keys, c.vals, c.order)
		if !errors.Is(err, c.want) || k != nil || v != nil {
			t.Errorf("%s: %v (result %v, %v), want %v", c.name, err, k, v, c.want)
		}
	}
	if _, err := NewShardedSort[uint32]([]*engine.Device{nil}); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("NewShardedSort of a nil device: %v, want invalid argument", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

// TestMergeLanded checks the merge of the pieces a device of a sharded sort received:
// landing puts them where the merge's last pass ends in the result (in the result itself
// for an even count of passes, in the device's landing buffer for an odd one), and
// mergeLanded merges them there, for 1 to 6 pieces (0 to 3 passes), empty ones among
// them, keys alone and pairs, against the host's stable sort bit for bit, twice with the
// same scratch.
func TestMergeLanded(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewShardedSort[uint32]([]*engine.Device{dev})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rng := rand.New(rand.NewPCG(21, 22))
		for _, lens := range [][]int{{37}, {20, 0, 33}, {5, 6, 7}, {100, 1, 50, 9}, {3, 0, 40, 41, 2}, {10, 20, 30, 0, 40, 50}} {
			for _, pairs := range []bool{false, true} {
				for round := range 2 {
					name := fmt.Sprintf("%v/pairs=%v/round=%d", lens, pairs, round)
					var keys []uint32
					var vals []uint32
					bounds := []int{0}
					for _, l := range lens {
						run, idx := sortedRun[uint32](rng, l, 3, len(keys), Ascending)
						keys, vals = append(keys, run...), append(vals, idx...)
						bounds = append(bounds, len(keys))
					}
					n := len(keys)
					out := make([]*engine.Buffer[uint32], 1)
					var vout []*engine.Buffer[uint32]
					if pairs {
						vout = make([]*engine.Buffer[uint32], 1)
					}
					lk, lv, err := s.landing(0, dev, 0, n, bounds, out, vout)
					if err != nil {
						t.Fatal(err)
					}
					if want := mergePassCount(bounds)%2 == 0; (lk == out[0]) != want {
						t.Fatalf("%s: %d passes landed in the result: %v", name, mergePassCount(bounds), lk == out[0])
					}
					if err := lk.Write(t.Context(), q, 0, keys); err != nil {
						t.Fatal(err)
					}
					if pairs {
						if err := lv.Write(t.Context(), q, 0, vals); err != nil {
							t.Fatal(err)
						}
					}
					if err := s.mergeLanded(q, 0, 0, bounds, out, vout, Ascending); err != nil {
						t.Fatal(err)
					}
					wantK, wantV := SortPairsRef(keys, vals, Ascending)
					gotK, err := out[0].Download(t.Context(), q)
					if err == nil {
						err = kernels.CheckEqual("keys", gotK, wantK)
					}
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if pairs {
						gotV, err := vout[0].Download(t.Context(), q)
						if err == nil {
							err = kernels.CheckEqual("values", gotV, wantV)
						}
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						vout[0].Close()
					}
					out[0].Close()
				}
			}
		}
	})
}
