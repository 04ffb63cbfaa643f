package reduce

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// ReduceOp names one operation of the reduce family.
type ReduceOp string

// The reduce operations. Min and max ignore NaNs; argmin and argmax return the index of the
// first occurrence (the smallest index among equal values) as an int32, with the value.
// An int32 sum wraps modulo 2^32. See reduce.cl for the exact semantics.
const (
	ReduceSum    ReduceOp = "sum"
	ReduceMin    ReduceOp = "min"
	ReduceMax    ReduceOp = "max"
	ReduceArgMin ReduceOp = "argmin"
	ReduceArgMax ReduceOp = "argmax"
)

// ReduceOps lists the reduce operations in their canonical order.
var ReduceOps = []ReduceOp{ReduceSum, ReduceMin, ReduceMax, ReduceArgMin, ReduceArgMax}

// index returns the position of op in ReduceOps, or -1.
func (op ReduceOp) index() int {
	for i, o := range ReduceOps {
		if o == op {
			return i
		}
	}
	return -1
}

// IsArg reports whether op returns an index (argmin, argmax).
func (op ReduceOp) IsArg() bool { return op == ReduceArgMin || op == ReduceArgMax }

// ReduceElem is the set of element types the reduce family computes in.
type ReduceElem interface{ float32 | float64 | int32 }

// reduceDefines returns the -D options that select element type T in reduce.cl: an int32
// sum accumulates in uint (wrapping without undefined behaviour), and min and max start
// from the type's limits.
func reduceDefines[T ReduceElem](dev *engine.Device) ([]string, error) {
	t := kernels.TypeOf[T]()
	opts, err := t.Defines(dev)
	if err != nil || t.Float {
		return opts, err
	}
	return append(opts, "-DACC=uint", "-DELEM_MAX=INT_MAX", "-DELEM_LOWEST=INT_MIN"), nil
}

// Reduce runs the reduce family in element type T on one device. It is safe for concurrent
// use by goroutines that each use their own Queue.
type Reduce[T ReduceElem] struct {
	dev       *engine.Device
	prog      *engine.Program
	grid      [5]*engine.Kernel // whole array, by ReduceOps index
	rows      [5]*engine.Kernel // per row, by ReduceOps index
	pairs     [2]*engine.Kernel // second pass of argmin, argmax
	wg        int
	maxGroups int
	// loops is the device's limit on a work-item's loop iterations (kernels.LoopLimit), 0
	// for none: Rows and ArgRows refuse rows too long for it (checkRowLoops).
	loops int
}

// NewReduce compiles the reduce family for dev with a work-group of up to 256 items. It
// returns an error wrapping engine.ErrUnsupported when T is float64 and the device has no
// fp64.
func NewReduce[T ReduceElem](dev *engine.Device) (*Reduce[T], error) {
	return newReduce[T](dev, 256)
}

// newReduce compiles with a work-group of up to want items (tests use small ones).
func newReduce[T ReduceElem](dev *engine.Device, want int) (*Reduce[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: reduce: nil device: %w", engine.ErrInvalidArg)
	}
	opts, err := reduceDefines[T](dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, "reduce", func(lim kernels.Limits) (*Reduce[T], kernels.Shape, error) {
		wg := lim.Group(want)
		prog, err := dev.Build(source, append(opts, fmt.Sprintf("-DWG=%d", wg))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		// 32 groups per compute unit, as stream_dot: enough to fill a GPU, few partials; where
		// the device ends a work-item's loops early (kernels.LoopLimit: Mesa's llvmpipe), as
		// many as keep the grid loops over 2^31-1 elements within it (argmin and argmax take an
		// element a step: at 32 a compute unit they went wrong there past about 134M elements
		// at two compute units).
		r := &Reduce[T]{dev: dev, prog: prog, wg: wg, loops: kernels.LoopLimit(dev),
			maxGroups: max(max(dev.Info().ComputeUnits, 1)*32, kernels.GroupsWithin(kernels.LoopLimit(dev), (math.MaxInt32+wg-1)/wg, 1, 16))}
		var refs []kernels.Ref
		for i, op := range ReduceOps {
			refs = append(refs, kernels.Ref{Dst: &r.grid[i], Name: "reduce_" + string(op)}, kernels.Ref{Dst: &r.rows[i], Name: "reduce_row" + string(op)})
		}
		refs = append(refs, kernels.Ref{Dst: &r.pairs[0], Name: "reduce_argmin_pairs"}, kernels.Ref{Dst: &r.pairs[1], Name: "reduce_argmax_pairs"})
		ks, err := kernels.LoadKernels(prog, refs...)
		if err != nil {
			r.Close()
			return nil, kernels.Shape{}, err
		}
		return r, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the compiled kernels. Idempotent.
func (r *Reduce[T]) Close() error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, k := range append(append(r.grid[:], r.rows[:]...), r.pairs[:]...) {
		errs = append(errs, k.Close())
	}
	return errors.Join(append(errs, r.prog.Close())...)
}

// WorkGroup returns the work-group size the family was compiled with on this device.
func (r *Reduce[T]) WorkGroup() int { return r.wg }

// groups returns the number of work-groups of pass 1 over n elements.
func (r *Reduce[T]) groups(n int) int {
	return max(min((n+r.wg-1)/r.wg, r.maxGroups), 1)
}

// Scratch returns the number of partial results a whole-array reduction of n elements
// needs: the length of Into's part, and of both of ArgInto's partVal and partIdx.
func (r *Reduce[T]) Scratch(n int) int { return r.groups(n) }

// Chain returns the longest chain of additions by which a whole-array sum of n elements
// accumulates any one element: gridChain(n, G*WG) in pass 1 (G groups) and log2(WG) in its
// tree; when G > 1, gridChain(G, WG) and log2(WG) more in pass 2. ReduceTolerance turns it
// into an error bound.
func (r *Reduce[T]) Chain(n int) int {
	g := r.groups(n)
	c := gridChain(n, g*r.wg) + kernels.Log2Ceil(r.wg)
	if g > 1 {
		c += gridChain(g, r.wg) + kernels.Log2Ceil(r.wg)
	}
	return c
}

// gridChain returns the longest chain of additions by which RED_GRID's loop (reduce.cl),
// run by items work-items over m elements, accumulates any one element into an item's
// partial. An item sums component c of each 4-element vector it reads in lane accumulator
// c, one addition per vector: at most ceil(floor(m/4) / items) vectors (item 0 reads the
// most); lane 0 of items 0..m%4-1 adds one tail element after them; the four lanes then
// combine in a tree of depth 2.
func gridChain(m, items int) int {
	c := (m/4+items-1)/items + 2
	if m%4 != 0 {
		c++
	}
	return c
}

// segment returns the number of work-items that reduce one row of cols elements: the
// power of two at or above cols, at most the work-group size.
func (r *Reduce[T]) segment(cols int) int {
	return min(1<<kernels.Log2Ceil(cols), r.wg)
}

// RowChain returns the longest chain of additions of a per-row sum over cols columns:
// ceil(cols/seg) in each item's loop and log2(seg) in the tree (seg items per row).
func (r *Reduce[T]) RowChain(cols int) int {
	seg := r.segment(cols)
	return (cols+seg-1)/seg + kernels.Log2Ceil(seg)
}

func reduceNil(op ReduceOp, what string) error {
	return fmt.Errorf("kernels: reduce %s: nil %s buffer: %w", op, what, engine.ErrInvalidArg)
}

// checkOp validates op for a call that does (arg) or does not return indices.
func checkReduceOp(op ReduceOp, arg bool) error {
	if op.index() < 0 {
		return fmt.Errorf("kernels: reduce: no operation %q (have sum, min, max, argmin, argmax): %w", op, engine.ErrInvalidArg)
	}
	if op.IsArg() != arg {
		call := "Into/Rows (sum, min, max)"
		if arg {
			call = "ArgInto/ArgRows (argmin, argmax)"
		}
		return fmt.Errorf("kernels: reduce %s: not an operation of %s: %w", op, call, engine.ErrInvalidArg)
	}
	return nil
}

// checkN validates the element count n of a whole-array reduction of x.
func checkReduceN[T ReduceElem](op ReduceOp, x *engine.Buffer[T], n int) error {
	if x == nil {
		return reduceNil(op, "input")
	}
	switch {
	case n < 1:
		return fmt.Errorf("kernels: reduce %s: n = %d; must be at least 1: %w", op, n, engine.ErrInvalidArg)
	case n > x.Len():
		return fmt.Errorf("kernels: reduce %s: n = %d but the input holds %d elements: %w", op, n, x.Len(), engine.ErrInvalidArg)
	case n > math.MaxInt32:
		return fmt.Errorf("kernels: reduce %s: n = %d exceeds the family's limit of 2^31-1: %w", op, n, engine.ErrInvalidArg)
	}
	return nil
}

// Into writes op (sum, min or max) of x[0:n) to out[0]. part is scratch space of at least
// Scratch(n) elements (unused when Scratch(n) is 1, and then may be nil). Buffers are the
// caller's, so repeated calls allocate nothing.
func (r *Reduce[T]) Into(q *engine.Queue, op ReduceOp, out, part, x *engine.Buffer[T], n int) error {
	if err := checkReduceOp(op, false); err != nil {
		return err
	}
	if err := checkReduceN(op, x, n); err != nil {
		return err
	}
	if out == nil {
		return reduceNil(op, "output")
	}
	if out.Len() < 1 {
		return fmt.Errorf("kernels: reduce %s: empty output buffer: %w", op, engine.ErrInvalidArg)
	}
	k, g := r.grid[op.index()], r.groups(n)
	if g == 1 {
		return q.Launch(k, engine.Range1D(r.wg, r.wg), out, x, int32(n))
	}
	if part == nil || part.Len() < g {
		return fmt.Errorf("kernels: reduce %s: scratch of %d elements, need %d (Scratch): %w", op, kernels.LenOf(part), g, engine.ErrInvalidArg)
	}
	if err := q.Launch(k, engine.Range1D(g*r.wg, r.wg), part, x, int32(n)); err != nil {
		return err
	}
	return q.Launch(k, engine.Range1D(r.wg, r.wg), out, part, int32(g))
}

// ArgInto writes op (argmin or argmax) of x[0:n) to outVal[0] (the value) and outIdx[0]
// (its index: the first occurrence; -1 when every element is NaN). partVal and partIdx are
// scratch space of at least Scratch(n) elements each (unused, and may be nil, when
// Scratch(n) is 1).
func (r *Reduce[T]) ArgInto(q *engine.Queue, op ReduceOp, outVal *engine.Buffer[T], outIdx *engine.Buffer[int32],
	partVal *engine.Buffer[T], partIdx *engine.Buffer[int32], x *engine.Buffer[T], n int) error {
	if err := checkReduceOp(op, true); err != nil {
		return err
	}
	if err := checkReduceN(op, x, n); err != nil {
		return err
	}
	if outVal == nil || outIdx == nil {
		return reduceNil(op, "output")
	}
	if outVal.Len() < 1 || outIdx.Len() < 1 {
		return fmt.Errorf("kernels: reduce %s: empty output buffer: %w", op, engine.ErrInvalidArg)
	}
	i, g := op.index(), r.groups(n)
	if g == 1 {
		return q.Launch(r.grid[i], engine.Range1D(r.wg, r.wg), outVal, outIdx, x, int32(n))
	}
	if partVal == nil || partIdx == nil || partVal.Len() < g || partIdx.Len() < g {
		return fmt.Errorf("kernels: reduce %s: scratch of %d values and %d indices, need %d (Scratch): %w",
			op, kernels.LenOf(partVal), kernels.LenOf(partIdx), g, engine.ErrInvalidArg)
	}
	if err := q.Launch(r.grid[i], engine.Range1D(g*r.wg, r.wg), partVal, partIdx, x, int32(n)); err != nil {
		return err
	}
	return q.Launch(r.pairs[i-ReduceArgMin.index()], engine.Range1D(r.wg, r.wg), outVal, outIdx, partVal, partIdx, int32(g))
}

// checkRows validates a per-row reduction of the row-major rows x cols matrix x.
func checkReduceRows[T ReduceElem](op ReduceOp, x *engine.Buffer[T], rows, cols int) error {
	if x == nil {
		return reduceNil(op, "input")
	}
	switch {
	case rows < 1 || cols < 1:
		return fmt.Errorf("kernels: reduce row%s: %d x %d matrix; both must be at least 1: %w", op, rows, cols, engine.ErrInvalidArg)
	case rows > math.MaxInt32/cols:
		return fmt.Errorf("kernels: reduce row%s: %d x %d elements exceeds the family's limit of 2^31-1: %w", op, rows, cols, engine.ErrInvalidArg)
	case rows*cols > x.Len():
		return fmt.Errorf("kernels: reduce row%s: %d x %d matrix but the input holds %d elements: %w", op, rows, cols, x.Len(), engine.ErrInvalidArg)
	}
	return nil
}

// checkRowLoops returns an error wrapping engine.ErrUnsupported where the device ends a
// work-item's loops early (kernels.LoopLimit: Mesa's llvmpipe) before a row of cols
// elements is reduced: each of a row's segment work-items walks ceil(cols/segment) of it
// (on Rusticl, 32 items: ceil(cols/32) + 7 iterations, measured), within 90% of the limit.
func (r *Reduce[T]) checkRowLoops(op ReduceOp, cols int) error {
	if r.loops <= 0 {
		return nil
	}
	seg := r.segment(cols)
	return kernels.CheckLoops(r.loops, (cols+seg-1)/seg+32, "reduce row%s: rows of %d elements (%d work-items a row)", op, cols, seg)
}

// rowRange returns the launch range and segment of a per-row reduction.
func (r *Reduce[T]) rowRange(rows, cols int) (engine.Range, int32) {
	seg := r.segment(cols)
	per := r.wg / seg
	return engine.Range1D((rows+per-1)/per*r.wg, r.wg), int32(seg)
}

// Rows writes op (sum, min or max) of each row of the row-major rows x cols matrix in
// x[0:rows*cols) to out[0:rows).
func (r *Reduce[T]) Rows(q *engine.Queue, op ReduceOp, out, x *engine.Buffer[T], rows, cols int) error {
	if err := checkReduceOp(op, false); err != nil {
		return err
	}
	if err := checkReduceRows(op, x, rows, cols); err != nil {
		return err
	}
	if err := r.checkRowLoops(op, cols); err != nil {
		return err
	}
	if out == nil {
		return reduceNil(op, "output")
	}
	if out.Len() < rows {
		return fmt.Errorf("kernels: reduce row%s: output of %d elements for %d rows: %w", op, out.Len(), rows, engine.ErrInvalidArg)
	}
	rg, seg := r.rowRange(rows, cols)
	return q.Launch(r.rows[op.index()], rg, out, x, int32(rows), int32(cols), seg)
}

// ArgRows writes op (argmin or argmax) of each row of the row-major rows x cols matrix in
// x[0:rows*cols) to outVal[0:rows) (values) and outIdx[0:rows) (column indices, the first
// occurrence in the row; -1 for a row of NaNs).
func (r *Reduce[T]) ArgRows(q *engine.Queue, op ReduceOp, outVal *engine.Buffer[T], outIdx *engine.Buffer[int32],
	x *engine.Buffer[T], rows, cols int) error {
	if err := checkReduceOp(op, true); err != nil {
		return err
	}
	if err := checkReduceRows(op, x, rows, cols); err != nil {
		return err
	}
	if err := r.checkRowLoops(op, cols); err != nil {
		return err
	}
	if outVal == nil || outIdx == nil {
		return reduceNil(op, "output")
	}
	if outVal.Len() < rows || outIdx.Len() < rows {
		return fmt.Errorf("kernels: reduce row%s: outputs of %d values and %d indices for %d rows: %w",
			op, outVal.Len(), outIdx.Len(), rows, engine.ErrInvalidArg)
	}
	rg, seg := r.rowRange(rows, cols)
	return q.Launch(r.rows[op.index()], rg, outVal, outIdx, x, int32(rows), int32(cols), seg)
}

// Reduce returns op (sum, min or max) of all of x, allocating its scratch space. It waits
// for the result, or until ctx is done; so do Sum, Min, Max, Arg, ArgMin and ArgMax.
func (r *Reduce[T]) Reduce(ctx context.Context, q *engine.Queue, op ReduceOp, x *engine.Buffer[T]) (T, error) {
	if err := checkReduceOp(op, false); err != nil {
		return 0, err
	}
	if x == nil {
		return 0, reduceNil(op, "input")
	}
	n := x.Len()
	out, err := engine.NewBuffer[T](r.dev, 1)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	var part *engine.Buffer[T]
	if g := r.groups(n); g > 1 {
		if part, err = engine.NewBuffer[T](r.dev, g); err != nil {
			return 0, err
		}
		defer part.Close()
	}
	if err := r.Into(q, op, out, part, x, n); err != nil {
		return 0, err
	}
	var v [1]T
	err = out.Read(ctx, q, 0, v[:])
	return v[0], err
}

// Sum returns the sum of all of x (an int32 sum wraps modulo 2^32).
func (r *Reduce[T]) Sum(ctx context.Context, q *engine.Queue, x *engine.Buffer[T]) (T, error) {
	return r.Reduce(ctx, q, ReduceSum, x)
}

// Min returns the smallest element of x (NaNs ignored).
func (r *Reduce[T]) Min(ctx context.Context, q *engine.Queue, x *engine.Buffer[T]) (T, error) {
	return r.Reduce(ctx, q, ReduceMin, x)
}

// Max returns the largest element of x (NaNs ignored).
func (r *Reduce[T]) Max(ctx context.Context, q *engine.Queue, x *engine.Buffer[T]) (T, error) {
	return r.Reduce(ctx, q, ReduceMax, x)
}

// Arg returns op (argmin or argmax) of all of x: the value and the index of its first
// occurrence (-1 when every element is NaN), allocating its scratch space.
func (r *Reduce[T]) Arg(ctx context.Context, q *engine.Queue, op ReduceOp, x *engine.Buffer[T]) (T, int32, error) {
	if err := checkReduceOp(op, true); err != nil {
		return 0, 0, err
	}
	if x == nil {
		return 0, 0, reduceNil(op, "input")
	}
	n := x.Len()
	vals, err := engine.NewBuffer[T](r.dev, 1)
	if err != nil {
		return 0, 0, err
	}
	defer vals.Close()
	idx, err := engine.NewBuffer[int32](r.dev, 1)
	if err != nil {
		return 0, 0, err
	}
	defer idx.Close()
	var pv *engine.Buffer[T]
	var pi *engine.Buffer[int32]
	if g := r.groups(n); g > 1 {
		if pv, err = engine.NewBuffer[T](r.dev, g); err != nil {
			return 0, 0, err
		}
		defer pv.Close()
		if pi, err = engine.NewBuffer[int32](r.dev, g); err != nil {
			return 0, 0, err
		}
		defer pi.Close()
	}
	if err := r.ArgInto(q, op, vals, idx, pv, pi, x, n); err != nil {
		return 0, 0, err
	}
	var v [1]T
	var i [1]int32
	if err := vals.Read(ctx, q, 0, v[:]); err != nil {
		return 0, 0, err
	}
	if err := idx.Read(ctx, q, 0, i[:]); err != nil {
		return 0, 0, err
	}
	return v[0], i[0], nil
}

// ArgMin returns the smallest element of x and the index of its first occurrence.
func (r *Reduce[T]) ArgMin(ctx context.Context, q *engine.Queue, x *engine.Buffer[T]) (T, int32, error) {
	return r.Arg(ctx, q, ReduceArgMin, x)
}

// ArgMax returns the largest element of x and the index of its first occurrence.
func (r *Reduce[T]) ArgMax(ctx context.Context, q *engine.Queue, x *engine.Buffer[T]) (T, int32, error) {
	return r.Arg(ctx, q, ReduceArgMax, x)
}
