package elementwise

import (
	"context"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// vendorVariants are the vendor BLAS baselines of a map op: axpy only (cublasSaxpy/Daxpy
// on CUDA, CLBlastSaxpy/Daxpy on OpenCL, engine.Axpy); the other map ops have no BLAS
// routine of the same semantics.
func vendorVariants[T kernels.Float](name string, op MapOp) []kernels.Variant {
	if op != MapAxpy {
		return nil
	}
	setup := func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		return setupVendorAxpy[T](ctx, q, name, p)
	}
	return []kernels.Variant{
		{Name: "cuBLAS", Doc: "the vendor baseline: cublasSaxpy/Daxpy", Backend: "cuda", Vendor: true, Setup: setup},
		{Name: "CLBlast", Doc: "the vendor baseline: CLBlastSaxpy/Daxpy", Backend: "opencl", Vendor: true, Setup: setup},
	}
}

// vendorAxpy runs map/axpy through the device's vendor BLAS. The library updates y in
// place, so a Run computes out = a*x + out on the instance's output buffer: the same bytes
// as Prism's kernel (x and y read, one array written). Verify resets out to the last set's
// y, runs the library once more and checks out = a*x + y against the reference.
type vendorAxpy[T kernels.Float] struct {
	*mapInstance[T]
	blas *engine.BLAS
}

func setupVendorAxpy[T kernels.Float](ctx context.Context, q *engine.Queue, name string, p kernels.Params) (kernels.Instance, error) {
	blas, err := q.Device().BLAS()
	if err != nil {
		if errors.Is(err, engine.ErrUnavailable) {
			err = fmt.Errorf("%w (%w)", err, engine.ErrUnsupported)
		}
		return nil, err
	}
	in, err := newMapInstance[T](ctx, q, name, MapAxpy, p, false)
	if err != nil {
		return nil, err
	}
	v := &vendorAxpy[T]{mapInstance: in, blas: blas}
	if err := v.reset(q, in.x.Next()); err != nil {
		in.Close()
		return nil, err
	}
	return v, nil
}

// reset copies the set's y into the output.
func (v *vendorAxpy[T]) reset(q *engine.Queue, xy []*engine.Buffer[T]) error {
	return v.out.CopyFrom(q, 0, xy[1], 0, v.n)
}

func (v *vendorAxpy[T]) Run(ctx context.Context, q *engine.Queue) error {
	xy := v.x.Next()
	return engine.Axpy(v.blas, q, v.n, v.a, xy[0], v.out)
}

func (v *vendorAxpy[T]) Verify(ctx context.Context, q *engine.Queue) error {
	xy := v.x.LastBuffers()
	if err := v.reset(q, xy); err != nil {
		return err
	}
	if err := engine.Axpy(v.blas, q, v.n, v.a, xy[0], v.out); err != nil {
		return err
	}
	return v.mapInstance.Verify(ctx, q)
}

// Library names the BLAS that ran.
func (v *vendorAxpy[T]) Library() string { return v.blas.Library().String() }
