package scan

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed scan.cu
var cudaSource string

// The default tile of scan.cu's single-pass scan: 256 threads of 32 consecutive elements.
const (
	lookbackBlock = 256
	lookbackItems = 32
	lookbackTile  = lookbackBlock * lookbackItems
	// lookbackMaxTile bounds BLOCK*ITEMS: the tile lives in static shared memory (48 KiB),
	// and the persistent kernel's two stages of it in 9 bytes per element of dynamic shared
	// memory (72 KiB at most, within what a block of every sm_80 and newer device may use).
	lookbackMaxTile = 8192
	// lookbackPersistCompute is the compute capability the persistent kernel needs
	// (cp.async).
	lookbackPersistCompute = 80
)

// Lookback is the "cuda-lookback" variant of the scans: scan.cu's single-pass prefix sum
// with decoupled look-back (one launch, x read once and y written once). It runs on CUDA
// devices of compute capability 7.0 and newer (8.0 for the persistent builds, PERSIST > 0).
// It owns its scratch (the tile counter and status words, cleared before each launch), so
// it is safe for use through one queue at a time.
type Lookback[T ScanElem] struct {
	dev   *engine.Device
	prog  *engine.Program
	k     *engine.Kernel
	state *engine.Buffer[uint32]
	block int // threads per block
	items int // elements per thread: the tile is block*items
	// grid is the persistent kernel's grid in blocks (the most that are resident at once,
	// at most PERSIST per multiprocessor), shared its dynamic shared memory per block in
	// bytes; both 0 for the kernel of a block per tile.
	grid   int
	shared int64
}

// lookbackShape is a build of scan.cu: its BLOCK, ITEMS, VEC, MINBLOCKS, EARLY and PERSIST
// (scan.cu's header; PERSIST, for the host, the most blocks per multiprocessor of the
// persistent grid).
type lookbackShape struct{ block, items, vec, minBlocks, early, persist int }

// String writes the shape as prism tune and --tunables spell it ("BLOCK=256 ITEMS=32 VEC=4
// MINBLOCKS=4", with " EARLY=1" and " PERSIST=k" where they are set).
func (sh lookbackShape) String() string {
	s := fmt.Sprintf("BLOCK=%d ITEMS=%d VEC=%d MINBLOCKS=%d", sh.block, sh.items, sh.vec, sh.minBlocks)
	if sh.early != 0 {
		s += fmt.Sprintf(" EARLY=%d", sh.early)
	}
	if sh.persist != 0 {
		s += fmt.Sprintf(" PERSIST=%d", sh.persist)
	}
	return s
}

// parseLookbackShape reads a shape as String writes it; BLOCK may be left out (256, the
// spelling of earlier tuning files), EARLY (0) and PERSIST (0). Errors wrap
// engine.ErrInvalidArg and name the field: BLOCK 32 to 1024 in warps, ITEMS 1 to 32 (a
// multiple of 4 with VEC=4), VEC 1 or 4, MINBLOCKS 1 to 32 with at most 2048 threads per
// multiprocessor, a tile of at most lookbackMaxTile elements, EARLY 0 or 1, PERSIST 0 to 32
// with BLOCK at least 64, VEC=4 and at most 2048 threads per multiprocessor.
func parseLookbackShape(s string) (lookbackShape, error) {
	sh := lookbackShape{block: lookbackBlock}
	if err := kernels.ParseTunableInts("scan look-back tunables", s, true,
		kernels.TunableInt{Key: "BLOCK", Dst: &sh.block, Min: 32, Max: 1024, Optional: true},
		kernels.TunableInt{Key: "ITEMS", Dst: &sh.items, Min: 1, Max: 32},
		kernels.TunableInt{Key: "VEC", Dst: &sh.vec, Min: 1, Max: 4}, kernels.TunableInt{Key: "MINBLOCKS", Dst: &sh.minBlocks, Min: 1, Max: 32},
		kernels.TunableInt{Key: "EARLY", Dst: &sh.early, Min: 0, Max: 1, Optional: true},
		kernels.TunableInt{Key: "PERSIST", Dst: &sh.persist, Min: 0, Max: 32, Optional: true}); err != nil {
		return lookbackShape{}, err
	}
	switch {
	case sh.block%32 != 0:
		return lookbackShape{}, fmt.Errorf("kernels: scan look-back tunables %q: BLOCK=%d is not a whole number of warps (32 threads): %w", s, sh.block, engine.ErrInvalidArg)
	case sh.block*sh.minBlocks > 2048:
		return lookbackShape{}, fmt.Errorf("kernels: scan look-back tunables %q: MINBLOCKS=%d blocks of BLOCK=%d are %d threads; a multiprocessor holds at most 2048: %w",
			s, sh.minBlocks, sh.block, sh.block*sh.minBlocks, engine.ErrInvalidArg)
	case sh.block*sh.items > lookbackMaxTile:
		return lookbackShape{}, fmt.Errorf("kernels: scan look-back tunables %q: a tile of BLOCK*ITEMS = %d elements does not fit the kernel's shared memory (at most %d): %w",
			s, sh.block*sh.items, lookbackMaxTile, engine.ErrInvalidArg)
	case sh.vec != 1 && sh.vec != 4:
		return lookbackShape{}, fmt.Errorf("kernels: scan look-back tunables %q: VEC=%d: 1 or 4: %w", s, sh.vec, engine.ErrInvalidArg)
	case sh.items%sh.vec != 0:
		return lookbackShape{}, fmt.Errorf("kernels: scan look-back tunables %q: ITEMS=%d is not a multiple of VEC=%d: %w", s, sh.items, sh.vec, engine.ErrInvalidArg)
	case sh.persist != 0 && sh.block < 64:
		return lookbackShape{}, fmt.Errorf("kernels: scan look-back tunables %q: PERSIST=%d needs BLOCK of at least 64 (two warps: one looks back while the others load), not BLOCK=%d: %w",
			s, sh.persist, sh.block, engine.ErrInvalidArg)
	case sh.persist != 0 && sh.vec != 4:
		return lookbackShape{}, fmt.Errorf("kernels: scan look-back tunables %q: PERSIST=%d needs VEC=4 (its copies move 16 bytes), not VEC=%d: %w", s, sh.persist, sh.vec, engine.ErrInvalidArg)
	case sh.block*sh.persist > 2048:
		return lookbackShape{}, fmt.Errorf("kernels: scan look-back tunables %q: PERSIST=%d blocks of BLOCK=%d are %d threads; a multiprocessor holds at most 2048: %w",
			s, sh.persist, sh.block, sh.block*sh.persist, engine.ErrInvalidArg)
	}
	return sh, nil
}

// persistShared returns the dynamic shared memory of the persistent kernel's block: two
// stages of BLOCK*ITEMS/4 16-byte vectors, with one spare slot per 8 where ITEMS/4 is even
// (scan.cu's SLOT and STAGE_VECS).
func (sh lookbackShape) persistShared() int64 {
	vecs := sh.block * sh.items / 4
	if (sh.items/4)%2 == 0 {
		vecs += vecs / 8
	}
	return 2 * 16 * int64(vecs)
}

// lookbackCandidates are the shapes prism tune measures, the default first: register
// budgets around the default's, shorter rows of items, and one smaller block. On an H200
// (2026-11-29, 2^28 floats) the block waits at a barrier through most of its look-back
// (ncu: 27.8 of 46.6 cycles between a warp's instructions, DRAM at 55%), yet smaller blocks,
// which keep more tiles resident in the same 2048 threads, did not help: BLOCK=128 ITEMS=32
// 787 us, ITEMS=24 811, ITEMS=16 836; BLOCK=64 841 to 934.
// The EARLY builds scan within the tile while the look-back waits: on an H200 (2026-11-30,
// prism tune at 2^28 floats) 759 us against 762 for the default's shape, 783 against 791
// at 16 elements and 8 blocks, inside the run-to-run spread: the wait is not what the
// other warps could fill, so EARLY stays a candidate, not the default.
var lookbackCandidates = []lookbackShape{lookbackDefault, {256, 32, 4, 4, 1, 0}, {256, 16, 4, 8, 1, 0}, {256, 16, 4, 8, 0, 0}, {256, 16, 4, 7, 0, 0},
	{256, 20, 4, 6, 0, 0}, {256, 24, 4, 5, 0, 0}, {256, 32, 4, 3, 0, 0}, {256, 12, 4, 8, 0, 0}, {256, 16, 1, 8, 0, 0}, {128, 32, 4, 12, 0, 0}}

// lookbackPersistent are the persistent builds (sm_80 and newer), the default there
// first: 3 and 2 blocks of 256 threads of 32 elements per multiprocessor (72 KiB of stages
// each), and 6 and 3 of 16 elements (36 KiB). On an H200 (2026-11-30, 2^28 floats,
// BenchmarkLookback): 619, 658, 639 and 734 us, against 766 for lookbackDefault's shape;
// prism bench 608 us (83% of the 501 us copy in the same call) against 761 (66%). A first
// loop that took its next tiles' numbers an iteration ahead of reducing them ran 4.1-5.2
// ms: a number taken holds up every later tile's look-back until its aggregate is out.
// Cache hints on the default's shape (cp.async loads asking L2 for 256 bytes, full tiles'
// stores streamed past the caches with st.global.cs, and both) ran 608-612 us against
// 610-611 for the build without (H200, 2026-11-30, two rounds of prism bench each): no
// gain past the spread, so no such build is kept.
var lookbackPersistent = []lookbackShape{lookbackPersistDefault, {256, 32, 4, 2, 0, 2}, {256, 16, 4, 6, 0, 6}, {256, 16, 4, 3, 0, 3}}

// lookbackPersistDefault is the shape NewLookback builds on CUDA devices of sm_80 and newer
// (defaultLookback).
var lookbackPersistDefault = lookbackShape{256, 32, 4, 3, 0, 3}

// defaultLookback returns the shape NewLookback builds on dev: the persistent kernel where
// the device runs it, else lookbackDefault.
func defaultLookback(dev *engine.Device) lookbackShape {
	if dev.Backend() == "cuda" && dev.Info().ComputeCapability >= lookbackPersistCompute {
		return lookbackPersistDefault
	}
	return lookbackDefault
}

// lookbackCandidatesFor returns the shapes prism tune measures on dev, its default first:
// the persistent builds where it runs them, then lookbackCandidates.
func lookbackCandidatesFor(dev *engine.Device) []lookbackShape {
	if defaultLookback(dev).persist == 0 {
		return lookbackCandidates
	}
	return append(slices.Clip(lookbackPersistent), lookbackCandidates...)
}

// lookbackDefault is the shape NewLookback builds where the persistent kernel does not run
// (defaultLookback): 256 threads of 32 elements, registers for 4 blocks per
// multiprocessor. On an H200, 2^28 floats: 778 and 782 us in two calls of 2026-11-29,
// against 807 and 802 for 16 elements and 8 blocks (the earlier default, whose register
// budget had taken the scan from 1.01 ms to 810 us: BenchmarkLookback,
// docs/PERFORMANCE.md).
var lookbackDefault = lookbackShape{lookbackBlock, lookbackItems, 4, 4, 0, 0}

// NewLookback compiles scan.cu for dev (CUDA C++: an error wrapping engine.ErrUnsupported
// on other backends).
func NewLookback[T ScanElem](dev *engine.Device) (*Lookback[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: scan: nil device: %w", engine.ErrInvalidArg)
	}
	return newLookback[T](dev, defaultLookback(dev))
}

// newLookback compiles scan.cu for dev in the given shape (the benchmarks compare shapes).
func newLookback[T ScanElem](dev *engine.Device, sh lookbackShape) (*Lookback[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: scan: nil device: %w", engine.ErrInvalidArg)
	}
	if cc := dev.Info().ComputeCapability; sh.persist > 0 && dev.Backend() == "cuda" && cc < lookbackPersistCompute {
		return nil, fmt.Errorf("kernels: scan look-back tunables %s: the persistent kernel needs a CUDA device of sm_%d or newer (cp.async); %s is sm_%d: %w",
			sh, lookbackPersistCompute, dev.ID(), cc, engine.ErrUnsupported)
	}
	// One word per type: the backend passes each option whole, and "-DELEM=unsigned int"
	// would not survive NVRTC's option parsing.
	elem, acc := "float", "float"
	switch kernels.TypeName[T]() {
	case "int32": // int32 sums wrap: accumulated in unsigned int
		elem, acc = "int", "uint32_t"
	case "uint32":
		elem, acc = "uint32_t", "uint32_t"
	}
	opts := []string{"-DELEM=" + elem, "-DACC=" + acc, fmt.Sprintf("-DBLOCK=%d", sh.block), fmt.Sprintf("-DITEMS=%d", sh.items),
		fmt.Sprintf("-DVEC=%d", sh.vec), fmt.Sprintf("-DMINBLOCKS=%d", sh.minBlocks), fmt.Sprintf("-DEARLY=%d", sh.early)}
	if sh.persist > 0 {
		opts = append(opts, fmt.Sprintf("-DPERSIST=%d", sh.persist))
	}
	prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: cudaSource, Name: "scan.cu"}, opts...)
	if err != nil {
		return nil, err
	}
	l := &Lookback[T]{dev: dev, prog: prog, block: sh.block, items: sh.items}
	if l.k, err = prog.Kernel("scan_lookback"); err != nil {
		l.Close()
		return nil, err
	}
	if m := l.k.MaxWorkGroupSize(); m < sh.block {
		l.Close()
		return nil, fmt.Errorf("kernels: scan_lookback takes %d threads per block on %s, needs %d: %w", m, dev.ID(), sh.block, engine.ErrUnsupported)
	}
	if sh.persist > 0 {
		if err := l.persistentGrid(sh); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// persistentGrid sets the persistent kernel's grid: on every multiprocessor as many blocks
// as the occupancy query says are resident at once with the kernel's registers and shared
// memory, at most sh.persist (sh.persist where the backend cannot tell; the kernel is right
// with any grid, only slower where blocks wait to start).
func (l *Lookback[T]) persistentGrid(sh lookbackShape) error {
	l.shared = sh.persistShared()
	per := sh.persist
	o, err := l.k.Occupancy(sh.block, l.shared)
	switch {
	case errors.Is(err, engine.ErrUnsupported):
	case err != nil:
		return err
	case o.ActiveBlocks < 1:
		return fmt.Errorf("kernels: scan look-back tunables %s: not one block of the persistent kernel (%d bytes of dynamic shared memory) fits a multiprocessor of %s (limiter: %q): %w",
			sh, l.shared, l.dev.ID(), o.Limiter, engine.ErrUnsupported)
	default:
		per = min(per, o.ActiveBlocks)
	}
	l.grid = max(l.dev.Info().ComputeUnits, 1) * per
	return nil
}

// tiles returns the number of tiles of a scan of n elements.
func (l *Lookback[T]) tiles(n int) int {
	tile := l.block * l.items
	return (n + tile - 1) / tile
}

// blocks returns the grid of a scan of n elements: a block per tile, or the persistent
// grid, at most a block per tile.
func (l *Lookback[T]) blocks(n int) int {
	if l.grid > 0 {
		return min(l.grid, l.tiles(n))
	}
	return l.tiles(n)
}

// Chain returns the longest chain of float additions through which one input reaches one
// output of a scan of n elements (scan.cu, "Arithmetic"; L = ceil(log2 BLOCK)): an input
// of an earlier tile passes ITEMS-1+L roundings into its tile's aggregate (the thread's
// total, the warp scan, the scan of the warp sums; the persistent kernel's early aggregate,
// four running sums over at most ITEMS/2 vectors, their join, the warp's and the workers'
// sums, is no longer for ITEMS >= 4), at most tiles+4 through the look-backs into the
// output tile's prefix (a predecessor d tiles back costs at most d, a window at most 7),
// one joining the thread's prefix, and ITEMS along the thread's elements; an input of the
// same tile, at most 2*ITEMS+L+1.
func (l *Lookback[T]) Chain(n int) int {
	return 2*l.items + kernels.Log2Ceil(l.block) + l.tiles(max(n, 1)) + 4
}

// Into writes the prefix sums of x[0:n) to y[0:n) in one launch (after clearing the status
// words): inclusive or exclusive as Scan.Into. y may be x.
func (l *Lookback[T]) Into(q *engine.Queue, y, x *engine.Buffer[T], n int, exclusive bool) error {
	switch {
	case x == nil || y == nil:
		return fmt.Errorf("kernels: scan: nil input or output buffer: %w", engine.ErrInvalidArg)
	case n < 1:
		return fmt.Errorf("kernels: scan: n = %d; must be at least 1: %w", n, engine.ErrInvalidArg)
	case n > x.Len() || n > y.Len():
		return fmt.Errorf("kernels: scan: n = %d but the input holds %d and the output %d elements: %w", n, x.Len(), y.Len(), engine.ErrInvalidArg)
	case n > math.MaxInt32:
		return fmt.Errorf("kernels: scan: n = %d exceeds the family's limit of 2^31-1: %w", n, engine.ErrInvalidArg)
	}
	tiles := l.tiles(n)
	words := 2 + 2*tiles
	if l.state == nil || l.state.Len() < words {
		if l.state != nil {
			l.state.Close()
			l.state = nil
		}
		var err error
		if l.state, err = engine.NewBuffer[uint32](l.dev, words); err != nil {
			return err
		}
	}
	if err := l.state.Fill(q, 0, words, 0); err != nil {
		return err
	}
	excl := int32(0)
	if exclusive {
		excl = 1
	}
	r := engine.Range1D(l.blocks(n)*l.block, l.block)
	if l.shared > 0 {
		r = r.WithSharedBytes(l.shared)
	}
	return q.Launch(l.k, r, y, x, l.state, int32(n), excl)
}

// Close releases the kernel, program and scratch. Idempotent.
func (l *Lookback[T]) Close() error {
	if l == nil {
		return nil
	}
	var errs []error
	if l.state != nil {
		errs = append(errs, l.state.Close())
		l.state = nil
	}
	if l.k != nil {
		errs = append(errs, l.k.Close())
		l.k = nil
	}
	if l.prog != nil {
		errs = append(errs, l.prog.Close())
		l.prog = nil
	}
	return errors.Join(errs...)
}
