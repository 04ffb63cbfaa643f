// Package gemm holds the gemm family of Prism's kernel suite: general matrix multiply
// D = alpha*op(A)*op(B) + beta*C, single and strided batched, in every transpose
// combination.
//
// Precision is part of an op's name: gemm/nn/float32 and float64, and for each layout
// (nn, nt, tn, batched) the Precisions tf32, float32x3tf32 (float32 accuracy from three
// tf32 products), float16, bfloat16, float8e4m3 and float8e5m2, with float32
// accumulation and output. Every op has these kinds of implementation:
//
//   - the portable OpenCL C kernel (gemm.cl; NewGEMM, NewGEMMOf), tiled in local memory
//     with register blocking, which runs every precision on every device by converting
//     the inputs to float32 as it loads them;
//   - on NVIDIA GPUs through CUDA, the tensor cores: Hopper's wgmma fed by TMA for float16
//     and bfloat16 (wgmma.cu; NewWGMMA, variant cuda-wgmma), and mma.sync with ldmatrix
//     and a cp.async pipeline for every precision but float32 (mma.cu; NewMMA, variant
//     cuda-mma; float64 on the fp64 tensor cores); and a SIMT float32 kernel (sgemm.cu;
//     NewSGEMMSimt and NewSGEMMSimtWith with SimtTunables, variant cuda-simt);
//   - on NVIDIA's OpenCL, the tensor cores through inline PTX mma.sync for tf32, float16
//     and bfloat16 (gemm_mma.cl; NewCLMMA, variant opencl-mma);
//   - on OpenCL GPUs, the SIMT float32 kernel in plain OpenCL C (sgemm.cl; NewCLSimt,
//     variant opencl-simt);
//   - the vendor BLAS as a baseline (cuBLAS, CLBlast) for float32 and float64.
//
// Which of them computes which precision (Prec: PrecTF32, PrecFloat16, ...) is stated once,
// as an ordered list: each op lists its variants from it, and New, which returns the
// fastest GEMM a device runs for a precision, tries the same implementations in the same
// order. GEMMShape (engine.GemmSpec, the shape the vendor BLAS takes too) describes a call.
//
// GEMMRef is the float64 reference (gonum); GEMMTolerance and Precision.Tolerance bound
// the error and say where the bounds come from; Family lists the ops the suite runs.
package gemm
