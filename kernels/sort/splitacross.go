package sort

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
)

// acrossSamples is how many keys each part gives sortAcross to pick its splitter from, at
// most (sort_pick sorts both parts' in one work-group's local memory, 8 bytes each: a
// device whose local memory holds fewer takes half as many, or fewer). Where the parts are
// large and random, the splitter's rank among all keys is off by about 0.5/sqrt(m) of
// them, m = 2*acrossSamples (one standard deviation: 1.1%), and the larger side's
// passes after take that much longer; halving the samples halves sort_pick's bitonic sort.
// On two H200 (2026-11-30, 2^27 random keys, BenchmarkShardedSort): 1024 a part 3.95-4.01
// ms, sides 51.2/48.8%; 2048 4.04-4.10 ms, sides 51.8/48.2% (the splitter step, traced,
// 103-119 us against 127-174); on these keys 512 and 256 a part would leave sides of
// 50.2 and 50.7%, 4096 49.3% (pickRef): which count is luckier varies with the keys.
const acrossSamples = 1024

// sortAcross is Sort's path for keys over two devices whose kernels reach each other's
// memory (CUDA GPUs with peer access): the keys cross between the devices inside the
// sort's first pass, so that no exchange and no merge follows.
//
//  1. Each part gives acrossSamples keys drawn one from each of as many even slots
//     (sort_sample with a seed), and device 0 picks the splitter among both parts'
//     samples (crossPick: sort_pick, one work-group, reading part 1's across the link):
//     device 0 is to hold the keys below it, device 1 the rest, each predicted to end with
//     as many keys as its part held. Device 1 reads the splitter across in turn.
//  2. Each device counts its part's keys by side of the splitter, and by digit 0 where
//     sort.cl's passes sort after it (crossBitsFor: where both devices sort with onesweep
//     the pass only partitions, stably, so that each tile's keys of a side go out in one
//     run) (crossCount: sort.cl built with SPLIT, buckets of a side and a digit) and, once the other device
//     has counted too (the devices wait for each other's events themselves, on CUDA),
//     places them at once (crossScatter): bucket by bucket, part 0's before part 1's, side
//     0 on device 0 and side 1 on device 1, from both parts' starts (the other's read
//     across the link), writing the other side's keys across the link into the other
//     device's landing. The landings are reserved ahead with room for each device's
//     predicted side and a sixteenth more (landingRoom); the host reads the starts on a
//     second queue while the pass runs (the sides: crossSides) and, in the rare case that
//     a side outgrew its room, runs the pass again with the room it needs.
//  3. Once its keys are in (the other device's pass done, again waited for on the device),
//     each device sorts them from its landing into its result (afterCross: the onesweep
//     sort's four passes of the bits from the first, or past the first digit, where the
//     device has it, else the Sorter's passes after the first): no merge follows. The host waits only for the starts, which it
//     reads while the devices are busy.
//
// It reports false, having done nothing, where the sort is not of that kind: values, other
// than two parts, an empty part, devices that do not reach each other, or a device whose
// local memory does not hold the crossing pass.
//
// On two H200 (2026-11-30, 2^27 random keys): with the crossing pass a partition alone
// (crossPartition) and onesweep sorting all 32 bits after it, prism bench's sharded case
// 2.75 ms against 4.07 for the one-device op (onesweep), 1.48x; BenchmarkShardedSort
// 2.76-2.77 ms against 4.10, with a digit of 4 bits in the pass 2.89; traced, the
// splitter 53-65 us, the counts and the partition across 640-651, onesweep after 2.07-2.12
// ms. With the digit, 2.90 ms in prism bench (1.41x); its steps, traced (each step waits
// for both devices): the splitter 83-140 us, the counts and the crossing pass 826-850 (the
// pass alone 690-750: its stores cross the link at under 200 GB/s each way, in runs of
// about 64 keys a bucket, where a copy kernel's reach 347; a local pass takes about 0.44
// ms; tiles twice as large, with runs twice as long, were no faster; writes rotated by
// warp, so that local and remote stores interleave, 1% slower), onesweep after 2.20-2.37
// ms. With sort.cl's seven passes after (before onesweep ranked through shared words):
// 3.94-4.01 ms against 6.66 for the portable one-device sort, 1.66-1.69x; with the host
// picking the splitter from samples read back and finishing both queues between the
// steps, 4.15-4.19 ms.
//
// Tried before it and dropped: crossing in the last pass (the passes but the last on each
// part, the splitter's counts, the last pass's scatter writing each sorted run into both
// devices, then a merge of the two runs each device received): 4.16-4.26 ms, its steps 3.17
// ms, 0.67 and a merge of 0.31-0.35. Staging the other side's keys on their own device and
// copying them across with the copy engines, chunk by chunk behind the scatter (16 copies
// a chunk, one a bucket): 4.69 ms in one chunk, 4.78 in two, 5.15 in four, 6.24 in eight,
// against 4.13 written across by the scatter: each peer copy cost the host 12-17 us (two
// events and cuMemcpyPeerAsync), so the copies trailed the scatter. Partitioning first,
// then sorting each device's keys, is in ShardedSort's comment.
func (s *ShardedSort[K]) sortAcross(ctx context.Context, di []int, keys *shard.Buffer[K], out []*engine.Buffer[K], order SortOrder) (bool, error) {
	parts := keys.Parts()
	if len(parts) != 2 || parts[0].Len == 0 || parts[1].Len == 0 || !peerAll(parts) {
		return false, nil
	}
	bits := s.crossBitsFor(di, keys.Len())
	for i := range 2 {
		if err := s.sorters[di[i]].setCrossBits(bits); err != nil {
			return false, err
		}
		if _, err := s.sorters[di[i]].crossKernels(); err != nil {
			if errors.Is(err, engine.ErrUnsupported) {
				return false, nil
			}
			return false, err
		}
	}
	tr := newStepTimer(keys)
	// The samples, drawn on each device; device 0 picks the splitter from both parts'
	// (the other's read across), which device 1 reads across in turn.
	var sampled [2]*engine.Event
	var picked *engine.Event
	defer func() { sampled[0].Close(); sampled[1].Close(); picked.Close() }()
	per := s.sorters[di[0]].cross.samples / 2 // each part's samples, at most
	// Steps that only enqueue go in turn from this goroutine (InTurnDevice): a goroutine a
	// device may start tens of microseconds after the other.
	err := keys.InTurnDevice(func(i int) error {
		pt, d := parts[i], di[i]
		var err error
		if s.samples[d], err = grow(pt.Queue.Device(), s.samples[d], min(pt.Len, per)); err != nil {
			return err
		}
		if err := s.sorters[d].sampleRun(pt.Queue, s.samples[d], pt.Buf, pt.Len, min(pt.Len, per)+1, sampleSeed(i)); err != nil {
			return err
		}
		sampled[i], err = pt.Queue.Record()
		return err
	})
	if err != nil {
		return false, err
	}
	q0 := parts[0].Queue
	sb, err := s.samples[di[1]].Reach(q0)
	if err != nil {
		return false, fmt.Errorf("part 1's samples from %s: %w", q0.Device().ID(), err)
	}
	if err := q0.Wait(ctx, sampled[1]); err != nil {
		return false, err
	}
	na, nb := parts[0].Len, parts[1].Len
	if err := s.sorters[di[0]].crossPick(q0, s.samples[di[0]], min(na, per), na, sb, min(nb, per), nb, order); err != nil {
		return false, err
	}
	if picked, err = q0.Record(); err != nil {
		return false, err
	}
	var pick [2]any // the splitter, as an argument of part i's device's kernels
	pick[0] = s.sorters[di[0]].cross.picked
	if pick[1], err = s.sorters[di[0]].cross.picked.Reach(parts[1].Queue); err != nil {
		return false, fmt.Errorf("the splitter from %s: %w", parts[1].Queue.Device().ID(), err)
	}
	if err := parts[1].Queue.Wait(ctx, picked); err != nil {
		return false, err
	}
	tr.step("splitter")
	// Each device counts its part and scans the counts (crossCount); once the other device
	// has scanned too, it scatters its keys at once (its pass reads the other's starts
	// across), into landings reserved ahead with the room landingRoom gives. The host
	// reads the starts meanwhile, on a second queue of each device, for the sides.
	n := keys.Len()
	var room [2]int
	for j := range 2 {
		room[j] = roomFor(parts[j].Len, n)
		if r := s.sorters[di[j]].keyScratch; r == nil || r.Len() < room[j] {
			// A larger landing: the device's earlier work, which may use the one it
			// replaces, finishes first.
			if err := parts[j].Queue.Finish(ctx); err != nil {
				return false, err
			}
			if err := s.sorters[di[j]].Reserve(room[j], false); err != nil {
				return false, err
			}
		}
	}
	var scanned, scattered [2]*engine.Event
	defer func() {
		for i := range 2 {
			scanned[i].Close()
			scattered[i].Close()
		}
	}()
	err = keys.InTurnDevice(func(i int) error {
		pt := parts[i]
		if err := s.sorters[di[i]].crossCount(pt.Queue, pt.Buf, pt.Len, order, pick[i], 2*i); err != nil {
			return err
		}
		var err error
		scanned[i], err = pt.Queue.Record()
		return err
	})
	if err != nil {
		return false, err
	}
	scatter := func(i int) error {
		pt := parts[i]
		var land [2]any // where side j's keys land, as arguments of part i's device's kernels
		for j := range 2 {
			r := s.sorters[di[j]].keyScratch
			if j == i {
				land[j] = r
				continue
			}
			var err error
			if land[j], err = r.Reach(pt.Queue); err != nil {
				return fmt.Errorf("device %d's landing from %s: %w", j, pt.Queue.Device().ID(), err)
			}
		}
		other, err := s.sorters[di[1-i]].crossTable().Reach(pt.Queue)
		if err != nil {
			return fmt.Errorf("the other part's counts from %s: %w", pt.Queue.Device().ID(), err)
		}
		if err := pt.Queue.Wait(ctx, scanned[1-i]); err != nil {
			return err
		}
		w := crossWay{part: i, pick: pick[i], other: other, otherN: parts[1-i].Len, lo: land[0], hi: land[1], room: room}
		if err := s.sorters[di[i]].crossScatter(pt.Queue, pt.Buf, pt.Len, order, w); err != nil {
			return err
		}
		scattered[i].Close()
		scattered[i], err = pt.Queue.Record()
		return err
	}
	var starts [2][]uint32
	err = keys.EachDevice(func(i int) error {
		if err := scatter(i); err != nil {
			return err
		}
		rq, err := s.readQueue(di[i])
		if err != nil {
			return err
		}
		if err := rq.Wait(ctx, scanned[i]); err != nil {
			return err
		}
		starts[i], err = s.sorters[di[i]].crossStarts(ctx, rq, parts[i].Len)
		return err
	})
	if err != nil {
		return false, err
	}
	tr.step("counts")
	side := crossSides(starts)
	if side[0] > room[0] || side[1] > room[1] {
		// The splitter was far off (keys drawn unluckily): the pass again, with the room
		// the sides need (the scatter leaves its input and the counts as they were).
		for i := range 2 {
			if err := parts[i].Queue.Finish(ctx); err != nil {
				return false, err
			}
		}
		for j := range 2 {
			room[j] = max(room[j], side[j])
			if err := s.sorters[di[j]].Reserve(room[j], false); err != nil {
				return false, err
			}
		}
		if err := keys.EachDevice(scatter); err != nil {
			return false, err
		}
		outOfRoom.Add(1)
	}
	// The results, allocated while the pass runs; each device goes on once the other's
	// scatter has written its keys (on CUDA the devices wait for each other's events
	// themselves, the host going on).
	err = keys.EachDevice(func(j int) error {
		if side[j] > 0 {
			if err := receiving(parts[j].Queue.Device(), j, side[j], out, nil); err != nil {
				return err
			}
		}
		return parts[j].Queue.Wait(ctx, scattered[1-j])
	})
	if err != nil {
		return false, err
	}
	tr.step("crossing pass")
	err = keys.InTurnDevice(func(j int) error {
		return s.afterCross(di[j], parts[j].Queue, out[j], side[j], order)
	})
	if err != nil {
		return false, err
	}
	tr.step("passes after")
	tr.done(fmt.Sprintf("sharded sort keys of %d keys over 2 devices, crossing in the first pass (sides %d and %d, parts %d and %d)", keys.Len(), side[0], side[1], parts[0].Len, parts[1].Len))
	sortedAcross.Add(1)
	return true, nil
}

// afterCross enqueues the sort of the n keys that the crossing pass left in the landing of
// device d (its Sorter's scratch) into dst: with the device's onesweep sort where it has
// one (four passes of 8 bits from bit sortRadixBits on), else with its Sorter's passes
// after the first.
func (s *ShardedSort[K]) afterCross(d int, q *engine.Queue, dst *engine.Buffer[K], n int, order SortOrder) error {
	if o, ok := s.runners[d].(*Onesweep[K]); ok && n <= MaxOnesweepLen {
		return o.afterCross(q, dst, s.sorters[d].keyScratch, n, order, s.sorters[d].crossDigitBits())
	}
	return s.sorters[d].passesAfterCross(q, dst, n, order)
}

// crossBitsFor returns the digit width of the crossing pass of a sort of total keys whose
// parts lie on the devices di: crossPartition where both sort theirs after it with onesweep
// (which sorts every bit in as many passes as the bits past a digit), else sortRadixBits
// (sort.cl's passes after it start at the second digit). s.crossBits, where set, decides.
func (s *ShardedSort[K]) crossBitsFor(di []int, total int) int {
	if s.crossBits != 0 {
		return s.crossBits
	}
	for _, d := range di {
		if _, ok := s.runners[d].(*Onesweep[K]); !ok || landingRoom(total, total) > MaxOnesweepLen {
			return sortRadixBits
		}
	}
	return crossPartition
}

// sortedAcross counts the sorts that took sortAcross, for the tests; outOfRoom those whose
// crossing pass ran again because a side outgrew its landing's room.
var sortedAcross, outOfRoom atomic.Int64

// landingRoom returns the keys a device's landing holds ahead of sortAcross's crossing
// pass, for a part of n keys of total: the splitter predicts the side within about one per
// cent of total where the keys are many and random (acrossSamples), so a sixteenth more
// (and 4096, for few keys) is room that a side outgrows only with keys drawn very
// unluckily, when the pass runs again with the room it needs. Never more than total.
func landingRoom(n, total int) int {
	return min(total, n+total/16+4096)
}

// roomFor is landingRoom, which the tests replace to give too little room.
var roomFor = landingRoom

// readQueue returns the queue of device d (by its index in s.devs) on which sortAcross
// reads the crossing pass's starts while the pass runs on the part's own; made at its
// first use.
func (s *ShardedSort[K]) readQueue(d int) (*engine.Queue, error) {
	if s.readQs == nil {
		s.readQs = make([]*engine.Queue, len(s.devs))
	}
	if s.readQs[d] == nil {
		q, err := s.devs[d].NewQueue()
		if err != nil {
			return nil, err
		}
		s.readQs[d] = q
	}
	return s.readQs[d], nil
}

// sampleSeed is the seed of part i's samples (never 0, which samples evenly).
func sampleSeed(i int) uint32 { return uint32(i)*0x9e3779b9 | 1 }

// crossPartition is the crossing pass's digit width (Sorter.setCrossBits) for a pass that
// only partitions the keys by side of the splitter, stably: two buckets, so that a
// work-group writes the keys of each side of its tile in one run (a digit of sortRadixBits
// splits them into 32 runs of about 64 keys, whose stores cross the link at under 200
// GB/s). The sort after it then sorts every bit (Onesweep.afterCross from bit 0).
const crossPartition = -1

// setCrossBits sets the digit width of s's crossing pass: sortRadixBits, or crossPartition;
// a crossing pass built with another width is closed, to be built again at its next use.
func (s *Sorter[K]) setCrossBits(bits int) error {
	if bits != sortRadixBits && bits != crossPartition {
		return fmt.Errorf("kernels: sort: a crossing pass of %d digit bits: %w", bits, engine.ErrInvalidArg)
	}
	s.crossBits = bits
	if s.cross != nil && s.cross.bits != s.crossDigitBits() {
		err := s.cross.Close()
		s.cross = nil
		return err
	}
	return nil
}

// crossDigitBits returns the digit width of s's crossing pass: 0 for crossPartition.
func (s *Sorter[K]) crossDigitBits() int {
	if s.crossBits == crossPartition {
		return 0
	}
	return sortRadixBits
}

// crossPass is the first pass of a sort whose keys cross between two devices: sort.cl
// built with SPLIT, its kernels and its table (radix buckets a work-group, then the
// buckets' starts).
type crossPass struct {
	prog                       *engine.Program
	pick, count, scan, scatter *engine.Kernel
	table                      *engine.Buffer[uint32]
	picked                     *engine.Buffer[uint32] // sort_pick's splitter, (key, lim) for each part
	tile                       int                    // the keys a work-group ranks at once
	samples                    int                    // sort_pick's PICK_SAMPLES: both parts' samples, at most
	pickWG                     int                    // sort_pick's PICK_WG
	// bits is the digit width it was built for (the Sorter's crossDigitBits); radix its
	// buckets: a side of the splitter and a digit of the keys' low bits bits (32 or 2).
	bits, radix int
}

func (c *crossPass) Close() error {
	if c == nil {
		return nil
	}
	return errors.Join(c.pick.Close(), c.count.Close(), c.scan.Close(), c.scatter.Close(), c.table.Close(), c.picked.Close(), c.prog.Close())
}

// crossKernels returns the crossing pass of s's device, built at its first use with s's
// shape. It fails where that shape's local memory is more than the device gives a
// work-group with crossRadix buckets.
func (s *Sorter[K]) crossKernels() (*crossPass, error) {
	if s.cross != nil {
		return s.cross, nil
	}
	pad := func(x int) int64 { return int64(x + x>>5) }
	items := s.items
	tile := s.wg * items
	digit := s.crossDigitBits()
	crossRadix := 2 << digit
	local := max(5*pad(tile)+4*(pad(crossRadix/2*s.wg)+int64(s.wg)+int64(2*crossRadix)+1), 4*(pad(crossRadix*s.wg)+int64(s.wg)))
	// sort_pick's work-group and samples: the largest work-group up to 1024 (its bitonic
	// sort's steps are one barrier each: fewer keys an item, shorter steps), and as many
	// samples as the local memory holds, up to 2*acrossSamples.
	lim := kernels.DeviceLimits(s.dev)
	pickWG, samples, lm := 1024, 2*acrossSamples, lim.LocalBytes
	for lim.WorkGroup > 0 && pickWG > lim.WorkGroup {
		pickWG /= 2
	}
	for lm > 0 && 8*int64(samples+pickWG)+4 > lm {
		if samples > 2*pickWG {
			samples /= 2
		} else if pickWG > 32 {
			pickWG /= 2
		} else {
			break
		}
	}
	local = max(local, 8*int64(samples+pickWG)+4)
	if lm > 0 && local > lm {
		return nil, fmt.Errorf("kernels: sort: the crossing pass needs %d bytes of local memory, %s gives %d: %w", local, s.dev.ID(), lm, engine.ErrUnsupported)
	}
	var c *crossPass
	for {
		prog, err := s.dev.Build(source, fmt.Sprintf("-DWG=%d", s.wg), fmt.Sprintf("-DITEMS=%d", items),
			fmt.Sprintf("-DRADIX_BITS=%d", digit+1), "-DSPLIT", fmt.Sprintf("-DMERGE_GROUP=%d", mergeGroup),
			fmt.Sprintf("-DPICK_SAMPLES=%d", samples), fmt.Sprintf("-DPICK_WG=%d", pickWG))
		if err != nil {
			return nil, err
		}
		c = &crossPass{prog: prog, tile: tile, samples: samples, pickWG: pickWG, bits: digit, radix: crossRadix}
		_, err = kernels.LoadKernels(prog, kernels.Ref{Dst: &c.count, Name: "sort_count"}, kernels.Ref{Dst: &c.scan, Name: "sort_scan"},
			kernels.Ref{Dst: &c.scatter, Name: "sort_scatter"}, kernels.Ref{Dst: &c.pick, Name: "sort_pick"})
		if err != nil {
			c.Close()
			return nil, err
		}
		// A compiled sort_pick that takes fewer items than asked for (llvmpipe's) is built
		// again with the largest power of two it takes.
		if m := c.pick.MaxWorkGroupSize(); m > 0 && m < pickWG {
			c.Close()
			for pickWG > m {
				pickWG /= 2
			}
			continue
		}
		break
	}
	var err error
	if c.table, err = engine.NewBuffer[uint32](s.dev, c.radix*s.maxGroups+c.radix+1); err == nil {
		c.picked, err = engine.NewBuffer[uint32](s.dev, 4)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	s.cross = c
	return c, nil
}

// crossCount enqueues the count and the scan of the crossing pass over src[0, n), the keys
// of one device's part (n >= 1), for the splitter at pickAt in pick (a Launch argument of
// q's device: words pickAt and pickAt+1 are the part's (key, lim), as crossPick writes
// them: a key of the part is below the splitter where its mapped key is below key, or
// equal to it at a position below lim): the table of the buckets (side, digit 0) and their starts, which
// crossStarts reads.
func (s *Sorter[K]) crossCount(q *engine.Queue, src *engine.Buffer[K], n int, order SortOrder, pick any, pickAt int) error {
	c, err := s.crossKernels()
	if err != nil {
		return err
	}
	if n < 1 || n > MaxSortLen || n > src.Len() {
		return fmt.Errorf("kernels: sort: crossing pass over %d keys of %d: %w", n, src.Len(), engine.ErrInvalidArg)
	}
	tpg, groups := s.groupsOf(n, c.tile)
	if err := q.Launch(c.count, engine.Range1D(groups*s.wg, s.wg), c.table, src, int32(n), int32(0), orderMode(s.mode, order), int32(tpg), pick, int32(pickAt)); err != nil {
		return err
	}
	return q.Launch(c.scan, engine.Range1D(s.wg, s.wg), c.table, int32(c.radix*groups))
}

// crossStarts returns, once q has run crossCount's kernels, where each bucket's keys
// start among the n keys counted (radix+1 starts, the last n): one read back.
func (s *Sorter[K]) crossStarts(ctx context.Context, q *engine.Queue, n int) ([]uint32, error) {
	c := s.cross
	_, groups := s.groupsOf(n, c.tile)
	got := make([]uint32, c.radix+1)
	return got, c.table.Read(ctx, q, c.radix*groups, got)
}

// crossWay is where a crossing scatter (crossScatter) writes one part's keys: the keys of
// the splitter's side 0 go first, bucket by bucket (digit 0 ascending), within a bucket
// part 0's before part 1's; then side 1's likewise; the key at position o goes, mapped
// (SortMapKey), to lo at o where o is below side 0's keys of both parts (which the pass
// finds from both parts' starts), else to hi at o less them. lo and hi are Launch
// arguments of the part's device: its Buffers, or another device's it reaches. Only the
// first room[0] keys of side 0 and room[1] of side 1 are written (the landings' room).
type crossWay struct {
	part   int // 0 or 1
	pick   any // the splitter (crossCount's pick, at 2*part)
	other  any // the other part's table (its Sorter's crossTable, reached from this device)
	otherN int // the other part's keys
	lo, hi any
	room   [2]int
}

// crossScatter enqueues the scatter of the crossing pass crossCount counted (same src, n,
// order and splitter), the keys written as w says; both parts' counts are done before it
// runs.
func (s *Sorter[K]) crossScatter(q *engine.Queue, src *engine.Buffer[K], n int, order SortOrder, w crossWay) error {
	c := s.cross
	if c == nil || w.part < 0 || w.part > 1 {
		return fmt.Errorf("kernels: sort: crossing scatter before its count, or of part %d: %w", w.part, engine.ErrInvalidArg)
	}
	tpg, groups := s.groupsOf(n, c.tile)
	_, otherGroups := s.groupsOf(w.otherN, c.tile)
	r := engine.Range1D(groups*s.wg, s.wg)
	return q.Launch(c.scatter, r, w.lo, src, w.lo, src, c.table, int32(n), int32(0), orderMode(s.mode, order), int32(0), int32(tpg), int32(0),
		w.hi, w.hi, int32(0), int32(0), int32(0), w.pick, int32(2*w.part), w.other, int32(c.radix*otherGroups), int32(w.part), int32(w.room[0]), int32(w.room[1]))
}

// crossTable returns the table of s's crossing pass, which the other part's crossScatter
// reads the starts from (crossKernels first).
func (s *Sorter[K]) crossTable() *engine.Buffer[uint32] { return s.cross.table }

// crossSides returns the keys of each side of the splitter, from the starts of both parts'
// buckets (crossStarts, both of one radix: side 0's buckets are the first half).
func crossSides(starts [2][]uint32) (side [2]int) {
	radix := len(starts[0]) - 1
	side[0] = int(starts[0][radix/2] + starts[1][radix/2])
	side[1] = int(starts[0][radix]+starts[1][radix]) - side[0]
	return side
}

// passesAfterCross enqueues the passes after the crossing pass of the n keys it left in
// the scratch (Reserve(n) before it: the scratch is where they land), sorting them into
// dst (the last pass maps them back). The crossing pass sorted digit 0 (crossBits
// sortRadixBits): after a partition the scratch would be both the first pass's input and
// its output.
func (s *Sorter[K]) passesAfterCross(q *engine.Queue, dst *engine.Buffer[K], n int, order SortOrder) error {
	if n == 0 {
		return nil
	}
	if s.crossDigitBits() != sortRadixBits {
		return fmt.Errorf("kernels: sort: sort.cl's passes after a crossing pass that only partitions: %w", engine.ErrUnsupported)
	}
	if s.keyScratch == nil || s.keyScratch.Len() < n || dst.Len() < n {
		return fmt.Errorf("kernels: sort: %d keys after the crossing pass into %d: %w", n, dst.Len(), engine.ErrInvalidArg)
	}
	return s.passes(q, dst, s.keyScratch, nil, nil, n, order, 1, sortPasses)
}

// crossPick enqueues sort_pick: the splitter of two parts of na and nb keys from ma and mb
// of their samples (sampleRun with sampleSeed(0) and (1); sb a Launch argument of q's
// device: a buffer of it, or of another device it reaches) written into the crossing
// pass's picked, (key, lim) for part 0 then for part 1 (crossCount's): the one
// pickSplitters picks, its weights summed in exact integers.
func (s *Sorter[K]) crossPick(q *engine.Queue, sa *engine.Buffer[K], ma, na int, sb any, mb, nb int, order SortOrder) error {
	c, err := s.crossKernels()
	if err != nil {
		return err
	}
	if ma < 0 || mb < 0 || ma+mb > c.samples || ma > na || mb > nb || ma > sa.Len() || na > MaxSortLen || nb > MaxSortLen {
		return fmt.Errorf("kernels: sort: a splitter from %d and %d samples of %d and %d keys (at most %d samples): %w", ma, mb, na, nb, c.samples, engine.ErrInvalidArg)
	}
	return q.Launch(c.pick, engine.Range1D(c.pickWG, c.pickWG), c.picked, sa, int32(ma), int32(na), sampleSeed(0), sb, int32(mb), int32(nb), sampleSeed(1), orderMode(s.mode, order))
}
