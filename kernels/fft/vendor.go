package fft

import (
	"context"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// vendorVariants are the vendor FFT baselines of an fft op: cuFFT on CUDA devices, clFFT
// on OpenCL devices (engine.Device.FFT), out of place on the op's own inputs and layout.
func vendorVariants[T kernels.Float](name string, kind fftKind) []kernels.Variant {
	setup := func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		return setupVendorFFT[T](ctx, q, name, kind, p)
	}
	return []kernels.Variant{
		{Name: "cuFFT", Doc: "the vendor baseline: a cufftPlanMany plan, out of place", Backend: "cuda", Vendor: true, Setup: setup},
		{Name: "clFFT", Doc: "the vendor baseline: a baked clFFT plan, out of place, unscaled", Backend: "opencl", Vendor: true, Setup: setup},
	}
}

// vendorFFT runs an fft op through the device's vendor FFT: the same inputs, output layout
// and verification as Prism's kernels.
type vendorFFT[T kernels.Float] struct {
	*fftInstance[T]
	lib  *engine.FFT
	plan *engine.FFTPlan
}

func setupVendorFFT[T kernels.Float](ctx context.Context, q *engine.Queue, name string, kind fftKind, p kernels.Params) (_ kernels.Instance, err error) {
	lib, err := q.Device().FFT()
	if err != nil {
		if errors.Is(err, engine.ErrUnavailable) {
			err = fmt.Errorf("%w (%w)", err, engine.ErrUnsupported)
		}
		return nil, err
	}
	in, err := newFFTInstance[T](ctx, q, name, kind, p, false)
	if err != nil {
		return nil, err
	}
	v := &vendorFFT[T]{fftInstance: in, lib: lib}
	spec := engine.FFTSpec{Kind: engine.C2C, Shape: []int{in.n}, Batch: in.batch, Double: engine.SizeOf[T]() == 8}
	switch kind {
	case fftInverse:
		spec.Inverse = true
	case fft2D:
		spec.Shape = []int{in.rows, in.cols}
	case fftR2C:
		spec.Kind = engine.R2C
	}
	if v.plan, err = lib.Plan(spec); err != nil {
		in.Close()
		return nil, err
	}
	return v, nil
}

func (v *vendorFFT[T]) Run(ctx context.Context, q *engine.Queue) error {
	return engine.RunFFT(v.plan, q, v.x.Next()[0], v.out)
}

// Library names the FFT library that ran.
func (v *vendorFFT[T]) Library() string { return v.lib.Library().String() }

// Shape leaves out Prism's passes, which the library does not run.
func (v *vendorFFT[T]) Shape() string {
	switch v.kind {
	case fft2D:
		return fmt.Sprintf("rows=%d cols=%d", v.rows, v.cols)
	case fftBatched:
		return fmt.Sprintf("n=%d batch=%d", v.n, v.batch)
	case fftR2C:
		return fmt.Sprintf("n=%d real", v.n)
	}
	return fmt.Sprintf("n=%d", v.n)
}

func (v *vendorFFT[T]) Close() error { return errors.Join(v.plan.Close(), v.fftInstance.Close()) }
