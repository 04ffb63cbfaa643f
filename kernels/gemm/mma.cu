// mma.cu: GEMM on the tensor cores through mma.sync (CUDA C++, NVIDIA sm_80 and newer).
//
// Purpose: the "cuda-mma" variant of gemm/{nn,nt,tn,batched}/{tf32,float32x3tf32,float16,
// bfloat16,float8e4m3,float8e5m2} and gemm/.../float64: a block of warps computes a BM x BN
// tile of D with warp-level matrix multiply-accumulate (PTX mma.sync), its operands staged
// in shared memory by a STAGES-deep cp.async pipeline and read into fragments with ldmatrix
// (16-bit inputs) or plain shared loads (32- and 64-bit inputs).
//
// Arguments (row-major as gemm.cl; op(X) = X or X^T; op(A) is m x k, op(B) k x n, C and D
// m x n; element (i, j) of matrix z of X lives at x[z*strideX + i*ldx + j] of the STORED
// matrix: A stored m x k (lda >= k) or, transposed, k x m; B k x n or, transposed, n x k):
//   gemm_mma(d, c, a, b, alpha, beta, m, n, k, lda, ldb, ldc, strideA, strideB, strideC, vec)
//     d[z*strideC + i*ldc + j] = alpha * sum_l op(A_z)[i][l] * op(B_z)[l][j]
//                                + beta * c[z*strideC + i*ldc + j]
//     for 0 <= i < m, 0 <= j < n, z = blockIdx.z. When beta == 0, c is not read; d may be c.
//     vec: 1 when every row and matrix of A and B starts on a 16-byte boundary (lda, ldb,
//     strideA, strideB times the element size multiples of 16, buffers aligned): tiles are
//     then copied with 16-byte cp.async (zero-filled past the edges); 0 reads them element
//     by element (any shape, slower).
//
// Semantics per precision (PREC):
//   1 tf32       A, B float; each element rounded to tf32 (cvt.rna: 10 mantissa bits, ties
//                away from zero), products accumulated in float32. mma m16n8k8.
//   2 x3tf32     A, B float; each x split as big = tf32(x), small = tf32(x - big), and
//                a*b ~ small_a*big_b + big_a*small_b + big_a*big_b (CUTLASS's 3xTF32): the
//                dropped small_a*small_b and the rounding of small are below 2^-21 relative,
//                so the result has float32 accuracy at the tf32 tensor-core rate / 3.
//   3 float16    A, B IEEE binary16, float32 accumulation. mma m16n8k16.
//   4 bfloat16   A, B bfloat16, float32 accumulation. mma m16n8k16.
//   5 float64    A, B, C, D double, accumulated in double on the fp64 tensor cores (DMMA,
//                m8n8k4, or m16n8k8 / m16n8k16 on sm_90 with DMMA_K; IEEE fused multiply-adds).
//   6 e4m3       A, B OCP float8 E4M3, float32 accumulation; sm_89 and newer. mma m16n8k32.
//   7 e5m2       A, B OCP float8 E5M2, likewise.
//   C and D are float for every PREC but 5 (double).
//
// Tunables (-D, part of the cache key):
//   PREC        precision, above                                               default 1
//   TRANS_A     1: A stored k x m (op(A) = A^T)                                 default 0
//   TRANS_B     1: B stored n x k (op(B) = B^T)                                 default 0
//   BM, BN      tile of D per block                                 default 128, 128 (64, 64 for PREC 5)
//   BK          k step of a stage (a multiple of the mma's k)       default 128 bytes of elements (16 for PREC 5)
//   WARPS_M, WARPS_N  warps of the block along m and n              default 2, 4 (2, 2 for PREC 5)
//   STAGES      shared-memory stages of the cp.async pipeline (>= 2) default 3
//   Shared memory (dynamic, Range.SharedBytes): STAGES * (A stage + B stage), mma_shared()
//   in mma.go computes it with the same paddings as below.
// Builds: -DPREC=1 | -DPREC=2 -DTRANS_A=1 | -DPREC=3 -DTRANS_B=1 | -DPREC=4 -DTRANS_A=1 -DTRANS_B=1 | -DPREC=5 | -DPREC=5 -DTRANS_A=1 -DTRANS_B=1 -DDMMA_K=8 | -DPREC=5 -DDMMA_K=16 | -DPREC=5 -DTRANS_A=1 -DDMMA_K=16 -DBM=128 -DBN=64 -DBK=32 | -DPREC=5 -DTRANS_B=1 -DDMMA_K=16 -DBM=128 -DBN=64 -DSTAGES=4 | -DPREC=6 -DTRANS_B=1 | -DPREC=7 -DTRANS_A=1 | -DPREC=3 -DBN=256 -DSTAGES=4 | -DPREC=1 -DBM=128 -DBN=128 -DWARPS_M=2 -DWARPS_N=2 -DMIN_BLOCKS=2 | -DPREC=5 -DDMMA_K=8 -DBM=128 -DBN=128 -DBK=32 -DWARPS_M=2 -DWARPS_N=4 -DSTAGES=3 | -DPREC=5 -DDMMA_K=8 -DBM=64 -DBN=128 -DBK=16 -DWARPS_M=2 -DWARPS_N=2 -DSTAGES=4 | -DPREC=5 -DBM=128 -DBN=64 -DBK=32 -DWARPS_M=2 -DWARPS_N=2 -DSTAGES=3
//   GROUP_M     tile rows of D a group of consecutive blocks covers (L2 reuse) default 8
//   MIN_BLOCKS  blocks per SM the registers must allow (__launch_bounds__)   default 1
//   DMMA_K      PREC 5: the k of the fp64 mma: 4 (m8n8k4, sm_80), 8 (m16n8k8) or 16 (m16n8k16),
//               the last two sm_90 and newer                                   default 4
// Launch: 3D grid (ceil(m/BM) * ceil(n/BN), 1, batch) blocks of exactly WARPS_M*WARPS_N*32
//   threads in x, dynamic shared memory as above.
// Boundaries: tiles past m, n or k are zero-filled in shared memory (zeros add nothing to
//   the products); stores past m or n are skipped. Only D's m x n elements are written.
// Accuracy: tensor cores add the products of one mma in an order and with an alignment of
//   their own (they may truncate rather than round), so GEMMTolerance of the precision
//   (ref.go) takes a unit of 2^-23 for the float32 accumulation; PREC 5 rounds each
//   fused multiply-add as IEEE double does.

#include "prism_cuda.h"

#ifndef PREC
#define PREC 1
#endif
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif

#if PREC == 1 || PREC == 2
typedef float in_t;
typedef float acc_t;
#define IN_BYTES 4
#define MMA_M 16
#define MMA_N 8
#define MMA_K 8
#elif PREC == 3 || PREC == 4
typedef unsigned short in_t;
typedef float acc_t;
#define IN_BYTES 2
#define MMA_M 16
#define MMA_N 8
#define MMA_K 16
#elif PREC == 5
typedef double in_t;
typedef double acc_t;
#define IN_BYTES 8
#ifndef DMMA_K
#define DMMA_K 4
#endif
#if DMMA_K == 16 // sm_90: m16n8k16, the most products an fp64 instruction of Hopper does
#define MMA_M 16
#define MMA_K 16
#elif DMMA_K == 8 // sm_90: m16n8k8
#define MMA_M 16
#define MMA_K 8
#elif DMMA_K == 4 // sm_80: m8n8k4
#define MMA_M 8
#define MMA_K 4
#else
#error "mma.cu: DMMA_K must be 4, 8 or 16"
#endif
#define MMA_N 8
#elif PREC == 6 || PREC == 7
typedef unsigned char in_t;
typedef float acc_t;
#define IN_BYTES 1
#define MMA_M 16
#define MMA_N 8
#define MMA_K 32
#else
#error "mma.cu: PREC must be 1 (tf32), 2 (x3tf32), 3 (float16), 4 (bfloat16), 5 (float64), 6 (e4m3) or 7 (e5m2)"
#endif

#if PREC == 5
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#else
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK (128 / IN_BYTES)
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 4
#endif
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif

#define THREADS (WARPS_M * WARPS_N * 32)
#define WTM (BM / WARPS_M) // warp tile
#define WTN (BN / WARPS_N)
#define MT (WTM / MMA_M) // mma tiles per warp
#define NT (WTN / MMA_N)
#define EPC (16 / IN_BYTES) // elements per 16-byte chunk

// Shared-memory row paddings, in elements, chosen so that the fragment loads of a warp
// fall in distinct banks: k-contiguous rows of 16 + 16 bytes (the rows a warp reads start
// 4 banks apart; 32 bytes for double where BK is not a multiple of 16, whose half-warps
// read 16 lanes of 8 bytes; a swizzle, below, where it is), m- or
// n-contiguous rows padded by 32 bytes (rows 8 banks apart), or by 16 bytes for the
// ldmatrix of 16-bit inputs (8 rows of 16 bytes in distinct bank groups).
// Doubles in k-contiguous rows take no padding where BK is a multiple of 16: each row's
// 16-byte chunks are permuted instead, chunk c of row r stored at chunk c ^ (r % 8) (an
// XOR swizzle), so that the 8 rows a warp's fragment loads read spread over every bank as
// the padding spread them, and 4 stages of 128 x 64 tiles fit two blocks an SM.
#if PREC == 5 && BK % 16 == 0
#define SWZ 1
#define PADK 0
#elif PREC == 5
#define SWZ 0
#define PADK (2 * EPC)
#else
#define SWZ 0
#define PADK EPC
#endif
// KSW(r, kk): where column kk of k-contiguous row r lies in its row.
#if SWZ
#define KSW(r, kk) (((((kk) >> 1) ^ ((r) & 7)) << 1) | ((kk) & 1))
#else
#define KSW(r, kk) (kk)
#endif
#if PREC == 3 || PREC == 4
#define PADR EPC
#else
#define PADR (2 * EPC)
#endif
// A stage: [BM][BK + PADK] when A is stored m x k, [BK][BM + PADR] when k x m; B likewise.
#if TRANS_A
#define A_STAGE (BK * (BM + PADR))
#define A_AT(r, kk) ((kk) * (BM + PADR) + (r))
#else
#define A_STAGE (BM * (BK + PADK))
#define A_AT(r, kk) ((r) * (BK + PADK) + KSW(r, kk))
#endif
#if TRANS_B
#define B_STAGE (BN * (BK + PADK))
#define B_AT(cn, kk) ((cn) * (BK + PADK) + KSW(cn, kk))
#else
#define B_STAGE (BK * (BN + PADR))
#define B_AT(cn, kk) ((kk) * (BN + PADR) + (cn))
#endif

#if BM % (WARPS_M * MMA_M) != 0 || BN % (WARPS_N * MMA_N) != 0 || BK % MMA_K != 0
#error "mma.cu: BM, BN and BK must be multiples of the warp tiles and the mma's k"
#endif
#if (BM * BK) % (EPC * THREADS) != 0 || (BN * BK) % (EPC * THREADS) != 0
#error "mma.cu: a stage of A and of B must be whole 16-byte chunks per thread"
#endif
#if (PREC == 3 || PREC == 4) && NT % 2 != 0
#error "mma.cu: 16-bit inputs load B for two n8 tiles at once: NT must be even"
#endif

// load_rows copies a tile of ROWS x COLS elements of a stored row-major matrix (rows r0.., columns
// c0.., rows beyond nrows and columns beyond ncols read as zero) into shared memory with row
// stride SLD, element by element: the path of operands whose rows are not 16-byte aligned
// (tile_copy copies aligned ones). KCOLS: k runs along the tile's columns (KSW places them).
template <int ROWS, int COLS, int SLD, bool KCOLS>
static __device__ __forceinline__ void load_rows(in_t *s, const in_t *g, int ld, int r0, int c0, int nrows, int ncols) {
  for (int e = threadIdx.x; e < ROWS * COLS; e += THREADS) {
    const int r = e / COLS, cc = e - r * COLS;
    const int gr = r0 + r, gc = c0 + cc;
    in_t v = (in_t)0;
    if (gr < nrows && gc < ncols) {
      v = g[(long long)gr * ld + gc];
    }
    s[r * SLD + (KCOLS ? KSW(r, cc) : cc)] = v;
  }
}

// load_stage stages k columns k0..k0+BK of op(A) (rows m0..m0+BM) and k rows of op(B)
// (columns n0..n0+BN) in the layouts A_AT and B_AT address, element by element.
static __device__ __forceinline__ void load_stage(in_t *as, in_t *bs, const in_t *a, const in_t *b, int lda, int ldb,
                                                  int m0, int n0, int k0, int m, int n, int k) {
#if TRANS_A
  load_rows<BK, BM, BM + PADR, false>(as, a, lda, k0, m0, k, m);
#else
  load_rows<BM, BK, BK + PADK, true>(as, a, lda, m0, k0, m, k);
#endif
#if TRANS_B
  load_rows<BN, BK, BK + PADK, true>(bs, b, ldb, n0, k0, n, k);
#else
  load_rows<BK, BN, BN + PADR, false>(bs, b, ldb, k0, n0, k, n);
#endif
}

// tile_copy is one thread's share of the 16-byte copies of one operand's tiles, planned
// once and stepped along k, so that a k step costs each copy a compare, a select and the
// copy itself, not the index arithmetic of load_rows. A tile is ROWS x COLS elements of a
// stored row-major matrix; k runs along its rows (KROWS: A stored k x m, B stored k x n)
// or along its columns. Chunk p of the thread lies RSTEP * p rows below its first one.
template <int ROWS, int COLS, int SLD, bool KROWS>
struct tile_copy {
  static constexpr int CPR = COLS / EPC;                    // chunks per row
  static constexpr int P = (ROWS * COLS) / (EPC * THREADS); // chunks per thread
  static constexpr int RSTEP = THREADS / CPR;               // rows between a thread's chunks
  static_assert(KROWS || !SWZ || RSTEP % 8 == 0, "a thread's chunks must share their rows' swizzle");
  const in_t *g;    // the thread's first chunk in the next k-tile
  const in_t *base; // a valid address for copies of no bytes
  int ld;           // the stored matrix's row stride
  int soff;         // the first chunk's offset in a stage
  int rem_r, rem_c; // rows and columns of the matrix left from the first chunk's

  __device__ __forceinline__ void init(const in_t *m, int ld_, int r0, int c0, int nrows, int ncols) {
    const int r = threadIdx.x / CPR, c = (threadIdx.x % CPR) * EPC;
    base = m;
    ld = ld_;
    g = m + (long long)(r0 + r) * ld + (c0 + c);
    soff = r * SLD + (KROWS ? c : KSW(r, c));
    rem_r = nrows - r0 - r;
    rem_c = ncols - c0 - c;
  }
  // copy issues the copies of the next k-tile into stage s (zero-filled past the edges)
  // and steps to the k-tile after it.
  __device__ __forceinline__ void copy(in_t *s) {
    const int cols = rem_c < EPC ? rem_c : EPC;
#pragma unroll
    for (int p = 0; p < P; ++p) {
      const int bytes = (p * RSTEP < rem_r && cols > 0) ? cols * IN_BYTES : 0;
      prism_cp_async16(prism_smem_addr(s + soff + p * RSTEP * SLD), bytes ? g + (long long)(p * RSTEP) * ld : base, bytes);
    }
    if (KROWS) {
      g += (long long)BK * ld;
      rem_r -= BK;
    } else {
      g += BK;
      rem_c -= BK;
    }
  }
};
#if THREADS % ((TRANS_A ? BM : BK) / EPC) != 0 || THREADS % ((TRANS_B ? BK : BN) / EPC) != 0
#error "mma.cu: the threads of a block must cover whole rows of 16-byte chunks of a tile"
#endif

#if PREC == 1 || PREC == 2
static __device__ __forceinline__ unsigned int to_tf32(float x) {
  unsigned int r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
static __device__ __forceinline__ void mma_tf32(float *d, const unsigned int *a, const unsigned int *b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

#if PREC == 3 || PREC == 4
static __device__ __forceinline__ void ldmatrix_x4(unsigned int *r, const void *p) { prism_ldmatrix_x4(r, prism_smem_addr(p)); }
static __device__ __forceinline__ void ldmatrix_x4_trans(unsigned int *r, const void *p) {
  prism_ldmatrix_x4_trans(r, prism_smem_addr(p));
}
static __device__ __forceinline__ void mma_16bit(float *d, const unsigned int *a, const unsigned int *b) {
#if PREC == 3
  prism_mma_f16(d, a, b);
#else
  prism_mma_bf16(d, a, b);
#endif
}
#endif

#if PREC == 6 || PREC == 7
static __device__ __forceinline__ void mma_fp8(float *d, const unsigned int *a, const unsigned int *b) {
#if PREC == 6
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
#else
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
#endif
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// four8 packs the 4 bytes at k, k+1, k+2, k+3 of a row or column (lowest k in bits 0-7).
static __device__ __forceinline__ unsigned int four8_a(const in_t *as, int r, int kk) {
#if TRANS_A
  return (unsigned int)as[A_AT(r, kk)] | (unsigned int)as[A_AT(r, kk + 1)] << 8 | (unsigned int)as[A_AT(r, kk + 2)] << 16 |
         (unsigned int)as[A_AT(r, kk + 3)] << 24;
#else
  return *(const unsigned int *)(as + A_AT(r, kk));
#endif
}
static __device__ __forceinline__ unsigned int four8_b(const in_t *bs, int cn, int kk) {
#if TRANS_B
  return *(const unsigned int *)(bs + B_AT(cn, kk));
#else
  return (unsigned int)bs[B_AT(cn, kk)] | (unsigned int)bs[B_AT(cn, kk + 1)] << 8 | (unsigned int)bs[B_AT(cn, kk + 2)] << 16 |
         (unsigned int)bs[B_AT(cn, kk + 3)] << 24;
#endif
}
#endif

#if PREC == 5
#if DMMA_K >= 8
static __device__ __forceinline__ void mma_f64(double *d, const double *a, const double *b) {
#if DMMA_K == 16
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]),
                 "d"(b[2]), "d"(b[3]));
#else
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#endif
}
#else
static __device__ __forceinline__ void mma_f64(double *d, const double *a, const double *b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(d[0]), "+d"(d[1])
               : "d"(a[0]), "d"(b[0]));
}
#endif
#endif

// compute_stage runs the warp's mma tiles over the BK columns of one stage.
static __device__ __forceinline__ void compute_stage(acc_t (*acc)[NT][4], const in_t *as, const in_t *bs, int wm0, int wn0) {
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int ks = 0; ks < BK; ks += MMA_K) {
#if PREC == 1 || PREC == 2
    unsigned int af[MT][4], bf[NT][2];
#if PREC == 2
    unsigned int as_[MT][4], bs_[NT][2];
#endif
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const int r = wm0 + i * MMA_M + g;
      const float x[4] = {as[A_AT(r, ks + t)], as[A_AT(r + 8, ks + t)], as[A_AT(r, ks + t + 4)], as[A_AT(r + 8, ks + t + 4)]};
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        af[i][q] = to_tf32(x[q]);
#if PREC == 2
        as_[i][q] = to_tf32(x[q] - __uint_as_float(af[i][q]));
#endif
      }
    }
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int cn = wn0 + j * MMA_N + g;
      const float x[2] = {bs[B_AT(cn, ks + t)], bs[B_AT(cn, ks + t + 4)]};
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        bf[j][q] = to_tf32(x[q]);
#if PREC == 2
        bs_[j][q] = to_tf32(x[q] - __uint_as_float(bf[j][q]));
#endif
      }
    }
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
      for (int j = 0; j < NT; ++j) {
#if PREC == 2
        mma_tf32(acc[i][j], as_[i], bf[j]);
        mma_tf32(acc[i][j], af[i], bs_[j]);
#endif
        mma_tf32(acc[i][j], af[i], bf[j]);
      }
    }
#elif PREC == 3 || PREC == 4
    unsigned int af[MT][4], bf[NT][2];
    const int l8 = lane & 7, lj = lane >> 3;
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const int r0 = wm0 + i * MMA_M;
#if TRANS_A
      // stored [k][m]: matrix lj holds k rows 8*(lj/2).., m columns 8*(lj%2)..
      ldmatrix_x4_trans(af[i], as + A_AT(r0 + 8 * (lj & 1), ks + l8 + 8 * (lj >> 1)));
#else
      // stored [m][k]: matrix lj holds m rows 8*(lj%2).., k columns 8*(lj/2)..
      ldmatrix_x4(af[i], as + A_AT(r0 + l8 + 8 * (lj & 1), ks + 8 * (lj >> 1)));
#endif
    }
#pragma unroll
    for (int j = 0; j < NT; j += 2) {
      const int c0 = wn0 + j * MMA_N;
      unsigned int r[4];
#if TRANS_B
      // stored [n][k]: matrix lj holds n rows 8*(lj/2).., k columns 8*(lj%2)..
      ldmatrix_x4(r, bs + B_AT(c0 + l8 + 8 * (lj >> 1), ks + 8 * (lj & 1)));
#else
      // stored [k][n]: matrix lj holds k rows 8*(lj%2).., n columns 8*(lj/2)..
      ldmatrix_x4_trans(r, bs + B_AT(c0 + 8 * (lj >> 1), ks + l8 + 8 * (lj & 1)));
#endif
      bf[j][0] = r[0];
      bf[j][1] = r[1];
      bf[j + 1][0] = r[2];
      bf[j + 1][1] = r[3];
    }
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        mma_16bit(acc[i][j], af[i], bf[j]);
      }
    }
#elif PREC == 6 || PREC == 7
    unsigned int af[MT][4], bf[NT][2];
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const int r = wm0 + i * MMA_M + g;
      af[i][0] = four8_a(as, r, ks + 4 * t);
      af[i][1] = four8_a(as, r + 8, ks + 4 * t);
      af[i][2] = four8_a(as, r, ks + 4 * t + 16);
      af[i][3] = four8_a(as, r + 8, ks + 4 * t + 16);
    }
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int cn = wn0 + j * MMA_N + g;
      bf[j][0] = four8_b(bs, cn, ks + 4 * t);
      bf[j][1] = four8_b(bs, cn, ks + 4 * t + 16);
    }
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        mma_fp8(acc[i][j], af[i], bf[j]);
      }
    }
#elif PREC == 5 && DMMA_K >= 8
    // m16n8k8 and m16n8k16 fragments (as tf32's m16n8k8, continued along k): A element q at
    // (g + 8 (q % 2), t + 4 (q / 2)), B element q at (t + 4 q, g). B's fragments of every n
    // tile are loaded first, then each m tile's A fragment just before its products, so
    // that one A fragment at a time is live beside the accumulators (MT * NT * 4 doubles).
    double bf[NT][MMA_K / 4];
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int cn = wn0 + j * MMA_N + g;
#pragma unroll
      for (int q = 0; q < MMA_K / 4; ++q) {
        bf[j][q] = bs[B_AT(cn, ks + t + 4 * q)];
      }
    }
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const int r = wm0 + i * MMA_M + g;
      double af[MMA_K / 2];
#pragma unroll
      for (int q = 0; q < MMA_K / 2; ++q) {
        af[q] = as[A_AT(r + 8 * (q & 1), ks + t + 4 * (q >> 1))];
      }
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        mma_f64(acc[i][j], af, bf[j]);
      }
    }
#elif PREC == 5
    double af[MT][1], bf[NT][1];
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      af[i][0] = as[A_AT(wm0 + i * MMA_M + g, ks + t)];
    }
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      bf[j][0] = bs[B_AT(wn0 + j * MMA_N + g, ks + t)];
    }
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        mma_f64(acc[i][j], af[i], bf[j]);
      }
    }
#endif
  }
}

// mainloop runs the k-tiles of the block's tile of D through the STAGES-deep pipeline:
// VEC with tile_copy's 16-byte copies, else element by element (load_stage).
template <bool VEC>
static __device__ __forceinline__ void mainloop(acc_t (*acc)[NT][4], in_t *as0, in_t *bs0, const in_t *a, const in_t *b, int lda,
                                                int ldb, int m0, int n0, int m, int n, int k, int wm0, int wn0) {
#if TRANS_A
  tile_copy<BK, BM, BM + PADR, true> ca;
  ca.init(a, lda, 0, m0, k, m);
#else
  tile_copy<BM, BK, BK + PADK, false> ca;
  ca.init(a, lda, m0, 0, m, k);
#endif
#if TRANS_B
  tile_copy<BN, BK, BK + PADK, false> cb;
  cb.init(b, ldb, n0, 0, n, k);
#else
  tile_copy<BK, BN, BN + PADR, true> cb;
  cb.init(b, ldb, 0, n0, k, n);
#endif
  // fill stages k-tile kt into stage s (tile_copy steps itself: kt is load_stage's).
  auto fill = [&](int s, int kt) {
    if (VEC) {
      ca.copy(as0 + s * A_STAGE);
      cb.copy(bs0 + s * B_STAGE);
    } else {
      load_stage(as0 + s * A_STAGE, bs0 + s * B_STAGE, a, b, lda, ldb, m0, n0, kt * BK, m, n, k);
    }
  };
  const int ktiles = (k + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) {
      fill(s, s);
    }
    prism_cp_async_commit();
  }
  int rs = 0, ws = STAGES - 1; // the stages read and written next
  for (int kt = 0; kt < ktiles; ++kt) {
    prism_cp_async_wait<STAGES - 2>(); // stage kt has landed (this thread's copies)
    __syncthreads();                   // ... everyone's; and stage kt-1 is no longer read
    if (kt + STAGES - 1 < ktiles) {
      fill(ws, kt + STAGES - 1);
    }
    prism_cp_async_commit();
    compute_stage(acc, as0 + rs * A_STAGE, bs0 + rs * B_STAGE, wm0, wn0);
    rs = rs == STAGES - 1 ? 0 : rs + 1;
    ws = ws == STAGES - 1 ? 0 : ws + 1;
  }
  prism_cp_async_wait<0>();
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) gemm_mma(acc_t *d, const acc_t *c, const in_t *a, const in_t *b, acc_t alpha,
                                                               acc_t beta, int m, int n, int k, int lda, int ldb, int ldc,
                                                               int strideA, int strideB, int strideC, int vec) {
  extern __shared__ __align__(16) unsigned char smem[];
  in_t *const as0 = (in_t *)smem;
  in_t *const bs0 = as0 + STAGES * A_STAGE;

  const int z = blockIdx.z;
  a += (long long)z * strideA;
  b += (long long)z * strideB;
  c += (long long)z * strideC;
  d += (long long)z * strideC;
  // Blocks take the tiles of D in groups of GROUP_M tile rows, column after column within
  // a group, so that the blocks running at one time share rows of A and columns of B in L2.
  const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
  const int id = blockIdx.x, per_group = GROUP_M * tiles_n;
  const int first_m = (id / per_group) * GROUP_M;
  const int group_m = tiles_m - first_m < GROUP_M ? tiles_m - first_m : GROUP_M;
  const int m0 = (first_m + (id % per_group) % group_m) * BM, n0 = ((id % per_group) / group_m) * BN;
  const int warp = threadIdx.x >> 5;
  const int wm0 = (warp / WARPS_N) * WTM, wn0 = (warp % WARPS_N) * WTN;

  acc_t acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i) {
#pragma unroll
    for (int j = 0; j < NT; ++j) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        acc[i][j][q] = (acc_t)0;
      }
    }
  }

  if (vec) {
    mainloop<true>(acc, as0, bs0, a, b, lda, ldb, m0, n0, m, n, k, wm0, wn0);
  } else {
    mainloop<false>(acc, as0, bs0, a, b, lda, ldb, m0, n0, m, n, k, wm0, wn0);
  }

  // Epilogue: the accumulator of mma tile (i, j) holds, in this thread, rows g and g+8
  // (g only for the m8 tiles of PREC 5) and columns 2t, 2t+1.
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int i = 0; i < MT; ++i) {
#pragma unroll
    for (int j = 0; j < NT; ++j) {
#pragma unroll
      for (int q = 0; q < (MMA_M == 16 ? 4 : 2); ++q) {
        const int row = m0 + wm0 + i * MMA_M + g + 8 * (q >> 1);
        const int col = n0 + wn0 + j * MMA_N + 2 * t + (q & 1);
        if (row < m && col < n) {
          acc_t r = alpha * acc[i][j][q];
          if (beta != (acc_t)0) {
            r += beta * c[(long long)row * ldc + col];
          }
          d[(long long)row * ldc + col] = r;
        }
      }
    }
  }
}
