package gemm

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed sgemm.cu
var sgemmSource string

// SimtTunables are the tunables of the cuda-simt SGEMM (sgemm.cu, whose header describes
// them): the BM x BN tile of C a block computes, its k step BK, the WM x WN tile of C a warp
// computes (32 lanes of 8 x 8 outputs: (WM/8)*(WN/8) = 32), the tile rows of C a group of
// consecutive blocks walks down before the next column (L2 reuse), and the blocks per SM
// that __launch_bounds__ asks for: the compiler keeps each thread within 65536 /
// (MinBlocks*threads) registers (255 at most), so 2 caps a block of 256 threads at 128
// registers and 1 lets it use up to 255. A block has (BM/WM)*(BN/WN)*32 threads.
type SimtTunables struct {
	BM, BN, BK int
	WM, WN     int
	GroupM     int
	MinBlocks  int
}

// The default tunables (DefaultSimtTunables), as constants: 64 x 128 tiles of C per
// block, k steps of 8, warps of 32 x 64 (4 warps as 2 x 2), hence 128 threads per block,
// groups of 16 tile rows, 3 blocks per SM (at most 168 registers per thread). The fastest
// of the candidates on an H100 at M = N = K = 8192 (2026-11-25, BenchmarkSGEMMSimtTunables:
// 22.8 ms against 24.9 for 128 x 128 tiles on 256 threads; cuBLAS 21.4 ms).
const (
	sgemmBM, sgemmBN, sgemmBK   = 64, 128, 8
	sgemmWM, sgemmWN            = 32, 64
	sgemmGroupM, sgemmMinBlocks = 16, 3
	sgemmThreads                = (sgemmBM / sgemmWM) * (sgemmBN / sgemmWN) * 32
)

// DefaultSimtTunables are the tunables NewSGEMMSimt uses.
var DefaultSimtTunables = SimtTunables{BM: sgemmBM, BN: sgemmBN, BK: sgemmBK, WM: sgemmWM, WN: sgemmWN, GroupM: sgemmGroupM, MinBlocks: sgemmMinBlocks}

// simtPad is sgemm.cu's PAD: floats of padding per row of a shared tile.
const simtPad = 4

// simtMaxStatic is the static shared memory a CUDA block gets without opting in; sgemm.cu's
// tiles are dynamic shared memory, so more is allowed where the device allows it.
const simtMaxStatic = 48 << 10

// Threads returns the threads per block: (BM/WM)*(BN/WN)*32. Meaningful for valid t.
func (t SimtTunables) Threads() int {
	if t.WM <= 0 || t.WN <= 0 {
		return 0
	}
	return (t.BM / t.WM) * (t.BN / t.WN) * 32
}

// SharedBytes returns the dynamic shared memory of a block: two buffers of the BK-deep
// tiles of A and B, each row padded by 4 floats.
func (t SimtTunables) SharedBytes() int { return 2 * t.BK * (t.BM + simtPad + t.BN + simtPad) * 4 }

// String writes t with sgemm.cu's -D names ("BM=128 BN=128 BK=8 WM=32 WN=64 GROUP_M=8
// MIN_BLOCKS=2"), as ParseSimtTunables reads it.
func (t SimtTunables) String() string {
	return fmt.Sprintf("BM=%d BN=%d BK=%d WM=%d WN=%d GROUP_M=%d MIN_BLOCKS=%d", t.BM, t.BN, t.BK, t.WM, t.WN, t.GroupM, t.MinBlocks)
}

// simtKeys are the names of SimtTunables' fields in String's order.
var simtKeys = []string{"BM", "BN", "BK", "WM", "WN", "GROUP_M", "MIN_BLOCKS"}

// ParseSimtTunables reads tunables as String writes them; every key must be given once.
// The result is not validated (NewSGEMMSimtWith does it). Errors wrap engine.ErrInvalidArg
// and name the field.
func ParseSimtTunables(s string) (SimtTunables, error) {
	var t SimtTunables
	dst := []*int{&t.BM, &t.BN, &t.BK, &t.WM, &t.WN, &t.GroupM, &t.MinBlocks}
	fields := make([]kernels.TunableInt, len(simtKeys))
	for i, k := range simtKeys {
		fields[i] = kernels.TunableInt{Key: k, Dst: dst[i], Min: 1, Max: 4096}
	}
	if err := kernels.ParseTunableInts("gemm simt tunables", s, true, fields...); err != nil {
		return SimtTunables{}, err
	}
	return t, nil
}

// Validate checks t against sgemm.cu's constraints (its #error checks), and that a block
// needs no more than 1024 threads. The error wraps engine.ErrInvalidArg and names the
// constraint t breaks. Whether a device can hold the block's shared memory is
// NewSGEMMSimtWith's check.
func (t SimtTunables) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("kernels: gemm simt tunables %v: "+format+": %w", append([]any{t}, append(args, engine.ErrInvalidArg)...)...)
	}
	if t.BM < 1 || t.BN < 1 || t.BK < 1 || t.WM < 1 || t.WN < 1 || t.GroupM < 1 || t.MinBlocks < 1 {
		return bad("BM, BN, BK, WM, WN, GROUP_M and MIN_BLOCKS must be positive")
	}
	if t.BM > 4096 || t.BN > 4096 || t.BK > 4096 || t.GroupM > 65535 || t.MinBlocks > 32 {
		return bad("BM, BN, BK up to 4096, GROUP_M up to 65535 and MIN_BLOCKS up to 32")
	}
	if t.WM%8 != 0 || t.WN%8 != 0 || (t.WM/8)*(t.WN/8) != 32 {
		return bad("a warp tile WM x WN must hold 32 lanes of 2 x 2 fragments of 4 x 4: (WM/8)*(WN/8) == 32")
	}
	if t.BM%t.WM != 0 || t.BN%t.WN != 0 {
		return bad("BM and BN must be multiples of WM and WN")
	}
	if t.BK != 4 && t.BK%8 != 0 {
		return bad("BK must be 4 or a multiple of 8")
	}
	threads := t.Threads()
	if threads > 1024 {
		return bad("%d threads per block, above 1024", threads)
	}
	if (t.BM*t.BK/4)%threads != 0 || (t.BN*t.BK/4)%threads != 0 {
		return bad("BM*BK/4 and BN*BK/4 must be multiples of the thread count %d", threads)
	}
	warps := threads / 32
	if t.BK != 4 {
		for _, ext := range []int{t.BM, t.BN} {
			if ext%16 != 0 || (warps%(ext/16) != 0 && warps%(t.BK/8) != 0) {
				return bad("for BK >= 8, BM and BN must be multiples of 16 and the warps (%d) a multiple of BM/16 (BN/16) or of BK/8", warps)
			}
		}
	}
	for _, ext := range []int{t.BM, t.BN} { // (implied by the checks above for every set up to 1024 x 1024)
		if threads%(ext/4) != 0 && (ext/4)%threads != 0 {
			return bad("BM/4 and BN/4 must divide the thread count %d or be multiples of it", threads)
		}
	}
	return nil
}

// SGEMMSimt is the "cuda-simt" fp32 GEMM: sgemm.cu, the CUTLASS-style SIMT kernel (block
// tiles, warp tiling, 8 x 8 outputs per thread, double-buffered shared memory, 16-byte
// loads), with the semantics of GEMM[float32] (gemm.cl), built with one set of
// SimtTunables. It runs on CUDA devices only. It is safe for concurrent use by goroutines
// that each use their own Queue.
//
// The transposes are compile-time in sgemm.cu, so there are four programs, one per
// (TransA, TransB); NewSGEMMSimt compiles all four up front rather than each on first use:
// a device without CUDA C++, a compile error or a kernel that cannot take its block of
// threads is then reported by the constructor, not by the first RunInto of one
// combination; RunInto needs no lock; and the cost is paid once per machine, since the CUDA
// backend caches compiled modules on disk (the suite's four float32 GEMM ops would compile
// all four combinations between them anyway).
type SGEMMSimt struct {
	dev    *engine.Device
	t      SimtTunables
	progs  [4]*engine.Program
	kerns  [4]*engine.Kernel
	closed bool // Close ran: runs fail with ErrClosed
}

// sgemmIndex returns the index of the (transA, transB) program: 2*transA + transB.
func sgemmIndex(transA, transB bool) int {
	i := 0
	if transA {
		i += 2
	}
	if transB {
		i++
	}
	return i
}

// NewSGEMMSimt compiles sgemm.cu for dev with DefaultSimtTunables in its four transpose
// combinations (NewSGEMMSimtWith).
func NewSGEMMSimt(dev *engine.Device) (*SGEMMSimt, error) {
	return NewSGEMMSimtWith(dev, DefaultSimtTunables)
}

// NewSGEMMSimtWith compiles sgemm.cu for dev with tunables t in its four transpose
// combinations. Tunables that break sgemm.cu's constraints give an error wrapping
// engine.ErrInvalidArg that names the constraint (SimtTunables.Validate). On a device that
// builds no CUDA C++ it returns an error wrapping engine.ErrUnsupported (from
// BuildSource); so it does when the device cannot give a block the tiles' shared memory or
// a compiled kernel allows fewer threads per block than t needs.
func NewSGEMMSimtWith(dev *engine.Device, t SimtTunables) (*SGEMMSimt, error) {
	return newSGEMMSimt(dev, t, [4]bool{true, true, true, true})
}

// newSGEMMSimt is NewSGEMMSimtWith compiling only the transpose combinations that want
// marks (by sgemmIndex); RunInto refuses the others with ErrUnsupported. Benchmarks that
// measure one layout use it to spare the other compilations.
func newSGEMMSimt(dev *engine.Device, t SimtTunables, want [4]bool) (_ *SGEMMSimt, err error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: gemm: nil device: %w", engine.ErrInvalidArg)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	g := &SGEMMSimt{dev: dev, t: t}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	if need, limit := int64(t.SharedBytes()), dev.Info().MaxLocalBytes(); need > simtMaxStatic && need > limit {
		return nil, fmt.Errorf("kernels: gemm: sgemm_simt %v needs %d bytes of shared memory per block; %s allows %d: %w",
			t, need, dev.ID(), limit, engine.ErrUnsupported)
	}
	threads := t.Threads()
	for i := range g.progs {
		if !want[i] {
			continue
		}
		ta, tb := i/2 == 1, i%2 == 1
		opts := []string{
			fmt.Sprintf("-DTRANS_A=%d", i/2), fmt.Sprintf("-DTRANS_B=%d", i%2),
			fmt.Sprintf("-DBM=%d", t.BM), fmt.Sprintf("-DBN=%d", t.BN), fmt.Sprintf("-DBK=%d", t.BK),
			fmt.Sprintf("-DWM=%d", t.WM), fmt.Sprintf("-DWN=%d", t.WN),
			fmt.Sprintf("-DGROUP_M=%d", t.GroupM), fmt.Sprintf("-DMIN_BLOCKS=%d", t.MinBlocks),
		}
		if g.progs[i], g.kerns[i], err = kernels.BuildCUDA(dev, sgemmSource, "sgemm.cu", "sgemm_simt", threads, opts); err != nil {
			return nil, fmt.Errorf("%w (%v, transA=%v, transB=%v)", err, t, ta, tb)
		}
	}
	return g, nil
}

// Tunables returns the tunables g was built with.
func (g *SGEMMSimt) Tunables() SimtTunables { return g.t }

// Tiles returns the tile of C one block computes (bm x bn), the k step bk and the threads
// per block.
func (g *SGEMMSimt) Tiles() (bm, bn, bk, threads int) {
	return g.t.BM, g.t.BN, g.t.BK, g.t.Threads()
}

// kernel returns the compiled kernel of a transpose combination (nil if not compiled).
func (g *SGEMMSimt) kernel(transA, transB bool) *engine.Kernel {
	return g.kerns[sgemmIndex(transA, transB)]
}

// Run computes C = alpha*op(A)*op(B) + beta*C in place for shape s (one matrix or a strided
// batch). When beta is 0, C is not read. The buffers must hold at least s.Lens() elements.
func (g *SGEMMSimt) Run(q *engine.Queue, s GEMMShape, alpha float32, a, b *engine.Buffer[float32], beta float32, c *engine.Buffer[float32]) error {
	return g.RunInto(q, s, alpha, a, b, beta, c, c)
}

// RunInto computes D = alpha*op(A)*op(B) + beta*C for shape s, with C and D laid out alike
// (ldc, strideC), as GEMM.RunInto. d may be c (Run); it may not overlap a or b.
func (g *SGEMMSimt) RunInto(q *engine.Queue, s GEMMShape, alpha float32, a, b *engine.Buffer[float32], beta float32, c, d *engine.Buffer[float32]) error {
	if g == nil {
		return fmt.Errorf("kernels: gemm: nil SGEMMSimt: %w", engine.ErrInvalidArg)
	}
	if g.closed {
		return fmt.Errorf("kernels: gemm: SGEMMSimt used after Close: %w", engine.ErrClosed)
	}
	s, err := checkCall(q, s, a, b, c, d)
	if err != nil {
		return err
	}
	t, threads := g.t, g.t.Threads()
	tilesM, tilesN := (s.M+t.BM-1)/t.BM, (s.N+t.BN-1)/t.BN
	if tilesM > 65535 {
		return fmt.Errorf("kernels: gemm: M=%d needs more than 65535 tiles of %d rows (CUDA's grid limit): %w", s.M, t.BM, engine.ErrInvalidArg)
	}
	k := g.kernel(s.TransA, s.TransB)
	if k == nil {
		return fmt.Errorf("kernels: gemm: this SGEMMSimt was built without the transA=%v transB=%v kernel: %w", s.TransA, s.TransB, engine.ErrUnsupported)
	}
	r := engine.Range3D(tilesN*threads, tilesM, s.Batch, threads, 1, 1).WithSharedBytes(int64(t.SharedBytes()))
	return q.Launch(k, r, d, c, a, b, alpha, beta, int32(s.M), int32(s.N), int32(s.K), int32(s.LDA), int32(s.LDB), int32(s.LDC),
		int32(s.StrideA), int32(s.StrideB), int32(s.StrideC))
}

// Close releases the compiled kernels and programs. Idempotent.
func (g *SGEMMSimt) Close() error {
	if g == nil {
		return nil
	}
	g.closed = true
	return closeBuilds(g.kerns[:], g.progs[:])
}

// simtCandidates are the tunables prism tune and BenchmarkSGEMMSimtTunables measure, the
// default first: 128 x 128 tiles with k steps of 8 or 16, warps of 32 x 64 or 64 x 32, 2
// blocks per SM (at most 128 registers) or 1 (up to 255), groups of 8 or 16 tile rows; 128
// x 256 and 256 x 128 tiles on 512 threads (at most 128 registers by the register file, 49
// KiB of shared memory); 64 x 128 and 128 x 64 tiles on 128 threads, 3 or 4 blocks per SM.
var simtCandidates = []SimtTunables{
	DefaultSimtTunables,
	{BM: 128, BN: 128, BK: 8, WM: 32, WN: 64, GroupM: 8, MinBlocks: 2},
	{BM: 128, BN: 128, BK: 16, WM: 32, WN: 64, GroupM: 8, MinBlocks: 2},
	{BM: 128, BN: 128, BK: 16, WM: 32, WN: 64, GroupM: 8, MinBlocks: 1},
	{BM: 128, BN: 256, BK: 16, WM: 32, WN: 64, GroupM: 8, MinBlocks: 1},
	{BM: 64, BN: 128, BK: 16, WM: 32, WN: 64, GroupM: 8, MinBlocks: 3},
	{BM: 64, BN: 128, BK: 8, WM: 32, WN: 64, GroupM: 8, MinBlocks: 3},
	{BM: 64, BN: 128, BK: 8, WM: 32, WN: 64, GroupM: 16, MinBlocks: 4},
	{BM: 128, BN: 64, BK: 16, WM: 64, WN: 32, GroupM: 8, MinBlocks: 3},
}

// simtTunablesFor returns the tunables of the cuda-simt variant of op on dev and where
// they came from: forced (Params.Tunables), tuned (prism tune's file), or the default.
func simtTunablesFor(dev *engine.Device, op, forced string) (SimtTunables, string, error) {
	return kernels.TunablesFor(dev, op, "cuda-simt", forced, ParseSimtTunables, DefaultSimtTunables, "default")
}

// closeBuilds closes the kernels and programs of a GEMM's builds (one per transpose
// combination, nil where not built) and clears them.
func closeBuilds(kerns []*engine.Kernel, progs []*engine.Program) error {
	var errs []error
	for i := range kerns {
		if kerns[i] != nil {
			errs = append(errs, kerns[i].Close())
		}
		if progs[i] != nil {
			errs = append(errs, progs[i].Close())
		}
		kerns[i], progs[i] = nil, nil
	}
	return errors.Join(errs...)
}
