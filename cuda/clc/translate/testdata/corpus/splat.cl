// splat.cl: vector literals of one scalar, and casts of a scalar to a vector type, put the
// scalar in every component.
//
// splat: out[i] = (k, k, k, k) + (float4)(in[i]) and iout[i] = (int8)(i) * 2 + (int8)3,
// that is every component of out[i] is k + in[i] and of iout[i] 2i + 3; out holds n
// float4s, iout n int8s.
// run: --kernel splat --global 1024 --arg out:float32:4096 --arg iout=out:int32:8192 --arg buf:float32:1024:random --arg scalar:float32:2.5 --arg scalar:int32:1000
__kernel void splat(__global float4 *out, __global int8 *iout, __global const float *in, float k, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    out[i] = (float4)(k) + (float4)(in[i]);
    iout[i] = (int8)(i) * 2 + (int8)3;
}
