// layernorm.cl: row-wise layer normalization of a row-major [rows, cols] matrix.
//
// Purpose: y[r][c] = (x[r][c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c], with the
// mean and the (biased, divided by cols) variance of row r: the normalization layer of
// transformers, memory-bound. The statistics are computed two-pass: a work-group sum for
// the mean, then a work-group sum of (x - mean)^2 for the variance. Unlike the one-pass
// E[x^2] - mean^2 this does not cancel catastrophically when |mean| >> std; the mean's own
// rounding error enters the variance only squared (sum (x - mean')^2 = sum (x - mean)^2 +
// cols*(mean - mean')^2). layernorm_ref.go derives the error bound.
//
// Arguments:
//   layernorm_rows(y, x, gamma, beta, cols, eps)
//       y, x: rows*cols elements of type ELEM, row-major, rows being the number of work-groups;
//       y may be x (in place); gamma, beta: cols elements; eps > 0 is added to the variance.
//       cols >= 1, rows*cols < 2^31 (the launcher checks both).
//
// Tunables (-D, part of the cache key):
//   ELEM   element type                                             default float
//   WG     work-group size, a power of two                           default 256
//   CACHE  row elements each work-item keeps in registers; rows of   default 8
//          at most WG*CACHE elements are read from memory once
//   The launcher (rows.go) keeps two builds and picks one per call by cols: narrow, WG=256
//   CACHE=8 (rows of up to 2048 cached), and, compiled on first use by a wider row, wide,
//   WG=512 CACHE=32 (up to 16384 cached, 32 registers of ELEM per item). Either WG is
//   lowered to what the device and the compiled kernel allow; CACHE is not raised to make up
//   for it (registers), so on such devices wide rows take the second path below.
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
//   Inside the kernel, by cols (uniform over the work-group, so every barrier is reached):
//   cached (cols <= WG*CACHE): the row is read once into registers, both passes and the
//     output use the registers. One read of x, one write of y.
//   streamed (cols > WG*CACHE): the same two passes and the output each read the row from
//     global memory again (three reads; the row is usually still in cache).
// Launch: 1D, local size WG, global rows*WG: work-group g normalizes row g (no guard: the
//   launcher starts exactly rows groups), its items strided over the row (item i takes
//   columns i, i+WG, ...: coalesced). Columns past cols are padded with 0 and never stored.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef WG
#define WG 256
#endif
#ifndef CACHE
#define CACHE 8
#endif

// Work-group sum of one value per item; every item gets the result in out. The closing
// barrier lets the caller reuse scratch at once.
#define LN_GROUP_SUM(scratch, value, out)                                 \
    do {                                                                  \
        int lid_ = (int)get_local_id(0);                                  \
        scratch[lid_] = (value);                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                     \
        for (int s_ = WG / 2; s_ > 0; s_ >>= 1) {                         \
            if (lid_ < s_) scratch[lid_] += scratch[lid_ + s_];           \
            barrier(CLK_LOCAL_MEM_FENCE);                                 \
        }                                                                 \
        out = scratch[0];                                                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                     \
    } while (0)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void layernorm_rows(__global ELEM *y, __global const ELEM *x, __global const ELEM *gamma,
                    __global const ELEM *beta, int cols, ELEM eps) {
    __local ELEM red[WG];
    const int lid = (int)get_local_id(0);
    const int row = (int)get_group_id(0);
    __global const ELEM *xr = x + row * cols;
    __global ELEM *yr = y + row * cols;
    const ELEM n = (ELEM)cols;

    if (cols <= WG * CACHE) {
        ELEM v[CACHE];
        ELEM s = 0;
#pragma unroll
        for (int k = 0; k < CACHE; k++) {
            int c = lid + k * WG;
            v[k] = c < cols ? xr[c] : (ELEM)0;
            s += v[k];
        }
        LN_GROUP_SUM(red, s, s);
        const ELEM mean = s / n;
        ELEM ss = 0;
#pragma unroll
        for (int k = 0; k < CACHE; k++) {
            int c = lid + k * WG;
            v[k] = c < cols ? v[k] - mean : (ELEM)0;
            ss += v[k] * v[k];
        }
        LN_GROUP_SUM(red, ss, ss);
        const ELEM rstd = rsqrt(ss / n + eps);
#pragma unroll
        for (int k = 0; k < CACHE; k++) {
            int c = lid + k * WG;
            if (c < cols) yr[c] = v[k] * rstd * gamma[c] + beta[c];
        }
    } else {
        ELEM s = 0;
        for (int c = lid; c < cols; c += WG) s += xr[c];
        LN_GROUP_SUM(red, s, s);
        const ELEM mean = s / n;
        ELEM ss = 0;
        for (int c = lid; c < cols; c += WG) {
            ELEM d = xr[c] - mean;
            ss += d * d;
        }
        LN_GROUP_SUM(red, ss, ss);
        const ELEM rstd = rsqrt(ss / n + eps);
        for (int c = lid; c < cols; c += WG) {
            yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
        }
    }
}
