package launch

import (
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Launch runs the launch family's kernel (launch.cl) on one device. It is safe for
// concurrent use by goroutines that each use their own Queue.
type Launch struct {
	prog    *engine.Program
	k, mark *engine.Kernel
	wg      int
}

// NewLaunch compiles the family for dev, with one work-group of 32 items, fewer where the
// device or the compiled kernel allow fewer.
func NewLaunch(dev *engine.Device) (*Launch, error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: launch: nil device: %w", engine.ErrInvalidArg)
	}
	return kernels.Fit(dev, "launch", func(lim kernels.Limits) (*Launch, kernels.Shape, error) {
		wg := lim.Group(32)
		prog, err := dev.Build(source)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		l := &Launch{prog: prog, wg: wg}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &l.k, Name: "launch_empty"}, kernels.Ref{Dst: &l.mark, Name: "launch_mark"})
		if err != nil {
			l.Close()
			return nil, kernels.Shape{}, err
		}
		return l, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the compiled kernel. Idempotent.
func (l *Launch) Close() error {
	if l == nil {
		return nil
	}
	return errors.Join(l.k.Close(), l.mark.Close(), l.prog.Close())
}

// WorkGroup returns the work-group size the family launches with on this device.
func (l *Launch) WorkGroup() int { return l.wg }

// Empty enqueues launch_empty once, one work-group: count[0] grows by one when it runs.
func (l *Launch) Empty(q *engine.Queue, count *engine.Buffer[uint32]) error {
	if count == nil {
		return fmt.Errorf("kernels: launch: nil counter: %w", engine.ErrInvalidArg)
	}
	return q.Launch(l.k, engine.Range1D(l.wg, l.wg), count)
}

// Mark enqueues launch_mark once, one work-group: marks[i] becomes 1 when it runs.
func (l *Launch) Mark(q *engine.Queue, marks *engine.Buffer[uint32], i int) error {
	if marks == nil {
		return fmt.Errorf("kernels: launch: nil marks: %w", engine.ErrInvalidArg)
	}
	if i < 0 || i >= marks.Len() {
		return fmt.Errorf("kernels: launch: mark %d of a buffer of %d: %w", i, marks.Len(), engine.ErrInvalidArg)
	}
	return q.Launch(l.mark, engine.Range1D(l.wg, l.wg), marks, uint32(i))
}
