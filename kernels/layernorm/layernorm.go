package layernorm

import (
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/rowwise"
)

// Config is a build of layernorm.cl as Rows launches it: WorkGroup items, RowItems of them
// per row (the short-row kernel layernorm_rows_multi), or all of them for one row where
// RowItems is 0, each keeping Cache row elements in registers. Its Chain is the k of the
// tolerance's gamma_k.
type Config = rowwise.Config

// LayerNorm computes row-wise layer normalization (layernorm.cl) in element type T on one
// device: y = (x - mean)/sqrt(var + eps) * gamma + beta per row, with a two-pass mean and
// variance. It keeps two builds, as the softmax family's launcher does: a narrow one, which runs rows of up to
// 1024 elements several to a work-group (layernorm_rows_multi) and rows of up to 2048 one to
// a work-group, and a wide one (work-groups of 512 items where the device allows them,
// caching 32 elements each: rows of up to 16384 elements read from memory once), compiled
// on first use by a wider row. It is safe for concurrent use by goroutines that each use
// their own Queue.
type LayerNorm[T kernels.Float] struct {
	b *rowwise.Builds[T]
}

// NewLayerNorm compiles the layernorm family for dev (its narrow build). It returns an error
// wrapping engine.ErrUnsupported when T is float64 and the device has no fp64.
func NewLayerNorm[T kernels.Float](dev *engine.Device) (*LayerNorm[T], error) {
	b, err := rowwise.NewBuilds[T](dev, "layernorm", source, "layernorm_rows", 3)
	if err != nil {
		return nil, err
	}
	return &LayerNorm[T]{b: b}, nil
}

// Close releases the compiled kernels. Idempotent.
func (l *LayerNorm[T]) Close() error { return l.b.Close() }

// Config returns the build Rows launches for rows of cols elements, compiling the wide one
// on first use: Config.RowItems > 0 for the short-row kernel. Rows of cols elements are
// read once (cached in registers) when Config.Cached(cols), else three times (streamed).
func (l *LayerNorm[T]) Config(cols int) (Config, error) {
	ln, err := l.b.For(cols)
	if err != nil {
		return Config{}, err
	}
	return ln.Config, nil
}

// Rows normalizes each row of the row-major [rows, cols] matrix x into y (the first
// rows*cols elements of each buffer; y may be x): y = (x - mean)/sqrt(var + eps)*gamma +
// beta, mean and var (biased: divided by cols) of the row, gamma and beta of at least cols
// elements, with the build Config(cols) names. eps must be positive and finite.
func (l *LayerNorm[T]) Rows(q *engine.Queue, y, x, gamma, beta *engine.Buffer[T], rows, cols int, eps T) error {
	if err := rowwise.Check("layernorm", rows, cols, rowwise.Matrix("y", y), rowwise.Matrix("x", x),
		rowwise.Vector("gamma", gamma), rowwise.Vector("beta", beta)); err != nil {
		return err
	}
	if e := float64(eps); !(e > 0) || math.IsInf(e, 1) {
		return fmt.Errorf("kernels: layernorm: eps %v; must be positive and finite: %w", eps, engine.ErrInvalidArg)
	}
	ln, err := l.b.For(cols)
	if err != nil {
		return err
	}
	if err := kernels.CheckGroups("layernorm", ln.Groups(rows), ln.Config.WorkGroup); err != nil {
		return err
	}
	if ln.Multi() {
		return q.Launch(ln.Kernel, ln.Grid(rows), y, x, gamma, beta, int32(rows), int32(cols), eps)
	}
	return q.Launch(ln.Kernel, ln.Grid(rows), y, x, gamma, beta, int32(cols), eps)
}
