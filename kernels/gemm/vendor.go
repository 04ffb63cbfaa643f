package gemm

import (
	"context"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// vendorVariants are the vendor BLAS baselines of a GEMM op: cuBLAS on CUDA devices,
// CLBlast on OpenCL devices (engine.Device.BLAS), on the op's own inputs and shapes.
func vendorVariants[T kernels.Float](name string, ta, tb bool, batch int) []kernels.Variant {
	setup := func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		return setupVendorGEMM[T](ctx, q, name, ta, tb, batch, p)
	}
	return []kernels.Variant{
		{Name: "cuBLAS", Doc: "the vendor baseline: cublasSgemm/Dgemm (StridedBatched), true fp32 (no TF32)",
			Backend: "cuda", Vendor: true, Setup: setup},
		{Name: "CLBlast", Doc: "the vendor baseline: CLBlastSgemm/Dgemm (StridedBatched), row-major",
			Backend: "opencl", Vendor: true, Setup: setup},
	}
}

// vendorGEMM runs the op's GEMM through the device's vendor BLAS. The library computes C
// in place, so a Run computes D = alpha*op(A)*op(B) + beta*D: the same FLOPs and bytes as
// Prism's kernel (which reads C and writes a separate D), on D instead of C. Verify resets
// D to the last set's C, runs the library once more and checks D against the reference.
type vendorGEMM[T kernels.Float] struct {
	*gemmInstance[T, T]
	blas *engine.BLAS
}

func setupVendorGEMM[T kernels.Float](ctx context.Context, q *engine.Queue, name string, ta, tb bool, batch int, p kernels.Params) (_ kernels.Instance, err error) {
	blas, err := q.Device().BLAS()
	if err != nil {
		if errors.Is(err, engine.ErrUnavailable) {
			err = fmt.Errorf("%w (%w)", err, engine.ErrUnsupported)
		}
		return nil, err
	}
	in, err := newGEMMInstance[T, T](ctx, q, name, precisionOf(kernels.TypeName[T]()), ta, tb, batch, p, nil)
	if err != nil {
		return nil, err
	}
	v := &vendorGEMM[T]{gemmInstance: in, blas: blas}
	in.ab.Next()
	if err := v.reset(q, in.c.Next()[0]); err != nil {
		in.Close()
		return nil, err
	}
	return v, nil
}

// reset copies the set's C into D.
func (v *vendorGEMM[T]) reset(q *engine.Queue, c *engine.Buffer[T]) error {
	return v.d.CopyFrom(q, 0, c, 0, c.Len())
}

func (v *vendorGEMM[T]) Run(ctx context.Context, q *engine.Queue) error {
	ab := v.ab.Next()
	v.c.Next()
	return engine.Gemm(v.blas, q, v.shape, v.alpha, ab[0], ab[1], v.beta, v.d)
}

func (v *vendorGEMM[T]) Verify(ctx context.Context, q *engine.Queue) error {
	ab := v.ab.LastBuffers()
	if err := v.reset(q, v.c.LastBuffers()[0]); err != nil {
		return err
	}
	if err := engine.Gemm(v.blas, q, v.shape, v.alpha, ab[0], ab[1], v.beta, v.d); err != nil {
		return err
	}
	return v.gemmInstance.Verify(ctx, q)
}

// Library names the BLAS that ran.
func (v *vendorGEMM[T]) Library() string { return v.blas.Library().String() }

func (v *vendorGEMM[T]) Close() error { return v.gemmInstance.Close() }
