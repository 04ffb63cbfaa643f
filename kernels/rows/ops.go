package rows

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed softmax.cl
var softmaxSource string

//go:embed layernorm.cl
var layerNormSource string

// SoftmaxFamily returns the softmax family: its OpenCL C source (softmax.cl) and its
// operations, rows of up to 1024 and of up to 8192 elements.
func SoftmaxFamily() kernels.Family {
	doc := "row-wise stable softmax: y = exp(x - rowmax) / rowsum ("
	return kernels.Family{Name: "softmax", Source: softmaxSource, Ops: []kernels.Op{
		rowOp("softmax/rows/float32", doc+"32 items per row, 8 rows per work-group)", rowSoftmax, 1024, 1<<26),
		rowOp("softmax/rows8k/float32", doc+"one work-group per row, 512 items where the device allows)", rowSoftmax, 8192, 1<<27),
	}}
}

// LayerNormFamily returns the layernorm family: its OpenCL C source (layernorm.cl) and its
// operations, rows of up to 1024 and of up to 8192 elements.
func LayerNormFamily() kernels.Family {
	doc := "row-wise layer normalization y = (x - mean)/sqrt(var + 1e-5)*gamma + beta (two-pass, "
	return kernels.Family{Name: "layernorm", Source: layerNormSource, Ops: []kernels.Op{
		rowOp("layernorm/rows/float32", doc+"32 items per row, 8 rows per work-group)", rowLayerNorm, 1024, 1<<26),
		rowOp("layernorm/rows8k/float32", doc+"one work-group per row, 512 items where the device allows)", rowLayerNorm, 8192, 1<<27),
	}}
}

// rowOp returns the float32 row op name of kind over rows of up to maxCols elements
// (rowsShape), at defaultSize by default and at 2^20 elements quickly.
func rowOp(name, doc string, kind rowKind, maxCols, defaultSize int) kernels.Op {
	family, _, _ := strings.Cut(name, "/")
	return kernels.Op{
		Name: name, Family: family, Type: "float32", Doc: doc,
		SizeDoc:     fmt.Sprintf("cols = min(size, %d), rows = size/cols (rounded down): a [rows, cols] float32 matrix", maxCols),
		DefaultSize: defaultSize, QuickSize: 1 << 20,
		Variants: rowVariants(name, kind, maxCols),
	}
}

// rowVariants are a row op's variants: the warp kernels first where rows fit a warp, then
// the portable ones.
func rowVariants(name string, kind rowKind, maxCols int) []kernels.Variant {
	portable := kernels.PortableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		return setupRowOp[float32](ctx, q, name, p, kind, maxCols)
	})
	if !WarpFits(maxCols) {
		return []kernels.Variant{portable}
	}
	return []kernels.Variant{warpVariant(name, kind, maxCols), portable}
}

// rowsShape maps a size to the [rows, cols] shape of a row op over rows of up to maxCols
// elements.
func rowsShape(size, maxCols int) (rows, cols int) {
	cols = min(size, maxCols)
	return max(size/cols, 1), cols
}

// rowKind names the row op an instance runs.
type rowKind int

const (
	rowSoftmax rowKind = iota
	rowLayerNorm
)

// rowVerifySample is the size (elements) above which Verify checks a seeded sample of rows,
// not the whole matrix: the float64 reference of 2^26 elements would take seconds.
const rowVerifySample = 1 << 22

// rowInstance runs softmax or layernorm over rotated input sets.
type rowInstance[T kernels.Float] struct {
	kind        rowKind
	rows, cols  int
	cfg         Config // the build Rows launches at cols
	sm          *Softmax[T]
	ln          *LayerNorm[T]
	warp        *Warp // the cuda-warp variant (float32), else nil
	x           *kernels.Inputs[T]
	gamma, beta []T
	bg, bb, out *engine.Buffer[T]
	eps         T
	seed        uint64
}

func setupRowOp[T kernels.Float](ctx context.Context, q *engine.Queue, name string, p kernels.Params, kind rowKind, maxCols int) (kernels.Instance, error) {
	return setupRows[T](ctx, q, name, p, kind, maxCols, false)
}

// setupRowOpWarp sets up the cuda-warp variant of a float32 row op.
func setupRowOpWarp(ctx context.Context, q *engine.Queue, name string, p kernels.Params, kind rowKind, maxCols int) (kernels.Instance, error) {
	return setupRows[float32](ctx, q, name, p, kind, maxCols, true)
}

// setupRows sets up a row op, on the warp kernels (float32 only) or the portable ones.
func setupRows[T kernels.Float](ctx context.Context, q *engine.Queue, name string, p kernels.Params, kind rowKind, maxCols int, warp bool) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	dev := q.Device()
	rows, cols := rowsShape(p.Size, maxCols)
	in := &rowInstance[T]{kind: kind, rows: rows, cols: cols, eps: 1e-5, seed: p.Seed}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	switch {
	case warp:
		// One warp per row: the error model of a 32-item work-group that caches the row.
		in.warp, err = NewWarp(dev)
		in.cfg = Config{WorkGroup: 32, Cache: 4 * warpVecs}
	case kind == rowSoftmax:
		if in.sm, err = NewSoftmax[T](dev); err == nil {
			in.cfg, err = in.sm.Config(cols)
		}
	default:
		if in.ln, err = NewLayerNorm[T](dev); err == nil {
			in.cfg, err = in.ln.Config(cols)
		}
	}
	if err != nil {
		return nil, err
	}
	n := rows * cols
	rng := kernels.NewRand(p.Seed, 0x50f7)
	if kind == rowLayerNorm {
		rng = kernels.NewRand(p.Seed, 0x1a7e)
		in.gamma, in.beta = kernels.RandFloats[T](rng, cols, 0.5, 1.5), kernels.RandFloats[T](rng, cols, -0.5, 0.5)
		if in.bg, err = engine.Upload(ctx, q, in.gamma); err != nil {
			return nil, err
		}
		if in.bb, err = engine.Upload(ctx, q, in.beta); err != nil {
			return nil, err
		}
	}
	x0 := rowOpInput[T](rng, kind, rows, cols)
	in.x, err = kernels.NewInputs(ctx, q, p, n*engine.SizeOf[T](), func(set int) [][]T { return [][]T{kernels.Rotated(x0, set*(cols+1))} })
	if err != nil {
		return nil, err
	}
	if in.out, err = engine.NewBuffer[T](dev, n); err != nil {
		return nil, err
	}
	return in, nil
}

// rowOpInput returns the seeded input of a row op: softmax rows uniform in [-8, 8) (a range
// over which exp spans e^16); layernorm rows with a per-row offset in [-4, 4) and spread
// in (0, 2], so that the mean matters.
func rowOpInput[T kernels.Float](rng *rand.Rand, kind rowKind, rows, cols int) []T {
	if kind == rowSoftmax {
		return kernels.RandFloats[T](rng, rows*cols, -8, 8)
	}
	x := make([]T, rows*cols)
	for r := range rows {
		off, spread := 8*rng.Float64()-4, 2*rng.Float64()+1e-3
		for c := range cols {
			x[r*cols+c] = T(off + spread*(2*rng.Float64()-1))
		}
	}
	return x
}

func (in *rowInstance[T]) Run(ctx context.Context, q *engine.Queue) error {
	x := in.x.Next()[0]
	if in.warp != nil { // float32: the cuda-warp variant
		y, xf := any(in.out).(*engine.Buffer[float32]), any(x).(*engine.Buffer[float32])
		if in.kind == rowSoftmax {
			return in.warp.Softmax(q, y, xf, in.rows, in.cols)
		}
		g, b := any(in.bg).(*engine.Buffer[float32]), any(in.bb).(*engine.Buffer[float32])
		return in.warp.LayerNorm(q, y, xf, g, b, in.rows, in.cols, float32(in.eps))
	}
	if in.kind == rowSoftmax {
		return in.sm.Rows(q, in.out, x, in.rows, in.cols)
	}
	return in.ln.Rows(q, in.out, x, in.bg, in.bb, in.rows, in.cols, in.eps)
}

// Verify checks every row, or, above rowVerifySample elements, a seeded sample of 16 rows
// plus the first and the last.
func (in *rowInstance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	last, err := in.x.Last(ctx)
	if err != nil {
		return err
	}
	x := last[0]
	rowIdx := make([]int, 0, in.rows)
	if in.rows*in.cols <= rowVerifySample {
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
		xr := x[r*in.cols : (r+1)*in.cols]
		var tol func(int) float64
		if in.kind == rowSoftmax {
			hi, lo := softmaxRefRow(want, xr)
			rt := softmaxChainTol[T](in.cfg.Chain(in.cols), !in.cfg.Cached(in.cols), hi, lo)
			tol = func(c int) float64 { return rt(float64(xr[c]), want[c]) }
		} else {
			st := layerNormRefRow(want, xr, in.gamma, in.beta, float64(in.eps))
			rt := layerNormChainTol[T](in.cfg.Chain(in.cols), st)
			tol = func(c int) float64 { return rt(float64(xr[c]), float64(in.gamma[c]), float64(in.beta[c])) }
		}
		if err := kernels.CheckClose(fmt.Sprintf("%s row %d", in.what(), r), got, want, tol); err != nil {
			return err
		}
	}
	return nil
}

func (in *rowInstance[T]) what() string {
	if in.kind == rowSoftmax {
		return "softmax"
	}
	return "layernorm"
}

// Model: softmax reads x and writes y once (the cached path, which the launcher's builds take
// at cols = 1024, and at 8192 where the device allows work-groups of 512 items) and counts 4
// FLOPs per element (subtract, exp, add, divide); layernorm also reads gamma and beta once
// and counts 8 (sum; subtract, square, add; subtract, two products, add).
func (in *rowInstance[T]) Model() kernels.Model {
	n, e := float64(in.rows*in.cols), float64(engine.SizeOf[T]())
	if in.kind == rowSoftmax {
		return kernels.Model{Flops: 4 * n, Bytes: 2 * n * e}
	}
	return kernels.Model{Flops: 8 * n, Bytes: (2*n + 2*float64(in.cols)) * e}
}

func (in *rowInstance[T]) Shape() string { return fmt.Sprintf("rows=%d cols=%d", in.rows, in.cols) }

func (in *rowInstance[T]) Close() error {
	errs := []error{in.out.Close(), in.bg.Close(), in.bb.Close(), in.x.Close()}
	if in.sm != nil {
		errs = append(errs, in.sm.Close())
	}
	if in.ln != nil {
		errs = append(errs, in.ln.Close())
	}
	if in.warp != nil {
		errs = append(errs, in.warp.Close())
	}
	return errors.Join(errs...)
}
