// stream.cl: the STREAM family (copy, scale, add, triad) and a dot product.
//
// Purpose: memory-bound kernels that show how close a device comes to its bandwidth
// ceiling, and the first check that a backend moves data and runs kernels correctly.
//
// Arguments (n elements of type ELEM; every kernel loops with a grid stride, so the host
// may launch fewer work-items than n; copy, scale, add and triad move VW elements per
// step with vloadVW/vstoreVW, and items 0 .. n%VW-1 then do one element each of the last
// n%VW):
//   stream_copy (c, a, n)          c[i] = a[i]
//   stream_scale(b, c, s, n)       b[i] = s * c[i]
//   stream_add  (c, a, b, n)       c[i] = a[i] + b[i]
//   stream_triad(a, b, c, s, n)    a[i] = b[i] + s * c[i]
//   stream_dot  (part, a, b, n)    part[g] = sum of a[i] * b[i] over the items of work-group g
//   stream_sum  (out, part, m)     out[0] = sum of part[0..m), launched as one work-group
//
// Tunables (-D, part of the cache key):
//   ELEM  element type                       default float
//         (not "T": NVRTC's built-in headers see -D macros and use T as a template parameter)
//   WG    work-group size, a power of two    default 256
//   VW    elements per vector access: 1, 2 or 4 (16 bytes: 4 floats, 2 doubles)   default 1
// Variants: ELEM=float VW=4; ELEM=double VW=2 with PRISM_FP64 defined (only where the device
//   has fp64).
// Launch: 1D, local size WG; global a multiple of WG, at least WG (the tail needs n%VW < VW
//   items). The launcher starts one item per VW elements.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef WG
#define WG 256
#endif
#ifndef VW
#define VW 1
#endif

// VEC is ELEM's vector of VW elements; VLOAD and VSTORE access the i-th of them.
#define STREAM_CAT(a, b) a##b
#define STREAM_XCAT(a, b) STREAM_CAT(a, b)
#if VW == 1
#define VEC ELEM
#define VLOAD(i, p) ((p)[i])
#define VSTORE(v, i, p) ((p)[i] = (v))
#else
#define VEC STREAM_XCAT(ELEM, VW)
#define VLOAD(i, p) STREAM_XCAT(vload, VW)(i, p)
#define VSTORE(v, i, p) STREAM_XCAT(vstore, VW)(v, i, p)
#endif

// STREAM_LOOP runs VECTOR over the n/VW vectors (index i) with a grid stride, then SCALAR
// for the last n%VW elements (index i), one per item.
#define STREAM_LOOP(n, VECTOR, SCALAR)                                                  \
    do {                                                                                \
        const int nv_ = (n) / VW;                                                       \
        for (int i = (int)get_global_id(0); i < nv_; i += (int)get_global_size(0)) {    \
            VECTOR;                                                                     \
        }                                                                               \
        const int i = nv_ * VW + (int)get_global_id(0);                                 \
        if (i < (n)) {                                                                  \
            SCALAR;                                                                     \
        }                                                                               \
    } while (0)

__kernel void stream_copy(__global ELEM *c, __global const ELEM *a, int n) {
    STREAM_LOOP(n, VSTORE(VLOAD(i, a), i, c), c[i] = a[i]);
}

__kernel void stream_scale(__global ELEM *b, __global const ELEM *c, ELEM s, int n) {
    STREAM_LOOP(n, VSTORE(s * VLOAD(i, c), i, b), b[i] = s * c[i]);
}

__kernel void stream_add(__global ELEM *c, __global const ELEM *a, __global const ELEM *b, int n) {
    STREAM_LOOP(n, VSTORE(VLOAD(i, a) + VLOAD(i, b), i, c), c[i] = a[i] + b[i]);
}

__kernel void stream_triad(__global ELEM *a, __global const ELEM *b, __global const ELEM *c, ELEM s, int n) {
    STREAM_LOOP(n, VSTORE(VLOAD(i, b) + s * VLOAD(i, c), i, a), a[i] = b[i] + s * c[i]);
}

// Work-group tree reduction of one value per work-item; the result is in scratch[0].
#define GROUP_SUM(scratch, value)                                   \
    do {                                                            \
        int lid_ = (int)get_local_id(0);                            \
        scratch[lid_] = (value);                                    \
        barrier(CLK_LOCAL_MEM_FENCE);                               \
        for (int s_ = WG / 2; s_ > 0; s_ >>= 1) {                   \
            if (lid_ < s_) scratch[lid_] += scratch[lid_ + s_];     \
            barrier(CLK_LOCAL_MEM_FENCE);                           \
        }                                                           \
    } while (0)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void stream_dot(__global ELEM *part, __global const ELEM *a, __global const ELEM *b, int n) {
    __local ELEM scratch[WG];
    ELEM acc = 0;
    for (int i = (int)get_global_id(0); i < n; i += (int)get_global_size(0)) {
        acc += a[i] * b[i];
    }
    GROUP_SUM(scratch, acc);
    if (get_local_id(0) == 0) part[get_group_id(0)] = scratch[0];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void stream_sum(__global ELEM *out, __global const ELEM *part, int m) {
    __local ELEM scratch[WG];
    ELEM acc = 0;
    for (int i = (int)get_local_id(0); i < m; i += WG) {
        acc += part[i];
    }
    GROUP_SUM(scratch, acc);
    if (get_local_id(0) == 0) out[0] = scratch[0];
}
