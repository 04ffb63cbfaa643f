// select.cl: select and bitselect on float and integer vectors and scalars (of a vector
// condition, the most significant bit of each component picks the second operand; of a
// scalar condition, any nonzero value), and any and all.
//
// select_float: for x = a[i], y = b[i] (float4s of n, in [-1, 1)) and k = c[i] (an int4, in
// [-64, 64)): pick[i] = select(x, y, k) (y's component where k's is negative), great[i] =
// select(y, x, isgreater(x, y)) (the larger), bits[i] = bitselect(x, y, as_float4(k)) (the
// bits of y where k's bits are set, of x elsewhere: for k >= 0 the low 6 bits of the
// mantissa come from y, for k < 0 all but the low bits), one[i] = select(x.x, y.x, k.x)
// (y.x where k.x != 0), flags[i] = any(k < 0) + 2 * all(x > -0.5f) + 4 * any(isless(x, y)).
// run: --kernel select_float --global 1024 --arg pick=out:float32:4096 --arg great=out:float32:4096 --arg bits=out:float32:4096 --arg one=out:float32:1024 --arg flags=out:int32:1024 --arg buf:float32:4096:random --arg buf:float32:4096:random --arg buf:int32:4096:random --arg scalar:int32:1000
//
// select_int: for x = a[i] and y = b[i] (int8s of n, in [-64, 64)): lo[i] = select(x, y, x >
// y) (the smaller), mixed[i] = bitselect(x, y, (int8)(0x0f0f0f0f)) (y's bits under the
// mask, x's elsewhere), one[i] = select(x.s0, y.s0, x.s1 & 1) (y.s0 where x.s1 is odd),
// bytes[i] = select(u, v, convert_char8(x)) for the uchar8s u = convert_uchar8(x + 64) and
// v = convert_uchar8(y + 64) (v's component where x's is negative).
// run: --kernel select_int --global 512 --arg lo=out:int32:4096 --arg mixed=out:int32:4096 --arg one=out:int32:512 --arg bytes=out:uint8:4096 --arg buf:int32:4096:random --arg buf:int32:4096:random --arg scalar:int32:500
__kernel void select_float(__global float4 *pick, __global float4 *great, __global float4 *bits, __global float *one,
                           __global int *flags, __global const float4 *a, __global const float4 *b,
                           __global const int4 *c, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float4 x = a[i], y = b[i];
    int4 k = c[i];
    pick[i] = select(x, y, k);
    great[i] = select(y, x, isgreater(x, y));
    bits[i] = bitselect(x, y, as_float4(k));
    one[i] = select(x.x, y.x, k.x);
    flags[i] = any(k < 0) + 2 * all(x > -0.5f) + 4 * any(isless(x, y));
}

__kernel void select_int(__global int8 *lo, __global int8 *mixed, __global int *one, __global uchar8 *bytes,
                         __global const int8 *a, __global const int8 *b, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    int8 x = a[i], y = b[i];
    lo[i] = select(x, y, x > y);
    mixed[i] = bitselect(x, y, (int8)(0x0f0f0f0f));
    one[i] = select(x.s0, y.s0, x.s1 & 1);
    uchar8 u = convert_uchar8(x + 64), v = convert_uchar8(y + 64);
    bytes[i] = select(u, v, convert_char8(x));
}
