// Package stream holds the stream family of Prism's kernel suite: the STREAM kernels copy,
// scale, add and triad, and a dot product (stream.cl), in float32 and float64.
//
// NewStream compiles the family for a device; StreamRef is the float64 reference and
// StreamTolerance the error bound each result is checked with; Family lists the ops
// ("stream/triad/float32", ...) that the suite runs and benchmarks.
package stream
