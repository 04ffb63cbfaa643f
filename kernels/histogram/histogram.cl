// histogram.cl: histograms of uint32 and float32 data into uint32 counts.
//
// Purpose: a scattered-atomic, memory-bound kernel. Each work-group counts its share of the
// input in private sub-histograms in local memory (local atomic_inc), then adds each non-zero
// bin to the global counts with one atomic_add per bin per group. Histograms with more bins
// than fit (bins > LOCAL_BINS) use global atomics directly (the *_global kernels).
//
// Binning (the host reference computes exactly the same, ref.go):
//   uint32:  bin = min(x / width, bins - 1)  (width >= 1; shift >= 0 means width = 2^shift,
//            and x >> shift is used instead of the division). Every value is counted: the
//            values past bins*width land in the last bin.
//   float32: values outside [lo, hi), and NaN, are dropped; a value in range goes to bin
//            min((uint)((x - lo) * scale), bins - 1), where scale = (float)bins / (hi - lo) is
//            computed by the host in float32. The subtraction and the multiplication are each
//            correctly rounded in float32 (no division on the device, whose float division may
//            be inexact in OpenCL; no contraction is possible), so the device and the host agree
//            bit for bit. The min() catches (x - lo)*scale rounding up to bins for x just below hi.
//
// Arguments (n inputs; counts[0..bins) must be zeroed first, by hist_clear: every other
// kernel adds to them):
//   hist_clear     (counts, bins)                                  counts[0..bins) = 0
//   hist_u32       (counts, x, n, bins, width, shift, copies)      local sub-histograms
//   hist_f32       (counts, x, n, bins, lo, hi, scale, copies)     local sub-histograms
//   hist_u32_global(counts, x, n, bins, width, shift)              global atomics only
//   hist_f32_global(counts, x, n, bins, lo, hi, scale)             global atomics only
//   copies: sub-histograms per work-group, 1 <= copies and bins*copies <= LOCAL_WORDS; item lid
//   counts into copy lid % copies (bin b of copy c is word b*copies + c), which spreads
//   contention on a popular bin over copies words (and banks).
//
// Tunables (-D, part of the cache key):
//   WG           work-group size, a power of two                           default 256
//   LOCAL_WORDS  local counters per work-group (4*LOCAL_WORDS bytes)       default 8192
//   LOCAL_BINS   the most bins of the local kernels (<= LOCAL_WORDS); the  default 4096
//                host uses the *_global kernels above it
// Variants: one program for both input types (ELEM is not used).
// Launch: 1D, local size WG, global a multiple of WG (any number of groups: every kernel
// loops over its input, or over the bins for hist_clear, with a grid stride). Boundary: inputs at or past n are not read.

#ifndef WG
#define WG 256
#endif
#ifndef LOCAL_WORDS
#define LOCAL_WORDS 8192
#endif
#ifndef LOCAL_BINS
#define LOCAL_BINS 4096
#endif

inline uint bin_u32(uint x, uint bins, uint width, int shift) {
    uint q = shift >= 0 ? x >> shift : x / width;
    return min(q, bins - 1u);
}

// bin_f32 returns the bin of x, or bins when x is dropped (outside [lo, hi), or NaN).
inline uint bin_f32(float x, uint bins, float lo, float hi, float scale) {
    if (!(x >= lo && x < hi)) return bins;
    return min((uint)((x - lo) * scale), bins - 1u);
}

// The body of the local kernels: BIN(x) gives the bin of input x, or bins to drop it.
#define HIST_LOCAL(BIN)                                                                \
    __local uint lh[LOCAL_WORDS];                                                      \
    int lid = (int)get_local_id(0);                                                    \
    int words = bins * copies;                                                         \
    for (int w = lid; w < words; w += WG) lh[w] = 0u;                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                                      \
    uint c = (uint)(lid % copies);                                                     \
    for (int i = (int)get_global_id(0); i < n; i += (int)get_global_size(0)) {         \
        uint b = BIN(x[i]);                                                            \
        if (b < (uint)bins) atomic_inc(&lh[b * (uint)copies + c]);                     \
    }                                                                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                                      \
    for (int b = lid; b < bins; b += WG) {                                             \
        uint s = 0u;                                                                   \
        for (int k = 0; k < copies; k++) s += lh[b * copies + k];                      \
        if (s != 0u) atomic_add(&counts[b], s);                                        \
    }

#define HIST_GLOBAL(BIN)                                                               \
    for (int i = (int)get_global_id(0); i < n; i += (int)get_global_size(0)) {         \
        uint b = BIN(x[i]);                                                            \
        if (b < (uint)bins) atomic_inc(&counts[b]);                                    \
    }

#define BIN_U32(v) bin_u32(v, (uint)bins, width, shift)
#define BIN_F32(v) bin_f32(v, (uint)bins, lo, hi, scale)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hist_clear(__global uint *counts, int bins) {
    for (int b = (int)get_global_id(0); b < bins; b += (int)get_global_size(0)) counts[b] = 0u;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hist_u32(__global uint *counts, __global const uint *x, int n, int bins, uint width, int shift, int copies) {
    HIST_LOCAL(BIN_U32)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hist_f32(__global uint *counts, __global const float *x, int n, int bins, float lo, float hi, float scale, int copies) {
    HIST_LOCAL(BIN_F32)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hist_u32_global(__global uint *counts, __global const uint *x, int n, int bins, uint width, int shift) {
    HIST_GLOBAL(BIN_U32)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hist_f32_global(__global uint *counts, __global const float *x, int n, int bins, float lo, float hi, float scale) {
    HIST_GLOBAL(BIN_F32)
}
