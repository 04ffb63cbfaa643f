// Package rows holds two families of Prism's kernel suite that share one scheme, one
// work-group per row of a row-major [rows, cols] matrix with the row cached in registers
// when it fits: softmax (softmax.cl), a numerically stable row-wise softmax, and layernorm
// (layernorm.cl), row-wise layer normalization with a two-pass mean and variance. Each
// keeps its own family name, with an op over rows of up to 1024 elements and one over rows
// of up to 8192 ("softmax/rows/float32", "softmax/rows8k/float32", "layernorm/rows/float32",
// "layernorm/rows8k/float32").
//
// NewSoftmax and NewLayerNorm compile them for a device, a narrow build for rows of up to
// 2048 elements and, on first use by a wider row, a wide one of work-groups of 512 items
// for rows of up to 16384 (Config says which a width takes). Rows of up to 1024 elements
// take the narrow build's short-row kernels (softmax_rows_multi, layernorm_rows_multi):
// several rows per work-group, 32 items a row holding 32 elements each in registers
// (16-byte loads where the width is a multiple of 4), one barrier per reduction.
// SoftmaxRef, LayerNormRef and their tolerances check them; SoftmaxFamily and
// LayerNormFamily list their ops.
//
// On CUDA devices the 1024-column ops run rows.cu first (the "cuda-warp" variant, NewWarp):
// one warp per row of up to 1024 floats, held in registers, reduced with warp shuffles, with
// no shared memory and no barrier, where the OpenCL C kernels give each row a work-group
// and a tree in local memory.
package rows
