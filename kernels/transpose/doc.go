// Package transpose holds the transpose family of Prism's kernel suite: an out-of-place 2D
// transpose of a row-major matrix through local-memory tiles.
//
// The op has two variants, both OpenCL C that every backend builds. "tiled"
// (transpose_tiled.cl, built by NewTiled), first, is shaped for GPUs: a work-group of WG
// items (1D) moves a TILE x TILE tile (64 x 64 by 256 items by default) through local
// memory padded by one column; each item issues all its loads of the tile (16 by default)
// before storing them into local memory, as straight-line code (edge tiles clamp the
// indices of their loads instead of guarding them), and writes the transposed tile with
// VEC-element vector stores (float2: a warp writes 256 contiguous bytes of an output row)
// where the output rows are VEC-aligned, and reads with vector loads where the input rows
// are. Its shape is a tunable set (TiledTunables, TiledDefault, `prism tune`), fitted to
// the device through kernels.Fit (Rusticl's 32 items give 32 x 32 tiles of 32 items).
// "portable" (transpose.cl, built by NewTranspose), last: 32 x 32 tiles moved by 32 x 4
// work-groups of 8 elements an item, in loops of guarded loads and stores (through the CUDA
// translation, clang's PTX issues one load per iteration). Both give the same results,
// exactly.
//
// TransposeRef is the reference (results are compared exactly); Family lists the ops the
// suite runs.
package transpose
