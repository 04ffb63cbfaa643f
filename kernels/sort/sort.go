package sort

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// SortKey is the set of key types the radix sort sorts: uint32, and float32 through an
// order-preserving map of its bits (see Sorter).
type SortKey interface{ uint32 | float32 }

// SortOrder is the direction of a sort.
type SortOrder int

// The sort orders. Both are stable: equal keys keep their input order.
const (
	Ascending SortOrder = iota
	Descending
)

func (o SortOrder) String() string {
	switch o {
	case Ascending:
		return "ascending"
	case Descending:
		return "descending"
	}
	return fmt.Sprintf("SortOrder(%d)", int(o))
}

// MaxSortLen is the largest number of keys one sort takes (2^30: the kernels index with
// 32-bit signed integers and a group's range may overrun n by one group's share).
const MaxSortLen = 1 << 30

// The sort family's tunables (sort.cl): radix bits per pass (1, 2, 4 or 8: an even number of
// passes, so the result lands in the destination), keys per work-item per tile, and the
// number of work-groups per compute unit of sort_count and sort_scatter (each group walks a
// contiguous range of tiles, so the digit table to scan stays small).
const (
	sortRadixBits    = 4
	sortItems        = 8
	sortGroupsPerCU  = 8
	sortRadix        = 1 << sortRadixBits
	sortPasses       = 32 / sortRadixBits
	sortModeFloat    = 1
	sortModeDescends = 2
)

// SortModel returns the bytes a radix sort of n keys (with uint32 values when pairs) must
// move: every pass reads and writes every key (and value) once. It does no floating-point
// work.
func SortModel(n int, pairs bool) kernels.Model {
	per := 4.0
	if pairs {
		per = 8
	}
	return kernels.Model{Bytes: float64(sortPasses) * 2 * per * float64(n)}
}

// Sorter sorts keys of type K (uint32 or float32), alone or with uint32 values, on one device
// with a stable LSD radix sort (sort.cl): 32/4 = 8 passes of 4 bits, each a digit count per
// work-group, a scan of the digit table and a stable scatter.
//
// float32 keys are ordered by an order-preserving map of their bits (negative: all bits
// flipped; non-negative: the sign bit flipped): -Inf < negative values < -0.0 < +0.0 <
// positive values < +Inf. NaNs are ordered by their bits too: a NaN with the sign bit clear
// (the usual quiet NaN, 0x7fc00000) sorts after +Inf, one with the sign bit set before -Inf
// (in Descending order, the reverse). Keys come back bit for bit.
//
// The Sorter owns its ping-pong scratch (one buffer of keys, one of values for pairs, and the
// digit table), allocated at the first sort that needs it, or ahead of time by Reserve, and
// kept for later sorts. So a Sorter is not safe for concurrent use: use one per goroutine,
// or one queue (the scratch is reused by the next sort, which must be ordered after the
// previous one).
type Sorter[K SortKey] struct {
	dev                  *engine.Device
	prog                 *engine.Program
	count, scan, scatter *engine.Kernel
	merge                *engine.Kernel // sort_merge: two sorted runs into one
	cut                  *engine.Kernel // sort_cut: where a sharded sort's splitters cut a run
	sample               *engine.Kernel // sort_sample: keys of a run to pick splitters from
	cutQuery, cutPos     *engine.Buffer[uint32]
	wg, items, maxGroups int
	keyScratch           *engine.Buffer[K]
	valScratch, table    *engine.Buffer[uint32]
	mode                 int32
	replay               kernels.Replay
	cross                *crossPass // the first pass of keys crossing between devices, built at its first use
	// crossBits is the bits of the digit the crossing pass sorts by beside the side:
	// sortRadixBits (0 taken as that) or crossPartition (setCrossBits).
	crossBits int
	mergePer  int // sort_merge's tiles a work-group; 0: mergeTilesPerGroup's (the tests set it)
}

// NewSorter compiles the sort family for dev and key type K.
func NewSorter[K SortKey](dev *engine.Device) (*Sorter[K], error) {
	return newSorter[K](dev, 256, sortItems)
}

// newSorter compiles the family with a work-group of (at most) wg items of items keys each
// (the tests use small tiles under Oclgrind).
func newSorter[K SortKey](dev *engine.Device, wantWG, wantItems int) (*Sorter[K], error) {
	return kernels.Fit(dev, "sort", func(lim kernels.Limits) (*Sorter[K], kernels.Shape, error) {
		wg, items := lim.Group(wantWG), wantItems
		// Local memory of sort_scatter and sort_count (sort.cl header): halve ITEMS, then WG,
		// until both fit.
		local := func() int64 {
			pad := func(x int) int64 { return int64(x + x>>5) }
			scatter := 4 * (2*pad(wg*items) + pad(sortRadix/2*wg) + int64(wg) + 2*sortRadix + 1)
			return max(scatter, 4*(pad(sortRadix*wg)+int64(wg)))
		}
		for lm := lim.LocalBytes; lm > 0 && local() > lm && wg*items > 32; {
			if items > 1 {
				items /= 2
			} else {
				wg /= 2
			}
		}
		if lm := lim.LocalBytes; lm > 0 && local() > lm {
			return nil, kernels.Shape{}, kernels.TooSmall("sort", lim, fmt.Sprintf("%d bytes of local memory", local()))
		}
		prog, err := dev.Build(source, fmt.Sprintf("-DWG=%d", wg), fmt.Sprintf("-DITEMS=%d", items),
			fmt.Sprintf("-DRADIX_BITS=%d", sortRadixBits), fmt.Sprintf("-DMERGE_GROUP=%d", mergeGroup))
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		s := &Sorter[K]{dev: dev, prog: prog, wg: wg, items: items, maxGroups: sortMaxGroups(dev, wg, items)}
		var z K
		if _, ok := any(z).(float32); ok {
			s.mode = sortModeFloat
		}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &s.count, Name: "sort_count"}, kernels.Ref{Dst: &s.scan, Name: "sort_scan"},
			kernels.Ref{Dst: &s.scatter, Name: "sort_scatter"})
		if err == nil {
			s.merge, err = prog.Kernel("sort_merge")
		}
		if err == nil {
			s.cut, err = prog.Kernel("sort_cut")
		}
		if err == nil {
			s.sample, err = prog.Kernel("sort_sample")
		}
		if err == nil {
			s.table, err = engine.NewBuffer[uint32](dev, sortRadix*s.maxGroups)
		}
		if err != nil {
			s.Close()
			return nil, kernels.Shape{}, err
		}
		return s, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// sortMaxGroups returns the most work-groups of a pass on dev, with work-groups of wg items
// of items keys: sortGroupsPerCU a compute unit, and where the device ends a work-item's
// loops early (kernels.LoopLimit: Mesa's llvmpipe), as many more as keep a sort of
// MaxSortLen keys within it. A work-group walks its tiles in turn; sort_scatter loops about
// log2(wg) + 6 times a tile (11 at 32 items on Rusticl, measured with a counting loop after
// the kernel's own), sort_count items + 1, so that at 8 groups a compute unit a sort there
// went wrong past about 98M keys (24M at two compute units).
func sortMaxGroups(dev *engine.Device, wg, items int) int {
	groups := max(dev.Info().ComputeUnits, 1) * sortGroupsPerCU
	cost := max(kernels.Log2Ceil(wg)+6, items+1)
	return max(groups, kernels.GroupsWithin(kernels.LoopLimit(dev), (MaxSortLen+wg*items-1)/(wg*items), cost, 16))
}

// Close releases the kernels and the scratch buffers. Idempotent.
func (s *Sorter[K]) Close() error {
	errs := []error{s.replay.Close(), s.cross.Close(), s.keyScratch.Close(), s.valScratch.Close(), s.table.Close(), s.cutQuery.Close(), s.cutPos.Close()}
	for _, k := range []*engine.Kernel{s.count, s.scan, s.scatter, s.merge, s.cut, s.sample} {
		errs = append(errs, k.Close())
	}
	errs = append(errs, s.prog.Close())
	return errors.Join(errs...)
}

// WorkGroup returns the work-group size the family was compiled with on this device.
func (s *Sorter[K]) WorkGroup() int { return s.wg }

// Tile returns the number of keys a work-group ranks at once (WG*ITEMS).
func (s *Sorter[K]) Tile() int { return s.wg * s.items }

// Passes returns the number of radix passes of every sort (32 / radix bits).
func (s *Sorter[K]) Passes() int { return sortPasses }

// Reserve allocates the scratch buffers for sorts of up to n keys (with values when pairs),
// so that later sorts of that size allocate nothing.
func (s *Sorter[K]) Reserve(n int, pairs bool) error {
	if n < 1 || n > MaxSortLen {
		return fmt.Errorf("kernels: sort: reserve %d keys; must be in 1..%d: %w", n, MaxSortLen, engine.ErrInvalidArg)
	}
	if s.keyScratch == nil || s.keyScratch.Len() < n {
		s.keyScratch.Close()
		s.keyScratch = nil
		b, err := engine.NewBuffer[K](s.dev, n)
		if err != nil {
			return err
		}
		s.keyScratch = b
	}
	if pairs && (s.valScratch == nil || s.valScratch.Len() < n) {
		s.valScratch.Close()
		s.valScratch = nil
		b, err := engine.NewBuffer[uint32](s.dev, n)
		if err != nil {
			return err
		}
		s.valScratch = b
	}
	return nil
}

// Keys sorts the first n keys of src into dst in the given order (stable). dst may be src
// (an in-place sort); otherwise src is left untouched. Both buffers must hold at least n
// keys; elements past n are neither read nor written. n = 0 does nothing.
func (s *Sorter[K]) Keys(q *engine.Queue, dst, src *engine.Buffer[K], n int, order SortOrder) error {
	if err := checkSortArgs(dst, src, nil, nil, n, order, false); err != nil || n == 0 {
		return err
	}
	return s.run(q, dst, src, nil, nil, n, order)
}

// Pairs sorts the first n keys of srcKeys into dstKeys and moves the values of srcVals
// alongside them into dstVals (stable: values of equal keys keep their input order, so
// values 0..n-1 give the sorting permutation). Destinations may be their sources (in place);
// a key buffer may not be a value buffer. All four buffers must hold at least n elements.
func (s *Sorter[K]) Pairs(q *engine.Queue, dstKeys, srcKeys *engine.Buffer[K], dstVals, srcVals *engine.Buffer[uint32], n int, order SortOrder) error {
	if err := checkSortArgs(dstKeys, srcKeys, dstVals, srcVals, n, order, true); err != nil || n == 0 {
		return err
	}
	return s.run(q, dstKeys, srcKeys, dstVals, srcVals, n, order)
}

// checkSortArgs checks the arguments of a sort of n keys (with values when pairs).
func checkSortArgs[K SortKey](dst, src *engine.Buffer[K], vdst, vsrc *engine.Buffer[uint32], n int, order SortOrder, pairs bool) error {
	what := "sort keys"
	if pairs {
		what = "sort pairs"
	}
	switch {
	case dst == nil || src == nil:
		return fmt.Errorf("kernels: %s: nil key buffer: %w", what, engine.ErrInvalidArg)
	case pairs && (vdst == nil || vsrc == nil):
		return fmt.Errorf("kernels: %s: nil value buffer: %w", what, engine.ErrInvalidArg)
	case order != Ascending && order != Descending:
		return fmt.Errorf("kernels: %s: %v: %w", what, order, engine.ErrInvalidArg)
	case n < 0 || n > MaxSortLen:
		return fmt.Errorf("kernels: %s: %d keys; must be in 0..%d: %w", what, n, MaxSortLen, engine.ErrInvalidArg)
	case dst.Len() < n || src.Len() < n:
		return fmt.Errorf("kernels: %s: %d keys, but the key buffers hold %d (dst) and %d (src): %w", what, n, dst.Len(), src.Len(), engine.ErrInvalidArg)
	case pairs && (vdst.Len() < n || vsrc.Len() < n):
		return fmt.Errorf("kernels: %s: %d keys, but the value buffers hold %d (dst) and %d (src): %w", what, n, vdst.Len(), vsrc.Len(), engine.ErrInvalidArg)
	}
	if pairs {
		for _, k := range []any{dst, src} {
			if k == any(vdst) || k == any(vsrc) {
				return fmt.Errorf("kernels: %s: one buffer is both a key and a value buffer: %w", what, engine.ErrInvalidArg)
			}
		}
	}
	return nil
}

// run enqueues the passes: pass p reads src (p = 0) or the previous destination, and writes
// dst when sortPasses-1-p is even, the scratch otherwise, so that the last pass writes dst
// and the first never writes src. The passes' commands run as one graph from the second
// sort of the same buffers on (kernels.Replay).
func (s *Sorter[K]) run(q *engine.Queue, dst, src *engine.Buffer[K], vdst, vsrc *engine.Buffer[uint32], n int, order SortOrder) error {
	pairs := vdst != nil
	if err := s.Reserve(n, pairs); err != nil {
		return err
	}
	key := sortKey{dst, src, vdst, vsrc, n, order, 0, false}
	return s.replay.Run(q, key, func() error { return s.enqueue(q, dst, src, vdst, vsrc, n, order) })
}

// enqueue enqueues run's commands.
func (s *Sorter[K]) enqueue(q *engine.Queue, dst, src *engine.Buffer[K], vdst, vsrc *engine.Buffer[uint32], n int, order SortOrder) error {
	return s.passes(q, dst, src, vdst, vsrc, n, order, 0, sortPasses)
}

// passes enqueues passes from to to-1 of the sort of src[0, n) into dst (the values of
// vsrc into vdst alongside when they are not nil): pass p reads src (p = 0) or the previous
// pass's output, and writes dst when sortPasses-1-p is even, the scratch otherwise, so
// that the last pass writes dst and the first never writes src. A sort may be enqueued in
// two calls, the second from where the first ended.
func (s *Sorter[K]) passes(q *engine.Queue, dst, src *engine.Buffer[K], vdst, vsrc *engine.Buffer[uint32], n int, order SortOrder, from, to int) error {
	pairs := vdst != nil
	tpg, groups := s.passGroups(n)
	r := engine.Range1D(groups*s.wg, s.wg)
	mode := orderMode(s.mode, order)
	var pairsArg int32
	if pairs {
		pairsArg = 1
	}
	// outOf returns where pass p writes.
	outOf := func(p int) (*engine.Buffer[K], *engine.Buffer[uint32]) {
		if (sortPasses-1-p)%2 != 0 {
			return s.keyScratch, s.valScratch
		}
		return dst, vdst
	}
	in, vin := src, vsrc
	if from > 0 {
		in, vin = outOf(from - 1)
	}
	for p := from; p < to; p++ {
		out, vout := outOf(p)
		tin, tout := int32(0), int32(0)
		if p == 0 {
			tin = mode
		}
		if p == sortPasses-1 {
			tout = mode
		}
		shift := int32(p * sortRadixBits)
		if err := q.Launch(s.count, r, s.table, in, int32(n), shift, tin, int32(tpg)); err != nil {
			return err
		}
		if err := q.Launch(s.scan, engine.Range1D(s.wg, s.wg), s.table, int32(sortRadix*groups)); err != nil {
			return err
		}
		var vo, vi any = vout, vin
		if !pairs { // unused by the kernel: any buffer will do
			vo, vi = out, in
		}
		// One destination: every position is below the cut at n.
		if err := q.Launch(s.scatter, r, out, in, vo, vi, s.table, int32(n), shift, tin, tout, int32(tpg), pairsArg,
			out, vo, int32(n), int32(0), int32(0)); err != nil {
			return err
		}
		in, vin = out, vout
	}
	return nil
}

// passGroups returns the tiles each work-group of a pass over n keys walks (tpg) and the
// work-groups (at most maxGroups).
func (s *Sorter[K]) passGroups(n int) (tpg, groups int) { return s.groupsOf(n, s.Tile()) }

// groupsOf is passGroups for tiles of the given keys.
func (s *Sorter[K]) groupsOf(n, tile int) (tpg, groups int) {
	tiles := (n + tile - 1) / tile
	tpg = (tiles + min(tiles, s.maxGroups) - 1) / min(tiles, s.maxGroups)
	return tpg, (tiles + tpg - 1) / tpg
}

// mergeWG and mergeItems are sort.cl's MERGE_WG and MERGE_ITEMS: sort_merge's largest
// local size and the outputs of one of its work-items. A tile is local*mergeItems
// consecutive outputs (1920 at the largest local size), and a work-group writes from 1 to
// mergeGroup (MERGE_GROUP) tiles, whose merge path it searches at once.
const (
	mergeWG    = 128
	mergeItems = 15
	mergeGroup = 32
)

// mergeGroupsPerCU is how many of sort_merge's work-groups a compute unit gets at least
// before a group takes more than one tile: two rounds and more of the groups an H200's
// multiprocessor holds at once (9, by registers), so that the last round is not a short
// one. Each group waits for its searches of the merge path once, however many tiles
// it writes: about log2(n) dependent reads, a few microseconds on HBM and more across a
// link, against a fraction of a microsecond for a tile's loads once they are issued. On an
// H200 (2026-11-30, BenchmarkMergePeer: 2 x 32M keys) a group a tile spent about half its
// time waiting at the barrier after those searches (ncu: 10.3 of 21.4 cycles between a
// warp's instructions; 21 of 37 with the second run on the other GPU). With 64M outputs,
// groups of 8 and 16 tiles merged in 282 us, of 4 in 316, of 32 in 321 and of 1 in 538
// (the automatic choice: 11 tiles, 282 us).
const mergeGroupsPerCU = 24

// mergeTilesPerGroup returns the tiles a work-group of sort_merge writes in a merge of
// the given tiles on cus compute units: 1 until every compute unit has mergeGroupsPerCU
// groups, then as many as spread the tiles over that many groups, at most mergeGroup.
func mergeTilesPerGroup(tiles, cus int) int {
	return min(max(tiles/(max(cus, 1)*mergeGroupsPerCU), 1), mergeGroup)
}

// orderMode returns the mode of sort.cl's and onesweep.cu's kernels for keys of base mode
// (0, or sortModeFloat) sorted in order.
func orderMode(base int32, order SortOrder) int32 {
	if order == Descending {
		return base | sortModeDescends
	}
	return base
}

// groupOf returns want work-items a group for k, or fewer where the device allows fewer
// for the kernel.
func groupOf(k *engine.Kernel, want int) int {
	if m := k.MaxWorkGroupSize(); m > 0 && m < want {
		return m
	}
	return want
}

// mergeRun is one input of a merge: the n sorted keys of keys from off, and for pairs the
// values of vals alongside. keys and vals are kernel arguments: a Buffer of the merging
// device, or another device's Buffer its kernels reach (Buffer.Reach).
type mergeRun struct {
	keys, vals any
	off, n     int
}

// runOf returns the run b[off, off+n) with the values of vb alongside (vb nil: none).
func runOf[K SortKey](b *engine.Buffer[K], vb *engine.Buffer[uint32], off, n int) mergeRun {
	r := mergeRun{keys: b, off: off, n: n}
	if vb != nil {
		r.vals = vb
	}
	return r
}

// mergeTwo enqueues on q the stable merge of the sorted runs src[lo, mid) and src[mid, hi)
// into dst[lo, hi) in order (a key of the first run before an equal key of the second), the
// values of vsrc alongside into vdst when they are not nil. dst and src are distinct.
func (s *Sorter[K]) mergeTwo(q *engine.Queue, dst, src *engine.Buffer[K], vdst, vsrc *engine.Buffer[uint32], lo, mid, hi int, order SortOrder) error {
	return s.mergeFrom(q, 0, dst, vdst, lo, runOf(src, vsrc, lo, mid-lo), runOf(src, vsrc, mid, hi-mid), order)
}

// mergeFrom enqueues on q the stable merge of the sorted runs a and b (a's key first
// among equal keys) into dst from dlo, their values into vdst alongside when it is not nil
// (a and b then carry values). dst is distinct from the runs' buffers. One work-group of
// sort_merge writes one or more tiles of the output (mergeTilesPerGroup, or s.mergePer):
// local work-items (0: mergeWG, or fewer where the device allows fewer for the kernel).
func (s *Sorter[K]) mergeFrom(q *engine.Queue, local int, dst *engine.Buffer[K], vdst *engine.Buffer[uint32], dlo int, a, b mergeRun, order SortOrder) error {
	n := a.n + b.n
	if n <= 0 {
		return nil
	}
	mode := orderMode(s.mode, order)
	var pairs int32
	var vd, va, vb any = dst, a.keys, b.keys // where there are no values: the kernel does not touch them
	if vdst != nil {
		if a.vals == nil || b.vals == nil {
			return fmt.Errorf("kernels: merge of pairs: a run without values: %w", engine.ErrInvalidArg)
		}
		pairs, vd, va, vb = 1, vdst, a.vals, b.vals
	}
	if local <= 0 {
		local = groupOf(s.merge, mergeWG)
	}
	tile := local * mergeItems
	tiles := (n + tile - 1) / tile
	per := s.mergePer
	if per <= 0 {
		per = mergeTilesPerGroup(tiles, s.dev.Info().ComputeUnits)
	}
	per = min(per, mergeGroup)
	groups := (tiles + per - 1) / per
	return q.Launch(s.merge, engine.Range1D(groups*local, local), dst, uint32(dlo),
		a.keys, uint32(a.off), uint32(a.n), b.keys, uint32(b.off), uint32(b.n), vd, va, vb, mode, pairs, uint32(per))
}

// mergeRuns merges the sorted runs of keys[0, n) that bounds delimit (bounds[0] = 0 <=
// bounds[1] <= ... <= bounds[len-1] = n), the values of vals alongside where not nil, into
// one sorted run back in keys (and vals), stably: runs earlier in bounds go first among
// equal keys. tmp (and vtmp) hold n elements at least: the passes merge neighbouring runs
// two by two between the buffers (an odd run out copied by the same kernel), and a result
// left in tmp is copied back.
func (s *Sorter[K]) mergeRuns(q *engine.Queue, keys, tmp *engine.Buffer[K], vals, vtmp *engine.Buffer[uint32], bounds []int, order SortOrder) error {
	inTmp, err := s.mergeAll(q, keys, tmp, vals, vtmp, bounds, order)
	if err != nil || !inTmp {
		return err
	}
	// The result is in tmp: copied back by the kernel too (a copy of the device's, under
	// Oclgrind, leaves what it copied marked uninitialized).
	n := bounds[len(bounds)-1]
	return s.mergeTwo(q, keys, tmp, vals, vtmp, 0, n, n, order)
}

// mergeAll merges the sorted runs of a[0, n) that bounds delimit into one sorted run, as
// mergeRuns does, with b (and vb) as the other buffer of the passes, and reports whether
// the result ended in b (an odd number of passes: mergePassCount) rather than in a.
func (s *Sorter[K]) mergeAll(q *engine.Queue, a, b *engine.Buffer[K], va, vb *engine.Buffer[uint32], bounds []int, order SortOrder) (inB bool, _ error) {
	src, dst, vsrc, vdst := a, b, va, vb
	err := mergePasses(bounds, func(lo, mid, hi int) error { return s.mergeTwo(q, dst, src, vdst, vsrc, lo, mid, hi, order) },
		func() { src, dst, vsrc, vdst = dst, src, vdst, vsrc })
	return src == b, err
}

// sampleRun enqueues on q the copy of k-1 keys of run[0, n) into out (sort_sample):
// evenly spaced ones, out[g] = run[(g+1)*n/k], with seed 0; else one drawn from each of
// k-1 even slots, out[g] = run[sampleAt(g, n, k-1, seed)].
func (s *Sorter[K]) sampleRun(q *engine.Queue, out, run *engine.Buffer[K], n, k int, seed uint32) error {
	if k < 2 || n == 0 {
		return nil
	}
	if n > run.Len() || k-1 > out.Len() || k > math.MaxUint32 {
		return fmt.Errorf("kernels: %d samples of a run of %d keys into %d: %w", k-1, n, out.Len(), engine.ErrInvalidArg)
	}
	local := groupOf(s.sample, 64)
	return q.Launch(s.sample, engine.Range1D((k-1+local-1)/local*local, local), out, run, uint32(n), uint32(k), seed)
}

// sampleAt returns sort.cl's sample_at: the position of sample g of m drawn from n keys
// with seed, in slot [g*n/m, (g+1)*n/m).
func sampleAt(g, n, m int, seed uint32) int {
	lo, hi := g*n/m, (g+1)*n/m
	x := uint32(g) ^ seed
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	if hi > lo {
		return lo + int(x%uint32(hi-lo))
	}
	return lo
}

// cutQuery is one search of Sorter.cutRun: the first position in [lo, hi) of a sorted run
// whose mapped key (SortMapKey) is past key: above it where strict, else at or above it.
type cutQuery struct {
	key    uint32
	strict bool
	lo, hi int
}

// cutRun runs the searches qs over the sorted run (sorted in order) on q, all in one launch
// of sort_cut, and returns the positions they found.
func (s *Sorter[K]) cutRun(ctx context.Context, q *engine.Queue, run *engine.Buffer[K], qs []cutQuery, order SortOrder) ([]int, error) {
	if len(qs) == 0 {
		return nil, nil
	}
	words := make([]uint32, 4*len(qs))
	for g, c := range qs {
		if c.lo < 0 || c.hi < c.lo || c.hi > run.Len() {
			return nil, fmt.Errorf("kernels: cut search %d: [%d, %d) of a run of %d: %w", g, c.lo, c.hi, run.Len(), engine.ErrInvalidArg)
		}
		var strict uint32
		if c.strict {
			strict = 1
		}
		copy(words[4*g:], []uint32{c.key, strict, uint32(c.lo), uint32(c.hi)})
	}
	var err error
	if s.cutQuery, err = grow(s.dev, s.cutQuery, len(words)); err != nil {
		return nil, err
	}
	if s.cutPos, err = grow(s.dev, s.cutPos, len(qs)); err != nil {
		return nil, err
	}
	if err := s.cutQuery.Write(ctx, q, 0, words); err != nil {
		return nil, err
	}
	mode := orderMode(s.mode, order)
	local := groupOf(s.cut, 64)
	if err := q.Launch(s.cut, engine.Range1D((len(qs)+local-1)/local*local, local), s.cutPos, run, s.cutQuery, uint32(len(qs)), mode); err != nil {
		return nil, err
	}
	got := make([]uint32, len(qs))
	if err := s.cutPos.Read(ctx, q, 0, got); err != nil {
		return nil, err
	}
	pos := make([]int, len(qs))
	for g, v := range got {
		pos[g] = int(v)
	}
	return pos, nil
}

// mergePassCount returns the passes mergePasses makes over the runs bounds delimit.
func mergePassCount(bounds []int) int {
	n := 0
	mergePasses(bounds, func(int, int, int) error { return nil }, func() { n++ })
	return n
}

// mergePasses merges the runs that bounds delimit (bounds[0] <= bounds[1] <= ...; empty
// runs are dropped) two by two, neighbours with neighbours, pass after pass until one is
// left: each pass calls merge(lo, mid, hi) for the runs [lo, mid) and [mid, hi) into the
// other buffer (mid == hi for an odd run out, which is copied), then swap. The merges of
// the host's and of the device's sorts of runs (mergeRuns) are its two callers.
func mergePasses(bounds []int, merge func(lo, mid, hi int) error, swap func()) error {
	var runs []int
	for i, b := range bounds {
		if i == 0 || b != runs[len(runs)-1] {
			runs = append(runs, b)
		}
	}
	for len(runs) > 2 {
		next := []int{runs[0]}
		for i := 0; i+1 < len(runs); i += 2 {
			hi := runs[i+1]
			if i+2 < len(runs) {
				hi = runs[i+2]
			}
			if err := merge(runs[i], runs[i+1], hi); err != nil {
				return err
			}
			next = append(next, hi)
		}
		runs = next
		swap()
	}
	return nil
}
