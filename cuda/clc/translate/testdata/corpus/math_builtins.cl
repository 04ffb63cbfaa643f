// math_builtins.cl: the vector forms of the math, common, integer and geometric built-in
// functions, with the vector-and-scalar mixes OpenCL C allows.
//
// vector_math: for x = in[i] (a float4 of n, components in [-1, 1)) and a = fabs(x) + 0.5f,
// component-wise: root[i] = sqrt(a), rroot[i] = rsqrt(a), expo[i] = exp(x), loga[i] =
// log(a), sine[i] = sin(x), cosine[i] = cos(x), power[i] = pow(a, x); common[i] (a float16)
// = (clamp(x, -0.5f, 0.5f), step(0.0f, x) + sign(x), fmin(x, 0.25f) + fmax(x,
// (float4)(-0.25f)), mix(a, 2.0f * a, 0.25f)), the last 1.25 a.
// run: --kernel vector_math --global 1024 --arg root=out:float32:4096 --arg rroot=out:float32:4096 --arg expo=out:float32:4096 --arg loga=out:float32:4096 --arg sine=out:float32:4096 --arg cosine=out:float32:4096 --arg power=out:float32:4096 --arg common=out:float32:16384 --arg buf:float32:4096:random --arg scalar:int32:1000
//
// geometry: for p = fabs(a[i]) + 0.5f and q = fabs(b[i]) + 0.5f (float4s of n, positive, so
// that no sum cancels): dotted[i] = dot(p, q), len[i] = length(p), dist[i] = distance(p, q),
// unit[i] = normalize(p); for the float3s u = convert_float3(vload3(2i, k)) and v =
// convert_float3(vload3(2i + 1, k)) (integers in [-64, 64): every product and sum is exact),
// crossed[3i .. 3i + 2] = cross(u, v) and flat[i] = dot(u, v).
// run: --kernel geometry --global 1024 --arg dotted=out:float32:1024 --arg len=out:float32:1024 --arg dist=out:float32:1024 --arg unit=out:float32:4096 --arg crossed=out:float32:3072 --arg flat=out:float32:1024 --arg buf:float32:4096:random --arg buf:float32:4096:random --arg buf:int32:6144:random --arg scalar:int32:1000
//
// integer_math: for x = a[i] and y = b[i] (int4s of n, in [-64, 64)), X = x * 2^25 and Y =
// y * 2^25: out[12i .. 12i + 11] (int4s) = abs(x), min(x, y), max(x, 3), clamp(x, -10, 10),
// abs_diff(x, y), add_sat(X, Y) and sub_sat(X, Y) (clamped to INT_MIN..INT_MAX), hadd(x,
// y) ((x + y) >> 1), rhadd(x, y) ((x + y + 1) >> 1), rotate(x, y) (left by y mod 32),
// mul_hi(X, y * 12345679) (the high 32 bits of the 64-bit product) and popcount(x) +
// (clz(x) << 6).
// run: --kernel integer_math --global 256 --arg out:int32:12288 --arg buf:int32:1024:random --arg buf:int32:1024:random --arg scalar:int32:250
//
// char_sat: for x = a[i] and y = b[i] (char16s of n, in [-64, 64)): sum[i] = add_sat(x, y +
// y) and diff[i] = sub_sat(x, y + y) (clamped to -128..127), mag[i] = abs(x) + abs_diff(x,
// y) (a uchar16), avg[i] = rhadd(x, y).
// run: --kernel char_sat --global 256 --arg sum=out:int8:4096 --arg diff=out:int8:4096 --arg mag=out:uint8:4096 --arg avg=out:int8:4096 --arg buf:int8:4096:random --arg buf:int8:4096:random --arg scalar:int32:250
__kernel void vector_math(__global float4 *root, __global float4 *rroot, __global float4 *expo, __global float4 *loga,
                          __global float4 *sine, __global float4 *cosine, __global float4 *power, __global float16 *common,
                          __global const float4 *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float4 x = in[i];
    float4 a = fabs(x) + 0.5f;
    root[i] = sqrt(a);
    rroot[i] = rsqrt(a);
    expo[i] = exp(x);
    loga[i] = log(a);
    sine[i] = sin(x);
    cosine[i] = cos(x);
    power[i] = pow(a, x);
    common[i] = (float16)(clamp(x, -0.5f, 0.5f), step(0.0f, x) + sign(x), fmin(x, 0.25f) + fmax(x, (float4)(-0.25f)),
                          mix(a, 2.0f * a, 0.25f));
}

__kernel void geometry(__global float *dotted, __global float *len, __global float *dist, __global float4 *unit,
                       __global float *crossed, __global float *flat, __global const float4 *a, __global const float4 *b,
                       __global const int *k, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float4 p = fabs(a[i]) + 0.5f, q = fabs(b[i]) + 0.5f;
    dotted[i] = dot(p, q);
    len[i] = length(p);
    dist[i] = distance(p, q);
    unit[i] = normalize(p);
    float3 u = convert_float3(vload3(2 * i, k)), v = convert_float3(vload3(2 * i + 1, k));
    vstore3(cross(u, v), i, crossed);
    flat[i] = dot(u, v);
}

__kernel void integer_math(__global int *out, __global const int4 *a, __global const int4 *b, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    int4 x = a[i], y = b[i];
    int4 X = x * 33554432, Y = y * 33554432;
    __global int *o = out + 48 * i;
    vstore4(as_int4(abs(x)), 0, o);
    vstore4(min(x, y), 1, o);
    vstore4(max(x, 3), 2, o);
    vstore4(clamp(x, -10, 10), 3, o);
    vstore4(as_int4(abs_diff(x, y)), 4, o);
    vstore4(add_sat(X, Y), 5, o);
    vstore4(sub_sat(X, Y), 6, o);
    vstore4(hadd(x, y), 7, o);
    vstore4(rhadd(x, y), 8, o);
    vstore4(rotate(x, y), 9, o);
    vstore4(mul_hi(X, y * 12345679), 10, o);
    vstore4(popcount(x) + (clz(x) << 6), 11, o);
}

__kernel void char_sat(__global char16 *sum, __global char16 *diff, __global uchar16 *mag, __global char16 *avg,
                       __global const char16 *a, __global const char16 *b, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    char16 x = a[i], y = b[i];
    sum[i] = add_sat(x, y + y);
    diff[i] = sub_sat(x, y + y);
    mag[i] = abs(x) + abs_diff(x, y);
    avg[i] = rhadd(x, y);
}
