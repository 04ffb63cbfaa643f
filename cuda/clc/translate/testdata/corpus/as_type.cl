// as_type.cl: as_<type> bit reinterpretation of scalars and vectors of one size.
//
// as_type: bits[i] = as_uint4(v) for v = in[i] (a float4 of n): the IEEE bits of each
// component; back[i] = as_float(as_int(in[i].x) ^ 0x80000000), -in[i].x; bytes[i] =
// as_uchar4(as_uint(in[i].y)), in[i].y's bytes (little-endian); wide[i] = as_int8 of the
// float8 (v, v)'s bits.
// run: --kernel as_type --global 1024 --arg out:uint32:4096 --arg out:float32:1024 --arg out:uint8:4096 --arg out:int32:8192 --arg buf:float32:4096:random --arg scalar:int32:1000
__kernel void as_type(__global uint4 *bits, __global float *back, __global uchar4 *bytes, __global int8 *wide,
                      __global const float4 *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float4 v = in[i];
    bits[i] = as_uint4(v);
    back[i] = as_float(as_int(v.x) ^ (int)0x80000000);
    bytes[i] = as_uchar4(as_uint(v.y));
    wide[i] = as_int8((float8)(v, v));
}
