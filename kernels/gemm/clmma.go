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

// gemm_mma.cl is a second OpenCL C file of the family: the family's Source (what
// kernels.Header and `prism kernels` read) stays gemm.cl, and only CLMMA builds this one.
//
//go:embed gemm_mma.cl
var clmmaSource string

// clmmaTiles is the geometry of one build of gemm_mma.cl: a BM x BN tile of D per
// work-group of WarpsM x WarpsN warps, tile rows grouped by GroupM. The k step is 64 bytes
// of each row (32 16-bit elements, 16 tf32), so that two buffers of the A and B tiles fit
// NVIDIA's 48 KiB of local memory.
type clmmaTiles struct {
	BM, BN, WarpsM, WarpsN, GroupM int
}

// clmmaDefault is the header's default geometry: 128 x 128 tiles, 8 warps of 64 x 32.
var clmmaDefault = clmmaTiles{BM: 128, BN: 128, WarpsM: 2, WarpsN: 4, GroupM: 8}

// clmmaRowWords is the 32-bit words of k in a local tile row (64 bytes) and
// clmmaRowStride the words between rows (padded by 16 bytes against bank conflicts), as
// gemm_mma.cl's KW and SROW.
const clmmaRowWords, clmmaRowStride = 16, 20

func (t clmmaTiles) String() string {
	return fmt.Sprintf("BM=%d BN=%d warps=%dx%d GROUP_M=%d", t.BM, t.BN, t.WarpsM, t.WarpsN, t.GroupM)
}

// threads is the work-group size.
func (t clmmaTiles) threads() int { return t.WarpsM * t.WarpsN * 32 }

// localBytes is the kernel's local memory: two buffers of the A and B tiles.
func (t clmmaTiles) localBytes() int { return 2 * (t.BM + t.BN) * clmmaRowStride * 4 }

// check returns an error wrapping engine.ErrInvalidArg naming the constraint of
// gemm_mma.cl that t breaks.
func (t clmmaTiles) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("kernels: gemm opencl-mma tiles %v: "+format+": %w", append([]any{t}, append(args, engine.ErrInvalidArg)...)...)
	}
	switch {
	case t.BM <= 0 || t.BN <= 0 || t.WarpsM <= 0 || t.WarpsN <= 0 || t.GroupM <= 0:
		return bad("every tunable must be positive")
	case t.threads() > 1024:
		return bad("%d work-items per group, above 1024", t.threads())
	case t.BM%(16*t.WarpsM) != 0 || t.BN%(8*t.WarpsN) != 0:
		return bad("BM must be a multiple of 16*WarpsM and BN of 8*WarpsN")
	case (t.BM*clmmaRowWords)%(8*t.threads()) != 0 || (t.BN*clmmaRowWords)%(8*t.threads()) != 0:
		return bad("a tile of A and of B must be whole pairs of 16-byte chunks per work-item (%d)", 2*t.threads())
	}
	return nil
}

// defines returns the -D options of the build.
func (t clmmaTiles) defines() []string {
	return []string{fmt.Sprintf("-DBM=%d", t.BM), fmt.Sprintf("-DBN=%d", t.BN), fmt.Sprintf("-DWARPS_M=%d", t.WarpsM),
		fmt.Sprintf("-DWARPS_N=%d", t.WarpsN), fmt.Sprintf("-DGROUP_M=%d", t.GroupM)}
}

// clmmaNeeds says why a device is not NVIDIA's OpenCL platform, whose compiler takes the
// inline PTX of gemm_mma.cl, or returns nil (the opencl-mma variant's Needs; the variant
// also asks for the OpenCL backend and sm_80). PoCL's CUDA device reports NVIDIA as its
// vendor, so the platform's name decides.
func clmmaNeeds(info engine.DeviceInfo) error {
	if !strings.Contains(info.Platform, "NVIDIA") {
		return fmt.Errorf("needs NVIDIA's OpenCL platform (inline PTX mma.sync); the device is on %q (vendor %q)", info.Platform, info.Vendor)
	}
	return nil
}

// CLMMA runs GEMM on NVIDIA tensor cores from OpenCL C (gemm_mma.cl, the opencl-mma
// variant): mma.sync through inline PTX, which NVIDIA's OpenCL compiler passes to ptxas.
// Inputs of type In in the Precision tf32 (float32), float16 (engine.Half) or bfloat16
// (engine.BFloat16); C, D and the accumulation in float32. One build serves every layout
// and batch. It runs on NVIDIA's OpenCL platform on GPUs of compute capability 8.0 and
// newer, and is safe for concurrent use by goroutines that each use their own Queue.
type CLMMA[In InputType] struct {
	dev   *engine.Device
	p     Precision
	tiles clmmaTiles
	prog  *engine.Program
	kern  *engine.Kernel
}

// NewCLMMA builds the OpenCL tensor-core GEMM of precision p (tf32, float16 or bfloat16)
// for dev. It returns an error wrapping engine.ErrUnsupported, saying why, for any other
// precision and on any device but a GPU of NVIDIA's OpenCL platform of compute capability
// 8.0 or newer (where the driver does not report the capability, a build that fails is
// that error too, with the compiler's log); engine.ErrInvalidArg when In is not p's
// input type.
func NewCLMMA[In InputType](dev *engine.Device, p Precision) (*CLMMA[In], error) {
	return newCLMMA[In](dev, p, clmmaDefault, false)
}

// newCLMMA is NewCLMMA with tiles t. emulate builds the kernel with PRISM_MMA_EMULATE
// (tests): mma.sync computed in OpenCL C, on any OpenCL device.
func newCLMMA[In InputType](dev *engine.Device, p Precision, t clmmaTiles, emulate bool) (*CLMMA[In], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: gemm: nil device: %w", engine.ErrInvalidArg)
	}
	if err := p.check(typeNameOf[In](), "float32"); err != nil {
		return nil, err
	}
	if !p.MMA.OpenCLTensorCore() {
		return nil, fmt.Errorf("kernels: gemm %s has no OpenCL tensor-core kernel (tf32, float16 and bfloat16 do): %w", p.Name, engine.ErrUnsupported)
	}
	if err := t.check(); err != nil {
		return nil, err
	}
	info := dev.Info()
	if !emulate {
		why := ""
		switch {
		case dev.Backend() != "opencl":
			why = fmt.Sprintf("runs on NVIDIA's OpenCL; %s is %s", dev.ID(), dev.Backend())
		case clmmaNeeds(info) != nil:
			why = clmmaNeeds(info).Error()
		case info.ComputeCapability > 0 && info.ComputeCapability < 80:
			why = fmt.Sprintf("needs sm_80 or newer (mma.sync for %s); %s is sm_%d", p.Name, dev.ID(), info.ComputeCapability)
		}
		if why != "" {
			return nil, fmt.Errorf("kernels: gemm %s on OpenCL tensor cores %s: %w", p.Name, why, engine.ErrUnsupported)
		}
	}
	lim := kernels.DeviceLimits(dev)
	if !lim.Fits(t.threads(), 1) || (lim.LocalBytes > 0 && int64(t.localBytes()) > lim.LocalBytes) {
		return nil, kernels.TooSmall("gemm opencl-mma", lim, fmt.Sprintf("work-groups of %d items and %d bytes of local memory (%v)", t.threads(), t.localBytes(), t))
	}
	opts := append([]string{fmt.Sprintf("-DPREC=%d", p.MMA)}, t.defines()...)
	src := clmmaSource
	if emulate {
		// The emulation converts the 16-bit fragments with kernels/convert.cl.
		src = kernels.ConvertSource + clmmaSource
		opts = append(opts, "-DPRISM_MMA_EMULATE")
	} else {
		opts = append(opts, "-DPRISM_PTX")
	}
	prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectOpenCL, Text: src, Name: "gemm_mma.cl"}, opts...)
	if err != nil {
		if !emulate && info.ComputeCapability == 0 && errors.Is(err, engine.ErrBuild) {
			// NVIDIA, but of an unknown architecture: one that its compiler refuses lacks
			// the instructions.
			return nil, fmt.Errorf("kernels: gemm %s on OpenCL tensor cores: %s reports no compute capability and does not build the inline PTX: %w: %w",
				p.Name, dev.ID(), engine.ErrUnsupported, err)
		}
		return nil, fmt.Errorf("kernels: gemm %s on OpenCL tensor cores (%v): %w", p.Name, t, err)
	}
	g := &CLMMA[In]{dev: dev, p: p, tiles: t, prog: prog}
	if g.kern, err = prog.Kernel("gemm_mma"); err != nil {
		g.Close()
		return nil, err
	}
	if most := g.kern.MaxWorkGroupSize(); most > 0 && most < t.threads() {
		g.Close()
		return nil, fmt.Errorf("kernels: gemm %s on OpenCL tensor cores (%v): the compiled kernel takes %d work-items per group on %s, needs %d: %w",
			p.Name, t, most, dev.ID(), t.threads(), engine.ErrUnsupported)
	}
	return g, nil
}

// Tunables returns the tile geometry it was built with, as listings show it.
func (g *CLMMA[In]) Tunables() string { return g.tiles.String() }

// RunInto computes D = alpha*op(A)*op(B) + beta*C for shape s, as GEMM.RunInto does, on
// the tensor cores in g's precision. d may be c.
func (g *CLMMA[In]) RunInto(q *engine.Queue, s GEMMShape, alpha float32, a, b *engine.Buffer[In], beta float32, c, d *engine.Buffer[float32]) error {
	s, err := checkCall(q, s, a, b, c, d)
	if err != nil {
		return err
	}
	t := g.tiles
	tiles := func(n, size int) int { return (n + size - 1) / size }
	if groups := float64(tiles(s.M, t.BM)) * float64(tiles(s.N, t.BN)); groups*float64(t.threads()) > math.MaxInt32 {
		return fmt.Errorf("kernels: gemm: %v needs %.0f work-groups of %d items, beyond one launch: %w", s, groups, t.threads(), engine.ErrInvalidArg)
	}
	flag := func(b bool) int32 {
		if b {
			return 1
		}
		return 0
	}
	r := engine.Range3D(tiles(s.M, t.BM)*tiles(s.N, t.BN)*t.threads(), 1, s.Batch, t.threads(), 1, 1)
	return q.Launch(g.kern, r, d, c, a, b, alpha, beta,
		int32(s.M), int32(s.N), int32(s.K), int32(s.LDA), int32(s.LDB), int32(s.LDC),
		int32(s.StrideA), int32(s.StrideB), int32(s.StrideC), flag(s.TransA), flag(s.TransB))
}

// Close releases the compiled kernel. Idempotent.
func (g *CLMMA[In]) Close() error {
	if g == nil {
		return nil
	}
	err := errors.Join(g.kern.Close(), g.prog.Close())
	g.kern, g.prog = nil, nil
	return err
}
