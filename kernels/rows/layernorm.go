package rows

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// LayerNorm computes row-wise layer normalization (layernorm.cl) in element type T on one
// device: y = (x - mean)/sqrt(var + eps) * gamma + beta per row, with a two-pass mean and
// variance. It is safe for concurrent use by goroutines that each use their own Queue.
type LayerNorm[T kernels.Float] struct {
	prog *engine.Program
	k    *engine.Kernel
	wg   int
}

// NewLayerNorm compiles the layernorm family for dev. It returns an error wrapping
// engine.ErrUnsupported when T is float64 and the device has no fp64.
func NewLayerNorm[T kernels.Float](dev *engine.Device) (*LayerNorm[T], error) {
	prog, k, wg, err := buildRows[T](dev, layerNormSource, "layernorm_rows")
	if err != nil {
		return nil, err
	}
	return &LayerNorm[T]{prog: prog, k: k, wg: wg}, nil
}

// Close releases the compiled kernel. Idempotent.
func (l *LayerNorm[T]) Close() error {
	return errors.Join(l.k.Close(), l.prog.Close())
}

// WorkGroup returns the work-group size (items per row) the family was compiled with.
func (l *LayerNorm[T]) WorkGroup() int { return l.wg }

// Rows normalizes each row of the row-major [rows, cols] matrix x into y (the first
// rows*cols elements of each buffer; y may be x): y = (x - mean)/sqrt(var + eps)*gamma +
// beta, mean and var (biased: divided by cols) of the row, gamma and beta of at least cols
// elements. eps must be positive and finite.
func (l *LayerNorm[T]) Rows(q *engine.Queue, y, x, gamma, beta *engine.Buffer[T], rows, cols int, eps T) error {
	if err := checkRows("layernorm", rows, cols, rowBuf[T]{"y", y, false}, rowBuf[T]{"x", x, false},
		rowBuf[T]{"gamma", gamma, true}, rowBuf[T]{"beta", beta, true}); err != nil {
		return err
	}
	if e := float64(eps); !(e > 0) || math.IsInf(e, 1) {
		return fmt.Errorf("kernels: layernorm: eps %v; must be positive and finite: %w", eps, engine.ErrInvalidArg)
	}
	if err := kernels.CheckGroups("layernorm", rows, l.wg); err != nil {
		return err
	}
	return q.Launch(l.k, engine.Range1D(rows*l.wg, l.wg), y, x, gamma, beta, int32(cols), eps)
}
