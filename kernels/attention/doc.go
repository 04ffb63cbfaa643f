// Package attention holds the attention family of Prism's kernel suite: scaled
// dot-product attention in FlashAttention-style tiles with an online softmax and an
// optional causal mask, never forming the seq x seq matrix (attention.cl).
//
// NewAttention compiles the family for a device, for tensors stored in float32, float64,
// float16, bfloat16 or float8e4m3 (Elem; the last three computed in float32); AttentionRef is the
// float64 reference and AttentionTolerance and AttentionToleranceOf the error bounds;
// Family lists the ops the suite runs.
//
// On GPUs the float32 ops run NewFlash (attention_flash.cl, variant flash-simt, tunables
// FlashTunables): FlashAttention-2 in SIMT, true fp32 on every backend (CUDA through the
// translation, any OpenCL GPU): a work-group keeps 64 queries in local memory and loops
// over 32-key K and V blocks staged there, each work-item computing 4 x 4 scores and 4 x 8
// outputs in registers, with an online softmax in exp2. CPUs whose local memory cannot
// hold those tiles (Rusticl) keep the portable kernel.
//
// On NVIDIA GPUs through CUDA the float16 and bfloat16 ops also run on the tensor cores
// for head dims 64 and 128: NewWGMMA (wgmma.cu, sm_90: warpgroup MMA, tiles copied by TMA,
// variant cuda-wgmma; head dim 256 too) and NewMMA (attention.cu, sm_80 and newer:
// FlashAttention-2 with mma.sync, variant cuda-mma, tunables MMATunables). The float8e4m3
// ops run NewWGMMA too, at head dims 64, 128 and 256: Q K^T and P V in E4M3 (wgmma k32), P rounded to
// E4M3 in registers, V copied transposed first (the 8-bit products read K-major operands
// alone), O stored in E4M3 as the inputs are.
//
// Each op's size picks seq at a fixed batch, heads and head dim (SizeShape); a shape
// batch x heads x seq x dim in kernels.Params.Shape ("4x32x4096x128": ParseShape,
// CheckShape) sets up any batch, heads, seq and head dim from 1 to 256 instead, in every
// variant (cuda-mma takes dims 64 and 128, cuda-wgmma 64, 128 and 256, and refuse the
// others at Setup).
package attention
