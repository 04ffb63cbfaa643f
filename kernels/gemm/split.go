package gemm

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
)

// A GEMM split across devices (kernels.Splitter): a single GEMM by blocks of rows of
// op(A), C and D, with B on every device; a batched GEMM by matrices of the batch. Each
// device computes its block with the implementation a one-device Setup gives it (the one
// Params names, or Pick's choice for that device), and the blocks of D are read back into
// one result on the host, which Verify checks against the float64 reference as the
// one-device instance does. The inputs are the one-device op's, generated once on the host
// from Params.Seed, and each device gets its block of them at setup.

// splitGranule is the unit in which rows or batch matrices are given out: one, since
// every implementation takes any M (tiles past the last row are masked) and any batch.
const splitGranule = 1

// gemmSplitter returns the Splitter of a GEMM op: by rows, or by matrices when batch > 1.
func gemmSplitter[In InputType, Out kernels.Float](op kernels.Op, prec Precision, ta, tb bool, batch int) kernels.Splitter {
	return func(ctx context.Context, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (kernels.SplitInstance, error) {
		sp, err := newGEMMSplit[In, Out](ctx, op, prec, ta, tb, batch, devs, p, o)
		if err != nil {
			return nil, err
		}
		return sp, nil
	}
}

// gemmSplit is a GEMM set up across devices.
type gemmSplit[In InputType, Out kernels.Float] struct {
	*kernels.SplitRun[*gemmPart[In, Out]]
	op          kernels.Op
	p           kernels.Params
	prec        Precision
	s           GEMMShape // the whole problem, with its defaults
	byBatch     bool      // units are matrices of the batch, else rows
	alpha, beta Out
	a, b        []In // the inputs A, B and C on the host, as the one-device op draws them
	c           []Out
	lc          int // the elements of C and D
	// Sharded data (kernels.PlaceSharded): A and C by rows over the devices with a share,
	// B on each, multiplied where they lie by sg (the parts' GEMMs), D left there; got is
	// D gathered by Verify.
	sharded bool
	sa, sb  *shard.Buffer[In]
	sc, sd  *shard.Buffer[Out]
	sg      *ShardedGEMM[In, Out]
	got     []Out
}

// gemmPart is one device's part: its queue, implementation and block.
type gemmPart[In InputType, Out kernels.Float] struct {
	sp       *gemmSplit[In, Out]
	dev      *engine.Device
	q        *engine.Queue
	g        Runner[In, Out]
	variant  string
	tunables string
	blk      gemmBlock[In, Out] // the share's block: where it lies in the problem
	chunks   []gemmBlock[In, Out]
	probe    gemmBlock[In, Out]
	scratch  []Out // the probe's read-back
	// copyQ reads the chunks' D back into host, the share's rows (or matrices) of the
	// result: page-locked memory where the device has it, so that a chunk's copy runs
	// while the next chunk computes.
	copyQ *engine.Queue
	host  *engine.HostBuffer[Out]
	done  []*engine.Event // the events of the last run, closed by the next
}

// A share is computed in chunks of rows (or matrices), each read back while the next
// computes: up to maxChunks of at least minChunkRows rows (minChunkMatrices matrices).
// Variables so that tests can chunk small problems.
var (
	maxChunks        = 4
	minChunkRows     = 512
	minChunkMatrices = 8
)

// chunking returns the sizes of the chunks of a share of units.
func chunking(units int, byBatch bool) []int {
	least := minChunkRows
	if byBatch {
		least = minChunkMatrices
	}
	n := max(1, min(maxChunks, units/least))
	out := make([]int, n)
	for i := range out {
		out[i] = units / n
		if i < units%n {
			out[i]++
		}
	}
	return out
}

// gemmBlock is a block of the problem on a device: units rows (or matrices) from off, its
// shape, and its inputs and output.
type gemmBlock[In InputType, Out kernels.Float] struct {
	off, units int
	s          GEMMShape
	oc         int // where its C and D start in the whole problem's
	a, b       *engine.Buffer[In]
	c, d       *engine.Buffer[Out]
	sharedB    bool // b belongs to another block of the device
}

func (b *gemmBlock[In, Out]) close() error {
	err := errors.Join(b.a.Close(), b.c.Close(), b.d.Close())
	if !b.sharedB {
		err = errors.Join(err, b.b.Close())
	}
	*b = gemmBlock[In, Out]{}
	return err
}

func newGEMMSplit[In InputType, Out kernels.Float](ctx context.Context, op kernels.Op, prec Precision, ta, tb bool, batch int, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (_ *gemmSplit[In, Out], err error) {
	if p.Shape != "" {
		return nil, fmt.Errorf("kernels: %s: a split divides a square GEMM of a size; a shape (%q) runs on one device: %w", op.Name, p.Shape, engine.ErrUnsupported)
	}
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
	if err := kernels.CheckSharded(op.Name, o, !ta && batch == 1); err != nil {
		return nil, err
	}
	p.Rotate = false
	n := max(int(math.Round(math.Sqrt(float64(p.Size)/float64(batch)))), 1)
	s := GEMMShape{TransA: ta, TransB: tb, M: n, N: n, K: n, Batch: batch}.WithDefaults()
	if err := checkShape(s); err != nil { // the shape, then the limits of Prism's kernels
		return nil, fmt.Errorf("kernels: %s: size %d: %w", op.Name, p.Size, err)
	}
	sp := &gemmSplit[In, Out]{op: op, p: p, prec: prec, s: s, byBatch: batch > 1, sharded: o.Placement == kernels.PlaceSharded}
	// The one-device op's inputs: its first input set, drawn in the same order.
	rng := kernels.NewRand(p.Seed, gemmStream)
	sp.alpha, sp.beta = Out(1+rng.Float64()), Out(-0.5-0.5*rng.Float64())
	la, lb, lc := s.Lens()
	sp.a, sp.b = randIn[In](rng, la, -1, 1), randIn[In](rng, lb, -1, 1)
	sp.c = kernels.RandFloats[Out](rng, lc, -1, 1)
	sp.lc = lc
	sp.SplitRun = kernels.NewSplitRun(op.Name, devs, o, sp.ready, nil)
	if sp.sharded {
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
	if _, err := sp.Plan(ctx, sp.total(), splitGranule); err != nil {
		return nil, err
	}
	if err := sp.Place(ctx); err != nil {
		return nil, err
	}
	return sp, nil
}

// scatter lays A and C out by rows over the devices with a share, each its share's rows
// on its part's queue, B on every one of them and D like C, multiplied there by the
// parts' GEMMs.
func (sp *gemmSplit[In, Out]) scatter(ctx context.Context) error {
	parts, counts, err := sp.Sharing(ctx)
	if err != nil {
		return err
	}
	var qs []*engine.Queue
	var devs []*engine.Device
	var gs []Runner[In, Out]
	for _, pt := range parts {
		if err := pt.probe.close(); err != nil {
			return err
		}
		qs, devs, gs = append(qs, pt.q), append(devs, pt.dev), append(gs, pt.g)
	}
	sp.sg = shardedOf(devs, gs)
	if sp.sa, err = shard.Scatter(ctx, qs, sp.a, shard.ByRows(sp.s.LDA), counts); err != nil {
		return err
	}
	if sp.sb, err = shard.Scatter(ctx, qs, sp.b, shard.Replicate(), nil); err != nil {
		return err
	}
	if sp.sc, err = shard.Scatter(ctx, qs, sp.c, shard.ByRows(sp.s.LDC), counts); err != nil {
		return err
	}
	sp.sd, err = shard.Like(sp.sc)
	return err
}

// runSharded multiplies the sharded matrices into the sharded D.
func (sp *gemmSplit[In, Out]) runSharded(ctx context.Context) error {
	if err := sp.sg.Run(sp.s, sp.alpha, sp.sa, sp.sb, sp.beta, sp.sc, sp.sd); err != nil {
		return err
	}
	return sp.sd.Finish(ctx)
}

// closeSharded releases the sharded matrices.
func (sp *gemmSplit[In, Out]) closeSharded() error {
	err := errors.Join(sp.sa.Close(), sp.sb.Close(), sp.sc.Close(), sp.sd.Close())
	sp.sa, sp.sb, sp.sc, sp.sd, sp.sg = nil, nil, nil, nil, nil
	return err
}

// total returns the units of the split: rows, or matrices of the batch.
func (sp *gemmSplit[In, Out]) total() int {
	if sp.byBatch {
		return sp.s.Batch
	}
	return sp.s.M
}

// chunk uploads pt's share in chunks (B once, shared by the chunks of a split by rows)
// and allocates the host memory its result is read into.
func (sp *gemmSplit[In, Out]) chunk(ctx context.Context, pt *gemmPart[In, Out], off, units int) error {
	pt.blk = gemmBlock[In, Out]{off: off, units: units, s: sp.blockShape(units)}
	if sp.byBatch {
		pt.blk.oc = off * pt.blk.s.StrideC
	} else {
		pt.blk.oc = off * pt.blk.s.LDC
	}
	var shared *engine.Buffer[In]
	at := off
	for _, n := range chunking(units, sp.byBatch) {
		b, err := sp.blockWith(ctx, pt, at, n, shared)
		if err != nil {
			return err
		}
		if !sp.byBatch {
			shared = b.b
		}
		pt.chunks = append(pt.chunks, b)
		at += n
	}
	_, _, lc := pt.blk.s.Lens()
	var err error
	if pt.copyQ, err = pt.dev.NewQueue(); err != nil {
		return err
	}
	pt.host, err = engine.NewHostBuffer[Out](pt.dev, lc)
	return err
}

// ready readies a part on dev, its queue and implementation: the runner that Setup of the
// variant Pick chooses builds on the device (its tunables looked up, its kernels
// compiled), set up at the smallest size and kept, the rest of that instance released.
func (sp *gemmSplit[In, Out]) ready(ctx context.Context, dev *engine.Device) (_ *gemmPart[In, Out], err error) {
	pt := &gemmPart[In, Out]{sp: sp, dev: dev}
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
	switch in := inst.(type) {
	case *gemmInstance[In, Out]:
		pt.g, pt.tunables = in.g, in.tunables
		in.g = nil
	case *vendorGEMM[Out]:
		// In is Out for the vendor variants (float32, float64).
		g, ok := any(&blasRunner[Out]{blas: in.blas}).(Runner[In, Out])
		if !ok {
			inst.Close()
			return nil, fmt.Errorf("kernels: %s: variant %s takes %s inputs: %w", sp.op.Name, v.Name, kernels.TypeName[Out](), engine.ErrUnsupported)
		}
		pt.g = g
	case interface{ blockRunner() any }:
		// cuBLASLt (blasLtGEMM): its mixed-precision GEMM on each block.
		g, ok := in.blockRunner().(Runner[In, Out])
		if !ok {
			inst.Close()
			return nil, fmt.Errorf("kernels: %s: variant %s takes other inputs: %w", sp.op.Name, v.Name, engine.ErrUnsupported)
		}
		pt.g = g
	default:
		inst.Close()
		return nil, fmt.Errorf("kernels: %s: variant %s does not run a block of the problem: %w", sp.op.Name, v.Name, engine.ErrUnsupported)
	}
	pt.variant = v.Name
	return pt, inst.Close()
}

// block uploads the block of units rows (or matrices) from off to pt's device: its rows of
// A (when A is stored transposed, its columns: the stored rows from column off on, with
// the whole problem's leading dimension, so that every implementation sees the alignment
// of the whole problem) and of C, all of B, and an output D. By matrices, every input is
// the block's matrices.
func (sp *gemmSplit[In, Out]) block(ctx context.Context, pt *gemmPart[In, Out], off, units int) (gemmBlock[In, Out], error) {
	return sp.blockWith(ctx, pt, off, units, nil)
}

// blockWith is block with B already on the device when shared is not nil (a split by
// rows: every block's B is the whole B).
func (sp *gemmSplit[In, Out]) blockWith(ctx context.Context, pt *gemmPart[In, Out], off, units int, shared *engine.Buffer[In]) (_ gemmBlock[In, Out], err error) {
	s := sp.blockShape(units)
	var oa, ob int
	b := gemmBlock[In, Out]{off: off, units: units, s: s}
	if sp.byBatch {
		oa, ob, b.oc = off*s.StrideA, off*s.StrideB, off*s.StrideC
	} else {
		oa, b.oc = off*s.LDA, off*s.LDC
		if s.TransA {
			oa = off
		}
	}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	la, lb, lc := s.Lens()
	if b.a, err = engine.Upload(ctx, pt.q, sp.a[oa:oa+la]); err != nil {
		return b, err
	}
	if shared != nil {
		b.b, b.sharedB = shared, true
	} else if b.b, err = engine.Upload(ctx, pt.q, sp.b[ob:ob+lb]); err != nil {
		return b, err
	}
	if b.c, err = engine.Upload(ctx, pt.q, sp.c[b.oc:b.oc+lc]); err != nil {
		return b, err
	}
	b.d, err = engine.NewBuffer[Out](pt.dev, lc)
	return b, err
}

// blockShape returns the shape of a block of units rows (or matrices): the whole
// problem's leading dimensions and, by matrices, its strides.
func (sp *gemmSplit[In, Out]) blockShape(units int) GEMMShape {
	s := sp.s
	if sp.byBatch {
		s.Batch = units
		return s
	}
	s.M, s.StrideA, s.StrideB, s.StrideC = units, 0, 0, 0
	return s.WithDefaults()
}

// run computes block b on pt's device and reads its D into dst.
func (pt *gemmPart[In, Out]) run(ctx context.Context, b *gemmBlock[In, Out], alpha, beta Out, dst []Out) error {
	if err := pt.g.RunInto(pt.q, b.s, alpha, b.a, b.b, beta, b.c, b.d); err != nil {
		return err
	}
	return b.d.Read(ctx, pt.q, 0, dst)
}

// LoadProbe uploads a block of units rows (or matrices) from the start of the problem,
// as many as it has at most.
func (pt *gemmPart[In, Out]) LoadProbe(ctx context.Context, units int) error {
	sp := pt.sp
	if err := pt.probe.close(); err != nil {
		return err
	}
	var err error
	if pt.probe, err = sp.block(ctx, pt, 0, min(units, sp.total())); err != nil {
		return err
	}
	_, _, lc := pt.probe.s.Lens()
	pt.scratch = make([]Out, lc)
	return nil
}

// RunProbe computes the probe's first units rows (or matrices) and reads them back; on
// sharded data it waits for them instead, D left on the device as a sharded run leaves it.
func (pt *gemmPart[In, Out]) RunProbe(ctx context.Context, units int) error {
	sp := pt.sp
	if sp.sharded {
		if err := pt.StartProbe(ctx, units); err != nil {
			return err
		}
		return pt.FinishProbe(ctx)
	}
	if total := sp.total(); units > total {
		return fmt.Errorf("kernels: %s: probe of %d units of %d on %s: %w", sp.op.Name, units, total, pt.dev.ID(), engine.ErrInvalidArg)
	}
	b := pt.probe
	b.s = sp.blockShape(units)
	_, _, lc := b.s.Lens()
	return pt.run(ctx, &b, sp.alpha, sp.beta, pt.scratch[:lc])
}

// StartProbe enqueues the product of the probe's first units on sharded data, RunProbe's
// first half (kernels.ProbeStarter: the planner starts probes so on sharded data only); on
// host data it runs the whole probe.
func (pt *gemmPart[In, Out]) StartProbe(ctx context.Context, units int) error {
	sp := pt.sp
	if !sp.sharded {
		return pt.RunProbe(ctx, units)
	}
	if total := sp.total(); units > total {
		return fmt.Errorf("kernels: %s: probe of %d units of %d on %s: %w", sp.op.Name, units, total, pt.dev.ID(), engine.ErrInvalidArg)
	}
	b := pt.probe
	b.s = sp.blockShape(units)
	return pt.g.RunInto(pt.q, b.s, sp.alpha, b.a, b.b, sp.beta, b.c, b.d)
}

// FinishProbe waits for the probe StartProbe started on sharded data.
func (pt *gemmPart[In, Out]) FinishProbe(ctx context.Context) error {
	if !pt.sp.sharded {
		return nil
	}
	return pt.q.Finish(ctx)
}

// Load uploads pt's share, units rows (or matrices) from off, in chunks.
func (pt *gemmPart[In, Out]) Load(ctx context.Context, off, units int) error {
	if err := errors.Join(pt.probe.close(), pt.releaseShare()); err != nil {
		return err
	}
	pt.scratch = nil
	return pt.sp.chunk(ctx, pt, off, units)
}

// releaseShare releases what Load made for the part's share: the chunks, the copy queue,
// the host memory the result is read into, the last run's events. A part may be given a
// share again (a plan's check lays the work out for one device and back).
func (pt *gemmPart[In, Out]) releaseShare() error {
	var errs []error
	for _, e := range pt.done {
		errs = append(errs, e.Close())
	}
	pt.done = nil
	if pt.copyQ != nil {
		errs = append(errs, pt.copyQ.Close())
		pt.copyQ = nil
	}
	for i := range pt.chunks {
		errs = append(errs, pt.chunks[i].close())
	}
	pt.chunks = nil
	errs = append(errs, pt.host.Close())
	pt.host = nil
	return errors.Join(errs...)
}

// Run computes pt's block, each chunk read back into its rows (or matrices) of the result.
func (pt *gemmPart[In, Out]) Run(ctx context.Context) error {
	return pt.sp.runChunks(ctx, pt)
}

// runChunks computes pt's chunks one after the other on its queue, each read back by
// the copy queue once computed, while the next computes, and returns when the last copy
// is done.
func (sp *gemmSplit[In, Out]) runChunks(ctx context.Context, pt *gemmPart[In, Out]) error {
	for _, e := range pt.done {
		e.Close()
	}
	pt.done = pt.done[:0]
	for i := range pt.chunks {
		ch := &pt.chunks[i]
		if err := pt.g.RunInto(pt.q, ch.s, sp.alpha, ch.a, ch.b, sp.beta, ch.c, ch.d); err != nil {
			return err
		}
		ev, err := pt.q.Record()
		if err != nil {
			return err
		}
		pt.done = append(pt.done, ev)
		if err := pt.copyQ.Wait(ctx, ev); err != nil {
			return err
		}
		_, _, lc := ch.s.Lens()
		rd, err := ch.d.ReadAsync(pt.copyQ, 0, pt.host, ch.oc-pt.blk.oc, lc)
		if err != nil {
			return err
		}
		pt.done = append(pt.done, rd)
	}
	return pt.copyQ.Finish(ctx)
}

// at returns the element of the assembled D at offset o of the whole problem's: in the
// host memory of the part that computed it.
func (sp *gemmSplit[In, Out]) at(o int) *Out {
	if sp.got != nil {
		return &sp.got[o]
	}
	for _, pt := range sp.Parts() {
		if pt != nil && pt.host != nil && o >= pt.blk.oc && o < pt.blk.oc+pt.host.Len() {
			return &pt.host.Slice()[o-pt.blk.oc]
		}
	}
	panic(fmt.Sprintf("gemm split: element %d of %d is in no part", o, sp.lc))
}

// Verify checks the assembled D against the float64 reference, as the one-device
// instance's Verify does: every element up to gemmFullCheck, else the corners of every
// matrix and a seeded sample.
func (sp *gemmSplit[In, Out]) Verify(ctx context.Context) error {
	if err := sp.CheckRan(); err != nil {
		return err
	}
	if sp.sharded {
		var err error
		if sp.got, err = sp.sd.Gather(ctx); err != nil {
			return err
		}
	}
	s := sp.s
	a, b, c := widen(sp.a), widen(sp.b), widen(sp.c)
	alpha, beta := float64(sp.alpha), float64(sp.beta)
	check := func(z, i, j int, want, mag float64) error {
		g := *sp.at(z*s.StrideC + i*s.LDC + j)
		tol := sp.prec.Tolerance(s.K, alpha, mag)
		if d := math.Abs(float64(g) - want); !(d <= tol) {
			return fmt.Errorf("%w: gemm %v split: D[%d][%d][%d] = %v, want %v (|diff| %.3g > tolerance %.3g; computed on %s)",
				kernels.ErrVerify, s, z, i, j, g, want, d, tol, sp.owner(z, i))
		}
		return nil
	}
	if float64(s.M)*float64(s.N)*float64(s.K)*float64(s.Batch) <= gemmFullCheck {
		want, mag := GEMMRef(s, alpha, a, b, beta, c)
		for z := range s.Batch {
			for i := range s.M {
				for j := range s.N {
					o := z*s.StrideC + i*s.LDC + j
					if err := check(z, i, j, want[o], mag[o]); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	rng := kernels.NewRand(sp.p.Seed, gemmStream+1)
	var pts [][3]int
	for z := range s.Batch {
		pts = append(pts, [3]int{z, 0, 0}, [3]int{z, 0, s.N - 1}, [3]int{z, s.M - 1, 0}, [3]int{z, s.M - 1, s.N - 1})
	}
	for range gemmSamples {
		pts = append(pts, [3]int{rng.IntN(s.Batch), rng.IntN(s.M), rng.IntN(s.N)})
	}
	for _, pt := range pts {
		want, mag := GEMMRefAt(s, alpha, a, b, beta, c, pt[0], pt[1], pt[2])
		if err := check(pt[0], pt[1], pt[2], want, mag); err != nil {
			return err
		}
	}
	return nil
}

// owner names the device that computed row i of matrix z.
func (sp *gemmSplit[In, Out]) owner(z, i int) string {
	u := i
	if sp.byBatch {
		u = z
	}
	parts := sp.Parts()
	for k, sh := range sp.Shares() {
		if sh.Units == 0 {
			continue
		}
		if b := parts[k].blk; u >= b.off && u < b.off+b.units {
			return sh.Device
		}
	}
	return "no device"
}

// Model is the whole GEMM's, as the one-device instance reports it.
func (sp *gemmSplit[In, Out]) Model() kernels.Model {
	return GEMMModelOf(sp.s, engine.SizeOf[In](), engine.SizeOf[Out]())
}

func (sp *gemmSplit[In, Out]) Shape() string {
	s := fmt.Sprintf("M=N=K=%d", sp.s.M)
	if sp.s.Batch > 1 {
		s = fmt.Sprintf("batch=%d %s", sp.s.Batch, s)
	}
	return s
}

// Variants returns the implementation each device with a share runs, with its tunables
// where it has them ("portable (TS=128 ...)"), in the order of the devices; "" for a
// device without a share.
func (sp *gemmSplit[In, Out]) Variants() []string {
	out := make([]string, len(sp.Parts()))
	for i, pt := range sp.Parts() {
		if pt == nil {
			continue
		}
		out[i] = pt.variant
		if pt.tunables != "" {
			out[i] += " (" + pt.tunables + ")"
		}
	}
	return out
}

// Close releases the part's buffers, implementation and queue.
func (pt *gemmPart[In, Out]) Close() error {
	errs := []error{pt.probe.close(), pt.releaseShare()}
	if pt.g != nil {
		errs = append(errs, pt.g.Close())
		pt.g = nil
	}
	if pt.q != nil {
		errs = append(errs, pt.q.Close())
		pt.q = nil
	}
	pt.scratch = nil
	return errors.Join(errs...)
}

// blasRunner runs a block through the device's vendor BLAS, which computes in place: D is
// set to C first, as vendorGEMM's Run leaves it ready.
type blasRunner[T kernels.Float] struct {
	blas *engine.BLAS
}

func (r *blasRunner[T]) RunInto(q *engine.Queue, s GEMMShape, alpha T, a, b *engine.Buffer[T], beta T, c, d *engine.Buffer[T]) error {
	s, err := inPlaceD(q, s, a, b, c, d)
	if err != nil {
		return err
	}
	return engine.Gemm(r.blas, q, s, alpha, a, b, beta, d)
}

// inPlaceD checks a block's call and copies C into D, which a vendor routine then
// computes in place (D = alpha*op(A)*op(B) + beta*D), returning the shape checked.
func inPlaceD[In InputType, Out kernels.Float](q *engine.Queue, s GEMMShape, a, b *engine.Buffer[In], c, d *engine.Buffer[Out]) (GEMMShape, error) {
	s, err := checkCall(q, s, a, b, c, d)
	if err != nil {
		return s, err
	}
	_, _, lc := s.Lens()
	return s, d.CopyFrom(q, 0, c, 0, lc)
}

// Close releases nothing: the BLAS belongs to the device.
func (r *blasRunner[T]) Close() error { return nil }

// blasLtRunner runs a block through the vendor BLAS's mixed-precision GEMM (cuBLASLt),
// as blasRunner does through its SGEMM/DGEMM: D = C first, then D = alpha*op(A)*op(B) +
// beta*D.
type blasLtRunner[In engine.GemmInput] struct {
	blas    *engine.BLAS
	compute engine.GemmCompute
}

func (r *blasLtRunner[In]) RunInto(q *engine.Queue, s GEMMShape, alpha float32, a, b *engine.Buffer[In], beta float32, c, d *engine.Buffer[float32]) error {
	s, err := inPlaceD(q, s, a, b, c, d)
	if err != nil {
		return err
	}
	return engine.GemmMixed(r.blas, q, s, r.compute, alpha, a, b, beta, d)
}

// Close releases nothing: the BLAS belongs to the device.
func (r *blasLtRunner[In]) Close() error { return nil }

var _ kernels.SplitInstance = (*gemmSplit[float32, float32])(nil)
