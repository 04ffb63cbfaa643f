// ceiling.cl: the measurement kernels of the benchmark: a device's FMA peak and its copy
// bandwidth. (The cost of a launch is the launch family's, launch.cl.)
//
// Purpose: the ceilings `prism bench` divides every result by, measured with kernels of the
// suite so that both APIs run the same text. ceiling_peak is FMA-bound, as clpeak's: each
// work-item runs 8 independent multiply-add chains (independent, so that a pipelined FMA
// unit always has work), 4*PEAK_ITERS steps each, on scalars or on vectors of PEAK_VEC lanes
// (CPUs reach their SIMD width only with explicit vectors), and writes their sum, so that no
// chain is dead code. The chains contract towards b/(1-a) (a in (0,1)), so no value
// overflows or becomes subnormal whatever the length; a, b and the lane offsets are
// arguments, so the compiler cannot fold the chains. Each output element depends only on
// gid & 255 and its lane, which lets the host check every element against the
// 256*PEAK_VEC chains it computes itself. ceiling_copy is the copy of the stream family, one
// element per work-item: the better of it and the API's buffer copy is the bandwidth
// ceiling.
//
// Arguments:
//   ceiling_peak (out, lanes, a, b)   out: PEAK_VEC elements per work-item; lanes: PEAK_VEC
//                                     start offsets; a in (0,1), b: the chains' x = a*x + b
//   ceiling_copy (c, a, n)            c[i] = a[i] for i < n
//
// Tunables (-D, part of the cache key):
//   ELEM        element type of ceiling_peak and ceiling_copy              default float
//   PEAK_ITERS  loop trips of ceiling_peak (4 steps of 8 chains each)      default 512
//   PEAK_VEC    lanes per work-item of ceiling_peak: 1, 2, 4, 8 or 16      default 1
//               (above 1 only on OpenCL: CUDA's vector types have no operators)
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
// Launch: 1D. ceiling_peak: any work-group size, global = work-items; ceiling_copy: global
//   a multiple of the work-group size, at least n.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef PEAK_ITERS
#define PEAK_ITERS 512
#endif
#ifndef PEAK_VEC
#define PEAK_VEC 1
#endif
#if PEAK_VEC > 1
#define PEAK_CAT_(t, n) t##n
#define PEAK_CAT(t, n) PEAK_CAT_(t, n)
#define VT PEAK_CAT(ELEM, PEAK_VEC)
#else
#define VT ELEM
#endif
#define MAD8 \
    x0 = mad(x0, a, b); x1 = mad(x1, a, b); x2 = mad(x2, a, b); x3 = mad(x3, a, b); \
    x4 = mad(x4, a, b); x5 = mad(x5, a, b); x6 = mad(x6, a, b); x7 = mad(x7, a, b);

__kernel void ceiling_peak(__global ELEM *out, __global const ELEM *lanes, ELEM a_, ELEM b_) {
    int gid = (int)get_global_id(0);
    ELEM start = (ELEM)2.0f + (ELEM)(gid & 255) * (ELEM)0.0078125f;
#if PEAK_VEC > 1
    VT a = (VT)(a_), b = (VT)(b_);
    VT x0 = PEAK_CAT(vload, PEAK_VEC)(0, lanes) + (VT)(start);
#else
    VT a = a_, b = b_;
    VT x0 = lanes[0] + start;
#endif
    VT x1 = x0 + (ELEM)0.25f, x2 = x0 + (ELEM)0.5f, x3 = x0 + (ELEM)0.75f;
    VT x4 = x0 + (ELEM)1.0f, x5 = x0 + (ELEM)1.25f, x6 = x0 + (ELEM)1.5f, x7 = x0 + (ELEM)1.75f;
    for (int i = 0; i < PEAK_ITERS; i++) {
        MAD8 MAD8 MAD8 MAD8
    }
    VT s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
#if PEAK_VEC > 1
    PEAK_CAT(vstore, PEAK_VEC)(s, gid, out);
#else
    out[gid] = s;
#endif
}

__kernel void ceiling_copy(__global ELEM *c, __global const ELEM *a, int n) {
    for (int i = (int)get_global_id(0); i < n; i += (int)get_global_size(0)) {
        c[i] = a[i];
    }
}
