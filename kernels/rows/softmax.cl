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
