// access.cl: memory access patterns: sequential, strided, gather and scatter copies.
//
// Purpose: the access patterns a profiler's bandwidth analysis tells apart, as copies of n
// elements from x to y that differ in nothing else: every kernel moves one element per
// work-item (one load, one store, no arithmetic), so their GB/s differ by the pattern alone.
// sequential is the coalesced baseline. strided reads x stride elements apart: a
// work-group uses one element per stride*sizeof(ELEM) bytes of every sector or line it
// fetches, and the rest of that line comes back for a later column, from memory again once x
// exceeds the caches. gather reads and scatter writes through an index array, a random
// permutation in the suite: one sector or line per element on the random side.
//
// Arguments (n elements of type ELEM; y and x are distinct buffers):
//   access_sequential(y, x, n)                   y[i] = x[i]
//   access_strided   (y, x, stride, rows, last)  x read column by column into y:
//       x viewed as rows rows of stride elements, row-major, the last row holding last
//       of them (1 <= last <= stride; n = (rows-1)*stride + last); column c holds rows
//       elements for c < last, rows-1 after, and starts in y at c*(rows-1) + min(c, last):
//       item (r, c) sets y[c*(rows-1) + min(c, last) + r] = x[r*stride + c]. Where stride
//       divides n, y[i] = x[(i mod rows)*stride + i/rows] = x[(i*stride) mod n + i*stride/n].
//   access_gather    (y, x, idx, n)              y[i] = x[idx[i]] (0 where idx[i] >= n)
//   access_scatter   (y, x, idx, n)              y[idx[i]] = x[i] (none where idx[i] >= n)
//       idx: n uint indices; scatter's below n must be distinct (two items storing to one
//       element race). The suite's are random permutations of 0..n-1.
//
// Tunables (-D, part of the cache key):
//   ELEM  element type    default float
//         The work-group size is the launcher's alone: no kernel requires one, uses local
//         memory or has a barrier.
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
// Launch: sequential, gather, scatter: 1D, one item per element, global RoundUp(n, WG) for
//   the launcher's work-group size WG; items at or past n return. strided: 2D, local (L, 1),
//   global (RoundUp(rows, L), stride), L = WG halved while its half still covers rows;
//   dimension 0 walks down a column, so that neighbouring items read x stride elements
//   apart and write y contiguously, and a device that schedules groups in order reads the
//   columns one after the other (stride passes over x). stride <= 65535 (CUDA's limit on
//   the blocks of grid dimension 1).
// Boundaries: no element at or past n of x, y or idx is read or written; n <= 2^31-1 (int
//   indices; every index computed is below n).

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif

__kernel void access_sequential(__global ELEM *y, __global const ELEM *x, int n) {
    int i = (int)get_global_id(0);
    if (i >= n) return;
    y[i] = x[i];
}

__kernel void access_strided(__global ELEM *y, __global const ELEM *x, int stride, int rows, int last) {
    int r = (int)get_global_id(0);
    int c = (int)get_global_id(1);
    if (r >= (c < last ? rows : rows - 1)) return;
    y[c * (rows - 1) + (c < last ? c : last) + r] = x[r * stride + c];
}

__kernel void access_gather(__global ELEM *y, __global const ELEM *x, __global const uint *idx, int n) {
    int i = (int)get_global_id(0);
    if (i >= n) return;
    uint j = idx[i];
    ELEM v = 0;
    if (j < (uint)n) v = x[j];
    y[i] = v;
}

__kernel void access_scatter(__global ELEM *y, __global const ELEM *x, __global const uint *idx, int n) {
    int i = (int)get_global_id(0);
    if (i >= n) return;
    uint j = idx[i];
    if (j < (uint)n) y[j] = x[i];
}
