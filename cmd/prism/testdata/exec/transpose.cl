// out = in transposed: in is height rows of width ints, out width rows of height; one
// element per work-item of a width x height range.
__kernel void transpose(__global const int *in, __global int *out, const int width,
                        const int height)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < width && y < height)
        out[x * height + y] = in[y * width + x];
}
