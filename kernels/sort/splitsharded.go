package sort

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
)

// ShardedSort sorts keys, alone or with uint32 values, sharded by rows over devices
// (engine/shard) with a sample sort, and leaves the result on the devices sharded by key
// range: each device holds one range of the keys, sorted, the ranges in device order, so
// that gathering the parts in device order gives the one-device sort of the whole (Sorter),
// keys and values bit for bit.
//
// A Sort of p parts runs in four steps:
//  1. Every device sorts its part where it lies into a sorted run, stable: pairs with
//     onesweep on a CUDA device (the one-device op's default there), else with its Sorter.
//  2. Each run gives evenly spaced samples (sampleFactor*p - 1 of them), read back. A
//     sample is a key with its place: (SortMapKey(key), part, position in the run), whose
//     order is that of the stable sort of the whole (the parts lie in input order, and a
//     stable local sort keeps equal keys in input order within a part). The host sorts the
//     samples and picks p-1 splitters among them so that device j is predicted to end with
//     as many keys as its part held (the planner's share): a faster device gets more.
//  3. Each run is cut at the splitters: the keys of part i up to splitter j are those of a
//     smaller mapped key, plus the equal ones when i precedes the splitter's part (up to the
//     splitter's own position within its part), found by a binary search on the mapped
//     keys, between the run's samples that bracket the splitter: on the device, a run's
//     searches in one launch of sort_cut and one read back. Equal keys are so divided
//     between devices too (a run of equal keys does not all land on one device), in input
//     order. Piece j of each run goes to device j.
//  4. Each device merges its pieces, in part order (stable: equal keys keep part order,
//     which is input order), into its result with its Sorter's merge (sort_merge). Where
//     the devices' kernels reach each other's memory (Buffer.Reach: CUDA GPUs with peer
//     access) the first pass reads the pieces where they lie, across the link
//     (mergeFromRuns); elsewhere they are exchanged first (exchange), landing where an
//     even count of passes ends in the result (landing), so nothing is copied back.
//
// Keys alone over two devices whose kernels reach each other's memory take a shorter way
// (sortAcross): the splitter is picked from samples of the unsorted parts, and each
// sort's first pass writes its keys straight into the device they belong to, whose
// passes after it sort them there: no merge follows.
//
// Tried and dropped on two H200 (2026-11-30, 128M keys): partitioning first, then sorting
// once. Each part gave 4096 keys drawn at random positions, the host picked the
// splitters from them, each part was partitioned stably by the splitters (one pass of
// sort.cl's count, scan and scatter with buckets for digits), the buckets were exchanged
// with peer copies and each device sorted what it received: keys 6.19 ms against 4.43
// with the four steps above and 6.80 on one GPU (pairs 6.54 against 4.86 and 6.98). Its
// steps took samples 0.5-0.7 ms (host work), partition 1.0 ms (a radix pass ranks its
// tiles in local memory: 0.45 ms of the Sorter's 3.6 for 64M keys, not the 0.13 ms of a
// copy), exchange 0.52-0.6 and sort 3.9-4.1 (a new result buffer each sort: no replay of
// the sort's launches). A partition at copy speed and the sort replayed would still add
// up to about 4.2 ms: the sort after the exchange costs what the runs cost here, and the
// exchange (0.39 ms for 128 MB each way, SM stores or copy engine) what the merge's reads
// across do beyond a local merge.
//
// It holds a Sorter per device (its own from NewShardedSort) and scratch kept between
// sorts: each device's sorted run, samples and landing buffer (landing), and the host
// staging of the exchange. Not safe for concurrent use.
type ShardedSort[K SortKey] struct {
	devs    []*engine.Device
	sorters []*Sorter[K]
	// runners sort each device's run where a faster sort than its Sorter's is there
	// (newRunSorter: onesweep on CUDA, as the one-device op); nil where none is.
	runners []sorter[K]
	own     bool // the sorters are closed with it (NewShardedSort's)
	// Scratch, by the index of the device in devs: the sorted runs, the samples.
	runs    []*engine.Buffer[K]
	runVals []*engine.Buffer[uint32]
	samples []*engine.Buffer[K]
	// Where a device's received keys land when its merge makes an odd number of passes,
	// so that the last pass ends in the result (landing).
	recv     []*engine.Buffer[K]
	recvVals []*engine.Buffer[uint32]
	// The exchange's host staging, grown as needed.
	stage     []K
	stageVals []uint32
	// mergeFirst takes the path of four steps for keys over two devices that reach each
	// other's memory too, rather than sortAcross (the tests and benchmarks compare them).
	mergeFirst bool
	// crossBits, where not 0, is the digit width of sortAcross's crossing pass
	// (sortRadixBits or crossPartition) in place of crossBitsFor's choice (the benchmarks
	// compare them).
	crossBits int
	// readQs are the queues sortAcross reads the crossing pass's starts on (readQueue).
	readQs []*engine.Queue
}

// sampleFactor is how many samples a run gives per device of a sort, less one: with 16,
// a device's range of keys is predicted within about a sixteenth of the keys a part
// holds (regular sampling oversampled; a run's samples are one launch of sort_sample and one
// read back).
const sampleFactor = 16

// NewShardedSort builds the sort on every device of devs (those of the shards it will
// sort).
func NewShardedSort[K SortKey](devs []*engine.Device) (_ *ShardedSort[K], err error) {
	s := &ShardedSort[K]{own: true}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	for _, d := range devs {
		if d == nil {
			return nil, fmt.Errorf("kernels: sharded sort: nil device: %w", engine.ErrInvalidArg)
		}
		srt, err := NewSorter[K](d)
		if err != nil {
			return nil, err
		}
		run, err := newRunSorter[K](d)
		if err != nil {
			srt.Close()
			return nil, err
		}
		s.add(d, srt, run)
	}
	return s, nil
}

// newRunSorter returns the sort of a device's run where one faster than Sorter is there:
// onesweep on a CUDA device that runs it (the one-device op's default there), nil
// elsewhere. On an H200 (2026-11-30) onesweep sorts 2^28 keys in 8.16 ms against 12.91 for
// Sorter, and 2^28 pairs in 11.26 ms against 17.91; it also sorts the keys a crossing pass
// leaves (Onesweep.afterCross).
func newRunSorter[K SortKey](dev *engine.Device) (sorter[K], error) {
	if dev.Backend() != "cuda" || dev.Info().ComputeCapability < onesweepMinCompute {
		return nil, nil
	}
	return NewOnesweep[K](dev)
}

// pickSorter returns the sort of n keys (alone or with values) of a device with Sorter srt
// and run sorter run (newRunSorter's, or nil): run where it takes them, else srt.
func pickSorter[K SortKey](srt *Sorter[K], run sorter[K], n int) sorter[K] {
	if run != nil && n <= MaxOnesweepLen {
		return run
	}
	return srt
}

// add gives s the sorter srt of dev, and its run sorter (nil: srt sorts the runs too).
func (s *ShardedSort[K]) add(dev *engine.Device, srt *Sorter[K], run sorter[K]) {
	s.devs, s.sorters, s.runners = append(s.devs, dev), append(s.sorters, srt), append(s.runners, run)
	s.runs, s.runVals, s.samples = append(s.runs, nil), append(s.runVals, nil), append(s.samples, nil)
	s.recv, s.recvVals = append(s.recv, nil), append(s.recvVals, nil)
}

// on returns the index of dev in s.devs, -1 where s has no sorter for it.
func (s *ShardedSort[K]) on(dev *engine.Device) int { return slices.Index(s.devs, dev) }

// closeScratch releases the scratch buffers and the host staging.
func (s *ShardedSort[K]) closeScratch() error {
	var errs []error
	for i := range s.runs {
		errs = append(errs, s.runs[i].Close(), s.runVals[i].Close(), s.samples[i].Close(), s.recv[i].Close(), s.recvVals[i].Close())
		s.runs[i], s.runVals[i], s.samples[i], s.recv[i], s.recvVals[i] = nil, nil, nil, nil, nil
	}
	s.stage, s.stageVals = nil, nil
	for _, q := range s.readQs {
		if q != nil {
			errs = append(errs, q.Close())
		}
	}
	s.readQs = nil
	return errors.Join(errs...)
}

// Close releases the scratch, and the sorters NewShardedSort built. Idempotent.
func (s *ShardedSort[K]) Close() error {
	if s == nil {
		return nil
	}
	errs := []error{s.closeScratch()}
	if s.own {
		for i, srt := range s.sorters {
			errs = append(errs, srt.Close())
			if s.runners[i] != nil {
				errs = append(errs, s.runners[i].Close())
			}
		}
	}
	s.devs, s.sorters, s.runners, s.runs, s.runVals, s.samples, s.recv, s.recvVals = nil, nil, nil, nil, nil, nil, nil, nil
	return errors.Join(errs...)
}

// place is a key of a sorted run with its place: its mapped key, its part and its position
// in the part's run. Places compare in the order of the stable sort of the whole.
type place struct {
	key       uint32
	part, pos int
}

func (a place) compare(b place) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	if c := cmp.Compare(a.part, b.part); c != 0 {
		return c
	}
	return cmp.Compare(a.pos, b.pos)
}

// Sort sorts keys (and vals alongside, nil for keys alone) in order into new Buffers on
// the same queues, which the caller closes: laid out by rows, device i holding the i-th
// range of the sorted keys (possibly none). keys must be a 1-D array by rows
// (shard.ByRows(1)) and vals, when given, laid out alike (shard.SameLayout); every part's
// device must have a sorter in s. The inputs are left untouched. It returns once the last
// merges are enqueued (Gather or Finish waits); the steps before them (the samples and
// cuts read back, the exchange or the merge's first pass across devices) wait for the
// devices.
func (s *ShardedSort[K]) Sort(ctx context.Context, keys *shard.Buffer[K], vals *shard.Buffer[uint32], order SortOrder) (_ *shard.Buffer[K], _ *shard.Buffer[uint32], err error) {
	what := "sharded sort keys"
	if vals != nil {
		what = "sharded sort pairs"
	}
	if err := keys.Check(); err != nil {
		return nil, nil, fmt.Errorf("kernels: %s: %w", what, err)
	}
	if l := keys.Layout(); l.Kind != shard.Rows || max(l.Cols, 1) != 1 {
		return nil, nil, fmt.Errorf("kernels: %s: keys laid out by %s; the sort takes a 1-D array by rows (shard.ByRows(1)): %w", what, l, engine.ErrInvalidArg)
	}
	if vals != nil {
		if err := shard.SameLayout(keys, vals); err != nil {
			return nil, nil, fmt.Errorf("kernels: %s: values: %w", what, err)
		}
	}
	if order != Ascending && order != Descending {
		return nil, nil, fmt.Errorf("kernels: %s: %v: %w", what, order, engine.ErrInvalidArg)
	}
	parts := keys.Parts()
	var vparts []shard.Part[uint32]
	if vals != nil {
		vparts = vals.Parts()
	}
	p := len(parts)
	di := make([]int, p) // each part's device in s
	for i, pt := range parts {
		if di[i] = s.on(pt.Queue.Device()); di[i] < 0 {
			return nil, nil, fmt.Errorf("kernels: %s: no sorter for %s (give it to NewShardedSort): %w", what, pt.Queue.Device().ID(), engine.ErrInvalidArg)
		}
	}
	out := make([]*engine.Buffer[K], p)
	var vout []*engine.Buffer[uint32]
	if vals != nil {
		vout = make([]*engine.Buffer[uint32], p)
	}
	defer func() {
		if err != nil {
			for i := range out {
				out[i].Close()
				if vout != nil {
					vout[i].Close()
				}
			}
		}
	}()
	fail := func(err error) (*shard.Buffer[K], *shard.Buffer[uint32], error) {
		return nil, nil, fmt.Errorf("kernels: %s of %d keys over %d devices: %w", what, keys.Len(), p, err)
	}
	if p == 1 { // one device: its sort is the result
		pt := parts[0]
		if out[0], err = engine.NewBuffer[K](pt.Queue.Device(), pt.Len); err == nil && vals != nil {
			vout[0], err = engine.NewBuffer[uint32](pt.Queue.Device(), pt.Len)
		}
		if err == nil {
			var vd, vs *engine.Buffer[uint32]
			if vals != nil {
				vd, vs = vout[0], vparts[0].Buf
			}
			err = s.sortOn(di[0], pt.Queue, out[0], pt.Buf, vd, vs, pt.Len, order)
		}
		if err != nil {
			return fail(err)
		}
	} else {
		across := false
		if vals == nil && !s.mergeFirst {
			if across, err = s.sortAcross(ctx, di, keys, out, order); err != nil {
				return fail(err)
			}
		}
		if !across {
			if err := s.sortMerging(ctx, what, di, keys, parts, vparts, out, vout, order); err != nil {
				return fail(err)
			}
		}
	}
	qs := keys.Queues()
	sk, err := shard.FromBuffers(qs, out, shard.ByRows(1))
	if err != nil {
		return fail(err)
	}
	if vals == nil {
		return sk, nil, nil
	}
	sv, err := shard.FromBuffers(qs, vout, shard.ByRows(1))
	if err != nil {
		out = make([]*engine.Buffer[K], p) // sk holds them now
		return nil, nil, errors.Join(fmt.Errorf("kernels: %s: %w", what, err), sk.Close())
	}
	return sk, sv, nil
}

// sortMerging is Sort's path of four steps (ShardedSort): sorted runs and their samples,
// the cuts, and the merge of the pieces each device receives, read across from the runs
// where the devices reach each other's memory, else exchanged first. what names the sort
// in the trace.
func (s *ShardedSort[K]) sortMerging(ctx context.Context, what string, di []int, keys *shard.Buffer[K], parts []shard.Part[K], vparts []shard.Part[uint32], out []*engine.Buffer[K], vout []*engine.Buffer[uint32], order SortOrder) error {
	p := len(parts)
	// PRISM_TRACE times the steps, each device's queue finished at their ends (the
	// sort and the cuts end on reads that wait anyway).
	tr := newStepTimer(keys)
	// 1 and 2: the sorted runs and their samples.
	samples := make([][]place, p)
	err := keys.EachDevice(func(i int) error {
		var err error
		samples[i], err = s.runAndSample(ctx, di[i], parts, vparts, i, order)
		return err
	})
	if err != nil {
		return err
	}
	tr.step("sorted runs and samples")
	splitters := pickSplitters(samples, keys.Counts())
	// 3: the cuts, and the pieces exchanged.
	cuts := make([][]int, p)
	err = keys.EachDevice(func(i int) error {
		var err error
		cuts[i], err = s.cut(ctx, di[i], parts[i], i, samples[i], splitters, order)
		return err
	})
	if err != nil {
		return err
	}
	tr.step("cuts")
	// 4: each device merges its pieces, in part order (stable), into its result:
	// straight from the runs where its kernels reach the other devices' memory, else
	// after an exchange that brings them to it.
	merged, err := s.mergeFromRuns(ctx, di, keys, cuts, out, vout, order)
	if err != nil {
		return err
	}
	if !merged {
		bounds, err := s.exchange(ctx, di, keys, cuts, out, vout)
		if err != nil {
			return err
		}
		tr.step("exchange")
		err = keys.EachDevice(func(i int) error {
			if out[i] == nil {
				return nil
			}
			return s.mergeLanded(parts[i].Queue, di[i], i, bounds[i], out, vout, order)
		})
		if err != nil {
			return err
		}
	}
	tr.step("merge")
	tr.done(fmt.Sprintf("%s of %d keys over %d devices", what, keys.Len(), p))
	return nil
}

// stepTimer times the steps of a sharded sort when PRISM_TRACE asks for it (a zero
// stepTimer does nothing): each step ends with every device's queue finished.
type stepTimer struct {
	qs    []*engine.Queue
	start time.Time
	last  time.Time
	steps []string
}

func newStepTimer[K SortKey](keys *shard.Buffer[K]) *stepTimer {
	if !engine.Tracing() {
		return nil
	}
	now := time.Now()
	return &stepTimer{qs: keys.Queues(), start: now, last: now}
}

func (t *stepTimer) step(name string) {
	if t == nil {
		return
	}
	for _, q := range t.qs {
		q.Finish(context.Background()) // an error returns from the sort's own next wait
	}
	now := time.Now()
	t.steps = append(t.steps, fmt.Sprintf("%s %v", name, now.Sub(t.last).Round(time.Microsecond)))
	t.last = now
}

func (t *stepTimer) done(what string) {
	if t == nil {
		return
	}
	engine.Tracef("sort: %s in %v: %s", what, time.Since(t.start).Round(time.Microsecond), strings.Join(t.steps, ", "))
}

// sortOn enqueues the stable sort of the first n keys of src into dst on q with the
// sorter of device d, the values of vsrc into vdst alongside when they are not nil.
func (s *ShardedSort[K]) sortOn(d int, q *engine.Queue, dst, src *engine.Buffer[K], vdst, vsrc *engine.Buffer[uint32], n int, order SortOrder) error {
	if n == 0 {
		return nil
	}
	srt := pickSorter(s.sorters[d], s.runners[d], n)
	if vdst == nil {
		return srt.Keys(q, dst, src, n, order)
	}
	return srt.Pairs(q, dst, src, vdst, vsrc, n, order)
}

// runAndSample sorts part i (values alongside) into the sorted run of device d and
// returns the run's samples, their keys read back.
func (s *ShardedSort[K]) runAndSample(ctx context.Context, d int, parts []shard.Part[K], vparts []shard.Part[uint32], i int, order SortOrder) ([]place, error) {
	pt := parts[i]
	if pt.Len == 0 {
		return nil, nil
	}
	dev := pt.Queue.Device()
	var err error
	if s.runs[d], err = grow(dev, s.runs[d], pt.Len); err != nil {
		return nil, err
	}
	var vd, vs *engine.Buffer[uint32]
	if vparts != nil {
		if s.runVals[d], err = grow(dev, s.runVals[d], pt.Len); err != nil {
			return nil, err
		}
		vd, vs = s.runVals[d], vparts[i].Buf
	}
	if err := s.sortOn(d, pt.Queue, s.runs[d], pt.Buf, vd, vs, pt.Len, order); err != nil {
		return nil, err
	}
	k := sampleFactor * len(parts)
	if s.samples[d], err = grow(dev, s.samples[d], k-1); err != nil {
		return nil, err
	}
	if err := s.sorters[d].sampleRun(pt.Queue, s.samples[d], s.runs[d], pt.Len, k, 0); err != nil {
		return nil, err
	}
	got := make([]K, k-1)
	if err := s.samples[d].Read(ctx, pt.Queue, 0, got); err != nil {
		return nil, err
	}
	// sort_sample's key g is at (g+1)*n/k, repeated where the run is shorter than k:
	// each position is kept once.
	var out []place
	for g := range got {
		if r := (g + 1) * pt.Len / k; len(out) == 0 || r != out[len(out)-1].pos {
			out = append(out, place{SortMapKey(got[g], order), i, r})
		}
	}
	return out, nil
}

// The splitters that place every key after, or before, them.
var (
	beforeAll = place{0, -1, 0}
	afterAll  = place{^uint32(0), 1 << 62, 0}
)

// pickSplitters returns the p-1 splitters of parts of the given counts from their
// samples, each part's in order: splitter j ends the keys of device j. The samples are
// merged into one order, each standing for the keys of its part between it and the part's
// sample before (the part's count over its samples plus one); splitter j is the first
// sample at which those keys, summed in order, reach the keys the parts up to j held, so
// that each device is predicted to end with as many keys as its part held. A device whose
// part held none gets none.
func pickSplitters(samples [][]place, counts []int) []place {
	p := len(counts)
	all := mergePlaces(samples)
	weight := make([]float64, p) // the keys a sample of part i stands for
	for i, smp := range samples {
		if len(smp) > 0 {
			weight[i] = float64(counts[i]) / float64(len(smp)+1)
		}
	}
	splitters := make([]place, p-1)
	target, k, reached := 0, 0, 0.0
	for j := range splitters {
		target += counts[j]
		if target == 0 {
			splitters[j] = beforeAll
			continue
		}
		for k < len(all) && reached+weight[all[k].part] < float64(target) {
			reached += weight[all[k].part]
			k++
		}
		if k == len(all) {
			splitters[j] = afterAll
			continue
		}
		splitters[j] = all[k]
	}
	return splitters
}

// mergePlaces merges lists of places, each in order, into one in order (neighbours two by
// two, pass after pass).
func mergePlaces(lists [][]place) []place {
	for len(lists) > 1 {
		var next [][]place
		for i := 0; i < len(lists); i += 2 {
			if i+1 == len(lists) {
				next = append(next, lists[i])
				continue
			}
			a, b := lists[i], lists[i+1]
			m := make([]place, 0, len(a)+len(b))
			for len(a) > 0 && len(b) > 0 {
				if b[0].compare(a[0]) < 0 {
					m, b = append(m, b[0]), b[1:]
				} else {
					m, a = append(m, a[0]), a[1:]
				}
			}
			next = append(next, append(append(m, a...), b...))
		}
		lists = next
	}
	if len(lists) == 0 {
		return nil
	}
	return lists[0]
}

// cut returns where the splitters cut part i's sorted run on device d: cut[j] is the end
// of the keys of device j (the count of the run's places up to splitters[j]), the last
// the run's length. A splitter of part i cuts after its own place; the others are binary
// searches on the device (Sorter.cutRun: one launch and one read back for them all), each
// between the run's samples that bracket the splitter.
func (s *ShardedSort[K]) cut(ctx context.Context, d int, pt shard.Part[K], i int, samples []place, splitters []place, order SortOrder) ([]int, error) {
	cuts := make([]int, len(splitters)+1)
	cuts[len(splitters)] = pt.Len
	if pt.Len == 0 {
		return cuts, nil
	}
	var qs []cutQuery
	var at []int // the splitter of each search
	for j, sp := range splitters {
		if sp.part == i {
			cuts[j] = sp.pos + 1
			continue
		}
		// The run's places up to sp: its keys below sp.key (i after sp's part), or up to
		// sp.key (i before it): the first key past sp is above sp.key (strict) or at or
		// above it.
		c := cutQuery{key: sp.key, strict: i < sp.part, lo: 0, hi: pt.Len}
		for _, smp := range samples { // the first key past sp lies in [lo, hi]
			if smp.key > c.key || !c.strict && smp.key == c.key {
				c.hi = min(c.hi, smp.pos)
			} else {
				c.lo = max(c.lo, smp.pos+1)
			}
		}
		qs, at = append(qs, c), append(at, j)
	}
	pos, err := s.sorters[d].cutRun(ctx, pt.Queue, s.runs[d], qs, order)
	if err != nil {
		return nil, err
	}
	for k, j := range at {
		cuts[j] = pos[k]
	}
	return cuts, nil
}

// exchange moves the pieces of the sorted runs to their devices and returns, in out
// (vout), each device's keys (values) in new buffers of their lengths, nil for none: piece
// j of part i, the run's keys cuts[i][j-1] to cuts[i][j], is placed on device j after the
// pieces of the parts before i. bounds[j] are where device j's pieces start, in part order,
// then their end: the sorted runs Sorter.mergeRuns merges.
//
// Where the devices' driver copies between every pair of them (engine.PeerPath "peer":
// CUDA GPUs of one process, over NVLink or PCIe), each device copies its pieces from the
// other devices' runs directly, every device's copies concurrently (exchangePeer).
// Elsewhere the exchange is host-staged, the transport between OpenCL devices: a piece
// that leaves its device is read back into host memory, each part's pieces concurrently,
// then written to its device, each device's concurrently (those before and those after its
// own piece in one write each); the piece that stays is copied on its device.
func (s *ShardedSort[K]) exchange(ctx context.Context, di []int, keys *shard.Buffer[K], cuts [][]int, out []*engine.Buffer[K], vout []*engine.Buffer[uint32]) (bounds [][]int, _ error) {
	parts := keys.Parts()
	p := len(parts)
	// at[i][j]: where piece j of part i starts among device j's keys; base[j]: where device
	// j's keys start in the host staging.
	at := make([][]int, p)
	recv, base := make([]int, p), make([]int, p+1)
	for i := range p {
		at[i] = make([]int, p)
		for j := range p {
			lo, hi := pieceOf(cuts, i, j)
			at[i][j] = recv[j]
			recv[j] += hi - lo
		}
	}
	for j := range p {
		base[j+1] = base[j] + recv[j]
	}
	// Device j's pieces, in part order: piece i at at[i][j], the last ending at recv[j].
	bounds = make([][]int, p)
	for j := range p {
		for i := range p {
			bounds[j] = append(bounds[j], at[i][j])
		}
		bounds[j] = append(bounds[j], recv[j])
	}
	if peerAll(parts) {
		if err := s.exchangePeer(ctx, di, keys, cuts, at, recv, bounds, out, vout); err != nil {
			return nil, fmt.Errorf("exchange between devices: %w", err)
		}
		return bounds, nil
	}
	n := base[p]
	if len(s.stage) < n {
		s.stage = make([]K, n)
	}
	if vout != nil && len(s.stageVals) < n {
		s.stageVals = make([]uint32, n)
	}
	// Out: every piece that leaves its device, read back into its place.
	err := keys.EachDevice(func(i int) error {
		q, d := parts[i].Queue, di[i]
		for j := range p {
			lo, hi := pieceOf(cuts, i, j)
			if j == i || lo == hi {
				continue
			}
			h := base[j] + at[i][j]
			if err := s.runs[d].Read(ctx, q, lo, s.stage[h:h+hi-lo]); err != nil {
				return err
			}
			if vout != nil {
				if err := s.runVals[d].Read(ctx, q, lo, s.stageVals[h:h+hi-lo]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("exchange, reading back: %w", err)
	}
	// In: each device's pieces, written around its own, copied on the device.
	err = keys.EachDevice(func(j int) error {
		if recv[j] == 0 {
			return nil
		}
		q, d := parts[j].Queue, di[j]
		lk, lv, err := s.landing(d, q.Device(), j, recv[j], bounds[j], out, vout)
		if err != nil {
			return err
		}
		lo, hi := pieceOf(cuts, j, j)
		own, rest := at[j][j], at[j][j]+hi-lo
		if err := exchangeIn(ctx, q, lk, s.runs[d], s.stage[base[j]:base[j+1]], own, rest, lo); err != nil {
			return err
		}
		if vout != nil {
			return exchangeIn(ctx, q, lv, s.runVals[d], s.stageVals[base[j]:base[j+1]], own, rest, lo)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("exchange, writing: %w", err)
	}
	return bounds, nil
}

// mergeFromRuns is step 4 where every device's kernels reach the other devices' memory
// (Buffer.Reach: CUDA GPUs of one process with peer access, over NVLink or PCIe): each
// device j merges piece j of every sorted run from where it lies, its own run and the
// others' across the link, with no exchange first. Its first pass reads the pieces two by
// two, in part order (stable), into where landing puts them; every device's first pass
// ends before any device reuses its run's buffer, and the later passes (more than two
// devices) merge on the device. It reports false, having done nothing, where the devices
// cannot reach each other's memory: the exchange then brings the pieces.
//
// Tried and dropped on two H200 (2026-11-30, 128M keys): the other device's piece copied
// over by the copy engine in 2 to 8 chunks on a second queue, the merge cut along its path
// into as many merges, each waiting for the chunks it reads. The sort took 4.18-4.37 ms
// against 4.14 with this merge (pairs 4.97-5.03 against 4.89): the copy moves 128 MB each
// way in about 0.37 ms, but a merge cut in chunks runs each chunk with fewer tiles a
// work-group (mergeTilesPerGroup) or fewer groups, and the last chunk's merge follows the
// copy.
func (s *ShardedSort[K]) mergeFromRuns(ctx context.Context, di []int, keys *shard.Buffer[K], cuts [][]int, out []*engine.Buffer[K], vout []*engine.Buffer[uint32], order SortOrder) (bool, error) {
	parts := keys.Parts()
	p := len(parts)
	if !peerAll(parts) {
		return false, nil
	}
	// reach[j][i] (vreach): run i as an argument of device j's kernels; nil for an empty part.
	reach, vreach := make([][]any, p), make([][]any, p)
	for j := range p {
		reach[j], vreach[j] = make([]any, p), make([]any, p)
		for i := range p {
			if parts[i].Len == 0 {
				continue
			}
			var err error
			if reach[j][i], err = s.runs[di[i]].Reach(parts[j].Queue); err == nil && vout != nil {
				vreach[j][i], err = s.runVals[di[i]].Reach(parts[j].Queue)
			}
			if errors.Is(err, engine.ErrUnsupported) {
				engine.Tracef("sort: the pieces are exchanged before the merge: %v", err)
				return false, nil
			}
			if err != nil {
				return false, err
			}
		}
	}
	// The runs are complete before any device reads them.
	if err := keys.EachDevice(func(i int) error { return parts[i].Queue.Finish(ctx) }); err != nil {
		return false, err
	}
	// firsts[j]: where the outputs of device j's first pass start, then their end.
	firsts := make([][]int, p)
	err := keys.EachDevice(func(j int) error {
		type piece struct{ i, lo, hi int }
		var pieces []piece
		n := 0
		for i := range p {
			if lo, hi := pieceOf(cuts, i, j); hi > lo {
				pieces = append(pieces, piece{i, lo, hi})
				n += hi - lo
			}
		}
		if n == 0 {
			return nil
		}
		bounds := []int{0}
		for m := 0; m < len(pieces); m += 2 {
			end := bounds[len(bounds)-1] + pieces[m].hi - pieces[m].lo
			if m+1 < len(pieces) {
				end += pieces[m+1].hi - pieces[m+1].lo
			}
			bounds = append(bounds, end)
		}
		firsts[j] = bounds
		q, d := parts[j].Queue, di[j]
		lk, lv, err := s.landing(d, q.Device(), j, n, bounds, out, vout)
		if err != nil {
			return err
		}
		run := func(pc piece) mergeRun {
			return mergeRun{keys: reach[j][pc.i], vals: vreach[j][pc.i], off: pc.lo, n: pc.hi - pc.lo}
		}
		for m := 0; m < len(pieces); m += 2 {
			a, b := run(pieces[m]), mergeRun{keys: reach[j][pieces[m].i], vals: vreach[j][pieces[m].i]}
			if m+1 < len(pieces) {
				b = run(pieces[m+1])
			}
			if err := s.sorters[d].mergeFrom(q, 0, lk, lv, bounds[m/2], a, b, order); err != nil {
				return err
			}
		}
		return q.Finish(ctx) // its reads of the other devices' runs are done
	})
	if err != nil {
		return false, fmt.Errorf("merge from the devices' runs: %w", err)
	}
	err = keys.EachDevice(func(j int) error {
		if out[j] == nil {
			return nil
		}
		return s.mergeLanded(parts[j].Queue, di[j], j, firsts[j], out, vout, order)
	})
	if err != nil {
		return false, fmt.Errorf("merge from the devices' runs: %w", err)
	}
	mergedFromRuns.Add(1)
	return true, nil
}

// mergedFromRuns counts the sorts whose merge read the runs across devices
// (mergeFromRuns), for the tests.
var mergedFromRuns atomic.Int64

// pieceOf returns piece j of part i: its range [lo, hi) in run i, which cuts[i] ends.
func pieceOf(cuts [][]int, i, j int) (lo, hi int) {
	if j > 0 {
		lo = cuts[i][j-1]
	}
	return lo, cuts[i][j]
}

// landing makes device j's result, out[j] (and vout[j] for pairs) of n elements on dev,
// and returns where the pieces it receives land (bounds: where each starts, then their
// end): in the result where their merge makes an even number of passes (none for one
// piece), else in device d's scratch recv[d] (recvVals[d]), so that the last pass ends in
// the result and nothing is copied back.
func (s *ShardedSort[K]) landing(d int, dev *engine.Device, j, n int, bounds []int, out []*engine.Buffer[K], vout []*engine.Buffer[uint32]) (*engine.Buffer[K], *engine.Buffer[uint32], error) {
	if err := receiving(dev, j, n, out, vout); err != nil {
		return nil, nil, err
	}
	if mergePassCount(bounds)%2 == 0 {
		if vout == nil {
			return out[j], nil, nil
		}
		return out[j], vout[j], nil
	}
	var err error
	if s.recv[d], err = grow(dev, s.recv[d], n); err != nil {
		return nil, nil, err
	}
	if vout == nil {
		return s.recv[d], nil, nil
	}
	if s.recvVals[d], err = grow(dev, s.recvVals[d], n); err != nil {
		return nil, nil, err
	}
	return s.recv[d], s.recvVals[d], nil
}

// mergeLanded merges the sorted pieces device j received (where landing put them, bounds
// delimiting them in part order: stable) into its result out[j] (vout[j]) on q, with
// device d's sorted run's buffer as the other buffer of the passes where there are two or
// more.
func (s *ShardedSort[K]) mergeLanded(q *engine.Queue, d, j int, bounds []int, out []*engine.Buffer[K], vout []*engine.Buffer[uint32], order SortOrder) error {
	passes := mergePassCount(bounds)
	if passes == 0 {
		return nil // one piece: it landed in the result
	}
	dev := q.Device()
	a, b := out[j], s.recv[d]
	var va, vb *engine.Buffer[uint32]
	if vout != nil {
		va, vb = vout[j], s.recvVals[d]
	}
	if passes%2 == 0 {
		var err error
		if s.runs[d], err = grow(dev, s.runs[d], out[j].Len()); err != nil {
			return err
		}
		b = s.runs[d]
		if vout != nil {
			if s.runVals[d], err = grow(dev, s.runVals[d], out[j].Len()); err != nil {
				return err
			}
			vb = s.runVals[d]
		}
	} else {
		a, b, va, vb = b, a, vb, va
	}
	inB, err := s.sorters[d].mergeAll(q, a, b, va, vb, bounds, order)
	if err == nil && (inB != (passes%2 == 1)) {
		err = fmt.Errorf("kernels: sharded sort: the merge of %d passes ended in the wrong buffer", passes)
	}
	return err
}

// receiving makes device j's buffers of the exchange, n elements on dev: out[j], and
// vout[j] for pairs (vout not nil).
func receiving[K SortKey](dev *engine.Device, j, n int, out []*engine.Buffer[K], vout []*engine.Buffer[uint32]) error {
	var err error
	if out[j], err = engine.NewBuffer[K](dev, n); err != nil {
		return err
	}
	if vout != nil {
		vout[j], err = engine.NewBuffer[uint32](dev, n)
	}
	return err
}

// peerAll reports whether the driver of the parts' devices copies between every pair of
// them directly (engine.PeerPath).
func peerAll[K SortKey](parts []shard.Part[K]) bool {
	for i := range parts {
		for j := range parts {
			if i != j && engine.PeerPath(parts[j].Queue, parts[i].Queue) != "peer" {
				return false
			}
		}
	}
	return true
}

// exchangePeer is exchange's direct path: every part's queue finished (its run is
// ready), then each device j, concurrently, allocates out[j] (vout[j]) and copies piece j
// of every run i (pieceOf(cuts, i, j)) into where landing puts it, at at[i][j] with Buffer.CopyFrom (a peer copy from another
// device, a device copy from its own), and waits for its copies, so that no run is
// reused while another device still reads it.
func (s *ShardedSort[K]) exchangePeer(ctx context.Context, di []int, keys *shard.Buffer[K], cuts [][]int, at [][]int, recv []int,
	bounds [][]int, out []*engine.Buffer[K], vout []*engine.Buffer[uint32]) error {
	parts := keys.Parts()
	if err := keys.EachDevice(func(i int) error { return parts[i].Queue.Finish(ctx) }); err != nil {
		return err
	}
	return keys.EachDevice(func(j int) error {
		if recv[j] == 0 {
			return nil
		}
		q := parts[j].Queue
		t0 := time.Now()
		lk, lv, err := s.landing(di[j], q.Device(), j, recv[j], bounds[j], out, vout)
		if err != nil {
			return err
		}
		if engine.Tracing() {
			engine.Tracef("sort: %s receives %d keys: buffers in %v", q.Device().ID(), recv[j], time.Since(t0).Round(time.Microsecond))
			defer func(t time.Time) {
				engine.Tracef("sort: %s received its pieces in %v", q.Device().ID(), time.Since(t).Round(time.Microsecond))
			}(time.Now())
		}
		for i := range parts {
			lo, hi := pieceOf(cuts, i, j)
			if lo == hi {
				continue
			}
			if err := lk.CopyFrom(q, at[i][j], s.runs[di[i]], lo, hi-lo); err != nil {
				return err
			}
			if vout != nil {
				if err := lv.CopyFrom(q, at[i][j], s.runVals[di[i]], lo, hi-lo); err != nil {
					return err
				}
			}
		}
		return q.Finish(ctx)
	})
}

// exchangeIn fills dst, a device's received elements: staged[:own] and staged[rest:]
// written from the host, and run[from:from+rest-own], its own piece, copied on the device
// to dst[own:rest].
func exchangeIn[T engine.Scalar](ctx context.Context, q *engine.Queue, dst, run *engine.Buffer[T], staged []T, own, rest, from int) error {
	if own > 0 {
		if err := dst.Write(ctx, q, 0, staged[:own]); err != nil {
			return err
		}
	}
	if rest < len(staged) {
		if err := dst.Write(ctx, q, rest, staged[rest:]); err != nil {
			return err
		}
	}
	return dst.CopyFrom(q, own, run, from, rest-own)
}
