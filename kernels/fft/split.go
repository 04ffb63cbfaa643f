package fft

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// fft/batched split across devices (Op.Split) gives each device a contiguous range of
// the batch's transforms, the unit PlanShares divides: the device holds those inputs,
// transforms them, and reads its outputs back into their place in one host array. Each
// transform is computed as the one-device op computes it. The other fft ops are one
// transform each and are not split.

// fftSplit returns the Splitter of the fft op of kind kind: nil but for batched.
func fftSplit[T kernels.Float](name string, kind fftKind) kernels.Splitter {
	if kind != fftBatched {
		return nil
	}
	return func(ctx context.Context, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (kernels.SplitInstance, error) {
		return setupFFTSplit[T](ctx, name, devs, p, o)
	}
}

// fftSplitInstance is fft/batched set up across devices.
type fftSplitInstance[T kernels.Float] struct {
	name     string
	n, batch int
	shape    string
	x        []T // the input, as the one-device op draws it
	out      []T // the output of the last Run
	shares   []kernels.Share
	parts    []*fftPart[T] // one per device, nil where the device has no share
	ran      bool
	closed   bool
}

// fftPart is one device's part: its build, queue, range of transforms and buffers.
type fftPart[T kernels.Float] struct {
	dev      *engine.Device
	f        *FFT[T]
	q        *engine.Queue
	off, b   int // the first transform and how many
	src, dst *engine.Buffer[T]
	probe    []T // probes: the outputs read back
}

func (pt *fftPart[T]) closeBuffers() error {
	err := errors.Join(pt.src.Close(), pt.dst.Close())
	pt.src, pt.dst = nil, nil
	return err
}

func (pt *fftPart[T]) Close() error {
	if pt == nil {
		return nil
	}
	return errors.Join(pt.closeBuffers(), pt.q.Close(), pt.f.Close())
}

// load gives pt buffers for b transforms of n points, the source holding transforms off
// to off+b-1 of x.
func (pt *fftPart[T]) load(ctx context.Context, x []T, n, off, b int) error {
	if err := pt.closeBuffers(); err != nil {
		return err
	}
	var err error
	if pt.src, err = engine.Upload(ctx, pt.q, x[2*n*off:2*n*(off+b)]); err != nil {
		return err
	}
	pt.dst, err = engine.NewBuffer[T](pt.dev, 2*n*b)
	return err
}

// run transforms the part's first b transforms and reads them back into dst.
func (pt *fftPart[T]) run(ctx context.Context, n, b int, dst []T) error {
	if err := pt.f.Forward(pt.q, pt.dst, pt.src, n, b); err != nil {
		return err
	}
	return pt.dst.Read(ctx, pt.q, 0, dst[:2*n*b])
}

func setupFFTSplit[T kernels.Float](ctx context.Context, name string, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (_ kernels.SplitInstance, err error) {
	if err := kernels.CheckPortableSplit(ctx, name, devs, p, o); err != nil {
		return nil, err
	}
	// The shape and input of newFFTInstance.
	n, batch := fftBatchLen, min(max(p.Size/fftBatchLen, 1), 1<<19)
	in := &fftSplitInstance[T]{name: name, n: n, batch: batch}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	in.x = kernels.RandFloats[T](kernels.NewRand(p.Seed, 0xff7), 2*n*batch, -1, 1)
	// Every device that may get a share is set up: all of them when the shares are
	// measured, those of a positive fraction when they are given (checked, one per
	// device, so at least one).
	in.parts = make([]*fftPart[T], len(devs))
	for i, d := range devs {
		if o.Fractions != nil && o.Fractions[i] == 0 {
			continue
		}
		pt := &fftPart[T]{dev: d}
		in.parts[i] = pt
		if pt.f, err = NewFFT[T](d); err != nil {
			return nil, err
		}
		if pt.q, err = d.NewQueue(); err != nil {
			return nil, err
		}
		if in.shape == "" {
			var ps []string
			for _, l := range pt.f.Passes(n) {
				ps = append(ps, fmt.Sprint(l))
			}
			in.shape = fmt.Sprintf("n=%d batch=%d passes=%s", n, batch, strings.Join(ps, "x"))
		}
	}
	if in.shares, err = in.plan(ctx, devs, o); err != nil {
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
		pt.off, pt.b = offs[i], sh.Units
		if err := pt.load(ctx, in.x, n, pt.off, pt.b); err != nil {
			return nil, err
		}
	}
	in.out = make([]T, 2*n*batch)
	return in, nil
}

// plan divides the transforms among devs (PlanShares, probing each device with the first
// transforms, read back).
func (in *fftSplitInstance[T]) plan(ctx context.Context, devs []*engine.Device, o kernels.SplitOptions) ([]kernels.Share, error) {
	limit := max(1, in.batch/len(devs)) // PlanShares' largest probe
	loaded := map[*fftPart[T]]int{}
	defer func() {
		for pt := range loaded {
			pt.closeBuffers()
			pt.probe = nil
		}
	}()
	probe := func(ctx context.Context, dev *engine.Device, units int) (time.Duration, error) {
		var pt *fftPart[T]
		for _, x := range in.parts {
			if x != nil && x.dev == dev {
				pt = x
				break
			}
		}
		if pt == nil {
			return 0, fmt.Errorf("kernels: %s: no part set up on %s: %w", in.name, dev.ID(), engine.ErrInvalidArg)
		}
		b := min(units, in.batch)
		if loaded[pt] < b {
			size := min(max(limit, b), in.batch)
			if err := pt.load(ctx, in.x, in.n, 0, size); err != nil {
				return 0, err
			}
			loaded[pt] = size
			pt.probe = make([]T, 2*in.n*size)
		}
		start := time.Now()
		if err := pt.run(ctx, in.n, b, pt.probe); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	return kernels.PlanShares(ctx, devs, in.batch, 1, o, probe)
}

func (in *fftSplitInstance[T]) Run(ctx context.Context) error {
	if in.closed {
		return fmt.Errorf("kernels: %s: split instance closed: %w", in.name, engine.ErrClosed)
	}
	in.ran = false
	err := kernels.RunParts(in.shares, func(i int) error {
		pt := in.parts[i]
		return pt.run(ctx, in.n, pt.b, in.out[2*in.n*pt.off:])
	})
	if err != nil {
		return fmt.Errorf("kernels: %s: %w", in.name, err)
	}
	in.ran = true
	return nil
}

// Verify checks every transform of the last Run against the float64 reference within
// FFTTolerance, as the one-device op does (CheckFFT).
func (in *fftSplitInstance[T]) Verify(ctx context.Context) error {
	if in.closed {
		return fmt.Errorf("kernels: %s: split instance closed: %w", in.name, engine.ErrClosed)
	}
	if !in.ran {
		return fmt.Errorf("kernels: %s: verify before a complete run: %w", in.name, engine.ErrInvalidArg)
	}
	return CheckFFT("fft batched", in.out, FFTRef(in.x, in.n, in.batch, false), in.n, FFTTolerance[T](in.n))
}

// Model is the one-device op's (fftInstance.Model): 5 n log2 n FLOPs per transform, the
// input read and the output written once.
func (in *fftSplitInstance[T]) Model() kernels.Model {
	e := float64(engine.SizeOf[T]())
	n, b := float64(in.n), float64(in.batch)
	return kernels.Model{Flops: 5 * n * math.Log2(n) * b, Bytes: 2 * 2 * n * e * b}
}

func (in *fftSplitInstance[T]) Shape() string { return in.shape }

func (in *fftSplitInstance[T]) Shares() []kernels.Share {
	return append([]kernels.Share(nil), in.shares...)
}

func (in *fftSplitInstance[T]) Close() error {
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
