package kernels

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
)

// rowCache is the CACHE tunable of softmax.cl and layernorm.cl: rows of at most
// WG*rowCache elements are read once into registers.
const rowCache = 8

// Softmax computes a numerically stable row-wise softmax (softmax.cl) in element type T on
// one device. It is safe for concurrent use by goroutines that each use their own Queue.
type Softmax[T Float] struct {
	prog *engine.Program
	k    *engine.Kernel
	wg   int
}

// NewSoftmax compiles the softmax family for dev. It returns an error wrapping
// engine.ErrUnsupported when T is float64 and the device has no fp64.
func NewSoftmax[T Float](dev *engine.Device) (*Softmax[T], error) {
	prog, k, wg, err := buildRows[T](dev, "softmax", "softmax_rows")
	if err != nil {
		return nil, err
	}
	return &Softmax[T]{prog: prog, k: k, wg: wg}, nil
}

// buildRows compiles a one-work-group-per-row family with WG and CACHE and returns its
// kernel.
func buildRows[T Float](dev *engine.Device, family, kernel string) (*engine.Program, *engine.Kernel, int, error) {
	opts, err := TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, nil, 0, err
	}
	wg := workGroup(dev, 256)
	prog, err := build(dev, family, append(opts, fmt.Sprintf("-DWG=%d", wg), fmt.Sprintf("-DCACHE=%d", rowCache))...)
	if err != nil {
		return nil, nil, 0, err
	}
	k, err := prog.Kernel(kernel)
	if err != nil {
		prog.Close()
		return nil, nil, 0, err
	}
	if m := k.MaxWorkGroupSize(); m > 0 && m < wg {
		k.Close()
		prog.Close()
		return nil, nil, 0, fmt.Errorf("kernels: %s: kernel allows work-groups of %d items on %s, the family needs %d: %w", kernel, m, dev.ID(), wg, engine.ErrUnsupported)
	}
	return prog, k, wg, nil
}

// Close releases the compiled kernel. Idempotent.
func (s *Softmax[T]) Close() error {
	return errors.Join(s.k.Close(), s.prog.Close())
}

// WorkGroup returns the work-group size (items per row) the family was compiled with.
func (s *Softmax[T]) WorkGroup() int { return s.wg }

// Online reports whether rows of cols elements take the online path (running max and sum,
// two reads of the row) rather than the cached one (the row held in registers, one read):
// cols > WorkGroup()*8.
func (s *Softmax[T]) Online(cols int) bool { return cols > s.wg*rowCache }

// Rows sets y[r][c] = exp(x[r][c] - max_r) / sum_c' exp(x[r][c'] - max_r) for the row-major
// [rows, cols] matrices x and y (the first rows*cols elements of each buffer; y may be x).
// Inputs must be finite.
func (s *Softmax[T]) Rows(q *engine.Queue, y, x *engine.Buffer[T], rows, cols int) error {
	if err := checkRows("softmax", rows, cols, rowBuf[T]{"y", y, false}, rowBuf[T]{"x", x, false}); err != nil {
		return err
	}
	if err := CheckGroups("softmax", rows, s.wg); err != nil {
		return err
	}
	return q.Launch(s.k, engine.Range1D(rows*s.wg, s.wg), y, x, int32(cols))
}

// rowBuf is one buffer argument of a row operation: a [rows, cols] matrix, or a vector of
// cols elements (gamma, beta).
type rowBuf[T Float] struct {
	name string
	b    *engine.Buffer[T]
	vec  bool
}

// checkRows validates a [rows, cols] row operation: positive dims, rows*cols within int32,
// no nil buffer, matrices at least rows*cols long and vectors at least cols long. Errors
// wrap engine.ErrInvalidArg.
func checkRows[T Float](op string, rows, cols int, bufs ...rowBuf[T]) error {
	if rows < 1 || cols < 1 {
		return fmt.Errorf("kernels: %s: shape [%d, %d]; rows and cols must be at least 1: %w", op, rows, cols, engine.ErrInvalidArg)
	}
	if rows > math.MaxInt32/cols {
		return fmt.Errorf("kernels: %s: shape [%d, %d] has more than 2^31-1 elements: %w", op, rows, cols, engine.ErrInvalidArg)
	}
	for _, a := range bufs {
		n := rows * cols
		if a.vec {
			n = cols
		}
		if a.b == nil {
			return fmt.Errorf("kernels: %s: nil buffer %s: %w", op, a.name, engine.ErrInvalidArg)
		}
		if a.b.Len() < n {
			return fmt.Errorf("kernels: %s: buffer %s holds %d elements, shape [%d, %d] needs %d: %w", op, a.name, a.b.Len(), rows, cols, n, engine.ErrInvalidArg)
		}
	}
	return nil
}
