package maps

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prism-compute/prism/engine"
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
	name   string
	op     MapOp
	n      int
	a, b   T
	x      [][]T // the inputs, as the one-device op draws them
	out    []T   // the output of the last Run
	shares []kernels.Share
	parts  []*mapPart[T] // one per device, nil where the device has no share
	ran    bool
	closed bool
}

// mapPart is one device's part: its build, queue, range of elements and buffers (the
// output first, then the inputs: the kernel's order).
type mapPart[T kernels.Float] struct {
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
	if pt == nil {
		return nil
	}
	return errors.Join(pt.closeBuffers(), pt.q.Close(), pt.m.Close())
}

// load gives pt buffers for n elements: an output, and the inputs holding x[a][off:off+n].
func (pt *mapPart[T]) load(ctx context.Context, x [][]T, off, n int) error {
	if err := pt.closeBuffers(); err != nil {
		return err
	}
	out, err := engine.NewBuffer[T](pt.dev, n)
	if err != nil {
		return err
	}
	pt.bufs = append(pt.bufs, out)
	for _, a := range x {
		b, err := engine.Upload(ctx, pt.q, a[off:off+n])
		if err != nil {
			return err
		}
		pt.bufs = append(pt.bufs, b)
	}
	return nil
}

// run maps the part's first n elements and reads the outputs back into dst.
func (pt *mapPart[T]) run(ctx context.Context, op MapOp, a, b T, n int, dst []T) error {
	if err := pt.m.run(pt.q, op, n, a, b, pt.bufs...); err != nil {
		return err
	}
	return pt.bufs[0].Read(ctx, pt.q, 0, dst[:n])
}

func setupMapSplit[T kernels.Float](ctx context.Context, name string, op MapOp, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (_ kernels.SplitInstance, err error) {
	if err := kernels.CheckPortableSplit(ctx, name, devs, p, o); err != nil {
		return nil, err
	}
	if p.Size > MapMax {
		return nil, fmt.Errorf("kernels: %s: size %d above %d: %w", name, p.Size, MapMax, engine.ErrInvalidArg)
	}
	n := p.Size
	in := &mapSplitInstance[T]{name: name, op: op, n: n}
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
	// Every device that may get a share is set up: all of them when the shares are
	// measured, those of a positive fraction when they are given (checked, one per
	// device, so at least one).
	in.parts = make([]*mapPart[T], len(devs))
	granule := 0
	for i, d := range devs {
		if o.Fractions != nil && o.Fractions[i] == 0 {
			continue
		}
		if kernels.TypeOf[T]().FP64 && !d.Info().FP64 {
			return nil, fmt.Errorf("kernels: %s: %s has no fp64: %w", name, d.ID(), engine.ErrUnsupported)
		}
		pt := &mapPart[T]{dev: d}
		in.parts[i] = pt
		if pt.m, err = NewMap[T](d); err != nil {
			return nil, err
		}
		if pt.q, err = d.NewQueue(); err != nil {
			return nil, err
		}
		if granule == 0 {
			granule = pt.m.wg * pt.m.vec
		}
	}
	if in.shares, err = in.plan(ctx, devs, granule, o); err != nil {
		return nil, err
	}
	offs := kernels.Offsets(in.shares)
	for i, sh := range in.shares {
		pt := in.parts[i]
		if sh.Units == 0 {
			if pt != nil {
				in.parts[i] = nil
				if err := pt.Close(); err != nil {
					return nil, err
				}
			}
			continue
		}
		pt.off, pt.n = offs[i], sh.Units
		if err := pt.load(ctx, in.x, pt.off, pt.n); err != nil {
			return nil, err
		}
	}
	in.out = make([]T, n)
	return in, nil
}

// plan divides the elements among devs (PlanShares, probing each device with the first
// elements, mapped and read back).
func (in *mapSplitInstance[T]) plan(ctx context.Context, devs []*engine.Device, granule int, o kernels.SplitOptions) ([]kernels.Share, error) {
	limit := max(granule, in.n/len(devs)/granule*granule) // PlanShares' largest probe
	loaded := map[*mapPart[T]]int{}
	defer func() {
		for pt := range loaded {
			pt.closeBuffers()
			pt.probe = nil
		}
	}()
	probe := func(ctx context.Context, dev *engine.Device, units int) (time.Duration, error) {
		var pt *mapPart[T]
		for _, x := range in.parts {
			if x != nil && x.dev == dev {
				pt = x
				break
			}
		}
		if pt == nil {
			return 0, fmt.Errorf("kernels: %s: no part set up on %s: %w", in.name, dev.ID(), engine.ErrInvalidArg)
		}
		n := min(units, in.n)
		if loaded[pt] < n {
			size := min(max(limit, n), in.n)
			if err := pt.load(ctx, in.x, 0, size); err != nil {
				return 0, err
			}
			loaded[pt] = size
			pt.probe = make([]T, size)
		}
		start := time.Now()
		if err := pt.run(ctx, in.op, in.a, in.b, n, pt.probe); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	return kernels.PlanShares(ctx, devs, in.n, granule, o, probe)
}

func (in *mapSplitInstance[T]) Run(ctx context.Context) error {
	if in.closed {
		return fmt.Errorf("kernels: %s: split instance closed: %w", in.name, engine.ErrClosed)
	}
	in.ran = false
	err := kernels.RunParts(in.shares, func(i int) error {
		pt := in.parts[i]
		return pt.run(ctx, in.op, in.a, in.b, pt.n, in.out[pt.off:])
	})
	if err != nil {
		return fmt.Errorf("kernels: %s: %w", in.name, err)
	}
	in.ran = true
	return nil
}

// Verify compares the output of the last Run with MapRef within MapTolerance, a chunk at
// a time.
func (in *mapSplitInstance[T]) Verify(ctx context.Context) error {
	if in.closed {
		return fmt.Errorf("kernels: %s: split instance closed: %w", in.name, engine.ErrClosed)
	}
	if !in.ran {
		return fmt.Errorf("kernels: %s: verify before a complete run: %w", in.name, engine.ErrInvalidArg)
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

func (in *mapSplitInstance[T]) Shares() []kernels.Share {
	return append([]kernels.Share(nil), in.shares...)
}

func (in *mapSplitInstance[T]) Close() error {
	if in.closed {
		return nil
	}
	in.closed = true
	var errs []error
	for _, pt := range in.parts {
		errs = append(errs, pt.Close())
	}
	return errors.Join(errs...)
}
