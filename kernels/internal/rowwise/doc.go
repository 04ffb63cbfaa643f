// Package rowwise is the scheme the row families of Prism's kernel suite share (softmax
// and layernorm, each in a package of its own): one work-group per row of a row-major
// [rows, cols] matrix, with the row cached in registers when it fits. It imports no family:
// each passes in its source, kernel names, reference and inputs.
//
// NewBuilds compiles a row source for a device, a narrow build for rows of up to 2048
// elements and, on first use by a wider row, a wide one of work-groups of 512 items for
// rows of up to 16384 (Config says which a width takes, Builds.For picks it). Rows of up
// to 1024 elements take the narrow build's short-row kernels (the source's kernel +
// "_multi": softmax_rows_multi, layernorm_rows_multi): several rows per work-group, 32
// items a row holding 32 elements each in registers (16-byte loads where the width is a
// multiple of 4), one barrier per reduction. Check validates a launch's shape and buffers.
//
// NewOp makes a family's op from its SetupFunc, with the instance every row op shares
// (rotated inputs, verification row by row against the family's Part, sampled above 2^22
// elements). On CUDA devices the 1024-column ops run rows.cu first (the "cuda-warp"
// variant, NewWarp, with a Softmax and a LayerNorm method): one warp per row of up to 1024
// floats, held in registers, reduced with warp shuffles, with no shared memory and no
// barrier, where the OpenCL C kernels give each row a work-group and a tree in local memory.
package rowwise
