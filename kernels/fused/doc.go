// Package fused holds the fused family of Prism's kernel suite: element-wise expressions
// compiled into one kernel by the expression compiler (kernels/fuse), each beside the same expression run as
// separate map kernels, one per operation, with its intermediates in device memory
// ("fused/axpy-exp/float32" and "fused/axpy-exp-separate/float32"). Both ops of an
// expression take the same seeded inputs and are verified against the same float64
// reference (fuse.Expr.Ref); their models count the bytes each moves, so that
// their rates show what fusing saves.
//
// The family's source is generated: Family's Source is a header and the kernels
// fuse.Compile makes for float32 (fuse.Expr.Source).
package fused
