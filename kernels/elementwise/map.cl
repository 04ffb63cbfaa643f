// map.cl: element-wise maps (axpy, axpby, exp, relu, sigmoid, fma).
//
// Purpose: memory-bound element-wise kernels, one or more inputs and one output of n
// elements: the operations a framework fuses or launches between heavier kernels, with
// their transcendental cost (exp, sigmoid) next to pure traffic (relu, axpy).
//
// Arguments (n elements of type ELEM; out may be the same buffer as an input: every item
// reads its elements before it writes them):
//   map_axpy   (out, x, y, a, n)       out[i] = a * x[i] + y[i]
//   map_axpby  (out, x, y, a, b, n)    out[i] = a * x[i] + b * y[i]
//   map_exp    (out, x, n)             out[i] = exp(x[i])
//   map_relu   (out, x, n)             out[i] = x[i] > 0 ? x[i] : 0
//   map_sigmoid(out, x, n)             out[i] = 1 / (1 + exp(-x[i]))
//   map_fma    (out, a, b, c, n)       out[i] = fma(a[i], b[i], c[i])
//
// Tunables (-D, part of the cache key):
//   ELEM  element type                           default float
//   WG    work-group size                        default 256
//   VEC   elements per work-item: 1, 2 or 4      default 4 (float), 2 (double: the CUDA
//         prelude has double2 but no double4)
//         Work-item g handles elements VEC*g .. VEC*g+VEC-1 with one vloadVEC per input and
//         one vstoreVEC when all of them are below n, else element by element (the tail).
//         Measured on PoCL 3.1 (2026-11-21, 2 shared cores, 4M floats / 2M doubles, min of
//         50 runs, POCL_MAX_PTHREAD_COUNT=1 because the machine was loaded): VEC=4 against
//         VEC=1 float axpy 2.96/3.13 ms, exp 7.01/7.75, relu 2.23/2.32, fma 3.70/3.79 (a
//         second round alike): VEC=4 is 3-10% faster; VEC=2 float is slower than both (exp
//         2.3x). double axpy VEC=4/2/1: 2.98/3.04/3.10 ms, so double uses 2. With both
//         cores the spread between rounds exceeded the difference. NVIDIA: not measured
//         here; on CUDA the prelude makes vload4 one 16-byte load where aligned.
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
// Launch: 1D, local size WG, global RoundUp(ceil(n / VEC), WG); items past the end return
// (no barrier in this file). n <= 2^31 - 8 so that VEC*g + VEC cannot overflow an int.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef WG
#define WG 256
#endif
#ifndef VEC
#ifdef PRISM_FP64
#define VEC 2
#else
#define VEC 4
#endif
#endif

#define MAP_CAT_(a, b) a##b
#define MAP_CAT(a, b) MAP_CAT_(a, b)

#if VEC == 2
#define VTYPE MAP_CAT(ELEM, 2)
#define VLOAD vload2
#define VSTORE vstore2
#define EACH1(r, F, v) do { r.x = F(v.x); r.y = F(v.y); } while (0)
#define EACH3(r, F, u, v, w) do { r.x = F(u.x, v.x, w.x); r.y = F(u.y, v.y, w.y); } while (0)
#elif VEC == 4
#define VTYPE MAP_CAT(ELEM, 4)
#define VLOAD vload4
#define VSTORE vstore4
#define EACH1(r, F, v) do { r.x = F(v.x); r.y = F(v.y); r.z = F(v.z); r.w = F(v.w); } while (0)
#define EACH3(r, F, u, v, w) \
    do { r.x = F(u.x, v.x, w.x); r.y = F(u.y, v.y, w.y); r.z = F(u.z, v.z, w.z); r.w = F(u.w, v.w, w.w); } while (0)
#elif VEC != 1
#error "VEC must be 1, 2 or 4"
#endif

// The element functions.
#define F_EXP(x) exp(x)
#define F_RELU(x) ((x) > (ELEM)0 ? (x) : (ELEM)0)
#define F_SIGMOID(x) ((ELEM)1 / ((ELEM)1 + exp(-(x))))
#define F_FMA(a, b, c) fma(a, b, c)

// MAP_BEGIN sets i to the item's first element and returns from items past the end.
#define MAP_BEGIN                                 \
    int g = (int)get_global_id(0);                \
    if (n < 1 || g > (n - 1) / VEC) return;       \
    int i = g * VEC;

// MAP1_BODY is the body of a kernel (out, x, n) that sets out[i] = F(x[i]). (The kernels
// are written out, not made by a macro, so that tools that look for "__kernel void name"
// find them.)
#if VEC == 1
#define MAP1_BODY(F)                                                              \
    MAP_BEGIN                                                                     \
    out[i] = F(x[i]);
#else
#define MAP1_BODY(F)                                                              \
    MAP_BEGIN                                                                     \
    if (i <= n - VEC) {                                                           \
        VTYPE v = VLOAD(g, x);                                                    \
        VTYPE r = v;                                                              \
        EACH1(r, F, v);                                                           \
        VSTORE(r, g, out);                                                        \
        return;                                                                   \
    }                                                                             \
    for (int j = i; j < n; j++) out[j] = F(x[j]);
#endif

__kernel void map_exp(__global ELEM *out, __global const ELEM *x, int n) { MAP1_BODY(F_EXP) }

__kernel void map_relu(__global ELEM *out, __global const ELEM *x, int n) { MAP1_BODY(F_RELU) }

__kernel void map_sigmoid(__global ELEM *out, __global const ELEM *x, int n) { MAP1_BODY(F_SIGMOID) }

__kernel void map_axpy(__global ELEM *out, __global const ELEM *x, __global const ELEM *y, ELEM a, int n) {
    MAP_BEGIN
#if VEC > 1
    if (i <= n - VEC) {
        VSTORE(a * VLOAD(g, x) + VLOAD(g, y), g, out);
        return;
    }
    for (int j = i; j < n; j++) out[j] = a * x[j] + y[j];
#else
    out[i] = a * x[i] + y[i];
#endif
}

__kernel void map_axpby(__global ELEM *out, __global const ELEM *x, __global const ELEM *y, ELEM a, ELEM b, int n) {
    MAP_BEGIN
#if VEC > 1
    if (i <= n - VEC) {
        VSTORE(a * VLOAD(g, x) + b * VLOAD(g, y), g, out);
        return;
    }
    for (int j = i; j < n; j++) out[j] = a * x[j] + b * y[j];
#else
    out[i] = a * x[i] + b * y[i];
#endif
}

__kernel void map_fma(__global ELEM *out, __global const ELEM *a, __global const ELEM *b, __global const ELEM *c, int n) {
    MAP_BEGIN
#if VEC > 1
    if (i <= n - VEC) {
        VTYPE u = VLOAD(g, a), v = VLOAD(g, b), w = VLOAD(g, c);
        VTYPE r = u;
        EACH3(r, F_FMA, u, v, w);
        VSTORE(r, g, out);
        return;
    }
    for (int j = i; j < n; j++) out[j] = F_FMA(a[j], b[j], c[j]);
#else
    out[i] = F_FMA(a[i], b[i], c[i]);
#endif
}
