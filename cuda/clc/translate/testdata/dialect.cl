// dialect.cl: every construct of the suite's OpenCL C dialect that the CUDA prelude maps,
// in kernels that compile with an OpenCL compiler as they are and with a CUDA compiler
// after the prelude. The prelude tests compile it both ways (clang -x cl, clang -x cuda);
// nothing launches it.
//
// Tunables: WG (work-group size, default 64), T (float or double, default float).

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef WG
#define WG 64
#endif
#ifndef T
#define T float
#endif

// Vector literals differ between the two languages: kernels write make_float4.
#ifndef PRISM_CUDA
#define make_float2(a, b) ((float2)((a), (b)))
#define make_float4(a, b, c, d) ((float4)((a), (b), (c), (d)))
#endif

__constant float weights[4] = {0.125f, 0.25f, 0.5f, 0.125f};

// A plain helper function: a device function under CUDA (-default-device).
inline T twice(T x) { return x + x; }

float atomic_add_float(volatile __global float *p, float v) {
    uint old = as_uint(*p);
    for (;;) {
        uint assumed = old;
        old = atomic_cmpxchg((volatile __global uint *)p, assumed, as_uint(as_float(assumed) + v));
        if (old == assumed) return as_float(old);
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void dialect_local(__global T *out, __global const T *in, const int n) {
    __local T tile[WG];
    const int lid = (int)get_local_id(0);
    const int gid = (int)get_global_id(0);
    tile[lid] = gid < n ? in[gid] : (T)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    T acc = 0;
    for (int i = 0; i < (int)get_local_size(0); i++) acc += tile[i];
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    if (gid < n) out[gid] = twice(acc) + (T)get_group_id(0) + (T)get_num_groups(0) + (T)get_global_size(0);
}

__kernel void dialect_math(__global float *f, __global T *d, const int n) {
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    float x = f[i];
    f[i] = mad(x, 2.0f, 1.0f) + fma(x, x, x) + min(x, 1.0f) + max(x, 0.0f) + clamp(x, -1.0f, 1.0f)
         + sqrt(fabs(x)) + rsqrt(1.0f + x * x) + exp(x) + exp2(x) + log(1.0f + x * x) + log2(2.0f)
         + pow(fabs(x), 1.5f) + sin(x) + cos(x) + tan(x) + floor(x) + ceil(x) + round(x) + trunc(x)
         + fmin(x, 2.0f) + fmax(x, -2.0f) + fmod(x, 3.0f) + atan2(x, 1.0f) + hypot(x, 1.0f) + mix(x, 1.0f, 0.5f)
         + native_exp(x) + native_log(1.0f + x * x) + native_sqrt(fabs(x)) + native_recip(1.0f + x * x)
         + native_divide(x, 3.0f) + native_sin(x) + native_cos(x) + native_powr(2.0f, x) + native_rsqrt(2.0f)
         + weights[i & 3] + (isnan(x) ? 1.0f : 0.0f) + (isinf(x) ? 1.0f : 0.0f) + copysign(1.0f, x) + sign(x)
         + (float)convert_int(x) + as_float(as_uint(x)) + FLT_EPSILON + M_PI_F + (x > FLT_MAX ? INFINITY : 0.0f);
    T y = d[i];
    d[i] = mad(y, (T)2, (T)1) + fma(y, y, y) + min(y, (T)1) + max(y, (T)0) + clamp(y, (T)-1, (T)1)
         + sqrt(fabs(y)) + exp(y) + log((T)1 + y * y) + pow(fabs(y), (T)1.5) + floor(y) + ceil(y);
}

__kernel void dialect_int(__global int *a, __global uint *u, const int n) {
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    int v = a[i];
    uint w = u[i];
    a[i] = min(v, 7) + max(v, -7) + clamp(v, -3, 3) + (int)abs(v) + mul24(v, 3) + mad24(v, 3, 1)
         + popcount(v) + clz(v) + mul_hi(v, v) + convert_int(1.5f) + as_int(as_float(v)) + INT_MAX / 2;
    u[i] = min(w, 7u) + max(w, 3u) + clamp(w, 1u, 9u) + mul24(w, 3u) + popcount(w) + clz(w) + mul_hi(w, w)
         + (uint)(ulong)w + (uint)(uchar)w + (uint)(ushort)w + UINT_MAX / 2u;
}

__kernel void dialect_atomics(__global int *counts, __global uint *ucounts, __global float *sum,
                              __global const int *keys, const int n) {
    __local int hist[16];
    const int lid = (int)get_local_id(0);
    if (lid < 16) hist[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int i = (int)get_global_id(0);
    if (i < n) {
        const int k = keys[i] & 15;
        atomic_inc(&hist[k]);
        atomic_add(&counts[k], 1);
        atomic_sub(&counts[16], 1);
        atomic_max(&counts[17], keys[i]);
        atomic_min(&counts[18], keys[i]);
        atomic_xchg(&counts[19], keys[i]);
        atomic_cmpxchg(&counts[20], 0, keys[i]);
        atomic_and(&counts[21], keys[i]);
        atomic_or(&counts[22], keys[i]);
        atomic_xor(&counts[23], keys[i]);
        atomic_dec(&counts[24]);
        atomic_add(&ucounts[k], 1u);
        atomic_max(&ucounts[16], (uint)keys[i]);
        atomic_min(&ucounts[17], (uint)keys[i]);
        atomic_xchg(&sum[1], (float)keys[i]);
        atomic_add_float(&sum[0], (float)keys[i]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 16) atomic_add(&counts[32 + lid], hist[lid]);
}

__kernel void dialect_vectors(__global float *out, __global const float *in, const int n4) {
    const int i = (int)get_global_id(0);
    if (i >= n4) return;
    float4 v = vload4(i, in);
    float4 w = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    v = v * w + 2.0f * v - w / 2.0f;
    v += w;
    v *= 0.5f;
    v = -v;
    float2 p = make_float2(v.x, v.y) + make_float2(v.z, v.w);
    v.x += dot(p, p) + dot(v, w);
    vstore4(v, i, out);
    vstore2(p * 2.0f, i, out + 4 * n4);
}
