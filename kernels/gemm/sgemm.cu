// sgemm.cu: fp32 general matrix multiply D = alpha*op(A)*op(B) + beta*C on the CUDA cores
// (CUDA C++, NVIDIA only), single and strided batched.
//
// Purpose: the "cuda-simt" variant of gemm/{nn,nt,tn,batched}/float32: the standard
// high-performance SIMT design (CUTLASS's SIMT sgemm, the "how to optimize a CUDA SGEMM"
// write-ups) where gemm.cl is the portable one: block tiles (128 x 128 by default), warp
// tiles, 8 x 8 outputs per thread as 2 x 2 fragments of 4 x 4, A stored transposed in
// shared memory so that the inner loop reads 16-byte vectors of both operands, 16-byte
// global loads, double-buffered shared memory with the next k-tile prefetched into
// registers while the current one is computed (one __syncthreads per k-tile), the next
// step's operands read from shared memory while the current step's fma run, fma
// accumulation in fp32. The transposes are compile-time (TRANS_A, TRANS_B): each
// combination is its own build.
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
// Tunables (-D, part of the cache key; kernels/gemm/sgemm.go's SimtTunables):
//   TRANS_A     0: A stored m x k; 1: A stored k x m                          default 0
//   TRANS_B     0: B stored k x n; 1: B stored n x k                          default 0
//   BM, BN      tile of C computed by one block: BM x BN                       default 128, 128
//   BK          depth of the k-tile (4 or a multiple of 8)                     default 8
//   WM, WN      tile of C computed by one warp, WM x WN with (WM/8)*(WN/8) = 32
//               lanes: each lane 2 x 2 fragments of 4 x 4 (32 x 64 or 64 x 32) default 32, 64
//   PAD         floats of padding per shared row (a multiple of 4: spreads the transposing
//               stores over the banks, keeps rows 16-byte aligned)            default 4
//   GROUP_M     block rows per raster group: consecutive blocks walk GROUP_M tiles down
//               before the next column of tiles, for L2 reuse (1 = row-major order) default 8
//   MIN_BLOCKS  __launch_bounds__ blocks per SM: the compiler keeps a thread within
//               65536/(MIN_BLOCKS*NTHREADS) registers (at most 255): 2 caps 256 threads at
//               128, 1 lets them take up to 255                               default 2
//   Constraints (checked with #error): BM % WM == BN % WN == 0, (WM/8)*(WN/8) == 32,
//   BK == 4 or BK % 8 == 0, at most 1024 threads, BM*BK/4 and BN*BK/4 multiples of the
//   thread count; for BK >= 8, BM and BN multiples of 16 and the warps a multiple of BM/16
//   (BN/16) or of BK/8 (tile_coord); BM/4 and BN/4 divide the thread count or are
//   multiples of it; PAD % 4 == 0.
// Builds: -DTRANS_A=0 -DTRANS_B=0 | -DTRANS_A=0 -DTRANS_B=1 -DBK=16 -DMIN_BLOCKS=1 | -DTRANS_A=1 -DTRANS_B=0 -DWM=64 -DWN=32 | -DTRANS_A=1 -DTRANS_B=1 -DBM=64 -DGROUP_M=1 -DMIN_BLOCKS=3 | -DTRANS_A=0 -DTRANS_B=0 -DBN=256 -DBK=16 -DMIN_BLOCKS=1 | -DTRANS_A=1 -DTRANS_B=1 -DBM=64 -DBN=64 -DBK=4 | -DTRANS_A=0 -DTRANS_B=1 -DBM=32 -DBN=256 -DBK=32 -DWM=8 -DWN=256
// Launch: 3D grid (ceil(n/BN), ceil(m/BM), batch) of blocks of exactly NTHREADS =
//   (BM/WM)*(BN/WN)*32 threads in x (256 by default); ceil(m/BM) <= 65535 (CUDA's grid
//   limit in y). Blocks are remapped in groups of GROUP_M tile rows (any grid is covered
//   exactly once). Dynamic shared memory of SMEM_BYTES = 2*BK*(BM+PAD + BN+PAD)*4 bytes
//   (16.5 KiB by default; above 48 KiB the launch opts in).
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
// way into shared memory (4 scalar stores per vector, conflict-free: tile_coord), the
// other stored as it is loaded.
//
// Registers (ptxas 11.8 for sm_90, per thread): 64 accumulators, 2 x 16 operands (this
// step's and the next), 4*(LOADS_A + LOADS_B) prefetched floats, addresses. Blocks inside
// both operands run their k-tiles in a loop of their own with unguarded loads from
// per-thread pointers (ktile<true>), so that the guarded loads' registers are not live
// there: the defaults fit 128 registers without spilling; BK=16 needs more than 128
// (MIN_BLOCKS=1: about 165).

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
#define NWARPS (NTHREADS / 32)
#define SMEM_BYTES (2 * BK * (BM + PAD + BN + PAD) * 4)  // dynamic shared memory of a block

#if BM < 1 || BN < 1 || BK < 1 || WM < 1 || WN < 1 || PAD < 0 || GROUP_M < 1 || MIN_BLOCKS < 1
#error "sgemm.cu: BM, BN, BK, WM, WN, GROUP_M and MIN_BLOCKS must be positive, PAD not negative"
#endif
#if BM % WM != 0 || BN % WN != 0
#error "sgemm.cu: BM and BN must be multiples of WM and WN"
#endif
#if WM % 8 != 0 || WN % 8 != 0 || (WM / 8) * (WN / 8) != 32
#error "sgemm.cu: a warp tile WM x WN must hold 32 lanes of 2 x 2 fragments of 4 x 4: (WM/8)*(WN/8) == 32"
#endif
#if (BK != 4 && BK % 8 != 0) || PAD % 4 != 0
#error "sgemm.cu: BK must be 4 or a multiple of 8, PAD a multiple of 4"
#endif
#if NTHREADS > 1024
#error "sgemm.cu: more than 1024 threads per block"
#endif
#if (BM * BK / 4) % NTHREADS != 0 || (BN * BK / 4) % NTHREADS != 0
#error "sgemm.cu: BM*BK/4 and BN*BK/4 must be multiples of the thread count"
#endif
#if BK != 4 && (BM % 16 != 0 || BN % 16 != 0 || (NWARPS % (BM / 16) != 0 && NWARPS % (BK / 8) != 0) || \
                (NWARPS % (BN / 16) != 0 && NWARPS % (BK / 8) != 0))
#error "sgemm.cu: for BK >= 8, BM and BN must be multiples of 16 and the warps a multiple of BM/16 (BN/16) or of BK/8"
#endif
#if (NTHREADS % (BM / 4) != 0 && (BM / 4) % NTHREADS != 0) || (NTHREADS % (BN / 4) != 0 && (BN / 4) % NTHREADS != 0)
#error "sgemm.cu: BM/4 and BN/4 must divide the thread count or be multiples of it"
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

// Placement of the global loads. Vector q of this thread (0 <= q < LOADS, LOADS =
// EXT*BK/4/NTHREADS) of a BK-deep tile of EXT rows (BM or BN) of op(X) goes to row mn and k
// offset kk of the tile: tile_coord(q) = tile_base() + tile_delta(q), a per-thread base
// plus an offset that depends on q alone, so that it folds into the addressing of the
// unrolled loads and stores. Every vector of the tile is placed once.
//   KCONTIG (k contiguous in memory): the vector holds 4 consecutive k of row mn (kk a
//   multiple of 4). For BK >= 8, each warp covers 16 consecutive rows times 2 adjacent
//   vectors of k (32 bytes of each row: whole sectors), so that the transposing stores into
//   s[kk + i][mn], with rows of EXT + PAD = 4 (mod 32) floats, hit 32 distinct banks
//   (16*(kk/4) + mn mod 32 differs across the warp): chunk c = warp + q*NWARPS of the
//   EXT/16 x BK/8 chunks is row group c % (EXT/16) and k pair c / (EXT/16) when NWARPS is a
//   multiple of EXT/16 (q moves along k), else row group c / (BK/8) and k pair c % (BK/8)
//   (q moves along m; needs NWARPS a multiple of BK/8). BK == 4: row tid + q*NTHREADS.
//   Else (m or n contiguous): the vector holds rows mn..mn+3 (mn a multiple of 4) of k
//   offset kk: vector tid + q*NTHREADS of the EXT/4 per k.

// tile_base is tile_coord(0): the place of the thread's first vector.
template <int EXT, bool KCONTIG>
static __device__ __forceinline__ void tile_base(int &mn, int &kk) {
  const unsigned tid = threadIdx.x, warp = tid / 32u, lane = tid % 32u;
  // (Divisors that are 0 for other tunables are replaced by 1: their branches are not taken.)
  constexpr unsigned RG = EXT >= 16 ? EXT / 16 : 1, PG = BK >= 8 ? BK / 8 : 1, E4 = EXT / 4;
  if (KCONTIG) {
    if (BK == 4) {
      mn = (int)tid;
      kk = 0;
    } else if (NWARPS % RG == 0) {
      mn = (int)((warp % RG) * 16u + lane / 2u);
      kk = (int)(((warp / RG) * 2u + lane % 2u) * 4u);
    } else {
      mn = (int)((warp / PG) * 16u + lane / 2u);
      kk = (int)(((warp % PG) * 2u + lane % 2u) * 4u);
    }
  } else if (NTHREADS % E4 == 0) {
    mn = (int)((tid % E4) * 4u);
    kk = (int)(tid / E4);
  } else {
    mn = (int)(tid * 4u);
    kk = 0;
  }
}

// tile_delta is tile_coord(q) - tile_coord(0), the same for every thread.
template <int EXT, bool KCONTIG>
static __device__ __forceinline__ void tile_delta(int q, int &dmn, int &dkk) {
  constexpr int RG = EXT >= 16 ? EXT / 16 : 1, PG = BK >= 8 ? BK / 8 : 1, E4 = EXT / 4;
  dmn = dkk = 0;
  if (KCONTIG) {
    if (BK == 4) {
      dmn = q * NTHREADS;
    } else if (NWARPS % RG == 0) {
      dkk = q * (NWARPS / RG) * 8;
    } else {
      dmn = q * (NWARPS / PG) * 16;
    }
  } else if (NTHREADS % E4 == 0) {
    dkk = q * (NTHREADS / E4);
  } else {
    constexpr int R = E4 >= NTHREADS ? E4 / NTHREADS : 1;  // E4 % NTHREADS == 0: R vectors of one k per thread
    dmn = (q % R) * NTHREADS * 4;
    dkk = q / R;
  }
}

template <int EXT, bool KCONTIG>
static __device__ __forceinline__ void tile_coord(int q, int &mn, int &kk) {
  int dmn, dkk;
  tile_base<EXT, KCONTIG>(mn, kk);
  tile_delta<EXT, KCONTIG>(q, dmn, dkk);
  mn += dmn;
  kk += dkk;
}

// tile_ptr returns the address of the thread's first vector of the k-tile at k0 of a tile
// that lies inside op(X): row mn0 + mn, k k0 + kk of tile_base.
template <int EXT, bool KCONTIG>
static __device__ __forceinline__ const float *tile_ptr(const float *__restrict__ x, int ld, int mn0, int k0) {
  int mn, kk;
  tile_base<EXT, KCONTIG>(mn, kk);
  return KCONTIG ? x + (mn0 + mn) * ld + k0 + kk : x + (k0 + kk) * ld + mn0 + mn;
}

// load_fast loads the thread's vectors of a k-tile that lies inside op(X), with unguarded
// 16-byte loads, from p = tile_ptr of that k-tile.
template <int EXT, bool KCONTIG, int LOADS>
static __device__ __forceinline__ void load_fast(float4 (&v)[LOADS], const float *__restrict__ p, int ld) {
#pragma unroll
  for (int q = 0; q < LOADS; ++q) {
    int dmn, dkk;
    tile_delta<EXT, KCONTIG>(q, dmn, dkk);
    v[q] = *reinterpret_cast<const float4 *>(p + (KCONTIG ? dmn * ld + dkk : dkk * ld + dmn));
  }
}

// load_tile loads this thread's share of one BK-deep tile of an operand into v: EXT rows
// (BM or BN) of op(X) starting at mn0 (fewer than EXT rows are valid when mn0+EXT > mnLim)
// and columns k0..k0+BK of k (fewer when k0+BK > kLim). KCONTIG: element (r, l) lives at
// x[r*ld + l] (k contiguous); else at x[l*ld + r] (m or n contiguous). Vector q of the
// thread is tile_coord(q).
//   full: the tile lies inside the matrix and vec holds: unguarded 16-byte loads.
//   vec:  ld % 4 == 0 and x 16-byte aligned: a group of 4 in range is one 16-byte load.
// Out-of-range elements are 0.
template <int EXT, bool KCONTIG, int LOADS>
static __device__ __forceinline__ void load_tile(float4 (&v)[LOADS], const float *__restrict__ x, int ld,
                                                 int mn0, int mnLim, int k0, int kLim, bool full, bool vec) {
  if (full) {
#pragma unroll
    for (int q = 0; q < LOADS; ++q) {
      int mn, kk;
      tile_coord<EXT, KCONTIG>(q, mn, kk);
      const int o = KCONTIG ? (mn0 + mn) * ld + k0 + kk : (k0 + kk) * ld + mn0 + mn;
      v[q] = *reinterpret_cast<const float4 *>(x + o);
    }
    return;
  }
#pragma unroll
  for (int q = 0; q < LOADS; ++q) {
    int mn, kk;
    tile_coord<EXT, KCONTIG>(q, mn, kk);
    float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (KCONTIG) {
      const int r = mn0 + mn, l = k0 + kk;
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
      const int l = k0 + kk, r = mn0 + mn;
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
#pragma unroll
  for (int q = 0; q < LOADS; ++q) {
    int mn, kk;
    tile_coord<EXT, KCONTIG>(q, mn, kk);
    if (KCONTIG) {
      s[kk + 0][mn] = v[q].x;
      s[kk + 1][mn] = v[q].y;
      s[kk + 2][mn] = v[q].z;
      s[kk + 3][mn] = v[q].w;
    } else {
      *reinterpret_cast<float4 *>(&s[kk][mn]) = v[q];
    }
  }
}

// load_frag reads the thread's operands of step kk of a shared tile: rows 4*rowA4..+3 and
// 4*rowA4+WM/2..+3 of A, columns 4*colB4..+3 and 4*colB4+WN/2..+3 of B (rowA4, colB4 in
// vectors: the second fragment is a constant offset from the first). Indexed in vectors
// from the row's start, so that the compiler sees 16-byte alignment (clang splits
// *(float4 *)&As[kk][rowA] into 4 scalar loads).
static __device__ __forceinline__ void load_frag(float4 (&fa)[2], float4 (&fb)[2], const float (*as)[BM + PAD],
                                                 const float (*bs)[BN + PAD], int kk, int rowA4, int colB4) {
  const float4 *a4 = reinterpret_cast<const float4 *>(&as[kk][0]) + rowA4;
  const float4 *b4 = reinterpret_cast<const float4 *>(&bs[kk][0]) + colB4;
  fa[0] = a4[0];
  fa[1] = a4[WM / 8];
  fb[0] = b4[0];
  fb[1] = b4[WN / 8];
}

// outer accumulates the 8 x 8 outer product of one k step into acc.
static __device__ __forceinline__ void outer(float (&acc)[8][8], const float4 (&fa)[2], const float4 (&fb)[2]) {
  const float av[8] = {fa[0].x, fa[0].y, fa[0].z, fa[0].w, fa[1].x, fa[1].y, fa[1].z, fa[1].w};
  const float bv[8] = {fb[0].x, fb[0].y, fb[0].z, fb[0].w, fb[1].x, fb[1].y, fb[1].z, fb[1].w};
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = FMA32(av[i], bv[j], acc[i][j]);
}

// Operands is what the main loop of a block knows of its operands: the matrices of its
// batch entry, their leading dimensions, the problem's m, n and k, the block's tile m0, n0,
// the thread's fragment origin in vectors (rowA4, colB4: load_frag), whether 16-byte loads
// are possible (vecA, vecB) and whether the block's tile lies inside op(A) (op(B)) with
// them (insideA, insideB: see the kernel).
struct Operands {
  const float *__restrict__ a;
  const float *__restrict__ b;
  int lda, ldb, m, n, k, m0, n0, rowA4, colB4;
  bool vecA, vecB, insideA, insideB;
};

// ktile computes k-tile k0 (in buffer buf) into acc, and moves buf and k0 on to the next
// one. The next k-tile's global loads are issued first, so that they are in flight during
// BK-1 steps of fma; before the last step they are stored into the other buffer (last read
// before the previous barrier), and after the barrier the next tile's first operands are
// read, so that the barrier and that read overlap the last step's fma. On entry fa[0], fb[0]
// hold the operands of step 0; on return, those of the next tile's step 0. FAST: the block
// lies inside both operands (insideA && insideB) and the next k-tile is whole: unguarded
// loads only, no branch, from pa and pb (the thread's first vectors of k-tile k0 of A and
// B, tile_ptr), which move on with k0; otherwise pa and pb are not used.
template <bool FAST>
static __device__ __forceinline__ void ktile(const Operands &o, float (&acc)[8][8], float4 (&fa)[2][2],
                                             float4 (&fb)[2][2], float4 (&ra)[LOADS_A], float4 (&rb)[LOADS_B],
                                             float (*As)[BK][BM + PAD], float (*Bs)[BK][BN + PAD], int &buf,
                                             int &k0, const float *&pa, const float *&pb) {
  const int kn = k0 + BK;
  const bool more = FAST || kn < o.k;
  if (FAST) {
    pa += TRANS_A ? BK * o.lda : BK;
    pb += TRANS_B ? BK : BK * o.ldb;
    load_fast<BM, !TRANS_A>(ra, pa, o.lda);
    load_fast<BN, (bool)TRANS_B>(rb, pb, o.ldb);
  } else if (more) {
    const bool fullK = kn + BK <= o.k;
    load_tile<BM, !TRANS_A>(ra, o.a, o.lda, o.m0, o.m, kn, o.k, o.insideA && fullK, o.vecA);
    load_tile<BN, (bool)TRANS_B>(rb, o.b, o.ldb, o.n0, o.n, kn, o.k, o.insideB && fullK, o.vecB);
  }
#pragma unroll
  for (int kk = 0; kk < BK; ++kk) {
    if (kk < BK - 1) load_frag(fa[(kk + 1) & 1], fb[(kk + 1) & 1], As[buf], Bs[buf], kk + 1, o.rowA4, o.colB4);
    if (kk == BK - 1 && more) {
      store_tile<BM, !TRANS_A>(As[buf ^ 1], ra);
      store_tile<BN, (bool)TRANS_B>(Bs[buf ^ 1], rb);
      __syncthreads();
      load_frag(fa[(kk + 1) & 1], fb[(kk + 1) & 1], As[buf ^ 1], Bs[buf ^ 1], 0, o.rowA4, o.colB4);
    }
    outer(acc, fa[kk & 1], fb[kk & 1]);
  }
  buf ^= 1;
  k0 = kn;
}

extern "C" __global__ void __launch_bounds__(NTHREADS, MIN_BLOCKS)
sgemm_simt(float *d, const float *c, const float *__restrict__ a, const float *__restrict__ b, float alpha,
           float beta, int m, int n, int k, int lda, int ldb, int ldc, int strideA, int strideB, int strideC) {
  // Two buffers of each operand's k-tile, As[buf][kk][m] and Bs[buf][kk][n]: SMEM_BYTES.
  extern __shared__ __align__(16) float smem[];
  float(*const As)[BK][BM + PAD] = reinterpret_cast<float(*)[BK][BM + PAD]>(smem);
  float(*const Bs)[BK][BN + PAD] = reinterpret_cast<float(*)[BK][BN + PAD]>(smem + 2 * BK * (BM + PAD));

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

  // Prologue: k-tile 0 into buffer 0, and the operands of its first step into registers.
  float4 ra[LOADS_A], rb[LOADS_B];
  load_tile<BM, !TRANS_A>(ra, a, lda, m0, m, 0, k, insideA && BK <= k, vecA);
  load_tile<BN, (bool)TRANS_B>(rb, b, ldb, n0, n, 0, k, insideB && BK <= k, vecB);
  store_tile<BM, !TRANS_A>(As[0], ra);
  store_tile<BN, (bool)TRANS_B>(Bs[0], rb);
  __syncthreads();
  float4 fa[2][2], fb[2][2];  // [step parity][fragment]: the next step's operands load during this step's fma
  load_frag(fa[0], fb[0], As[0], Bs[0], 0, rowA / 4, colB / 4);

  // Main loop (ktile), one barrier per k-tile. Blocks inside both operands first run the
  // k-tiles whose successor is whole with unguarded loads only, in a loop of its own (the
  // guarded loads' registers are not live there); every block ends with the general loop
  // (at most two k-tiles for those).
  const Operands ops = {a, b, lda, ldb, m, n, k, m0, n0, rowA / 4, colB / 4, vecA, vecB, insideA, insideB};
  int buf = 0, k0 = 0;
  if (insideA && insideB) {
    // pa, pb: the thread's first vector of k-tile k0 of A and B.
    const float *pa = tile_ptr<BM, !TRANS_A>(a, lda, m0, 0), *pb = tile_ptr<BN, (bool)TRANS_B>(b, ldb, n0, 0);
    while (k0 + 2 * BK <= k) ktile<true>(ops, acc, fa, fb, ra, rb, As, Bs, buf, k0, pa, pb);
  }
  const float *unused = nullptr;
  while (k0 < k) ktile<false>(ops, acc, fa, fb, ra, rb, As, Bs, buf, k0, unused, unused);

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
