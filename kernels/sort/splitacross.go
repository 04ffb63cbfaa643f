package sort

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
)

// acrossSamples is how many keys each part gives sortAcross to pick its splitter from:
// the devices' shares of the keys are predicted within about one per cent where the parts
// are large and random, and the host orders them while the devices sort.
const acrossSamples = 4096

// sortAcross is Sort's path for keys over two devices whose kernels reach each other's
// memory (CUDA GPUs with peer access): the keys cross between the devices inside the
// sort's last pass, so that no exchange and no merge reads across the link.
//
//  1. Each part gives acrossSamples keys drawn one from each of as many even slots
//     (sort_sample with a seed), read back; then each device enqueues its part's sort up
//     to the last pass (Sorter.sortToLast), and while the devices sort the host orders
//     the samples by their places and picks the splitter (pickSplitters).
//  2. Each device counts its part's keys that stay below the splitter (sort_below, after
//     its passes in its queue): cut i. Device 0 is to hold both parts' keys below it,
//     part 0's first, and device 1 the rest, part 0's first.
//  3. Each device's last pass writes its sorted run straight to where it lands: part 0's
//     first cut0 keys into device 0's landing buffer, the rest into device 1's (across the
//     link); part 1's first cut1 keys into device 0's after part 0's, the rest into device
//     1's after part 0's (Sorter.sortLast: the scatter's stores cross the link, overlapped
//     with the pass's work).
//  4. Once both devices' passes are done, each merges its two landed runs, both in its own
//     memory, in part order (stable), into its result.
//
// It reports false, having done nothing, where the sort is not of that kind: values, other
// than two parts, an empty part, or devices that do not reach each other.
//
// On two H200 (2026-11-30, 2^27 random keys, BenchmarkShardedSort): 4.24 ms against 4.35
// for the merge from the runs and 6.61 on one GPU; prism bench's sharded case 4.25 ms
// against 7.09-7.12, 1.67x. Its steps: the passes but the last with the count 3.19-3.23
// ms, the last pass 0.67-0.71 ms (a local pass takes about 0.42: the scatter's stores, in
// runs of about 128 keys a digit, cross the link at about 190 GB/s each way where a copy
// kernel's stores cross at 347), the local merge 0.31-0.37. Host work on the samples
// before the passes were enqueued had cost 0.5 ms (4.83 ms).
func (s *ShardedSort[K]) sortAcross(ctx context.Context, di []int, keys *shard.Buffer[K], out []*engine.Buffer[K], order SortOrder) (bool, error) {
	parts := keys.Parts()
	if len(parts) != 2 || parts[0].Len == 0 || parts[1].Len == 0 || !peerAll(parts) {
		return false, nil
	}
	tr := newStepTimer(keys)
	n := [2]int{parts[0].Len, parts[1].Len}
	drawn := make([][]K, 2)
	err := keys.EachDevice(func(i int) error {
		pt, d := parts[i], di[i]
		var err error
		if drawn[i], err = s.drawSamples(ctx, d, pt, i); err != nil {
			return err
		}
		if s.runs[d], err = grow(pt.Queue.Device(), s.runs[d], pt.Len); err != nil {
			return err
		}
		return s.sorters[d].sortToLast(pt.Queue, s.runs[d], pt.Buf, nil, nil, pt.Len, order)
	})
	if err != nil {
		return false, err
	}
	// The devices sort while the host orders the samples.
	samples := make([][]place, 2)
	for i := range 2 {
		samples[i] = placesOf(drawn[i], parts[i].Len, i, order)
	}
	sp := pickSplitters(samples, keys.Counts())[0]
	var cut [2]int
	err = keys.EachDevice(func(i int) error {
		b := bucketOf(sp, i)
		var err error
		cut[i], err = s.sorters[di[i]].below(ctx, parts[i].Queue, parts[i].Buf, parts[i].Len, b.key, b.lim, order)
		return err
	})
	if err != nil {
		return false, err
	}
	tr.step("passes but the last, and the cuts")
	// Device 0 lands [part 0's cut0 | part 1's cut1], device 1 [part 0's rest | part 1's rest].
	recvN := [2]int{cut[0] + cut[1], n[0] - cut[0] + n[1] - cut[1]}
	for j := range 2 {
		if recvN[j] == 0 {
			continue
		}
		d, dev := di[j], parts[j].Queue.Device()
		var err error
		if s.recv[d], err = grow(dev, s.recv[d], recvN[j]); err != nil {
			return false, err
		}
		if err := receiving(dev, j, recvN[j], out, nil); err != nil {
			return false, err
		}
	}
	// land(j, i): device j's landing as an argument of part i's device's kernels.
	land := func(j, i int) (any, error) {
		r := s.recv[di[j]]
		if r == nil { // nothing lands on device j: any buffer of part i's device will do
			return s.runs[di[i]], nil
		}
		if i == j {
			return r, nil
		}
		return r.Reach(parts[i].Queue)
	}
	splits := make([]splitOut, 2)
	for i := range 2 {
		lo, err := land(0, i)
		if err != nil {
			return false, fmt.Errorf("device 0's landing from %s: %w", parts[i].Queue.Device().ID(), err)
		}
		hi, err := land(1, i)
		if err != nil {
			return false, fmt.Errorf("device 1's landing from %s: %w", parts[i].Queue.Device().ID(), err)
		}
		splits[i] = splitOut{lo: lo, hi: hi, cut: cut[i]}
	}
	splits[1].loOff, splits[1].hiOff = cut[0], n[0]-cut[0]
	err = keys.EachDevice(func(i int) error {
		pt, d := parts[i], di[i]
		if err := s.sorters[d].sortLast(pt.Queue, s.runs[d], pt.Buf, nil, nil, pt.Len, order, splits[i]); err != nil {
			return err
		}
		return pt.Queue.Finish(ctx)
	})
	if err != nil {
		return false, err
	}
	tr.step("last passes across")
	err = keys.EachDevice(func(j int) error {
		if recvN[j] == 0 {
			return nil
		}
		mid := cut[0] // device 0: part 0's keys below, then part 1's
		if j == 1 {
			mid = n[0] - cut[0]
		}
		return s.sorters[di[j]].mergeTwo(parts[j].Queue, out[j], s.recv[di[j]], nil, nil, 0, mid, recvN[j], order)
	})
	if err != nil {
		return false, err
	}
	tr.step("merge")
	tr.done(fmt.Sprintf("sharded sort keys of %d keys over 2 devices, crossing in the last pass", keys.Len()))
	sortedAcross.Add(1)
	return true, nil
}

// sortedAcross counts the sorts that took sortAcross, for the tests.
var sortedAcross atomic.Int64

// drawSamples reads the samples of part i, which device d holds in no order: the keys at
// sampleAt's positions for m = min(part, acrossSamples) slots and the part's seed
// (sampleSeed).
func (s *ShardedSort[K]) drawSamples(ctx context.Context, d int, pt shard.Part[K], i int) ([]K, error) {
	m := min(pt.Len, acrossSamples)
	var err error
	if s.samples[d], err = grow(pt.Queue.Device(), s.samples[d], m); err != nil {
		return nil, err
	}
	if err := s.sorters[d].sampleRun(pt.Queue, s.samples[d], pt.Buf, pt.Len, m+1, sampleSeed(i)); err != nil {
		return nil, err
	}
	got := make([]K, m)
	return got, s.samples[d].Read(ctx, pt.Queue, 0, got)
}

// sampleSeed is the seed of part i's samples (never 0, which samples evenly).
func sampleSeed(i int) uint32 { return uint32(i)*0x9e3779b9 | 1 }

// placesOf returns the places of part i's samples drawn (drawSamples) from its n keys, in
// order.
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

// bucketOf returns splitter sp as sort_below takes it for the keys of part i: a key of
// part i equal to the splitter's stays below it when part i precedes the splitter's part,
// or is its part and the key lies at or before the splitter's own position.
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
