// vector_ops.cl: component-wise arithmetic, bitwise, shift, comparison and logical
// operators on vectors, with vector and scalar operands.
//
// vector_ops: for a = x[i] and b = y[i] (int4s of n), arith[i] = (a + b) * 2 - a / (b | 1)
// + a % 3 + (a << 1) - (b >> 33) (shift counts modulo 32) + (~a & b) ^ 5;
// cmp[i] = (a < b) + (a == b) * 2 - (a >= b && b != 0) + !a, each comparison -1 where
// true and 0 where false (so a component is -1 where a < b, ...); f[i] = the float4
// p[i] * 0.5f + 1 - p[i] / 4, and fc[i] = p[i] > 0.0f as an int4 of -1/0.
// run: --kernel vector_ops --global 1024 --arg arith=out:int32:4096 --arg cmp=out:int32:4096 --arg f=out:float32:4096 --arg fc=out:int32:4096 --arg buf:int32:4096:random --arg buf:int32:4096:random --arg buf:float32:4096:random --arg scalar:int32:1000
__kernel void vector_ops(__global int4 *arith, __global int4 *cmp, __global float4 *f, __global int4 *fc,
                         __global const int4 *x, __global const int4 *y, __global const float4 *p, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    int4 a = x[i], b = y[i];
    arith[i] = (a + b) * 2 - a / (b | 1) + a % 3 + (a << 1) - (b >> 33) + ((~a & b) ^ 5);
    cmp[i] = (a < b) + (a == b) * 2 - (a >= b && b != 0) + !a;
    float4 v = p[i];
    v = v * 0.5f + 1.0f - v / 4.0f;
    f[i] = v;
    fc[i] = p[i] > 0.0f;
    int4 m = -a;
    m -= b;
    arith[i] += m - m;
}
