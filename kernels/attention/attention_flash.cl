// attention_flash.cl: fp32 scaled dot-product attention for GPUs, FlashAttention-2 in SIMT
// (the "flash-simt" variant of attention/{full,causal}/float32).
//
// Purpose: attention.cl's computation, O = softmax(Q K^T * scale [+ causal mask]) V for
// tensors of shape [batch, heads, seq, dim] (row-major, Q, K, V and O alike), shaped as a
// SIMT SGEMM is: a work-group owns BQ queries of one (batch, head) and keeps them, scaled
// by scale*log2(e), in local memory; it loops over blocks of BK keys and values staged in
// local memory, computes the BQ x BK scores with a TQ x TK register tile per work-item
// (TQ queries by TK keys: 4 x 4 by default), keeps per query a running max m and per
// work-item a partial running sum l (in log2 units: p = exp2(s - m)), writes the block's
// probabilities P to local memory and accumulates O += P V with a TQ x TD register tile
// (TQ queries by TD = DMAX*TK/BK output dimensions: 4 x 8 by default). Every inner loop
// reads 16-byte vectors: in S = Q K^T the TQ query vectors are broadcasts (for BK/TK >= 8
// the items of a quarter-warp share their queries) and the TK key vectors of neighbouring
// items are consecutive rows of a padded tile (conflict-free); in P V the TQ probability
// vectors are broadcasts and the value vectors consecutive. No seq x seq matrix is formed.
//
// Arguments:
//   attention_flash(o, q, k, v, seq, dim, bh, scale2, causal)
//       o, q, k, v: bh*seq*dim elements (bh = batch*heads); 1 <= dim <= DMAX; scale2 =
//       scale * log2(e) rounded to ELEM (the launcher passes it; scale is 1/sqrt(dim) unless
//       told otherwise); causal != 0 masks key j > query i. bh*seq*dim < 2^31 (the
//       launcher checks).
//
// Tunables (-D, part of the cache key; kernels/attention/flash.go builds it with
// FlashTunables, shrunk to the device's limits):
//   ELEM  element type of the arithmetic and storage                    default float
//   DMAX  largest head dimension (a multiple of 4*BK/TK)                default 64
//   BQ    queries per work-group                                        default 64
//   BK    keys per block (a multiple of 4)                              default 32
//   TQ    queries per work-item (register tile rows)                    default 4
//   TK    keys per work-item in S (register tile columns)               default 4
//   WG, if defined, is ignored: the work-group size is (BQ/TQ)*(BK/TK).
//   Constraints (checked with #error): TQ | BQ, TK | BK, 4 | BK, 4*BK/TK | DMAX.
// Local memory: (BQ + BK)*(DMAX+4) (Q and K, rows padded by 4) + BK*DMAX (V) + BQ*(BK+4)
//   (P, rows padded by 4) + BQ*BK/TK (row maxima, then sums) elements: 44.5 KiB in float
//   by default; the launcher keeps it within 48 KiB, CUDA's static limit.
// Variants: ELEM=float (the float32 ops); ELEM=double with PRISM_FP64 compiles (the CUDA
//   translation's check) but no launcher builds it. Causal or not at run time.
// Launch: 1D, local size WG = (BQ/TQ)*(BK/TK) (128 by default), global bh*ceil(seq/BQ)*WG.
//   Work-group g serves head g % bh and, counting from the last, query block g / bh: the
//   heaviest causal blocks of every head start first. Item lid = r*CX + c (CX = BK/TK,
//   RY = BQ/TQ) owns queries r + a*RY (a < TQ) of the block, scores keys c + t*CX (t < TK)
//   of each key block and accumulates the 4-wide dimension groups c + e*CX (e < TD/4) of
//   the output: the rows of a warp's items are neighbours, whose padded Q and P rows
//   start in different banks.
// Synchronization: three barriers per key block, the K and V tiles single-buffered: the
//   next block's K and V are loaded into registers while this block's scores are computed;
//   K is stored after the barrier that ends every item's score loop, V after the one that
//   ends every item's P V loop.
// Boundaries: queries, keys and values past seq and dimensions past dim are staged as 0;
//   scores of keys past seq (and past the query when causal; only blocks that reach past
//   seq or past the block's first query test it) are -INFINITY, so weight 0; causal
//   work-groups stop at the key block of their last query. Nothing outside the buffers is
//   read or written; no work-item returns early: all reach every barrier.
// Accuracy: each score is one chain of fma over the dimensions from q scaled once (as
//   attention.cl), log2(e) folded into the scale: one more rounding of the scores, within
//   AttentionTolerance's slack; exp2 for exp; one rescale per key block; O sums the keys
//   in order, l per item then over the CX items of a row in a fixed order (a chain no
//   longer than attention.cl's); O = acc / l.
// Note: a quotient and remainder of the same operands become LLVM's freeze instruction,
//   which Oclgrind's uninitialized-value check rejects: remainders are written as
//   x - (x / n) * n.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef DMAX
#define DMAX 64
#endif
#ifndef BQ
#define BQ 64
#endif
#ifndef BK
#define BK 32
#endif
#ifndef TQ
#define TQ 4
#endif
#ifndef TK
#define TK 4
#endif

#if BQ < 1 || BK < 4 || TQ < 1 || TK < 1 || BQ % TQ != 0 || BK % TK != 0 || BK % 4 != 0 || DMAX % (4 * (BK / TK)) != 0
#error "attention_flash.cl: tunables must satisfy TQ | BQ, TK | BK, 4 | BK, 4*BK/TK | DMAX"
#endif

#define FA_CAT_(a, b) a##b
#define FA_CAT(a, b) FA_CAT_(a, b)
#define ELEM4 FA_CAT(ELEM, 4)

#define FA_CX (BK / TK)      // items along the keys of a block (S) and the dimensions (P V)
#define FA_RY (BQ / TQ)      // items along the queries
#define FA_WG (FA_CX * FA_RY)
#define FA_D4 (DMAX / 4)     // 4-wide vectors of a V row
#define FA_KS4 (FA_D4 + 1)   // of a Q or K row, padded: neighbouring rows start 4 banks apart
#define FA_BK4 (BK / 4)      // of a P row's probabilities
#define FA_PS4 (FA_BK4 + 1)  // of a P row, padded
#define FA_TD4 (FA_D4 / FA_CX) // output vectors per item
#define FA_KV (BK * FA_D4)   // vectors of a K or V block
#define FA_LV ((FA_KV + FA_WG - 1) / FA_WG) // of them per item
#define FA_NEG_INF ((ELEM)(-INFINITY))

#ifdef PRISM_CUDA
#define FA_LOCAL_ELEM ELEM
#else
#define FA_LOCAL_ELEM __local ELEM
#endif
#define Ms ((FA_LOCAL_ELEM *)Ms4)

// fa_splat returns x in every lane (a vector literal of the macro ELEM4 is no literal the
// CUDA translation sees).
inline ELEM4 fa_splat(ELEM x) {
    ELEM4 v;
    v.x = x;
    v.y = x;
    v.z = x;
    v.w = x;
    return v;
}

// fa_load4 returns the 4-wide group d4 of row `row` of the matrix at p (rows of dim
// elements): zeros past rows or past dim; one 16-byte load when vec (dim % 4 == 0, so
// that every group is aligned and whole).
inline ELEM4 fa_load4(__global const ELEM *p, int row, int rows, int d4, int dim, int vec) {
    ELEM4 x = fa_splat(0);
    int d = d4 * 4;
    if (row < rows && d < dim) {
        __global const ELEM *s = p + row * dim + d;
        if (vec) {
            x = vload4(0, s);
        } else {
            x.x = s[0];
            if (d + 1 < dim) x.y = s[1];
            if (d + 2 < dim) x.z = s[2];
            if (d + 3 < dim) x.w = s[3];
        }
    }
    return x;
}

__kernel __attribute__((reqd_work_group_size(FA_WG, 1, 1)))
void attention_flash(__global ELEM *o, __global const ELEM *q, __global const ELEM *k,
                     __global const ELEM *v, int seq, int dim, int bh, ELEM scale2, int causal) {
    __local ELEM4 Qs[BQ * FA_KS4];  // Qs[i*KS4 + d4]: query q0+i, scaled
    __local ELEM4 Ks[BK * FA_KS4];  // Ks[j*KS4 + d4]: key j0+j
    __local ELEM4 Vs[BK * FA_D4];   // Vs[j*D4 + d4]: value j0+j
    __local ELEM4 Ps[BQ * FA_PS4];  // Ps[i*PS4 + j/4]: probability of query q0+i, key j0+j
    __local ELEM4 Ms4[(BQ * FA_CX + 3) / 4]; // Ms[i*CX + c]: item c's maximum (then sum) of row i

    const int lid = (int)get_local_id(0);
    const int r = lid / FA_CX;
    const int c = lid - r * FA_CX;
    const int nqb = (seq + BQ - 1) / BQ;
    const int g = (int)get_group_id(0);
    const int qb = g / bh;
    const int head = g - qb * bh;
    const int q0 = (nqb - 1 - qb) * BQ;
    const int base = head * seq * dim;
    const int vec = (dim & 3) == 0;
    __global const ELEM *qh = q + base;
    __global const ELEM *kh = k + base;
    __global const ELEM *vh = v + base;

    // The query block, scaled once here; the first key and value blocks.
    for (int t = lid; t < BQ * FA_D4; t += FA_WG) {
        int i = t / FA_D4, d4 = t - (t / FA_D4) * FA_D4;
        Qs[i * FA_KS4 + d4] = scale2 * fa_load4(qh, q0 + i, seq, d4, dim, vec);
    }
    for (int t = lid; t < FA_KV; t += FA_WG) {
        int j = t / FA_D4, d4 = t - (t / FA_D4) * FA_D4;
        Ks[j * FA_KS4 + d4] = fa_load4(kh, j, seq, d4, dim, vec);
        Vs[t] = fa_load4(vh, j, seq, d4, dim, vec);
    }

    ELEM m[TQ], l[TQ];
    ELEM4 acc[TQ][FA_TD4];
#pragma unroll
    for (int a = 0; a < TQ; a++) {
        m[a] = FA_NEG_INF;
        l[a] = 0;
#pragma unroll
        for (int e = 0; e < FA_TD4; e++) acc[a][e] = fa_splat(0);
    }
    ELEM4 kreg[FA_LV], vreg[FA_LV];
#pragma unroll
    for (int u = 0; u < FA_LV; u++) {
        kreg[u] = fa_splat(0);
        vreg[u] = fa_splat(0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    const int kend = causal ? min(seq, q0 + BQ) : seq;
    const int nkb = (kend + BK - 1) / BK;
    for (int kb = 0; kb < nkb; kb++) {
        const int j0 = kb * BK;
        const int more = kb + 1 < nkb;
        // The next block's keys and values, in flight while this block is computed.
        if (more) {
#pragma unroll
            for (int u = 0; u < FA_LV; u++) {
                int t = lid + u * FA_WG;
                int j = t / FA_D4, d4 = t - (t / FA_D4) * FA_D4;
                if (FA_KV % FA_WG == 0 || t < FA_KV) {
                    kreg[u] = fa_load4(kh, j0 + BK + j, seq, d4, dim, vec);
                    vreg[u] = fa_load4(vh, j0 + BK + j, seq, d4, dim, vec);
                }
            }
        }

        // S = Q K^T: TQ x TK scores, one fma chain over the dimensions each.
        ELEM s[TQ][TK];
#pragma unroll
        for (int a = 0; a < TQ; a++) {
#pragma unroll
            for (int t = 0; t < TK; t++) s[a][t] = 0;
        }
#pragma unroll 4
        for (int d4 = 0; d4 < FA_D4; d4++) {
            ELEM4 kv[TK];
#pragma unroll
            for (int t = 0; t < TK; t++) kv[t] = Ks[(c + t * FA_CX) * FA_KS4 + d4];
#pragma unroll
            for (int a = 0; a < TQ; a++) {
                ELEM4 qv = Qs[(r + a * FA_RY) * FA_KS4 + d4];
#pragma unroll
                for (int t = 0; t < TK; t++) {
                    ELEM x = s[a][t];
                    x = fma(qv.x, kv[t].x, x);
                    x = fma(qv.y, kv[t].y, x);
                    x = fma(qv.z, kv[t].z, x);
                    x = fma(qv.w, kv[t].w, x);
                    s[a][t] = x;
                }
            }
        }
        // Mask (blocks that reach past seq or past the block's first query only), and this
        // item's maximum per query row.
        if (j0 + BK > seq || (causal && j0 + BK - 1 > q0)) {
#pragma unroll
            for (int a = 0; a < TQ; a++) {
                int i = q0 + r + a * FA_RY;
#pragma unroll
                for (int t = 0; t < TK; t++) {
                    int j = j0 + c + t * FA_CX;
                    if (j >= seq || (causal && j > i)) s[a][t] = FA_NEG_INF;
                }
            }
        }
#pragma unroll
        for (int a = 0; a < TQ; a++) {
            ELEM mloc = s[a][0];
#pragma unroll
            for (int t = 1; t < TK; t++) mloc = max(mloc, s[a][t]);
            Ms[(r + a * FA_RY) * FA_CX + c] = mloc;
        }
        barrier(CLK_LOCAL_MEM_FENCE); // every score loop done: Ks free, Ms complete

        if (more) {
#pragma unroll
            for (int u = 0; u < FA_LV; u++) {
                int t = lid + u * FA_WG;
                int j = t / FA_D4, d4 = t - (t / FA_D4) * FA_D4;
                if (FA_KV % FA_WG == 0 || t < FA_KV) Ks[j * FA_KS4 + d4] = kreg[u];
            }
        }
        // New running max per row; probabilities relative to it; rescale.
#pragma unroll
        for (int a = 0; a < TQ; a++) {
            int row = r + a * FA_RY;
            ELEM mn = m[a];
#if FA_CX % 4 == 0
#pragma unroll
            for (int u = 0; u < FA_CX / 4; u++) {
                ELEM4 x = Ms4[row * (FA_CX / 4) + u];
                mn = max(mn, max(max(x.x, x.y), max(x.z, x.w)));
            }
#else
#pragma unroll
            for (int u = 0; u < FA_CX; u++) mn = max(mn, Ms[row * FA_CX + u]);
#endif
            ELEM mref = mn == FA_NEG_INF ? (ELEM)0 : mn; // a row with no key yet: weights 0
            ELEM alpha = exp2(m[a] - mref);
            m[a] = mn;
            ELEM ls = l[a] * alpha;
#pragma unroll
            for (int t = 0; t < TK; t++) {
                ELEM p = exp2(s[a][t] - mref);
                ((FA_LOCAL_ELEM *)Ps)[row * (4 * FA_PS4) + c + t * FA_CX] = p;
                ls += p;
            }
            l[a] = ls;
#pragma unroll
            for (int e = 0; e < FA_TD4; e++) acc[a][e] *= alpha;
        }
        barrier(CLK_LOCAL_MEM_FENCE); // Ps complete

        // O += P V over the block's keys (keys past seq or the mask have p = 0, their
        // values are staged as 0).
#pragma unroll 2
        for (int j4 = 0; j4 < FA_BK4; j4++) {
            ELEM4 pv[TQ];
#pragma unroll
            for (int a = 0; a < TQ; a++) pv[a] = Ps[(r + a * FA_RY) * FA_PS4 + j4];
#pragma unroll
            for (int jj = 0; jj < 4; jj++) {
                ELEM4 vv[FA_TD4];
#pragma unroll
                for (int e = 0; e < FA_TD4; e++) vv[e] = Vs[(j4 * 4 + jj) * FA_D4 + c + e * FA_CX];
#pragma unroll
                for (int a = 0; a < TQ; a++) {
                    ELEM p = jj == 0 ? pv[a].x : jj == 1 ? pv[a].y : jj == 2 ? pv[a].z : pv[a].w;
#pragma unroll
                    for (int e = 0; e < FA_TD4; e++) acc[a][e] = fma(fa_splat(p), vv[e], acc[a][e]);
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE); // every P V loop done: Vs and Ps free

        if (more) {
#pragma unroll
            for (int u = 0; u < FA_LV; u++) {
                int t = lid + u * FA_WG;
                if (FA_KV % FA_WG == 0 || t < FA_KV) Vs[t] = vreg[u];
            }
        }
    }

    // The row sums: the CX items' partial sums in a fixed order (Ms was last read before
    // the loop's last barrier but one).
#pragma unroll
    for (int a = 0; a < TQ; a++) Ms[(r + a * FA_RY) * FA_CX + c] = l[a];
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int a = 0; a < TQ; a++) {
        int row = r + a * FA_RY;
        int i = q0 + row;
        ELEM ls = 0;
        for (int u = 0; u < FA_CX; u++) ls += Ms[row * FA_CX + u];
        if (i < seq) {
            __global ELEM *dst = o + base + i * dim;
#pragma unroll
            for (int e = 0; e < FA_TD4; e++) {
                int d = (c + e * FA_CX) * 4;
                ELEM4 y = acc[a][e] / ls;
                if (vec && d < dim) {
                    vstore4(y, 0, dst + d);
                } else if (!vec) {
                    if (d < dim) dst[d] = y.x;
                    if (d + 1 < dim) dst[d + 1] = y.y;
                    if (d + 2 < dim) dst[d + 2] = y.z;
                    if (d + 3 < dim) dst[d + 3] = y.w;
                }
            }
        }
    }
}
