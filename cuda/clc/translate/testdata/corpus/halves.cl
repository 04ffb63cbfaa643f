// halves.cl: .lo, .hi, .even and .odd, read and written, of 4-, 8- and 3-component
// vectors.
//
// halves: for v = in[i] (a float8 of n, components v0..v7), out[i] = (v.lo + v.hi,
// v.even - v.odd) as a float8: (v0+v4, v1+v5, v2+v6, v3+v7, v0-v1, v2-v3, v4-v5, v6-v7);
// q[i] = (v0, v1, v2, v3) with .hi then set to (v1, v0) and .odd scaled by 2: (v0, 2v1,
// v1, 2v0); t[i] = (v0, v1, v2).hi, the third component: v2.
// run: --kernel halves --global 1024 --arg out:float32:8192 --arg q=out:float32:4096 --arg t=out:float32:1024 --arg buf:float32:8192:random --arg scalar:int32:1000
__kernel void halves(__global float8 *out, __global float4 *q, __global float *t, __global const float8 *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float8 v = in[i];
    out[i] = (float8)(v.lo + v.hi, v.even - v.odd);
    float4 a = v.lo;
    a.hi = a.lo.yx;
    a.odd *= 2.0f;
    q[i] = a;
    float3 b = (float3)(v.s0, v.s1, v.s2);
    t[i] = b.hi.x;
}
