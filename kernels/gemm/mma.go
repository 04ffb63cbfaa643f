package gemm

import (
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed mma.cu
var mmaSource string

// mmaGeom is the block geometry of one precision of mma.cu, as its macros define it.
type mmaGeom struct {
	bm, bn, bk, threads, in int // tile of D, k step, threads per block, input bytes
	padK, padR              int // shared-memory row paddings in elements (PADK, PADR)
}

// geomOf returns the geometry of mma.cu's defaults for PREC prec.
func geomOf(prec int) mmaGeom {
	if prec == 5 { // double: 64 x 64 tiles, 2 x 2 warps, k step 16, paddings of 32 bytes
		return mmaGeom{bm: 64, bn: 64, bk: 16, threads: 128, in: 8, padK: 4, padR: 4}
	}
	in := map[int]int{1: 4, 2: 4, 3: 2, 4: 2, 6: 1, 7: 1}[prec]
	epc := 16 / in
	g := mmaGeom{bm: 128, bn: 128, bk: 128 / in, threads: 256, in: in, padK: epc, padR: 2 * epc}
	if in == 2 {
		g.padR = epc
	}
	return g
}

// shared returns the dynamic shared memory of a launch: stages of an A and a B tile, each
// in the layout its transpose gives (mma.cu's A_STAGE and B_STAGE).
func (g mmaGeom) shared(ta, tb bool, stages int) int {
	a, b := g.bm*(g.bk+g.padK), g.bk*(g.bn+g.padR)
	if ta {
		a = g.bk * (g.bm + g.padR)
	}
	if tb {
		b = g.bn * (g.bk + g.padK)
	}
	return stages * (a + b) * g.in
}

// mmaStages is the depth of the cp.async pipeline: 3 stages of 128 x 128 tiles take 105
// KiB of shared memory in tf32 and 108 KiB in float16, two blocks per SM on sm_90.
const mmaStages = 3

// MMA runs GEMM on NVIDIA tensor cores through mma.sync (mma.cu, the cuda-mma variant):
// inputs of type In in a Precision, C, D and the accumulation in Out. It compiles one
// program per transpose combination on first use. It runs on CUDA devices of the
// precision's compute capability (sm_80; sm_89 for fp8) and is safe for concurrent use by
// goroutines that each use their own Queue.
type MMA[In InputType, Out kernels.Float] struct {
	dev    *engine.Device
	p      Precision
	geom   mmaGeom
	stages int
	mu     sync.Mutex
	progs  [2][2]*engine.Program
	kerns  [2][2]*engine.Kernel
}

// NewMMA readies the tensor-core GEMM of precision p (a name of Precisions, or float64)
// on dev. It returns an error wrapping engine.ErrUnsupported on a device that is not a
// CUDA GPU of compute capability p.MMACompute or newer, or that lacks the shared memory.
func NewMMA[In InputType, Out kernels.Float](dev *engine.Device, p Precision) (*MMA[In, Out], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: gemm: nil device: %w", engine.ErrInvalidArg)
	}
	if err := p.check(typeNameOf[In](), kernels.TypeName[Out]()); err != nil {
		return nil, err
	}
	if p.MMA == 0 {
		return nil, fmt.Errorf("kernels: gemm %s has no tensor-core kernel: %w", p.Name, engine.ErrUnsupported)
	}
	info := dev.Info()
	if dev.Backend() != "cuda" || info.ComputeCapability < p.MMACompute {
		return nil, fmt.Errorf("kernels: gemm %s on tensor cores needs a CUDA device of sm_%d or newer; %s is %s sm_%d: %w",
			p.Name, p.MMACompute, dev.ID(), dev.Backend(), info.ComputeCapability, engine.ErrUnsupported)
	}
	m := &MMA[In, Out]{dev: dev, p: p, geom: geomOf(p.MMA), stages: mmaStages}
	limit := int(info.MaxLocalBytes())
	for m.stages > 2 && m.geom.shared(false, false, m.stages) > limit {
		m.stages--
	}
	if need := m.geom.shared(true, true, m.stages); need > limit {
		return nil, fmt.Errorf("kernels: gemm %s on tensor cores needs %d bytes of shared memory per block; %s allows %d: %w",
			p.Name, need, dev.ID(), limit, engine.ErrUnsupported)
	}
	return m, nil
}

// Tunables describes the compiled geometry, for listings and reports.
func (m *MMA[In, Out]) Tunables() string {
	g := m.geom
	return fmt.Sprintf("BM=%d BN=%d BK=%d threads=%d STAGES=%d", g.bm, g.bn, g.bk, g.threads, m.stages)
}

// kernel returns the kernel of one transpose combination, compiling it on first use.
func (m *MMA[In, Out]) kernel(ta, tb bool) (*engine.Kernel, error) {
	i, j := b2i(ta), b2i(tb)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kerns[i][j] != nil {
		return m.kerns[i][j], nil
	}
	opts := []string{fmt.Sprintf("-DPREC=%d", m.p.MMA), fmt.Sprintf("-DTRANS_A=%d", i), fmt.Sprintf("-DTRANS_B=%d", j),
		fmt.Sprintf("-DSTAGES=%d", m.stages)}
	prog, err := m.dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: mmaSource, Name: "mma.cu"}, opts...)
	if err != nil {
		return nil, err
	}
	k, err := prog.Kernel("gemm_mma")
	if err != nil {
		prog.Close()
		return nil, err
	}
	if k.MaxWorkGroupSize() < m.geom.threads {
		k.Close()
		prog.Close()
		return nil, fmt.Errorf("kernels: gemm_mma (%s) takes %d threads per block on %s, needs %d: %w",
			m.p.Name, k.MaxWorkGroupSize(), m.dev.ID(), m.geom.threads, engine.ErrUnsupported)
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
	if (s.M+g.bm-1)/g.bm > 65535 {
		return fmt.Errorf("kernels: gemm: M=%d needs more than 65535 tiles of %d rows (CUDA's grid limit): %w", s.M, g.bm, engine.ErrInvalidArg)
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
	tiles := func(n, t int) int { return (n + t - 1) / t }
	r := engine.Range3D(tiles(s.N, g.bn)*g.threads, tiles(s.M, g.bm), s.Batch, g.threads, 1, 1).
		WithSharedBytes(int64(g.shared(s.TransA, s.TransB, m.stages)))
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
