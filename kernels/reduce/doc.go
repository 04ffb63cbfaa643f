// Package reduce holds the reduce family of Prism's kernel suite: sum, min, max, argmin and
// argmax over a whole array or per row of a matrix (reduce.cl), in float32, float64 and
// int32.
//
// NewReduce compiles the family for a device; ReduceRef is the reference and
// ReduceTolerance the error bound of a sum; Family lists the ops the suite runs.
package reduce
