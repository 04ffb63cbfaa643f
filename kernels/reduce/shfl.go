package reduce

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed reduce.cu
var cudaSource string

// shflBlock is the block size of reduce.cu's single-pass sum: 8 warps, 8 blocks per SM
// resident at 2048 threads per SM.
const shflBlock = 256

// SumShfl is the "cuda-shfl" variant of the whole-array sum: reduce.cu's single-pass kernel
// (16-byte loads, warp shuffles, the last block combining the per-block partials in block
// order). It runs on CUDA devices only. It owns its scratch (one partial per block and a
// completion counter), so it is safe for use through one queue at a time.
type SumShfl[T ReduceElem] struct {
	dev   *engine.Device
	prog  *engine.Program
	k     *engine.Kernel
	grid  int
	part  *engine.Buffer[T]
	count *engine.Buffer[uint32]
}

// NewSumShfl compiles reduce.cu for q's device (CUDA C++: an error wrapping
// engine.ErrUnsupported elsewhere) and readies its scratch on q.
func NewSumShfl[T ReduceElem](q *engine.Queue) (_ *SumShfl[T], err error) {
	if q == nil {
		return nil, fmt.Errorf("kernels: reduce: nil queue: %w", engine.ErrInvalidArg)
	}
	dev := q.Device()
	t := kernels.TypeOf[T]()
	if t.FP64 && !dev.Info().FP64 {
		return nil, fmt.Errorf("kernels: %s has no fp64: %w", dev.ID(), engine.ErrUnsupported)
	}
	elem, acc := t.CUDA, t.CUDA
	if !t.Float { // int32 sums wrap: accumulated in unsigned arithmetic, as reduce.cl does
		elem, acc = "int", "uint32_t"
	}
	opts := []string{"-DELEM=" + elem, "-DACC=" + acc, fmt.Sprintf("-DBLOCK=%d", shflBlock)}
	prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: cudaSource, Name: "reduce.cu"}, opts...)
	if err != nil {
		return nil, err
	}
	// Enough blocks to fill every SM (8 resident blocks of 256 threads each), few partials.
	s := &SumShfl[T]{dev: dev, prog: prog, grid: max(dev.Info().ComputeUnits, 1) * 8}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.k, err = prog.Kernel("reduce_sum_shfl"); err != nil {
		return nil, err
	}
	if s.k.MaxWorkGroupSize() < shflBlock {
		return nil, fmt.Errorf("kernels: reduce_sum_shfl takes %d threads per block on %s, needs %d: %w", s.k.MaxWorkGroupSize(), dev.ID(), shflBlock, engine.ErrUnsupported)
	}
	if s.part, err = engine.NewBuffer[T](dev, s.grid); err != nil {
		return nil, err
	}
	if s.count, err = engine.NewBuffer[uint32](dev, 1); err != nil {
		return nil, err
	}
	if err = s.count.Fill(q, 0, 1, 0); err != nil {
		return nil, err
	}
	return s, nil
}

// blocks returns the grid for n elements: no more blocks than have a vector to load.
func (s *SumShfl[T]) blocks(n int) int {
	vec := 16 / engine.SizeOf[T]()
	return max(1, min(s.grid, (n+shflBlock*vec-1)/(shflBlock*vec)))
}

// Chain returns the longest chain of additions behind one sum of n elements: the
// per-thread grid-stride sum, the warp and block trees, then the last block's pass over
// the partials and its trees (the bound ReduceTolerance takes).
func (s *SumShfl[T]) Chain(n int) int {
	g := s.blocks(n)
	tree := kernels.Log2Ceil(32) + kernels.Log2Ceil(shflBlock/32)
	return (n+g*shflBlock-1)/(g*shflBlock) + tree + (g+shflBlock-1)/shflBlock + tree
}

// Into enqueues out[0] = sum of x[0..n) on q in one launch.
func (s *SumShfl[T]) Into(q *engine.Queue, out, x *engine.Buffer[T], n int) error {
	if err := checkReduceN(ReduceSum, x, n); err != nil {
		return err
	}
	if out == nil || out.Len() < 1 {
		return fmt.Errorf("kernels: reduce sum: output needs 1 element: %w", engine.ErrInvalidArg)
	}
	g := s.blocks(n)
	return q.Launch(s.k, engine.Range1D(g*shflBlock, shflBlock), out, s.part, s.count, x, int64(n))
}

// Close releases the kernel, program and scratch. Idempotent.
func (s *SumShfl[T]) Close() error {
	if s == nil {
		return nil
	}
	var errs []error
	if s.part != nil {
		errs = append(errs, s.part.Close())
	}
	if s.count != nil {
		errs = append(errs, s.count.Close())
	}
	if s.k != nil {
		errs = append(errs, s.k.Close())
	}
	if s.prog != nil {
		errs = append(errs, s.prog.Close())
	}
	return errors.Join(errs...)
}
