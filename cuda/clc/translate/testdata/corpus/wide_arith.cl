// wide_arith.cl: float8 and float16 arithmetic, with vector and scalar operands.
//
// wide_arith: for a = x[i] and b = y[i] (float8s of n), out8[i] = a * b + 2 - a / 4; for
// c = z[i] (a float16), out16[i] = (c + c) * c.s0 + (float16)(3.0f), then its components
// 8 to 15 negated; dot[i] = the sum of the components of a * a. (No result cancels, so
// that a multiply-add fused or not moves it by an ulp or two only.)
// run: --kernel wide_arith --global 1024 --arg out8=out:float32:8192 --arg out16=out:float32:16384 --arg dot=out:float32:1024 --arg buf:float32:8192:random --arg buf:float32:8192:random --arg buf:float32:16384:random --arg scalar:int32:1000
__kernel void wide_arith(__global float8 *out8, __global float16 *out16, __global float *dot,
                         __global const float8 *x, __global const float8 *y, __global const float16 *z, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float8 a = x[i], b = y[i];
    out8[i] = a * b + 2.0f - a / 4.0f;
    float16 c = z[i];
    float16 r = (c + c) * c.s0 + (float16)(3.0f);
    r.hi = -r.hi;
    out16[i] = r;
    float8 p = a * a;
    float4 s = p.lo + p.hi;
    dot[i] = s.x + s.y + s.z + s.w;
}
