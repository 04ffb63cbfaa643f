// vload_vstore.cl: vloadN and vstoreN for N = 2, 3, 4, 8 and 16, at element offsets that
// are and are not multiples of the vector's size.
//
// vload_vstore: item i (of n) loads vector i of each width from in (floats) and stores it,
// doubled, as vector i of the same width in out2, out3, out4, out8 and out16; and copies
// the floats in[1 + 3i .. 3 + 3i] (a float3 at an odd offset) to odd[3i .. 3i + 2].
// run: --kernel vload_vstore --global 1024 --arg out2=out:float32:2048 --arg out3=out:float32:3072 --arg out4=out:float32:4096 --arg out8=out:float32:8192 --arg out16=out:float32:16384 --arg odd=out:float32:3072 --arg buf:float32:16384:random --arg scalar:int32:1000
__kernel void vload_vstore(__global float *out2, __global float *out3, __global float *out4, __global float *out8,
                           __global float *out16, __global float *odd, __global const float *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    vstore2(vload2(i, in) * 2.0f, i, out2);
    vstore3(vload3(i, in) * 2.0f, i, out3);
    vstore4(vload4(i, in) * 2.0f, i, out4);
    vstore8(vload8(i, in) * 2.0f, i, out8);
    vstore16(vload16(i, in) * 2.0f, i, out16);
    vstore3(vload3(i, in + 1), i, odd);
}
