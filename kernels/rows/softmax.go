package rows

import (
	"errors"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Softmax computes a numerically stable row-wise softmax (softmax.cl) in element type T on
// one device. It is safe for concurrent use by goroutines that each use their own Queue.
type Softmax[T kernels.Float] struct {
	prog *engine.Program
	k    *engine.Kernel
	wg   int
}

// NewSoftmax compiles the softmax family for dev. It returns an error wrapping
// engine.ErrUnsupported when T is float64 and the device has no fp64.
func NewSoftmax[T kernels.Float](dev *engine.Device) (*Softmax[T], error) {
	prog, k, wg, err := buildRows[T](dev, softmaxSource, "softmax_rows")
	if err != nil {
		return nil, err
	}
	return &Softmax[T]{prog: prog, k: k, wg: wg}, nil
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
	if err := kernels.CheckGroups("softmax", rows, s.wg); err != nil {
		return err
	}
	return q.Launch(s.k, engine.Range1D(rows*s.wg, s.wg), y, x, int32(cols))
}
