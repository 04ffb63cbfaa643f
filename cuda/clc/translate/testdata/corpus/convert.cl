// convert.cl: convert_<type> with saturation and rounding modes, scalars and vectors.
//
// convert: for v = in[i] (a float4 of n): r[i] = convert_int4_rte(v) (to nearest even),
// z[i] = convert_int4_rtz(v), u[i] = convert_int4_rtp(v) (up), d[i] = convert_int4_rtn(v)
// (down); s[i] = convert_uchar4_sat_rte(v * 100) (clamped to 0..255, NaN to 0);
// h[i] = convert_short_sat(v.x * 100000) (clamped to -32768..32767); f[i] =
// convert_float4(convert_int4(v)) + convert_float_rtz(in[i].y) (the integer part of each
// component, plus y).
// run: --kernel convert --global 1024 --arg r=out:int32:4096 --arg z=out:int32:4096 --arg u=out:int32:4096 --arg d=out:int32:4096 --arg s=out:uint8:4096 --arg h=out:int16:1024 --arg f=out:float32:4096 --arg buf:float32:4096:random --arg scalar:int32:1000
__kernel void convert(__global int4 *r, __global int4 *z, __global int4 *u, __global int4 *d,
                      __global uchar4 *s, __global short *h, __global float4 *f, __global const float4 *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float4 v = in[i];
    r[i] = convert_int4_rte(v);
    z[i] = convert_int4_rtz(v);
    u[i] = convert_int4_rtp(v);
    d[i] = convert_int4_rtn(v);
    s[i] = convert_uchar4_sat_rte(v * 100.0f);
    h[i] = convert_short_sat(v.x * 100000.0f);
    f[i] = convert_float4(convert_int4(v)) + convert_float_rtz(v.y);
    ulong big = (ulong)i << 40;
    f[i].x += convert_float_rtn(big) - convert_float_rtp(big) + convert_float(convert_int_sat(big));
}
