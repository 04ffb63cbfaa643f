// local_args.cl: __local pointer parameters sized at launch (two, of different types), a
// __constant pointer parameter, and OpenCL C's unprefixed qualifiers kernel, global,
// local and constant.
//
// local_args: work-groups of 32 items; item i (of n, the rest idle but at the barriers)
// puts v = x[i] * w[i % 4] in fs and v > 0 in is (local float and int arrays of 32, given
// at launch), then the group sums both by halving; its first item writes the float sum
// to sums[group] and the count to counts[group]. With x = 0, 1, 2, ... and w = 0, 1, 2, 3
// every sum is an integer below 2^24, exact in float.
// run: --kernel local_args --global 4096 --local 32 --arg buf:float32:4096:range --arg buf:float32:4:range --arg sums=out:float32:128 --arg counts=out:int32:128 --arg local:float32:32 --arg local:int32:32 --arg scalar:int32:4000
kernel void local_args(global const float *x, constant float *w, global float *sums, global int *counts,
                       local float *fs, local int *is, int n) {
    int i = get_global_id(0), l = get_local_id(0);
    float v = i < n ? x[i] * w[i % 4] : 0.0f;
    fs[l] = v;
    is[l] = v > 0.0f;
    for (int s = get_local_size(0) / 2; s > 0; s /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < s) {
            fs[l] += fs[l + s];
            is[l] += is[l + s];
        }
    }
    if (l == 0) {
        sums[get_group_id(0)] = fs[0];
        counts[get_group_id(0)] = is[0];
    }
}
