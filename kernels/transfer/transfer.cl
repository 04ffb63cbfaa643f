// transfer.cl: the device side of the host-device copies: a seeded byte pattern, written
// and checked on the device.
//
// Purpose: the transfer family times copies between host and device memory (engine's
// Buffer.WriteAsync and ReadAsync from pinned host buffers, Buffer.Write and Read from Go
// slices); no kernel runs while a copy is timed. These kernels give the copies their data
// and check it without a second copy through the path being measured: transfer_fill writes
// the pattern a device-to-host copy then reads (or its complement, which a host-to-device
// copy must overwrite), and transfer_check compares what a host-to-device copy wrote with
// the pattern and its guard band with the sentinel, on the device.
//
// The pattern: byte i is byte (i mod 4) of the 32-bit word h(i / 4), little-endian, where
//   h(w) = fmix(fmix(w ^ s0) + s1 + 0x9e3779b9), fmix being MurmurHash3's 32-bit
//   finalizer and s0, s1 the low and high halves of the op's 64-bit seed (the constant
//   keeps seed 0 off fmix's fixed point 0): random bytes, the same on the host
//   (transfer.Pattern) and on every device.
//
// Arguments (n bytes; buf a uchar buffer; s0, s1 the seed's halves):
//   transfer_fill (buf, n, guard, s0, s1, mask)  buf[i] = pattern(i) ^ mask for i < n,
//       SENTINEL for n <= i < n + guard (the guard band a copy into buf must leave)
//   transfer_check(bad, buf, n, guard, s0, s1)   for i < n + guard: a byte that is not
//       pattern(i) (i < n) or SENTINEL (i >= n, the guard band) adds 1 to bad[0] and
//       lowers bad[1] to i; bad: 2 ints, set to {0, INT_MAX} by the host before.
//
// Tunables (-D, part of the cache key):
//   SENTINEL  the guard band's byte   default 0xa5
//         The work-group size is the launcher's alone: no kernel requires one, uses local
//         memory or has a barrier.
// Variants: one: bytes (uchar) only.
// Launch: 1D, one work-item per byte, global RoundUp(n + guard, WG) for the launcher's
//   work-group size WG; items at or past n + guard return.
// Boundaries: nothing at or past n + guard is read or written; n + guard <= 2^31-1
//   (int indices).

#ifndef SENTINEL
#define SENTINEL 0xa5
#endif

// MurmurHash3's 32-bit finalizer: every input bit flips each output bit with probability
// about one half.
inline uint transfer_fmix(uint h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

inline uchar transfer_pattern(int i, uint s0, uint s1) {
    uint h = transfer_fmix(transfer_fmix((uint)(i >> 2) ^ s0) + s1 + 0x9e3779b9u);
    return (uchar)(h >> (8 * (i & 3)));
}

__kernel void transfer_fill(__global uchar *buf, int n, int guard, uint s0, uint s1, uint mask) {
    int i = (int)get_global_id(0);
    if (i >= n + guard) return;
    buf[i] = i < n ? transfer_pattern(i, s0, s1) ^ (uchar)mask : (uchar)SENTINEL;
}

__kernel void transfer_check(__global int *bad, __global const uchar *buf, int n, int guard, uint s0, uint s1) {
    int i = (int)get_global_id(0);
    if (i >= n + guard) return;
    uchar want = i < n ? transfer_pattern(i, s0, s1) : (uchar)SENTINEL;
    if (buf[i] != want) {
        atomic_inc(&bad[0]);
        atomic_min(&bad[1], i);
    }
}
