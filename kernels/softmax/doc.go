// Package softmax holds the softmax family of Prism's kernel suite (softmax.cl): a
// numerically stable row-wise softmax of a row-major [rows, cols] matrix, one work-group
// per row with the row cached in registers when it fits, with an op over rows of up to 1024
// elements and one over rows of up to 8192 ("softmax/rows/float32",
// "softmax/rows8k/float32").
//
// NewSoftmax compiles it for a device, a narrow build for rows of up to 2048 elements and,
// on first use by a wider row, a wide one of work-groups of 512 items for rows of up to
// 16384 (Config says which a width takes). Rows of up to 1024 elements take the narrow
// build's short-row kernel (softmax_rows_multi): several rows per work-group, 32 items a
// row holding 32 elements each in registers (16-byte loads where the width is a multiple
// of 4), one barrier per reduction. SoftmaxRef and SoftmaxTolerance check it; Family lists
// its ops. The builds, the ops' instances and the CUDA variant are the scheme it shares
// with the layernorm family (kernels/internal/rowwise).
//
// On CUDA devices the 1024-column op runs rows.cu first (the "cuda-warp" variant,
// rowwise.NewWarp): one warp per row of up to 1024 floats, held in registers, reduced with
// warp shuffles, with no shared memory and no barrier, where the OpenCL C kernels give each
// row a work-group and a tree in local memory.
package softmax
