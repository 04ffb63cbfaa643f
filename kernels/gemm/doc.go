// Package gemm holds the gemm family of Prism's kernel suite: general matrix multiply
// D = alpha*op(A)*op(B) + beta*C, single and strided batched, tiled in local memory with
// register blocking (gemm.cl), in float32 and float64.
//
// NewGEMM compiles the family for a device; GEMMRef is the float64 reference (gonum) and
// GEMMTolerance the error bound; Family lists the ops the suite runs.
package gemm
