// Package fft holds the fft family of Prism's kernel suite: complex FFTs of power-of-two
// length by Stockham passes in local memory, batched, 2D and real-input (fft.cl).
//
// NewFFT compiles the family for a device; FFTRef is the float64 reference and
// FFTTolerance the error bound CheckFFT applies; Family lists the ops the suite runs.
package fft
