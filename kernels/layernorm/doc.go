// Package layernorm holds the layernorm family of Prism's kernel suite (layernorm.cl):
// row-wise layer normalization of a row-major [rows, cols] matrix with a two-pass mean and
// variance, one work-group per row with the row cached in registers when it fits, with an
// op over rows of up to 1024 elements and one over rows of up to 8192
// ("layernorm/rows/float32", "layernorm/rows8k/float32").
//
// NewLayerNorm compiles it for a device, a narrow build for rows of up to 2048 elements
// and, on first use by a wider row, a wide one of work-groups of 512 items for rows of up
// to 16384 (Config says which a width takes). Rows of up to 1024 elements take the narrow
// build's short-row kernel (layernorm_rows_multi): several rows per work-group, 32 items a
// row holding 32 elements each in registers (16-byte loads where the width is a multiple
// of 4), one barrier per reduction. LayerNormRef and LayerNormTolerance (with
// LayerNormStats) check it; Family lists its ops. The builds, the ops' instances and the
// CUDA variant are the scheme it shares with the softmax family
// (kernels/internal/rowwise).
//
// On CUDA devices the 1024-column op runs rows.cu first (the "cuda-warp" variant,
// rowwise.NewWarp): one warp per row of up to 1024 floats, held in registers, reduced with
// warp shuffles, with no shared memory and no barrier, where the OpenCL C kernels give each
// row a work-group and a tree in local memory.
package layernorm
