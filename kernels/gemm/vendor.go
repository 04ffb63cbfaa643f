package gemm

import (
	"context"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Vendor reports whether a vendor library computes p, so that the ops of p list a vendor
// baseline: the standard BLAS precisions (BLAS: cuBLAS and CLBlast) and cuBLASLt's
// (BLASLt).
func (p Prec) Vendor() bool { return p.BLAS() || p.BLASLt() }

// BLASLt reports whether cuBLASLt computes p as the op defines it: tf32 (float32 inputs,
// CUBLAS_COMPUTE_32F_FAST_TF32), float16, bfloat16 and float8e4m3 (inputs as stored,
// float32 accumulation and C). It has no float8e5m2 GEMM of two E5M2 operands, and no
// 3xTF32.
func (p Prec) BLASLt() bool { return p == PrecTF32 || p.Bits16() || p == PrecFloat8E4M3 }

// vendorVariants are the vendor baselines of a GEMM op of precision p, on the op's own
// inputs and shapes: for float32 and float64 cuBLAS on CUDA devices and CLBlast on OpenCL
// devices (engine.Device.BLAS, engine.Gemm); for the precisions of cuBLASLt (Prec.BLASLt)
// cuBLASLt on CUDA devices (engine.GemmMixed). CLBlast's half-precision GEMM computes in
// float16, not the op's float32 accumulation, so OpenCL has no baseline for them.
func vendorVariants[In InputType, Out kernels.Float](p Precision, name string, ta, tb bool, batch int) []kernels.Variant {
	if p.MMA.BLASLt() {
		return []kernels.Variant{blasLtVariant[In](p, name, ta, tb, batch)}
	}
	setup := func(ctx context.Context, q *engine.Queue, pr kernels.Params) (kernels.Instance, error) {
		return setupVendorGEMM[Out](ctx, q, name, ta, tb, batch, pr)
	}
	return []kernels.Variant{
		{Name: "cuBLAS", Doc: "the vendor baseline: cublasSgemm/Dgemm (StridedBatched), true fp32 (no TF32)",
			Backend: "cuda", Vendor: true, Setup: setup},
		{Name: "CLBlast", Doc: "the vendor baseline: CLBlastSgemm/Dgemm (StridedBatched), row-major",
			Backend: "opencl", Vendor: true, Setup: setup},
	}
}

// blasLtVariant is the cuBLASLt baseline of an op of precision p with inputs In.
func blasLtVariant[In InputType](p Precision, name string, ta, tb bool, batch int) kernels.Variant {
	doc := "the vendor baseline: cublasLtMatmul, " + map[bool]string{
		true:  "CUBLAS_COMPUTE_32F_FAST_TF32 (the library rounds the float32 inputs to tf32)",
		false: p.In + " inputs, CUBLAS_COMPUTE_32F, float32 C",
	}[p.MMA == PrecTF32] + ", the heuristic's first algorithm within a 32 MiB workspace"
	minCompute := p.MMACompute // sm_80: tf32, bfloat16; sm_89: float8
	if p.MMA == PrecFloat16 {
		minCompute = 0 // every GPU that runs CUDA 11
	}
	if p.MMA.Float8() {
		doc += "; before sm_100 only in the layout nt (cuBLASLt's TN form)"
	}
	return kernels.Variant{Name: "cuBLASLt", Doc: doc, Backend: "cuda", Vendor: true, MinCompute: minCompute,
		Setup: func(ctx context.Context, q *engine.Queue, pr kernels.Params) (kernels.Instance, error) {
			var z In
			switch any(z).(type) {
			case float32:
				return setupBLASLt[float32](ctx, q, name, p, ta, tb, batch, pr)
			case engine.Half:
				return setupBLASLt[engine.Half](ctx, q, name, p, ta, tb, batch, pr)
			case engine.BFloat16:
				return setupBLASLt[engine.BFloat16](ctx, q, name, p, ta, tb, batch, pr)
			case engine.Float8E4M3:
				return setupBLASLt[engine.Float8E4M3](ctx, q, name, p, ta, tb, batch, pr)
			case engine.Float8E5M2:
				return setupBLASLt[engine.Float8E5M2](ctx, q, name, p, ta, tb, batch, pr)
			}
			return nil, fmt.Errorf("kernels: %s: cuBLASLt takes no %s inputs: %w", name, p.In, engine.ErrUnsupported)
		}}
}

// vendorGEMM runs the op's GEMM through the device's vendor BLAS. The library computes C
// in place, so a Run computes D = alpha*op(A)*op(B) + beta*D: the same FLOPs and bytes as
// Prism's kernel (which reads C and writes a separate D), on D instead of C. Verify resets
// D to the last set's C, runs the library once more and checks D against the reference.
type vendorGEMM[T kernels.Float] struct {
	*gemmInstance[T, T]
	blas *engine.BLAS
}

// vendorBLAS returns the device's vendor BLAS, an unavailable library saying unsupported
// too (the variant does not run there, as a kernel the device cannot build).
func vendorBLAS(q *engine.Queue) (*engine.BLAS, error) {
	blas, err := q.Device().BLAS()
	if errors.Is(err, engine.ErrUnavailable) {
		err = fmt.Errorf("%w (%w)", err, engine.ErrUnsupported)
	}
	return blas, err
}

func setupVendorGEMM[T kernels.Float](ctx context.Context, q *engine.Queue, name string, ta, tb bool, batch int, p kernels.Params) (_ kernels.Instance, err error) {
	blas, err := vendorBLAS(q)
	if err != nil {
		return nil, err
	}
	in, err := newGEMMInstance[T, T](ctx, q, name, precisionOf(kernels.TypeName[T]()), ta, tb, batch, p, nil)
	if err != nil {
		return nil, err
	}
	v := &vendorGEMM[T]{gemmInstance: in, blas: blas}
	in.ab.Next()
	if err := resetD(q, in, in.c.Next()[0]); err != nil {
		in.Close()
		return nil, err
	}
	return v, nil
}

// resetD copies the set's C into the instance's D.
func resetD[In InputType, Out kernels.Float](q *engine.Queue, in *gemmInstance[In, Out], c *engine.Buffer[Out]) error {
	return in.d.CopyFrom(q, 0, c, 0, c.Len())
}

func (v *vendorGEMM[T]) Run(ctx context.Context, q *engine.Queue) error {
	ab := v.ab.Next()
	v.c.Next()
	return engine.Gemm(v.blas, q, v.shape, v.alpha, ab[0], ab[1], v.beta, v.d)
}

func (v *vendorGEMM[T]) Verify(ctx context.Context, q *engine.Queue) error {
	ab := v.ab.LastBuffers()
	if err := resetD(q, v.gemmInstance, v.c.LastBuffers()[0]); err != nil {
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

// blasLtGEMM runs the op's GEMM through cuBLASLt (engine.GemmMixed) as vendorGEMM runs it
// through cuBLAS: in place on D, Verify resetting D to the last set's C, running the
// library once more and checking D against the float64 reference with the precision's
// tolerance, as Prism's own kernels are checked.
type blasLtGEMM[In engine.GemmInput] struct {
	*gemmInstance[In, float32]
	blas    *engine.BLAS
	lib     engine.Library
	compute engine.GemmCompute
}

// setupBLASLt readies the cuBLASLt baseline of an op of precision p: cuBLASLt loaded
// (engine.BLAS.MixedLibrary), the op's inputs, and one GEMM on the first set, so that a
// combination that cuBLASLt refuses (float8 outside its TN form, a shape its heuristic has
// no algorithm for) says unsupported here, naming why, rather than at the first Run.
func setupBLASLt[In engine.GemmInput](ctx context.Context, q *engine.Queue, name string, p Precision, ta, tb bool, batch int, pr kernels.Params) (kernels.Instance, error) {
	blas, err := vendorBLAS(q)
	if err != nil {
		return nil, err
	}
	lib, err := blas.MixedLibrary()
	if errors.Is(err, engine.ErrUnavailable) {
		err = fmt.Errorf("%w (%w)", err, engine.ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	in, err := newGEMMInstance[In, float32](ctx, q, name, p, ta, tb, batch, pr, nil)
	if err != nil {
		return nil, err
	}
	v := &blasLtGEMM[In]{gemmInstance: in, blas: blas, lib: lib, compute: engine.ComputeFloat32}
	if p.MMA == PrecTF32 {
		v.compute = engine.ComputeTF32
	}
	ab := in.ab.Next()
	if err := resetD(q, in, in.c.Next()[0]); err != nil {
		in.Close()
		return nil, err
	}
	if err := v.gemm(q, ab); err != nil {
		in.Close()
		return nil, fmt.Errorf("kernels: %s (cuBLASLt): %w", name, err)
	}
	return v, nil
}

// gemm computes D = alpha*op(A)*op(B) + beta*D with the set's A and B.
func (v *blasLtGEMM[In]) gemm(q *engine.Queue, ab []*engine.Buffer[In]) error {
	return engine.GemmMixed(v.blas, q, v.shape, v.compute, v.alpha, ab[0], ab[1], v.beta, v.d)
}

// blockRunner is the Runner a GEMM split runs each block through (split.go).
func (v *blasLtGEMM[In]) blockRunner() any {
	return &blasLtRunner[In]{blas: v.blas, compute: v.compute}
}

func (v *blasLtGEMM[In]) Run(ctx context.Context, q *engine.Queue) error {
	ab := v.ab.Next()
	v.c.Next()
	return v.gemm(q, ab)
}

func (v *blasLtGEMM[In]) Verify(ctx context.Context, q *engine.Queue) error {
	if err := resetD(q, v.gemmInstance, v.c.LastBuffers()[0]); err != nil {
		return err
	}
	if err := v.gemm(q, v.ab.LastBuffers()); err != nil {
		return err
	}
	return v.gemmInstance.Verify(ctx, q)
}

// Library names cuBLASLt, its version and file.
func (v *blasLtGEMM[In]) Library() string { return v.lib.String() }

func (v *blasLtGEMM[In]) Close() error { return v.gemmInstance.Close() }
