// Package transpose holds the transpose family of Prism's kernel suite: an out-of-place 2D
// transpose of a row-major matrix through local-memory tiles (transpose.cl).
//
// NewTranspose compiles the family for a device; TransposeRef is the reference (results
// are compared exactly); Family lists the ops the suite runs.
package transpose
