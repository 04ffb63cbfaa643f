// stencil.cl: 2D 5-point and 3D 7-point and 27-point stencils with caller-supplied weights.
//
// Purpose: the structured-grid kernels of PDE solvers (one Jacobi sweep): each output is a
// weighted sum of an input point and its neighbours, out = sum_k w[k] * in[neighbour k].
// Memory-bound; the point of the tiled design is that every input element comes from
// device memory about once per work-group, not once per neighbour that reads it.
//
// Grids are row-major with x fastest: 2D in[y*nx + x], 3D in[(z*ny + y)*nx + x].
// Weights (w, a buffer of 5, 7 or 27 elements):
//   5pt:  w[0] centre, w[1] x-1, w[2] x+1, w[3] y-1, w[4] y+1
//   7pt:  as 5pt, then w[5] z-1, w[6] z+1
//   27pt: w[(dz+1)*9 + (dy+1)*3 + (dx+1)] for the neighbour at (x+dx, y+dy, z+dz)
// Boundary handling: Dirichlet. Only interior points (1 <= x <= nx-2, 1 <= y <= ny-2 and,
//   in 3D, 1 <= z <= nz-2) get the weighted sum; every other point (a point with a
//   neighbour outside the grid) is copied from the input unchanged. No element outside
//   the grid is read or written; any shape >= 1 in every dimension is valid (a grid of
//   side 1 or 2 in some dimension has no interior and is copied).
//
// Arguments (out and in distinct; nx*ny*nz <= 2^31-1):
//   stencil_5pt (out, in, w, nx, ny)         2D, 5 weights
//   stencil_7pt (out, in, w, nx, ny, nz)     3D, 7 weights
//   stencil_27pt(out, in, w, nx, ny, nz)     3D, 27 weights
//
// Tunables (-D, part of the cache key):
//   ELEM    element type                                      default float
//   WG      work-group size                                   default 256
//   SX      work-group width (x)                              default 32
//   SY      work-group height (y)                             default WG/SX
//   SRY     2D: output rows per work-item (tile SX x SY*SRY)  default 4
//   ZBLOCK  3D: z planes per work-group                       default 32
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
// Launch: 2D, local size (SX, SY) exactly; tiles numbered along dimension 0 only (CUDA
//   limits grid dimensions 1 and 2 to 65535 blocks), x tiles fastest:
//   stencil_5pt: global (ceil(nx/SX)*ceil(ny/(SY*SRY))*SX, SY)
//   stencil_7pt, stencil_27pt: global (ceil(nx/SX)*ceil(ny/SY)*ceil(nz/ZBLOCK)*SX, SY)
// Design: 2D: each work-group loads its (SX+2) x (SY*SRY+2) input tile with its halo into
//   local memory (coalesced rows, zeros outside the grid), then each item computes SRY
//   outputs from it. 3D: 2.5D blocking: a work-group owns an SX x SY column of the grid
//   and marches along z over ZBLOCK planes (plus one each side); each step loads one
//   (SX+2) x (SY+2) plane with halo into local memory (double-buffered: one barrier per
//   plane), and every item adds that plane's contributions to three running sums in
//   registers: to the output below (its z+1 terms), at (in-plane terms) and above (its z-1
//   terms). Every input element is loaded once per work-group, plus the halo.
// Note: a quotient and remainder of the same operands (g / n and g % n) become LLVM's
//   freeze instruction, which Oclgrind's uninitialized-value check rejects: remainders are
//   written as g - (g / n) * n.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef WG
#define WG 256
#endif
#ifndef SX
#define SX 32
#endif
#ifndef SY
#define SY (WG / SX)
#endif
#ifndef SRY
#define SRY 4
#endif
#ifndef ZBLOCK
#define ZBLOCK 32
#endif

#define T2_W (SX + 2)
#define T2_H (SY * SRY + 2)

__kernel __attribute__((reqd_work_group_size(SX, SY, 1)))
void stencil_5pt(__global ELEM *out, __global const ELEM *in, __global const ELEM *w, int nx, int ny) {
    __local ELEM t[T2_H][T2_W];
    int tilesX = (nx + SX - 1) / SX;
    int g = (int)get_group_id(0);
    int gy = g / tilesX;
    int x0 = (g - gy * tilesX) * SX;
    int y0 = gy * (SY * SRY);
    int lx = (int)get_local_id(0);
    int ly = (int)get_local_id(1);
    ELEM w0 = w[0], wxm = w[1], wxp = w[2], wym = w[3], wyp = w[4];

    for (int j = ly; j < T2_H; j += SY) {
        int y = y0 - 1 + j;
        for (int i = lx; i < T2_W; i += SX) {
            int x = x0 - 1 + i;
            ELEM v = 0;
            if (x >= 0 && x < nx && y >= 0 && y < ny) v = in[y * nx + x];
            t[j][i] = v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    int x = x0 + lx;
    for (int k = 0; k < SRY; k++) {
        int j = ly + k * SY; // tile row
        int y = y0 + j;
        if (x < nx && y < ny) {
            ELEM c = t[j + 1][lx + 1];
            ELEM r = c;
            if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
                r = w0 * c + wxm * t[j + 1][lx] + wxp * t[j + 1][lx + 2] + wym * t[j][lx + 1] + wyp * t[j + 2][lx + 1];
            }
            out[y * nx + x] = r;
        }
    }
}

#define T3_W (SX + 2)
#define T3_H (SY + 2)

// Loads plane p of the grid (with a one-point halo in x and y, zeros outside the grid)
// into t[b]. Every work-item of the group calls it.
#define LOAD_PLANE(t, b, p)                                                   \
    do {                                                                      \
        for (int j_ = ly; j_ < T3_H; j_ += SY) {                              \
            int y_ = y0 - 1 + j_;                                             \
            for (int i_ = lx; i_ < T3_W; i_ += SX) {                          \
                int x_ = x0 - 1 + i_;                                         \
                ELEM v_ = 0;                                                  \
                if ((p) >= 0 && (p) < nz && x_ >= 0 && x_ < nx && y_ >= 0 && y_ < ny) \
                    v_ = in[((p) * ny + y_) * nx + x_];                       \
                t[b][j_][i_] = v_;                                            \
            }                                                                 \
        }                                                                     \
    } while (0)

// The work-group's place: x0, y0 (first point of its column), z0, z1 (its planes).
#define PLACE_3D                                                              \
    int tilesX = (nx + SX - 1) / SX;                                          \
    int tilesY = (ny + SY - 1) / SY;                                          \
    int g = (int)get_group_id(0);                                             \
    int gyz = g / tilesX;                                                     \
    int gz = gyz / tilesY;                                                    \
    int x0 = (g - gyz * tilesX) * SX;                                         \
    int y0 = (gyz - gz * tilesY) * SY;                                        \
    int z0 = gz * ZBLOCK;                                                     \
    int z1 = min(z0 + ZBLOCK, nz);                                            \
    int lx = (int)get_local_id(0);                                            \
    int ly = (int)get_local_id(1);                                            \
    int x = x0 + lx;                                                          \
    int y = y0 + ly;                                                          \
    int inXY = x > 0 && x < nx - 1 && y > 0 && y < ny - 1

__kernel __attribute__((reqd_work_group_size(SX, SY, 1)))
void stencil_7pt(__global ELEM *out, __global const ELEM *in, __global const ELEM *w, int nx, int ny, int nz) {
    __local ELEM t[2][T3_H][T3_W];
    PLACE_3D;
    ELEM w0 = w[0], wxm = w[1], wxp = w[2], wym = w[3], wyp = w[4], wzm = w[5], wzp = w[6];
    ELEM below = 0;   // running sum of output p-1
    ELEM at = 0;      // running sum of output p
    ELEM cprev = 0;   // input at (x, y, p-1)
    for (int p = z0 - 1; p <= z1; p++) {
        int b = p & 1;
        LOAD_PLANE(t, b, p);
        barrier(CLK_LOCAL_MEM_FENCE);
        ELEM c = t[b][ly + 1][lx + 1];
        ELEM s = w0 * c + wxm * t[b][ly + 1][lx] + wxp * t[b][ly + 1][lx + 2] + wym * t[b][ly][lx + 1] + wyp * t[b][ly + 2][lx + 1];
        ELEM done = below + wzp * c; // output p-1: plane p is its z+1 neighbour
        below = at + s;              // output p: its in-plane terms
        at = wzm * c;                // output p+1: plane p is its z-1 neighbour
        int zo = p - 1;
        if (zo >= z0 && x < nx && y < ny) {
            out[(zo * ny + y) * nx + x] = (inXY && zo > 0 && zo < nz - 1) ? done : cprev;
        }
        cprev = c;
    }
}

// The 9-point sum of plane b's 3 x 3 neighbourhood of the item with the weights of layer L
// (0: z-1, 1: z, 2: z+1).
#define NINE(L) (wt[L * 9 + 0] * n00 + wt[L * 9 + 1] * n01 + wt[L * 9 + 2] * n02 + \
                 wt[L * 9 + 3] * n10 + wt[L * 9 + 4] * n11 + wt[L * 9 + 5] * n12 + \
                 wt[L * 9 + 6] * n20 + wt[L * 9 + 7] * n21 + wt[L * 9 + 8] * n22)

__kernel __attribute__((reqd_work_group_size(SX, SY, 1)))
void stencil_27pt(__global ELEM *out, __global const ELEM *in, __global const ELEM *w, int nx, int ny, int nz) {
    __local ELEM t[2][T3_H][T3_W];
    PLACE_3D;
    ELEM wt[27];
    for (int k = 0; k < 27; k++) wt[k] = w[k];
    ELEM below = 0, at = 0, cprev = 0;
    for (int p = z0 - 1; p <= z1; p++) {
        int b = p & 1;
        LOAD_PLANE(t, b, p);
        barrier(CLK_LOCAL_MEM_FENCE);
        ELEM n00 = t[b][ly][lx], n01 = t[b][ly][lx + 1], n02 = t[b][ly][lx + 2];
        ELEM n10 = t[b][ly + 1][lx], n11 = t[b][ly + 1][lx + 1], n12 = t[b][ly + 1][lx + 2];
        ELEM n20 = t[b][ly + 2][lx], n21 = t[b][ly + 2][lx + 1], n22 = t[b][ly + 2][lx + 2];
        ELEM done = below + NINE(2); // output p-1: plane p is its z+1 layer
        below = at + NINE(1);        // output p: plane p is its own layer
        at = NINE(0);                // output p+1: plane p is its z-1 layer
        int zo = p - 1;
        if (zo >= z0 && x < nx && y < ny) {
            out[(zo * ny + y) * nx + x] = (inXY && zo > 0 && zo < nz - 1) ? done : cprev;
        }
        cprev = n11;
    }
}
