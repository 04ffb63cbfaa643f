package overlap

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// The suite's pipeline: Chunks chunks of the n floats, each copied in, computed with
// Iters multiply-adds an element (y = A*y + v, A = 1 - 2^-8) and copied out.
//
// Iters is chosen for the GPUs the suite measures: an H100 or H200 (132 SMs at 1.98 GHz,
// 33.5 T FP32 multiply-adds a second) runs 2048 of them on 2^28 floats in 16 ms at its
// peak, 20.8 ms measured on an H200 (2026-11-26), while a pinned PCIe 5.0 x16 copy of that
// GiB takes 19.4 ms each way (55 GB/s; twice as long on PCIe 4.0). A few dozen an element
// would leave the computation a hundredth of the copies, and the pipeline little to hide
// them behind. Chunks is 16: with three
// stages of equal length S (each over all n floats) on enough queues, a pipeline of C
// chunks takes (C+2)/C S instead of 3S, so that 16 chunks hide at most 1 - 1/C, 94%, of
// the copies, 64 MiB chunks at the
// default size keep each command's overhead (microseconds) negligible, and a host
// buffer's 64 copies in flight (engine.HostBuffer) are never reached in one run.
const (
	Iters  = 2048
	A      = 1 - 1.0/256
	Chunks = 16
)

// MaxQueues is the most queues a pipeline of the suite uses: overlap/q4/float32's.
const MaxQueues = 4

// OverlapModel returns the work of one pipeline over n floats with iters multiply-adds an
// element: 2 FLOPs a multiply-add, and the bytes that cross the link, n floats in and n
// out (the copies' and the kernel's device-memory traffic are not counted).
func OverlapModel(n, iters int) kernels.Model {
	f := float64(n)
	return kernels.Model{Flops: 2 * float64(iters) * f, Bytes: 8 * f, Link: true}
}

// Overlap runs the overlap family's kernel (overlap.cl) on one device. It is safe for
// concurrent use by goroutines that each use their own Queue.
type Overlap struct {
	prog *engine.Program
	k    *engine.Kernel
	wg   int
	// loops is the device's limit on a work-item's loop iterations (kernels.LoopLimit), 0
	// for none: Compute refuses more steps than 90% of it.
	loops int
}

// NewOverlap compiles the family for dev, with work-groups of 256 items, fewer where the
// device or the compiled kernel allow fewer.
func NewOverlap(dev *engine.Device) (*Overlap, error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: overlap: nil device: %w", engine.ErrInvalidArg)
	}
	return kernels.Fit(dev, "overlap", func(lim kernels.Limits) (*Overlap, kernels.Shape, error) {
		wg := lim.Group(256)
		prog, err := dev.Build(source)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		o := &Overlap{prog: prog, wg: wg, loops: kernels.LoopLimit(dev)}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &o.k, Name: "overlap_compute"})
		if err != nil {
			o.Close()
			return nil, kernels.Shape{}, err
		}
		return o, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the compiled kernel. Idempotent.
func (o *Overlap) Close() error {
	if o == nil {
		return nil
	}
	return errors.Join(o.k.Close(), o.prog.Close())
}

// WorkGroup returns the work-group size the family launches with on this device.
func (o *Overlap) WorkGroup() int { return o.wg }

// Compute enqueues overlap_compute on q over x[off] to x[off+n-1], in place: iters
// multiply-adds y = a*y + v on each element v, starting from y = v.
func (o *Overlap) Compute(q *engine.Queue, x *engine.Buffer[float32], off, n, iters int, a float32) error {
	switch {
	case x == nil:
		return fmt.Errorf("kernels: overlap: nil buffer: %w", engine.ErrInvalidArg)
	case n < 1 || off < 0 || iters < 0:
		return fmt.Errorf("kernels: overlap: %d elements at offset %d, %d steps; want at least 1, 0 and 0: %w", n, off, iters, engine.ErrInvalidArg)
	case off > math.MaxInt32-n:
		return fmt.Errorf("kernels: overlap: %d elements at offset %d exceed the family's limit of 2^31-1: %w", n, off, engine.ErrInvalidArg)
	case x.Len() < off+n:
		return fmt.Errorf("kernels: overlap: %d elements at offset %d; the buffer has %d: %w", n, off, x.Len(), engine.ErrInvalidArg)
	case iters > math.MaxInt32:
		return fmt.Errorf("kernels: overlap: %d steps exceed 2^31-1: %w", iters, engine.ErrInvalidArg)
	}
	// A work-item loops once a step.
	if err := kernels.CheckLoops(o.loops, iters+16, "overlap: %d steps", iters); err != nil {
		return err
	}
	return q.Launch(o.k, engine.Range1D(engine.RoundUp(n, o.wg), o.wg), x, int32(off), int32(n), int32(iters), a)
}
