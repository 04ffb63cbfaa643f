package rowwise

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Part is a family's share of one instance of a row op: its kernels (its launcher, or the
// Warp it was given), its own inputs (layernorm's gamma and beta), its float64 reference
// and its cost. The instance owns the input matrix, the output and the Warp.
type Part[T kernels.Float] interface {
	// Run computes y from x, both [rows, cols] (the instance's shape).
	Run(q *engine.Queue, y, x *engine.Buffer[T], rows, cols int) error
	// Ref writes the float64 reference of the row x into want (len(x) elements) and
	// returns the error allowed at each of its columns, for sums along the chains of cfg.
	Ref(want []float64, x []T, cfg Config) func(c int) float64
	// Model is the work of one run over [rows, cols].
	Model(rows, cols int) kernels.Model
	// Close releases the part's kernels and buffers.
	Close() error
}

// SetupFunc sets up a family's part of a [rows, cols] instance on q: on the warp kernels w
// where w is not nil (float32), else on the family's own kernels, compiled now. It returns
// the part, the build its kernels launch at cols (the error model of Ref) and the seeded
// input matrix x (rows*cols elements), drawing any inputs of its own from the same seed
// first.
type SetupFunc[T kernels.Float] func(ctx context.Context, q *engine.Queue, rows, cols int, seed uint64, w *Warp) (Part[T], Config, []T, error)

// NewOp returns the float32 row op name over rows of up to maxCols elements (Shape), at
// defaultSize by default and at 2^20 elements quickly, with doc and its variants: the
// cuda-warp variant first where rows fit a warp (WarpFits), then the portable one. setup
// makes the family's part of each instance.
func NewOp(name, doc string, maxCols, defaultSize int, setup SetupFunc[float32]) kernels.Op {
	family, _, _ := strings.Cut(name, "/")
	return kernels.Op{
		Name: name, Family: family, Type: "float32", Doc: doc,
		SizeDoc:     fmt.Sprintf("cols = min(size, %d), rows = size/cols (rounded down): a [rows, cols] float32 matrix", maxCols),
		DefaultSize: defaultSize, QuickSize: 1 << 20,
		Variants: variants(name, maxCols, setup),
	}
}

// variants are a row op's variants: the warp kernels first where rows fit a warp, then
// the portable ones.
func variants(name string, maxCols int, setup SetupFunc[float32]) []kernels.Variant {
	portable := kernels.PortableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		return Setup(ctx, q, name, p, maxCols, false, setup)
	})
	if !WarpFits(maxCols) {
		return []kernels.Variant{portable}
	}
	return []kernels.Variant{warpVariant(name, maxCols, setup), portable}
}

// warpVariant is the "cuda-warp" variant of the 1024-column row op name.
func warpVariant(name string, maxCols int, setup SetupFunc[float32]) kernels.Variant {
	return kernels.Variant{
		Name: "cuda-warp", Doc: "one warp per row: 16-byte loads, the row in registers, warp shuffles, no barrier (CUDA C++)",
		Dialect: engine.DialectCUDA, Backend: "cuda", MinCompute: 70,
		Tunables: fmt.Sprintf("ROWS=%d VECS=%d; rows of up to %d floats", warpRows, warpVecs, warpMaxCols),
		Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			return Setup(ctx, q, name, p, maxCols, true, setup)
		},
	}
}

// Shape maps a size to the [rows, cols] shape of a row op over rows of up to maxCols
// elements.
func Shape(size, maxCols int) (rows, cols int) {
	cols = min(size, maxCols)
	return max(size/cols, 1), cols
}

// verifySample is the size (elements) above which Verify checks a seeded sample of rows,
// not the whole matrix: the float64 reference of 2^26 elements would take seconds.
const verifySample = 1 << 22

// instance runs a row op over rotated input sets.
type instance[T kernels.Float] struct {
	what       string // the family, in errors ("softmax")
	rows, cols int
	cfg        Config // the build the part launches at cols
	part       Part[T]
	warp       *Warp // the cuda-warp variant (float32), else nil
	x          *kernels.Inputs[T]
	out        *engine.Buffer[T]
	seed       uint64
}

// Setup sets up an instance of the row op name over rows of up to maxCols elements: on
// the warp kernels (float32 only) where warp is set, else on the family's portable ones;
// setup makes the family's part.
func Setup[T kernels.Float](ctx context.Context, q *engine.Queue, name string, p kernels.Params, maxCols int, warp bool, setup SetupFunc[T]) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	dev := q.Device()
	rows, cols := Shape(p.Size, maxCols)
	family, _, _ := strings.Cut(name, "/")
	in := &instance[T]{what: family, rows: rows, cols: cols, seed: p.Seed}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	if warp {
		if in.warp, err = NewWarp(dev); err != nil {
			return nil, err
		}
	}
	var x0 []T
	if in.part, in.cfg, x0, err = setup(ctx, q, rows, cols, p.Seed, in.warp); err != nil {
		return nil, err
	}
	n := rows * cols
	in.x, err = kernels.NewInputs(ctx, q, p, n*engine.SizeOf[T](), func(set int) [][]T { return [][]T{kernels.Rotated(x0, set*(cols+1))} })
	if err != nil {
		return nil, err
	}
	if in.out, err = engine.NewBuffer[T](dev, n); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *instance[T]) Run(ctx context.Context, q *engine.Queue) error {
	return in.part.Run(q, in.out, in.x.Next()[0], in.rows, in.cols)
}

// Verify checks every row, or, above verifySample elements, a seeded sample of 16 rows
// plus the first and the last.
func (in *instance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	last, err := in.x.Last(ctx)
	if err != nil {
		return err
	}
	x := last[0]
	rowIdx := make([]int, 0, in.rows)
	if in.rows*in.cols <= verifySample {
		for r := range in.rows {
			rowIdx = append(rowIdx, r)
		}
	} else {
		rng := kernels.NewRand(in.seed, 0x5a3)
		rowIdx = append(rowIdx, 0, in.rows-1)
		for range 16 {
			rowIdx = append(rowIdx, rng.IntN(in.rows))
		}
	}
	var all []T
	if len(rowIdx) == in.rows {
		var err error
		if all, err = in.out.Download(ctx, q); err != nil {
			return err
		}
	}
	got := make([]T, in.cols)
	want := make([]float64, in.cols)
	for _, r := range rowIdx {
		if all != nil {
			got = all[r*in.cols : (r+1)*in.cols]
		} else if err := in.out.Read(ctx, q, r*in.cols, got); err != nil {
			return err
		}
		tol := in.part.Ref(want, x[r*in.cols:(r+1)*in.cols], in.cfg)
		if err := kernels.CheckClose(fmt.Sprintf("%s row %d", in.what, r), got, want, tol); err != nil {
			return err
		}
	}
	return nil
}

func (in *instance[T]) Model() kernels.Model { return in.part.Model(in.rows, in.cols) }

func (in *instance[T]) Shape() string { return fmt.Sprintf("rows=%d cols=%d", in.rows, in.cols) }

func (in *instance[T]) Close() error {
	errs := []error{in.out.Close(), in.x.Close()}
	if in.part != nil {
		errs = append(errs, in.part.Close())
	}
	if in.warp != nil {
		errs = append(errs, in.warp.Close())
	}
	return errors.Join(errs...)
}
