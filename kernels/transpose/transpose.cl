// transpose.cl: out-of-place 2D matrix transpose through local-memory tiles.
//
// Purpose: out[c][r] = in[r][c] for a row-major rows x cols matrix, any shape (rows, cols
// >= 1): the standard test of a device's strided (uncoalesced) access handling. Read and
// write are both coalesced: a work-group reads a TILE x TILE tile row by row, stores it in
// local memory, and writes the transposed tile row by row; the local tile has one padding
// column so that reading it by columns hits TILE different banks.
//
// Arguments:
//   transpose_2d(out, in, rows, cols)
//     in   rows x cols elements, row-major (in[r*cols + c])
//     out  cols x rows elements, row-major (out[c*rows + r] = in[r*cols + c])
//     rows, cols >= 1, rows*cols <= 2^31-1 (int indices)
//
// Tunables (-D, part of the cache key):
//   ELEM           element type                                   default float
//   TILE           tile side                                      default 32
//   ROWS_PER_ITEM  tile rows each work-item moves (divides TILE)  default 8
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
//   This is the ops' "portable" variant; their "tiled" variant, shaped for GPUs (whole
//   tiles of loads in flight before the barrier, vector stores), is transpose_tiled.cl.
// Launch: 2D, local size (TILE, TILE/ROWS_PER_ITEM), exactly; global
//   (tiles*TILE, TILE/ROWS_PER_ITEM) with tiles = ceil(cols/TILE)*ceil(rows/TILE): the tiles
//   are numbered along dimension 0 only (CUDA limits grid dimensions 1 and 2 to 65535
//   blocks), column tiles fastest.
// Boundaries: edge tiles are guarded; no element outside the rows x cols matrix is read or
//   written.
// Note: a quotient and remainder of the same operands (g / n and g % n) become LLVM's
//   freeze instruction, which Oclgrind's uninitialized-value check rejects: remainders are
//   written as g - (g / n) * n.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef TILE
#define TILE 32
#endif
#ifndef ROWS_PER_ITEM
#define ROWS_PER_ITEM 8
#endif
#define TBLOCK_ROWS (TILE / ROWS_PER_ITEM)

__kernel __attribute__((reqd_work_group_size(TILE, TBLOCK_ROWS, 1)))
void transpose_2d(__global ELEM *out, __global const ELEM *in, int rows, int cols) {
    __local ELEM tile[TILE][TILE + 1];
    int tilesX = (cols + TILE - 1) / TILE;
    int g = (int)get_group_id(0);
    int gy = g / tilesX;
    int c0 = (g - gy * tilesX) * TILE; // first input column of the tile (not g % tilesX: see below)
    int r0 = gy * TILE;                // first input row of the tile
    int lx = (int)get_local_id(0);
    int ly = (int)get_local_id(1);

    int c = c0 + lx;
    for (int j = ly; j < TILE; j += TBLOCK_ROWS) {
        int r = r0 + j;
        if (r < rows && c < cols) tile[j][lx] = in[r * cols + c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Output row c0+j holds input column c0+j; its elements r0+lx are consecutive.
    int r = r0 + lx;
    for (int j = ly; j < TILE; j += TBLOCK_ROWS) {
        int oc = c0 + j;
        if (oc < cols && r < rows) out[oc * rows + r] = tile[lx][j];
    }
}
