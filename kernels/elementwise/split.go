package elementwise

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
)

// A map op split across devices (Op.Split) gives each device a contiguous range of the
// elements (in work-groups of the first device set up, WG*VEC elements, the unit
// PlanShares divides): the device holds that range of every input, maps it, and reads
// its outputs back into their place in one host array. Every element is computed as the
// one-device op computes it, so the output is the one-device op's on devices of the same
// arithmetic.

// mapSplit returns the Splitter of the map op op in T.
func mapSplit[T kernels.Float](name string, op MapOp) kernels.Splitter {
	return func(ctx context.Context, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (kernels.SplitInstance, error) {
		return setupMapSplit[T](ctx, name, op, devs, p, o)
	}
}

// mapSplitInstance is a map op set up across devices.
type mapSplitInstance[T kernels.Float] struct {
	*kernels.SplitRun[*mapPart[T]]
	op   MapOp
	n    int
	a, b T
	x    [][]T // the inputs, as the one-device op draws them
	out  []T   // the output of the last Run
	// Sharded data (kernels.PlaceSharded): the inputs scattered over the devices with a
	// share, mapped where they lie by sm (the parts' builds), the output left there.
	sharded bool
	sin     []*shard.Buffer[T]
	sout    *shard.Buffer[T]
	sm      *ShardedMap[T]
}

// mapPart is one device's part: its build, queue, range of elements and buffers (the
// output first, then the inputs: the kernel's order).
type mapPart[T kernels.Float] struct {
	in     *mapSplitInstance[T]
	dev    *engine.Device
	m      *Map[T]
	q      *engine.Queue
	off, n int
	bufs   []*engine.Buffer[T]
	probe  []T // probes: the outputs read back
}

func (pt *mapPart[T]) closeBuffers() error {
	var errs []error
	for _, b := range pt.bufs {
		errs = append(errs, b.Close())
	}
	pt.bufs = nil
	return errors.Join(errs...)
}

func (pt *mapPart[T]) Close() error {
	return errors.Join(pt.closeBuffers(), pt.q.Close(), pt.m.Close())
}

// upload gives pt buffers for n elements: an output, and the inputs holding
// x[a][off:off+n].
func (pt *mapPart[T]) upload(ctx context.Context, off, n int) error {
	if err := pt.closeBuffers(); err != nil {
		return err
	}
	out, err := engine.NewBuffer[T](pt.dev, n)
	if err != nil {
		return err
	}
	pt.bufs = append(pt.bufs, out)
	for _, a := range pt.in.x {
		b, err := engine.Upload(ctx, pt.q, a[off:off+n])
		if err != nil {
			return err
		}
		pt.bufs = append(pt.bufs, b)
	}
	return nil
}

// run maps the part's first n elements and reads the outputs back into dst.
func (pt *mapPart[T]) run(ctx context.Context, n int, dst []T) error {
	in := pt.in
	if err := pt.m.run(pt.q, in.op, n, in.a, in.b, pt.bufs...); err != nil {
		return err
	}
	return pt.bufs[0].Read(ctx, pt.q, 0, dst[:n])
}

// LoadProbe uploads the first elements, as many as the op has at most.
func (pt *mapPart[T]) LoadProbe(ctx context.Context, units int) error {
	size := min(units, pt.in.n)
	pt.probe = make([]T, size)
	return pt.upload(ctx, 0, size)
}

// RunProbe maps the probe's first elements and reads them back; on sharded data it
// waits for the map instead, the output left on the device as a sharded run leaves it.
func (pt *mapPart[T]) RunProbe(ctx context.Context, units int) error {
	if pt.in.sharded {
		if err := pt.StartProbe(ctx, units); err != nil {
			return err
		}
		return pt.FinishProbe(ctx)
	}
	return pt.run(ctx, min(units, pt.in.n), pt.probe)
}

// StartProbe enqueues the map of the probe's first elements on sharded data, RunProbe's
// first half (kernels.ProbeStarter: the planner starts probes so on sharded data only);
// on host data it runs the whole probe.
func (pt *mapPart[T]) StartProbe(ctx context.Context, units int) error {
	if !pt.in.sharded {
		return pt.RunProbe(ctx, units)
	}
	return pt.m.run(pt.q, pt.in.op, min(units, pt.in.n), pt.in.a, pt.in.b, pt.bufs...)
}

// FinishProbe waits for the probe StartProbe started on sharded data.
func (pt *mapPart[T]) FinishProbe(ctx context.Context) error {
	if !pt.in.sharded {
		return nil
	}
	return pt.q.Finish(ctx)
}

func (pt *mapPart[T]) Load(ctx context.Context, off, units int) error {
	pt.off, pt.n, pt.probe = off, units, nil
	return pt.upload(ctx, off, units)
}

// Run maps the share into its place in the output.
func (pt *mapPart[T]) Run(ctx context.Context) error {
	return pt.run(ctx, pt.n, pt.in.out[pt.off:])
}

func setupMapSplit[T kernels.Float](ctx context.Context, name string, op MapOp, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (_ kernels.SplitInstance, err error) {
	if err := kernels.CheckPortableSplit(ctx, name, devs, p, o); err != nil {
		return nil, err
	}
	if err := kernels.CheckSharded(name, o, true); err != nil {
		return nil, err
	}
	if p.Size > MapMax {
		return nil, fmt.Errorf("kernels: %s: size %d above %d: %w", name, p.Size, MapMax, engine.ErrInvalidArg)
	}
	n := p.Size
	in := &mapSplitInstance[T]{op: op, n: n, sharded: o.Placement == kernels.PlaceSharded}
	granule := 0 // the elements of a work-group of the first device set up
	in.SplitRun = kernels.NewSplitRun(name, devs, o, func(_ context.Context, d *engine.Device) (_ *mapPart[T], err error) {
		if kernels.TypeOf[T]().FP64 && !d.Info().FP64 {
			return nil, fmt.Errorf("kernels: %s: %s has no fp64: %w", name, d.ID(), engine.ErrUnsupported)
		}
		pt := &mapPart[T]{in: in, dev: d}
		defer func() {
			if err != nil {
				pt.Close()
			}
		}()
		if pt.m, err = NewMap[T](d); err != nil {
			return nil, err
		}
		if pt.q, err = d.NewQueue(); err != nil {
			return nil, err
		}
		if granule == 0 {
			granule = pt.m.wg * pt.m.vec
		}
		return pt, nil
	}, nil)
	if in.sharded {
		in.SetSharded(kernels.Sharded{Scatter: in.scatter, Run: in.runSharded, Release: in.closeSharded})
	}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	// The scalars, then the arrays in order, as newMapInstance draws them.
	rng := kernels.NewRand(p.Seed, 2)
	in.a, in.b = T(rng.Float64()*4-2), T(rng.Float64()*4-2)
	lo, hi := mapRange(op)
	for range mapInputs(op) {
		in.x = append(in.x, kernels.RandFloats[T](rng, n, lo, hi))
	}
	in.out = make([]T, n)
	if err := in.OpenAll(ctx); err != nil {
		return nil, err
	}
	if _, err := in.Plan(ctx, n, granule); err != nil {
		return nil, err
	}
	if err := in.Place(ctx); err != nil {
		return nil, err
	}
	return in, nil
}

// scatter lays the inputs out over the devices with a share, each holding its share's
// elements on its part's queue, with an output laid out alike, mapped there by the
// parts' builds.
func (in *mapSplitInstance[T]) scatter(ctx context.Context) error {
	parts, counts, err := in.Sharing(ctx)
	if err != nil {
		return err
	}
	var qs []*engine.Queue
	in.sm = &ShardedMap[T]{}
	for _, pt := range parts {
		if err := pt.closeBuffers(); err != nil { // the probe's
			return err
		}
		qs = append(qs, pt.q)
		in.sm.devs, in.sm.maps = append(in.sm.devs, pt.dev), append(in.sm.maps, pt.m)
	}
	for _, x := range in.x {
		b, err := shard.Scatter(ctx, qs, x, shard.ByRows(1), counts)
		if err != nil {
			return err
		}
		in.sin = append(in.sin, b)
	}
	in.sout, err = shard.Like(in.sin[0])
	return err
}

// runSharded maps the sharded inputs into the sharded output.
func (in *mapSplitInstance[T]) runSharded(ctx context.Context) error {
	if err := in.sm.Run(in.op, in.a, in.b, in.sout, in.sin...); err != nil {
		return err
	}
	return in.sout.Finish(ctx)
}

// closeSharded releases the sharded inputs and output.
func (in *mapSplitInstance[T]) closeSharded() error {
	errs := []error{in.sout.Close()}
	for _, b := range in.sin {
		errs = append(errs, b.Close())
	}
	in.sin, in.sout, in.sm = nil, nil, nil
	return errors.Join(errs...)
}

// Verify compares the output of the last Run with MapRef within MapTolerance, a chunk at
// a time.
func (in *mapSplitInstance[T]) Verify(ctx context.Context) error {
	if err := in.CheckRan(); err != nil {
		return err
	}
	if in.sharded {
		if err := in.sout.GatherInto(ctx, in.out); err != nil {
			return err
		}
	}
	what := "map " + string(in.op)
	a, b := float64(in.a), float64(in.b)
	const chunk = 1 << 16
	want, tol := make([]float64, min(chunk, in.n)), make([]float64, min(chunk, in.n))
	x := make([][]T, len(in.x))
	for lo := 0; lo < in.n; lo += chunk {
		hi := min(lo+chunk, in.n)
		for i := range x {
			x[i] = in.x[i][lo:hi]
		}
		w, t := want[:hi-lo], tol[:hi-lo]
		mapRefInto(in.op, a, b, w, x...)
		mapToleranceInto(in.op, a, b, t, x...)
		for j := range w {
			g := float64(in.out[lo+j])
			if d := math.Abs(g - w[j]); !(d <= t[j]) {
				return fmt.Errorf("%w: %s: element %d = %v, want %v (|diff| %.3g > tolerance %.3g)", kernels.ErrVerify, what, lo+j, in.out[lo+j], w[j], d, t[j])
			}
		}
	}
	return nil
}

func (in *mapSplitInstance[T]) Model() kernels.Model {
	return MapModel(in.op, in.n, engine.SizeOf[T]())
}

func (in *mapSplitInstance[T]) Shape() string { return fmt.Sprintf("n=%d", in.n) }

// ShardedMap runs map ops on data sharded over devices (engine/shard): each device maps
// its part where it lies, on its part's queue, so that ops chain on the devices with no
// host round trip. Every element is computed by the one-device kernel of its device, so
// the result is bit for bit the one-device op's on that device. It holds one build of the
// map kernels per device. Not safe for concurrent use.
type ShardedMap[T kernels.Float] struct {
	devs []*engine.Device
	maps []*Map[T]
}

// NewShardedMap builds the map kernels on every device of devs (those of the shards it
// will map).
func NewShardedMap[T kernels.Float](devs []*engine.Device) (_ *ShardedMap[T], err error) {
	s := &ShardedMap[T]{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	for _, d := range devs {
		m, err := NewMap[T](d)
		if err != nil {
			return nil, err
		}
		s.devs, s.maps = append(s.devs, d), append(s.maps, m)
	}
	return s, nil
}

// Run enqueues op (out first, then its inputs, as Map.Run takes them) on every part
// with elements, each on its part's queue, in turn from the calling goroutine
// (shard.Buffer.InTurn); it returns once all are enqueued (Gather or Finish waits).
// Every buffer must have out's layout (shard.SameLayout).
func (s *ShardedMap[T]) Run(op MapOp, a, b T, out *shard.Buffer[T], in ...*shard.Buffer[T]) error {
	for _, x := range in {
		if err := shard.SameLayout(out, x); err != nil {
			return fmt.Errorf("kernels: sharded map %s: %w", op, err)
		}
	}
	err := out.InTurn(func(i int, p shard.Part[T]) error {
		m := s.on(p.Queue.Device())
		if m == nil {
			return fmt.Errorf("kernels: sharded map %s: no build for %s (give it to NewShardedMap): %w", op, p.Queue.Device().ID(), engine.ErrInvalidArg)
		}
		bufs := []*engine.Buffer[T]{p.Buf}
		for _, x := range in {
			bufs = append(bufs, x.Parts()[i].Buf)
		}
		return m.run(p.Queue, op, p.Len, a, b, bufs...)
	})
	if err != nil {
		return fmt.Errorf("kernels: sharded map %s: %w", op, err)
	}
	return nil
}

// Apply maps op over in into a new Buffer laid out as in[0], which the caller closes.
func (s *ShardedMap[T]) Apply(op MapOp, a, b T, in ...*shard.Buffer[T]) (*shard.Buffer[T], error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("kernels: sharded map %s: no input: %w", op, engine.ErrInvalidArg)
	}
	out, err := shard.Like(in[0])
	if err != nil {
		return nil, fmt.Errorf("kernels: sharded map %s: %w", op, err)
	}
	if err := s.Run(op, a, b, out, in...); err != nil {
		out.Close()
		return nil, err
	}
	return out, nil
}

func (s *ShardedMap[T]) on(d *engine.Device) *Map[T] {
	for i, x := range s.devs {
		if x == d {
			return s.maps[i]
		}
	}
	return nil
}

// Close releases the builds. Idempotent.
func (s *ShardedMap[T]) Close() error {
	var errs []error
	for _, m := range s.maps {
		errs = append(errs, m.Close())
	}
	s.devs, s.maps = nil, nil
	return errors.Join(errs...)
}
