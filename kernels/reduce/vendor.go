package reduce

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// vendorVariants are the vendor BLAS baselines of a whole-array float sum: CLBlast's
// CLBlastSsum/Dsum (its non-absolute counterpart of xASUM) on OpenCL devices. cuBLAS has
// only the sum of absolute values, so CUDA devices have none (scripts/vendor.py times
// torch.sum, CUB's reduction, instead).
func vendorVariants[T ReduceElem](name string, op ReduceOp, rows bool) []kernels.Variant {
	if op != ReduceSum || rows || !kernels.TypeOf[T]().Float {
		return nil
	}
	return []kernels.Variant{{
		Name: "CLBlast", Doc: "the vendor baseline: CLBlastSsum/Dsum", Backend: "opencl", Vendor: true,
		Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			return setupVendorSum[T](ctx, q, name, p)
		},
	}}
}

// vendorSum runs a whole-array sum through the device's vendor BLAS on the op's inputs.
type vendorSum[T ReduceElem] struct {
	*reduceInstance[T]
	blas *engine.BLAS
}

func setupVendorSum[T ReduceElem](ctx context.Context, q *engine.Queue, name string, p kernels.Params) (kernels.Instance, error) {
	blas, err := q.Device().BLAS()
	if err != nil {
		if errors.Is(err, engine.ErrUnavailable) {
			err = fmt.Errorf("%w (%w)", err, engine.ErrUnsupported)
		}
		return nil, err
	}
	in, err := setupReduce[T](ctx, q, name, ReduceSum, false, false, p)
	if err != nil {
		return nil, err
	}
	return &vendorSum[T]{reduceInstance: in.(*reduceInstance[T]), blas: blas}, nil
}

func (v *vendorSum[T]) Run(ctx context.Context, q *engine.Queue) error {
	x := v.x.Next()[0]
	switch out := any(v.out).(type) {
	case *engine.Buffer[float32]:
		return engine.Sum(v.blas, q, v.cols, any(x).(*engine.Buffer[float32]), out)
	case *engine.Buffer[float64]:
		return engine.Sum(v.blas, q, v.cols, any(x).(*engine.Buffer[float64]), out)
	}
	return fmt.Errorf("kernels: reduce sum through %s: float types only: %w", v.blas.Library().Name, engine.ErrUnsupported)
}

// Verify checks the sum within kernels.SumBound of its n roundings (the library's order is
// not known).
func (v *vendorSum[T]) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := v.out.Download(ctx, q)
	if err != nil {
		return err
	}
	last, err := v.x.Last(ctx)
	if err != nil {
		return err
	}
	x := last[0]
	want, _ := ReduceRowsRef(ReduceSum, x, 1, v.cols)
	var mag float64
	for _, e := range x {
		mag += math.Abs(float64(e))
	}
	tol := kernels.SumBound[float64](1, 0)
	switch any(*new(T)).(type) {
	case float32:
		tol = kernels.SumBound[float32](v.cols, mag)
	case float64:
		tol = kernels.SumBound[float64](v.cols, mag)
	}
	if d := math.Abs(float64(got[0]) - want[0]); !(d <= tol) {
		return fmt.Errorf("%w: reduce sum (%s) of %d = %v, want %v (|diff| %.3g > tolerance %.3g)", kernels.ErrVerify, v.blas.Library().Name, v.cols, got[0], want[0], d, tol)
	}
	return nil
}

// Library names the BLAS that ran.
func (v *vendorSum[T]) Library() string { return v.blas.Library().String() }
