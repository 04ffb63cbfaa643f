// stencil_zmarch.cl: the 3D 7-point and 27-point stencils of stencil.cl, each work-item
// marching along z with its columns in registers (the "zmarch" variant).
//
// Purpose: the same sweep as stencil.cl's stencil_7pt and stencil_27pt (same weights, same
// boundary rule, same arguments), shaped for GPUs with large L1 and L2 caches (NVIDIA's
// H100 and H200 first): each input element comes from device memory about once, every
// access is a coalesced row, loads are issued planes ahead of their use, and the 7-point
// stencil has no local memory and no barrier at all.
//
// Grids are row-major with x fastest: in[(z*ny + y)*nx + x].
// Weights (w):
//   7pt:  w[0] centre, w[1] x-1, w[2] x+1, w[3] y-1, w[4] y+1, w[5] z-1, w[6] z+1
//   27pt: w[(dz+1)*9 + (dy+1)*3 + (dx+1)] for the neighbour at (x+dx, y+dy, z+dz)
// Boundary handling: Dirichlet, as stencil.cl: interior points (1 <= x <= nx-2,
//   1 <= y <= ny-2, 1 <= z <= nz-2) get the weighted sum; every other point is copied from
//   the input unchanged. Every read index is clamped into the grid (a clamped value only
//   ever feeds a boundary point, whose sum is discarded), so no element outside the grid
//   is read or written; any shape >= 1 in every dimension is valid.
//
// Arguments (out and in distinct; nx*ny*nz <= 2^31-1):
//   stencil_7pt_zmarch    (out, in, w, nx, ny, nz)     7 weights
//   stencil_27pt_zmarch   (out, in, w, nx, ny, nz)     27 weights, neighbours through L1
//   stencil_27pt_zmarch_lm(out, in, w, nx, ny, nz)     27 weights, planes in local memory
//
// Tunables (-D, part of the cache key; the launcher, zmarch.go, passes them all, with
//   defaults per stencil: 7pt SX=32 SY=8 RY=4 ZC=32, 27pt SX=32 SY=2 RY=12 ZC=64 and the
//   _lm kernel; its tunable LM=1 picks stencil_27pt_zmarch_lm, LM=0 stencil_27pt_zmarch):
//   ELEM    element type                                           default float
//   SX      work-group width (x): one work-item per column of x    default 32
//   SY      work-group height (y)                                  default 8
//   RY      consecutive rows (y) per work-item                     default 4
//   ZC      z planes per work-group (its chunk of the column)      default 32
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
// Launch: 2D, local size (SX, SY) exactly; work-groups numbered along dimension 0 only
//   (CUDA limits grid dimensions 1 and 2 to 65535 blocks), x tiles fastest, then y tiles,
//   then z chunks: global (ceil(nx/SX)*ceil(ny/(SY*RY))*ceil(nz/ZC)*SX, SY).
// Design: a work-group owns an SX x (SY*RY) tile of x-y columns and a chunk of ZC planes
//   (the last chunk may be shorter); work-item (lx, ly) owns the RY columns at x = x0+lx,
//   y = y0+ly*RY .. y0+ly*RY+RY-1 and marches along z over the chunk. A warp's 32 items
//   read and write 32 consecutive x: every access is a coalesced 128-byte row. Consecutive
//   work-groups take neighbouring tiles of the same chunk, so the tiles that share a halo
//   row run at about the same time and find it in L2.
//   7pt (no local memory, no barrier): the item keeps each column's z-1, z and z+1 values
//     in registers and reads plane z+2 a step ahead (prefetch); the x+-1 neighbours of
//     plane z and the rows just above and below its RY rows are read straight from global
//     memory, where they hit L1 (the work-group read plane z's rows two steps earlier);
//     rows inside the item's RY come from its registers.
//   27pt: each plane p contributes to three outputs of a column, z = p+1, p, p-1 (as their
//     z-1, z and z+1 layer): the item computes plane p's three 9-point sums over the 3 x 3
//     neighbourhood of each of its rows once, with the weights of each layer, and adds
//     them to two running sums in registers; the output at p-1 is then complete and
//     stored. stencil_27pt_zmarch_lm: the work-group stages plane p's tile with a
//     one-point halo in local memory (double-buffered, one barrier a plane); each item
//     stores its RY columns and its share of the halo there, read from global memory two
//     planes ahead into registers. stencil_27pt_zmarch: no local memory; the item's own
//     columns of plane p+2 are read two steps ahead, and the x+-1 neighbours and the rows
//     either side straight from global memory (L1). With RY rows an item reads 3*(RY+2)
//     values a plane for RY outputs, so large RY cuts the reads and index arithmetic per
//     output.
//   The chunk reads one plane more on each side (ZC+2 planes for ZC outputs); all else is
//   one read and one write per point from device memory.
// Note: a quotient and remainder of the same operands become LLVM's freeze instruction,
//   which Oclgrind's uninitialized-value check rejects: remainders are written as
//   g - (g / n) * n.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef SX
#define SX 32
#endif
#ifndef SY
#define SY 8
#endif
#ifndef RY
#define RY 4
#endif
#ifndef ZC
#define ZC 32
#endif

#define ZM_TH (SY * RY) // tile height (y)

// The work-item's place: x (its column), y0 (its first row), z0, z1 (its chunk's planes);
// items wholly outside the grid return (there is no barrier). Then the clamped x
// neighbours xm, xp, the row offsets ro[i] of rows y0-1+i (i = 0 .. RY+1) clamped into the
// grid, and inX, whether x is an interior column.
#define PLACE_ZM                                                              \
    int tilesX = (nx + SX - 1) / SX;                                          \
    int tilesY = (ny + ZM_TH - 1) / ZM_TH;                                    \
    int g = (int)get_group_id(0);                                             \
    int gyz = g / tilesX;                                                     \
    int gz = gyz / tilesY;                                                    \
    int x = (g - gyz * tilesX) * SX + (int)get_local_id(0);                   \
    int y0 = (gyz - gz * tilesY) * ZM_TH + (int)get_local_id(1) * RY;        \
    int z0 = gz * ZC;                                                         \
    int z1 = min(z0 + ZC, nz);                                                \
    if (x >= nx || y0 >= ny) return;                                          \
    int plane = nx * ny;                                                      \
    int xm = max(x - 1, 0);                                                   \
    int xp = min(x + 1, nx - 1);                                              \
    int inX = x > 0 && x < nx - 1;                                            \
    int ro[RY + 2];                                                           \
    for (int i = 0; i < RY + 2; i++) ro[i] = clamp(y0 - 1 + i, 0, ny - 1) * nx

__kernel __attribute__((reqd_work_group_size(SX, SY, 1)))
void stencil_7pt_zmarch(__global ELEM *restrict out, __global const ELEM *restrict in, __global const ELEM *restrict w,
                        int nx, int ny, int nz) {
    PLACE_ZM;
    ELEM w0 = w[0], wxm = w[1], wxp = w[2], wym = w[3], wyp = w[4], wzm = w[5], wzp = w[6];
    // c[i]: plane z at row y0-1+i; c[0] and c[RY+1] (the rows just outside the item's) are
    // read each step, c[1..RY] carried from the step before. cm, cp: planes z-1 and z+1.
    ELEM cm[RY + 2], c[RY + 2], cp[RY + 2], cq[RY + 2];
    int zb = max(z0 - 1, 0) * plane, zc = z0 * plane, zn = min(z0 + 1, nz - 1) * plane;
    #pragma unroll
    for (int i = 1; i <= RY; i++) {
        cm[i] = in[zb + ro[i] + x];
        c[i] = in[zc + ro[i] + x];
        cp[i] = in[zn + ro[i] + x];
    }
    for (int z = z0; z < z1; z++) {
        int zi = z * plane;
        int inZ = inX && z > 0 && z < nz - 1;
        // Prefetch: plane z+2's columns, which the next step needs as its z+1, are read a
        // whole step ahead, so that their latency from device memory hides behind this one.
        if (z + 1 < z1) {
            int zq = min(z + 2, nz - 1) * plane;
            #pragma unroll
            for (int i = 1; i <= RY; i++) cq[i] = in[zq + ro[i] + x];
        } else {
            #pragma unroll
            for (int i = 1; i <= RY; i++) cq[i] = 0;
        }
        c[0] = in[zi + ro[0] + x];
        c[RY + 1] = in[zi + ro[RY + 1] + x];
        #pragma unroll
        for (int i = 1; i <= RY; i++) {
            int y = y0 - 1 + i;
            ELEM s = w0 * c[i] + wxm * in[zi + ro[i] + xm] + wxp * in[zi + ro[i] + xp] + wym * c[i - 1] + wyp * c[i + 1] +
                     wzm * cm[i] + wzp * cp[i];
            if (y < ny) out[zi + ro[i] + x] = (inZ && y > 0 && y < ny - 1) ? s : c[i];
        }
        #pragma unroll
        for (int i = 1; i <= RY; i++) {
            cm[i] = c[i];
            c[i] = cp[i];
            cp[i] = cq[i];
        }
    }
}

// The 9-point sum, with the weights of layer L (0: z-1, 1: z, 2: z+1), of the 3 x 3
// neighbourhood of a plane centred on row i of the item: rows i-1, i, i+1 of a (x-1), b (x)
// and d (x+1).
#define NINE_ZM(L, a, b, d, i)                                                                \
    (wt[L * 9 + 0] * a[i - 1] + wt[L * 9 + 1] * b[i - 1] + wt[L * 9 + 2] * d[i - 1] +         \
     wt[L * 9 + 3] * a[i] + wt[L * 9 + 4] * b[i] + wt[L * 9 + 5] * d[i] +                     \
     wt[L * 9 + 6] * a[i + 1] + wt[L * 9 + 7] * b[i + 1] + wt[L * 9 + 8] * d[i + 1])

// stencil_27pt_zmarch_lm: the local-memory form of stencil_27pt_zmarch (LM=1): the
// work-group stages each plane of its tile with a one-point halo, (SY*RY+2) x (SX+2), in local memory (double-buffered,
// one barrier a plane), and every item reads its 3 x (RY+2) neighbourhood from there; each
// item's RY columns and its share of the halo are read from global memory two planes
// ahead (prefetch into registers), so that no barrier waits on device memory.
#define LM_W (SX + 2)
#define LM_H (ZM_TH + 2)
#define LM_NH (2 * LM_W + 2 * ZM_TH) // halo points of a plane tile
#define LM_HPI ((LM_NH + SX * SY - 1) / (SX * SY)) // halo points per item (at most)

__kernel __attribute__((reqd_work_group_size(SX, SY, 1)))
void stencil_27pt_zmarch_lm(__global ELEM *restrict out, __global const ELEM *restrict in, __global const ELEM *restrict w,
                            int nx, int ny, int nz) {
    __local ELEM t[2][LM_H][LM_W];
    int tilesX = (nx + SX - 1) / SX;
    int tilesY = (ny + ZM_TH - 1) / ZM_TH;
    int g = (int)get_group_id(0);
    int gyz = g / tilesX;
    int gz = gyz / tilesY;
    int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
    int tx0 = (g - gyz * tilesX) * SX, ty0 = (gyz - gz * tilesY) * ZM_TH;
    int x = tx0 + lx;
    int y0 = ty0 + ly * RY;
    int z0 = gz * ZC;
    int z1 = min(z0 + ZC, nz);
    // Every item takes part (barriers): those outside the grid read clamped points, and
    // store nothing.
    int xs = min(x, nx - 1);
    int plane = nx * ny;
    int inX = x > 0 && x < nx - 1;
    int ro[RY + 1]; // the item's rows, clamped
    #pragma unroll
    for (int i = 1; i <= RY; i++) ro[i] = min(y0 - 1 + i, ny - 1) * nx;
    // The item's share of the halo: hg[k], the point's offset in a plane (clamped into the
    // grid), and hr[k], hc[k], its row and column in the tile (row -1: none; indexed as
    // t[b][row][col], within the row's bounds, which a flat index into t[b][0] was not).
    int hg[LM_HPI], hr[LM_HPI], hc[LM_HPI];
    #pragma unroll
    for (int k = 0; k < LM_HPI; k++) {
        int h = ly * SX + lx + k * SX * SY;
        int row = 0, col = 0;
        if (h < LM_W) {
            col = h;
        } else if (h < 2 * LM_W) {
            row = LM_H - 1;
            col = h - LM_W;
        } else if (h < 2 * LM_W + ZM_TH) {
            row = 1 + h - 2 * LM_W;
        } else {
            row = 1 + h - 2 * LM_W - ZM_TH;
            col = LM_W - 1;
        }
        hg[k] = clamp(ty0 - 1 + row, 0, ny - 1) * nx + clamp(tx0 - 1 + col, 0, nx - 1);
        hr[k] = h < LM_NH ? row : -1;
        hc[k] = col;
    }
    ELEM wt[27];
    #pragma unroll
    for (int k = 0; k < 27; k++) wt[k] = w[k];
    ELEM below[RY + 1], at[RY + 1], cprev[RY + 1];
    #pragma unroll
    for (int i = 1; i <= RY; i++) below[i] = at[i] = cprev[i] = 0;
    // c1, h1: plane p+1 (columns, halo share), to be stored this step; c2, h2: plane p+2;
    // c3, h3: plane p+3, read this step: two steps ahead of its store, so that the store
    // (before the step's barrier) seldom waits on device memory.
    ELEM c1[RY + 1], c2[RY + 1], c3[RY + 1], h1[LM_HPI], h2[LM_HPI], h3[LM_HPI];
    int pb = max(z0 - 1, 0) * plane, pn = z0 * plane, pq = min(z0 + 1, nz - 1) * plane;
    #pragma unroll
    for (int i = 1; i <= RY; i++) {
        t[(z0 - 1) & 1][ly * RY + i][lx + 1] = in[pb + ro[i] + xs];
        c1[i] = in[pn + ro[i] + xs];
        c2[i] = in[pq + ro[i] + xs];
    }
    #pragma unroll
    for (int k = 0; k < LM_HPI; k++) {
        if (hr[k] >= 0) t[(z0 - 1) & 1][hr[k]][hc[k]] = in[pb + hg[k]];
        h1[k] = in[pn + hg[k]];
        h2[k] = in[pq + hg[k]];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = z0 - 1; p <= z1; p++) {
        int bc = p & 1, bn = (p + 1) & 1;
        // Plane p+1 into the other buffer (its last readers passed the barrier that ended
        // the step before), then plane p+3 from global memory into registers.
        if (p + 1 <= z1) {
            #pragma unroll
            for (int i = 1; i <= RY; i++) t[bn][ly * RY + i][lx + 1] = c1[i];
            #pragma unroll
            for (int k = 0; k < LM_HPI; k++)
                if (hr[k] >= 0) t[bn][hr[k]][hc[k]] = h1[k];
        }
        if (p + 3 <= z1) {
            int pr = min(p + 3, nz - 1) * plane;
            #pragma unroll
            for (int i = 1; i <= RY; i++) c3[i] = in[pr + ro[i] + xs];
            #pragma unroll
            for (int k = 0; k < LM_HPI; k++) h3[k] = in[pr + hg[k]];
        } else {
            #pragma unroll
            for (int i = 1; i <= RY; i++) c3[i] = 0;
            #pragma unroll
            for (int k = 0; k < LM_HPI; k++) h3[k] = 0;
        }
        // Plane p at rows y0-1+i (i = 0 .. RY+1): a at x-1, b at x, d at x+1.
        ELEM a[RY + 2], b[RY + 2], d[RY + 2];
        #pragma unroll
        for (int i = 0; i < RY + 2; i++) {
            a[i] = t[bc][ly * RY + i][lx];
            b[i] = t[bc][ly * RY + i][lx + 1];
            d[i] = t[bc][ly * RY + i][lx + 2];
        }
        int zo = p - 1;
        int inZ = inX && zo > 0 && zo < nz - 1;
        #pragma unroll
        for (int i = 1; i <= RY; i++) {
            ELEM done = below[i] + NINE_ZM(2, a, b, d, i);
            below[i] = at[i] + NINE_ZM(1, a, b, d, i);
            at[i] = NINE_ZM(0, a, b, d, i);
            int y = y0 - 1 + i;
            if (zo >= z0 && x < nx && y < ny) out[zo * plane + y * nx + x] = (inZ && y > 0 && y < ny - 1) ? done : cprev[i];
            cprev[i] = b[i];
        }
        #pragma unroll
        for (int i = 1; i <= RY; i++) {
            c1[i] = c2[i];
            c2[i] = c3[i];
        }
        #pragma unroll
        for (int k = 0; k < LM_HPI; k++) {
            h1[k] = h2[k];
            h2[k] = h3[k];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
__kernel __attribute__((reqd_work_group_size(SX, SY, 1)))
void stencil_27pt_zmarch(__global ELEM *restrict out, __global const ELEM *restrict in, __global const ELEM *restrict w,
                         int nx, int ny, int nz) {
    PLACE_ZM;
    ELEM wt[27];
    #pragma unroll
    for (int k = 0; k < 27; k++) wt[k] = w[k];
    // Per output row r (1 .. RY): below, the running sum of the output at plane p-1; at, of
    // the output at plane p; cprev, the input at plane p-1 (for a boundary copy).
    ELEM below[RY + 1], at[RY + 1], cprev[RY + 1];
    #pragma unroll
    for (int i = 1; i <= RY; i++) below[i] = at[i] = cprev[i] = 0;
    // b0, b1: planes p and p+1 at the item's own rows (b0[i], b1[i], row y0-1+i, i = 1 ..
    // RY); b2: plane p+2, read two steps ahead (prefetch), so that its latency from device
    // memory hides behind two planes' sums, and so that its lines sit in L1 by the time
    // the step that reads plane p+2's x+-1 neighbours and halo rows comes.
    ELEM b0[RY + 1], b1[RY + 1], b2[RY + 1];
    int pb = max(z0 - 1, 0) * plane, pn = z0 * plane;
    #pragma unroll
    for (int i = 1; i <= RY; i++) {
        b0[i] = in[pb + ro[i] + x];
        b1[i] = in[pn + ro[i] + x];
    }
    for (int p = z0 - 1; p <= z1; p++) {
        if (p + 2 <= z1) {
            int pq = min(p + 2, nz - 1) * plane;
            #pragma unroll
            for (int i = 1; i <= RY; i++) b2[i] = in[pq + ro[i] + x];
        } else {
            #pragma unroll
            for (int i = 1; i <= RY; i++) b2[i] = 0;
        }
        // Plane p at rows y0-1+i (i = 0 .. RY+1): a at x-1, b at x, d at x+1. The item's
        // own b rows come from b0; the rest hit L1 (plane p's lines came in two steps ago),
        // but for the rows of the next work-group in y (L2).
        pb = clamp(p, 0, nz - 1) * plane;
        ELEM a[RY + 2], b[RY + 2], d[RY + 2];
        b[0] = in[pb + ro[0] + x];
        b[RY + 1] = in[pb + ro[RY + 1] + x];
        #pragma unroll
        for (int i = 0; i < RY + 2; i++) {
            a[i] = in[pb + ro[i] + xm];
            d[i] = in[pb + ro[i] + xp];
            if (i >= 1 && i <= RY) b[i] = b0[i];
        }
        int zo = p - 1; // the output plane completed by plane p
        int inZ = inX && zo > 0 && zo < nz - 1;
        #pragma unroll
        for (int i = 1; i <= RY; i++) {
            ELEM done = below[i] + NINE_ZM(2, a, b, d, i); // output p-1: plane p is its z+1 layer
            below[i] = at[i] + NINE_ZM(1, a, b, d, i);     // output p: plane p is its own layer
            at[i] = NINE_ZM(0, a, b, d, i);                // output p+1: plane p is its z-1 layer
            int y = y0 - 1 + i;
            if (zo >= z0 && y < ny) out[zo * plane + ro[i] + x] = (inZ && y > 0 && y < ny - 1) ? done : cprev[i];
            cprev[i] = b[i];
        }
        #pragma unroll
        for (int i = 1; i <= RY; i++) {
            b0[i] = b1[i];
            b1[i] = b2[i];
        }
    }
}
