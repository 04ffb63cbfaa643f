// vector_literal.cl: vector literals of every component count and several component
// types, from scalars and from smaller vectors.
//
// literal_float4: out[i] = (a, a+1, a+2, a+3) with a = in[i], as a float4 (out holds n
// float4s); literal_mixed: out[i] = (v.x, v.y, a, b) for v = (in[2i], in[2i+1]),
// a = 10, b = 20; literal_wide: out8[i] = (0, 1, ..., 7) + i and out16[i] = (i, ..., i+15)
// as int8 and uchar16 (modulo 256).
// run: --kernel literal_float4 --global 1024 --arg out:float32:4096 --arg buf:float32:1024:random --arg scalar:int32:1000
// run: --kernel literal_mixed --global 1024 --arg out:float32:4096 --arg buf:float32:2048:random --arg scalar:int32:1000
// run: --kernel literal_wide --global 1024 --arg out8=out:int32:8192 --arg out16=out:uint8:16384 --arg scalar:int32:1000
__kernel void literal_float4(__global float4 *out, __global const float *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float a = in[i];
    out[i] = (float4)(a, a + 1.0f, a + 2.0f, a + 3.0f);
}

__kernel void literal_mixed(__global float4 *out, __global const float2 *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float2 v = in[i];
    out[i] = (float4)(v, 10.0f, 20.0f);
}

__kernel void literal_wide(__global int8 *out8, __global uchar16 *out16, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    out8[i] = (int8)(0, 1, 2, 3, 4, 5, 6, 7) + i;
    uchar c = (uchar)i;
    out16[i] = (uchar16)((uchar4)(c, c + 1, c + 2, c + 3), (uchar4)(c + 4, c + 5, c + 6, c + 7),
                         (uchar8)(c + 8, c + 9, c + 10, c + 11, c + 12, c + 13, c + 14, c + 15));
}
