// Package conv holds the conv family of Prism's kernel suite: 2D convolution in NCHW
// layout as an implicit GEMM through local-memory tiles (conv.cl).
//
// NewConv compiles the family for a device; ConvRef is the float64 reference and
// ConvTolerance the error bound; Family lists the ops the suite runs.
package conv
