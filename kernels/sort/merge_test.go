package sort

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestMergeRuns merges sorted runs on the device (sort_merge, Sorter.mergeRuns) and checks
// the result against the host's stable sort of the whole, keys and values bit for bit: one
// to five runs, empty runs among them, runs shorter and longer than a work-item's outputs
// and than a work-group's tile (1920 outputs at 128 work-items), lengths that are not a
// multiple of the tile, an odd run out longer than a tile (copied), all keys equal across
// runs and three distinct keys in long equal stretches across tile boundaries (the earlier
// run's first: stability), float32 special keys, both orders, pairs and keys alone. Then it
// launches sort_merge itself at several local sizes (1, 3, 32, 100 and the largest, as far
// as the device allows) on two runs inside larger buffers, either of them empty in some
// cases, and checks that nothing outside the output range is written. Every case runs
// with a work-group writing one tile or as many as mergeTilesPerGroup gives (per=auto; at
// these lengths one), two (the last group's one tile fewer where the tiles are odd) and
// mergeGroup (every tile in one group).
func TestMergeRuns(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, per := range []int{0, 2, mergeGroup} {
			name := fmt.Sprintf("per=%d", per)
			if per == 0 {
				name = "per=auto"
			}
			t.Run(name, func(t *testing.T) {
				if kerneltest.Small() && per == mergeGroup {
					return // under the simulator: the launches of 2 cover a group of several tiles
				}
				// Under the simulator groups of two tiles are checked by the launches alone.
				if per == 0 || !kerneltest.Small() {
					t.Run("uint32", func(t *testing.T) { testMergeRuns[uint32](t, dev, q, per) })
					t.Run("float32", func(t *testing.T) { testMergeRuns[float32](t, dev, q, per) })
				}
				t.Run("launch/uint32", func(t *testing.T) { testMergeLaunch[uint32](t, dev, q, per) })
				t.Run("launch/float32", func(t *testing.T) { testMergeLaunch[float32](t, dev, q, per) })
			})
		}
	})
}

// mergeKey returns a random key for the merge tests: of distinct = 1 the same key every
// time, of distinct = 3 one of three keys (long stretches of equal keys), otherwise a key
// of a few dozen values (uint32: repeats within and across runs) or, for float32, normal
// values and special ones (zeros of both signs, infinities, NaN, denormals).
func mergeKey[K SortKey](rng *rand.Rand, distinct int) K {
	var z K
	switch any(z).(type) {
	case float32:
		switch distinct {
		case 1:
			return any(float32(1.5)).(K)
		case 3:
			return any([]float32{-2, float32(math.Copysign(0, -1)), 1.5}[rng.IntN(3)]).(K)
		}
		specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-45, -1e-45}
		if rng.IntN(4) == 0 {
			return any(specials[rng.IntN(len(specials))]).(K)
		}
		return any(float32(rng.NormFloat64())).(K)
	default:
		switch distinct {
		case 1:
			return any(uint32(7)).(K)
		case 3:
			return any([]uint32{0, 7, 0xffffffff}[rng.IntN(3)]).(K)
		}
		return any(uint32(rng.IntN(50))).(K)
	}
}

// sortedRun returns l sorted keys of mergeKey and their values: base, base+1, ... before
// the sort (so that the values tell equal keys apart).
func sortedRun[K SortKey](rng *rand.Rand, l, distinct, base int, order SortOrder) ([]K, []uint32) {
	run := make([]K, l)
	idx := make([]uint32, l)
	for i := range run {
		run[i], idx[i] = mergeKey[K](rng, distinct), uint32(base+i)
	}
	return SortPairsRef(run, idx, order)
}

func testMergeRuns[K SortKey](t *testing.T, dev *engine.Device, q *engine.Queue, per int) {
	s, err := newSorter[K](dev, 256, sortItems)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.mergePer = per
	rng := rand.New(rand.NewPCG(9, 9))
	for _, c := range []struct {
		lens     []int
		distinct int // 1: all keys equal; 3: three keys; 0: many
	}{
		{[]int{1}, 0}, {[]int{3, 4}, 0}, {[]int{0, 17, 0}, 0}, {[]int{100, 1}, 0}, {[]int{1, 100}, 0},
		{[]int{33, 64, 15, 0, 200}, 0}, {[]int{500, 700, 300}, 0}, {[]int{40, 40, 40, 40}, 1},
		// Several tiles, and lengths that are not a multiple of one; the two runs' result is
		// copied back (mid == hi over the whole).
		{[]int{5000, 4001}, 0}, {[]int{1920, 3840}, 0}, {[]int{1, 6000}, 0}, {[]int{6000, 2}, 0},
		// An odd run out longer than a tile, copied by the first pass.
		{[]int{2500, 3100, 4200}, 0},
		// Equal keys across tile boundaries.
		{[]int{2600, 2600, 2600}, 1}, {[]int{3100, 2700}, 3}, {[]int{700, 5200, 1900, 30}, 3},
	} {
		// Under the simulator: the short cases and one of several tiles (1920 outputs a tile
		// at 128 work-items) are enough.
		if total := sumInts(c.lens); kerneltest.Small() && total > 2000 && fmt.Sprint(c.lens) != "[1920 3840]" {
			continue
		}
		for _, order := range []SortOrder{Ascending, Descending} {
			name := fmt.Sprintf("runs=%v/distinct=%d/%v", c.lens, c.distinct, order)
			t.Run(name, func(t *testing.T) {
				var keys []K
				var vals []uint32
				bounds := []int{0}
				for _, l := range c.lens {
					run, idx := sortedRun[K](rng, l, c.distinct, len(keys), order)
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

// testMergeLaunch merges as mergeTwo does but at chosen local sizes of sort_merge (those
// the device allows for the kernel), on the runs src[lo, mid) and src[mid, hi) inside
// buffers of hi + 37 elements whose other elements are not sorted, and at the largest size
// with the second run in a buffer of its own (as a sharded sort's merge reads another
// device's run): dst[lo, hi) (and vdst) must hold the stable merge and the rest of dst (and
// vdst) stay as it was. One run is empty in some cases (mid == hi: a copy), both longer than
// several tiles in others.
func testMergeLaunch[K SortKey](t *testing.T, dev *engine.Device, q *engine.Queue, per int) {
	s, err := newSorter[K](dev, 256, sortItems)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.mergePer = per
	maxLocal := s.merge.Attributes().MaxWorkGroupSize
	if maxLocal <= 0 || maxLocal > mergeWG {
		maxLocal = mergeWG
	}
	t.Logf("sort_merge: at most %d work-items a group", maxLocal)
	rng := rand.New(rand.NewPCG(5, 3))
	const lo, tail = 29, 37
	for ci, c := range []struct{ na, nb, distinct int }{
		{0, 4500, 0}, {4500, 0, 0}, {3001, 2999, 0}, {2000, 2100, 3}, {1900, 1, 0}, {0, 1, 0}, {1, 1, 1},
	} {
		if kerneltest.Small() && c.na+c.nb > 4200 {
			continue // under the simulator: {2000, 2100} spans tiles enough
		}
		order := []SortOrder{Ascending, Descending}[ci%2]
		mid, hi := lo+c.na, lo+c.na+c.nb
		total := hi + tail
		// src: unsorted filler, then the two runs, then filler; dst and vdst: sentinels.
		keys, vals := make([]K, total), make([]uint32, total)
		for i := range keys {
			keys[i], vals[i] = mergeKey[K](rng, 0), uint32(1<<31+i)
		}
		a, av := sortedRun[K](rng, c.na, c.distinct, lo, order)
		b, bv := sortedRun[K](rng, c.nb, c.distinct, mid, order)
		copy(keys[lo:], a)
		copy(vals[lo:], av)
		copy(keys[mid:], b)
		copy(vals[mid:], bv)
		wantK, wantV := SortPairsRef(slices.Clone(keys[lo:hi]), slices.Clone(vals[lo:hi]), order)
		fillK, fillV := make([]K, total), make([]uint32, total)
		for i := range fillK {
			fillK[i], fillV[i] = kerneltest.Sentinel[K](), kerneltest.Sentinel[uint32]()
		}
		src, vsrc := kerneltest.Guarded(t, q, keys), kerneltest.Guarded(t, q, vals)
		// The second run again, alone in a buffer of its own from element 11 on.
		const at2 = 11
		keys2, vals2 := make([]K, at2+c.nb+5), make([]uint32, at2+c.nb+5)
		copy(keys2[at2:], b)
		copy(vals2[at2:], bv)
		src2, vsrc2 := kerneltest.Guarded(t, q, keys2), kerneltest.Guarded(t, q, vals2)
		done := map[int]bool{}
		locals := []int{1, 3, 32, 100, mergeWG}
		if kerneltest.Small() { // under the simulator: an odd size and the largest
			locals = []int{3, mergeWG}
		}
		for _, local := range locals {
			if local = min(local, maxLocal); done[local] {
				continue
			}
			done[local] = true
			for _, pairs := range []bool{true, false} {
				for _, apart := range []bool{false, true} {
					if apart && local != min(mergeWG, maxLocal) {
						continue // the second buffer at the largest local size
					}
					name := fmt.Sprintf("na=%d/nb=%d/distinct=%d/%v/local=%d/pairs=%v/apart=%v", c.na, c.nb, c.distinct, order, local, pairs, apart)
					t.Run(name, func(t *testing.T) {
						dst, vdst := kerneltest.Guarded(t, q, fillK), kerneltest.Guarded(t, q, fillV)
						var vd, vs, vs2 *engine.Buffer[uint32]
						if pairs {
							vd, vs, vs2 = vdst, vsrc, vsrc2
						}
						ra, rb := runOf(src, vs, lo, c.na), runOf(src, vs, mid, c.nb)
						if apart {
							rb = runOf(src2, vs2, at2, c.nb)
						}
						if err := s.mergeFrom(q, local, dst, vd, lo, ra, rb, order); err != nil {
							t.Fatal(err)
						}
						gotK, gotV := kerneltest.Download(t, q, "keys", dst, total), kerneltest.Download(t, q, "values", vdst, total)
						for i := range total {
							if i < lo || i >= hi {
								if !kerneltest.IsSentinel(gotK[i]) || gotV[i] != fillV[i] {
									t.Fatalf("element %d, outside [%d, %d): key %v value %d written", i, lo, hi, gotK[i], gotV[i])
								}
								continue
							}
							w := i - lo
							if SortMapKey(gotK[i], order) != SortMapKey(wantK[w], order) {
								t.Fatalf("element %d: key %v, want %v", i, gotK[i], wantK[w])
							}
							if pairs && gotV[i] != wantV[w] {
								t.Fatalf("element %d: value %d, want %d", i, gotV[i], wantV[w])
							}
							if !pairs && gotV[i] != fillV[i] {
								t.Fatalf("keys alone, element %d: value %d written", i, gotV[i])
							}
						}
					})
				}
			}
		}
	}
}

// sumInts returns the sum of xs.
func sumInts(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// TestCutRun runs Sorter.cutRun's searches (sort_cut) over sorted runs with long stretches
// of equal keys, uint32 and float32 with special values, both orders, and checks each
// position against a scan on the host: strict and not, ranges that are empty, start at 0
// or end at the run's end, keys below, inside and above the run. A search outside the run
// is refused.
func TestCutRun(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("uint32", func(t *testing.T) { testCutRun[uint32](t, dev, q) })
		t.Run("float32", func(t *testing.T) { testCutRun[float32](t, dev, q) })
	})
}

func testCutRun[K SortKey](t *testing.T, dev *engine.Device, q *engine.Queue) {
	s, err := NewSorter[K](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(11, 12))
	n := 5000
	if kerneltest.Small() {
		n = 700
	}
	for _, order := range []SortOrder{Ascending, Descending} {
		for _, distinct := range []int{0, 3} {
			run, _ := sortedRun[K](rng, n, distinct, 0, order)
			buf := kerneltest.Guarded(t, q, run)
			mapped := make([]uint32, n)
			for i, k := range run {
				mapped[i] = SortMapKey(k, order)
			}
			var qs []cutQuery
			for range 200 {
				var key uint32
				switch rng.IntN(4) {
				case 0:
					key = mapped[rng.IntN(n)]
				case 1:
					key = 0
				case 2:
					key = ^uint32(0)
				default:
					key = rng.Uint32()
				}
				lo := rng.IntN(n + 1)
				hi := lo + rng.IntN(n+1-lo)
				if rng.IntN(5) == 0 {
					lo, hi = 0, n
				}
				qs = append(qs, cutQuery{key: key, strict: rng.IntN(2) == 0, lo: lo, hi: hi})
			}
			got, err := s.cutRun(t.Context(), q, buf, qs, order)
			if err != nil {
				t.Fatal(err)
			}
			for g, c := range qs {
				want := c.hi
				for p := c.lo; p < c.hi; p++ {
					if mapped[p] > c.key || !c.strict && mapped[p] == c.key {
						want = p
						break
					}
				}
				if got[g] != want {
					t.Fatalf("%v, distinct %d: search %d (key %#x, strict %v, [%d, %d)): %d, want %d", order, distinct, g, c.key, c.strict, c.lo, c.hi, got[g], want)
				}
			}
		}
	}
	run, _ := sortedRun[K](rng, 10, 0, 0, Ascending)
	buf := kerneltest.Guarded(t, q, run)
	if _, err := s.cutRun(t.Context(), q, buf, []cutQuery{{lo: 5, hi: buf.Len() + 1}}, Ascending); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("a search past the run's end: %v", err)
	}
}

// TestSampleRun copies evenly spaced keys of runs with Sorter.sampleRun (sort_sample) and
// checks each against the key at (g+1)*n/k, for runs shorter than the samples and longer,
// and that keys past the samples in the output are not written; then draws keys with
// seeds and checks each against the key at sampleAt's position, which must lie in its
// slot.
func TestSampleRun(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		s, err := NewSorter[uint32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rng := rand.New(rand.NewPCG(13, 14))
		for _, n := range []int{1, 5, 31, 32, 1000, 4097} {
			run := make([]uint32, n)
			for i := range run {
				run[i] = rng.Uint32()
			}
			rb := kerneltest.Guarded(t, q, run)
			for _, k := range []int{2, 32, 48} {
				ob := kerneltest.Guarded(t, q, make([]uint32, k-1))
				if err := s.sampleRun(q, ob, rb, n, k, 0); err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, "samples", ob, k-1)
				for g, v := range got {
					if want := run[(g+1)*n/k]; v != want {
						t.Fatalf("n=%d k=%d: sample %d = %d, want run[%d] = %d", n, k, g, v, (g+1)*n/k, want)
					}
				}
				for _, seed := range []uint32{1, 0x9e3779b9} {
					if err := s.sampleRun(q, ob, rb, n, k, seed); err != nil {
						t.Fatal(err)
					}
					got := kerneltest.Download(t, q, "samples", ob, k-1)
					m := k - 1
					for g, v := range got {
						r := sampleAt(g, n, m, seed)
						if lo, hi := g*n/m, max((g+1)*n/m, g*n/m+1); r < lo || r >= hi {
							t.Fatalf("n=%d k=%d seed %#x: sample %d at %d, outside its slot [%d, %d)", n, k, seed, g, r, lo, hi)
						}
						if v != run[r] {
							t.Fatalf("n=%d k=%d seed %#x: sample %d = %d, want run[%d] = %d", n, k, seed, g, v, r, run[r])
						}
					}
				}
			}
		}
	})
}

// twoCUDADevices opens the first two CUDA devices, closed when the benchmark ends, and a
// queue on each; it skips with fewer.
func twoCUDADevices(b *testing.B) (devs [2]*engine.Device, qs [2]*engine.Queue) {
	ids := enginetest.DeviceIDs(b, "cuda")
	if len(ids) < 2 {
		b.Skipf("needs two CUDA devices, found %d", len(ids))
	}
	for i, id := range ids[:2] {
		dev, err := engine.Open(b.Context(), id)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { dev.Close() })
		if qs[i], err = dev.NewQueue(); err != nil {
			b.Fatal(err)
		}
		devs[i] = dev
	}
	return devs, qs
}

// BenchmarkMergePeer times one merge pass of two sorted runs of 32M uint32 keys (64M
// outputs: each device's merge in a sharded sort of 128M keys over two GPUs) on the first
// CUDA device, a work-group writing 1 to 32 tiles (0: mergeTilesPerGroup's): both runs on
// the device ("local"), and the second on the next device, read across the link through
// Buffer.Reach ("peer"). For
// the exchange such a merge replaces it also times a copy of the second run from the other
// device (engine.CopyPeer), a kernel that reads it across the link and writes it here, one
// that writes a run of this device into the other's memory, and both devices reading, or
// writing, across at once. The bytes are those read and written (by one device where both
// run). It skips with fewer than two CUDA devices.
func BenchmarkMergePeer(b *testing.B) {
	ctx := b.Context()
	devs, qs := twoCUDADevices(b)
	const n = 1 << 25
	rng := rand.New(rand.NewPCG(3, 4))
	runA, runB := make([]uint32, n), make([]uint32, n)
	for i := range n {
		runA[i], runB[i] = rng.Uint32(), rng.Uint32()
	}
	slices.Sort(runA)
	slices.Sort(runB)
	want := slices.Concat(runA, runB)
	slices.Sort(want)
	upload := func(q *engine.Queue, data []uint32) *engine.Buffer[uint32] {
		buf, err := engine.Upload(ctx, q, data)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { buf.Close() })
		return buf
	}
	a, bLocal, bRemote := upload(qs[0], runA), upload(qs[0], runB), upload(qs[1], runB)
	dst := upload(qs[0], make([]uint32, 2*n))
	for _, q := range qs {
		if err := q.Finish(ctx); err != nil {
			b.Fatal(err)
		}
	}
	remote, err := bRemote.Reach(qs[0])
	if err != nil {
		b.Fatal(err)
	}
	// timed runs f b.N times on the first device after one untimed run, then checks dst
	// against want[:len] where len > 0.
	timed := func(b *testing.B, bytes int64, check int, f func() error) {
		b.SetBytes(bytes)
		for i := 0; i < b.N+1; i++ {
			if i == 1 {
				if err := qs[0].Finish(ctx); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
			}
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
		if err := qs[0].Finish(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if check == 0 {
			return
		}
		got, err := dst.Download(ctx, qs[0])
		if err == nil {
			err = kernels.CheckEqual("merged", got[:check], want[:check])
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	s, err := NewSorter[uint32](devs[0])
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, per := range []int{0, 1, 4, 8, 16, 32} {
		for _, where := range []struct {
			name string
			b    any
		}{{"local", bLocal}, {"peer", remote}} {
			b.Run(fmt.Sprintf("%s/per=%d", where.name, per), func(b *testing.B) {
				s.mergePer = per
				timed(b, 4*4*n, 2*n, func() error {
					return s.mergeFrom(qs[0], 0, dst, nil, 0, mergeRun{keys: a, n: n}, mergeRun{keys: where.b, n: n}, Ascending)
				})
			})
		}
	}
	b.Run("copy-peer", func(b *testing.B) {
		timed(b, 4*n, 0, func() error { return engine.CopyPeer(ctx, qs[0], dst, 0, qs[1], bRemote, 0, n) })
	})
	// pull copies n words from src to dst, either of them across the link.
	pull := func(dev *engine.Device) *engine.Kernel {
		prog, err := dev.Build(`__kernel void pull(__global uint *dst, __global const uint *src, uint n) {
	uint i = get_global_id(0);
	if (i < n) dst[i] = src[i];
}`)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { prog.Close() })
		k, err := prog.Kernel("pull")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { k.Close() })
		return k
	}
	k, k1 := pull(devs[0]), pull(devs[1])
	b.Run("read-peer", func(b *testing.B) {
		timed(b, 2*4*n, 0, func() error { return qs[0].Launch(k, engine.Range1D(n, 256), dst, remote, uint32(n)) })
	})
	// Both devices at once, each reading the other's buffer into its own, or writing its
	// own into the other's (the bytes are one device's).
	other, err := engine.NewBuffer[uint32](devs[1], n)
	if err != nil {
		b.Fatal(err)
	}
	defer other.Close()
	aFrom1, err := a.Reach(qs[1])
	if err != nil {
		b.Fatal(err)
	}
	dstFrom1, err := dst.Reach(qs[1])
	if err != nil {
		b.Fatal(err)
	}
	otherFrom0, err := other.Reach(qs[0])
	if err != nil {
		b.Fatal(err)
	}
	both := func(b *testing.B, f0, f1 func() error) {
		b.SetBytes(2 * 4 * n)
		for i := 0; i < b.N+1; i++ {
			if i == 1 {
				b.ResetTimer()
			}
			if err := f0(); err != nil {
				b.Fatal(err)
			}
			if err := f1(); err != nil {
				b.Fatal(err)
			}
			for _, q := range qs {
				if err := q.Finish(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	r := engine.Range1D(n, 256)
	b.Run("read-both", func(b *testing.B) {
		both(b, func() error { return qs[0].Launch(k, r, dst, remote, uint32(n)) },
			func() error { return qs[1].Launch(k1, r, other, aFrom1, uint32(n)) })
	})
	b.Run("write-peer", func(b *testing.B) {
		timed(b, 2*4*n, 0, func() error { return qs[0].Launch(k, r, otherFrom0, a, uint32(n)) })
	})
	b.Run("write-both", func(b *testing.B) {
		both(b, func() error { return qs[0].Launch(k, r, otherFrom0, a, uint32(n)) },
			func() error { return qs[1].Launch(k1, r, dstFrom1, bRemote, uint32(n)) })
	})
}
