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
//   layernorm_rows_multi(y, x, gamma, beta, rows, cols, eps)
//       the same for short rows, WG/TPR rows per work-group: 1 <= cols <= TPR*4*NV (the
//       launcher checks).
//
// Tunables (-D, part of the cache key):
//   ELEM   element type                                             default float
//   WG     work-group size, a power of two                           default 256
//   CACHE  row elements each work-item keeps in registers; rows of   default 8
//          at most WG*CACHE elements are read from memory once
//   TPR    layernorm_rows_multi: work-items per row, a power of two  default 32
//          of at most 32 dividing WG
//   NV     layernorm_rows_multi: 4-element vectors each item keeps   default 8
//          in registers: rows of up to TPR*4*NV elements (1024)
//   The launcher keeps two builds (kernels/internal/rowwise), one per call by cols: narrow, WG=256
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
// layernorm_rows_multi, for short rows (the launcher takes it for cols <= TPR*4*NV, 1024
//   by default, where one row per work-group leaves most items idle and pays a barrier per
//   tree level): a work-group of WG items takes WG/TPR consecutive rows, TPR items each.
//   Item t of a row holds its elements in NV vectors v[i] of 4: where cols % 4 == 0 (every
//   row then starts on a 4-element boundary) v[i] is the row's 16-byte vector t + TPR*i
//   (one vector load each, coalesced over the row's items, gamma and beta read the
//   same way; stored as 4 scalars); otherwise component k of v[i] is element t + TPR*(4i + k) (scalar
//   accesses). The row is read once and written once. The same two passes as above, on
//   the registers: the sum, then the sum of the squared differences from the mean (absent
//   elements masked out), each with one barrier: every item writes its partial to local
//   memory, then each item of the row reads the row's TPR partials and combines them in a
//   tree of log2(TPR) levels, the same tree in every item, so all items of a row agree bit
//   for bit. An item sums over its vectors (ceil(cols/(4*TPR)) terms per component) and
//   then its 4 components pairwise.
//   Launch: 1D, local size WG, global ceil(rows/(WG/TPR))*WG; the items of rows past the
//   last one load and store nothing but still reach both barriers.

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
#ifndef TPR
#define TPR 32
#endif
#ifndef NV
#define NV 8
#endif
#if TPR > 32
#error "TPR (work-items per row of the short-row kernel) is at most 32"
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

// ---- layernorm_rows_multi: several short rows per work-group --------------------------

#define LN_CAT_(a, b) a##b
#define LN_CAT(a, b) LN_CAT_(a, b)
#define LN_VEC LN_CAT(ELEM, 4) // float4 or double4
#ifdef PRISM_CUDA
#define LN_LOCAL // helpers take shared pointers as plain ones in CUDA C++
#else
#define LN_LOCAL __local
#endif

// ln_row_sum combines a row's TPR partials red[0, TPR) in a tree of log2(TPR) levels, the
// same in every item. Scalar local loads (broadcasts: every item of the row reads the same
// words): Oclgrind 21.10's --uninitialized check crashes on the vector shuffles that
// 16-byte loads here are compiled to.
inline ELEM ln_row_sum(LN_LOCAL const ELEM *red) {
    ELEM a[TPR];
#pragma unroll
    for (int i = 0; i < TPR; i++) a[i] = red[i];
#if TPR >= 32
#pragma unroll
    for (int i = 0; i < 16; i++) a[i] = a[i] + a[i + 16];
#endif
#if TPR >= 16
#pragma unroll
    for (int i = 0; i < 8; i++) a[i] = a[i] + a[i + 8];
#endif
#if TPR >= 8
#pragma unroll
    for (int i = 0; i < 4; i++) a[i] = a[i] + a[i + 4];
#endif
#if TPR >= 4
#pragma unroll
    for (int i = 0; i < 2; i++) a[i] = a[i] + a[i + 2];
#endif
#if TPR >= 2
#pragma unroll
    for (int i = 0; i < 1; i++) a[i] = a[i] + a[i + 1];
#endif
    return a[0];
}

// Item t holds 4*NV elements of its row in v[4i + k], i < NV, k < 4: where vec (cols % 4 ==
// 0, so every row starts on a 4-element boundary) v[4i..4i+3] is the row's 16-byte vector
// t + TPR*i, else v[4i + k] is element t + TPR*(4i + k). n is the row's length, 0 for a
// row past the last one. Vectors are only loaded: the arithmetic is on scalars.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void layernorm_rows_multi(__global ELEM *y, __global const ELEM *x, __global const ELEM *gamma,
                          __global const ELEM *beta, int rows, int cols, ELEM eps) {
    __local ELEM red_s[WG];
    __local ELEM red_q[WG];
    const int vec = cols % 4 == 0; // 16-byte vectors (uniform over the work-group)
    const int lid = (int)get_local_id(0);
    const int t = lid & (TPR - 1); // the item's place in its row (TPR a power of two)
    const int base = lid - t;      // its row's first item in the work-group
    const int row = (int)get_group_id(0) * (WG / TPR) + lid / TPR;
    const int n = row < rows ? cols : 0;
    const int off = (row < rows ? row : rows - 1) * cols; // past the end: this group's last row
    __global const ELEM *xr = x + off;
    __global ELEM *yr = y + off;
    const ELEM nc = (ELEM)cols;

    ELEM v[4 * NV];
#pragma unroll
    for (int i = 0; i < NV; i++) {
        if (vec) {
            // Load unconditionally (an absent vector reads its row's first one, or, past the
            // last row, the last row's: one of this work-group's rows, read before the
            // barriers and written after them, so that an in-place run has no race with
            // another work-group) and select: no branch.
            const int q = t + TPR * i;
            const bool in = q < n / 4;
            const LN_VEC a = ((__global const LN_VEC *)xr)[in ? q : 0];
            v[4 * i] = in ? a.x : (ELEM)0;
            v[4 * i + 1] = in ? a.y : (ELEM)0;
            v[4 * i + 2] = in ? a.z : (ELEM)0;
            v[4 * i + 3] = in ? a.w : (ELEM)0;
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int c = t + TPR * (4 * i + k);
                v[4 * i + k] = c < n ? xr[c] : (ELEM)0;
            }
        }
    }
    // Four partial sums, one per vector component, then pairwise.
    ELEM s0 = v[0], s1 = v[1], s2 = v[2], s3 = v[3];
#pragma unroll
    for (int i = 1; i < NV; i++) {
        s0 += v[4 * i];
        s1 += v[4 * i + 1];
        s2 += v[4 * i + 2];
        s3 += v[4 * i + 3];
    }
    red_s[lid] = (s0 + s1) + (s2 + s3);
    barrier(CLK_LOCAL_MEM_FENCE);
    const ELEM mean = ln_row_sum(red_s + base) / nc;

    // Centre the registers (absent elements 0) and sum their squares.
#pragma unroll
    for (int i = 0; i < NV; i++) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const bool in = vec ? t + TPR * i < n / 4 : t + TPR * (4 * i + k) < n;
            v[4 * i + k] = in ? v[4 * i + k] - mean : (ELEM)0;
        }
    }
    s0 = v[0] * v[0], s1 = v[1] * v[1], s2 = v[2] * v[2], s3 = v[3] * v[3];
#pragma unroll
    for (int i = 1; i < NV; i++) {
        s0 += v[4 * i] * v[4 * i];
        s1 += v[4 * i + 1] * v[4 * i + 1];
        s2 += v[4 * i + 2] * v[4 * i + 2];
        s3 += v[4 * i + 3] * v[4 * i + 3];
    }
    red_q[lid] = (s0 + s1) + (s2 + s3);
    // A global fence, ordering the loads above before the stores below in an in-place run
    // (see softmax.cl's softmax_rows_multi).
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const ELEM rstd = rsqrt(ln_row_sum(red_q + base) / nc + eps);
#pragma unroll
    for (int i = 0; i < NV; i++) {
        if (vec) {
            const int q = t + TPR * i;
            if (q < n / 4) {
                const LN_VEC g = ((__global const LN_VEC *)gamma)[q], b = ((__global const LN_VEC *)beta)[q];
                // The four components stored through the vector's pointer, merged into one
                // 16-byte store; vstore4 under Oclgrind (see softmax.cl's softmax_rows_multi).
#ifdef PRISM_OCLGRIND
                vstore4((LN_VEC)(v[4 * i] * rstd * g.x + b.x, v[4 * i + 1] * rstd * g.y + b.y,
                                 v[4 * i + 2] * rstd * g.z + b.z, v[4 * i + 3] * rstd * g.w + b.w), q, yr);
#else
                __global LN_VEC *yv = (__global LN_VEC *)yr + q;
                yv->x = v[4 * i] * rstd * g.x + b.x;
                yv->y = v[4 * i + 1] * rstd * g.y + b.y;
                yv->z = v[4 * i + 2] * rstd * g.z + b.z;
                yv->w = v[4 * i + 3] * rstd * g.w + b.w;
#endif
            }
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int c = t + TPR * (4 * i + k);
                if (c < n) yr[c] = v[4 * i + k] * rstd * gamma[c] + beta[c];
            }
        }
    }
}
