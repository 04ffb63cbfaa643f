package gemm

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// sgemm.cl is a further OpenCL C file of the family (as gemm_mma.cl): only CLSimt builds it.
//
//go:embed sgemm.cl
var clsimtSource string

// DefaultCLSimtTunables are the tunables NewCLSimt uses: sgemm.cu's defaults (64 x 128
// tiles of C, k steps of 8, warps of 32 x 64: 128 work-items, groups of 16 tile rows).
// MinBlocks has no OpenCL counterpart (no launch bounds in OpenCL C) and is ignored.
var DefaultCLSimtTunables = SimtTunables{BM: sgemmBM, BN: sgemmBN, BK: sgemmBK, WM: sgemmWM, WN: sgemmWN, GroupM: sgemmGroupM, MinBlocks: 1}

// clsimtCandidates are the tunables BenchmarkCLSimt (and prism tune) measure: the default
// first, then those of simtCandidates with distinct OpenCL builds (MinBlocks aside).
var clsimtCandidates = func() []SimtTunables {
	out := []SimtTunables{DefaultCLSimtTunables}
	for _, c := range simtCandidates {
		c.MinBlocks = 1
		dup := false
		for _, o := range out {
			dup = dup || o == c
		}
		if !dup {
			out = append(out, c)
		}
	}
	return out
}()

// clsimtString writes t as the opencl-simt variant reports it: SimtTunables.String
// without MIN_BLOCKS (ParseSimtTunables reads it back with MIN_BLOCKS=1 appended).
func clsimtString(t SimtTunables) string {
	return fmt.Sprintf("BM=%d BN=%d BK=%d WM=%d WN=%d GROUP_M=%d", t.BM, t.BN, t.BK, t.WM, t.WN, t.GroupM)
}

// clsimtNeeds says why a device is not a GPU, or returns nil (the opencl-simt variant's
// Needs; the variant also asks for the OpenCL backend). sgemm.cl's tiles are sized for
// GPUs (warps of 32 work-items, 16-byte local loads); CPUs run the portable kernel.
func clsimtNeeds(info engine.DeviceInfo) error {
	if info.Kind != engine.KindGPU {
		return fmt.Errorf("needs a GPU (warp-tiled SIMT kernel); the device is a %v", info.Kind)
	}
	if strings.Contains(info.Platform, "Oclgrind") {
		return errors.New("does not run on Oclgrind, whose checker cannot interpret the LLVM freeze instructions in sgemm.cl")
	}
	return nil
}

// CLSimt is the "opencl-simt" fp32 GEMM: sgemm.cl, sgemm.cu's SIMT algorithm (block
// tiles, warp tiles, 8 x 8 outputs per work-item, double-buffered local memory, 16-byte
// loads where the alignment holds) in plain OpenCL C 1.2, with the semantics of
// GEMM[float32] (gemm.cl). It runs on OpenCL GPUs, and is safe for concurrent use by
// goroutines that each use their own Queue. The transposes are compile-time, as in
// sgemm.cu: the constructor builds all four combinations.
type CLSimt struct {
	dev    *engine.Device
	t      SimtTunables
	progs  [4]*engine.Program
	kerns  [4]*engine.Kernel
	closed bool // Close ran: runs fail with ErrClosed
}

// NewCLSimt builds sgemm.cl for dev with DefaultCLSimtTunables (NewCLSimtWith).
func NewCLSimt(dev *engine.Device) (*CLSimt, error) {
	return NewCLSimtWith(dev, DefaultCLSimtTunables)
}

// NewCLSimtWith builds sgemm.cl for dev with tunables t (MinBlocks ignored) in its four
// transpose combinations. Tunables that break sgemm.cl's constraints give an error
// wrapping engine.ErrInvalidArg (SimtTunables.Validate). A device that is not an OpenCL
// GPU, or whose work-groups or local memory are too small for t, or a compiled kernel
// that takes fewer work-items per group than t needs, gives one wrapping
// engine.ErrUnsupported that says why.
func NewCLSimtWith(dev *engine.Device, t SimtTunables) (*CLSimt, error) {
	return newCLSimt(dev, t, false, [4]bool{true, true, true, true})
}

// newCLSimt is NewCLSimtWith; anyKind skips the GPU check (tests: PoCL and Rusticl run the
// kernel on the CPU), and only the transpose combinations that want marks (by
// sgemmIndex) are built; RunInto refuses the others with ErrUnsupported.
func newCLSimt(dev *engine.Device, t SimtTunables, anyKind bool, want [4]bool) (_ *CLSimt, err error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: gemm: nil device: %w", engine.ErrInvalidArg)
	}
	t.MinBlocks = max(t.MinBlocks, 1)
	if err := t.Validate(); err != nil {
		return nil, err
	}
	switch {
	case dev.Backend() != "opencl":
		return nil, fmt.Errorf("kernels: gemm opencl-simt runs on OpenCL; %s is %s: %w", dev.ID(), dev.Backend(), engine.ErrUnsupported)
	case !anyKind && clsimtNeeds(dev.Info()) != nil:
		return nil, fmt.Errorf("kernels: gemm opencl-simt on %s %v: %w", dev.ID(), clsimtNeeds(dev.Info()), engine.ErrUnsupported)
	case strings.Contains(dev.Info().Platform, "Oclgrind"):
		// Its uninitialized-read checker stops at the LLVM freeze instructions that loop
		// unswitching puts in sgemm.cl (Oclgrind 21.10), and the kernel unoptimized takes
		// minutes per case there; PoCL and Rusticl verify it.
		return nil, fmt.Errorf("kernels: gemm opencl-simt does not run on Oclgrind (%s): its checker cannot interpret LLVM's freeze instruction: %w",
			dev.ID(), engine.ErrUnsupported)
	}
	threads, local := t.Threads(), t.SharedBytes()
	lim := kernels.DeviceLimits(dev)
	if !lim.Fits(threads, 1) || (lim.LocalBytes > 0 && int64(local) > lim.LocalBytes) {
		return nil, kernels.TooSmall("gemm opencl-simt", lim, fmt.Sprintf("work-groups of %d items and %d bytes of local memory (%s)", threads, local, clsimtString(t)))
	}
	g := &CLSimt{dev: dev, t: t}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	for i := range g.progs {
		if !want[i] {
			continue
		}
		opts := []string{
			fmt.Sprintf("-DTRANS_A=%d", i/2), fmt.Sprintf("-DTRANS_B=%d", i%2),
			fmt.Sprintf("-DBM=%d", t.BM), fmt.Sprintf("-DBN=%d", t.BN), fmt.Sprintf("-DBK=%d", t.BK),
			fmt.Sprintf("-DWM=%d", t.WM), fmt.Sprintf("-DWN=%d", t.WN), fmt.Sprintf("-DGROUP_M=%d", t.GroupM),
		}
		if g.progs[i], err = dev.BuildSource(engine.Source{Dialect: engine.DialectOpenCL, Text: clsimtSource, Name: "sgemm.cl"}, opts...); err != nil {
			return nil, fmt.Errorf("kernels: gemm opencl-simt (%s, transA=%v, transB=%v): %w", clsimtString(t), i/2 == 1, i%2 == 1, err)
		}
		if g.kerns[i], err = g.progs[i].Kernel("sgemm_simt"); err != nil {
			return nil, err
		}
		if most := g.kerns[i].MaxWorkGroupSize(); most > 0 && most < threads {
			return nil, fmt.Errorf("kernels: gemm opencl-simt (%s): the compiled kernel takes %d work-items per group on %s, needs %d: %w",
				clsimtString(t), most, dev.ID(), threads, engine.ErrUnsupported)
		}
	}
	return g, nil
}

// Tunables returns the tunables g was built with.
func (g *CLSimt) Tunables() SimtTunables { return g.t }

// Run computes C = alpha*op(A)*op(B) + beta*C in place for shape s (one matrix or a strided
// batch). When beta is 0, C is not read.
func (g *CLSimt) Run(q *engine.Queue, s GEMMShape, alpha float32, a, b *engine.Buffer[float32], beta float32, c *engine.Buffer[float32]) error {
	return g.RunInto(q, s, alpha, a, b, beta, c, c)
}

// RunInto computes D = alpha*op(A)*op(B) + beta*C for shape s, with C and D laid out alike
// (ldc, strideC), as GEMM.RunInto. d may be c (Run); it may not overlap a or b.
func (g *CLSimt) RunInto(q *engine.Queue, s GEMMShape, alpha float32, a, b *engine.Buffer[float32], beta float32, c, d *engine.Buffer[float32]) error {
	if g == nil {
		return fmt.Errorf("kernels: gemm: nil CLSimt: %w", engine.ErrInvalidArg)
	}
	if g.closed {
		return fmt.Errorf("kernels: gemm: CLSimt used after Close: %w", engine.ErrClosed)
	}
	s, err := checkCall(q, s, a, b, c, d)
	if err != nil {
		return err
	}
	k := g.kerns[sgemmIndex(s.TransA, s.TransB)]
	if k == nil {
		return fmt.Errorf("kernels: gemm: this CLSimt was built without the transA=%v transB=%v kernel: %w", s.TransA, s.TransB, engine.ErrUnsupported)
	}
	t, threads := g.t, g.t.Threads()
	tiles := func(n, size int) int { return (n + size - 1) / size }
	if groups := float64(tiles(s.M, t.BM)) * float64(tiles(s.N, t.BN)); groups*float64(threads) > math.MaxInt32 {
		return fmt.Errorf("kernels: gemm: %v needs %.0f work-groups of %d items, beyond one launch: %w", s, groups, threads, engine.ErrInvalidArg)
	}
	r := engine.Range3D(tiles(s.M, t.BM)*tiles(s.N, t.BN)*threads, 1, s.Batch, threads, 1, 1)
	return q.Launch(k, r, d, c, a, b, alpha, beta, int32(s.M), int32(s.N), int32(s.K), int32(s.LDA), int32(s.LDB), int32(s.LDC),
		int32(s.StrideA), int32(s.StrideB), int32(s.StrideC))
}

// Close releases the compiled kernels and programs. Idempotent.
func (g *CLSimt) Close() error {
	if g == nil {
		return nil
	}
	g.closed = true
	return closeBuilds(g.kerns[:], g.progs[:])
}

// clsimtTunablesFor returns the tunables of the opencl-simt variant of op on dev and where
// they came from: forced (Params.Tunables), tuned (prism tune's file), or the default.
// Either form is read: with or without MIN_BLOCKS.
func clsimtTunablesFor(dev *engine.Device, op, forced string) (SimtTunables, string, error) {
	parse := func(s string) (SimtTunables, error) {
		t, err := ParseSimtTunables(s)
		if err != nil {
			if t2, err2 := ParseSimtTunables(s + " MIN_BLOCKS=1"); err2 == nil {
				return t2, nil
			}
		}
		return t, err
	}
	return kernels.TunablesFor(dev, op, "opencl-simt", forced, parse, DefaultCLSimtTunables, "default")
}
