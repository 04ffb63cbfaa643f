package scan

import (
	_ "embed"
	"errors"
	"fmt"
	"math"

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
	// lookbackMaxTile bounds BLOCK*ITEMS: the tile lives in static shared memory (48 KiB).
	lookbackMaxTile = 8192
)

// Lookback is the "cuda-lookback" variant of the scans: scan.cu's single-pass prefix sum
// with decoupled look-back (one launch, x read once and y written once). It runs on CUDA
// devices of compute capability 7.0 and newer. It owns its scratch (the tile counter and
// status words, cleared before each launch), so it is safe for use through one queue at a
// time.
type Lookback[T ScanElem] struct {
	dev   *engine.Device
	prog  *engine.Program
	k     *engine.Kernel
	state *engine.Buffer[uint32]
	block int // threads per block
	items int // elements per thread: the tile is block*items
}

// lookbackShape is a build of scan.cu: its BLOCK, ITEMS, VEC, MINBLOCKS and EARLY
// (scan.cu's header).
type lookbackShape struct{ block, items, vec, minBlocks, early int }

// String writes the shape as prism tune and --tunables spell it ("BLOCK=256 ITEMS=32 VEC=4
// MINBLOCKS=4", with " EARLY=1" where it is set).
func (sh lookbackShape) String() string {
	s := fmt.Sprintf("BLOCK=%d ITEMS=%d VEC=%d MINBLOCKS=%d", sh.block, sh.items, sh.vec, sh.minBlocks)
	if sh.early != 0 {
		s += fmt.Sprintf(" EARLY=%d", sh.early)
	}
	return s
}

// parseLookbackShape reads a shape as String writes it; BLOCK may be left out (256, the
// spelling of earlier tuning files), and EARLY (0). Errors wrap engine.ErrInvalidArg and
// name the field: BLOCK 32 to 1024 in warps, ITEMS 1 to 32 (a multiple of 4 with VEC=4),
// VEC 1 or 4, MINBLOCKS 1 to 32 with at most 2048 threads per multiprocessor, a tile of at
// most lookbackMaxTile elements, EARLY 0 or 1.
func parseLookbackShape(s string) (lookbackShape, error) {
	sh := lookbackShape{block: lookbackBlock}
	if err := kernels.ParseTunableInts("scan look-back tunables", s, true,
		kernels.TunableInt{Key: "BLOCK", Dst: &sh.block, Min: 32, Max: 1024, Optional: true},
		kernels.TunableInt{Key: "ITEMS", Dst: &sh.items, Min: 1, Max: 32},
		kernels.TunableInt{Key: "VEC", Dst: &sh.vec, Min: 1, Max: 4}, kernels.TunableInt{Key: "MINBLOCKS", Dst: &sh.minBlocks, Min: 1, Max: 32},
		kernels.TunableInt{Key: "EARLY", Dst: &sh.early, Min: 0, Max: 1, Optional: true}); err != nil {
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
	}
	return sh, nil
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
var lookbackCandidates = []lookbackShape{lookbackDefault, {256, 32, 4, 4, 1}, {256, 16, 4, 8, 1}, {256, 16, 4, 8, 0}, {256, 16, 4, 7, 0},
	{256, 20, 4, 6, 0}, {256, 24, 4, 5, 0}, {256, 32, 4, 3, 0}, {256, 12, 4, 8, 0}, {256, 16, 1, 8, 0}, {128, 32, 4, 12, 0}}

// lookbackDefault is the shape NewLookback builds: 256 threads of 32 elements, registers
// for 4 blocks per multiprocessor. On an H200, 2^28 floats: 778 and 782 us in two calls of
// 2026-11-29, against 807 and 802 for 16 elements and 8 blocks (the earlier default, whose
// register budget had taken the scan from 1.01 ms to 810 us: BenchmarkLookback,
// docs/PERFORMANCE.md).
var lookbackDefault = lookbackShape{lookbackBlock, lookbackItems, 4, 4, 0}

// NewLookback compiles scan.cu for dev (CUDA C++: an error wrapping engine.ErrUnsupported
// on other backends).
func NewLookback[T ScanElem](dev *engine.Device) (*Lookback[T], error) {
	return newLookback[T](dev, lookbackDefault)
}

// newLookback compiles scan.cu for dev in the given shape (the benchmarks compare shapes).
func newLookback[T ScanElem](dev *engine.Device, sh lookbackShape) (*Lookback[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: scan: nil device: %w", engine.ErrInvalidArg)
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
	return l, nil
}

// tiles returns the number of tiles (blocks) of a scan of n elements.
func (l *Lookback[T]) tiles(n int) int {
	tile := l.block * l.items
	return (n + tile - 1) / tile
}

// Chain returns the longest chain of float additions behind one output of a scan of n
// elements: ITEMS along a thread's elements, the warp and block scans (2 log2 BLOCK), one
// per predecessor tile in the look-back (at most all of them), and the joins.
func (l *Lookback[T]) Chain(n int) int {
	return l.items + 2*kernels.Log2Ceil(l.block) + l.tiles(max(n, 1)) + 4
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
	return q.Launch(l.k, engine.Range1D(tiles*l.block, l.block), y, x, l.state, int32(n), excl)
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
