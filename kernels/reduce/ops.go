package reduce

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed reduce.cl
var source string

// Family returns the reduce family: its OpenCL C source (reduce.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	return kernels.Family{Name: "reduce", Source: source, Ops: []kernels.Op{
		reduceOp[float32](ReduceSum, false), reduceOp[float64](ReduceSum, false), reduceOp[int32](ReduceSum, false),
		reduceOp[float32](ReduceMax, false), reduceOp[float32](ReduceArgMin, false), reduceOp[int32](ReduceArgMax, false),
		reduceOp[float32](ReduceSum, true), reduceOp[float32](ReduceMax, true),
	}}
}

// reduceCols is the row length of the per-row ops.
const reduceCols = 1024

var reduceDocs = map[ReduceOp]string{
	ReduceSum:    "sum of x (grid-stride accumulation, work-group tree, two passes)",
	ReduceMin:    "min of x (NaNs ignored)",
	ReduceMax:    "max of x (NaNs ignored)",
	ReduceArgMin: "value and first index of the min of x",
	ReduceArgMax: "value and first index of the max of x",
}

func reduceOp[T ReduceElem](op ReduceOp, rows bool) kernels.Op {
	tn := kernels.TypeName[T]()
	name, doc, sizeDoc := "reduce/"+string(op)+"/"+tn, reduceDocs[op], "n elements"
	if rows {
		name = "reduce/row" + string(op) + "/" + tn
		doc = fmt.Sprintf("%s of each row of a row-major matrix (one work-group per row of %d)", op, reduceCols)
		sizeDoc = fmt.Sprintf("rows of %d columns: rows = max(1, round(size/%d))", reduceCols, reduceCols)
	}
	if _, ok := any(*new(T)).(int32); ok && op == ReduceSum {
		doc += "; wraps modulo 2^32"
	}
	variants := kernels.Portable(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		return setupReduce[T](ctx, q, name, op, rows, false, p)
	})
	if op == ReduceSum && !rows {
		variants = append([]kernels.Variant{shflVariant[T](name)}, variants...)
	}
	variants = append(vendorVariants[T](name, op, rows), variants...)
	o := kernels.Op{
		Name: name, Family: "reduce", Type: tn, Doc: doc, SizeDoc: sizeDoc,
		DefaultSize: 1 << 25, QuickSize: 1 << 20,
		Variants: variants,
	}
	// Across devices by ranges of elements, or of rows (split.go).
	o.Split = reduceSplitter[T](o, op, rows)
	return o
}

// shflVariant is the "cuda-shfl" variant of the whole-array sums (reduce.cu).
func shflVariant[T ReduceElem](name string) kernels.Variant {
	return kernels.Variant{
		Name: "cuda-shfl", Doc: "one launch: 16-byte loads, warp shuffles, the last block sums the partials (CUDA C++)",
		Dialect: engine.DialectCUDA, Backend: "cuda", MinCompute: 70,
		Tunables: fmt.Sprintf("BLOCK=%d UNROLL=4 VEC=%d; 8 blocks per SM", shflBlock, 16/engine.SizeOf[T]()),
		Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			return setupReduce[T](ctx, q, name, ReduceSum, false, true, p)
		},
	}
}

// reduceInstance runs one reduce op over rotating input sets.
type reduceInstance[T ReduceElem] struct {
	op         ReduceOp
	r          *Reduce[T]
	shfl       *SumShfl[T] // the cuda-shfl variant of a whole-array sum, else nil
	rows, cols int         // rows == 0: whole array of cols elements
	x          *kernels.Inputs[T]
	out, part  *engine.Buffer[T]
	idx, pidx  *engine.Buffer[int32]
}

// reduceInputs returns n seeded inputs for op: floats uniform in [-1, 1); int32 uniform
// over the whole range for sum (so that the sum wraps) and in [-1000, 1000] otherwise (so
// that the extreme value repeats and argmin/argmax must pick the first occurrence).
func reduceInputs[T ReduceElem](rng *rand.Rand, op ReduceOp, n int) []T {
	x := make([]T, n)
	var z T
	_, isInt := any(z).(int32)
	for i := range x {
		switch {
		case isInt && op == ReduceSum:
			x[i] = T(int32(rng.Uint32()))
		case isInt:
			x[i] = T(rng.IntN(2001) - 1000)
		default:
			x[i] = T(2*rng.Float64() - 1)
		}
	}
	return x
}

// setupReduce sets up op; shfl selects the cuda-shfl variant (whole-array sums only).
func setupReduce[T ReduceElem](ctx context.Context, q *engine.Queue, name string, op ReduceOp, rows, shfl bool, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	in := &reduceInstance[T]{op: op, cols: p.Size}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	if shfl {
		if in.shfl, err = NewSumShfl[T](q); err != nil {
			return nil, err
		}
	} else if in.r, err = NewReduce[T](q.Device()); err != nil {
		return nil, err
	}
	if rows {
		in.rows, in.cols = max(1, (p.Size+reduceCols/2)/reduceCols), reduceCols
	}
	n := max(in.rows, 1) * in.cols
	rng := kernels.NewRand(p.Seed, 0x726564756365) // "reduce"
	in.x, err = kernels.NewInputs(ctx, q, p, n*engine.SizeOf[T](), func(int) [][]T { return [][]T{reduceInputs[T](rng, op, n)} })
	if err != nil {
		return nil, err
	}
	outs, g := 1, 0
	if in.r != nil {
		g = in.r.Scratch(n)
	}
	if rows {
		outs, g = in.rows, 0
	}
	dev := q.Device()
	if in.out, err = engine.NewBuffer[T](dev, outs); err != nil {
		return nil, err
	}
	if g > 1 {
		if in.part, err = engine.NewBuffer[T](dev, g); err != nil {
			return nil, err
		}
	}
	if op.IsArg() {
		if in.idx, err = engine.NewBuffer[int32](dev, outs); err != nil {
			return nil, err
		}
		if g > 1 {
			if in.pidx, err = engine.NewBuffer[int32](dev, g); err != nil {
				return nil, err
			}
		}
	}
	return in, nil
}

func (in *reduceInstance[T]) Run(ctx context.Context, q *engine.Queue) error {
	x := in.x.Next()[0]
	switch {
	case in.shfl != nil:
		return in.shfl.Into(q, in.out, x, in.cols)
	case in.rows > 0 && in.op.IsArg():
		return in.r.ArgRows(q, in.op, in.out, in.idx, x, in.rows, in.cols)
	case in.rows > 0:
		return in.r.Rows(q, in.op, in.out, x, in.rows, in.cols)
	case in.op.IsArg():
		return in.r.ArgInto(q, in.op, in.out, in.idx, in.part, in.pidx, x, in.cols)
	}
	return in.r.Into(q, in.op, in.out, in.part, x, in.cols)
}

// Verify compares every output with the reference (one pass over the input on the host).
func (in *reduceInstance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := in.out.Download(ctx, q)
	if err != nil {
		return err
	}
	var gotIdx []int32
	if in.op.IsArg() {
		if gotIdx, err = in.idx.Download(ctx, q); err != nil {
			return err
		}
	}
	last, err := in.x.Last(ctx)
	if err != nil {
		return err
	}
	x, rows, cols := last[0], max(in.rows, 1), in.cols
	var chain int
	switch {
	case in.shfl != nil:
		chain = in.shfl.Chain(cols)
	case in.rows > 0:
		chain = in.r.RowChain(cols)
	default:
		chain = in.r.Chain(cols)
	}
	what := "reduce " + string(in.op)
	if in.rows > 0 {
		what = "reduce row" + string(in.op)
	}
	return checkReduce(what, in.op, x, rows, cols, chain, got, gotIdx)
}

// checkReduce compares per-row results got (and gotIdx for arg ops) of op over the
// row-major rows x cols matrix x with the reference, within ReduceTolerance.
func checkReduce[T ReduceElem](what string, op ReduceOp, x []T, rows, cols, chain int, got []T, gotIdx []int32) error {
	if len(got) < rows || (op.IsArg() && len(gotIdx) < rows) {
		return fmt.Errorf("%w: %s: %d results for %d rows", kernels.ErrVerify, what, len(got), rows)
	}
	want, wantIdx := ReduceRowsRef(op, x, rows, cols)
	for r := range rows {
		row := x[r*cols : (r+1)*cols]
		var sumAbs float64
		if op == ReduceSum {
			for _, v := range row {
				sumAbs += math.Abs(float64(v))
			}
		}
		tol := ReduceTolerance[T](op, chain, sumAbs)
		g := float64(got[r])
		if d := math.Abs(g - want[r]); g != want[r] && !(d <= tol) {
			return fmt.Errorf("%w: %s: row %d of %d = %v, want %v (|diff| %.3g > tolerance %.3g)", kernels.ErrVerify, what, r, rows, got[r], want[r], d, tol)
		}
		if op.IsArg() && int(gotIdx[r]) != wantIdx[r] {
			return fmt.Errorf("%w: %s: row %d of %d: index %d, want %d (first occurrence of %v)", kernels.ErrVerify, what, r, rows, gotIdx[r], wantIdx[r], want[r])
		}
	}
	return nil
}

// Model: each input element read once, each output written once; one addition per
// element for sums, no floating-point work for the selections.
func (in *reduceInstance[T]) Model() kernels.Model {
	rows, e := max(in.rows, 1), float64(engine.SizeOf[T]())
	n := float64(rows * in.cols)
	m := kernels.Model{Bytes: n*e + float64(rows)*e}
	if in.op.IsArg() {
		m.Bytes += float64(rows) * 4
	}
	if in.op == ReduceSum {
		m.Flops = n
	}
	return m
}

func (in *reduceInstance[T]) Shape() string {
	if in.rows > 0 {
		return fmt.Sprintf("rows=%d cols=%d", in.rows, in.cols)
	}
	return fmt.Sprintf("n=%d", in.cols)
}

func (in *reduceInstance[T]) Close() error {
	return errors.Join(in.out.Close(), in.part.Close(), in.idx.Close(), in.pidx.Close(), in.x.Close(), in.r.Close(), in.shfl.Close())
}
