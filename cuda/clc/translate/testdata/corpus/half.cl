// half.cl: half as OpenCL C 1.2 has it without cl_khr_fp16, a storage type behind
// pointers: vload_half, vload_halfN and vloada_halfN, vstore_half and vstore_halfN in each
// rounding mode, and vstorea_halfN.
//
// half_store: for x = in[i] (a float of n, in [-1, 1)), f = x * big and g = x * tiny (big
// = 70000: f is beyond the largest half, 65504, where |x| > 0.9357; tiny = 1e-4: g is mostly
// a subnormal half, below 2^-14): rte[2i .. 2i + 1] = (f, g) stored by vstore_half2 (to
// nearest even: infinity beyond 65520), and rtz, rtp and rtn the same by vstore_half2_rtz
// (toward zero: 65504 at most), vstore_half2_rtp (toward +infinity) and vstore_half2_rtn
// (toward -infinity); plain[i] = x by vstore_half.
// run: --kernel half_store --global 1024 --arg rte=out:float16:2048 --arg rtz=out:float16:2048 --arg rtp=out:float16:2048 --arg rtn=out:float16:2048 --arg plain=out:float16:1024 --arg buf:float32:1024:random --arg scalar:float32:70000 --arg scalar:float32:1e-4 --arg scalar:int32:1000
//
// half_load: for the halves h of in (4 per item i of n, in [-1, 1)): sum[i] = vload_half(4i,
// in) + vload_half(4i + 3, in); twice[i] = vload_half4(i, in) * 2.0f + 1.0f (a float4,
// exact); tripled[4i .. 4i + 3] = vload_half4(i, in) * 3.0f stored by vstore_half4_rtn;
// tenth[4i .. 4i + 2] = vloada_half3(i, in) * 0.1f (in[4i .. 4i + 2]) stored by
// vstorea_half3_rtp (which leaves tenth[4i + 3] alone: 0).
// run: --kernel half_load --global 1024 --arg sum=out:float32:1024 --arg twice=out:float32:4096 --arg tripled=out:float16:4096 --arg tenth=out:float16:4096 --arg buf:float16:4096:random --arg scalar:int32:1000
__kernel void half_store(__global half *rte, __global half *rtz, __global half *rtp, __global half *rtn,
                         __global half *plain, __global const float *in, float big, float tiny, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float x = in[i];
    float2 v = (float2)(x * big, x * tiny);
    vstore_half2(v, i, rte);
    vstore_half2_rtz(v, i, rtz);
    vstore_half2_rtp(v, i, rtp);
    vstore_half2_rtn(v, i, rtn);
    vstore_half(x, i, plain);
}

__kernel void half_load(__global float *sum, __global float4 *twice, __global half *tripled, __global half *tenth,
                        __global const half *in, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    sum[i] = vload_half(4 * i, in) + vload_half(4 * i + 3, in);
    float4 v = vload_half4(i, in);
    twice[i] = v * 2.0f + 1.0f;
    vstore_half4_rtn(v * 3.0f, i, tripled);
    vstorea_half3_rtp(vloada_half3(i, in) * 0.1f, i, tenth);
}
