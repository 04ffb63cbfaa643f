// histogram.cl: histograms of uint32 and float32 data into uint32 counts.
//
// Purpose: a scattered-atomic, memory-bound kernel. Each work-group counts its share of the
// input in private sub-histograms in local memory (local atomics), then adds each non-zero
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
//   hist_u32_priv  (counts, x4, n, bins, width, shift, cshift)     privatized (below)
//   hist_f32_priv  (counts, x4, n, bins, lo, hi, scale, cshift)    privatized (below)
//   hist_u32_global(counts, x, n, bins, width, shift)              global atomics only
//   hist_f32_global(counts, x, n, bins, lo, hi, scale)             global atomics only
//   copies: sub-histograms per work-group, 1 <= copies and bins*copies <= LOCAL_WORDS; item lid
//   counts into copy lid % copies (bin b of copy c is word b*copies + c), which spreads
//   contention on a popular bin over copies words (and banks).
//   The *_priv kernels take the input as 16-byte vectors (x4: uint4 / float4, the same
//   buffer; buffers start aligned to at least 128 bytes, CL_DEVICE_MEM_BASE_ADDR_ALIGN and
//   cuMemAlloc's 256) and copies = 2^cshift (1 <= copies <= 32, bins*copies <= LOCAL_WORDS).
//
// The privatized kernels (the ops' "privatized" variant, for NVIDIA GPUs foremost): the
// portable hist_u32/hist_f32 have one 4-byte load in flight per item (compilers do not
// issue the next iteration's load ahead of the local atomic of this one), too few bytes in
// flight to cover a GPU's memory latency (an H100 needs about 16 KB in flight per SM).
// hist_*_priv run a grid of a few work-groups per compute unit (the host's GROUPS, 4 by
// default: 1024 items per SM with 256-item groups) with a grid-stride loop in which each
// item first issues UNROLL 16-byte loads (vectors i, i + G, ..., i + (UNROLL-1)*G of the
// G = global size: every load of a warp coalesced) and only then counts their 4*UNROLL
// values; the vectors left (fewer than UNROLL*G) go one per item, and the n % 4 last values
// one per item of the first items, as scalars. Sub-histograms are lane-striped: bin b of copy c is word b*copies + c with c = lid % copies, so with 32
// copies the 32 lanes of a warp always hit 32 different banks (bank = lane) and never the
// same word, whatever the data (a per-warp copy would serialize the lanes that share a
// bin, 29-way when nine values in ten fall in one bin); the items sharing a copy are in
// different warps, whose atomics the hardware orders anyway. The merge reads the copies of
// bin b rotated by b (copy (k + b) % copies at step k), so that consecutive items read
// different banks instead of 32 words 32 apart (one bank); it then adds each non-zero bin
// to counts with one global atomic_add per group: with a few groups per compute unit that
// is about 500 atomics per bin over the whole grid on an H100 (4 x 132 groups), fewer bytes
// and one launch less than writing per-group partials for a second kernel to sum.
//
// Tunables (-D, part of the cache key):
//   WG           work-group size, a power of two                           default 256
//   LOCAL_WORDS  local counters per work-group (4*LOCAL_WORDS bytes)       default 8192
//   LOCAL_BINS   the most bins of the local kernels (<= LOCAL_WORDS); the  default 4096
//                host uses the *_global kernels above it
//   UNROLL       16-byte loads in flight per item in hist_*_priv           default 4
// Variants: one program for both input types (ELEM is not used); the privatized build
//   (NewPrivatized) launches hist_*_priv, the portable one hist_u32/hist_f32.
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
#ifndef UNROLL
#define UNROLL 4
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
// The uint32 bin with the shift or the division chosen once per kernel (hist_u32_priv), not
// per value: a select would compute the division for every value.
#define BIN_U32_SHIFT(v) min((v) >> shift, (uint)bins - 1u)
#define BIN_U32_DIV(v) min((v) / width, (uint)bins - 1u)

// The privatized kernels (see the header). PRIV_BEGIN clears the group's copies; PRIV_COUNT
// counts one value of bin B (B == bins drops it) into the item's copy, PRIV_INC one of bin
// B < bins (the uint32 bins, which every value has: no branch per value). Both add 1 with
// atomic_add, which the CUDA prelude and NVIDIA's OpenCL map to the shared-memory atomic add
// (atom.shared.add.u32; the CUDA translation's generic pointer is inferred shared).
#define PRIV_BEGIN                                                                      \
    __local uint lh[LOCAL_WORDS];                                                       \
    const int lid = (int)get_local_id(0);                                               \
    const int words = bins << cshift;                                                   \
    for (int w = lid; w < words; w += WG) lh[w] = 0u;                                   \
    barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    const uint cmask = (1u << cshift) - 1u;                                             \
    const uint c = (uint)lid & cmask;                                                   \
    const int nv = n >> 2;                                                              \
    const int gsz = (int)get_global_size(0);                                            \
    const int gid = (int)get_global_id(0);

#define PRIV_COUNT(B)                                                                   \
    do {                                                                                \
        const uint b_ = (B);                                                            \
        if (b_ < (uint)bins) atomic_add(&lh[(b_ << cshift) | c], 1u);                   \
    } while (0)

#define PRIV_INC(B) atomic_add(&lh[((B) << cshift) | c], 1u)

#define PRIV_COUNT4(V, BIN, COUNT)                                                      \
    do {                                                                                \
        COUNT(BIN((V).x));                                                              \
        COUNT(BIN((V).y));                                                              \
        COUNT(BIN((V).z));                                                              \
        COUNT(BIN((V).w));                                                              \
    } while (0)

// PRIV_LOOP counts every input: UNROLL vectors per item and step while all of them are in
// range (i + (UNROLL-1)*gsz < nv, so no index passes nv + gsz < 2^31), then the vectors
// left one per item, then the last n % 4 values (at 4*nv..n-1) one each by the first items.
#define PRIV_LOOP(VEC, SCALAR, BIN, COUNT)                                              \
    do {                                                                                \
        int i = gid;                                                                    \
        for (; i < nv - (UNROLL - 1) * gsz; i += UNROLL * gsz) {                        \
            VEC v[UNROLL];                                                              \
            _Pragma("unroll") for (int k = 0; k < UNROLL; k++) v[k] = x4[i + k * gsz];  \
            _Pragma("unroll") for (int k = 0; k < UNROLL; k++)                          \
                PRIV_COUNT4(v[k], BIN, COUNT);                                          \
        }                                                                               \
        for (; i < nv; i += gsz) {                                                      \
            const VEC v = x4[i];                                                        \
            PRIV_COUNT4(v, BIN, COUNT);                                                 \
        }                                                                               \
        for (int t = 4 * nv + gid; t < n; t += gsz)                                     \
            COUNT(BIN(((__global const SCALAR *)x4)[t]));                               \
    } while (0)

// PRIV_END merges the copies, each item summing bins b = lid, lid + WG, ... over the copies
// from copy b % copies on (consecutive items, consecutive banks), and adds each non-zero sum
// to counts.
#define PRIV_END                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    for (int b = lid; b < bins; b += WG) {                                              \
        uint s = 0u;                                                                    \
        for (uint k = 0u; k <= cmask; k++)                                              \
            s += lh[((uint)b << cshift) | ((k + (uint)b) & cmask)];                     \
        if (s != 0u) atomic_add(&counts[b], s);                                         \
    }

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
void hist_u32_priv(__global uint *counts, __global const uint4 *x4, int n, int bins, uint width, int shift, int cshift) {
    PRIV_BEGIN
    if (shift >= 0) {
        PRIV_LOOP(uint4, uint, BIN_U32_SHIFT, PRIV_INC);
    } else {
        PRIV_LOOP(uint4, uint, BIN_U32_DIV, PRIV_INC);
    }
    PRIV_END
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hist_f32_priv(__global uint *counts, __global const float4 *x4, int n, int bins, float lo, float hi, float scale, int cshift) {
    PRIV_BEGIN
    PRIV_LOOP(float4, float, BIN_F32, PRIV_COUNT);
    PRIV_END
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hist_u32_global(__global uint *counts, __global const uint *x, int n, int bins, uint width, int shift) {
    HIST_GLOBAL(BIN_U32)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hist_f32_global(__global uint *counts, __global const float *x, int n, int bins, float lo, float hi, float scale) {
    HIST_GLOBAL(BIN_F32)
}
