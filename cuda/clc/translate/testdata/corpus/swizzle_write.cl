// swizzle_write.cl: swizzles as lvalues, of one component and of several, with = and
// compound assignment.
//
// swizzle_write: for v = in[i] (a float4 of n), v.xy = v.yx swaps x and y, v.s3 = 7,
// v.zw += (1, 1) and v.w++, so out[i] = (y, x, z + 1, 9); w[i] = (0, 1, ..., 7) with its
// components 4 to 7 then set to (int)in[i].x (an int8 of n, w.s4567 = (int4)(x)).
// run: --kernel swizzle_write --global 1024 --arg out:float32:4096 --arg w=out:int32:8192 --arg buf:float32:4096:random --arg scalar:int32:1000
__kernel void swizzle_write(__global float4 *out, __global int8 *w, __global const float4 *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float4 v = in[i];
    v.xy = v.yx;
    v.s3 = 7.0f;
    v.zw += (float2)(1.0f, 1.0f);
    v.w++;
    out[i] = v;
    int8 t = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
    t.s4567 = (int4)((int)in[i].x);
    w[i] = t;
}
