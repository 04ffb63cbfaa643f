// wgmma.cu: GEMM on Hopper's warpgroup tensor cores (CUDA C++, sm_90a).
//
// Purpose: the "cuda-wgmma" variant of gemm/{nn,nt,batched}/{float16,bfloat16}: each block of
// two warpgroups computes a 128 x BN tile of D, each warpgroup 64 rows with wgmma.mma_async
// m64nBNk16 (HGMMA in SASS), both operands read by the tensor cores from shared memory
// through matrix descriptors. A STAGES-deep cp.async pipeline fills shared memory in the
// descriptors' layout without swizzling: 8 x 16-byte core matrices, A (and B in the nt
// layout) K-major, B in the nn layout MN-major (the instruction's transpose of B).
//
// Arguments (as mma.cu's; A stored m x k, B stored k x n or, TRANS_B, n x k):
//   gemm_wgmma(d, c, a, b, alpha, beta, m, n, k, lda, ldb, ldc, strideA, strideB, strideC)
//     d[z*strideC + i*ldc + j] = alpha * sum_l A_z[i][l] * op(B_z)[l][j] + beta * c[...]
//     z = blockIdx.z. When beta == 0, c is not read; d may be c. Every row and matrix of A
//     and B must start on a 16-byte boundary (lda, ldb, strideA, strideB multiples of 8;
//     the host runs other shapes on mma.cu).
//
// Semantics: A, B IEEE binary16 (PREC 3) or bfloat16 (PREC 4) bits, products exact,
//   accumulated in float32 by the tensor cores; C, D float.
//
// Tunables (-D, part of the cache key):
//   PREC      3 float16, 4 bfloat16                                  default 3
//   TRANS_B   1: B stored n x k (K-major)                             default 0
//   BN        columns of D per block: 128 or 256 (m64n128k16 or m64n256k16) default 128
//   STAGES    shared-memory stages of the pipeline (>= 3: STAGES-2 tiles copied ahead,
//             one wgmma group in flight behind the one issued)        default 4
//   GROUP_M   tile rows of D a group of consecutive blocks covers     default 8
//   LBO_K     1: a descriptor's leading byte offset steps along K (the strides below are
//             swapped with 0), for K-major operands                  default 1
//   LBO_MN    the same for the MN-major B of the nn layout            default 0
// Builds: -DPREC=3 | -DPREC=4 -DTRANS_B=1 | -DPREC=3 -DLBO_K=0 -DLBO_MN=1 | -DPREC=4 -DBN=256 | -DPREC=3 -DBN=256 -DTRANS_B=1
// Launch: 3D grid (ceil(m/128) * ceil(n/BN), 1, batch) blocks of 256 threads, dynamic
//   shared memory STAGES * (128 + BN) * 128 bytes.
// Boundaries: tiles past m, n or k are zero-filled (cp.async src-size); stores past m or n
//   are skipped.

#include "prism_cuda.h"

#ifndef PREC
#define PREC 3
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef LBO_K
#define LBO_K 1
#endif
#ifndef LBO_MN
#define LBO_MN 0
#endif

#if PREC == 3
#define WG_TYPE "f16"
#elif PREC == 4
#define WG_TYPE "bf16"
#else
#error "wgmma.cu: PREC must be 3 (float16) or 4 (bfloat16)"
#endif
#if TRANS_B
#define WG_TRANS_B "0"
#else
#define WG_TRANS_B "1"
#endif

#if STAGES < 3
#error "wgmma.cu: STAGES must be at least 3 (two tiles in the tensor cores, one being copied)"
#endif
#define AHEAD (STAGES - 2) // tiles copied ahead of the one computed

#ifndef BN
#define BN 128
#endif
#if BN != 128 && BN != 256
#error "wgmma.cu: BN must be 128 or 256"
#endif
#define BM 128
#define BK 64
#define THREADS 256
#define CORE 128                      // bytes of one 8 x 16-byte core matrix
#define STAGE_A (BM * BK * 2)         // bytes
#define STAGE_B (BN * BK * 2)

typedef unsigned short in_t;

static __device__ __forceinline__ unsigned int smem_addr(const void *p) {
  unsigned int r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}
static __device__ __forceinline__ void cp_async16(unsigned int dst, const void *src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> static __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// desc returns the matrix descriptor of the operand at shared address addr whose core
// matrices lie lead bytes apart along the descriptor's leading dimension and stride bytes
// apart along its stride dimension (no swizzle, base offset 0).
static __device__ __forceinline__ unsigned long long desc(unsigned int addr, unsigned int lead, unsigned int stride) {
  return (unsigned long long)((addr & 0x3ffffu) >> 4) | (unsigned long long)((lead >> 4) & 0x3fffu) << 16 |
         (unsigned long long)((stride >> 4) & 0x3fffu) << 32;
}

#if BN == 128
static __device__ __forceinline__ void wgmma_m64n128k16(float *d, unsigned long long da, unsigned long long db, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." WG_TYPE "." WG_TYPE " "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, " WG_TRANS_B ";\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db), "r"(accumulate));
}
#define WGMMA wgmma_m64n128k16
#else
static __device__ __forceinline__ void wgmma_m64n256k16(float *d, unsigned long long da, unsigned long long db, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." WG_TYPE "." WG_TYPE " "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, " WG_TRANS_B ";\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(accumulate));
}
#define WGMMA wgmma_m64n256k16
#endif

// wgmma_wait1 waits until at most one wgmma group of this warpgroup is pending, and
// wgmma_wait0 until none is; both name the accumulators as operands, so that the compiler
// neither reads nor moves them while the tensor cores may still write them.
static __device__ __forceinline__ void wgmma_wait1(float *d) {
  asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) {
    asm volatile("" : "+f"(d[i])::"memory");
  }
}
static __device__ __forceinline__ void wgmma_wait0(float *d) {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) {
    asm volatile("" : "+f"(d[i])::"memory");
  }
}

// The shared layouts, in core matrices of 8 rows x 16 bytes (8 elements):
//   K-major (A; B when TRANS_B): element (r, kk) of a ROWS x BK tile in core (r/8, kk/8) at
//     ((kk/8) * (ROWS/8) + r/8) * CORE, row r%8 at 16 bytes each: cores adjacent in the rows
//     lie CORE apart, cores adjacent in k ROWS/8 * CORE apart.
//   MN-major (B of nn): element (kk, c) of a BK x BN tile in core (kk/8, c/8) at
//     ((kk/8) * (BN/8) + c/8) * CORE, row kk%8 at 16 bytes each: cores adjacent in n lie CORE
//     apart, cores adjacent in k BN/8 * CORE apart.
// load_kmajor copies a ROWS x BK tile of a row-major matrix (rows r0.., columns k0..; rows
// beyond nrows and columns beyond ncols zero) into the K-major layout at shared address s.
template <int ROWS>
static __device__ __forceinline__ void load_kmajor(unsigned int s, const in_t *g, int ld, int r0, int k0, int nrows, int ncols) {
#pragma unroll
  for (int p = 0; p < ROWS * BK / 8 / THREADS; ++p) {
    const int ch = threadIdx.x + p * THREADS; // chunk: 8 elements of one row
    const int r = ch / (BK / 8), kc = ch % (BK / 8);
    const int gr = r0 + r, gk = k0 + kc * 8;
    int bytes = 0;
    const in_t *src = g;
    if (gr < nrows && gk < ncols) {
      bytes = (ncols - gk < 8 ? ncols - gk : 8) * 2;
      src = g + (long long)gr * ld + gk;
    }
    cp_async16(s + (kc * (ROWS / 8) + r / 8) * CORE + (r % 8) * 16, src, bytes);
  }
}

// load_mnmajor copies a BK x BN tile of a row-major k x n matrix (rows k0.., columns n0..)
// into the MN-major layout at shared address s.
static __device__ __forceinline__ void load_mnmajor(unsigned int s, const in_t *g, int ld, int k0, int n0, int nk, int nn) {
#pragma unroll
  for (int p = 0; p < BK * BN / 8 / THREADS; ++p) {
    const int ch = threadIdx.x + p * THREADS;
    const int kk = ch / (BN / 8), nc = ch % (BN / 8);
    const int gk = k0 + kk, gn = n0 + nc * 8;
    int bytes = 0;
    const in_t *src = g;
    if (gk < nk && gn < nn) {
      bytes = (nn - gn < 8 ? nn - gn : 8) * 2;
      src = g + (long long)gk * ld + gn;
    }
    cp_async16(s + ((kk / 8) * (BN / 8) + nc) * CORE + (kk % 8) * 16, src, bytes);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) gemm_wgmma(float *d, const float *c, const in_t *a, const in_t *b,
                                                                   float alpha, float beta, int m, int n, int k, int lda,
                                                                   int ldb, int ldc, int strideA, int strideB, int strideC) {
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned int sbase = smem_addr(smem);
  const int z = blockIdx.z;
  a += (long long)z * strideA;
  b += (long long)z * strideB;
  c += (long long)z * strideC;
  d += (long long)z * strideC;
  const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
  const int id = blockIdx.x, per_group = GROUP_M * tiles_n;
  const int first_m = (id / per_group) * GROUP_M;
  const int group_m = tiles_m - first_m < GROUP_M ? tiles_m - first_m : GROUP_M;
  const int m0 = (first_m + (id % per_group) % group_m) * BM, n0 = ((id % per_group) / group_m) * BN;
  const int wg = threadIdx.x >> 7; // warpgroup: rows 64*wg.. of the tile

  float acc[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) {
    acc[i] = 0.0f;
  }

  // The pipeline: tile kt+AHEAD is copied while the tensor cores work on tile kt and the
  // wgmma group of tile kt-1 may still run; the stage refilled at iteration kt last held
  // tile kt-2, whose group the wait at the end of iteration kt-1 retired.
  const int ktiles = (k + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < AHEAD; ++s) {
    if (s < ktiles) {
      const unsigned int sa = sbase + s * (STAGE_A + STAGE_B);
      load_kmajor<BM>(sa, a, lda, m0, s * BK, m, k);
#if TRANS_B
      load_kmajor<BN>(sa + STAGE_A, b, ldb, n0, s * BK, n, k);
#else
      load_mnmajor(sa + STAGE_A, b, ldb, s * BK, n0, k, n);
#endif
    }
    cp_async_commit();
  }
  // Descriptor strides: K-major cores lie CORE apart along the rows and ROWS/8*CORE apart
  // along k; which of the two the leading byte offset holds is LBO_K's choice (LBO_MN's for
  // the MN-major B).
  const unsigned int a_k = (BM / 8) * CORE, a_r = CORE;
#if TRANS_B
  const unsigned int b_k = (BN / 8) * CORE, b_r = CORE;
  const unsigned int b_lead = LBO_K ? b_k : b_r, b_stride = LBO_K ? b_r : b_k;
#else
  const unsigned int b_k = (BN / 8) * CORE, b_r = CORE;
  const unsigned int b_lead = LBO_MN ? b_r : b_k, b_stride = LBO_MN ? b_k : b_r;
#endif
  const unsigned int a_lead = LBO_K ? a_k : a_r, a_stride = LBO_K ? a_r : a_k;
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<AHEAD - 1>();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // cp.async's writes, seen by the tensor cores
    __syncthreads();
    const int next = kt + AHEAD;
    if (next < ktiles) {
      const unsigned int sa = sbase + (next % STAGES) * (STAGE_A + STAGE_B);
      load_kmajor<BM>(sa, a, lda, m0, next * BK, m, k);
#if TRANS_B
      load_kmajor<BN>(sa + STAGE_A, b, ldb, n0, next * BK, n, k);
#else
      load_mnmajor(sa + STAGE_A, b, ldb, next * BK, n0, k, n);
#endif
    }
    cp_async_commit();
    const unsigned int sa = sbase + (kt % STAGES) * (STAGE_A + STAGE_B);
    const unsigned int sb = sa + STAGE_A;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      // A: rows 64*wg.. (8 cores along the rows), k 16*ks.. (2 cores along k).
      const unsigned long long da = desc(sa + (2 * ks * (BM / 8) + 8 * wg) * CORE, a_lead, a_stride);
      // B: all BN columns, k 16*ks..: 2 cores along k from core 2*ks.
      const unsigned long long db = desc(sb + 2 * ks * (BN / 8) * CORE, b_lead, b_stride);
      WGMMA(acc, da, db, 1);
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    wgmma_wait1(acc);
  }
  wgmma_wait0(acc);
  cp_async_wait<0>();

  // Epilogue: accumulator i of this thread holds row 64*wg + 16*warp + g + 8*((i%4)/2),
  // column 8*(i/4) + 2*t + i%2 (the m16n8 layout, per warp of the warpgroup).
  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) {
    const int row = m0 + 64 * wg + 16 * warp + g + 8 * ((i & 3) >> 1);
    const int col = n0 + 8 * (i >> 2) + 2 * t + (i & 1);
    if (row < m && col < n) {
      float r = alpha * acc[i];
      if (beta != 0.0f) {
        r += beta * c[(long long)row * ldc + col];
      }
      d[(long long)row * ldc + col] = r;
    }
  }
}
