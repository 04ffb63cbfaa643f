// z = a*x + y, one element per work-item: the example of prism exec --help.
__kernel void saxpy(const float a, __global const float *x, __global const float *y,
                    __global float *z)
{
    size_t i = get_global_id(0);
    z[i] = a * x[i] + y[i];
}
