package gemm

import (
	"errors"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// impl is one implementation of the GEMM ops.
type impl int

const (
	implWGMMA    impl = iota // cuda-wgmma: WGMMA, wgmma.cu
	implMMA                  // cuda-mma: MMA, mma.cu
	implSimt                 // cuda-simt: SGEMMSimt, sgemm.cu
	implVendor               // cuBLAS and CLBlast, cuBLASLt: the vendor baselines
	implCLMMA                // opencl-mma: CLMMA, gemm_mma.cl
	implCLSimt               // opencl-simt: CLSimt, sgemm.cl
	implPortable             // portable: GEMMOf, gemm.cl
)

// dispatch states which implementation computes which precision, in priority order. An
// op lists as its variants, in this order, the implementations that take its precision
// and layout (gemmOp); New tries, in the same order, those that take the precision and
// that it returns. The first that a device runs is chosen.
var dispatch = []struct {
	impl impl
	// takes reports whether the implementation computes precision p.
	takes func(p Prec) bool
	// layout, when set, reports whether the ops of precision p in layout (ta, tb) list the
	// implementation; nil means every layout.
	layout func(p Prec, ta, tb bool) bool
	// inNew, when set, reports whether New tries the implementation for p; nil means
	// for every precision it takes.
	inNew func(p Prec) bool
}{
	// First where it runs: on an H100 wgmma.cu runs 2.4x mma.cu (docs/PERFORMANCE.md).
	// The ops list it in the layouts wgmma.cu takes as they are; New's WGMMA runs the
	// others on MMA.
	{impl: implWGMMA, takes: Prec.Warpgroup, layout: wgmmaTakesLayout},
	// New offers no fp64 tensor cores: New's float64 GEMM is the portable kernel.
	{impl: implMMA, takes: Prec.TensorCore, inNew: func(p Prec) bool { return p != PrecFloat64 }},
	{impl: implSimt, takes: isFloat32},
	// Baselines (cuBLAS, CLBlast; cuBLASLt for tf32, 16-bit and E4M3 inputs): the ops list
	// them, Pick never chooses them unless named, New never returns them.
	{impl: implVendor, takes: Prec.Vendor, inNew: func(Prec) bool { return false }},
	// After the CUDA variants: the tensor cores through NVIDIA's OpenCL.
	{impl: implCLMMA, takes: Prec.OpenCLTensorCore},
	// Last before the portable kernel: sgemm.cu's SIMT design in OpenCL C, on OpenCL GPUs.
	{impl: implCLSimt, takes: isFloat32},
	{impl: implPortable, takes: func(Prec) bool { return true }},
}

func isFloat32(p Prec) bool { return p == PrecFloat32 }

// opImpls returns the implementations that the ops of precision p in layout (ta, tb) list,
// in priority order.
func opImpls(p Prec, ta, tb bool) []impl {
	var out []impl
	for _, d := range dispatch {
		if d.takes(p) && (d.layout == nil || d.layout(p, ta, tb)) {
			out = append(out, d.impl)
		}
	}
	return out
}

// newImpls returns the implementations that New tries for precision p, in priority order.
func newImpls(p Prec) []impl {
	var out []impl
	for _, d := range dispatch {
		if d.takes(p) && (d.inNew == nil || d.inNew(p)) {
			out = append(out, d.impl)
		}
	}
	return out
}

// wgmmaTakesLayout reports whether wgmma.cu takes precision p in layout (ta, tb): every
// layout for tf32 and float32x3tf32 (gemm_split first writes K-major copies of the
// operands), A not transposed for 16-bit and float8 inputs (float8's wgmma reads both
// operands K-major: a B stored k x n is first copied n x k by gemm_transpose).
func wgmmaTakesLayout(p Prec, ta, tb bool) bool {
	switch {
	case p.TF32():
		return true
	case p.Bits16(), p.Float8():
		return !ta
	}
	return false
}

// New readies the fastest GEMM of precision p that dev runs, trying in turn the
// implementations of dispatch that New returns: Hopper's warpgroup tensor cores (WGMMA)
// for tf32, float32x3tf32, float16, bfloat16 and float8 on an sm_90 GPU through CUDA
// (layouts that wgmma.cu does not take run on MMA through it); the tensor cores through
// mma.sync (MMA) on an NVIDIA GPU through CUDA that has them for p (float64 excepted);
// for float32 the SIMT kernels (SGEMMSimt through CUDA, CLSimt on OpenCL GPUs); for tf32,
// float16 and bfloat16 the tensor cores through NVIDIA's OpenCL (CLMMA); else the
// portable kernel (GEMMOf). A candidate that says unsupported gives way to the next; any
// other error is returned. In and Out must be p's input and output types.
func New[In InputType, Out kernels.Float](dev *engine.Device, p Precision) (Runner[In, Out], error) {
	type closer interface{ Close() error }
	for _, im := range newImpls(p.MMA) {
		var g closer
		var err error
		switch im {
		case implWGMMA:
			g, err = NewWGMMA[In](dev, p)
		case implMMA:
			g, err = NewMMA[In, Out](dev, p)
		case implSimt:
			g, err = NewSGEMMSimt(dev)
		case implCLMMA:
			g, err = NewCLMMA[In](dev, p)
		case implCLSimt:
			g, err = NewCLSimt(dev)
		case implPortable:
			return NewGEMMOf[In, Out](dev, p)
		default:
			continue
		}
		if errors.Is(err, engine.ErrUnsupported) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if r, ok := g.(Runner[In, Out]); ok {
			return r, nil
		}
		g.Close()
	}
	return NewGEMMOf[In, Out](dev, p)
}
