// transpose_tiled.cl: out-of-place 2D matrix transpose shaped for GPUs (the "tiled" variant).
//
// Purpose: the same transpose as transpose.cl's transpose_2d (out[c][r] = in[r][c], any shape,
// same arguments, same results), shaped for GPUs with wide memory systems (NVIDIA's H100
// first): more bytes in flight per work-group and wider stores. A work-group moves one
// TILE x TILE tile (64 x 64 by default) through local memory padded by one column: every
// work-item first issues all its loads of the tile into registers (TILE*TILE/WG of them,
// 16 by default) and only then stores them into local memory, so that a work-group has the
// whole tile in flight before its barrier; after the barrier it writes the transposed tile
// row by row. A warp's loads are coalesced rows of 32 elements (128 bytes of float); its
// stores are VEC-element vectors, a warp writing 32*VEC consecutive elements (256 bytes of
// float) of an output row in one instruction.
//
// Arguments:
//   transpose_2d_tiled(out, in, rows, cols)
//     in   rows x cols elements, row-major (in[r*cols + c])
//     out  cols x rows elements, row-major (out[c*rows + r] = in[r*cols + c]); distinct from in
//     rows, cols >= 1, rows*cols <= 2^31-1 (int indices)
//
// Tunables (-D, part of the cache key; the launcher, tiled.go, passes them all, fitted to
//   the device: TILE=64 WG=256 VEC=2 unless prism tune chose others):
//   ELEM  element type                                                     default float
//   TILE  tile side, a power of two                                        default 64
//   WG    work-items per work-group, a power of two, TILE <= WG <= TILE*TILE/VEC
//                                                                          default 256
//   VEC   elements per vector access, 1 or 2                               default 2
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
// Launch: 1D, local size WG exactly; global tiles*WG with tiles = ceil(cols/TILE) *
//   ceil(rows/TILE), the tiles numbered along dimension 0 (CUDA limits grid dimensions 1
//   and 2 to 65535 blocks), column tiles fastest, as transpose_2d numbers them.
// Design: work-item i of the group reads, in pass p, tile row i/TILE + p*(WG/TILE) at
//   column i%TILE (TILE*TILE/WG passes), or, where cols is a multiple of VEC (input rows
//   start VEC-aligned), VEC consecutive columns (i%(TILE/VEC))*VEC of tile row
//   i/(TILE/VEC) + p*(WG*VEC/TILE) as one vector. It keeps the values in registers until
//   all are loaded, then stores them into the local tile. After the barrier it writes, in
//   pass p, VEC consecutive elements (input rows) of output row (input column)
//   i/(TILE/VEC) + p*(WG*VEC/TILE) as one vector where rows is a multiple of VEC (output
//   rows start VEC-aligned), else one element per pass of row i/TILE + p*(WG/TILE). The
//   choice between vector and scalar accesses is uniform across the launch. Local tile:
//   TILE x (TILE+1) elements (16.25 KiB of float at TILE 64): reading a column of it
//   touches TILE different banks.
// Boundaries: no element outside the rows x cols matrix is read or written. Loads are not
//   guarded but clamped: in an edge tile, a position past the last row or column reads the
//   last row or column (the last VEC-aligned vector of a row) instead, a value that lands in
//   a part of the local tile no store reads; so every item's loads are straight-line code
//   that issues them back to back. Stores are guarded (a vector store lies wholly inside
//   the matrix or wholly outside: its elements share an output row, whose length rows is a
//   multiple of VEC).
// Note: a quotient and remainder of the same operands become LLVM's freeze instruction,
//   which Oclgrind's uninitialized-value check rejects: remainders are written as
//   g - (g / n) * n.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef TILE
#define TILE 64
#endif
#ifndef WG
#define WG 256
#endif
#ifndef VEC
#define VEC 2
#endif

#if VEC != 1 && VEC != 2
#error "transpose_tiled.cl: VEC must be 1 or 2"
#endif
#if WG < TILE || WG > TILE * TILE / VEC
#error "transpose_tiled.cl: WG must be within TILE .. TILE*TILE/VEC"
#endif

#define TT_PER (TILE * TILE / WG)  // elements each work-item moves
#define TT_SROWS (WG / TILE)       // tile rows a scalar pass covers
#define TT_SPASS (TILE / TT_SROWS) // scalar passes (TT_PER)
#if VEC > 1
#define TT_CAT(a, b) a##b
#define TT_XCAT(a, b) TT_CAT(a, b)
#define TT_VTYPE TT_XCAT(ELEM, VEC)    // float2, double2
#define TT_VSPAN (TILE / VEC)          // work-items per tile row in vector passes
#define TT_VROWS (WG / TT_VSPAN)       // tile rows a vector pass covers
#define TT_VPASS (TILE / TT_VROWS)     // vector passes (TT_PER / VEC)
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void transpose_2d_tiled(__global ELEM *restrict out, __global const ELEM *restrict in, int rows, int cols) {
    __local ELEM tile[TILE][TILE + 1];
    const int tilesX = (cols + TILE - 1) / TILE;
    const int g = (int)get_group_id(0);
    const int gy = g / tilesX;
    const int c0 = (g - gy * tilesX) * TILE; // first input column of the tile
    const int r0 = gy * TILE;                // first input row of the tile
    const int i = (int)get_local_id(0);
    ELEM v[TT_PER];

    // Load: every value of the item's share of the tile into registers, then into the tile.
#if VEC > 1
    if ((cols & (VEC - 1)) == 0) {
        const int y = i / TT_VSPAN;
        const int x = (i - y * TT_VSPAN) * VEC;
        const int c = min(c0 + x, cols - VEC); // clamped: see Boundaries
#pragma unroll
        for (int p = 0; p < TT_VPASS; p++) {
            const int r = min(r0 + y + p * TT_VROWS, rows - 1);
            const TT_VTYPE w = *(__global const TT_VTYPE *)(in + (r * cols + c));
            v[2 * p] = w.x;
            v[2 * p + 1] = w.y;
        }
#pragma unroll
        for (int p = 0; p < TT_VPASS; p++) {
            tile[y + p * TT_VROWS][x] = v[2 * p];
            tile[y + p * TT_VROWS][x + 1] = v[2 * p + 1];
        }
    } else
#endif
    {
        const int y = i / TILE;
        const int x = i - y * TILE;
        const int c = min(c0 + x, cols - 1); // clamped: see Boundaries
#pragma unroll
        for (int p = 0; p < TT_SPASS; p++) {
            const int r = min(r0 + y + p * TT_SROWS, rows - 1);
            v[p] = in[r * cols + c];
        }
#pragma unroll
        for (int p = 0; p < TT_SPASS; p++) tile[y + p * TT_SROWS][x] = v[p];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Store: output row c0+j holds input column c0+j; its elements r0.. are consecutive.
#if VEC > 1
    if ((rows & (VEC - 1)) == 0) {
        const int y = i / TT_VSPAN;
        const int x = (i - y * TT_VSPAN) * VEC;
        const int r = r0 + x;
#pragma unroll
        for (int p = 0; p < TT_VPASS; p++) {
            const int j = y + p * TT_VROWS;
            const int oc = c0 + j;
            if (oc < cols && r < rows) {
                TT_VTYPE w;
                w.x = tile[x][j];
                w.y = tile[x + 1][j];
#ifdef PRISM_OCLGRIND
                // Oclgrind 21.10 turns a store of a vector built from scalars into a store
                // of the undefined vector and one per component, and reports the first:
                // there (PRISM_OCLGRIND, defined by the OpenCL backend) vstore2, a call,
                // stores the same VEC elements.
                vstore2(w, 0, out + (oc * rows + r));
#else
                *(__global TT_VTYPE *)(out + (oc * rows + r)) = w;
#endif
            }
        }
    } else
#endif
    {
        const int y = i / TILE;
        const int x = i - y * TILE;
        const int r = r0 + x;
#pragma unroll
        for (int p = 0; p < TT_SPASS; p++) {
            const int j = y + p * TT_SROWS;
            const int oc = c0 + j;
            if (oc < cols && r < rows) out[oc * rows + r] = tile[x][j];
        }
    }
}
