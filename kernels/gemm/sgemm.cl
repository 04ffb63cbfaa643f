// sgemm.cl: fp32 general matrix multiply D = alpha*op(A)*op(B) + beta*C on OpenCL GPUs,
// single and strided batched: sgemm.cu's SIMT design in portable OpenCL C 1.2.
//
// Purpose: the "opencl-simt" variant of gemm/{nn,nt,tn,batched}/float32: the algorithm and
// tunables of sgemm.cu (the cuda-simt variant; its header explains the design) for any
// OpenCL GPU: block tiles of C per work-group, warp tiles of 32 work-items, 8 x 8 outputs
// per work-item as 2 x 2 fragments of 4 x 4, A stored transposed in local memory so that
// the inner loop reads 16-byte vectors of both operands, 16-byte global loads where the
// alignment allows them, double-buffered local tiles with the next k-tile prefetched into
// registers while the current one is computed (one barrier per k-tile), the next step's
// operands read from local memory while the current step's fma run, fma accumulation in
// fp32. No subgroups, no inline assembly, nothing vendor-specific: "warps" are groups of
// 32 consecutive local ids, which matters only for speed (bank conflicts, coalescing),
// never for correctness. The transposes are compile-time (TRANS_A, TRANS_B): each
// combination is its own build, as in sgemm.cu.
//
// Arguments (row-major; sgemm.cu's sgemm_simt, i.e. gemm.cl's gemm without its transA and
// transB flags; op(X) = X or X^T; op(A) is m x k, op(B) k x n, C and D m x n; element
// (i, j) of matrix z of X lives at x[z*strideX + i*ldx + j] of the STORED matrix, so A is
// stored m x k (lda >= k) or, TRANS_A, k x m (lda >= m), B k x n (ldb >= n) or, TRANS_B,
// n x k (ldb >= k), C and D m x n (ldc >= n); C and D share ldc and strideC):
//   sgemm_simt(d, c, a, b, alpha, beta, m, n, k, lda, ldb, ldc, strideA, strideB, strideC)
//     d[z*strideC + i*ldc + j] = alpha * sum_l op(A_z)[i][l] * op(B_z)[l][j]
//                                + beta * c[z*strideC + i*ldc + j]
//     for 0 <= i < m, 0 <= j < n, z = get_group_id(2).
//
// Semantics: as gemm.cl's gemm. d may be the same buffer as c (each element is read, then
// written, by the same work-item); d must not overlap a or b (those are restrict). When
// beta == 0, c is not read (BLAS semantics: C may hold NaN). Every index the kernel forms
// must fit an int; the host checks it (GEMMShape.Validate).
//
// Tunables (-D, part of the cache key; kernels/gemm/clsimt.go builds it with
// SimtTunables, whose MIN_BLOCKS has no OpenCL counterpart and is not passed):
//   TRANS_A     0: A stored m x k; 1: A stored k x m                          default 0
//   TRANS_B     0: B stored k x n; 1: B stored n x k                          default 0
//   BM, BN      tile of C computed by one work-group: BM x BN                  default 64, 128
//   BK          depth of the k-tile (4 or a multiple of 8)                     default 8
//   WM, WN      tile of C computed by one warp of 32 items, WM x WN with
//               (WM/8)*(WN/8) = 32: each item 2 x 2 fragments of 4 x 4         default 32, 64
//   PAD         floats of padding per local row (a multiple of 4)              default 4
//   GROUP_M     tile rows per raster group (L2 reuse; 1 = row-major order)     default 16
//   Constraints (checked with #error): sgemm.cu's: BM % WM == BN % WN == 0,
//   (WM/8)*(WN/8) == 32, BK == 4 or BK % 8 == 0, at most 1024 work-items, BM*BK/4 and
//   BN*BK/4 multiples of the work-item count; for BK >= 8, BM and BN multiples of 16 and the
//   warps a multiple of BM/16 (BN/16) or of BK/8; BM/4 and BN/4 divide the work-item count
//   or are multiples of it; PAD % 4 == 0.
// Variants: the four (TRANS_A, TRANS_B) builds of one set of tunables.
// Launch: 3D, local (NTHREADS, 1, 1) with NTHREADS = (BM/WM)*(BN/WN)*32 (128 by default),
//   global (ceil(m/BM)*ceil(n/BN)*NTHREADS, 1, batch): group x computes one tile of D
//   (remapped in groups of GROUP_M tile rows; any grid is covered exactly once), group z
//   matrix z. Static local memory of 2*BK*(BM+PAD + BN+PAD)*4 bytes (12.5 KiB by default).
// Boundaries: per work-group and operand, a k-tile that lies inside op(X) in m (or n) and
//   in k, with ldx % 4 == 0 and a 16-byte aligned matrix base x + z*strideX, is loaded with
//   unguarded 16-byte loads (uniform branches). Otherwise each 4-element group is loaded as
//   one vector when it is in range and aligned, else element by element, out-of-range
//   elements zero-filled (zero padding adds nothing to the dot products). Stores of D are
//   16-byte where the group of 4 columns lies inside C and ldc, d and c allow it, else
//   element by element; stores outside C are skipped. No work-item returns early: all
//   reach every barrier.
// Accuracy: each element is one sequential dot product over l = 0..k-1 in fp32 fma (one
//   rounding per step), then alpha*acc + beta*c: at most k+2 roundings per term, within
//   the gamma_{k+2} bound of GEMMTolerance (ref.go), as gemm.cl.
//
// Layout of a work-group, local tiles and the placement of the global loads: as sgemm.cu
// (tile_coord there, tile_mn and tile_kk here): As[buf][kk][m] and Bs[buf][kk][n] in every
// transpose combination; an operand stored with k contiguous (A not transposed, B
// transposed) is transposed on its way into local memory (4 scalar stores per vector).
// Local memory is kernel-scope arrays, and the helpers take local pointers through
// LOCAL_FLOAT, so that the CUDA prelude (which has no __local pointer parameters) compiles
// this file too.

#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef WM
#define WM 32
#endif
#ifndef WN
#define WN 64
#endif
#ifndef PAD
#define PAD 4
#endif
#ifndef GROUP_M
#define GROUP_M 16
#endif

#define WARPS_N (BN / WN)
#define NTHREADS ((BM / WM) * WARPS_N * 32)
#define NWARPS (NTHREADS / 32)
#define LANES_N (WN / 8)                  // lanes of a warp along n; WM/8 along m
#define LOADS_A (BM * BK / 4 / NTHREADS)  // 16-byte loads of the A tile per work-item
#define LOADS_B (BN * BK / 4 / NTHREADS)
#define ROW_A (BM + PAD)                  // floats between rows kk of a local A tile
#define ROW_B (BN + PAD)
#define BUF_A (BK * ROW_A)                // floats of one buffer of the A tile
#define BUF_B (BK * ROW_B)
#define KC_A (!TRANS_A)                   // A stored k-contiguous
#define KC_B (TRANS_B)                    // B stored k-contiguous

#if BM < 1 || BN < 1 || BK < 1 || WM < 1 || WN < 1 || PAD < 0 || GROUP_M < 1
#error "sgemm.cl: BM, BN, BK, WM, WN and GROUP_M must be positive, PAD not negative"
#endif
#if BM % WM != 0 || BN % WN != 0
#error "sgemm.cl: BM and BN must be multiples of WM and WN"
#endif
#if WM % 8 != 0 || WN % 8 != 0 || (WM / 8) * (WN / 8) != 32
#error "sgemm.cl: a warp tile WM x WN must hold 32 lanes of 2 x 2 fragments of 4 x 4: (WM/8)*(WN/8) == 32"
#endif
#if (BK != 4 && BK % 8 != 0) || PAD % 4 != 0
#error "sgemm.cl: BK must be 4 or a multiple of 8, PAD a multiple of 4"
#endif
#if NTHREADS > 1024
#error "sgemm.cl: more than 1024 work-items per group"
#endif
#if (BM * BK / 4) % NTHREADS != 0 || (BN * BK / 4) % NTHREADS != 0
#error "sgemm.cl: BM*BK/4 and BN*BK/4 must be multiples of the work-item count"
#endif
#if BK != 4 && (BM % 16 != 0 || BN % 16 != 0 || (NWARPS % (BM / 16) != 0 && NWARPS % (BK / 8) != 0) || \
                (NWARPS % (BN / 16) != 0 && NWARPS % (BK / 8) != 0))
#error "sgemm.cl: for BK >= 8, BM and BN must be multiples of 16 and the warps a multiple of BM/16 (BN/16) or of BK/8"
#endif
#if (NTHREADS % (BM / 4) != 0 && (BM / 4) % NTHREADS != 0) || (NTHREADS % (BN / 4) != 0 && (BN / 4) % NTHREADS != 0)
#error "sgemm.cl: BM/4 and BN/4 must divide the work-item count or be multiples of it"
#endif
#if TRANS_A != 0 && TRANS_A != 1
#error "sgemm.cl: TRANS_A must be 0 or 1"
#endif
#if TRANS_B != 0 && TRANS_B != 1
#error "sgemm.cl: TRANS_B must be 0 or 1"
#endif

#ifdef PRISM_CUDA
#define LOCAL_FLOAT float
#define LOCAL_FLOAT4 float4
#else
#define LOCAL_FLOAT __local float
#define LOCAL_FLOAT4 __local float4
#define make_float4(x, y, z, w) ((float4)((x), (y), (z), (w)))
#endif

// aligned16 reports whether p is 16-byte aligned.
inline int aligned16(__global const float *p) { return ((size_t)p & 15) == 0; }

// tile_mn and tile_kk place vector q (0 <= q < LOADS) of work-item tid in a BK-deep tile of
// ext rows (BM or BN) of op(X): row mn and k offset kk of the tile (sgemm.cu's tile_coord;
// ext and kc are constants after inlining). kc (k contiguous in memory): the vector holds 4
// consecutive k of row mn; for BK >= 8 each warp covers 16 rows times 2 adjacent vectors of
// k, so that the transposing stores hit distinct banks. Else (m or n contiguous): the
// vector holds rows mn..mn+3 of k offset kk.
inline int tile_mn(int tid, int q, int ext, int kc) {
    const int warp = tid / 32, lane = tid % 32;
    const int rg = ext >= 16 ? ext / 16 : 1, pg = BK >= 8 ? BK / 8 : 1, e4 = ext / 4;
    if (kc) {
        if (BK == 4) {
            return tid + q * NTHREADS;
        }
        if (NWARPS % rg == 0) {
            return (warp % rg) * 16 + lane / 2;
        }
        return (warp / pg) * 16 + lane / 2 + q * (NWARPS / pg) * 16;
    }
    if (NTHREADS % e4 == 0) {
        return (tid % e4) * 4;
    }
    const int r = e4 >= NTHREADS ? e4 / NTHREADS : 1; // R vectors of one k per work-item
    return tid * 4 + (q % r) * NTHREADS * 4;
}

inline int tile_kk(int tid, int q, int ext, int kc) {
    const int warp = tid / 32, lane = tid % 32;
    const int rg = ext >= 16 ? ext / 16 : 1, pg = BK >= 8 ? BK / 8 : 1, e4 = ext / 4;
    if (kc) {
        if (BK == 4) {
            return 0;
        }
        if (NWARPS % rg == 0) {
            return ((warp / rg) * 2 + lane % 2) * 4 + q * (NWARPS / rg) * 8;
        }
        return ((warp % pg) * 2 + lane % 2) * 4;
    }
    if (NTHREADS % e4 == 0) {
        return tid / e4 + q * (NTHREADS / e4);
    }
    const int r = e4 >= NTHREADS ? e4 / NTHREADS : 1;
    return q / r;
}

// load_vec loads vector q of work-item tid of one BK-deep tile of an operand: rows mn0.. of
// op(X) (valid below mnLim) and k columns k0.. (valid below kLim). kc: element (r, l) lives
// at x[r*ld + l] (k contiguous), else at x[l*ld + r]. full: the tile lies inside the matrix
// and 16-byte loads are allowed (unguarded); vec: ld % 4 == 0 and x 16-byte aligned, so a
// group of 4 in range is one 16-byte load. Out-of-range elements are 0.
inline float4 load_vec(__global const float *restrict x, int ld, int mn0, int mnLim, int k0, int kLim,
                       int full, int vec, int tid, int q, int ext, int kc) {
    const int mn = tile_mn(tid, q, ext, kc), kk = tile_kk(tid, q, ext, kc);
    const int r = mn0 + mn, l = k0 + kk;
    if (full) {
        return *(__global const float4 *)(x + (kc ? r * ld + l : l * ld + r));
    }
    float e0 = 0.0f, e1 = 0.0f, e2 = 0.0f, e3 = 0.0f;
    if (kc) {
        if (r < mnLim) {
            __global const float *p = x + r * ld + l;
            if (vec && l + 3 < kLim) {
                return *(__global const float4 *)p;
            }
            if (l < kLim) e0 = p[0];
            if (l + 1 < kLim) e1 = p[1];
            if (l + 2 < kLim) e2 = p[2];
            if (l + 3 < kLim) e3 = p[3];
        }
    } else {
        if (l < kLim) {
            __global const float *p = x + l * ld + r;
            if (vec && r + 3 < mnLim) {
                return *(__global const float4 *)p;
            }
            if (r < mnLim) e0 = p[0];
            if (r + 1 < mnLim) e1 = p[1];
            if (r + 2 < mnLim) e2 = p[2];
            if (r + 3 < mnLim) e3 = p[3];
        }
    }
    return make_float4(e0, e1, e2, e3);
}

// store_vec writes v (vector q of work-item tid, as load_vec read it) into the local tile s
// (rows of rowLen floats, s[kk][mn]): transposed (4 scalar stores) when kc, else one 16-byte
// store.
inline void store_vec(LOCAL_FLOAT *s, int rowLen, float4 v, int tid, int q, int ext, int kc) {
    const int mn = tile_mn(tid, q, ext, kc), kk = tile_kk(tid, q, ext, kc);
    if (kc) {
        s[(kk + 0) * rowLen + mn] = v.x;
        s[(kk + 1) * rowLen + mn] = v.y;
        s[(kk + 2) * rowLen + mn] = v.z;
        s[(kk + 3) * rowLen + mn] = v.w;
    } else {
        *(LOCAL_FLOAT4 *)(s + kk * rowLen + mn) = v;
    }
}

// load_tiles reads the work-item's vectors of k-tile k0 of both operands into ra and rb
// (fullA, fullB: load_vec's full for each operand).
inline void load_tiles(float4 *ra, float4 *rb, __global const float *restrict a, __global const float *restrict b,
                       int lda, int ldb, int m, int n, int k, int m0, int n0, int k0, int fullA, int fullB,
                       int vecA, int vecB, int tid) {
#pragma unroll
    for (int q = 0; q < LOADS_A; ++q) {
        ra[q] = load_vec(a, lda, m0, m, k0, k, fullA, vecA, tid, q, BM, KC_A);
    }
#pragma unroll
    for (int q = 0; q < LOADS_B; ++q) {
        rb[q] = load_vec(b, ldb, n0, n, k0, k, fullB, vecB, tid, q, BN, KC_B);
    }
}

// store_tiles writes ra and rb into one buffer of the local tiles, as and bs.
inline void store_tiles(LOCAL_FLOAT *as, LOCAL_FLOAT *bs, const float4 *ra, const float4 *rb, int tid) {
#pragma unroll
    for (int q = 0; q < LOADS_A; ++q) {
        store_vec(as, ROW_A, ra[q], tid, q, BM, KC_A);
    }
#pragma unroll
    for (int q = 0; q < LOADS_B; ++q) {
        store_vec(bs, ROW_B, rb[q], tid, q, BN, KC_B);
    }
}

// outer accumulates the 8 x 8 outer product of one k step into acc: rows a0, a1 of A
// times columns b0, b1 of B.
inline void outer(float (*acc)[8], float4 a0, float4 a1, float4 b0, float4 b1) {
    const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
    const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            acc[i][j] = fma(av[i], bv[j], acc[i][j]);
        }
    }
}

// LOAD_TILES and STORE_TILES call load_tiles and store_tiles with the kernel's variables.
#define LOAD_TILES(K0, fullK)                                                                      \
    load_tiles(ra, rb, a, b, lda, ldb, m, n, k, m0, n0, (K0), insideA && (fullK), insideB && (fullK), vecA, vecB, tid)
#define STORE_TILES(BUF) store_tiles(As + (BUF) * BUF_A, Bs + (BUF) * BUF_B, ra, rb, tid)

// LOAD_FRAG reads the operands of step KK of local buffer BUF into fragment set P: rows
// rowA..+3 and rowA+WM/2..+3 of A, columns colB..+3 and colB+WN/2..+3 of B (16-byte loads).
#define LOAD_FRAG(P, BUF, KK)                                                                      \
    do {                                                                                           \
        LOCAL_FLOAT *pa_ = As + (BUF) * BUF_A + (KK) * ROW_A + rowA;                               \
        LOCAL_FLOAT *pb_ = Bs + (BUF) * BUF_B + (KK) * ROW_B + colB;                               \
        fa[P][0] = *(LOCAL_FLOAT4 *)pa_;                                                           \
        fa[P][1] = *(LOCAL_FLOAT4 *)(pa_ + WM / 2);                                                \
        fb[P][0] = *(LOCAL_FLOAT4 *)pb_;                                                           \
        fb[P][1] = *(LOCAL_FLOAT4 *)(pb_ + WN / 2);                                                \
    } while (0)

// OUTER accumulates the outer product of fragment set P into acc.
#define OUTER(P) outer(acc, fa[P][0], fa[P][1], fb[P][0], fb[P][1])

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1)))
void sgemm_simt(__global float *d, __global const float *c, __global const float *restrict a,
                __global const float *restrict b, float alpha, float beta, int m, int n, int k,
                int lda, int ldb, int ldc, int strideA, int strideB, int strideC) {
    // Two buffers of each operand's k-tile, As[buf][kk][m] and Bs[buf][kk][n].
    __local float As[2 * BUF_A] __attribute__((aligned(16)));
    __local float Bs[2 * BUF_B] __attribute__((aligned(16)));

    // Tile of this work-group: groups of GROUP_M tile rows, walked down each column of
    // tiles, so that the work-groups resident together share panels of A and B in L2.
    const int tilesM = (m + BM - 1) / BM, tilesN = (n + BN - 1) / BN;
    const int pid = (int)get_group_id(0);
    const int inGroup = GROUP_M * tilesN;
    const int first = (pid / inGroup) * GROUP_M;
    const int rows = min(tilesM - first, GROUP_M);
    const int rr = pid % inGroup;
    const int m0 = (first + rr % rows) * BM;
    const int n0 = (rr / rows) * BN;

    const int z = (int)get_group_id(2);
    a += z * strideA;
    b += z * strideB;
    c += z * strideC;
    d += z * strideC;

    // 16-byte loads where the row length and the matrix's base allow them: the same for
    // every work-item of the group.
    const int vecA = (lda & 3) == 0 && aligned16(a);
    const int vecB = (ldb & 3) == 0 && aligned16(b);
    const int insideA = vecA && m0 + BM <= m;
    const int insideB = vecB && n0 + BN <= n;

    const int tid = (int)get_local_id(0);
    const int warp = tid / 32, lane = tid % 32;
    const int rowA = (warp / WARPS_N) * WM + (lane / LANES_N) * 4; // first row of fragment 0
    const int colB = (warp % WARPS_N) * WN + (lane % LANES_N) * 4; // first column of fragment 0

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            acc[i][j] = 0.0f;
        }
    }

    // Prologue: k-tile 0 into buffer 0, and the operands of its first step into registers.
    float4 ra[LOADS_A], rb[LOADS_B];
    LOAD_TILES(0, BK <= k);
    STORE_TILES(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    float4 fa[2][2], fb[2][2]; // [step parity][fragment]: the next step's operands load during this step's fma
    LOAD_FRAG(0, 0, 0);

    // Main loop, one barrier per k-tile. The next k-tile's global loads are issued first, so
    // that they are in flight during BK-1 steps of fma; before the last step they are stored
    // into the other buffer (last read before the previous barrier), and after the barrier
    // the next tile's first operands are read. BK is even, so step 0 of every tile reads
    // into fragment set 0.
    int buf = 0;
    for (int k0 = 0; k0 < k; k0 += BK) {
        const int kn = k0 + BK;
        const int more = kn < k;
        if (more) {
            LOAD_TILES(kn, kn + BK <= k);
        }
#pragma unroll
        for (int kk = 0; kk < BK - 1; ++kk) {
            LOAD_FRAG((kk + 1) & 1, buf, kk + 1);
            OUTER(kk & 1);
        }
        if (more) {
            STORE_TILES(buf ^ 1);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (more) {
            LOAD_FRAG(0, buf ^ 1, 0);
        }
        OUTER((BK - 1) & 1);
        buf ^= 1;
    }

    // D = alpha*acc + beta*C: 16-byte where the 4 columns lie inside C and the layout allows.
    const int vecC = (ldc & 3) == 0 && aligned16(d) && (beta == 0.0f || aligned16(c));
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + rowA + (i / 4) * (WM / 2) + i % 4;
        if (row < m) {
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const int col = n0 + colB + j * (WN / 2);
                const int o = row * ldc + col;
                float v0 = alpha * acc[i][j * 4 + 0], v1 = alpha * acc[i][j * 4 + 1];
                float v2 = alpha * acc[i][j * 4 + 2], v3 = alpha * acc[i][j * 4 + 3];
                if (vecC && col + 3 < n) {
                    if (beta != 0.0f) {
                        const float4 cv = *(__global const float4 *)(c + o);
                        v0 += beta * cv.x;
                        v1 += beta * cv.y;
                        v2 += beta * cv.z;
                        v3 += beta * cv.w;
                    }
                    *(__global float4 *)(d + o) = make_float4(v0, v1, v2, v3);
                } else {
                    if (col < n) d[o] = beta != 0.0f ? v0 + beta * c[o] : v0;
                    if (col + 1 < n) d[o + 1] = beta != 0.0f ? v1 + beta * c[o + 1] : v1;
                    if (col + 2 < n) d[o + 2] = beta != 0.0f ? v2 + beta * c[o + 2] : v2;
                    if (col + 3 < n) d[o + 3] = beta != 0.0f ? v3 + beta * c[o + 3] : v3;
                }
            }
        }
    }
}
