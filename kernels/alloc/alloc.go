package alloc

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Alloc runs the alloc family's kernel (alloc.cl) on one device. It is safe for concurrent
// use by goroutines that each use their own Queue.
type Alloc struct {
	prog *engine.Program
	fill *engine.Kernel
	wg   int
}

// NewAlloc compiles the family for dev, with work-groups of 256 items, fewer where the
// device or the compiled kernel allow fewer.
func NewAlloc(dev *engine.Device) (*Alloc, error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: alloc: nil device: %w", engine.ErrInvalidArg)
	}
	return kernels.Fit(dev, "alloc", func(lim kernels.Limits) (*Alloc, kernels.Shape, error) {
		wg := lim.Group(256)
		prog, err := dev.Build(source)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		a := &Alloc{prog: prog, wg: wg}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &a.fill, Name: "alloc_fill"})
		if err != nil {
			a.Close()
			return nil, kernels.Shape{}, err
		}
		return a, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the compiled kernel. Idempotent.
func (a *Alloc) Close() error {
	if a == nil {
		return nil
	}
	return errors.Join(a.fill.Close(), a.prog.Close())
}

// WorkGroup returns the work-group size the family launches with on this device.
func (a *Alloc) WorkGroup() int { return a.wg }

// Fill sets the first n bytes of buf to the pattern of s (PatternByte).
func (a *Alloc) Fill(q *engine.Queue, buf *engine.Buffer[uint8], n int, s uint32) error {
	switch {
	case buf == nil:
		return fmt.Errorf("kernels: alloc: nil buffer: %w", engine.ErrInvalidArg)
	case n < 1 || n > math.MaxInt32:
		return fmt.Errorf("kernels: alloc: %d bytes; want 1 to 2^31-1: %w", n, engine.ErrInvalidArg)
	case buf.Len() < n:
		return fmt.Errorf("kernels: alloc: %d bytes; the buffer has %d: %w", n, buf.Len(), engine.ErrInvalidArg)
	}
	return q.Launch(a.fill, engine.Range1D(engine.RoundUp(n, a.wg), a.wg), buf, int32(n), s)
}

// PatternByte returns byte i of alloc_fill's pattern of s: (i * 167 + s) mod 256.
func PatternByte(i int, s uint32) byte { return byte(uint32(i)*167 + s) }
