// Kernels with faults of their own, for the checks of prism exec: the guard bands, the
// child that contains a driver crash, and --check under Oclgrind. Each is correct only at
// the sizes named; the tests run them at others on purpose.

// over doubles x into y, one element per work-item, with no bound: a --global larger than
// the buffers reads and writes past their ends.
__kernel void over(__global const float *x, __global float *y)
{
    size_t i = get_global_id(0);
    y[i] = 2.0f * x[i];
}

// wild writes 1 GiB apart per work-item: past the first, far out of any buffer, where a
// CPU driver's thread faults (SIGSEGV).
__kernel void wild(__global float *y)
{
    size_t i = get_global_id(0);
    y[i << 28] = 1.0f;
}

// race has every work-item write the same element.
__kernel void race(__global int *x)
{
    x[0] = (int)get_global_id(0);
}

// uninit reads the element of local memory that no work-item wrote (t[0]).
__kernel void uninit(__global float *y)
{
    __local float t[64];
    size_t l = get_local_id(0);
    if (l > 0)
        t[l] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    y[get_global_id(0)] = t[(l + 1) % 64] + t[0];
}
