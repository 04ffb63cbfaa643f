// softmax.cl: row-wise softmax of a row-major [rows, cols] matrix, numerically stable.
//
// Purpose: y[r][c] = exp(x[r][c] - m_r) / sum_c' exp(x[r][c'] - m_r), m_r the row maximum:
// the memory-bound normalization of attention and classifier layers. Subtracting the row
// maximum keeps every exp argument <= 0, so no exp overflows whatever the magnitude of x.
//
// Arguments:
//   softmax_rows(y, x, cols)   y, x: rows*cols elements of type ELEM, row-major, rows being the
//                              number of work-groups; y may be x (in place); cols >= 1,
//                              rows*cols < 2^31 (the launcher checks both).
//   softmax_rows_multi(y, x, rows, cols)
//                              the same for short rows, WG/TPR rows per work-group:
//                              1 <= cols <= TPR*4*NV (the launcher checks).
//
// Tunables (-D, part of the cache key):
//   ELEM   element type                                             default float
//   WG     work-group size, a power of two                           default 256
//   CACHE  row elements each work-item keeps in registers; rows of   default 8
//          at most WG*CACHE elements are read from memory once
//   TPR    softmax_rows_multi: work-items per row, a power of two    default 32
//          of at most 32 dividing WG
//   NV     softmax_rows_multi: 4-element vectors each item keeps in  default 8
//          registers: rows of up to TPR*4*NV elements (1024)
//   The launcher keeps two builds (kernels/internal/rowwise), one per call by cols: narrow, WG=256
//   CACHE=8 (rows of up to 2048 cached), and, compiled on first use by a wider row, wide,
//   WG=512 CACHE=32 (up to 16384 cached, 32 registers of ELEM per item). Either WG is
//   lowered to what the device and the compiled kernel allow; CACHE is not raised to make up
//   for it (registers), so on such devices wide rows take the second path below.
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
//   Inside the kernel, by cols (uniform over the work-group, so every barrier is reached):
//   cached (cols <= WG*CACHE): the row is loaded into registers once; work-group max, then
//     e = exp(x - max) kept in registers, work-group sum, y = e / sum. One read, one write,
//     one exp per element.
//   online (cols > WG*CACHE): each item keeps a running max m and a running sum s of
//     exp(x - m) over its strided elements (rescaling s by exp(m_old - m_new) when the max
//     grows), the WG pairs (m, s) are combined in a tree in local memory, then a second pass
//     writes exp(x - m)/s. Two reads, one write, two exps per element.
// Launch: 1D, local size WG, global rows*WG: work-group g computes row g (no guard: the
//   launcher starts exactly rows groups), its items strided over the row (item i takes
//   columns i, i+WG, ...: coalesced). Columns past cols are
//   padded with -INFINITY (exp gives 0) and never stored. Inputs must be finite.
// softmax_rows_multi, for short rows (the launcher takes it for cols <= TPR*4*NV, 1024 by
//   default, where one row per work-group leaves most items idle and pays a barrier per
//   tree level): a work-group of WG items takes WG/TPR consecutive rows, TPR items each.
//   Item t of a row holds its elements in NV vectors v[i] of 4: where cols % 4 == 0 (every
//   row then starts on a 4-element boundary) v[i] is the row's 16-byte vector t + TPR*i
//   (one vector load each, coalesced over the row's items; stored as 4 scalars); otherwise component
//   k of v[i] is element t + TPR*(4i + k) (scalar accesses). The row is read once and
//   written once; the row maximum and the sum of the exps each take one barrier: every
//   item writes its partial to local memory, then each item of the row reads the row's TPR
//   partials and combines them in a tree of log2(TPR) levels, the same tree in every item,
//   so all items of a row agree bit for bit. An item sums its exps over its vectors
//   (ceil(cols/(4*TPR)) terms per component) and then its 4 components pairwise.
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

#define SM_NEG_INF ((ELEM)(-INFINITY))
#define SM_ADD(a, b) ((a) + (b))

// Work-group tree reduction with OP of one value per item; every item gets the result in
// out. The closing barrier lets the caller reuse scratch at once.
#define SM_GROUP_REDUCE(scratch, value, OP, out)                                   \
    do {                                                                           \
        int lid_ = (int)get_local_id(0);                                           \
        scratch[lid_] = (value);                                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
        for (int s_ = WG / 2; s_ > 0; s_ >>= 1) {                                  \
            if (lid_ < s_) scratch[lid_] = OP(scratch[lid_], scratch[lid_ + s_]);  \
            barrier(CLK_LOCAL_MEM_FENCE);                                          \
        }                                                                          \
        out = scratch[0];                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
    } while (0)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void softmax_rows(__global ELEM *y, __global const ELEM *x, int cols) {
    __local ELEM red_m[WG];
    __local ELEM red_s[WG];
    const int lid = (int)get_local_id(0);
    const int row = (int)get_group_id(0);
    __global const ELEM *xr = x + row * cols;
    __global ELEM *yr = y + row * cols;

    if (cols <= WG * CACHE) {
        ELEM v[CACHE];
        ELEM m = SM_NEG_INF;
#pragma unroll
        for (int k = 0; k < CACHE; k++) {
            int c = lid + k * WG;
            v[k] = c < cols ? xr[c] : SM_NEG_INF;
            m = max(m, v[k]);
        }
        SM_GROUP_REDUCE(red_m, m, max, m);
        ELEM s = 0;
#pragma unroll
        for (int k = 0; k < CACHE; k++) {
            v[k] = exp(v[k] - m); // padding: exp(-inf) = 0
            s += v[k];
        }
        SM_GROUP_REDUCE(red_s, s, SM_ADD, s);
#pragma unroll
        for (int k = 0; k < CACHE; k++) {
            int c = lid + k * WG;
            if (c < cols) yr[c] = v[k] / s;
        }
    } else {
        // online: cols > WG*CACHE >= WG, so every item has at least one element.
        ELEM m = SM_NEG_INF, s = 0;
        for (int c = lid; c < cols; c += WG) {
            ELEM xv = xr[c];
            if (xv > m) {
                s = s * exp(m - xv) + (ELEM)1; // first element: 0 * exp(-inf) + 1
                m = xv;
            } else {
                s += exp(xv - m);
            }
        }
        red_m[lid] = m;
        red_s[lid] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int st = WG / 2; st > 0; st >>= 1) {
            if (lid < st) {
                ELEM m1 = red_m[lid], m2 = red_m[lid + st];
                ELEM mn = max(m1, m2);
                red_s[lid] = red_s[lid] * exp(m1 - mn) + red_s[lid + st] * exp(m2 - mn);
                red_m[lid] = mn;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        m = red_m[0];
        s = red_s[0];
        for (int c = lid; c < cols; c += WG) {
            yr[c] = exp(xr[c] - m) / s;
        }
    }
}

// ---- softmax_rows_multi: several short rows per work-group ----------------------------

#define SM_CAT_(a, b) a##b
#define SM_CAT(a, b) SM_CAT_(a, b)
#define SM_VEC SM_CAT(ELEM, 4) // float4 or double4
#ifdef PRISM_CUDA
#define SM_LOCAL // helpers take shared pointers as plain ones in CUDA C++
#else
#define SM_LOCAL __local
#endif

// sm_row_max and sm_row_sum combine a row's TPR partials red[0, TPR) in a tree of
// log2(TPR) levels, the same in every item. Scalar local loads (broadcasts: every item of
// the row reads the same words): Oclgrind 21.10's --uninitialized check crashes on the
// vector shuffles that 16-byte loads here are compiled to.
inline ELEM sm_row_max(SM_LOCAL const ELEM *red) {
    ELEM a[TPR];
#pragma unroll
    for (int i = 0; i < TPR; i++) a[i] = red[i];
#if TPR >= 32
#pragma unroll
    for (int i = 0; i < 16; i++) a[i] = max(a[i], a[i + 16]);
#endif
#if TPR >= 16
#pragma unroll
    for (int i = 0; i < 8; i++) a[i] = max(a[i], a[i + 8]);
#endif
#if TPR >= 8
#pragma unroll
    for (int i = 0; i < 4; i++) a[i] = max(a[i], a[i + 4]);
#endif
#if TPR >= 4
#pragma unroll
    for (int i = 0; i < 2; i++) a[i] = max(a[i], a[i + 2]);
#endif
#if TPR >= 2
#pragma unroll
    for (int i = 0; i < 1; i++) a[i] = max(a[i], a[i + 1]);
#endif
    return a[0];
}

inline ELEM sm_row_sum(SM_LOCAL const ELEM *red) {
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
void softmax_rows_multi(__global ELEM *y, __global const ELEM *x, int rows, int cols) {
    __local ELEM red_m[WG];
    __local ELEM red_s[WG];
    const int vec = cols % 4 == 0; // 16-byte vectors (uniform over the work-group)
    const int lid = (int)get_local_id(0);
    const int t = lid & (TPR - 1); // the item's place in its row (TPR a power of two)
    const int base = lid - t;      // its row's first item in the work-group
    const int row = (int)get_group_id(0) * (WG / TPR) + lid / TPR;
    const int n = row < rows ? cols : 0;
    const int off = (row < rows ? row : rows - 1) * cols; // past the end: this group's last row
    __global const ELEM *xr = x + off;
    __global ELEM *yr = y + off;

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
            const SM_VEC a = ((__global const SM_VEC *)xr)[in ? q : 0];
            v[4 * i] = in ? a.x : SM_NEG_INF;
            v[4 * i + 1] = in ? a.y : SM_NEG_INF;
            v[4 * i + 2] = in ? a.z : SM_NEG_INF;
            v[4 * i + 3] = in ? a.w : SM_NEG_INF;
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int c = t + TPR * (4 * i + k);
                v[4 * i + k] = c < n ? xr[c] : SM_NEG_INF;
            }
        }
    }
    ELEM m = v[0];
#pragma unroll
    for (int j = 1; j < 4 * NV; j++) m = max(m, v[j]);
    red_m[lid] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    m = sm_row_max(red_m + base);

    // Four partial sums, one per vector component, then pairwise.
    ELEM s4[4] = {0, 0, 0, 0};
#pragma unroll
    for (int j = 0; j < 4 * NV; j++) {
        v[j] = exp(v[j] - m); // padding: exp(-inf) = 0
        s4[j % 4] += v[j];
    }
    red_s[lid] = (s4[0] + s4[1]) + (s4[2] + s4[3]);
    // The global fence orders the loads above before the stores below in an in-place run,
    // where an absent vector read the row's first one, which another item of the row
    // stores (without it the two are a data race under OpenCL's memory model; no cost: the
    // loaded values are used before the barrier, and CUDA's __syncthreads orders both).
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const ELEM s = sm_row_sum(red_s + base);
#pragma unroll
    for (int i = 0; i < NV; i++) {
        if (vec) {
            const int q = t + TPR * i;
            if (q < n / 4) {
                // The four components stored through the vector's pointer: compilers merge
                // them into one 16-byte store (NVRTC did not merge four scalar stores, and
                // the partial-sector writes held the L2 at 95% of its throughput), while a
                // vector built from scalars, stored whole, starts from an undefined one,
                // which Oclgrind 21.10's --uninitialized check reports.
                // The four component stores merge into a store of a vector built from
                // scalars, which Oclgrind 21.10 turns into a store of the undefined vector
                // and four scalar ones, and reports: there (PRISM_OCLGRIND, defined by the
                // OpenCL backend), vstore4, a call, stores the same 16 bytes.
#ifdef PRISM_OCLGRIND
                vstore4((SM_VEC)(v[4 * i] / s, v[4 * i + 1] / s, v[4 * i + 2] / s, v[4 * i + 3] / s), q, yr);
#else
                __global SM_VEC *yv = (__global SM_VEC *)yr + q;
                yv->x = v[4 * i] / s;
                yv->y = v[4 * i + 1] / s;
                yv->z = v[4 * i + 2] / s;
                yv->w = v[4 * i + 3] / s;
#endif
            }
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int c = t + TPR * (4 * i + k);
                if (c < n) yr[c] = v[4 * i + k] / s;
            }
        }
    }
}
