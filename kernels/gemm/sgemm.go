package gemm

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
)

//go:embed sgemm.cu
var sgemmSource string

// The tunables sgemm.cu is built with (its header describes them): 128 x 128 tiles of C
// per block, k steps of 8, warps of 32 x 64 (8 warps as 4 x 2, each lane 8 x 8 outputs),
// hence 256 threads per block. PAD, GROUP_M and MIN_BLOCKS keep the source's defaults.
const (
	sgemmBM, sgemmBN, sgemmBK = 128, 128, 8
	sgemmWM, sgemmWN          = 32, 64
	sgemmThreads              = (sgemmBM / sgemmWM) * (sgemmBN / sgemmWN) * 32
)

// SGEMMSimt is the "cuda-simt" fp32 GEMM: sgemm.cu, the CUTLASS-style SIMT kernel (128 x
// 128 block tiles, warp tiling, 8 x 8 outputs per thread, double-buffered shared memory,
// 16-byte loads), with the semantics of GEMM[float32] (gemm.cl). It runs on CUDA devices
// only. It is safe for concurrent use by goroutines that each use their own Queue.
//
// The transposes are compile-time in sgemm.cu, so there are four programs, one per
// (TransA, TransB); NewSGEMMSimt compiles all four up front rather than each on first use:
// a device without CUDA C++, a compile error or a kernel that cannot take a block of 256
// threads is then reported by the constructor, not by the first RunInto of one
// combination; RunInto needs no lock; and the cost is paid once per machine, since the CUDA
// backend caches compiled modules on disk (the suite's four float32 GEMM ops would compile
// all four combinations between them anyway).
type SGEMMSimt struct {
	dev   *engine.Device
	progs [4]*engine.Program
	kerns [4]*engine.Kernel
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

// NewSGEMMSimt compiles sgemm.cu for dev in its four transpose combinations. On a device
// that builds no CUDA C++ it returns an error wrapping engine.ErrUnsupported (from
// BuildSource); so it does when a compiled kernel allows fewer than 256 threads per block.
func NewSGEMMSimt(dev *engine.Device) (_ *SGEMMSimt, err error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: gemm: nil device: %w", engine.ErrInvalidArg)
	}
	g := &SGEMMSimt{dev: dev}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			i := sgemmIndex(ta, tb)
			opts := []string{
				fmt.Sprintf("-DTRANS_A=%d", i/2), fmt.Sprintf("-DTRANS_B=%d", i%2),
				fmt.Sprintf("-DBM=%d", sgemmBM), fmt.Sprintf("-DBN=%d", sgemmBN), fmt.Sprintf("-DBK=%d", sgemmBK),
				fmt.Sprintf("-DWM=%d", sgemmWM), fmt.Sprintf("-DWN=%d", sgemmWN),
			}
			if g.progs[i], err = dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: sgemmSource, Name: "sgemm.cu"}, opts...); err != nil {
				return nil, err
			}
			if g.kerns[i], err = g.progs[i].Kernel("sgemm_simt"); err != nil {
				return nil, err
			}
			if n := g.kerns[i].MaxWorkGroupSize(); n < sgemmThreads {
				return nil, fmt.Errorf("kernels: gemm: sgemm_simt (transA=%v, transB=%v) takes %d threads per block on %s, needs %d: %w",
					ta, tb, n, dev.ID(), sgemmThreads, engine.ErrUnsupported)
			}
		}
	}
	return g, nil
}

// Tiles returns the tile of C one block computes (bm x bn), the k step bk and the threads
// per block.
func (g *SGEMMSimt) Tiles() (bm, bn, bk, threads int) {
	return sgemmBM, sgemmBN, sgemmBK, sgemmThreads
}

// kernel returns the compiled kernel of a transpose combination.
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
	s, err := checkCall(q, s, a, b, c, d)
	if err != nil {
		return err
	}
	if (s.M+sgemmBM-1)/sgemmBM > 65535 {
		return fmt.Errorf("kernels: gemm: M=%d needs more than 65535 tiles of %d rows (CUDA's grid limit): %w", s.M, sgemmBM, engine.ErrInvalidArg)
	}
	tilesM, tilesN := (s.M+sgemmBM-1)/sgemmBM, (s.N+sgemmBN-1)/sgemmBN
	return q.Launch(g.kernel(s.TransA, s.TransB), engine.Range3D(tilesN*sgemmThreads, tilesM, s.Batch, sgemmThreads, 1, 1),
		d, c, a, b, alpha, beta, int32(s.M), int32(s.N), int32(s.K), int32(s.LDA), int32(s.LDB), int32(s.LDC),
		int32(s.StrideA), int32(s.StrideB), int32(s.StrideC))
}

// Close releases the compiled kernels and programs. Idempotent.
func (g *SGEMMSimt) Close() error {
	if g == nil {
		return nil
	}
	var errs []error
	for i := range g.kerns {
		if g.kerns[i] != nil {
			errs = append(errs, g.kerns[i].Close())
		}
		if g.progs[i] != nil {
			errs = append(errs, g.progs[i].Close())
		}
	}
	return errors.Join(errs...)
}
