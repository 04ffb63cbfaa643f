// constant_table.cl: a file-scope __constant table of vectors, initialized with vector
// literals (a splat among them), read by a kernel.
//
// constant_table: out[i] = coeffs[i % 3] * in[i] for in[i] a float4 of n, with coeffs
// (1, 2, 3, 4), (0.5, 0.5, 0.5, 0.5) and (-1, 0, 1, 0); idx[i] = lanes.s2, that is 2.
// run: --kernel constant_table --global 1024 --arg out:float32:4096 --arg out:int32:1024 --arg buf:float32:4096:random --arg scalar:int32:1000
__constant float4 coeffs[3] = {(float4)(1.0f, 2.0f, 3.0f, 4.0f), (float4)(0.5f), (float4)(-1, 0, 1, 0)};
__constant int4 lanes = (int4)(0, 1, 2, 3);

__kernel void constant_table(__global float4 *out, __global int *idx, __global const float4 *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    out[i] = coeffs[i % 3] * in[i];
    idx[i] = lanes.s2;
}
