package fft

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
)

// fft/batched split across devices (Op.Split) gives each device a contiguous range of
// the batch's transforms, the unit PlanShares divides: the device holds those inputs,
// transforms them, and reads its outputs back into their place in one host array. Each
// transform is computed as the one-device op computes it by default on that device
// (splitFFT: the regradix kernel on GPUs, the portable one on CPUs). On sharded data
// (kernels.PlaceSharded) the transforms are scattered by rows over the devices with a
// share once, each run transforms them where they lie and leaves the outputs there, laid
// out alike; Verify gathers them. The other fft ops are one transform each and are not
// split.

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
	*kernels.SplitRun[*fftPart[T]]
	n, batch int
	shape    string
	x        []T // the input, as the one-device op draws it
	out      []T // the output of the last Run
	// Sharded data (kernels.PlaceSharded): the transforms scattered by rows over the
	// devices with a share (sparts, in the order of sin's parts), transformed where they
	// lie into sout.
	sharded   bool
	sin, sout *shard.Buffer[T]
	sparts    []*fftPart[T]
}

// fftPart is one device's part: its build, queue, range of transforms and buffers.
type fftPart[T kernels.Float] struct {
	in       *fftSplitInstance[T]
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
	return errors.Join(pt.closeBuffers(), pt.q.Close(), pt.f.Close())
}

// upload gives pt buffers for b transforms, the source holding transforms off to
// off+b-1 of the input.
func (pt *fftPart[T]) upload(ctx context.Context, off, b int) error {
	if err := pt.closeBuffers(); err != nil {
		return err
	}
	n := pt.in.n
	var err error
	if pt.src, err = engine.Upload(ctx, pt.q, pt.in.x[2*n*off:2*n*(off+b)]); err != nil {
		return err
	}
	pt.dst, err = engine.NewBuffer[T](pt.dev, 2*n*b)
	return err
}

// run transforms the part's first b transforms and reads them back into dst.
func (pt *fftPart[T]) run(ctx context.Context, b int, dst []T) error {
	n := pt.in.n
	if err := pt.f.Forward(pt.q, pt.dst, pt.src, n, b); err != nil {
		return err
	}
	return pt.dst.Read(ctx, pt.q, 0, dst[:2*n*b])
}

// LoadProbe uploads the first transforms, as many as the batch has at most.
func (pt *fftPart[T]) LoadProbe(ctx context.Context, units int) error {
	size := min(units, pt.in.batch)
	pt.probe = make([]T, 2*pt.in.n*size)
	return pt.upload(ctx, 0, size)
}

// RunProbe transforms the probe's first transforms and reads them back; on sharded data
// it waits for them instead, the output left on the device as a sharded run leaves it.
func (pt *fftPart[T]) RunProbe(ctx context.Context, units int) error {
	if pt.in.sharded {
		if err := pt.StartProbe(ctx, units); err != nil {
			return err
		}
		return pt.FinishProbe(ctx)
	}
	return pt.run(ctx, min(units, pt.in.batch), pt.probe)
}

// StartProbe enqueues the probe's first transforms on sharded data, RunProbe's first half
// (kernels.ProbeStarter: the planner starts probes so on sharded data only); on host data
// it runs the whole probe.
func (pt *fftPart[T]) StartProbe(ctx context.Context, units int) error {
	if !pt.in.sharded {
		return pt.RunProbe(ctx, units)
	}
	return pt.f.Forward(pt.q, pt.dst, pt.src, pt.in.n, min(units, pt.in.batch))
}

// FinishProbe waits for the probe StartProbe started on sharded data.
func (pt *fftPart[T]) FinishProbe(ctx context.Context) error {
	if !pt.in.sharded {
		return nil
	}
	return pt.q.Finish(ctx)
}

func (pt *fftPart[T]) Load(ctx context.Context, off, units int) error {
	pt.off, pt.b, pt.probe = off, units, nil
	return pt.upload(ctx, off, units)
}

// Run transforms the share into its place in the output.
func (pt *fftPart[T]) Run(ctx context.Context) error {
	return pt.run(ctx, pt.b, pt.in.out[2*pt.in.n*pt.off:])
}

// splitFFT compiles the FFT a device's part runs: the regradix kernel on a GPU (its
// tuned shape, else RegDefault), as the one-device op runs by default there, else the
// portable one. On two H200 the split of 128M points on the portable kernel took 656 us
// against 534 us for one GPU on the regradix kernel (2026-11-29).
func splitFFT[T kernels.Float](d *engine.Device, name string) (*FFT[T], error) {
	if regNeeds(d.Info()) != nil {
		return NewFFT[T](d)
	}
	t, _, err := regTunablesFor(d, name, "")
	if err != nil {
		return nil, err
	}
	return NewRegFFT[T](d, t)
}

func setupFFTSplit[T kernels.Float](ctx context.Context, name string, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (_ kernels.SplitInstance, err error) {
	if err := kernels.CheckPortableSplit(ctx, name, devs, p, o); err != nil {
		return nil, err
	}
	if err := kernels.CheckSharded(name, o, true); err != nil {
		return nil, err
	}
	// The shape and input of newFFTInstance.
	n, batch := fftBatchLen, min(max(p.Size/fftBatchLen, 1), 1<<19)
	in := &fftSplitInstance[T]{n: n, batch: batch, sharded: o.Placement == kernels.PlaceSharded}
	in.SplitRun = kernels.NewSplitRun(name, devs, o, func(_ context.Context, d *engine.Device) (_ *fftPart[T], err error) {
		pt := &fftPart[T]{in: in, dev: d}
		defer func() {
			if err != nil {
				pt.Close()
			}
		}()
		if pt.f, err = splitFFT[T](d, name); err != nil {
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
	in.x = kernels.RandFloats[T](kernels.NewRand(p.Seed, 0xff7), 2*n*batch, -1, 1)
	in.out = make([]T, 2*n*batch)
	if err := in.OpenAll(ctx); err != nil {
		return nil, err
	}
	if _, err := in.Plan(ctx, batch, 1); err != nil {
		return nil, err
	}
	if err := in.Place(ctx); err != nil {
		return nil, err
	}
	return in, nil
}

// scatter lays the transforms out by rows over the devices with a share, each holding its
// share's transforms on its part's queue, with an output laid out alike.
func (in *fftSplitInstance[T]) scatter(ctx context.Context) error {
	parts, counts, err := in.Sharing(ctx)
	if err != nil {
		return err
	}
	var qs []*engine.Queue
	for _, pt := range parts {
		if err := pt.closeBuffers(); err != nil { // the probe's
			return err
		}
		qs = append(qs, pt.q)
	}
	in.sparts = parts
	if in.sin, err = shard.Scatter(ctx, qs, in.x, shard.ByRows(2*in.n), counts); err != nil {
		return err
	}
	in.sout, err = shard.Like(in.sin)
	return err
}

// runSharded transforms the sharded batch into the sharded output.
func (in *fftSplitInstance[T]) runSharded(ctx context.Context) error {
	src, dst := in.sin.Parts(), in.sout.Parts()
	for i, pt := range in.sparts {
		if err := pt.f.Forward(dst[i].Queue, dst[i].Buf, src[i].Buf, in.n, src[i].Len/(2*in.n)); err != nil {
			return fmt.Errorf("kernels: fft batched on sharded data, part %d on %s: %w", i, pt.dev.ID(), err)
		}
	}
	return in.sout.Finish(ctx)
}

// closeSharded releases the sharded batch and output.
func (in *fftSplitInstance[T]) closeSharded() error {
	err := errors.Join(in.sout.Close(), in.sin.Close())
	in.sin, in.sout, in.sparts = nil, nil, nil
	return err
}

// Verify checks every transform of the last Run against the float64 reference within
// FFTTolerance, as the one-device op does (CheckFFT); on sharded data it gathers them
// first.
func (in *fftSplitInstance[T]) Verify(ctx context.Context) error {
	if err := in.CheckRan(); err != nil {
		return err
	}
	if in.sharded {
		if err := in.sout.GatherInto(ctx, in.out); err != nil {
			return err
		}
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
