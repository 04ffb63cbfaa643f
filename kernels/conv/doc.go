// Package conv holds the conv family of Prism's kernel suite: 2D convolution in NCHW
// layout as an implicit GEMM through local-memory tiles (conv.cl, the portable variant of
// every op), and, for the stride-1 3x3 op, a direct convolution register-tiled as a SIMT
// SGEMM (conv_regtile.cl, the "regtile" variant: 8 output channels x 2 x 4 pixels per
// work-item, input tiles with their halo and filter slices double-buffered in local
// memory; GPUs and accelerators, CPUs run the portable kernel).
//
// NewConv and NewRegtile compile the kernels for a device; ConvRef is the float64
// reference and ConvTolerance the error bound; Family lists the ops the suite runs.
package conv
