package stream

import (
	"context"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// vendorVariants are the vendor BLAS baselines of a stream op: the dot product only
// (cublasSdot/Ddot on CUDA, CLBlastSdot/Ddot on OpenCL, engine.Dot); the other stream ops
// have no BLAS routine of the same semantics.
func vendorVariants[T kernels.Float](name string, op StreamOp) []kernels.Variant {
	if op != OpDot {
		return nil
	}
	setup := func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		if err := kernels.CheckSize(name, p); err != nil {
			return nil, err
		}
		return setupVendorDot[T](ctx, q, p)
	}
	return []kernels.Variant{
		{Name: "cuBLAS", Doc: "the vendor baseline: cublasSdot/Ddot, the result in device memory", Backend: "cuda", Vendor: true, Setup: setup},
		{Name: "CLBlast", Doc: "the vendor baseline: CLBlastSdot/Ddot", Backend: "opencl", Vendor: true, Setup: setup},
	}
}

// vendorDot runs stream/dot through the device's vendor BLAS on the op's own inputs.
type vendorDot[T kernels.Float] struct {
	*streamInstance[T]
	blas *engine.BLAS
}

func setupVendorDot[T kernels.Float](ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
	blas, err := q.Device().BLAS()
	if err != nil {
		if errors.Is(err, engine.ErrUnavailable) {
			err = fmt.Errorf("%w (%w)", err, engine.ErrUnsupported)
		}
		return nil, err
	}
	in, err := newStreamInstance[T](ctx, q, OpDot, p, false)
	if err != nil {
		return nil, err
	}
	return &vendorDot[T]{streamInstance: in, blas: blas}, nil
}

func (v *vendorDot[T]) Run(ctx context.Context, q *engine.Queue) error {
	ab := v.ab.Next()
	return engine.Dot(v.blas, q, v.n, ab[0], ab[1], v.out)
}

// Verify checks the dot product within kernels.SumBound of its n+1 roundings (a product and
// n additions per term chain; the library's order is not known).
func (v *vendorDot[T]) Verify(ctx context.Context, q *engine.Queue) error {
	want, mag, err := v.dotRef(ctx)
	if err != nil {
		return err
	}
	tol := kernels.SumBound[T](v.n+1, mag)
	return v.checkDot(ctx, "stream dot ("+v.blas.Library().Name+")", q, want, tol)
}

// Library names the BLAS that ran.
func (v *vendorDot[T]) Library() string { return v.blas.Library().String() }
