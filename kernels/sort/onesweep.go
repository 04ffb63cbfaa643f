package sort

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed onesweep.cu
var onesweepSource string

// The tile of onesweep.cu: 256 threads (one per digit of 8 bits) of 16 keys.
const (
	onesweepBlock = 256
	onesweepItems = 16
	// onesweepMinBlocks is the pass kernel's register budget (MINBLOCKS): 4 blocks of 256
	// per SM, against 3 with the 73 registers the compiler takes unbudgeted, took 16M pairs
	// from 1.19 ms to 950 us on an H200 (BenchmarkOnesweep, docs/PERFORMANCE.md).
	onesweepMinBlocks = 4
	// onesweepRank is how warps rank their keys (RANK): 1, shared words set with atomicOr.
	// On an H200 (2026-11-30, ncu, 16M keys) a pass took 265 us with match.any.sync (38
	// cycles between a warp's instructions, where CUB's pass, 113 us, has 16) and 153 us
	// with the shared words; prism bench, against CUB through torch.sort in the same call:
	// keys 16M 550 us (was 896; CUB 836), 2^28 8.16 ms (was 14.25; CUB 11.83); pairs 16M
	// 774 us (was 967; CUB 831), 2^28 11.26 ms (was 13.94; CUB 11.82).
	onesweepRank   = 1
	onesweepTile   = onesweepBlock * onesweepItems
	onesweepRadix  = 256
	onesweepPasses = 4
	// MaxOnesweepLen bounds the keys of one Onesweep sort: a status word holds a count in
	// 30 bits.
	MaxOnesweepLen = 1<<30 - 1
)

// Onesweep sorts like Sorter, with onesweep.cu's one-pass-per-digit radix sort (the
// "cuda-onesweep" variant): a histogram of all four 8-bit digits in one read of the keys,
// then four passes that each read and write the keys (and values) once, ranking every tile
// with warp matches and finding its output positions by decoupled look-back. It runs on
// CUDA devices of compute capability 7.0 and newer. Like Sorter it owns its scratch and is
// for use through one queue at a time; results are bit for bit those of Sorter.
type Onesweep[K SortKey] struct {
	dev                      *engine.Device
	prog                     *engine.Program
	histogram, offsets, pass *engine.Kernel
	keyScratch               *engine.Buffer[K]
	valScratch, scratch      *engine.Buffer[uint32]
	histGroups               int
	mode                     int32
	replay                   kernels.Replay
	tile                     int // keys per tile: onesweepBlock * ITEMS
}

// OnesweepTunables are onesweep.cu's tunables beside its block of 256: the keys per thread
// of a tile (ITEMS), the pass kernel's register budget, as blocks per multiprocessor
// (MINBLOCKS), and how a warp ranks its keys (RANK: 0 match.any.sync, 1 shared words set
// with atomicOr, as CUB ranks on sm_90).
type OnesweepTunables struct{ Items, MinBlocks, Rank int }

// String writes t as prism tune and --tunables spell it ("ITEMS=16 MINBLOCKS=4 RANK=1").
func (t OnesweepTunables) String() string {
	return fmt.Sprintf("ITEMS=%d MINBLOCKS=%d RANK=%d", t.Items, t.MinBlocks, t.Rank)
}

// ParseOnesweepTunables reads tunables as String writes them: ITEMS 4 to 18 (the pass
// kernel's tiles of keys and values, 2*256*ITEMS words, and its counters stay within the
// 48 KiB of static shared memory), MINBLOCKS 1 to 8, RANK 0 or 1 (1 needs ITEMS of at least
// 8: its match words lie in the tile's keys). RANK may be left out: it is then the
// default's, so that tuning files written before it (whose sets were measured with RANK=0)
// keep their tile and take the faster ranking. Errors wrap engine.ErrInvalidArg and name
// the field.
func ParseOnesweepTunables(s string) (OnesweepTunables, error) {
	t := OnesweepTunables{Rank: onesweepRank}
	err := kernels.ParseTunableInts("sort onesweep tunables", s, true, kernels.TunableInt{Key: "ITEMS", Dst: &t.Items, Min: 4, Max: 18},
		kernels.TunableInt{Key: "MINBLOCKS", Dst: &t.MinBlocks, Min: 1, Max: 8}, kernels.TunableInt{Key: "RANK", Dst: &t.Rank, Min: 0, Max: 1, Optional: true})
	if err == nil && t.Rank == 1 && t.Items < 8 {
		err = fmt.Errorf("kernels: sort onesweep tunables %q: RANK=1 needs ITEMS of at least 8 (its match words lie in the tile's keys), not ITEMS=%d: %w", s, t.Items, engine.ErrInvalidArg)
	}
	return t, err
}

// onesweepDefault is the set NewOnesweep builds; onesweepCandidates those prism tune
// measures, the default first (BenchmarkOnesweep, 16M pairs on an H200, 2026-11-30: RANK=1
// with ITEMS=16 MINBLOCKS=4 754 us, 18 and 3 757, 16 and 3 796, 12 and 5 818; RANK=0 with
// 16 and 4 948, 12 and 5 1000, 16 and 1 1182).
var (
	onesweepDefault    = OnesweepTunables{onesweepItems, onesweepMinBlocks, onesweepRank}
	onesweepCandidates = []OnesweepTunables{onesweepDefault, {16, 3, 1}, {16, 5, 1}, {12, 5, 1}, {14, 4, 1}, {18, 3, 1}, {8, 6, 1},
		{16, 4, 0}, {12, 5, 0}}
)

// onesweepMinCompute is the compute capability onesweep.cu needs (warp match, sm_70).
const onesweepMinCompute = 70

// NewOnesweep compiles onesweep.cu for dev (CUDA C++: an error wrapping
// engine.ErrUnsupported on other backends).
func NewOnesweep[K SortKey](dev *engine.Device) (*Onesweep[K], error) {
	return newOnesweep[K](dev, onesweepDefault)
}

// newOnesweep compiles onesweep.cu with tunables t (the benchmarks compare them).
func newOnesweep[K SortKey](dev *engine.Device, t OnesweepTunables) (*Onesweep[K], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: sort: nil device: %w", engine.ErrInvalidArg)
	}
	prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: onesweepSource, Name: "onesweep.cu"},
		fmt.Sprintf("-DBLOCK=%d", onesweepBlock), fmt.Sprintf("-DITEMS=%d", t.Items), fmt.Sprintf("-DMINBLOCKS=%d", t.MinBlocks), fmt.Sprintf("-DRANK=%d", t.Rank))
	if err != nil {
		return nil, err
	}
	s := &Onesweep[K]{dev: dev, prog: prog, histGroups: 4 * max(dev.Info().ComputeUnits, 1), tile: onesweepBlock * t.Items}
	var z K
	if _, ok := any(z).(float32); ok {
		s.mode = sortModeFloat
	}
	if _, err = kernels.LoadKernels(prog, kernels.Ref{Dst: &s.histogram, Name: "onesweep_histogram"},
		kernels.Ref{Dst: &s.offsets, Name: "onesweep_offsets"}, kernels.Ref{Dst: &s.pass, Name: "onesweep_pass"}); err != nil {
		s.Close()
		return nil, err
	}
	for _, k := range []*engine.Kernel{s.histogram, s.offsets, s.pass} {
		if m := k.MaxWorkGroupSize(); m < onesweepBlock {
			s.Close()
			return nil, fmt.Errorf("kernels: %s takes %d threads per block on %s, needs %d: %w", k.Name(), m, dev.ID(), onesweepBlock, engine.ErrUnsupported)
		}
	}
	return s, nil
}

// Close releases the kernels, program and scratch. Idempotent.
func (s *Onesweep[K]) Close() error {
	if s == nil {
		return nil
	}
	errs := []error{s.replay.Close(), s.keyScratch.Close(), s.valScratch.Close(), s.scratch.Close()}
	for _, k := range []*engine.Kernel{s.histogram, s.offsets, s.pass} {
		errs = append(errs, k.Close())
	}
	errs = append(errs, s.prog.Close())
	return errors.Join(errs...)
}

// scratchWords returns the words of onesweep.cu's scratch for n keys: the digit counts of
// the four passes, then per pass a tile counter and 256 status words per tile.
func (s *Onesweep[K]) scratchWords(n int) int {
	tiles := (n + s.tile - 1) / s.tile
	return onesweepPasses*onesweepRadix + onesweepPasses*(1+onesweepRadix*tiles)
}

// Reserve allocates the scratch for sorts of up to n keys (with values when pairs).
func (s *Onesweep[K]) Reserve(n int, pairs bool) error {
	if n < 1 || n > MaxOnesweepLen {
		return fmt.Errorf("kernels: sort: reserve %d keys; the onesweep sort takes 1..%d: %w", n, MaxOnesweepLen, engine.ErrInvalidArg)
	}
	var err error
	if s.keyScratch, err = grow(s.dev, s.keyScratch, n); err != nil {
		return err
	}
	if pairs {
		if s.valScratch, err = grow(s.dev, s.valScratch, n); err != nil {
			return err
		}
	}
	s.scratch, err = grow(s.dev, s.scratch, s.scratchWords(n))
	return err
}

// grow returns b if it holds n elements, else a new buffer of n in its place.
func grow[T engine.Scalar](dev *engine.Device, b *engine.Buffer[T], n int) (*engine.Buffer[T], error) {
	if b != nil && b.Len() >= n {
		return b, nil
	}
	if err := b.Close(); err != nil {
		return nil, err
	}
	return engine.NewBuffer[T](dev, n)
}

// Keys sorts the first n keys of src into dst, as Sorter.Keys.
func (s *Onesweep[K]) Keys(q *engine.Queue, dst, src *engine.Buffer[K], n int, order SortOrder) error {
	if err := checkSortArgs(dst, src, nil, nil, n, order, false); err != nil || n == 0 {
		return err
	}
	return s.run(q, dst, src, nil, nil, n, order)
}

// Pairs sorts keys with their values, as Sorter.Pairs.
func (s *Onesweep[K]) Pairs(q *engine.Queue, dstKeys, srcKeys *engine.Buffer[K], dstVals, srcVals *engine.Buffer[uint32], n int, order SortOrder) error {
	if err := checkSortArgs(dstKeys, srcKeys, dstVals, srcVals, n, order, true); err != nil || n == 0 {
		return err
	}
	return s.run(q, dstKeys, srcKeys, dstVals, srcVals, n, order)
}

// sortKey identifies a sort's commands for Replay (from: the first bit sorted, 0 but for
// Onesweep.afterCross's after a crossing pass of a digit; mapped: the keys read are mapped
// already, as afterCross's are).
type sortKey struct {
	dst, src, vdst, vsrc any
	n                    int
	order                SortOrder
	from                 int
	mapped               bool
}

// run clears the scratch and enqueues the histogram, the offsets and the four passes:
// src to the key scratch, to dst, to the scratch, to dst, so that src is only read (or,
// in place, read by the first pass before the second writes it). The seven commands run
// as one graph from the second sort of the same buffers on (kernels.Replay).
func (s *Onesweep[K]) run(q *engine.Queue, dst, src *engine.Buffer[K], vdst, vsrc *engine.Buffer[uint32], n int, order SortOrder) error {
	if n > MaxOnesweepLen {
		return fmt.Errorf("kernels: sort: %d keys; the onesweep sort takes at most %d: %w", n, MaxOnesweepLen, engine.ErrInvalidArg)
	}
	pairs := vdst != nil
	if err := s.Reserve(n, pairs); err != nil {
		return err
	}
	return s.replay.Run(q, sortKey{dst, src, vdst, vsrc, n, order, 0, false}, func() error { return s.enqueue(q, dst, src, vdst, vsrc, n, order, 0, false) })
}

// afterCross enqueues the sort of the n keys a crossing pass (Sorter.crossScatter) left in
// landing into dst: they are mapped (SortMapKey) and ordered by their low from bits (the
// crossing pass's digit: sortRadixBits, or 0 after a pass that only partitioned them), so
// that four passes of the bits from there on sort them, the last mapping them back.
// landing is only read. Replayed as run's sorts are.
func (s *Onesweep[K]) afterCross(q *engine.Queue, dst, landing *engine.Buffer[K], n int, order SortOrder, from int) error {
	if n == 0 {
		return nil
	}
	if n < 0 || n > MaxOnesweepLen || n > dst.Len() || n > landing.Len() || from != 0 && from != sortRadixBits {
		return fmt.Errorf("kernels: sort: %d keys after the crossing pass of %d bits, from %d into %d: %w", n, from, landing.Len(), dst.Len(), engine.ErrInvalidArg)
	}
	if err := s.Reserve(n, false); err != nil {
		return err
	}
	return s.replay.Run(q, sortKey{dst, landing, nil, nil, n, order, from, true}, func() error {
		return s.enqueue(q, dst, landing, nil, nil, n, order, from, true)
	})
}

// enqueue enqueues run's commands, for the digits from bit from on (0, or sortRadixBits
// for afterCross's keys); with mapped the keys read are mapped already (neither the
// histogram nor the first pass maps them), as afterCross's are.
func (s *Onesweep[K]) enqueue(q *engine.Queue, dst, src *engine.Buffer[K], vdst, vsrc *engine.Buffer[uint32], n int, order SortOrder, from int, mapped bool) error {
	pairs := vdst != nil
	words := s.scratchWords(n)
	if err := s.scratch.Fill(q, 0, words, 0); err != nil {
		return err
	}
	mode := orderMode(s.mode, order)
	mapIn := mode // how the histogram and the first pass map the keys they read
	if mapped {
		mapIn = 0
	}
	groups := min(s.histGroups, (n+4*onesweepBlock-1)/(4*onesweepBlock))
	if err := q.Launch(s.histogram, engine.Range1D(groups*onesweepBlock, onesweepBlock), s.scratch, src, int32(n), mapIn, int32(from)); err != nil {
		return err
	}
	if err := q.Launch(s.offsets, engine.Range1D(onesweepPasses*onesweepRadix, onesweepRadix), s.scratch); err != nil {
		return err
	}
	tiles := (n + s.tile - 1) / s.tile
	var pairsArg int32
	if pairs {
		pairsArg = 1
	}
	in, vin := src, vsrc
	for p := range onesweepPasses {
		out, vout := dst, vdst
		if p%2 == 0 {
			out, vout = s.keyScratch, s.valScratch
		}
		tin, tout := int32(0), int32(0)
		if p == 0 {
			tin = mapIn
		}
		if p == onesweepPasses-1 {
			tout = mode
		}
		var vo, vi any = vout, vin
		if !pairs { // not touched by the kernel: any buffer will do
			vo, vi = out, in
		}
		if err := q.Launch(s.pass, engine.Range1D(tiles*onesweepBlock, onesweepBlock), out, in, vo, vi, s.scratch,
			int32(n), int32(from+8*p), tin, tout, pairsArg); err != nil {
			return err
		}
		in, vin = out, vout
	}
	return nil
}

// OnesweepModel returns the bytes the onesweep sort of n keys moves: the histogram reads
// every key once, and each of the four passes reads and writes every key (and value) once.
func OnesweepModel(n int, pairs bool) kernels.Model {
	per := 4.0
	if pairs {
		per = 8
	}
	return kernels.Model{Bytes: 4*float64(n) + onesweepPasses*2*per*float64(n)}
}
