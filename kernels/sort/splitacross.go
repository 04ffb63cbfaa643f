package sort

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
)

// acrossSamples is how many keys each part gives sortAcross to pick its splitter from:
// the devices' shares of the keys are predicted within about one per cent where the parts
// are large and random.
const acrossSamples = 4096

// sortAcross is Sort's path for keys over two devices whose kernels reach each other's
// memory (CUDA GPUs with peer access): the keys cross between the devices inside the
// sort's first pass, so that no exchange and no merge follows.
//
//  1. Each part gives acrossSamples keys drawn one from each of as many even slots
//     (sort_sample with a seed), read back, and the host picks the splitter among them
//     (crossSplitter): device 0 is to hold the keys below it, device 1 the rest, each
//     predicted to end with as many keys as its part held.
//  2. Each device counts its part's keys by side of the splitter and digit 0 (crossCount:
//     sort.cl built with SPLIT, buckets of a side and a digit), and the host reads the
//     buckets' starts (the keys of each side: crossSides); each device's pass places its
//     part's keys among both parts' from both parts' starts (the other's read across the
//     link): bucket by bucket, part 0's before part 1's, side 0 on device 0 and side 1 on
//     device 1.
//  3. Each device's first pass places its keys (crossScatter), each device's keys then
//     being those of one side ordered by digit 0. Staged (crossChunks > 0, the default):
//     the scatter, in crossChunks launches, writes every key into its own device, the
//     other side's after its own; as each chunk ends, the other device's copy queue
//     (copyQueue) copies that chunk's keys of its side across into place (crossCopies), the
//     copy engines moving them over the link while the scatter goes on. Else the scatter
//     writes the other side's keys across the link itself.
//  4. Once its keys are in, each device's passes after the first (passesAfterCross) sort
//     them where they are into its result: no merge follows. The devices wait for each
//     other's events themselves (engine.Queue.Wait across CUDA devices): after the counts
//     the host waits for nothing.
//
// It reports false, having done nothing, where the sort is not of that kind: values, other
// than two parts, an empty part, devices that do not reach each other, or a device whose
// local memory does not hold the crossing pass.
//
// On two H200 (2026-11-30, 2^27 random keys, BenchmarkShardedSort): 4.14-4.23 ms against
// 6.61 on one GPU; prism bench's sharded case 4.15-4.19 ms against 7.07-7.08, 1.69-1.71x. Its steps: the
// samples 60-115 us and the splitter 35-70 (the host's work, the devices idle), the counts
// 175-190, the first pass 690-750 (a local pass takes about 0.44 ms: the scatter's stores
// cross the link at under 200 GB/s each way, in runs of about 64 keys a bucket, where a
// copy kernel's reach 347; tiles twice as large, with runs twice as long, were no faster)
// and the seven passes after 3.06-3.09.
//
// Tried before it and dropped: crossing in the last pass (the passes but the last on each
// part, the splitter's counts, the last pass's scatter writing each sorted run into both
// devices, then a merge of the two runs each device received): 4.16-4.26 ms, its steps 3.17
// ms, 0.67 and a merge of 0.31-0.35. Partitioning first, then sorting each device's keys,
// is in ShardedSort's comment.
func (s *ShardedSort[K]) sortAcross(ctx context.Context, di []int, keys *shard.Buffer[K], out []*engine.Buffer[K], order SortOrder) (bool, error) {
	parts := keys.Parts()
	if len(parts) != 2 || parts[0].Len == 0 || parts[1].Len == 0 || !peerAll(parts) {
		return false, nil
	}
	for i := range 2 {
		if _, err := s.sorters[di[i]].crossKernels(); err != nil {
			if errors.Is(err, engine.ErrUnsupported) {
				return false, nil
			}
			return false, err
		}
	}
	tr := newStepTimer(keys)
	drawn := make([][]K, 2)
	err := keys.EachDevice(func(i int) error {
		var err error
		drawn[i], err = s.drawSamples(ctx, di[i], parts[i], i)
		return err
	})
	if err != nil {
		return false, err
	}
	tr.step("samples")
	sp := crossSplitter(drawn, keys.Counts(), order)
	tr.step("splitter")
	staged, chunks := s.crossChunks > 0, 1
	if staged {
		chunks = s.crossChunks
	}
	var starts [2][]uint32
	err = keys.EachDevice(func(i int) error {
		pt, srt, b := parts[i], s.sorters[di[i]], bucketOf(sp, i)
		if err := srt.crossCount(pt.Queue, pt.Buf, pt.Len, order, b.key, b.lim, chunks); err != nil {
			return err
		}
		var err error
		starts[i], err = srt.crossStarts(ctx, pt.Queue, pt.Len, chunks)
		return err
	})
	if err != nil {
		return false, err
	}
	tr.step("counts")
	side := crossSides(starts)
	// A staged pass keeps the other side's keys after the device's own (crossWay).
	var stage [2]int
	if staged {
		stage[0] = int(starts[0][crossRadix] - starts[0][sortRadix])
		stage[1] = int(starts[1][sortRadix])
	}
	for j := range 2 {
		if n := side[j] + stage[j]; n > 0 {
			// Room to spare, so that the next sort's sides, a little different, fit.
			if err := s.sorters[di[j]].Reserve(min(MaxSortLen, engine.RoundUp(n, max(1<<16, n>>6))), false); err != nil {
				return false, err
			}
		}
	}
	// land(j, i): where device j's keys land, as an argument of part i's device's kernels.
	land := func(j, i int) (any, error) {
		if side[j]+stage[j] == 0 { // none land there: any buffer of part i's device will do
			return parts[i].Buf, nil
		}
		r := s.sorters[di[j]].keyScratch
		if i == j {
			return r, nil
		}
		return r.Reach(parts[i].Queue)
	}
	record := func(q *engine.Queue, into *[]*engine.Event) error {
		ev, err := q.Record()
		if err != nil {
			return err
		}
		*into = append(*into, ev)
		return nil
	}
	// before[j]: part j's device's work before the pass (the last users of its landing),
	// which the copies into its landing follow.
	var before [2][]*engine.Event
	defer func() {
		for _, evs := range before {
			for _, e := range evs {
				e.Close()
			}
		}
	}()
	var scattered [2][]*engine.Event // by part, by chunk
	defer func() {
		for _, evs := range scattered {
			for _, e := range evs {
				e.Close()
			}
		}
	}()
	err = keys.EachDevice(func(i int) error {
		pt, b := parts[i], bucketOf(sp, i)
		w := crossWay{part: i, otherN: parts[1-i].Len, cut: side[0], staged: staged, stageAt: side[i]}
		var err error
		if w.other, err = s.sorters[di[1-i]].crossTable().Reach(pt.Queue); err != nil {
			return fmt.Errorf("the other part's counts from %s: %w", pt.Queue.Device().ID(), err)
		}
		if staged {
			if err := record(pt.Queue, &before[i]); err != nil {
				return err
			}
			if w.lo, err = land(i, i); err != nil {
				return err
			}
			w.hi = w.lo
		} else {
			if w.lo, err = land(0, i); err != nil {
				return fmt.Errorf("device 0's landing from %s: %w", pt.Queue.Device().ID(), err)
			}
			if w.hi, err = land(1, i); err != nil {
				return fmt.Errorf("device 1's landing from %s: %w", pt.Queue.Device().ID(), err)
			}
		}
		for c := range chunks {
			if err := s.sorters[di[i]].crossScatter(pt.Queue, pt.Buf, pt.Len, order, b.key, b.lim, w, c, c+1, chunks); err != nil {
				return err
			}
			if err := record(pt.Queue, &scattered[i]); err != nil {
				return err
			}
		}
		if side[i] > 0 { // the result, allocated while the pass runs
			if err := receiving(pt.Queue.Device(), i, side[i], out, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	var copied [2]*engine.Event
	defer func() { copied[0].Close(); copied[1].Close() }()
	if staged {
		// Each device's copy queue brings the other part's keys of its side, chunk by chunk
		// as the other device's scatter finishes them.
		err = keys.EachDevice(func(j int) error {
			i := 1 - j
			cq, err := s.copyQueue(di[j])
			if err != nil {
				return err
			}
			if err := cq.Wait(ctx, before[j]...); err != nil {
				return err
			}
			to, from := s.sorters[di[j]].keyScratch, s.sorters[di[i]].keyScratch
			for c, spans := range crossCopies(starts, side, j, chunks) {
				if len(spans) == 0 {
					continue
				}
				if err := cq.Wait(ctx, scattered[i][c]); err != nil {
					return err
				}
				for _, sp := range spans {
					if err := to.CopyFrom(cq, sp.to, from, sp.from, sp.count); err != nil {
						return fmt.Errorf("the crossing pass's keys from %s: %w", parts[i].Queue.Device().ID(), err)
					}
				}
			}
			copied[j], err = cq.Record()
			return err
		})
		if err != nil {
			return false, err
		}
	}
	// Each device goes on once its keys are in: the other device's scatter done (written
	// across), or both devices' copies (staged: its keys in, its staged keys out). On CUDA
	// the devices wait for each other's events themselves, the host going on.
	err = keys.EachDevice(func(j int) error {
		wait := []*engine.Event{scattered[1-j][len(scattered[1-j])-1]}
		if staged {
			wait = copied[:]
		}
		return parts[j].Queue.Wait(ctx, wait...)
	})
	if err != nil {
		return false, err
	}
	tr.step("crossing pass")
	err = keys.EachDevice(func(j int) error {
		return s.sorters[di[j]].passesAfterCross(parts[j].Queue, out[j], side[j], order)
	})
	if err != nil {
		return false, err
	}
	tr.step("passes after")
	tr.done(fmt.Sprintf("sharded sort keys of %d keys over 2 devices, crossing in the first pass", keys.Len()))
	sortedAcross.Add(1)
	return true, nil
}

// copyQueue returns the queue of device d (by its index in s.devs) that the copies of a
// staged crossing pass run on, beside the parts' own queues; made at its first use.
func (s *ShardedSort[K]) copyQueue(d int) (*engine.Queue, error) {
	if s.copyQs == nil {
		s.copyQs = make([]*engine.Queue, len(s.devs))
	}
	if s.copyQs[d] == nil {
		q, err := s.devs[d].NewQueue()
		if err != nil {
			return nil, err
		}
		s.copyQs[d] = q
	}
	return s.copyQs[d], nil
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

// crossRadix is the buckets of the crossing pass (sort.cl built with SPLIT): a side of the
// splitter and a digit of sortRadixBits bits.
const crossRadix = 2 * sortRadix

// crossPass is the first pass of a sort whose keys cross between two devices: sort.cl
// built with SPLIT, its kernels and its table (crossRadix buckets a work-group, then the
// buckets' starts).
type crossPass struct {
	prog                 *engine.Program
	count, scan, scatter *engine.Kernel
	table                *engine.Buffer[uint32]
	tile                 int // the keys a work-group ranks at once
}

func (c *crossPass) Close() error {
	if c == nil {
		return nil
	}
	return errors.Join(c.count.Close(), c.scan.Close(), c.scatter.Close(), c.table.Close(), c.prog.Close())
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
	local := max(5*pad(tile)+4*(pad(crossRadix/2*s.wg)+int64(s.wg)+2*crossRadix+1), 4*(pad(crossRadix*s.wg)+int64(s.wg)))
	if lm := kernels.DeviceLimits(s.dev).LocalBytes; lm > 0 && local > lm {
		return nil, fmt.Errorf("kernels: sort: the crossing pass needs %d bytes of local memory, %s gives %d: %w", local, s.dev.ID(), lm, engine.ErrUnsupported)
	}
	prog, err := s.dev.Build(source, fmt.Sprintf("-DWG=%d", s.wg), fmt.Sprintf("-DITEMS=%d", items),
		fmt.Sprintf("-DRADIX_BITS=%d", sortRadixBits+1), "-DSPLIT", fmt.Sprintf("-DMERGE_GROUP=%d", mergeGroup))
	if err != nil {
		return nil, err
	}
	c := &crossPass{prog: prog, tile: tile}
	_, err = kernels.LoadKernels(prog, kernels.Ref{Dst: &c.count, Name: "sort_count"}, kernels.Ref{Dst: &c.scan, Name: "sort_scan"},
		kernels.Ref{Dst: &c.scatter, Name: "sort_scatter"})
	if err == nil {
		c.table, err = engine.NewBuffer[uint32](s.dev, crossRadix*s.maxGroups+crossRadix+1+(maxCrossChunks-1)*crossRadix)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	s.cross = c
	return c, nil
}

// crossCount enqueues the count and the scan of the crossing pass over src[0, n), the keys
// of one device's part (n >= 1), for the splitter (key, lim) as bucketOf gives it: the
// table of the buckets (side, digit 0) and their starts, which crossStarts reads, with
// where each bucket's keys begin in each of chunks (1 to maxCrossChunks) chunks of the
// pass's work-groups (crossChunk).
func (s *Sorter[K]) crossCount(q *engine.Queue, src *engine.Buffer[K], n int, order SortOrder, key, lim uint32, chunks int) error {
	c, err := s.crossKernels()
	if err != nil {
		return err
	}
	if n < 1 || n > MaxSortLen || n > src.Len() {
		return fmt.Errorf("kernels: sort: crossing pass over %d keys of %d: %w", n, src.Len(), engine.ErrInvalidArg)
	}
	if chunks < 1 || chunks > maxCrossChunks {
		return fmt.Errorf("kernels: sort: crossing pass in %d chunks; must be in 1..%d: %w", chunks, maxCrossChunks, engine.ErrInvalidArg)
	}
	tpg, groups := s.groupsOf(n, c.tile)
	if err := q.Launch(c.count, engine.Range1D(groups*s.wg, s.wg), c.table, src, int32(n), int32(0), orderMode(s.mode, order), int32(tpg), key, lim); err != nil {
		return err
	}
	return q.Launch(c.scan, engine.Range1D(s.wg, s.wg), c.table, int32(crossRadix*groups), int32(chunks))
}

// crossStarts returns, once q has run crossCount's kernels for the same n and chunks,
// where each bucket's keys start among the n keys counted (crossRadix+1 starts, the last
// n), then for each chunk after the first where its keys of each bucket begin
// (crossRadix each): one read back.
func (s *Sorter[K]) crossStarts(ctx context.Context, q *engine.Queue, n, chunks int) ([]uint32, error) {
	_, groups := s.groupsOf(n, s.cross.tile)
	got := make([]uint32, crossRadix+1+(chunks-1)*crossRadix)
	return got, s.cross.table.Read(ctx, q, crossRadix*groups, got)
}

// maxCrossChunks bounds the chunks of a staged crossing pass (crossWay.staged).
const maxCrossChunks = 8

// crossChunk returns the first work-group of chunk c of chunks over groups (c = chunks:
// groups), as sort_scan divides them.
func crossChunk(c, groups, chunks int) int { return int(int64(c) * int64(groups) / int64(chunks)) }

// crossWay is where a crossing scatter (crossScatter) writes one part's keys.
//
// Written across (staged false): the keys of the splitter's side 0 go first, bucket by
// bucket (digit 0 ascending), within a bucket part 0's before part 1's; then side 1's
// likewise; the key at position o goes, mapped (SortMapKey), to lo at o where o < cut
// (side 0's keys, crossSides), else to hi at o - cut. lo and hi are Launch arguments of
// the part's device: its Buffers, or another device's it reaches.
//
// Staged: the keys of the part's own side (side 0 for part 0, side 1 for part 1) go where
// they would across (at their o, less cut for side 1), the others, in the order of the
// part's own buckets, after them: all into lo = hi, the part's device's landing, the keys
// of the other side from position stageAt (the part's own side's keys of both parts);
// crossCopies then says where they go on the other device.
type crossWay struct {
	part    int // 0 or 1
	other   any // the other part's table (its Sorter's crossTable, reached from this device)
	otherN  int // the other part's keys
	lo, hi  any
	cut     int
	staged  bool
	stageAt int
}

// crossScatter enqueues the scatter of the crossing pass crossCount counted (same src, n,
// order and splitter) for the chunk [c0, c1) of its chunks (crossCount's, all of it in
// one: 0, 1, 1), the keys written as w says; both parts' counts are done.
func (s *Sorter[K]) crossScatter(q *engine.Queue, src *engine.Buffer[K], n int, order SortOrder, key, lim uint32, w crossWay, c0, c1, chunks int) error {
	c := s.cross
	if c == nil || w.part < 0 || w.part > 1 || c0 < 0 || c1 > chunks || c0 > c1 {
		return fmt.Errorf("kernels: sort: crossing scatter before its count, or of part %d, chunks [%d, %d) of %d: %w", w.part, c0, c1, chunks, engine.ErrInvalidArg)
	}
	tpg, groups := s.groupsOf(n, c.tile)
	_, otherGroups := s.groupsOf(w.otherN, c.tile)
	g0, g1 := crossChunk(c0, groups, chunks), crossChunk(c1, groups, chunks)
	if g1 == g0 {
		return nil
	}
	which, off1, off2 := int32(w.part), int32(0), int32(0)
	if w.staged {
		which |= 2
		if w.part == 0 {
			off2 = int32(w.stageAt)
		} else {
			off1 = int32(w.stageAt)
		}
	}
	r := engine.Range1D((g1-g0)*s.wg, s.wg)
	return q.Launch(c.scatter, r, w.lo, src, w.lo, src, c.table, int32(n), int32(0), orderMode(s.mode, order), int32(0), int32(tpg), int32(0),
		w.hi, w.hi, int32(w.cut), off1, off2, key, lim, w.other, int32(crossRadix*otherGroups), which, int32(g0), int32(groups))
}

// crossSpan is one copy of a staged crossing pass: count keys from the other device's
// landing at from to this device's at to.
type crossSpan struct{ from, to, count int }

// crossCopies returns the copies that bring the keys a staged crossing pass in chunks
// chunks left on the device of part 1-j (crossWay.staged, its landing holding side[1-j]
// keys of its own side first) to the landing of part j, by chunk: each chunk's keys of
// each bucket of side j, from both parts' starts (crossStarts). Spans contiguous at both
// ends are joined; empty ones are left out.
func crossCopies(starts [2][]uint32, side [2]int, j, chunks int) [][]crossSpan {
	i := 1 - j
	s0, s1, si := starts[0], starts[1], starts[i]
	f := j * sortRadix         // side j's first bucket
	at := func(c, b int) int { // where part i's keys of bucket b of chunk c begin among its keys
		switch c {
		case 0:
			return int(si[b])
		case chunks:
			return int(si[b+1])
		}
		return int(si[crossRadix+1+(c-1)*crossRadix+b])
	}
	out := make([][]crossSpan, chunks)
	for c := range chunks {
		var spans []crossSpan
		for b := f; b < f+sortRadix; b++ {
			dst := int(s0[b]-s0[f]) + int(s1[b]-s1[f]) // bucket b's first key on device j
			if i == 1 {
				dst += int(s0[b+1] - s0[b])
			}
			p, e := at(c, b), at(c+1, b)
			if e == p {
				continue
			}
			sp := crossSpan{from: side[i] + p - int(si[f]), to: dst + p - int(si[b]), count: e - p}
			if k := len(spans) - 1; k >= 0 && spans[k].from+spans[k].count == sp.from && spans[k].to+spans[k].count == sp.to {
				spans[k].count += sp.count
				continue
			}
			spans = append(spans, sp)
		}
		out[c] = spans
	}
	return out
}

// crossTable returns the table of s's crossing pass, which the other part's crossScatter
// reads the starts from (crossKernels first).
func (s *Sorter[K]) crossTable() *engine.Buffer[uint32] { return s.cross.table }

// crossSides returns the keys of each side of the splitter, from the starts of both parts'
// buckets (crossStarts).
func crossSides(starts [2][]uint32) (side [2]int) {
	side[0] = int(starts[0][sortRadix] + starts[1][sortRadix])
	side[1] = int(starts[0][crossRadix]+starts[1][crossRadix]) - side[0]
	return side
}

// passesAfterCross enqueues the passes after the crossing pass of the n keys it left in
// the scratch (Reserve(n) before it: the scratch is where they land), sorting them into
// dst (the last pass maps them back).
func (s *Sorter[K]) passesAfterCross(q *engine.Queue, dst *engine.Buffer[K], n int, order SortOrder) error {
	if n == 0 {
		return nil
	}
	if s.keyScratch == nil || s.keyScratch.Len() < n || dst.Len() < n {
		return fmt.Errorf("kernels: sort: %d keys after the crossing pass into %d: %w", n, dst.Len(), engine.ErrInvalidArg)
	}
	return s.passes(q, dst, s.keyScratch, nil, nil, n, order, 1, sortPasses)
}

// crossSplitter returns the splitter of two parts of counts keys from the keys drawn from
// them (drawSamples): the one pickSplitters picks from those samples (each standing for
// its part's count over its samples plus one keys; the first at which they reach part 0's
// count), found without sorting them: the samples are counted by the top crossTopBits
// bits of their mapped keys, the counts summed up to the bucket where part 0's count is
// reached, and only that bucket's samples sorted (on an H200's host sorting all 8192 took
// hundreds of microseconds, which the devices spent waiting).
func crossSplitter[K SortKey](drawn [][]K, counts []int, order SortOrder) place {
	need := float64(counts[0])
	if need == 0 {
		return beforeAll
	}
	var weight [2]float64
	var hist [2][1 << crossTopBits]int32
	const shift = 32 - crossTopBits
	for i, d := range drawn {
		weight[i] = float64(counts[i]) / float64(len(d)+1)
		for _, k := range d {
			hist[i][SortMapKey(k, order)>>shift]++
		}
	}
	reached := 0.0
	for b := range 1 << crossTopBits {
		w := float64(hist[0][b])*weight[0] + float64(hist[1][b])*weight[1]
		if reached+w < need {
			reached += w
			continue
		}
		// The splitter is among bucket b's samples: their places, in order.
		var in []place
		for i, d := range drawn {
			for g, k := range d {
				if mk := SortMapKey(k, order); int(mk>>shift) == b {
					in = append(in, place{key: mk, part: i, pos: sampleAt(g, counts[i], len(d), sampleSeed(i))})
				}
			}
		}
		slices.SortFunc(in, place.compare)
		for _, p := range in {
			if reached+weight[p.part] >= need {
				return p
			}
			reached += weight[p.part]
		}
		// Rounding: the bucket's sum reached need where its samples one by one did not.
	}
	return afterAll
}

// crossTopBits is the bits of the mapped keys by which crossSplitter counts the samples.
const crossTopBits = 12
