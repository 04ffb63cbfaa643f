// gemm_mma.cl: GEMM on NVIDIA's tensor cores from OpenCL C, through inline PTX mma.sync.
//
// Purpose: the "opencl-mma" variant of gemm/{nn,nt,tn,batched}/{tf32,float16,bfloat16}: the
// tensor cores of NVIDIA GPUs of sm_80 and newer through NVIDIA's OpenCL driver (OpenCL C
// 1.2, no fp16 arithmetic, no subgroups), whose compiler takes inline PTX. A work-group of
// WARPS_M x WARPS_N warps computes a BM x BN tile of D, each warp a (BM/WARPS_M) x
// (BN/WARPS_N) tile of m16n8 mma tiles (64 x 32 by default) accumulated in float32
// registers. The tiles of op(A) and op(B) pass through double-buffered local memory: the
// next k step is read from global memory into registers while the warps compute the
// current one from local memory, then stored to the other buffer (one barrier per k step).
// Portable OpenCL devices never build this file: the host refuses them (ErrUnsupported),
// and without PRISM_PTX the file is an #error.
//
// Arguments: those of gemm.cl's gemm, in the same order and with the same meaning
// (row-major; op(X) = X or X^T; A stored m x k (lda >= k) or, transposed, k x m; B stored
// k x n or, transposed, n x k; C and D m x n, sharing ldc and strideC):
//   gemm_mma(d, c, a, b, alpha, beta, m, n, k, lda, ldb, ldc, strideA, strideB, strideC, transA, transB)
//     d[z*strideC + i*ldc + j] = alpha * sum_l op(A_z)[i][l] * op(B_z)[l][j]
//                                + beta * c[z*strideC + i*ldc + j]
//     for 0 <= i < m, 0 <= j < n, z = get_group_id(2). a and b hold the inputs as stored:
//     floats (PREC 1) or the bits of IEEE binary16 or bfloat16 values in ushorts (PREC 3,
//     4); c, d, alpha and beta are float. transA, transB: 0 or 1, runtime flags (uniform
//     branches at the tile loads and stores only, so one build serves all four layouts).
//     d may be c (each element is read, then written, by the same work-item). When beta ==
//     0, c is not read. Every index the kernel forms must fit an int; the host checks it.
//
// Tunables (-D, part of the cache key):
//   PREC     1 tf32: A, B float, each rounded to tf32 with cvt.rna.tf32.f32 (ties away from
//            zero) as it is stored to local memory, mma m16n8k8; 3 float16, 4 bfloat16:
//            A, B ushort bits, mma m16n8k16 (mma.cu's numbering)           default 3
//   BM, BN   tile of D per work-group                                      default 128, 128
//   BK       k step of a local tile, in elements: 64 bytes of each row    default 32 (16 for tf32)
//   WARPS_M, WARPS_N  warps of the work-group along m and n               default 2, 4
//   GROUP_M  tile rows of D a group of consecutive work-groups covers (L2 reuse) default 8
//   PRISM_PTX  defined by the host on NVIDIA's OpenCL: the inline PTX is compiled (the CUDA
//            prelude's PRISM_CUDA too: clang emits it as text there); neither: #error
//   PRISM_MMA_EMULATE  tests only, on any OpenCL device: mma.sync and cvt.rna are computed
//            in OpenCL C from the fragments the lanes of a warp leave in local memory (the
//            PTX ISA's fragment layouts, read back), so that PoCL runs everything else of
//            this kernel; the host puts kernels/convert.cl in front
//   Local memory: 2 buffers x (BM + BN) rows x (BK*size/4 + 4) 32-bit words: 40960 bytes
//   by default (NVIDIA's OpenCL allows 48 KiB per work-group).
//   Constraints (checked with #error): BM a multiple of 16*WARPS_M, BN of 8*WARPS_N, BK of
//   the mma's k (16; 8 for tf32), BM*BK and BN*BK whole pairs of 16-byte chunks per item.
// Variants: PREC 1, 3 and 4, each one build for every layout and batch.
// Launch: 3D, local (THREADS, 1, 1) with THREADS = WARPS_M*WARPS_N*32 (256 by default),
//   global (ceil(m/BM)*ceil(n/BN)*THREADS, 1, batch): group x computes one tile of D
//   (grouped by GROUP_M tile rows), group z matrix z. NVIDIA runs the consecutive local ids
//   of a 1D work-group as warps: warp = id / 32, lane = id % 32 (mma.sync's %laneid).
// Boundaries: loads outside op(A) or op(B) put zeros in local memory (a 16-byte chunk that
//   crosses an edge, or whose address is not 16-byte aligned, is read element by element),
//   stores outside C are skipped. No work-item returns early: all reach every barrier and
//   every mma.sync of their warp.
// Accuracy: tensor cores add the products of one mma in an order and with an alignment of
//   their own (they may truncate rather than round), as in mma.cu: the precision's
//   tolerance takes a unit of 2^-23 for the float32 accumulation (Precision.Tolerance),
//   plus, for tf32, the rounding of both inputs.
//
// Local layout: every tile is stored k-contiguous, rows of op(A) (m) or columns of op(B)
// (n) by 32-bit words of k (two 16-bit elements, the lower k in the low half, as mma.sync
// takes them; or one tf32), in rows of KW + 4 words, so that every fragment register is one
// 32-bit load and the 32 loads of a warp fall in 32 distinct banks (rows 20 words apart by
// default: the rows g = 0..7 start at distinct multiples of 4 banks, t = 0..3 fill them).
// In words, both mma shapes read the same fragments: a0..a3 at (row g, word t), (g+8, t),
// (g, t+4), (g+8, t+4), b0, b1 at (column g, word t), (g, t+4). A tile stored k-contiguous
// in global memory (A, or B^T) moves as 16-byte chunks; one stored m- or n-contiguous (A^T,
// or B) is transposed as it is stored: 16-bit elements of rows k and k+1 are paired into
// words.

#ifndef PREC
#define PREC 3
#endif
#if PREC == 1
#define IN float
#define IN_BYTES 4
#define MMA_K 8
#elif PREC == 3 || PREC == 4
#define IN ushort
#define IN_BYTES 2
#define MMA_K 16
#else
#error "gemm_mma.cl: PREC must be 1 (tf32), 3 (float16) or 4 (bfloat16)"
#endif

#if !defined(PRISM_PTX) && !defined(PRISM_CUDA) && !defined(PRISM_MMA_EMULATE)
#error "gemm_mma.cl needs NVIDIA's OpenCL (inline PTX): the host defines PRISM_PTX there"
#endif

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK (64 / IN_BYTES)
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 4
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif

#define THREADS (WARPS_M * WARPS_N * 32)
#define WTM (BM / WARPS_M) // warp tile
#define WTN (BN / WARPS_N)
#define MT (WTM / 16) // mma tiles per warp
#define NT (WTN / 8)
#define EPC (16 / IN_BYTES)       // elements per 16-byte chunk
#define KW ((BK * IN_BYTES) / 4)  // 32-bit words of k in a tile row
#define CPR (KW / 4)              // 16-byte chunks in a tile row
#define SROW (KW + 4)             // words between local rows
#define SA (BM * SROW)            // words of one A buffer
#define SB (BN * SROW)
#define SLOTS_A ((BM * KW) / (4 * THREADS)) // 16-byte chunks per work-item per A tile
#define SLOTS_B ((BN * KW) / (4 * THREADS))

#if BM % (WARPS_M * 16) != 0 || BN % (WARPS_N * 8) != 0
#error "gemm_mma.cl: BM must be a multiple of 16*WARPS_M and BN of 8*WARPS_N"
#endif
#if (BK * IN_BYTES) % 32 != 0
#error "gemm_mma.cl: BK must be a multiple of the mma's k (16 elements; 8 for tf32)"
#endif
#if (BM * KW) % (8 * THREADS) != 0 || (BN * KW) % (8 * THREADS) != 0
#error "gemm_mma.cl: a tile of A and of B must be whole pairs of 16-byte chunks per work-item"
#endif

#ifndef PRISM_CUDA
#define make_uint4(a, b, c, d) ((uint4)((a), (b), (c), (d)))
#define LOCAL_UINT4 __local uint4
#else
#define LOCAL_UINT4 uint4
#endif

#if PREC == 1
// tf32_bits rounds the float with bits x to tf32 (cvt.rna.tf32.f32: to nearest, ties away
// from zero; the mma reads the upper 19 bits).
inline uint tf32_bits(uint x) {
#ifdef PRISM_MMA_EMULATE
    if ((x & 0x7f800000u) != 0x7f800000u) {
        x = (x + 0x1000u) & 0xffffe000u;
    }
    return x;
#else
    uint r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(as_float(x)));
    return r;
#endif
}
#endif

// mma_chunk returns the bits of the EPC elements of a stored row from p on, of which the
// first valid (0 or less: none) lie inside the matrix; the others read as zero. vec: p is
// 16-byte aligned, so a whole chunk is one 16-byte load.
inline uint4 mma_chunk(__global const IN *p, int valid, int vec) {
    if (vec && valid >= EPC) {
        return *(__global const uint4 *)p;
    }
    uint w[4] = {0u, 0u, 0u, 0u};
#if IN_BYTES == 2
#pragma unroll
    for (int e = 0; e < 8; ++e) {
        if (e < valid) {
            w[e >> 1] |= (uint)p[e] << (16 * (e & 1));
        }
    }
#else
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        if (e < valid) {
            w[e] = as_uint(p[e]);
        }
    }
#endif
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// load_slot returns 16-byte chunk s of work-item tid of a tile of op(X): rows r0.. of op(A)
// (or columns of op(B)), k columns k0..k0+BK. kmajor: X is stored k-contiguous (A, or B^T:
// row r, columns k), and chunk s is CPR-th of a row; else X is stored m- or n-contiguous
// (A^T, or B: row k, columns r), and chunk s holds EPC consecutive r of one k (16-bit
// elements: chunks s and s+1 are rows k and k+1 of the same columns, paired at the store).
// rows and k are the extents of op(X); x is the matrix of this batch index, ld its leading
// dimension.
inline uint4 load_slot(__global const IN *x, int ld, int vec, int kmajor, int r0, int rows, int k0, int k, int tid, int s) {
    int gr, gc, nrows, ncols; // the chunk's stored row and column, and the stored extents
    if (kmajor) {
        const int ch = tid + s * THREADS;
        const int r = ch / CPR;
        gr = r0 + r;
        gc = k0 + (ch - r * CPR) * EPC;
        nrows = rows;
        ncols = k;
    } else {
#if IN_BYTES == 2
        const int u = tid + (s >> 1) * THREADS;
        const int cc = u / KW;
        gr = k0 + 2 * (u - cc * KW) + (s & 1);
#else
        const int u = tid + s * THREADS;
        const int cc = u / KW;
        gr = k0 + (u - cc * KW);
#endif
        gc = r0 + cc * EPC;
        nrows = k;
        ncols = rows;
    }
    const int valid = gr < nrows ? ncols - gc : 0;
    return mma_chunk(valid > 0 ? x + (gr * ld + gc) : x, valid, vec);
}

// STORE_TILE stores the chunks raw[0..SLOTS) that load_slot read into buffer buf of the
// local tile S (SX words a buffer) in the k-contiguous layout (see the file's header).
// 16-bit m- or n-contiguous tiles: work-items of a warp cover 16 pairs of k rows and two
// chunks of 8 columns, whose rows of S lie 8 rows = 160 words (0 mod 32) apart; the odd
// chunk stores its rows in the order i ^ 4 (80 words, 16 mod 32, away), so that the 32
// stores of each step fall in distinct banks.
#if PREC == 1
#define TO_LOCAL(v) make_uint4(tf32_bits((v).x), tf32_bits((v).y), tf32_bits((v).z), tf32_bits((v).w))
#define MN_STORE(S, base, raw, SLOTS)                                      \
    for (int s = 0; s < (SLOTS); ++s) {                                    \
        const int u = tid + s * THREADS;                                   \
        const int cc = u / KW;                                             \
        const int at = (base) + cc * 4 * SROW + (u - cc * KW);             \
        S[at] = tf32_bits(raw[s].x);                                       \
        S[at + SROW] = tf32_bits(raw[s].y);                                \
        S[at + 2 * SROW] = tf32_bits(raw[s].z);                            \
        S[at + 3 * SROW] = tf32_bits(raw[s].w);                            \
    }
#else
#define TO_LOCAL(v) (v)
#define MN_STORE(S, base, raw, SLOTS)                                      \
    for (int s = 0; s < (SLOTS); s += 2) {                                 \
        const int u = tid + (s >> 1) * THREADS;                            \
        const int cc = u / KW;                                             \
        const int at = (base) + cc * 8 * SROW + (u - cc * KW);             \
        const int odd = cc & 1, sw = odd << 2;                             \
        /* rows k (low halves) and k+1, columns 0-3 and 4-7 exchanged in odd chunks */ \
        const uint4 lo = raw[s], hi = raw[s + 1];                          \
        const uint l0 = odd ? lo.z : lo.x, l1 = odd ? lo.w : lo.y;         \
        const uint l2 = odd ? lo.x : lo.z, l3 = odd ? lo.y : lo.w;         \
        const uint h0 = odd ? hi.z : hi.x, h1 = odd ? hi.w : hi.y;         \
        const uint h2 = odd ? hi.x : hi.z, h3 = odd ? hi.y : hi.w;         \
        S[at + (0 ^ sw) * SROW] = (l0 & 0xffffu) | (h0 << 16);             \
        S[at + (1 ^ sw) * SROW] = (l0 >> 16) | (h0 & 0xffff0000u);         \
        S[at + (2 ^ sw) * SROW] = (l1 & 0xffffu) | (h1 << 16);             \
        S[at + (3 ^ sw) * SROW] = (l1 >> 16) | (h1 & 0xffff0000u);         \
        S[at + (4 ^ sw) * SROW] = (l2 & 0xffffu) | (h2 << 16);             \
        S[at + (5 ^ sw) * SROW] = (l2 >> 16) | (h2 & 0xffff0000u);         \
        S[at + (6 ^ sw) * SROW] = (l3 & 0xffffu) | (h3 << 16);             \
        S[at + (7 ^ sw) * SROW] = (l3 >> 16) | (h3 & 0xffff0000u);         \
    }
#endif
// STORE_CHUNK stores the 16-byte chunk v at p (__local uint *, 16-byte aligned). Oclgrind
// 21.10 turns a store of a vector built from scalars (TO_LOCAL's, or a chunk mma_chunk
// assembled) into a store of the undefined vector and one per component, and its
// --uninitialized check reports the first: there (PRISM_OCLGRIND, defined by the OpenCL
// backend) vstore4, a call, stores the same 16 bytes.
#ifdef PRISM_OCLGRIND
#define STORE_CHUNK(p, v) vstore4((v), 0, (p))
#else
#define STORE_CHUNK(p, v) (*(LOCAL_UINT4 *)(p) = (v))
#endif
#define STORE_TILE(S, SX, raw, SLOTS, kmajor, buf)                                   \
    if (kmajor) {                                                                    \
        for (int s = 0; s < (SLOTS); ++s) {                                          \
            const int ch = tid + s * THREADS;                                        \
            const int r = ch / CPR;                                                  \
            STORE_CHUNK(&S[(buf) * (SX) + r * SROW + (ch - r * CPR) * 4], TO_LOCAL(raw[s])); \
        }                                                                            \
    } else {                                                                         \
        MN_STORE(S, (buf) * (SX), raw, SLOTS)                                        \
    }

#ifdef PRISM_MMA_EMULATE
// The emulation of mma.sync (tests): f holds the fragments of the 32 lanes of one warp, 6
// words a lane (a0..a3, b0, b1). emu_a and emu_b return element (row, kk) of A and (kk,
// col) of B from the lane and register the PTX ISA places it in ("Matrix Fragments for
// mma.m16n8k16 / m16n8k8": groupID = lane >> 2, threadID_in_group = lane % 4).
#if PREC == 3
#define EMU_CONV(h) prism_half(h)
#elif PREC == 4
#define EMU_CONV(h) prism_bfloat16(h)
#endif
inline float emu_a(__local const uint *f, int row, int kk) {
#if IN_BYTES == 2
    const uint w = f[((row & 7) * 4 + ((kk & 7) >> 1)) * 6 + (row >> 3) + 2 * (kk >> 3)];
    return EMU_CONV((ushort)((kk & 1) ? w >> 16 : w & 0xffffu));
#else
    return as_float(f[((row & 7) * 4 + (kk & 3)) * 6 + (row >> 3) + 2 * (kk >> 2)]);
#endif
}
inline float emu_b(__local const uint *f, int kk, int col) {
#if IN_BYTES == 2
    const uint w = f[(col * 4 + ((kk & 7) >> 1)) * 6 + 4 + (kk >> 3)];
    return EMU_CONV((ushort)((kk & 1) ? w >> 16 : w & 0xffffu));
#else
    return as_float(f[(col * 4 + (kk & 3)) * 6 + 4 + (kk >> 2)]);
#endif
}
// mma_emulate computes c += A*B of one m16n8 tile for this lane: c0, c1 at row g, columns
// 2t and 2t+1; c2, c3 at row g+8. Every work-item of the group calls it together.
void mma_emulate(float *c, const uint *a, const uint *b, __local uint *f, int lane) {
    for (int q = 0; q < 4; ++q) {
        f[lane * 6 + q] = a[q];
    }
    f[lane * 6 + 4] = b[0];
    f[lane * 6 + 5] = b[1];
    barrier(CLK_LOCAL_MEM_FENCE);
    const int g = lane >> 2, t = lane & 3;
    float r[4];
    for (int q = 0; q < 4; ++q) {
        const int row = g + 8 * (q >> 1), col = 2 * t + (q & 1);
        float s = c[q];
        for (int kk = 0; kk < MMA_K; ++kk) {
            s += emu_a(f, row, kk) * emu_b(f, kk, col);
        }
        r[q] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int q = 0; q < 4; ++q) {
        c[q] = r[q];
    }
}
#define MMA(c, a, b) mma_emulate((c), (a), (b), emu + warp * 32 * 6, lane)
#else
#if PREC == 1
#define MMA_OP "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
#elif PREC == 3
#define MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#else
#define MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#endif
// MMA: c (4 floats) += A*B of one m16n8 tile, a (4 words) and b (2 words) the fragments.
#define MMA(c, a, b)                                                                        \
    asm volatile(MMA_OP " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"            \
                 : "+f"((c)[0]), "+f"((c)[1]), "+f"((c)[2]), "+f"((c)[3])                   \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"((b)[0]), "r"((b)[1]))
#endif

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void gemm_mma(__global float *d, __global const float *c, __global const IN *a, __global const IN *b,
              float alpha, float beta, int m, int n, int k, int lda, int ldb, int ldc,
              int strideA, int strideB, int strideC, int transA, int transB) {
    __local uint As[2 * SA] __attribute__((aligned(16)));
    __local uint Bs[2 * SB] __attribute__((aligned(16)));
#ifdef PRISM_MMA_EMULATE
    __local uint emu[THREADS * 6];
#endif

    const int tid = (int)get_local_id(0);
    const int warp = tid >> 5, lane = tid & 31; // consecutive local ids form a warp
    const int g = lane >> 2, t = lane & 3;      // mma.sync's groupID, threadID_in_group
    const int z = (int)get_group_id(2);
    a += z * strideA;
    b += z * strideB;
    c += z * strideC;
    d += z * strideC;

    // Work-groups take the tiles of D in groups of GROUP_M tile rows, column after column
    // within a group, so that the groups running at one time share rows of A and columns of
    // B in L2 (as mma.cu).
    const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    const int id = (int)get_group_id(0), per_group = GROUP_M * tiles_n;
    const int group = id / per_group, in_group = id - group * per_group;
    const int first_m = group * GROUP_M;
    const int group_m = min(tiles_m - first_m, GROUP_M);
    const int col_tile = in_group / group_m;
    const int m0 = (first_m + in_group - col_tile * group_m) * BM, n0 = col_tile * BN;
    const int wm0 = (warp / WARPS_N) * WTM, wn0 = (warp - (warp / WARPS_N) * WARPS_N) * WTN;

    // k-contiguous operands (A, B^T) move as chunks; 16-byte loads where every chunk is
    // aligned (the matrix's start and its rows).
    const int akm = !transA, bkm = transB;
    const int vecA = (((size_t)a & 15) == 0) && ((lda & (EPC - 1)) == 0);
    const int vecB = (((size_t)b & 15) == 0) && ((ldb & (EPC - 1)) == 0);

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
        for (int j = 0; j < NT; ++j) {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                acc[i][j][q] = 0.0f;
            }
        }
    }

    uint4 ra[SLOTS_A], rb[SLOTS_B];
#pragma unroll
    for (int s = 0; s < SLOTS_A; ++s) {
        ra[s] = load_slot(a, lda, vecA, akm, m0, m, 0, k, tid, s);
    }
#pragma unroll
    for (int s = 0; s < SLOTS_B; ++s) {
        rb[s] = load_slot(b, ldb, vecB, bkm, n0, n, 0, k, tid, s);
    }
    STORE_TILE(As, SA, ra, SLOTS_A, akm, 0)
    STORE_TILE(Bs, SB, rb, SLOTS_B, bkm, 0)
    barrier(CLK_LOCAL_MEM_FENCE);

    const int ktiles = (k + BK - 1) / BK;
    for (int kt = 0; kt < ktiles; ++kt) {
        const int cur = kt & 1;
        const int more = kt + 1 < ktiles;
        if (more) { // the next k step, into registers: its latency hides behind the mma
            const int k0 = (kt + 1) * BK;
#pragma unroll
            for (int s = 0; s < SLOTS_A; ++s) {
                ra[s] = load_slot(a, lda, vecA, akm, m0, m, k0, k, tid, s);
            }
#pragma unroll
            for (int s = 0; s < SLOTS_B; ++s) {
                rb[s] = load_slot(b, ldb, vecB, bkm, n0, n, k0, k, tid, s);
            }
        }
#pragma unroll
        for (int ks = 0; ks < KW; ks += 8) {
            uint af[MT][4], bf[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const int at = cur * SA + (wm0 + i * 16 + g) * SROW + ks + t;
                af[i][0] = As[at];
                af[i][1] = As[at + 8 * SROW];
                af[i][2] = As[at + 4];
                af[i][3] = As[at + 8 * SROW + 4];
            }
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int at = cur * SB + (wn0 + j * 8 + g) * SROW + ks + t;
                bf[j][0] = Bs[at];
                bf[j][1] = Bs[at + 4];
            }
#pragma unroll
            for (int i = 0; i < MT; ++i) {
#pragma unroll
                for (int j = 0; j < NT; ++j) {
                    MMA(acc[i][j], af[i], bf[j]);
                }
            }
        }
        if (more) { // the buffer read in the previous step: every warp is past it
            STORE_TILE(As, SA, ra, SLOTS_A, akm, cur ^ 1)
            STORE_TILE(Bs, SB, rb, SLOTS_B, bkm, cur ^ 1)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    // The accumulator of mma tile (i, j) holds, in this work-item, rows g and g+8 and
    // columns 2t, 2t+1.
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
        for (int j = 0; j < NT; ++j) {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int row = m0 + wm0 + i * 16 + g + 8 * (q >> 1);
                const int col = n0 + wn0 + j * 8 + 2 * t + (q & 1);
                if (row < m && col < n) {
                    float r = alpha * acc[i][j][q];
                    if (beta != 0.0f) {
                        r += beta * c[row * ldc + col];
                    }
                    d[row * ldc + col] = r;
                }
            }
        }
    }
}
