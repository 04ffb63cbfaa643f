// y = a*x + BIAS, four elements per work-item read and written VEC at a time with
// vloadVEC and vstoreVEC: the example of prism tune --help. VEC must divide 4.
#ifndef VEC
#define VEC 1
#endif
#ifndef BIAS
#define BIAS 0
#endif
#if 4 % VEC != 0
#error VEC must divide 4
#endif

#define CAT(a, b) a##b
#define XCAT(a, b) CAT(a, b)

__kernel void scale(const float a, __global const float *x, __global float *y)
{
    size_t i = get_global_id(0);
#if VEC == 1
    for (int j = 0; j < 4; j++)
        y[4 * i + j] = a * x[4 * i + j] + BIAS;
#else
    for (int j = 0; j < 4 / VEC; j++) {
        size_t v = i * (4 / VEC) + j;
        XCAT(vstore, VEC)(a * XCAT(vload, VEC)(v, x) + BIAS, v, y);
    }
#endif
}
