package softmax

import (
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/rowwise"
)

// Config is a build of softmax.cl as Rows launches it: WorkGroup items, RowItems of them
// per row (the short-row kernel softmax_rows_multi), or all of them for one row where
// RowItems is 0, each keeping Cache row elements in registers. Its Chain is the k of the
// tolerance's gamma_k.
type Config = rowwise.Config

// Softmax computes a numerically stable row-wise softmax (softmax.cl) in element type T on
// one device. It keeps two builds: a narrow one, which runs rows of up to 1024 elements
// several to a work-group (32 items a row, 32 elements an item: softmax_rows_multi) and rows
// of up to 2048 one to a work-group of 256 items caching 8 elements each, and a wide one
// (work-groups of 512 items where the device allows them, caching 32 elements each, so that
// rows of up to 16384 elements are read from memory once), compiled on first use by a wider
// row. It is safe for concurrent use by goroutines that each use their own Queue.
type Softmax[T kernels.Float] struct {
	b *rowwise.Builds[T]
}

// NewSoftmax compiles the softmax family for dev (its narrow build). It returns an error
// wrapping engine.ErrUnsupported when T is float64 and the device has no fp64.
func NewSoftmax[T kernels.Float](dev *engine.Device) (*Softmax[T], error) {
	b, err := rowwise.NewBuilds[T](dev, "softmax", source, "softmax_rows", 2)
	if err != nil {
		return nil, err
	}
	return &Softmax[T]{b: b}, nil
}

// Close releases the compiled kernels. Idempotent.
func (s *Softmax[T]) Close() error { return s.b.Close() }

// Config returns the build Rows launches for rows of cols elements, compiling the wide one
// on first use: Config.RowItems > 0 for the short-row kernel. Rows of cols elements take
// the online path (running max and sum, two reads of the row) rather than the cached one
// (the row held in registers, one read) when !Config.Cached(cols).
func (s *Softmax[T]) Config(cols int) (Config, error) {
	l, err := s.b.For(cols)
	if err != nil {
		return Config{}, err
	}
	return l.Config, nil
}

// Rows sets y[r][c] = exp(x[r][c] - max_r) / sum_c' exp(x[r][c'] - max_r) for the row-major
// [rows, cols] matrices x and y (the first rows*cols elements of each buffer; y may be x),
// with the build Config(cols) names. Inputs must be finite.
func (s *Softmax[T]) Rows(q *engine.Queue, y, x *engine.Buffer[T], rows, cols int) error {
	if err := rowwise.Check("softmax", rows, cols, rowwise.Matrix("y", y), rowwise.Matrix("x", x)); err != nil {
		return err
	}
	l, err := s.b.For(cols)
	if err != nil {
		return err
	}
	if err := kernels.CheckGroups("softmax", l.Groups(rows), l.Config.WorkGroup); err != nil {
		return err
	}
	if l.Multi() {
		return q.Launch(l.Kernel, l.Grid(rows), y, x, int32(rows), int32(cols))
	}
	return q.Launch(l.Kernel, l.Grid(rows), y, x, int32(cols))
}
