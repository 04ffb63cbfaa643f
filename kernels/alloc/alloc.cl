// alloc.cl: a byte pattern over a whole allocation, to check that its memory is usable.
//
// Purpose: the alloc family times allocating and freeing device memory, through engine's
// memory pool (engine.NewBuffer and Buffer.Close) and straight through the driver
// (Alloc and Close of the backend's device); no kernel runs while that is timed. The
// pooled op's Verify allocates a buffer as its runs do (the pool hands the same memory out
// again) and has alloc_fill write every byte of it, then reads the ends back: memory the
// pool reuses must be the whole size asked and reachable from a kernel. (The raw op's
// Verify writes and reads the ends of a driver allocation through the driver's queue:
// engine launches kernels on its own buffers only.)
//
// Arguments (n bytes; buf a uchar buffer):
//   alloc_fill(buf, n, s)   buf[i] = (i * 167 + s) mod 256 for i < n
//       167 is odd, so 256 consecutive bytes take every value once: a byte written at
//       the wrong place, or not at all, shows.
//
// Tunables (-D, part of the cache key):
//   none   s is an argument; the work-group size is the launcher's alone: the kernel
//          requires none, uses no local memory and has no barrier.
// Variants: one: bytes (uchar).
// Launch: 1D, one work-item per byte, global RoundUp(n, WG) for the launcher's work-group
//   size WG; items at or past n return.
// Boundaries: nothing at or past n is written; n <= 2^31-1 (int indices).

__kernel void alloc_fill(__global uchar *buf, int n, uint s) {
    int i = (int)get_global_id(0);
    if (i >= n) return;
    buf[i] = (uchar)((uint)i * 167u + s);
}
