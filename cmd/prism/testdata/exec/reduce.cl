// One sum per work-group: each group adds its get_local_size(0) elements of x in the
// __local scratch array, a tree of halvings, and writes the total to sums[group].
// SCALE, defined with -D SCALE=..., multiplies every sum (default 1).
#ifndef SCALE
#define SCALE 1
#endif

__kernel void block_sum(__global const float *x, __global float *sums, __local float *scratch)
{
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s /= 2) {
        if (l < s)
            scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        sums[get_group_id(0)] = scratch[0] * SCALE;
}
