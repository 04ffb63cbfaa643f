package access

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// AccessOp names one access pattern of the access family.
type AccessOp string

// The access patterns.
const (
	OpSequential AccessOp = "sequential"
	OpStrided    AccessOp = "strided"
	OpGather     AccessOp = "gather"
	OpScatter    AccessOp = "scatter"
)

// Strides are the strides, in elements, of the suite's strided ops (access/stride2/float32
// ... access/stride64/float32): from two elements to 256 bytes of float32, past the 32-byte
// sectors and the 64- and 128-byte lines of GPUs and CPUs.
var Strides = []int{2, 4, 8, 16, 32, 64}

// MaxStride is the largest stride Strided takes: the strided kernel's launch has one
// work-group per column in its second dimension, which CUDA limits to 65535 blocks.
const MaxStride = 65535

// AccessModel returns the useful work of op over n elements of elemSize bytes: no FLOPs;
// each element of x read once and each element of y written once, and for gather and
// scatter the n uint32 indices read too. The bytes a strided read fetches and does not use
// (the rest of each sector or line, fetched again for a later column) are not counted, so
// that the GB/s of the strided ops fall below the sequential copy's as the stride grows.
func AccessModel(op AccessOp, n, elemSize int) kernels.Model {
	f, e := float64(n), float64(elemSize)
	if op == OpGather || op == OpScatter {
		return kernels.Model{Flops: 0, Bytes: f * (2*e + 4)}
	}
	return kernels.Model{Flops: 0, Bytes: 2 * f * e}
}

// Access runs the access family in element type T on one device. It is safe for concurrent
// use by goroutines that each use their own Queue.
type Access[T kernels.Float] struct {
	prog                                 *engine.Program
	sequential, strided, gather, scatter *engine.Kernel
	wg                                   int
}

// NewAccess compiles the access family for dev, with work-groups of 256 items, fewer where
// the device or the compiled kernels allow fewer. It returns an error wrapping
// engine.ErrUnsupported when T is float64 and the device has no fp64.
func NewAccess[T kernels.Float](dev *engine.Device) (*Access[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: access: nil device: %w", engine.ErrInvalidArg)
	}
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, "access", func(lim kernels.Limits) (*Access[T], kernels.Shape, error) {
		wg := lim.Group(256)
		prog, err := dev.Build(source, opts...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		a := &Access[T]{prog: prog, wg: wg}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &a.sequential, Name: "access_sequential"},
			kernels.Ref{Dst: &a.strided, Name: "access_strided"}, kernels.Ref{Dst: &a.gather, Name: "access_gather"},
			kernels.Ref{Dst: &a.scatter, Name: "access_scatter"})
		if err != nil {
			a.Close()
			return nil, kernels.Shape{}, err
		}
		return a, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the compiled kernels. Idempotent.
func (a *Access[T]) Close() error {
	if a == nil {
		return nil
	}
	return errors.Join(a.sequential.Close(), a.strided.Close(), a.gather.Close(), a.scatter.Close(), a.prog.Close())
}

// WorkGroup returns the work-group size the family launches with on this device.
func (a *Access[T]) WorkGroup() int { return a.wg }

// check validates the buffers of op over n elements: y and x distinct, each at least n
// elements long (they may be longer; the rest is untouched), and idx too where op reads
// one.
func check[T kernels.Float](op AccessOp, y, x *engine.Buffer[T], idx *engine.Buffer[uint32], n int) error {
	switch {
	case y == nil || x == nil || ((op == OpGather || op == OpScatter) && idx == nil):
		return fmt.Errorf("kernels: access %s: nil buffer: %w", op, engine.ErrInvalidArg)
	case y == x:
		return fmt.Errorf("kernels: access %s: y and x are the same buffer; the copy is out of place: %w", op, engine.ErrInvalidArg)
	case n < 1:
		return fmt.Errorf("kernels: access %s: %d elements; must be at least 1: %w", op, n, engine.ErrInvalidArg)
	case n > math.MaxInt32:
		return fmt.Errorf("kernels: access %s: %d elements exceeds the family's limit of 2^31-1: %w", op, n, engine.ErrInvalidArg)
	case y.Len() < n || x.Len() < n:
		return fmt.Errorf("kernels: access %s: %d elements; y has %d, x %d: %w", op, n, y.Len(), x.Len(), engine.ErrInvalidArg)
	case idx != nil && idx.Len() < n:
		return fmt.Errorf("kernels: access %s: %d elements; idx has %d: %w", op, n, idx.Len(), engine.ErrInvalidArg)
	}
	return nil
}

// grid returns the 1D range of the sequential, gather and scatter kernels: one work-item per
// element.
func (a *Access[T]) grid(n int) engine.Range {
	return engine.Range1D(engine.RoundUp(n, a.wg), a.wg)
}

// StridedShape returns how a strided read of n elements at stride views x: rows rows of
// stride elements, the last row holding last of them (1 <= last <= stride).
func StridedShape(n, stride int) (rows, last int) {
	rows = (n-1)/stride + 1
	return rows, n - (rows-1)*stride
}

// stridedRange returns the 2D range of access_strided over rows rows at stride: dimension 0
// down a column in groups of the work-group size, halved while half of it still covers
// rows (so that a short column launches few idle items), dimension 1 across the columns.
func (a *Access[T]) stridedRange(rows, stride int) engine.Range {
	l := a.wg
	for l > 1 && l/2 >= rows {
		l /= 2
	}
	return engine.Range2D(engine.RoundUp(rows, l), stride, l, 1)
}

// Sequential sets y[i] = x[i] for i < n.
func (a *Access[T]) Sequential(q *engine.Queue, y, x *engine.Buffer[T], n int) error {
	if err := check(OpSequential, y, x, nil, n); err != nil {
		return err
	}
	return q.Launch(a.sequential, a.grid(n), y, x, int32(n))
}

// Strided sets y to the n elements of x read column by column, x viewed as rows of stride
// elements (StridedShape; AccessRef says which element goes where): neighbouring
// work-items read stride elements apart and write y contiguously. 1 <= stride <=
// MaxStride; stride 1 is a sequential copy.
func (a *Access[T]) Strided(q *engine.Queue, y, x *engine.Buffer[T], n, stride int) error {
	if err := check(OpStrided, y, x, nil, n); err != nil {
		return err
	}
	if stride < 1 || stride > MaxStride {
		return fmt.Errorf("kernels: access strided: stride %d; must be 1 to %d: %w", stride, MaxStride, engine.ErrInvalidArg)
	}
	rows, last := StridedShape(n, stride)
	return q.Launch(a.strided, a.stridedRange(rows, stride), y, x, int32(stride), int32(rows), int32(last))
}

// Gather sets y[i] = x[idx[i]] for i < n, and y[i] = 0 where idx[i] >= n.
func (a *Access[T]) Gather(q *engine.Queue, y, x *engine.Buffer[T], idx *engine.Buffer[uint32], n int) error {
	if err := check(OpGather, y, x, idx, n); err != nil {
		return err
	}
	return q.Launch(a.gather, a.grid(n), y, x, idx, int32(n))
}

// Scatter sets y[idx[i]] = x[i] for i < n where idx[i] < n; the elements of y that no index
// names are untouched. The indices below n must be distinct (two work-items storing to one
// element race), as in a permutation.
func (a *Access[T]) Scatter(q *engine.Queue, y, x *engine.Buffer[T], idx *engine.Buffer[uint32], n int) error {
	if err := check(OpScatter, y, x, idx, n); err != nil {
		return err
	}
	return q.Launch(a.scatter, a.grid(n), y, x, idx, int32(n))
}
