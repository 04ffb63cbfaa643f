// Package rows holds two families of Prism's kernel suite that share one scheme, one
// work-group per row of a row-major [rows, cols] matrix with the row cached in registers
// when it fits: softmax (softmax.cl), a numerically stable row-wise softmax, and layernorm
// (layernorm.cl), row-wise layer normalization with a two-pass mean and variance. Each
// keeps its own family name ("softmax/rows/float32", "layernorm/rows/float32").
//
// NewSoftmax and NewLayerNorm compile them for a device; SoftmaxRef, LayerNormRef and
// their tolerances check them; SoftmaxFamily and LayerNormFamily list their ops.
package rows
