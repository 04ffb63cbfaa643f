package reduce

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
)

// A reduction split across devices (kernels.Splitter): each device reduces a contiguous
// range of the elements with the implementation a one-device Setup gives it (the one
// Params names, or Pick's choice for that device), its result is read back, and the
// results are combined on the host: float sums added in float64, int32 sums modulo 2^32,
// min and max and their indices exactly (the first occurrence wins, as on one device).
// The per-row ops split by rows, each device's rows read back into one result. The inputs
// are the one-device op's, generated once on the host from Params.Seed, and each device
// gets its range of them at setup.

// splitGranule is the unit in which a whole-array reduction's elements are given out: 16
// work-groups of 256 items, so that a part of one granule still fills every item of a
// small device's grid and the shares stay multiples of any vector load.
const splitGranule = 4096

// reduceSplitter returns the Splitter of a reduce op.
func reduceSplitter[T ReduceElem](op kernels.Op, rop ReduceOp, rows bool) kernels.Splitter {
	return func(ctx context.Context, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (kernels.SplitInstance, error) {
		sp, err := newReduceSplit[T](ctx, op, rop, rows, devs, p, o)
		if err != nil {
			return nil, err
		}
		return sp, nil
	}
}

// reduceSplit is a reduction set up across devices.
type reduceSplit[T ReduceElem] struct {
	*kernels.SplitRun[*reducePart[T]]
	op    kernels.Op
	p     kernels.Params
	shape reduceInstance[T] // op, rows and cols as the one-device instance has them
	x     []T               // the input on the host, as the one-device op generates it
	// The result of the last Run: the combined value and index (whole array), or each
	// row's (per row).
	val    float64
	idx    int
	got    []T
	gotIdx []int32
	// Sharded data (kernels.PlaceSharded): the input scattered over the devices with a
	// share, reduced where it lies by sr, the result of the last Run left on every device.
	sx  *shard.Buffer[T]
	sr  *ShardedReduce[T]
	res *shard.Buffer[T]
	// g combines the parts' values where the devices with a share offer a collective
	// library (NCCL), kept across the plan check's layouts while they hold the same
	// devices; nil combines on the host.
	g *shard.Group
}

// reducePart is one device's part: its queue, implementation and range.
type reducePart[T ReduceElem] struct {
	sp      *reduceSplit[T]
	dev     *engine.Device
	q       *engine.Queue
	r       *Reduce[T]
	shfl    *SumShfl[T]
	blas    *engine.BLAS
	variant string
	blk     reduceBlock[T] // the share's range
	probe   reduceBlock[T]
	// probeUnits is the units of the probe StartProbe started, for FinishProbe.
	probeUnits int
	val        []T // a whole-array part's result: its one value and index
	idx        []int32
}

// reduceBlock is a range of the input on a device: units elements (or rows) from off, and
// the buffers its reduction reads and writes.
type reduceBlock[T ReduceElem] struct {
	off, units int
	x          *engine.Buffer[T]
	out, part  *engine.Buffer[T]
	idx, pidx  *engine.Buffer[int32]
	scratch    []T // the probe's read-back of a per-row result
	scratchIdx []int32
}

func (b *reduceBlock[T]) close() error {
	err := errors.Join(b.x.Close(), b.out.Close(), b.part.Close(), b.idx.Close(), b.pidx.Close())
	*b = reduceBlock[T]{}
	return err
}

func newReduceSplit[T ReduceElem](ctx context.Context, op kernels.Op, rop ReduceOp, rows bool, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (_ *reduceSplit[T], err error) {
	if err := kernels.CheckSize(op.Name, p); err != nil {
		return nil, err
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("kernels: %s: split across no device: %w", op.Name, engine.ErrInvalidArg)
	}
	for i, d := range devs {
		if d == nil {
			return nil, fmt.Errorf("kernels: %s: split across a nil device (%d of %d): %w", op.Name, i+1, len(devs), engine.ErrInvalidArg)
		}
	}
	if err := kernels.CheckSharded(op.Name, o, !rows && !rop.IsArg() && (rop == ReduceSum || rop == ReduceMin || rop == ReduceMax)); err != nil {
		return nil, err
	}
	p.Rotate = false
	sp := &reduceSplit[T]{op: op, p: p, shape: reduceInstance[T]{op: rop, cols: p.Size}}
	if rows {
		sp.shape.rows, sp.shape.cols = max(1, (p.Size+reduceCols/2)/reduceCols), reduceCols
	}
	n := max(sp.shape.rows, 1) * sp.shape.cols
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("kernels: %s: size %d exceeds the family's limit of 2^31-1 elements: %w", op.Name, p.Size, engine.ErrInvalidArg)
	}
	// The one-device op's input: its first input set.
	sp.x = reduceInputs[T](kernels.NewRand(p.Seed, 0x726564756365), rop, n) // "reduce"
	total, granule := n, splitGranule
	if rows {
		total, granule = sp.shape.rows, 1
		sp.got = make([]T, total)
		if rop.IsArg() {
			sp.gotIdx = make([]int32, total)
		}
	}
	sp.SplitRun = kernels.NewSplitRun(op.Name, devs, o, sp.ready, sp.combine)
	if o.Placement == kernels.PlaceSharded {
		sp.SetSharded(kernels.Sharded{Scatter: sp.scatter, Run: sp.runSharded, Release: sp.closeSharded})
	}
	defer func() {
		if err != nil {
			sp.Close()
		}
	}()
	if o.Fractions == nil {
		// Every device is measured: each readies its implementation first, so that one
		// that cannot run the op says so before any is timed.
		if err := sp.OpenAll(ctx); err != nil {
			return nil, err
		}
	}
	if _, err := sp.Plan(ctx, total, granule); err != nil {
		return nil, err
	}
	if err := sp.Place(ctx); err != nil {
		return nil, err
	}
	return sp, nil
}

// scatter lays the input out over the devices with a share, each holding its share's
// elements on its part's queue, and readies the sharded reduction there.
func (sp *reduceSplit[T]) scatter(ctx context.Context) error {
	parts, counts, err := sp.Sharing(ctx)
	if err != nil {
		return err
	}
	var qs []*engine.Queue
	var devs []*engine.Device
	for _, pt := range parts {
		qs, devs = append(qs, pt.q), append(devs, pt.dev)
	}
	if sp.sr, err = NewShardedReduce[T](devs); err != nil {
		return err
	}
	if len(devs) > 1 && (sp.g == nil || !slices.Equal(sp.g.Devices(), devs)) {
		if err := sp.g.Close(); err != nil {
			return err
		}
		sp.g = nil
		// A group that cannot be formed (its library failing to start) leaves the combine
		// on the host, where it gives the same value: the trace says why.
		if g, gerr := shard.NewGroup(ctx, devs); gerr != nil {
			if ctx.Err() != nil {
				return gerr
			}
			engine.Tracef("%s: the parts' values are combined on the host: %v", sp.op.Name, gerr)
		} else {
			sp.g = g
			engine.Tracef("%s on sharded data over %d devices: the parts' values combined by %s", sp.op.Name, len(devs), shard.Via(g))
		}
	}
	sp.sx, err = shard.Scatter(ctx, qs, sp.x, shard.ByRows(1), counts)
	return err
}

// group returns the group that combines the parts of the data as it lies now, or nil
// (one device, or no collective library: combined on the host).
func (sp *reduceSplit[T]) group() *shard.Group {
	if sp.g != nil && slices.Equal(sp.g.Devices(), sp.sx.Devices()) {
		return sp.g
	}
	return nil
}

// Close releases the split, its sharded data and the group that combined it.
func (sp *reduceSplit[T]) Close() error {
	err := sp.SplitRun.Close()
	err = errors.Join(err, sp.g.Close())
	sp.g = nil
	return err
}

// closeSharded releases the sharded data, its reduction and its result.
func (sp *reduceSplit[T]) closeSharded() error {
	err := errors.Join(sp.res.Close(), sp.sx.Close())
	if sp.sr != nil {
		err = errors.Join(err, sp.sr.Close())
	}
	sp.res, sp.sx, sp.sr = nil, nil, nil
	return err
}

// runSharded reduces the sharded input.
func (sp *reduceSplit[T]) runSharded(ctx context.Context) error {
	sp.res.Close()
	sp.res = nil
	r, err := sp.sr.Reduce(ctx, sp.group(), sp.shape.op, sp.sx)
	if err != nil {
		return fmt.Errorf("kernels: %s: %w", sp.op.Name, err)
	}
	sp.res = r
	return r.Finish(ctx)
}

// verifySharded gathers the result of the last Run on sharded data and checks it against
// the float64 reference: min and max exactly, a float sum within ShardedTolerance.
func (sp *reduceSplit[T]) verifySharded(ctx context.Context) error {
	if err := sp.CheckRan(); err != nil {
		return err
	}
	got, err := sp.res.Gather(ctx)
	if err != nil {
		return err
	}
	op := sp.shape.op
	want, _ := ReduceRef(op, sp.x)
	var chains []int
	var sumAbs float64
	for _, p := range sp.sx.Parts() {
		chains = append(chains, sp.sr.on(p.Queue.Device()).Chain(p.Len))
	}
	for _, v := range sp.x {
		sumAbs += math.Abs(float64(v))
	}
	tol := 0.0
	if op == ReduceSum && kernels.TypeOf[T]().Float {
		tol = ShardedTolerance[T](op, chains, sumAbs)
	}
	if g := float64(got[0]); g != want && !(math.Abs(g-want) <= tol) {
		return fmt.Errorf("%w: reduce %s of %d sharded over %d devices = %v, want %v (|diff| %.3g > tolerance %.3g)",
			kernels.ErrVerify, op, len(sp.x), len(chains), g, want, math.Abs(g-want), tol)
	}
	return nil
}

// ready readies a part on dev, its queue and implementation: what Setup of the variant
// Pick chooses builds on the device (the compiled kernels, or the vendor library), set up
// at the smallest size and kept, the rest of that instance released.
func (sp *reduceSplit[T]) ready(ctx context.Context, dev *engine.Device) (_ *reducePart[T], err error) {
	pt := &reducePart[T]{sp: sp, dev: dev, val: make([]T, 1), idx: make([]int32, 1)}
	defer func() {
		if err != nil {
			pt.Close()
		}
	}()
	v, err := sp.op.Pick(pt.dev, sp.p)
	if err != nil {
		return nil, err
	}
	if pt.q, err = pt.dev.NewQueue(); err != nil {
		return nil, err
	}
	p := sp.p
	p.Size = 1
	inst, err := v.Setup(ctx, pt.q, p)
	if err != nil {
		return nil, err
	}
	var in *reduceInstance[T]
	switch x := inst.(type) {
	case *reduceInstance[T]:
		in = x
		pt.r, pt.shfl = in.r, in.shfl
		in.r, in.shfl = nil, nil
	case *vendorSum[T]:
		in, pt.blas = x.reduceInstance, x.blas
	default:
		inst.Close()
		return nil, fmt.Errorf("kernels: %s: variant %s does not run a range of the input: %w", sp.op.Name, v.Name, engine.ErrUnsupported)
	}
	pt.variant = v.Name
	return pt, in.Close()
}

// block uploads units elements (or rows) of the input from off to pt's device, with the
// outputs and scratch their reduction needs. Where the range runs past the input (a probe
// of more than the whole), the input repeats.
func (sp *reduceSplit[T]) block(ctx context.Context, pt *reducePart[T], off, units int) (_ reduceBlock[T], err error) {
	b := reduceBlock[T]{off: off, units: units}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	rows, cols := sp.shape.rows > 0, sp.shape.cols
	n, outs := units, 1
	if rows {
		n, outs = units*cols, units
		off *= cols
	}
	x := sp.x[off:min(off+n, len(sp.x))]
	if len(x) < n {
		x = make([]T, n)
		for i := range x {
			x[i] = sp.x[(off+i)%len(sp.x)]
		}
	}
	if b.x, err = engine.Upload(ctx, pt.q, x); err != nil {
		return b, err
	}
	if b.out, err = engine.NewBuffer[T](pt.dev, outs); err != nil {
		return b, err
	}
	g := 0
	if pt.r != nil && !rows {
		g = pt.r.Scratch(n)
	}
	if g > 1 {
		if b.part, err = engine.NewBuffer[T](pt.dev, g); err != nil {
			return b, err
		}
	}
	if sp.shape.op.IsArg() {
		if b.idx, err = engine.NewBuffer[int32](pt.dev, outs); err != nil {
			return b, err
		}
		if g > 1 {
			if b.pidx, err = engine.NewBuffer[int32](pt.dev, g); err != nil {
				return b, err
			}
		}
	}
	return b, nil
}

// run reduces units elements (or rows) of block b on pt's device and reads the result
// back: into pt.val and pt.idx for a whole array, into dst and dstIdx for rows.
func (pt *reducePart[T]) run(ctx context.Context, shape *reduceInstance[T], b *reduceBlock[T], units int, dst []T, dstIdx []int32) error {
	if err := pt.enqueue(shape, b, units); err != nil {
		return err
	}
	return pt.collect(ctx, shape, b, dst, dstIdx)
}

// enqueue enqueues the reduction of units elements (or rows) of block b on pt's queue.
func (pt *reducePart[T]) enqueue(shape *reduceInstance[T], b *reduceBlock[T], units int) error {
	op, cols := shape.op, shape.cols
	var err error
	switch {
	case pt.shfl != nil:
		err = pt.shfl.Into(pt.q, b.out, b.x, units)
	case pt.blas != nil:
		switch out := any(b.out).(type) {
		case *engine.Buffer[float32]:
			err = engine.Sum(pt.blas, pt.q, units, any(b.x).(*engine.Buffer[float32]), out)
		case *engine.Buffer[float64]:
			err = engine.Sum(pt.blas, pt.q, units, any(b.x).(*engine.Buffer[float64]), out)
		default:
			err = fmt.Errorf("kernels: reduce sum through %s: float types only: %w", pt.blas.Library().Name, engine.ErrUnsupported)
		}
	case shape.rows > 0 && op.IsArg():
		err = pt.r.ArgRows(pt.q, op, b.out, b.idx, b.x, units, cols)
	case shape.rows > 0:
		err = pt.r.Rows(pt.q, op, b.out, b.x, units, cols)
	case op.IsArg():
		err = pt.r.ArgInto(pt.q, op, b.out, b.idx, b.part, b.pidx, b.x, units)
	default:
		err = pt.r.Into(pt.q, op, b.out, b.part, b.x, units)
	}
	return err
}

// collect reads the result of block b's reduction back once it is done: into pt.val and
// pt.idx for a whole array, into dst and dstIdx for rows.
func (pt *reducePart[T]) collect(ctx context.Context, shape *reduceInstance[T], b *reduceBlock[T], dst []T, dstIdx []int32) error {
	op := shape.op
	if shape.rows == 0 {
		dst, dstIdx = pt.val, pt.idx
	}
	if err := b.out.Read(ctx, pt.q, 0, dst); err != nil {
		return err
	}
	if op.IsArg() {
		return b.idx.Read(ctx, pt.q, 0, dstIdx)
	}
	return nil
}

// LoadProbe uploads a range of units elements (or rows) from the start of the input,
// repeated past its end.
func (pt *reducePart[T]) LoadProbe(ctx context.Context, units int) error {
	sp := pt.sp
	if err := pt.probe.close(); err != nil {
		return err
	}
	var err error
	if pt.probe, err = sp.block(ctx, pt, 0, units); err != nil {
		return err
	}
	if sp.shape.rows > 0 {
		pt.probe.scratch = make([]T, pt.probe.units)
		pt.probe.scratchIdx = make([]int32, pt.probe.units)
	}
	return nil
}

// RunProbe reduces the probe's first units elements (or rows) and reads the result back.
func (pt *reducePart[T]) RunProbe(ctx context.Context, units int) error {
	b := &pt.probe
	var dst []T
	var dstIdx []int32
	if pt.sp.shape.rows > 0 {
		dst, dstIdx = b.scratch[:units], b.scratchIdx[:units]
	}
	return pt.run(ctx, &pt.sp.shape, b, units, dst, dstIdx)
}

// StartProbe enqueues the reduction of the probe's first units elements (or rows), as
// RunProbe's first half (kernels.SplitStarter).
func (pt *reducePart[T]) StartProbe(ctx context.Context, units int) error {
	pt.probeUnits = units
	return pt.enqueue(&pt.sp.shape, &pt.probe, units)
}

// FinishProbe reads the result of the probe StartProbe started back, once it is done.
func (pt *reducePart[T]) FinishProbe(ctx context.Context) error {
	b := &pt.probe
	var dst []T
	var dstIdx []int32
	if pt.sp.shape.rows > 0 {
		dst, dstIdx = b.scratch[:pt.probeUnits], b.scratchIdx[:pt.probeUnits]
	}
	return pt.collect(ctx, &pt.sp.shape, b, dst, dstIdx)
}

// Load uploads pt's share: units elements (or rows) from off.
func (pt *reducePart[T]) Load(ctx context.Context, off, units int) error {
	// The probe's work, and an earlier share's block (a plan's check gives a part its share
	// again).
	if err := errors.Join(pt.probe.close(), pt.blk.close()); err != nil {
		return err
	}
	var err error
	pt.blk, err = pt.sp.block(ctx, pt, off, units)
	return err
}

// Run reduces pt's share and reads its result back: its value and index, or its rows'
// into their place.
func (pt *reducePart[T]) Run(ctx context.Context) error {
	if err := pt.Start(ctx); err != nil {
		return err
	}
	return pt.Finish(ctx)
}

// Start enqueues the reduction of pt's share (kernels.SplitStarter).
func (pt *reducePart[T]) Start(ctx context.Context) error {
	return pt.enqueue(&pt.sp.shape, &pt.blk, pt.blk.units)
}

// Finish reads the result of pt's share back once it is done, as Run does.
func (pt *reducePart[T]) Finish(ctx context.Context) error {
	sp, b := pt.sp, &pt.blk
	var dst []T
	var dstIdx []int32
	if sp.shape.rows > 0 {
		dst = sp.got[b.off : b.off+b.units]
		if sp.gotIdx != nil {
			dstIdx = sp.gotIdx[b.off : b.off+b.units]
		}
	}
	return pt.collect(ctx, &sp.shape, b, dst, dstIdx)
}

// combine combines the parts' results of a whole-array reduction (combineParts).
func (sp *reduceSplit[T]) combine() {
	if sp.shape.rows == 0 {
		sp.val, sp.idx = combineParts(sp.shape.op, sp.Shares(), sp.Parts())
	}
}

// combineParts returns the whole array's result from the parts': float sums added in float64
// (compensated, as the reference), int32 sums modulo 2^32, and the extreme of the
// extremes, the earliest part winning ties, with its index in the whole array (-1 when no
// part found one).
func combineParts[T ReduceElem](op ReduceOp, shares []kernels.Share, parts []*reducePart[T]) (float64, int) {
	var z T
	_, isInt := any(z).(int32)
	switch {
	case op == ReduceSum && isInt:
		var s int32
		for i, pt := range parts {
			if shares[i].Units > 0 {
				s += int32(pt.val[0]) // wraps modulo 2^32, as the device
			}
		}
		return float64(s), -1
	case op == ReduceSum:
		var s, c float64 // Neumaier: s + c is the sum
		for i, pt := range parts {
			if shares[i].Units == 0 {
				continue
			}
			f := float64(pt.val[0])
			t := s + f
			if math.Abs(s) >= math.Abs(f) {
				c += (s - t) + f
			} else {
				c += (f - t) + s
			}
			s = t
		}
		return s + c, -1
	}
	less := op == ReduceMin || op == ReduceArgMin
	best, bi, found := reduceIdentity[T](less), -1, false
	for i, pt := range parts {
		if shares[i].Units == 0 || (op.IsArg() && pt.idx[0] < 0) {
			continue
		}
		f := float64(pt.val[0])
		if !found || (less && f < best) || (!less && f > best) {
			best, found = f, true
			if op.IsArg() {
				bi = pt.blk.off + int(pt.idx[0])
			}
		}
	}
	return best, bi
}

// Verify checks the combined result against the float64 reference. A float sum may differ
// by what each part's own summation may lose (its variant's bound over its range) plus the
// float64 additions that combine them; every other result must be exact.
func (sp *reduceSplit[T]) Verify(ctx context.Context) error {
	if sp.Placement() == kernels.PlaceSharded {
		return sp.verifySharded(ctx)
	}
	if err := sp.CheckRan(); err != nil {
		return err
	}
	op, rows, cols := sp.shape.op, sp.shape.rows, sp.shape.cols
	shares, parts := sp.Shares(), sp.Parts()
	if rows > 0 {
		chain := 0
		for i, pt := range parts {
			if shares[i].Units > 0 {
				chain = max(chain, pt.r.RowChain(cols))
			}
		}
		return checkReduce("reduce row"+string(op)+" split", op, sp.x, rows, cols, chain, sp.got, sp.gotIdx)
	}
	want, wantIdx := ReduceRef(op, sp.x)
	tol, used := 0.0, 0
	for _, sh := range shares {
		if sh.Units > 0 {
			used++
		}
	}
	if op == ReduceSum && kernels.TypeOf[T]().Float {
		var sumAbs float64
		for i, pt := range parts {
			u := shares[i].Units
			if u == 0 {
				continue
			}
			var partAbs float64
			for _, v := range sp.x[pt.blk.off : pt.blk.off+u] {
				partAbs += math.Abs(float64(v))
			}
			sumAbs += partAbs
			switch {
			case pt.blas != nil: // the library's order is not known
				tol += sumBound[T](u, partAbs) + kernels.Gamma[float64](3)*partAbs
			case pt.shfl != nil:
				tol += ReduceTolerance[T](op, pt.shfl.Chain(u), partAbs)
			default:
				tol += ReduceTolerance[T](op, pt.r.Chain(u), partAbs)
			}
		}
		tol += kernels.Gamma[float64](used+3) * sumAbs
	}
	if d := math.Abs(sp.val - want); sp.val != want && !(d <= tol) {
		return fmt.Errorf("%w: reduce %s of %d split over %d devices = %v, want %v (|diff| %.3g > tolerance %.3g)",
			kernels.ErrVerify, op, len(sp.x), used, sp.val, want, d, tol)
	}
	if op.IsArg() && sp.idx != wantIdx {
		return fmt.Errorf("%w: reduce %s split: index %d, want %d (first occurrence of %v)", kernels.ErrVerify, op, sp.idx, wantIdx, want)
	}
	return nil
}

// sumBound is kernels.SumBound in T, for a float T (0 otherwise: integer sums are exact).
func sumBound[T ReduceElem](k int, mag float64) float64 {
	switch any(*new(T)).(type) {
	case float32:
		return kernels.SumBound[float32](k, mag)
	case float64:
		return kernels.SumBound[float64](k, mag)
	}
	return 0
}

// Model is the whole reduction's, as the one-device instance reports it.
func (sp *reduceSplit[T]) Model() kernels.Model { return sp.shape.Model() }

func (sp *reduceSplit[T]) Shape() string { return sp.shape.Shape() }

// Variants returns the implementation each device with a share runs, in the order of the
// devices; "" for a device without a share.
func (sp *reduceSplit[T]) Variants() []string {
	out := make([]string, len(sp.Parts()))
	for i, pt := range sp.Parts() {
		if pt != nil {
			out[i] = pt.variant
		}
	}
	return out
}

// Close releases the part's buffers, kernels and queue.
func (pt *reducePart[T]) Close() error {
	errs := []error{pt.blk.close(), pt.probe.close(), pt.r.Close(), pt.shfl.Close()}
	pt.r, pt.shfl, pt.blas = nil, nil, nil
	if pt.q != nil {
		errs = append(errs, pt.q.Close())
		pt.q = nil
	}
	return errors.Join(errs...)
}

var _ kernels.SplitInstance = (*reduceSplit[float32])(nil)

// ShardedReduce reduces data sharded over devices (engine/shard) where it lies: each
// device reduces its part with the one-device kernel into one value on the device, and
// the values are combined by shard.Combine: through the all-reduce of a group of the
// shards' devices where one is given (NCCL where the devices offer it), else by an
// explicit combine on the host, in device order, in T. Min and max are exact, an int32
// sum wraps as on one device, and a float sum differs from the one-device op's only in
// the order of its additions: each element passes through at most the part's chain plus
// one addition per other device (ShardedTolerance). Not safe for concurrent use.
type ShardedReduce[T ReduceElem] struct {
	devs []*engine.Device
	rs   []*Reduce[T]
}

// NewShardedReduce builds the reduce kernels on every device of devs.
func NewShardedReduce[T ReduceElem](devs []*engine.Device) (_ *ShardedReduce[T], err error) {
	s := &ShardedReduce[T]{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	for _, d := range devs {
		r, err := NewReduce[T](d)
		if err != nil {
			return nil, err
		}
		s.devs, s.rs = append(s.devs, d), append(s.rs, r)
	}
	return s, nil
}

// groupOp is op as a collective reduction.
func groupOp(op ReduceOp) (shard.ReduceOp, error) {
	switch op {
	case ReduceSum:
		return shard.Sum, nil
	case ReduceMin:
		return shard.Min, nil
	case ReduceMax:
		return shard.Max, nil
	}
	return 0, fmt.Errorf("kernels: sharded reduce %s: only sum, min and max combine across devices: %w", op, engine.ErrUnsupported)
}

// Reduce returns op (sum, min or max) of all of x, sharded by rows or blocks, as a
// replicated Buffer of one element on every device of x (the caller closes it): the
// result stays on the devices for the next op. g, when not nil, is a group of x's
// devices in x's order.
func (s *ShardedReduce[T]) Reduce(ctx context.Context, g *shard.Group, op ReduceOp, x *shard.Buffer[T]) (*shard.Buffer[T], error) {
	gop, err := groupOp(op)
	if err != nil {
		return nil, err
	}
	if err := x.Check(); err != nil {
		return nil, fmt.Errorf("kernels: sharded reduce %s: %w", op, err)
	}
	if x.Layout().Kind == shard.Replicated {
		return nil, fmt.Errorf("kernels: sharded reduce %s of a replicated buffer: every device holds it all; reduce one device's part: %w", op, engine.ErrInvalidArg)
	}
	parts := x.Parts()
	vals := make([]*engine.Buffer[T], len(parts))
	scratch := make([]*engine.Buffer[T], len(parts))
	defer func() {
		for _, b := range scratch {
			b.Close()
		}
	}()
	err = x.InTurn(func(i int, p shard.Part[T]) error {
		r := s.on(p.Queue.Device())
		if r == nil {
			return fmt.Errorf("no build for %s (give it to NewShardedReduce): %w", p.Queue.Device().ID(), engine.ErrInvalidArg)
		}
		v, err := engine.NewBuffer[T](p.Queue.Device(), 1)
		if err != nil {
			return err
		}
		vals[i] = v
		if m := r.Scratch(p.Len); m > 1 {
			if scratch[i], err = engine.NewBuffer[T](p.Queue.Device(), m); err != nil {
				return err
			}
		}
		return r.Into(p.Queue, op, v, scratch[i], p.Buf, p.Len)
	})
	if err == nil {
		var out *shard.Buffer[T]
		if out, err = shard.Combine(ctx, g, x.Queues(), vals, gop); err == nil {
			return out, nil
		}
	}
	for _, v := range vals {
		v.Close()
	}
	return nil, fmt.Errorf("kernels: sharded reduce %s: %w", op, err)
}

// ShardedTolerance is the bound of a sharded float sum of x against the float64
// reference (ReduceTolerance) for the longest chain of additions of its parts on the
// devices that hold them (chains[i], Reduce.Chain of part i's length) plus one per other
// device with a part: the combine adds the parts' values one after another.
func ShardedTolerance[T ReduceElem](op ReduceOp, chains []int, sumAbs float64) float64 {
	longest, parts := 0, 0
	for _, c := range chains {
		if c > 0 {
			longest, parts = max(longest, c), parts+1
		}
	}
	return ReduceTolerance[T](op, longest+max(0, parts-1), sumAbs)
}

func (s *ShardedReduce[T]) on(d *engine.Device) *Reduce[T] {
	for i, x := range s.devs {
		if x == d {
			return s.rs[i]
		}
	}
	return nil
}

// Close releases the builds. Idempotent.
func (s *ShardedReduce[T]) Close() error {
	var errs []error
	for _, r := range s.rs {
		errs = append(errs, r.Close())
	}
	s.devs, s.rs = nil, nil
	return errors.Join(errs...)
}
