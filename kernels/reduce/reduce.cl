// reduce.cl: sum, min, max, argmin and argmax over a whole array or per row of a matrix.
//
// Purpose: the work-group tree reduction, the building block of norms, softmax and
// statistics; memory-bound: a good reduction reads its input once at full bandwidth.
//
// Arguments (x holds n elements of type ELEM, or rows*cols in row-major order; indices are
// int; every whole-array kernel loops with a grid stride, so any number of groups works):
//   reduce_sum   (out, x, n)      out[g] = sum of x[i] over the items of work-group g
//   reduce_min   (out, x, n)      out[g] = min of the same
//   reduce_max   (out, x, n)      out[g] = max of the same
//   reduce_argmin(outv, outi, x, n)
//                                 outv[g], outi[g] = smallest value and its smallest index
//   reduce_argmax(outv, outi, x, n)        (largest value)
//   reduce_argmin_pairs(outv, outi, pv, pi, m)
//   reduce_argmax_pairs(outv, outi, pv, pi, m)
//                                 the same over m (value, index) pairs pv[j], pi[j]: the
//                                 second pass
//   reduce_row{sum,min,max}(out, x, rows, cols, seg)
//                                 out[r] = op over row r (cols elements)
//   reduce_row{argmin,argmax}(outv, outi, x, rows, cols, seg)
//                                 outv[r], outi[r] = value and column index in row r
// Whole array: two passes. Pass 1 runs G groups over x into G partials; pass 2 runs the
// same kernel (or the _pairs kernel for arg ops) as one group over the G partials into
// out[0]. With G = 1 pass 1 writes out[0] directly.
// Sum, min and max read x as 4-element vectors (through a pointer to ELEM's 4-component
// vector type: 16-byte loads of float or int, 32-byte of double) with a grid stride: four
// vectors in flight per work-item and iteration (t, t+S, t+2S, t+3S for item t of S),
// then single vectors, then the n%4 tail elements, one each for items 0..n%4-1. Each item
// accumulates vector component c in its own lane accumulator and combines its four lanes
// as (a0 op a1) op (a2 op a3) before the group's tree (RED_GRID below; reduce.go's Chain
// counts the additions). Argmin and argmax read one element per item and step.
// Per row: seg (a power of two <= WG, kernel argument) work-items reduce one row; a group
// holds WG/seg rows: one row per group for long rows (seg = WG), several for short ones
// (seg = the power of two at or above cols).
//
// Semantics:
//   sum      accumulated in ACC: ELEM for floats; uint for int32, so an int32 sum wraps
//            modulo 2^32 (defined unsigned arithmetic, converted back to int).
//   min/max  NaNs are ignored (a NaN never compares smaller or larger): the result is the
//            min/max of the other elements; ELEM_MAX (+inf) / ELEM_LOWEST (-inf) when every
//            element is NaN. -0 and +0 compare equal (either may come back).
//   arg*     the index of the first occurrence (the smallest index among equal values);
//            NaNs ignored; index -1 (value ELEM_MAX / ELEM_LOWEST) when every element is NaN.
//
// Tunables (-D, part of the cache key):
//   ELEM         element type: float, double (with PRISM_FP64) or int     default float
//   ACC          accumulator of sums: ELEM, or uint for ELEM=int           default ELEM
//   ELEM_MAX     identity of min: INFINITY, or INT_MAX for int             default INFINITY
//   ELEM_LOWEST  identity of max: -INFINITY, or INT_MIN for int            default -INFINITY
//   WG           work-group size, a power of two                           default 256
// Variants: ELEM=float; ELEM=double with PRISM_FP64 (only where the device has fp64);
//   ELEM=int with ACC=uint, ELEM_MAX=INT_MAX, ELEM_LOWEST=INT_MIN.
//   The whole-array sums also have a CUDA C++ variant, cuda-shfl (reduce.cu): one launch,
//   16-byte loads and warp shuffles; CUDA devices run it unless --portable.
// Launch: 1D, local size exactly WG. Whole array: pass 1 global G*WG, pass 2 global WG.
//   Rows: global ceil(rows / (WG/seg)) * WG.
// Boundaries: items past n (or rows past `rows`, lanes past cols) contribute the identity;
//   nothing past x[n-1] is read (the vector loads cover x[0..n-n%4), the tail is read
//   element by element); outputs are written only for existing groups / rows, so nothing
//   past them is touched.
// Alignment: the whole-array sum/min/max read x as vectors, so x must be aligned to 4
//   elements; a buffer's start is (OpenCL aligns buffers to CL_DEVICE_MEM_BASE_ADDR_ALIGN,
//   at least 128 bytes; cuMemAlloc to 256), and reduce.go passes only buffers' starts.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef ACC
#define ACC ELEM
#endif
#ifndef ELEM_MAX
#define ELEM_MAX INFINITY
#endif
#ifndef ELEM_LOWEST
#define ELEM_LOWEST (-INFINITY)
#endif
#ifndef WG
#define WG 256
#endif

// The next index of a strided loop, without int overflow near 2^31: n when it would pass n.
#define RED_STEP(i, step, n) (((i) < (n) - (step)) ? (i) + (step) : (n))

// Combining operators. MIN/MAX keep the accumulator unless the new value is strictly
// better, so a NaN (which compares false) never enters.
#define RED_SUM(a, b) ((a) + (b))
#define RED_MIN(a, b) (((b) < (a)) ? (b) : (a))
#define RED_MAX(a, b) (((a) < (b)) ? (b) : (a))
#define RED_LT(a, b) ((a) < (b))
#define RED_GT(a, b) ((a) > (b))

// Whether pair (v, i) beats pair (bv, bi) under comparison CMP: index -1 is the empty pair;
// equal values go to the smaller index.
#define RED_BETTER(CMP, v, i, bv, bi) ((i) >= 0 && ((bi) < 0 || CMP(v, bv) || ((v) == (bv) && (i) < (bi))))

// Tree reduction of scratch[] within aligned segments of `span` items (a power of two);
// lane is the item's index in its segment. The segment's result ends in its first slot.
#define RED_TREE(OP, scratch, lid, lane, span)                              \
    for (int s_ = (span) / 2; s_ > 0; s_ >>= 1) {                           \
        if ((lane) < s_) scratch[lid] = OP(scratch[lid], scratch[(lid) + s_]); \
        barrier(CLK_LOCAL_MEM_FENCE);                                       \
    }

#define RED_ARG_TREE(CMP, sv, si, lid, lane, span)                          \
    for (int s_ = (span) / 2; s_ > 0; s_ >>= 1) {                           \
        if ((lane) < s_) {                                                  \
            ELEM v_ = sv[(lid) + s_];                                       \
            int i_ = si[(lid) + s_];                                        \
            if (RED_BETTER(CMP, v_, i_, sv[lid], si[lid])) {                \
                sv[lid] = v_;                                               \
                si[lid] = i_;                                               \
            }                                                               \
        }                                                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                       \
    }

// OpenCL's 4-component vector of ELEM (float4, double4, int4).
#define RED_CAT_(a, b) a##b
#define RED_VEC4_(t) RED_CAT_(t, 4)
#define RED_ELEM4 RED_VEC4_(ELEM)

// Folds the components of vector v into the lane accumulators a0..a3 under OP.
#define RED_LANES(TYPE, OP, v)                                              \
    a0 = OP(a0, (TYPE)(v).x);                                               \
    a1 = OP(a1, (TYPE)(v).y);                                               \
    a2 = OP(a2, (TYPE)(v).z);                                               \
    a3 = OP(a3, (TYPE)(v).w);

// Pass body of sum/min/max over x[0..n) with a grid stride; group g writes out[g].
// x is read as nv = n/4 vectors xv[j] = x[4j..4j+3] (a vector access: one 16-byte load of
// float; vload4 needs only the element's alignment, so compilers may split it into scalar
// loads) and a tail of n%4 elements. Work-item t of gs reads vectors t, t+gs, t+2gs and
// t+3gs in one iteration (four independent loads in flight; consecutive items read
// consecutive vectors) while all four exist, then t, t+gs, ... one at a time up to nv;
// item t < n%4 reads the tail element x[4nv+t]. Component c of every vector goes to lane
// accumulator a_c in the order read (the tail element to a0), and the item's partial is
// (a0 OP a1) OP (a2 OP a3). nu bounds the starts of whole iterations (j + 3gs < nv) and is
// computed only where 3gs <= nv, so no index passes 2^31.
#define RED_GRID(TYPE, OP, IDENT)                                           \
    __local TYPE scratch[WG];                                               \
    const int lid = (int)get_local_id(0);                                   \
    const int gid = (int)get_global_id(0);                                  \
    const int gs = (int)get_global_size(0);                                 \
    const int nv = n >> 2;                                                  \
    const int nu = (gs <= nv / 3) ? nv - 3 * gs : 0;                        \
    __global const RED_ELEM4 *xv = (__global const RED_ELEM4 *)x;           \
    TYPE a0 = IDENT, a1 = IDENT, a2 = IDENT, a3 = IDENT;                    \
    int j = gid;                                                            \
    for (; j < nu; j += 4 * gs) {                                           \
        const RED_ELEM4 v0 = xv[j];                                         \
        const RED_ELEM4 v1 = xv[j + gs];                                    \
        const RED_ELEM4 v2 = xv[j + 2 * gs];                                \
        const RED_ELEM4 v3 = xv[j + 3 * gs];                                \
        RED_LANES(TYPE, OP, v0)                                             \
        RED_LANES(TYPE, OP, v1)                                             \
        RED_LANES(TYPE, OP, v2)                                             \
        RED_LANES(TYPE, OP, v3)                                             \
    }                                                                       \
    for (; j < nv; j = RED_STEP(j, gs, nv)) {                               \
        const RED_ELEM4 v = xv[j];                                          \
        RED_LANES(TYPE, OP, v)                                              \
    }                                                                       \
    if (gid < (n & 3)) a0 = OP(a0, (TYPE)x[4 * nv + gid]);                  \
    scratch[lid] = OP(OP(a0, a1), OP(a2, a3));                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                           \
    RED_TREE(OP, scratch, lid, lid, WG)                                     \
    if (lid == 0) out[get_group_id(0)] = (ELEM)scratch[0];

// Whether the element (v, i) of a scan in increasing i beats (bv, bi): strictly better,
// or the first non-NaN element. Branch-free, so that loops vectorize.
#define RED_TAKE(CMP, v, i, bv, bi) (CMP(v, bv) | (((bi) < 0) & ((v) == (v))))
#define RED_PAIR(CMP, v, i, bv, bi) RED_BETTER(CMP, v, i, bv, bi)

// Pass body of argmin/argmax over x[0..n) (TAKE = RED_TAKE: indices increase) or over
// (value, index) pairs (TAKE = RED_BETTER).
#define RED_ARG_GRID(TAKE, CMP, IDENT, LOADV, LOADI)                        \
    __local ELEM sv[WG];                                                    \
    __local int si[WG];                                                     \
    const int lid = (int)get_local_id(0);                                   \
    const int gs = (int)get_global_size(0);                                 \
    ELEM bv = IDENT;                                                        \
    int bi = -1;                                                            \
    for (int i = (int)get_global_id(0); i < n; i = RED_STEP(i, gs, n)) {    \
        ELEM v = LOADV;                                                     \
        int vi = LOADI;                                                     \
        const int take = TAKE(CMP, v, vi, bv, bi);                          \
        bv = take ? v : bv;                                                 \
        bi = take ? vi : bi;                                                \
    }                                                                       \
    sv[lid] = bv;                                                           \
    si[lid] = bi;                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                           \
    RED_ARG_TREE(CMP, sv, si, lid, lid, WG)                                 \
    if (lid == 0) {                                                         \
        outv[get_group_id(0)] = sv[0];                                      \
        outi[get_group_id(0)] = si[0];                                      \
    }

// Per-row body of sum/min/max: segment of seg items per row.
#define RED_ROW(TYPE, OP, IDENT)                                            \
    __local TYPE scratch[WG];                                               \
    const int lid = (int)get_local_id(0);                                   \
    const int lane = lid & (seg - 1);                                       \
    const int row = (int)get_group_id(0) * (WG / seg) + lid / seg;          \
    TYPE acc = IDENT;                                                       \
    if (row < rows) {                                                       \
        const int base = row * cols;                                        \
        for (int c = lane; c < cols; c = RED_STEP(c, seg, cols)) {          \
            acc = OP(acc, (TYPE)x[base + c]);                               \
        }                                                                   \
    }                                                                       \
    scratch[lid] = acc;                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                           \
    RED_TREE(OP, scratch, lid, lane, seg)                                   \
    if (lane == 0 && row < rows) out[row] = (ELEM)scratch[lid];

#define RED_ARG_ROW(CMP, IDENT)                                             \
    __local ELEM sv[WG];                                                    \
    __local int si[WG];                                                     \
    const int lid = (int)get_local_id(0);                                   \
    const int lane = lid & (seg - 1);                                       \
    const int row = (int)get_group_id(0) * (WG / seg) + lid / seg;          \
    ELEM bv = IDENT;                                                        \
    int bi = -1;                                                            \
    if (row < rows) {                                                       \
        const int base = row * cols;                                        \
        for (int c = lane; c < cols; c = RED_STEP(c, seg, cols)) {          \
            const ELEM v = x[base + c];                                     \
            const int take = RED_TAKE(CMP, v, c, bv, bi);                   \
            bv = take ? v : bv;                                             \
            bi = take ? c : bi;                                             \
        }                                                                   \
    }                                                                       \
    sv[lid] = bv;                                                           \
    si[lid] = bi;                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                           \
    RED_ARG_TREE(CMP, sv, si, lid, lane, seg)                               \
    if (lane == 0 && row < rows) {                                          \
        outv[row] = sv[lid];                                                \
        outi[row] = si[lid];                                                \
    }

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_sum(__global ELEM *out, __global const ELEM *x, int n) {
    RED_GRID(ACC, RED_SUM, (ACC)0)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_min(__global ELEM *out, __global const ELEM *x, int n) {
    RED_GRID(ELEM, RED_MIN, ELEM_MAX)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_max(__global ELEM *out, __global const ELEM *x, int n) {
    RED_GRID(ELEM, RED_MAX, ELEM_LOWEST)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_argmin(__global ELEM *outv, __global int *outi, __global const ELEM *x, int n) {
    RED_ARG_GRID(RED_TAKE, RED_LT, ELEM_MAX, x[i], i)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_argmax(__global ELEM *outv, __global int *outi, __global const ELEM *x, int n) {
    RED_ARG_GRID(RED_TAKE, RED_GT, ELEM_LOWEST, x[i], i)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_argmin_pairs(__global ELEM *outv, __global int *outi, __global const ELEM *pv,
                         __global const int *pi, int n) {
    RED_ARG_GRID(RED_PAIR, RED_LT, ELEM_MAX, pv[i], pi[i])
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_argmax_pairs(__global ELEM *outv, __global int *outi, __global const ELEM *pv,
                         __global const int *pi, int n) {
    RED_ARG_GRID(RED_PAIR, RED_GT, ELEM_LOWEST, pv[i], pi[i])
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_rowsum(__global ELEM *out, __global const ELEM *x, int rows, int cols, int seg) {
    RED_ROW(ACC, RED_SUM, (ACC)0)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_rowmin(__global ELEM *out, __global const ELEM *x, int rows, int cols, int seg) {
    RED_ROW(ELEM, RED_MIN, ELEM_MAX)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_rowmax(__global ELEM *out, __global const ELEM *x, int rows, int cols, int seg) {
    RED_ROW(ELEM, RED_MAX, ELEM_LOWEST)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_rowargmin(__global ELEM *outv, __global int *outi, __global const ELEM *x, int rows,
                      int cols, int seg) {
    RED_ARG_ROW(RED_LT, ELEM_MAX)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_rowargmax(__global ELEM *outv, __global int *outi, __global const ELEM *x, int rows,
                      int cols, int seg) {
    RED_ARG_ROW(RED_GT, ELEM_LOWEST)
}
