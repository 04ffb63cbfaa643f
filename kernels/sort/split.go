package sort

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
)

// A sort split across devices (Op.Split) gives each device a contiguous range of the
// keys (in tiles of the first device set up, the unit PlanShares divides), which it
// sorts with the family's radix sort (with the values alongside for pairs) and reads
// back; the host then merges the sorted runs. The merge compares the mapped keys
// (SortMapKey: the order of every key type and direction as unsigned integers) and takes
// the earlier run's key on a tie, so that, runs being in input order, equal keys keep
// their input order: the result is the one-device op's stable sort, keys and values bit
// for bit. Runs are merged two by two, adjacent ones, until one is left: log2(runs)
// passes over the keys.
//
// On sharded data (kernels.PlaceSharded) the keys (and values) are scattered by rows over
// the devices with a share once, and each run sorts them where they lie with ShardedSort,
// a sample sort whose keys are exchanged between the devices: the result is left on the
// devices sharded by key range, device i holding the i-th range, and gathering the parts
// in device order gives the one-device op's stable sort. Verify gathers it.

// splitGroup is the work-group size and keys per work-item of the parts' sorters:
// NewSorter's (the tests make them smaller under Oclgrind, as for the family's tests).
var splitGroup = [2]int{256, sortItems}

// sortSplit returns the Splitter of a sort op.
func sortSplit[K SortKey](name string, pairs bool, order SortOrder) kernels.Splitter {
	return func(ctx context.Context, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (kernels.SplitInstance, error) {
		return setupSortSplit[K](ctx, name, pairs, order, devs, p, o)
	}
}

// sortSplitInstance is a sort op set up across devices.
type sortSplitInstance[K SortKey] struct {
	*kernels.SplitRun[*sortPart[K]]
	pairs bool
	order SortOrder
	n     int
	keys  []K      // the input, as the one-device op draws it
	vals  []uint32 // pairs: the input values 0..n-1

	// read holds the parts' sorted keys as read back, each part's range in its place; the
	// parts map them into runs (SortMapKey), the combine merges the runs (merged, mergedV:
	// scratch) and writes the result back into read, which out then is.
	read, out       []K
	runs, runVals   []uint32
	merged, mergedV []uint32
	outVals         []uint32

	// Sharded data (kernels.PlaceSharded): the input scattered by rows over the devices
	// with a share (skeys, svals), sorted where it lies by ss (the parts' sorters), the
	// result of the last Run left there (sout, soutV).
	sharded      bool
	peer         bool // every device copies from every other's memory (engine.PeerPath)
	skeys, sout  *shard.Buffer[K]
	svals, soutV *shard.Buffer[uint32]
	ss           *ShardedSort[K]
}

// sortPart is one device's part: its sorter, queue, range of keys and buffers.
type sortPart[K SortKey] struct {
	in          *sortSplitInstance[K]
	dev         *engine.Device
	s           *Sorter[K]
	run         sorter[K] // the part's sort where faster than s (newRunSorter), or nil
	q           *engine.Queue
	off, n      int
	src, dst    *engine.Buffer[K]
	vsrc, vdst  *engine.Buffer[uint32]
	probeKeys   []K // probes: the keys read back
	probeValues []uint32
}

func (pt *sortPart[K]) closeBuffers() error {
	err := errors.Join(pt.src.Close(), pt.dst.Close(), pt.vsrc.Close(), pt.vdst.Close())
	pt.src, pt.dst, pt.vsrc, pt.vdst = nil, nil, nil, nil
	return err
}

func (pt *sortPart[K]) Close() error {
	errs := []error{pt.closeBuffers(), pt.q.Close()}
	if pt.s != nil {
		errs = append(errs, pt.s.Close())
	}
	if pt.run != nil {
		errs = append(errs, pt.run.Close())
	}
	return errors.Join(errs...)
}

// upload gives pt buffers for n keys (and values) holding keys[off:off+n] (the values
// likewise).
func (pt *sortPart[K]) upload(ctx context.Context, off, n int) error {
	if err := pt.closeBuffers(); err != nil {
		return err
	}
	keys, vals := pt.in.keys, pt.in.vals
	var err error
	if pt.src, err = engine.Upload(ctx, pt.q, keys[off:off+n]); err != nil {
		return err
	}
	if pt.dst, err = engine.NewBuffer[K](pt.dev, n); err != nil {
		return err
	}
	if vals != nil {
		if pt.vsrc, err = engine.Upload(ctx, pt.q, vals[off:off+n]); err != nil {
			return err
		}
		if pt.vdst, err = engine.NewBuffer[uint32](pt.dev, n); err != nil {
			return err
		}
	}
	return pt.sorter(n).Reserve(n, vals != nil)
}

// sorter returns the sort of n of the part's keys (alone or with values): its run sorter
// where it has one for them (newRunSorter).
func (pt *sortPart[K]) sorter(n int) sorter[K] {
	return pickSorter(pt.s, pt.run, n)
}

// sort sorts the part's first n keys (and values) and reads them back into keys (vals).
func (pt *sortPart[K]) sort(ctx context.Context, n int, keys []K, vals []uint32) error {
	order := pt.in.order
	var err error
	if pt.vsrc != nil {
		err = pt.sorter(n).Pairs(pt.q, pt.dst, pt.src, pt.vdst, pt.vsrc, n, order)
	} else {
		err = pt.sorter(n).Keys(pt.q, pt.dst, pt.src, n, order)
	}
	if err != nil {
		return err
	}
	if err := pt.dst.Read(ctx, pt.q, 0, keys[:n]); err != nil {
		return err
	}
	if pt.vsrc != nil {
		return pt.vdst.Read(ctx, pt.q, 0, vals[:n])
	}
	return nil
}

// LoadProbe uploads the first keys, as many as the op has at most.
func (pt *sortPart[K]) LoadProbe(ctx context.Context, units int) error {
	size := min(units, pt.in.n)
	pt.probeKeys = make([]K, size)
	if pt.in.pairs {
		pt.probeValues = make([]uint32, size)
	}
	return pt.upload(ctx, 0, size)
}

// RunProbe sorts the probe's first keys and reads them back; on sharded data it runs what
// a sharded run costs the device instead (sort, exchange, merge) and waits, the keys left
// on the device: where the devices reach each other's memory the merge reads the sorted
// run where it lies (ShardedSort's mergeFromRuns, here across no link), elsewhere the run
// goes through the host first.
func (pt *sortPart[K]) RunProbe(ctx context.Context, units int) error {
	n := min(units, pt.in.n)
	if !pt.in.sharded {
		return pt.sort(ctx, n, pt.probeKeys, pt.probeValues)
	}
	// What a sharded run costs a device (ShardedSort): its local sort, the exchange of the
	// sorted run where there is one (exchangeProbe: through the host, all of it read back
	// and written again, as the pieces that leave, (p-1)/p of it on even keys, and as many
	// arriving), and the merge of its pieces (here two runs, one pass). A probe of the
	// local sort alone missed the rest: the planner split 16M keys over PoCL and Rusticl
	// expecting a gain, and ran at 0.49 of one device.
	sort := func() error {
		if pt.vsrc != nil {
			return pt.sorter(n).Pairs(pt.q, pt.dst, pt.src, pt.vdst, pt.vsrc, n, pt.in.order)
		}
		return pt.sorter(n).Keys(pt.q, pt.dst, pt.src, n, pt.in.order)
	}
	if err := sort(); err != nil {
		return err
	}
	from, to, vfrom, vto := pt.dst, pt.src, pt.vdst, pt.vsrc
	if !pt.in.peer {
		if err := pt.exchangeProbe(ctx, n); err != nil {
			return err
		}
		from, to, vfrom, vto = to, from, vto, vfrom
	}
	if _, err := pt.s.mergeAll(pt.q, from, to, vfrom, vto, []int{0, n / 2, n}, pt.in.order); err != nil {
		return err
	}
	return pt.q.Finish(ctx)
}

// exchangeProbe moves the probe's sorted run (dst) back into src as a sharded sort's
// exchange through the host moves it: read back into host memory and written.
func (pt *sortPart[K]) exchangeProbe(ctx context.Context, n int) error {
	keys := make([]K, n)
	if err := pt.dst.Read(ctx, pt.q, 0, keys); err != nil {
		return err
	}
	if err := pt.src.Write(ctx, pt.q, 0, keys); err != nil {
		return err
	}
	if pt.vsrc != nil {
		vals := make([]uint32, n)
		if err := pt.vdst.Read(ctx, pt.q, 0, vals); err != nil {
			return err
		}
		return pt.vsrc.Write(ctx, pt.q, 0, vals)
	}
	return nil
}

func (pt *sortPart[K]) Load(ctx context.Context, off, units int) error {
	pt.off, pt.n = off, units
	pt.probeKeys, pt.probeValues = nil, nil
	return pt.upload(ctx, off, units)
}

// Run sorts the share, reads it back into its place and maps it into a run for the merge
// (while the other devices still sort).
func (pt *sortPart[K]) Run(ctx context.Context) error {
	in := pt.in
	lo, hi := pt.off, pt.off+pt.n
	var vals []uint32
	if in.pairs {
		vals = in.runVals[lo:hi]
	}
	if err := pt.sort(ctx, pt.n, in.read[lo:hi], vals); err != nil {
		return err
	}
	mapKeys(in.runs[lo:hi], in.read[lo:hi], in.order)
	return nil
}

// sortKeys draws the n keys of the sort ops from seed, as setupSort draws its first input
// set.
func sortKeys[K SortKey](seed uint64, n int) []K {
	rng := kernels.NewRand(seed, sortStream)
	keys := make([]K, n)
	for i := range keys {
		switch k := any(&keys[i]).(type) {
		case *uint32: // the full range: every pass sees every digit
			*k = rng.Uint32()
		case *float32: // negatives and positives over many binades
			*k = float32(math.Ldexp(2*rng.Float64()-1, int(rng.IntN(40))-20))
		}
	}
	return keys
}

func setupSortSplit[K SortKey](ctx context.Context, name string, pairs bool, order SortOrder, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (kernels.SplitInstance, error) {
	in, err := setupSortSplitKeys[K](ctx, name, pairs, order, devs, p, o, nil)
	if err != nil {
		return nil, err // not a nil *sortSplitInstance in an interface
	}
	return in, nil
}

// setupSortSplitKeys sets the split up on keys, p.Size of them (nil: the one-device op's,
// drawn from p.Seed).
func setupSortSplitKeys[K SortKey](ctx context.Context, name string, pairs bool, order SortOrder, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions, keys []K) (_ *sortSplitInstance[K], err error) {
	if err := kernels.CheckPortableSplit(ctx, name, devs, p, o); err != nil {
		return nil, err
	}
	if err := kernels.CheckSharded(name, o, true); err != nil {
		return nil, err
	}
	if p.Size > MaxSortLen {
		return nil, fmt.Errorf("kernels: %s: size %d above the sort's limit of %d: %w", name, p.Size, MaxSortLen, engine.ErrInvalidArg)
	}
	n := p.Size
	if keys == nil {
		keys = sortKeys[K](p.Seed, n)
	} else if len(keys) != n {
		return nil, fmt.Errorf("kernels: %s: %d keys for size %d: %w", name, len(keys), n, engine.ErrInvalidArg)
	}
	in := &sortSplitInstance[K]{pairs: pairs, order: order, n: n, keys: keys, sharded: o.Placement == kernels.PlaceSharded}
	granule := 0 // the tile of the first device set up
	in.SplitRun = kernels.NewSplitRun(name, devs, o, func(_ context.Context, d *engine.Device) (_ *sortPart[K], err error) {
		pt := &sortPart[K]{in: in, dev: d}
		defer func() {
			if err != nil {
				pt.Close()
			}
		}()
		if pt.s, err = newSorter[K](d, splitGroup[0], splitGroup[1]); err != nil {
			return nil, err
		}
		if pt.run, err = newRunSorter[K](d); err != nil {
			return nil, err
		}
		if pt.q, err = d.NewQueue(); err != nil {
			return nil, err
		}
		if granule == 0 {
			granule = pt.s.Tile()
		}
		return pt, nil
	}, in.merge)
	if in.sharded {
		in.SetSharded(kernels.Sharded{Scatter: in.scatter, Run: in.runSharded, Release: in.closeSharded})
	}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	if pairs {
		in.vals = make([]uint32, n)
		for i := range in.vals {
			in.vals[i] = uint32(i)
		}
	}
	if err := in.OpenAll(ctx); err != nil {
		return nil, err
	}
	in.peer = in.sharded
	for _, a := range in.Parts() {
		for _, b := range in.Parts() {
			if a != nil && b != nil && a != b && engine.PeerPath(a.q, b.q) != "peer" {
				in.peer = false
			}
		}
	}
	if _, err := in.Plan(ctx, n, granule); err != nil {
		return nil, err
	}
	in.read = make([]K, n)
	switch {
	case in.sharded && pairs:
		in.outVals = make([]uint32, n)
	case !in.sharded:
		in.runs, in.merged = make([]uint32, n), make([]uint32, n)
		if pairs {
			in.runVals, in.mergedV = make([]uint32, n), make([]uint32, n)
		}
	}
	if err := in.Place(ctx); err != nil {
		return nil, err
	}
	return in, nil
}

// scatter lays the keys (and values) out by rows over the devices with a share, each
// holding its share's on its part's queue, sorted there by the parts' sorters.
func (in *sortSplitInstance[K]) scatter(ctx context.Context) error {
	parts, counts, err := in.Sharing(ctx)
	if err != nil {
		return err
	}
	var qs []*engine.Queue
	in.ss = &ShardedSort[K]{}
	for _, pt := range parts {
		if err := pt.closeBuffers(); err != nil { // the probe's
			return err
		}
		qs = append(qs, pt.q)
		in.ss.add(pt.dev, pt.s, pt.run)
	}
	if in.skeys, err = shard.Scatter(ctx, qs, in.keys, shard.ByRows(1), counts); err != nil {
		return err
	}
	if in.pairs {
		in.svals, err = shard.Scatter(ctx, qs, in.vals, shard.ByRows(1), counts)
	}
	return err
}

// closeSharded releases the sharded data and the sort's scratch.
func (in *sortSplitInstance[K]) closeSharded() error {
	errs := []error{in.sout.Close(), in.soutV.Close(), in.skeys.Close(), in.svals.Close()}
	if in.ss != nil {
		errs = append(errs, in.ss.closeScratch())
	}
	in.sout, in.soutV, in.skeys, in.svals, in.ss = nil, nil, nil, nil, nil
	return errors.Join(errs...)
}

// runSharded sorts the sharded keys into a sharded result, releasing the last one.
func (in *sortSplitInstance[K]) runSharded(ctx context.Context) error {
	err := errors.Join(in.sout.Close(), in.soutV.Close())
	in.sout, in.soutV = nil, nil
	if err != nil {
		return err
	}
	keys, vals, err := in.ss.Sort(ctx, in.skeys, in.svals, in.order)
	if err != nil {
		return err
	}
	if err := keys.Finish(ctx); err != nil {
		return errors.Join(err, keys.Close(), vals.Close())
	}
	in.sout, in.soutV = keys, vals
	return nil
}

// merge merges the parts' sorted runs into the result, in input order on ties.
func (in *sortSplitInstance[K]) merge() {
	// The runs are the shares' (a plan's check keeps the parts of devices without a share
	// open, their last offsets stale).
	var bounds []int
	off := 0
	for _, sh := range in.Shares() {
		if sh.Units > 0 {
			bounds = append(bounds, off)
		}
		off += sh.Units
	}
	bounds = append(bounds, in.n)
	keys, vals := mergeRuns(in.runs, in.merged, in.runVals, in.mergedV, bounds)
	unmapKeys(in.read, keys, in.order)
	in.out, in.outVals = in.read, vals
}

// mergeRuns merges the sorted runs a[bounds[r]:bounds[r+1]] (values av alongside when not
// nil) into one sorted sequence, using b and bv as scratch, adjacent runs two by two and
// the earlier run's element first on a tie (stable). It returns the slices that hold the
// result: a or b (av or bv).
func mergeRuns(a, b, av, bv []uint32, bounds []int) ([]uint32, []uint32) {
	mergePasses(bounds, func(lo, mid, hi int) error {
		var dv, xv, yv []uint32
		if av != nil {
			dv, xv, yv = bv[lo:hi], av[lo:mid], av[mid:hi]
		}
		mergePar(b[lo:hi], a[lo:mid], a[mid:hi], dv, xv, yv)
		return nil
	}, func() { a, b, av, bv = b, a, bv, av })
	return a, av
}

// mergeSegment is the least output a goroutine of mergePar merges.
const mergeSegment = 1 << 16

// mergePar merges the sorted x and y (x first on ties) into dst, and their values xv and
// yv alongside into dv when not nil: dst cut into segments merged concurrently, each
// segment's inputs found by co-ranking.
func mergePar(dst, x, y, dv, xv, yv []uint32) {
	segs := max(1, min(runtime.GOMAXPROCS(0), len(dst)/mergeSegment))
	var wg sync.WaitGroup
	for s := range segs {
		k0, k1 := s*len(dst)/segs, (s+1)*len(dst)/segs
		i0, i1 := corank(k0, x, y), corank(k1, x, y)
		j0, j1 := k0-i0, k1-i1
		f := func() {
			if dv == nil {
				merge2(dst[k0:k1], x[i0:i1], y[j0:j1], nil, nil, nil)
			} else {
				merge2(dst[k0:k1], x[i0:i1], y[j0:j1], dv[k0:k1], xv[i0:i1], yv[j0:j1])
			}
		}
		if s == segs-1 {
			f()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	wg.Wait()
}

// corank returns how many of the first k elements of the stable merge of x and y come
// from x: the least i with y[k-i-1] < x[i] (or at an end).
func corank(k int, x, y []uint32) int {
	lo, hi := max(0, k-len(y)), min(k, len(x))
	for lo < hi {
		i := int(uint(lo+hi) >> 1)
		if j := k - i; j > 0 && y[j-1] >= x[i] {
			lo = i + 1
		} else {
			hi = i
		}
	}
	return lo
}

// merge2 merges the sorted x and y (x first on ties) into dst, and the values xv and yv
// alongside into dv when it is not nil.
func merge2(dst, x, y, dv, xv, yv []uint32) {
	i, j, k := 0, 0, 0
	if dv == nil {
		for i < len(x) && j < len(y) {
			a, b := x[i], y[j]
			t := 0
			if b < a {
				t = 1
			}
			dst[k] = min(a, b)
			i, j, k = i+1-t, j+t, k+1
		}
	} else {
		for i < len(x) && j < len(y) {
			if y[j] < x[i] {
				dst[k], dv[k] = y[j], yv[j]
				j++
			} else {
				dst[k], dv[k] = x[i], xv[i]
				i++
			}
			k++
		}
		copy(dv[k:], xv[i:])
		copy(dv[k+len(x)-i:], yv[j:])
	}
	copy(dst[k:], x[i:])
	copy(dst[k+len(x)-i:], y[j:])
}

// mapKeys sets dst[i] to SortMapKey(src[i], order).
func mapKeys[K SortKey](dst []uint32, src []K, order SortOrder) {
	var flip uint32
	if order == Descending {
		flip = ^uint32(0)
	}
	switch s := any(src).(type) {
	case []uint32:
		for i, u := range s {
			dst[i] = u ^ flip
		}
	case []float32:
		for i, f := range s {
			u := math.Float32bits(f)
			dst[i] = u ^ (uint32(int32(u)>>31) | 1<<31) ^ flip // negative: every bit; else the sign
		}
	}
}

// unmapKeys inverts mapKeys: dst[i] is the key whose SortMapKey is src[i].
func unmapKeys[K SortKey](dst []K, src []uint32, order SortOrder) {
	var flip uint32
	if order == Descending {
		flip = ^uint32(0)
	}
	switch d := any(dst).(type) {
	case []uint32:
		for i, u := range src {
			d[i] = u ^ flip
		}
	case []float32:
		for i, u := range src {
			u ^= flip
			d[i] = math.Float32frombits(u ^ (uint32(int32(^u)>>31) | 1<<31)) // sign set: was non-negative
		}
	}
}

// Verify compares the merged result with the host radix sort, as the one-device op does;
// on sharded data it gathers the result first, the parts in device order.
func (in *sortSplitInstance[K]) Verify(ctx context.Context) error {
	if err := in.CheckRan(); err != nil {
		return err
	}
	if in.sharded {
		if err := in.gather(ctx); err != nil {
			return err
		}
	}
	wantK, wantV := SortPairsRef(in.keys, in.vals, in.order)
	if err := CheckSortedKeys("sort keys", in.out, wantK); err != nil {
		return err
	}
	if in.pairs {
		return kernels.CheckEqual("sort values", in.outVals, wantV)
	}
	return nil
}

// gather reads the result of the last Run on sharded data into out (outVals).
func (in *sortSplitInstance[K]) gather(ctx context.Context) error {
	if err := in.sout.GatherInto(ctx, in.read); err != nil {
		return err
	}
	in.out = in.read
	if in.pairs {
		return in.soutV.GatherInto(ctx, in.outVals)
	}
	return nil
}

func (in *sortSplitInstance[K]) Model() kernels.Model { return SortModel(in.n, in.pairs) }

func (in *sortSplitInstance[K]) Shape() string { return fmt.Sprintf("n=%d %s", in.n, in.order) }
