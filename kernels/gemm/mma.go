package gemm

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed mma.cu
var mmaSource string

// mmaGeom is the block geometry of one build of mma.cu, as its macros derive it from the
// tunables.
type mmaGeom struct {
	MMATunables
	threads, in      int // threads per block, input bytes
	padK, padR       int // shared-memory row paddings in elements (PADK, PADR)
	mmaM, mmaN, mmaK int // the mma instruction's shape
}

// geomOf returns the geometry of precision prec with tunables t on a device of
// compute capability cc, or an error wrapping engine.ErrInvalidArg naming the constraint
// of mma.cu that t breaks.
func geomOf(prec Prec, cc int, t MMATunables) (mmaGeom, error) {
	g := mmaGeom{MMATunables: t, threads: t.WarpsM * t.WarpsN * 32, mmaM: 16, mmaN: 8}
	switch prec {
	case PrecTF32, PrecFloat32x3TF32:
		g.in, g.mmaK = 4, 8
	case PrecFloat16, PrecBFloat16:
		g.in, g.mmaK = 2, 16
	case PrecFloat64:
		g.in, g.mmaM, g.mmaK = 8, 8, 4
		if cc >= 90 {
			g.mmaM, g.mmaK = 16, 8
		}
		switch t.MMAK {
		case 0:
		case 4:
			g.mmaM, g.mmaK = 8, 4
		case 8, 16:
			if cc < 90 {
				return g, fmt.Errorf("kernels: gemm float64 tunables %v: MMA_K=%d needs sm_90 or newer, not sm_%d: %w", t, t.MMAK, cc, engine.ErrInvalidArg)
			}
			g.mmaM, g.mmaK = 16, t.MMAK
		default:
			return g, fmt.Errorf("kernels: gemm float64 tunables %v: MMA_K=%d is not 4, 8 or 16: %w", t, t.MMAK, engine.ErrInvalidArg)
		}
	case PrecFloat8E4M3, PrecFloat8E5M2:
		g.in, g.mmaK = 1, 32
	default:
		return g, fmt.Errorf("kernels: gemm: no tensor-core kernel for PREC %d: %w", prec, engine.ErrInvalidArg)
	}
	if prec != PrecFloat64 && t.MMAK != 0 && t.MMAK != g.mmaK {
		return g, fmt.Errorf("kernels: gemm tensor-core tunables %v: this precision's mma has k = %d, not MMA_K=%d: %w", t, g.mmaK, t.MMAK, engine.ErrInvalidArg)
	}
	epc := 16 / g.in
	g.padK, g.padR = epc, 2*epc
	if g.in == 8 {
		g.padK = 2 * epc
		if t.BK%16 == 0 {
			g.padK = 0 // mma.cu swizzles the rows' chunks (SWZ) instead of padding them
		}
	}
	if g.in == 2 {
		g.padR = epc
	}
	bad := func(format string, args ...any) (mmaGeom, error) {
		return g, fmt.Errorf("kernels: gemm tensor-core tunables %v: "+format+": %w", append([]any{t}, append(args, engine.ErrInvalidArg)...)...)
	}
	switch {
	case t.BM <= 0 || t.BN <= 0 || t.BK <= 0 || t.WarpsM <= 0 || t.WarpsN <= 0 || t.GroupM <= 0 || t.MinBlocks <= 0:
		return bad("every tunable must be positive")
	case t.MinBlocks*t.WarpsM*t.WarpsN*32 > 2048:
		return bad("%d blocks of %d threads exceed an SM's 2048 threads", t.MinBlocks, t.WarpsM*t.WarpsN*32)
	case t.Stages < 2:
		return bad("the pipeline needs at least 2 stages")
	case g.threads > 1024:
		return bad("%d threads per block, above 1024", g.threads)
	case t.BM%(t.WarpsM*g.mmaM) != 0 || t.BN%(t.WarpsN*g.mmaN) != 0:
		return bad("BM must be a multiple of WarpsM*%d and BN of WarpsN*%d", g.mmaM, g.mmaN)
	case t.BK%g.mmaK != 0:
		return bad("BK must be a multiple of the mma's k, %d", g.mmaK)
	case (t.BM*t.BK)%(epc*g.threads) != 0 || (t.BN*t.BK)%(epc*g.threads) != 0:
		return bad("a stage of A (BM*BK) and of B (BN*BK) must be whole 16-byte chunks per thread (%d elements)", epc*g.threads)
	case g.in == 2 && (t.BN/t.WarpsN/g.mmaN)%2 != 0:
		return bad("16-bit inputs load B for two n8 tiles at once: BN/WarpsN/8 must be even")
	}
	return g, nil
}

// defines returns the -D options of the build.
func (g mmaGeom) defines() []string {
	o := []string{fmt.Sprintf("-DBM=%d", g.BM), fmt.Sprintf("-DBN=%d", g.BN), fmt.Sprintf("-DBK=%d", g.BK),
		fmt.Sprintf("-DWARPS_M=%d", g.WarpsM), fmt.Sprintf("-DWARPS_N=%d", g.WarpsN),
		fmt.Sprintf("-DSTAGES=%d", g.Stages), fmt.Sprintf("-DGROUP_M=%d", g.GroupM), fmt.Sprintf("-DMIN_BLOCKS=%d", g.MinBlocks)}
	if g.in == 8 {
		o = append(o, fmt.Sprintf("-DDMMA_K=%d", g.mmaK))
	}
	return o
}

// shared returns the dynamic shared memory of a launch: stages of an A and a B tile, each
// in the layout its transpose gives (mma.cu's A_STAGE and B_STAGE).
func (g mmaGeom) shared(ta, tb bool) int {
	a, b := g.BM*(g.BK+g.padK), g.BK*(g.BN+g.padR)
	if ta {
		a = g.BK * (g.BM + g.padR)
	}
	if tb {
		b = g.BN * (g.BK + g.padK)
	}
	return g.Stages * (a + b) * g.in
}

// MMA runs GEMM on NVIDIA tensor cores through mma.sync (mma.cu, the cuda-mma variant):
// inputs of type In in a Precision, C, D and the accumulation in Out. It compiles one
// program per transpose combination on first use. It runs on CUDA devices of the
// precision's compute capability (sm_80; sm_89 for fp8) and is safe for concurrent use by
// goroutines that each use their own Queue.
type MMA[In InputType, Out kernels.Float] struct {
	dev   *engine.Device
	p     Precision
	geom  mmaGeom
	mu    sync.Mutex
	progs [2][2]*engine.Program
	kerns [2][2]*engine.Kernel
}

// NewMMA readies the tensor-core GEMM of precision p (a name of Precisions, or float64)
// on dev with the tunables of the table for its architecture (MMADefaults). It returns an
// error wrapping engine.ErrUnsupported on a device that is not a CUDA GPU of compute
// capability p.MMACompute or newer, or that lacks the shared memory.
func NewMMA[In InputType, Out kernels.Float](dev *engine.Device, p Precision) (*MMA[In, Out], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: gemm: nil device: %w", engine.ErrInvalidArg)
	}
	return NewMMAWith[In, Out](dev, p, MMADefaults(p.Name, dev.Info().ComputeCapability))
}

// NewMMAWith is NewMMA with tunables t (tuning, tests); invalid tunables are an error
// wrapping engine.ErrInvalidArg that names the constraint.
func NewMMAWith[In InputType, Out kernels.Float](dev *engine.Device, p Precision, t MMATunables) (*MMA[In, Out], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: gemm: nil device: %w", engine.ErrInvalidArg)
	}
	if err := p.check(typeNameOf[In](), kernels.TypeName[Out]()); err != nil {
		return nil, err
	}
	if !p.MMA.TensorCore() {
		return nil, fmt.Errorf("kernels: gemm %s has no tensor-core kernel: %w", p.Name, engine.ErrUnsupported)
	}
	info := dev.Info()
	if dev.Backend() != "cuda" || info.ComputeCapability < p.MMACompute {
		return nil, fmt.Errorf("kernels: gemm %s on tensor cores needs a CUDA device of sm_%d or newer; %s is %s sm_%d: %w",
			p.Name, p.MMACompute, dev.ID(), dev.Backend(), info.ComputeCapability, engine.ErrUnsupported)
	}
	g, err := geomOf(p.MMA, info.ComputeCapability, t)
	if err != nil {
		return nil, err
	}
	limit := int(info.MaxLocalBytes())
	for g.Stages > 2 && g.shared(true, true) > limit && g.shared(false, false) > limit {
		g.Stages--
	}
	if need := max(g.shared(true, true), g.shared(false, false), g.shared(true, false), g.shared(false, true)); need > limit {
		return nil, fmt.Errorf("kernels: gemm %s on tensor cores (%v) needs %d bytes of shared memory per block; %s allows %d: %w",
			p.Name, t, need, dev.ID(), limit, engine.ErrUnsupported)
	}
	return &MMA[In, Out]{dev: dev, p: p, geom: g}, nil
}

// Tunables returns the tunables it runs with (the stages lowered where the device's
// shared memory asked for it).
func (m *MMA[In, Out]) Tunables() MMATunables { return m.geom.MMATunables }

// kernel returns the kernel of one transpose combination, compiling it on first use.
func (m *MMA[In, Out]) kernel(ta, tb bool) (*engine.Kernel, error) {
	i, j := b2i(ta), b2i(tb)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kerns[i][j] != nil {
		return m.kerns[i][j], nil
	}
	opts := append([]string{fmt.Sprintf("-DPREC=%d", m.p.MMA), fmt.Sprintf("-DTRANS_A=%d", i), fmt.Sprintf("-DTRANS_B=%d", j)}, m.geom.defines()...)
	prog, k, err := kernels.BuildCUDA(m.dev, mmaSource, "mma.cu", "gemm_mma", m.geom.threads, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (%s, %v)", err, m.p.Name, m.geom.MMATunables)
	}
	m.progs[i][j], m.kerns[i][j] = prog, k
	return k, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RunInto computes D = alpha*op(A)*op(B) + beta*C for shape s, as GEMM.RunInto does, on
// the tensor cores in m's precision.
func (m *MMA[In, Out]) RunInto(q *engine.Queue, s GEMMShape, alpha Out, a, b *engine.Buffer[In], beta Out, c, d *engine.Buffer[Out]) error {
	s, err := checkCall(q, s, a, b, c, d)
	if err != nil {
		return err
	}
	g := m.geom
	tiles := func(n, t int) int { return (n + t - 1) / t }
	if blocks := float64(tiles(s.M, g.BM)) * float64(tiles(s.N, g.BN)); blocks*float64(g.threads) > math.MaxInt32 {
		return fmt.Errorf("kernels: gemm: %v needs %.0f blocks of %d threads, beyond one launch: %w", s, blocks, g.threads, engine.ErrInvalidArg)
	}
	k, err := m.kernel(s.TransA, s.TransB)
	if err != nil {
		return err
	}
	// 16-byte copies need every row and matrix of A and B to start on a 16-byte boundary
	// (device allocations do).
	vec := int32(1)
	for _, x := range []int{s.LDA, s.LDB, s.StrideA, s.StrideB} {
		if x*g.in%16 != 0 {
			vec = 0
		}
	}
	r := engine.Range3D(tiles(s.M, g.BM)*tiles(s.N, g.BN)*g.threads, 1, s.Batch, g.threads, 1, 1).
		WithSharedBytes(int64(g.shared(s.TransA, s.TransB)))
	return q.Launch(k, r, d, c, a, b, alpha, beta,
		int32(s.M), int32(s.N), int32(s.K), int32(s.LDA), int32(s.LDB), int32(s.LDC),
		int32(s.StrideA), int32(s.StrideB), int32(s.StrideC), vec)
}

// Close releases the compiled kernels. Idempotent.
func (m *MMA[In, Out]) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for i := range 2 {
		for j := range 2 {
			if m.kerns[i][j] != nil {
				errs = append(errs, m.kerns[i][j].Close(), m.progs[i][j].Close())
				m.kerns[i][j], m.progs[i][j] = nil, nil
			}
		}
	}
	return errors.Join(errs...)
}
