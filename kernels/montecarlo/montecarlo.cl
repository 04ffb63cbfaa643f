// montecarlo.cl: Philox-4x32-10 random numbers and two Monte Carlo estimates (pi, a European call).
//
// Purpose: a counter-based generator (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as
// easy as 1, 2, 3", SC'11) that gives the SAME bits for the same seed on every device and
// backend, and compute-bound Monte Carlo kernels built on it with work-group reductions.
// Output word i of a stream is word i%4 of Philox-4x32-10(counter, key), with
//   key     = (seed low 32 bits, seed high 32 bits)
//   counter = (block lo, block hi, stream lo, stream hi), block = i/4 (64 bits)
// so a generation can start at any word offset and consecutive calls continue the stream.
// uniform: (x >> 8) * 2^-24 in [0, 1): exact in float, so bit-identical everywhere too.
// normal: Box-Muller on the two words of each pair (x0, x1) of a block, u1 = ((x0 >> 8) + 1)
// * 2^-24 in (0, 1], u2 = (x1 >> 8) * 2^-24: z0 = r cos(2 pi u2), z1 = r sin(2 pi u2),
// r = sqrt(-2 log u1). Not bit-identical across devices (log, sqrt, sin, cos differ by a few
// ulps): ref.go derives the tolerance.
//
// Arguments (k0, k1: the key; s0, s1: the stream; b_lo, b_hi: the first block, the start
// offset / 4; skip: the start offset % 4; nblocks: blocks the launch covers; n: outputs):
//   mc_bits   (out, n, nblocks, skip, k0, k1, s0, s1, b_lo, b_hi)   out[j] = word offset+j (uint)
//   mc_uniform(out, n, nblocks, skip, k0, k1, s0, s1, b_lo, b_hi)   out[j] = uniform of that word
//   mc_normal (out, n, nblocks, skip, k0, k1, s0, s1, b_lo, b_hi)   out[j] = normal of that word
//       item g covers block b_lo/hi + g (outputs 4g-skip .. 4g-skip+3, those in [0, n))
//   mc_pi     (part, n, nblocks, first, stride, k0, k1, s0, s1, b_lo, b_hi)
//       point p = words (2p, 2p+1) of the stream from the first block; part[g] = number of
//       points with x*x + y*y < 1 among the work-group's: item i covers blocks first + i,
//       first + i + stride, ... below nblocks (one device: first 0, stride the launch's
//       size; a part of a split: the items of its groups in the one-device launch, so that
//       its partials are that launch's, bit for bit). The test
//       is done exactly in 64-bit integers: a*a + c*c < 2^48 for a = x0 >> 8, c = x1 >> 8,
//       which is x*x + y*y < 1 in exact arithmetic (no rounding, no fma contraction).
//   mc_option (part, n, nblocks, first, stride, spot, strike, drift, vol, k0, k1, s0, s1, b_lo, b_hi)
//       path p uses normal z = word p: S_T = spot * exp(drift + vol * z), drift = (r -
//       sigma^2/2) T, vol = sigma sqrt(T); part[g] = sum of max(S_T - strike, 0) over the
//       work-group's paths (blocks as mc_pi covers them, float accumulation, tree reduction).
//   mc_sum_uint (out, part, m)          out[0] = sum of part[0..m), one work-group
//   mc_sum_float(out, part, m, scale)   out[0] = scale * sum of part[0..m), one work-group
//
// Tunables (-D, part of the cache key):
//   WG    work-group size, a power of two    default 256
// Variants: one (float32 outputs, uint words); ELEM is not used.
// Launch: 1D, local size WG. Generators: global = RoundUp(nblocks, WG), one block per item
// (items past nblocks return: these kernels have no barrier). mc_pi/mc_option: at most
// 32 groups per compute unit, grid-stride (first, stride) over the nblocks blocks; the
// sums: global = WG.
// Boundaries: every store is guarded by 0 <= j < n; a full aligned block (skip == 0) is
// stored with one vstore4.

#ifndef WG
#define WG 256
#endif

#ifndef PRISM_CUDA
#define make_uint4(a, b, c, d) ((uint4)((a), (b), (c), (d)))
#define make_float4(a, b, c, d) ((float4)((a), (b), (c), (d)))
#endif

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

// 2^-24 and 2 pi rounded to float.
#define MC_TWO_M24 5.9604644775390625e-8f
#define MC_TWO_PI 6.28318530717958647692f

// philox_block sets x to Philox-4x32-10 of counter (block lo, block hi, s0, s1), key (k0, k1).
void philox_block(uint *x, ulong block, uint s0, uint s1, uint k0, uint k1) {
    uint c0 = (uint)block, c1 = (uint)(block >> 32), c2 = s0, c3 = s1;
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        // 32x32 -> 64-bit products: on PoCL 3.1 three times faster than mul_hi and a
        // separate low product (4M words: 60-75 ms against 185-195 ms, 2026-11-21); CUDA
        // compiles them to mul.wide.u32.
        ulong p0 = (ulong)PHILOX_M0 * c0, p1 = (ulong)PHILOX_M1 * c2;
        c0 = (uint)(p1 >> 32) ^ c1 ^ k0;
        c1 = (uint)p1;
        c2 = (uint)(p0 >> 32) ^ c3 ^ k1;
        c3 = (uint)p0;
    }
    x[0] = c0;
    x[1] = c1;
    x[2] = c2;
    x[3] = c3;
}

// uniform01: [0, 1), exact. uniform01c: (0, 1], exact.
float uniform01(uint x) { return (float)(x >> 8) * MC_TWO_M24; }
float uniform01c(uint x) { return (float)((x >> 8) + 1u) * MC_TWO_M24; }

// box_muller sets z[0], z[1] from the words a, b.
void box_muller(uint a, uint b, float *z) {
    float r = sqrt(-2.0f * log(uniform01c(a)));
    float t = MC_TWO_PI * uniform01(b);
    z[0] = r * cos(t);
    z[1] = r * sin(t);
}

#define MC_BASE(b_lo, b_hi) (((ulong)(b_hi) << 32) | (ulong)(b_lo))

__kernel void mc_bits(__global uint *out, int n, int nblocks, int skip, uint k0, uint k1, uint s0, uint s1,
                      uint b_lo, uint b_hi) {
    int g = (int)get_global_id(0);
    if (g >= nblocks) return;
    uint x[4];
    philox_block(x, MC_BASE(b_lo, b_hi) + (ulong)g, s0, s1, k0, k1);
    int j = 4 * g - skip;
    if (skip == 0 && j + 3 < n) {
        vstore4(make_uint4(x[0], x[1], x[2], x[3]), g, out);
        return;
    }
    for (int w = 0; w < 4; w++) {
        if (j + w >= 0 && j + w < n) out[j + w] = x[w];
    }
}

__kernel void mc_uniform(__global float *out, int n, int nblocks, int skip, uint k0, uint k1, uint s0, uint s1,
                         uint b_lo, uint b_hi) {
    int g = (int)get_global_id(0);
    if (g >= nblocks) return;
    uint x[4];
    philox_block(x, MC_BASE(b_lo, b_hi) + (ulong)g, s0, s1, k0, k1);
    int j = 4 * g - skip;
    if (skip == 0 && j + 3 < n) {
        vstore4(make_float4(uniform01(x[0]), uniform01(x[1]), uniform01(x[2]), uniform01(x[3])), g, out);
        return;
    }
    for (int w = 0; w < 4; w++) {
        if (j + w >= 0 && j + w < n) out[j + w] = uniform01(x[w]);
    }
}

__kernel void mc_normal(__global float *out, int n, int nblocks, int skip, uint k0, uint k1, uint s0, uint s1,
                        uint b_lo, uint b_hi) {
    int g = (int)get_global_id(0);
    if (g >= nblocks) return;
    uint x[4];
    philox_block(x, MC_BASE(b_lo, b_hi) + (ulong)g, s0, s1, k0, k1);
    float z[4];
    box_muller(x[0], x[1], z);
    box_muller(x[2], x[3], z + 2);
    int j = 4 * g - skip;
    if (skip == 0 && j + 3 < n) {
        vstore4(make_float4(z[0], z[1], z[2], z[3]), g, out);
        return;
    }
    for (int w = 0; w < 4; w++) {
        if (j + w >= 0 && j + w < n) out[j + w] = z[w];
    }
}

// Work-group tree reduction of one value per work-item; the result is in scratch[0].
#define GROUP_SUM(scratch, value)                                   \
    do {                                                            \
        int lid_ = (int)get_local_id(0);                            \
        scratch[lid_] = (value);                                    \
        barrier(CLK_LOCAL_MEM_FENCE);                               \
        for (int s_ = WG / 2; s_ > 0; s_ >>= 1) {                   \
            if (lid_ < s_) scratch[lid_] += scratch[lid_ + s_];     \
            barrier(CLK_LOCAL_MEM_FENCE);                           \
        }                                                           \
    } while (0)

// in_circle: 1 when x*x + y*y < 1 for the uniforms of words a and b, exactly.
uint in_circle(uint a, uint b) {
    ulong x = (ulong)(a >> 8), y = (ulong)(b >> 8);
    return x * x + y * y < ((ulong)1 << 48) ? 1u : 0u;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mc_pi(__global uint *part, int n, int nblocks, int first, int stride, uint k0, uint k1, uint s0, uint s1,
           uint b_lo, uint b_hi) {
    __local uint scratch[WG];
    uint count = 0;
    ulong base = MC_BASE(b_lo, b_hi);
    for (int b = first + (int)get_global_id(0); b < nblocks; b += stride) {
        uint x[4];
        philox_block(x, base + (ulong)b, s0, s1, k0, k1);
        count += in_circle(x[0], x[1]);
        if (2 * b + 1 < n) count += in_circle(x[2], x[3]);
    }
    GROUP_SUM(scratch, count);
    if (get_local_id(0) == 0) part[get_group_id(0)] = scratch[0];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mc_option(__global float *part, int n, int nblocks, int first, int stride, float spot, float strike,
               float drift, float vol, uint k0, uint k1, uint s0, uint s1, uint b_lo, uint b_hi) {
    __local float scratch[WG];
    float acc = 0.0f;
    ulong base = MC_BASE(b_lo, b_hi);
    for (int b = first + (int)get_global_id(0); b < nblocks; b += stride) {
        uint x[4];
        float z[4];
        philox_block(x, base + (ulong)b, s0, s1, k0, k1);
        box_muller(x[0], x[1], z);
        box_muller(x[2], x[3], z + 2);
        for (int w = 0; w < 4; w++) {
            if (4 * b + w < n) {
                float st = spot * exp(drift + vol * z[w]);
                acc += max(st - strike, 0.0f);
            }
        }
    }
    GROUP_SUM(scratch, acc);
    if (get_local_id(0) == 0) part[get_group_id(0)] = scratch[0];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mc_sum_uint(__global uint *out, __global const uint *part, int m) {
    __local uint scratch[WG];
    uint acc = 0;
    for (int i = (int)get_local_id(0); i < m; i += WG) acc += part[i];
    GROUP_SUM(scratch, acc);
    if (get_local_id(0) == 0) out[0] = scratch[0];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mc_sum_float(__global float *out, __global const float *part, int m, float scale) {
    __local float scratch[WG];
    float acc = 0.0f;
    for (int i = (int)get_local_id(0); i < m; i += WG) acc += part[i];
    GROUP_SUM(scratch, acc);
    if (get_local_id(0) == 0) out[0] = scale * scratch[0];
}
