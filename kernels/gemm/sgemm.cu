// sgemm.cu: fp32 general matrix multiply D = alpha*op(A)*op(B) + beta*C on the CUDA cores
// (CUDA C++, NVIDIA only), single and strided batched.
//
// Purpose: the "cuda-simt" variant of gemm/{nn,nt,tn,batched}/float32: the standard
// high-performance SIMT design (CUTLASS's SIMT sgemm, the "how to optimize a CUDA SGEMM"
// write-ups) where gemm.cl is the portable one: 128 x 128 block tiles, warp tiles, 8 x 8
// outputs per thread as 2 x 2 fragments of 4 x 4, A stored transposed in shared memory so
// that the inner loop reads 16-byte vectors of both operands, 16-byte global loads,
// double-buffered shared memory with the next k-tile prefetched into registers while the
// current one is computed (one __syncthreads per k step), fma accumulation in fp32. The
// transposes are compile-time (TRANS_A, TRANS_B): each combination is its own build.
//
// Arguments (row-major; exactly gemm.cl's gemm without its transA/transB flags; op(X) = X
// or X^T; op(A) is m x k, op(B) k x n, C and D m x n; element (i, j) of matrix z of X lives
// at x[z*strideX + i*ldx + j] of the STORED matrix, so A is stored m x k (lda >= k) or,
// TRANS_A, k x m (lda >= m), B k x n (ldb >= n) or, TRANS_B, n x k (ldb >= k), C and D
// m x n (ldc >= n); C and D share ldc and strideC):
//   sgemm_simt(d, c, a, b, alpha, beta, m, n, k, lda, ldb, ldc, strideA, strideB, strideC)
//     d[z*strideC + i*ldc + j] = alpha * sum_l op(A_z)[i][l] * op(B_z)[l][j]
//                                + beta * c[z*strideC + i*ldc + j]
//     for 0 <= i < m, 0 <= j < n, z = blockIdx.z.
//
// Semantics: as gemm.cl's gemm. d may be the same buffer as c (each element is read, then
// written, by the same thread; c and d are not __restrict__); d must not overlap a or b
// (those are __restrict__: the compiler may read them through the read-only data cache).
// When beta == 0, c is not read (BLAS semantics: C may hold NaN).
// Every index the kernel forms must fit an int; the host checks it (GEMMShape.Validate).
//
// Tunables (-D, part of the cache key):
//   TRANS_A     0: A stored m x k; 1: A stored k x m                          default 0
//   TRANS_B     0: B stored k x n; 1: B stored n x k                          default 0
//   BM, BN      tile of C computed by one block: BM x BN                       default 128, 128
//   BK          depth of the k step (a multiple of 4; 8 or 16)                 default 8
//   WM, WN      tile of C computed by one warp, WM x WN with (WM/8)*(WN/8) = 32
//               lanes: each lane 2 x 2 fragments of 4 x 4 (32 x 64 or 64 x 32) default 32, 64
//   PAD         floats of padding per shared row (a multiple of 4: spreads the transposing
//               stores over the banks, keeps rows 16-byte aligned)            default 4
//   GROUP_M     block rows per raster group: consecutive blocks walk GROUP_M tiles down
//               before the next column of tiles, for L2 reuse (1 = row-major order) default 8
//   MIN_BLOCKS  __launch_bounds__ blocks per SM: 2 caps registers at 128      default 2
//   Constraints (checked with #error): BM % WM == BN % WN == 0, (WM/8)*(WN/8) == 32,
//   BK % 4 == 0, BM*BK/4 and BN*BK/4 multiples of the thread count, PAD % 4 == 0.
// Builds: -DTRANS_A=0 -DTRANS_B=0 | -DTRANS_A=0 -DTRANS_B=1 -DBK=16 | -DTRANS_A=1 -DTRANS_B=0 -DWM=64 -DWN=32 | -DTRANS_A=1 -DTRANS_B=1 -DBM=64 -DGROUP_M=1
// Launch: 3D grid (ceil(n/BN), ceil(m/BM), batch) of blocks of exactly NTHREADS =
//   (BM/WM)*(BN/WN)*32 threads in x (256 by default); ceil(m/BM) <= 65535 (CUDA's grid
//   limit in y). Blocks are remapped in groups of GROUP_M tile rows (any grid is covered
//   exactly once). Static shared memory 2*BK*(BM+PAD + BN+PAD)*4 bytes (16.5 KiB by default).
// Boundaries: per block and operand, a fast path loads whole k-tiles with unguarded 16-byte
//   loads where the block's tile lies inside op(X) in m (or n), the k-tile lies inside k,
//   ldx % 4 == 0 and the matrix's base x + z*strideX is 16-byte aligned (uniform branches).
//   Otherwise each 4-element group is loaded as one vector when it is in range and aligned,
//   else element by element, out-of-range elements zero-filled (zero padding adds nothing
//   to the dot products). Stores of D are 16-byte where the group of 4 columns lies inside
//   C and ldc, d and c allow it, else element by element; stores outside C are skipped.
//   No thread returns early: all reach every barrier.
// Accuracy: each element is one sequential dot product over l = 0..k-1 in fp32 fma (one
//   rounding per step), then alpha*acc + beta*c: at most k+2 roundings per term, within
//   the gamma_{k+2} bound of GEMMTolerance (ref.go), as gemm.cl.
//
// Layout of a block (defaults): 8 warps as 4 (m) x 2 (n), each a 32 x 64 tile of C; a
// warp's lanes as 4 (m) x 8 (n), lane (lm, ln) owning rows wm*WM + {0, WM/2} + lm*4 + 0..3
// and columns wn*WN + {0, WN/2} + ln*4 + 0..3. Per k: two 16-byte shared loads of A (4
// distinct vectors per warp, broadcast) and two of B (8 distinct, 128 contiguous bytes),
// then 64 fma. Shared tiles are As[kk][m] and Bs[kk][n] in every transpose combination: an
// operand stored with k contiguous (A not transposed, B transposed) is transposed on its
// way into shared memory (4 scalar stores per vector), the other stored as it is loaded.

#include "prism_cuda.h"

#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#ifndef BM
#define BM 128
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
#define GROUP_M 8
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif

#define WARPS_N (BN / WN)
#define NTHREADS ((BM / WM) * WARPS_N * 32)
#define LANES_N (WN / 8)  // lanes of a warp along n; WM/8 along m
#define LOADS_A (BM * BK / 4 / NTHREADS)  // 16-byte loads of the A tile per thread
#define LOADS_B (BN * BK / 4 / NTHREADS)

#if BM % WM != 0 || BN % WN != 0
#error "sgemm.cu: BM and BN must be multiples of WM and WN"
#endif
#if WM % 8 != 0 || WN % 8 != 0 || (WM / 8) * (WN / 8) != 32
#error "sgemm.cu: a warp tile WM x WN must hold 32 lanes of 2 x 2 fragments of 4 x 4: (WM/8)*(WN/8) == 32"
#endif
#if BK % 4 != 0 || PAD % 4 != 0
#error "sgemm.cu: BK and PAD must be multiples of 4"
#endif
#if NTHREADS > 1024
#error "sgemm.cu: more than 1024 threads per block"
#endif
#if (BM * BK / 4) % NTHREADS != 0 || (BN * BK / 4) % NTHREADS != 0
#error "sgemm.cu: BM*BK/4 and BN*BK/4 must be multiples of the thread count"
#endif
#if TRANS_A != 0 && TRANS_A != 1
#error "sgemm.cu: TRANS_A must be 0 or 1"
#endif
#if TRANS_B != 0 && TRANS_B != 1
#error "sgemm.cu: TRANS_B must be 0 or 1"
#endif

// FMA32 is one fp32 fused multiply-add (fma.rn.f32): NVRTC's fmaf is a builtin; clang
// without libdevice (CI's compile check) would leave fmaf a call, its builtin is the same fma.
#ifdef __CUDACC_RTC__
#define FMA32(x, y, z) fmaf(x, y, z)
#else
#define FMA32(x, y, z) __builtin_fmaf(x, y, z)
#endif

// aligned16 reports whether p is 16-byte aligned.
static __device__ __forceinline__ bool aligned16(const void *p) {
  return ((unsigned long long)p & 15ull) == 0;
}

// load_tile loads this thread's share of one BK-deep tile of an operand into v: EXT rows
// (BM or BN) of op(X) starting at mn0 (fewer than EXT rows are valid when mn0+EXT > mnLim)
// and columns k0..k0+BK of k (fewer when k0+BK > kLim). KCONTIG: element (r, l) lives at
// x[r*ld + l] (k contiguous); else at x[l*ld + r] (m or n contiguous). Vector q of the
// thread covers (KCONTIG) row idx/(BK/4), k (idx%(BK/4))*4 .. +3, or (else) k idx/(EXT/4),
// rows (idx%(EXT/4))*4 .. +3, with idx = threadIdx.x + q*NTHREADS.
//   full: the tile lies inside the matrix and vec holds: unguarded 16-byte loads.
//   vec:  ld % 4 == 0 and x 16-byte aligned: a group of 4 in range is one 16-byte load.
// Out-of-range elements are 0.
template <int EXT, bool KCONTIG, int LOADS>
static __device__ __forceinline__ void load_tile(float4 (&v)[LOADS], const float *__restrict__ x, int ld,
                                                 int mn0, int mnLim, int k0, int kLim, bool full, bool vec) {
  const int tid = threadIdx.x;
  if (full) {
#pragma unroll
    for (int q = 0; q < LOADS; ++q) {
      const int idx = tid + q * NTHREADS;
      if (KCONTIG) {
        const int r = idx / (BK / 4), kq = (idx % (BK / 4)) * 4;
        v[q] = *reinterpret_cast<const float4 *>(x + (mn0 + r) * ld + k0 + kq);
      } else {
        const int l = idx / (EXT / 4), rq = (idx % (EXT / 4)) * 4;
        v[q] = *reinterpret_cast<const float4 *>(x + (k0 + l) * ld + mn0 + rq);
      }
    }
    return;
  }
#pragma unroll
  for (int q = 0; q < LOADS; ++q) {
    const int idx = tid + q * NTHREADS;
    float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (KCONTIG) {
      const int r = mn0 + idx / (BK / 4), l = k0 + (idx % (BK / 4)) * 4;
      if (r < mnLim) {
        const float *p = x + r * ld + l;
        if (vec && l + 3 < kLim) {
          v[q] = *reinterpret_cast<const float4 *>(p);
          continue;
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          if (l + i < kLim) e[i] = p[i];
        }
      }
    } else {
      const int l = k0 + idx / (EXT / 4), r = mn0 + (idx % (EXT / 4)) * 4;
      if (l < kLim) {
        const float *p = x + l * ld + r;
        if (vec && r + 3 < mnLim) {
          v[q] = *reinterpret_cast<const float4 *>(p);
          continue;
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          if (r + i < mnLim) e[i] = p[i];
        }
      }
    }
    v[q] = make_float4(e[0], e[1], e[2], e[3]);
  }
}

// store_tile writes v (as load_tile filled it) into the shared tile s[BK][EXT + PAD] as
// s[l][r]: transposed (4 scalar stores) when KCONTIG, else one 16-byte store.
template <int EXT, bool KCONTIG, int LOADS>
static __device__ __forceinline__ void store_tile(float (*s)[EXT + PAD], const float4 (&v)[LOADS]) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int q = 0; q < LOADS; ++q) {
    const int idx = tid + q * NTHREADS;
    if (KCONTIG) {
      const int r = idx / (BK / 4), l = (idx % (BK / 4)) * 4;
      s[l + 0][r] = v[q].x;
      s[l + 1][r] = v[q].y;
      s[l + 2][r] = v[q].z;
      s[l + 3][r] = v[q].w;
    } else {
      reinterpret_cast<float4 *>(&s[idx / (EXT / 4)][0])[idx % (EXT / 4)] = v[q];
    }
  }
}

extern "C" __global__ void __launch_bounds__(NTHREADS, MIN_BLOCKS)
sgemm_simt(float *d, const float *c, const float *__restrict__ a, const float *__restrict__ b, float alpha,
           float beta, int m, int n, int k, int lda, int ldb, int ldc, int strideA, int strideB, int strideC) {
  __shared__ __align__(16) float As[2][BK][BM + PAD];
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];

  // Tile of this block: groups of GROUP_M tile rows, walked down each column of tiles, so
  // that the blocks resident together share panels of both A and B in L2.
  const int tilesN = (int)gridDim.x, tilesM = (int)gridDim.y;
  const int pid = (int)blockIdx.y * tilesN + (int)blockIdx.x;
  const int inGroup = GROUP_M * tilesN;
  const int first = (pid / inGroup) * GROUP_M;
  int rows = tilesM - first;
  if (rows > GROUP_M) rows = GROUP_M;
  const int r = pid % inGroup;
  const int m0 = (first + r % rows) * BM;
  const int n0 = (r / rows) * BN;

  const int z = (int)blockIdx.z;
  a += z * strideA;
  b += z * strideB;
  c += z * strideC;
  d += z * strideC;

  // 16-byte loads of A and B where the row length and the matrix's base allow them: the
  // same for every thread of the block.
  const bool vecA = (lda & 3) == 0 && aligned16(a);
  const bool vecB = (ldb & 3) == 0 && aligned16(b);
  const bool insideA = vecA && m0 + BM <= m;
  const bool insideB = vecB && n0 + BN <= n;

  const int warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;
  const int rowA = (warp / WARPS_N) * WM + (lane / LANES_N) * 4;  // first row of fragment 0
  const int colB = (warp % WARPS_N) * WN + (lane % LANES_N) * 4;  // first column of fragment 0

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  float4 ra[LOADS_A], rb[LOADS_B];
  load_tile<BM, !TRANS_A>(ra, a, lda, m0, m, 0, k, insideA && BK <= k, vecA);
  load_tile<BN, (bool)TRANS_B>(rb, b, ldb, n0, n, 0, k, insideB && BK <= k, vecB);
  store_tile<BM, !TRANS_A>(As[0], ra);
  store_tile<BN, (bool)TRANS_B>(Bs[0], rb);
  __syncthreads();

  int buf = 0;
  for (int k0 = 0; k0 < k; k0 += BK) {
    const int kn = k0 + BK;
    const bool more = kn < k;
    // The next k-tile's global loads are in flight while this one is computed.
    if (more) {
      const bool fullK = kn + BK <= k;
      load_tile<BM, !TRANS_A>(ra, a, lda, m0, m, kn, k, insideA && fullK, vecA);
      load_tile<BN, (bool)TRANS_B>(rb, b, ldb, n0, n, kn, k, insideB && fullK, vecB);
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      // Indexed in vectors from the row's start, so that the compiler sees 16-byte
      // alignment (clang splits *(float4 *)&As[..][rowA] into 4 scalar loads).
      const float4 *as = reinterpret_cast<const float4 *>(&As[buf][kk][0]);
      const float4 *bs = reinterpret_cast<const float4 *>(&Bs[buf][kk][0]);
      const float4 a0 = as[rowA / 4], a1 = as[(rowA + WM / 2) / 4];
      const float4 b0 = bs[colB / 4], b1 = bs[(colB + WN / 2) / 4];
      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = FMA32(av[i], bv[j], acc[i][j]);
    }
    if (more) {
      // The other buffer was last read before the previous barrier.
      store_tile<BM, !TRANS_A>(As[buf ^ 1], ra);
      store_tile<BN, (bool)TRANS_B>(Bs[buf ^ 1], rb);
    }
    __syncthreads();
    buf ^= 1;
  }

  // D = alpha*acc + beta*C: 16-byte where the 4 columns lie inside C and the layout allows.
  const bool vecC = (ldc & 3) == 0 && aligned16(d) && (beta == 0.0f || aligned16(c));
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + rowA + (i / 4) * (WM / 2) + i % 4;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int col = n0 + colB + j * (WN / 2);
      const int o = row * ldc + col;
      float v[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) v[e] = alpha * acc[i][j * 4 + e];
      if (vecC && col + 3 < n) {
        if (beta != 0.0f) {
          const float4 cv = *reinterpret_cast<const float4 *>(c + o);
          v[0] += beta * cv.x;
          v[1] += beta * cv.y;
          v[2] += beta * cv.z;
          v[3] += beta * cv.w;
        }
        *reinterpret_cast<float4 *>(d + o) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (col + e < n) {
            float t = v[e];
            if (beta != 0.0f) t += beta * c[o + e];
            d[o + e] = t;
          }
        }
      }
    }
  }
}
