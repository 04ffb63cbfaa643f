// swizzle_read.cl: swizzles of rvalues: .xyzw names, .s0-.sF (and .S), repeated
// components.
//
// swizzle_read: for v = in[i] (a float4 of n), out[i] = v.wzyx + (float4)(v.xy, v.s32)
// + v.xxxx, that is (w+x+x, z+y+x, y+w+x, x+z+x); sums[i] = v.s0 + v.S3 + v.zw.y, that is
// x + 2w.
// run: --kernel swizzle_read --global 1024 --arg out:float32:4096 --arg sums=out:float32:1024 --arg buf:float32:4096:random --arg scalar:int32:1000
__kernel void swizzle_read(__global float4 *out, __global float *sums, __global const float4 *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float4 v = in[i];
    out[i] = v.wzyx + (float4)(v.xy, v.s32) + v.xxxx;
    sums[i] = v.s0 + v.S3 + v.zw.y;
}
