// Package fft holds the fft family of Prism's kernel suite: complex FFTs of power-of-two
// length by Stockham passes in local memory, batched, 2D and real-input (fft.cl).
//
// NewFFT compiles the family for a device (the portable variant: radix-4 stages in local
// memory); NewRegFFT compiles the regradix variant (fft_reg.cl: 16 points per work-item in
// registers, radix-16 stages with one local exchange between two, shaped for GPUs), an FFT
// with the same methods and results whose passes run the register kernel. FFTRef is the
// float64 reference and FFTTolerance the error bound CheckFFT applies; Family lists the ops
// the suite runs, each with the vendor baselines, regradix and portable variants.
package fft
