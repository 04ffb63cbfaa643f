// Package attention holds the attention family of Prism's kernel suite: scaled
// dot-product attention in FlashAttention-style tiles with an online softmax and an
// optional causal mask, never forming the seq x seq matrix (attention.cl).
//
// NewAttention compiles the family for a device; AttentionRef is the float64 reference
// and AttentionTolerance the error bound; Family lists the ops the suite runs.
package attention
