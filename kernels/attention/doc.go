// Package attention holds the attention family of Prism's kernel suite: scaled
// dot-product attention in FlashAttention-style tiles with an online softmax and an
// optional causal mask, never forming the seq x seq matrix (attention.cl).
//
// NewAttention compiles the family for a device, for tensors stored in float32, float64,
// float16 or bfloat16 (Elem; the last two computed in float32); AttentionRef is the
// float64 reference and AttentionTolerance and AttentionToleranceOf the error bounds;
// Family lists the ops the suite runs.
//
// On NVIDIA GPUs through CUDA the float16 and bfloat16 ops also run on the tensor cores
// for head dims 64 and 128: NewWGMMA (wgmma.cu, sm_90: warpgroup MMA, tiles copied by TMA,
// variant cuda-wgmma) and NewMMA (attention.cu, sm_80 and newer: FlashAttention-2 with
// mma.sync, variant cuda-mma, tunables MMATunables).
package attention
