// Package attention holds the attention family of Prism's kernel suite: scaled
// dot-product attention in FlashAttention-style tiles with an online softmax and an
// optional causal mask, never forming the seq x seq matrix (attention.cl).
//
// NewAttention compiles the family for a device, for tensors stored in float32, float64,
// float16 or bfloat16 (Elem; the last two computed in float32); AttentionRef is the
// float64 reference and AttentionTolerance and AttentionToleranceOf the error bounds;
// Family lists the ops the suite runs.
package attention
