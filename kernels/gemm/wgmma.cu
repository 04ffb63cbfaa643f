// wgmma.cu: GEMM on Hopper's warpgroup tensor cores (CUDA C++, sm_90a), fed by the Tensor
// Memory Accelerator.
//
// Purpose: the "cuda-wgmma" variant of gemm/{nn,nt,batched}/{float16,bfloat16} and of
// gemm/{nn,nt}/{float8e4m3,float8e5m2} (nn through a copy of B that gemm_transpose writes
// n x k). A block of three warpgroups computes a BM x BN tile of D, BM 128 (or 64 for a
// product of at most 64 rows, below). Warpgroup 0 is the producer: one of its threads
// copies each k step's tiles of A (BM x BK) and B (BK x BN) from global to shared
// memory with TMA (cp.async.bulk.tensor, boxes described by tensor maps the host encodes),
// into a ring of STAGES stages; a "full" mbarrier per stage counts the bytes in. Warpgroups
// 1 and 2 are the consumers: each waits for a stage to be full, multiplies its 64 rows of A
// by B with wgmma.mma_async m64nBNk16 (HGMMA in SASS; both operands read by the tensor cores
// through 128-byte-swizzled matrix descriptors), keeps that group in flight while it waits
// for the previous one, and then arrives on the previous stage's "empty" mbarrier, which
// lets the producer refill it (one arrival per warpgroup). setmaxnreg
// moves registers from the producer (40 per thread) to the consumers (232) for the
// BN/2 float accumulators each thread holds.
//
// Arguments (row-major as mma.cu's; A stored m x k, B stored k x n or, TRANS_B, n x k):
//   gemm_wgmma(tmA, tmB, tmA2, tmB2, d, c, alpha, beta, m, n, ldc, strideC, k, ws, kt_per)
//     tmA: tensor map of A as dims {k, m, batch} (elements, fastest first), box {BK, BM, 1},
//       128-byte swizzle; tmB: of B as {n, k, batch} with box {64, 64, 1} (nn: MN-major) or
//       {k, n, batch} with box {BK, BN, 1} (TRANS_B: K-major), 128-byte swizzle; BK = 64
//       elements (16-bit) or 128 (8-bit), one 128-byte row. The maps
//       carry lda, ldb, strideA and strideB (multiples of 8 elements: TMA's 16-byte rule).
//     d[z*strideC + i*ldc + j] = alpha * sum_l A_z[i][l] * op(B_z)[l][j] + beta * c[...]
//     z = blockIdx.z. When beta == 0, c is not read; d may be c.
//     kt_per > 0: split-K, grid row y = blockIdx.y (of gridDim.y) takes the k steps y*kt_per
//       to (y+1)*kt_per and stores its partial sums in ws[((z*gridDim.y + y)*m + i)*n + j]
//       instead of D; gemm_splitk_reduce then writes D. kt_per == 0: one pass, ws unused.
//
// Semantics: A, B IEEE binary16 (PREC 3), bfloat16 (PREC 4), OCP float8 E4M3 (PREC 6) or
//   E5M2 (PREC 7) bits, products exact, accumulated in float32 by the tensor cores (about 14
//   bits kept for float8); C, D float. Float8 builds the nt layout only (TRANS_B=1): its
//   wgmma reads both operands K-major (the host transposes an nn B first, gemm_transpose);
//   a k step is then 128 elements (still 128 bytes).
//
// Tunables (-D, part of the cache key):
//   PREC      3 float16, 4 bfloat16, 6 float8e4m3, 7 float8e5m2      default 3
//   TRANS_B   1: B stored n x k (K-major)                             default 0
//   BN        columns of D per block: 64, 128 or 256 (m64nBNk16)          default 256
//   STAGES    shared-memory stages of the ring (>= 2)                default 4
//   GROUP_M   tile rows of D a group of consecutive blocks covers     default 8
//   MN_SWAP   1: the MN-major B's descriptor holds the 64-column group stride in the stride
//             byte offset and the 8-row k group stride in the leading one (0: the
//             reverse, CUTLASS's reading of the 128-byte swizzled MN-major layout) default 0
//   CLUSTER_M 2: blocks in clusters of two on neighbouring tile rows of one tile column;
//             each block's producer copies half of their shared B tile and multicasts
//             it into both (half the L2 traffic of B), and a stage is refilled once the
//             consumers of both blocks have released it                    default 1
//   PERSISTENT 1: a grid of at most one block (cluster) per multiprocessor, each taking
//             tiles id, id + the grid's clusters, ...: the producer copies the next tile's
//             first stages while the consumers store the last tile's D         default 0
//             2: the same grid, ping-pong: each consumer warpgroup computes whole
//             128 x BN tiles (two m64nBN products per k step; BN at most 128), the two
//             taking the block's tiles in turn, so that one stores its D while the other's
//             products run. The ring serves them in tile order: a warpgroup starts a tile's
//             k steps once the other has waited for its last tile's last stage (named
//             barriers 1 and 2), which also keeps each mbarrier wait at most one phase ahead.
//   BM        rows of D per block: 128, or 64 for a product of at most 64 rows (PERSISTENT
//             0, CLUSTER_M 1, SWAP_AB 0, STAGES even, 4 or more): A's box is 64 rows, and the two
//             consumer warpgroups take the tile's k steps in turn (even and odd), each
//             accumulating the whole 64 x BN tile; at the end each hands the other the
//             accumulators of the other's half of the columns through shared memory, adds
//             those it receives, and stores its half. A 128-row tile of such a product is
//             half zeros, which TMA writes for every k step; at 64 x 8192 x 8192 it fills
//             the GPU only with a split of K and the split's second launch.       default 128
//   SWAP_AB   1 (tf32 alone, TRANS_B=1, PERSISTENT 0 or 1, CLUSTER_M 1): the nn product
//             computed transposed, D^T = B^T A^T, so that B is read as stored (k x n, n
//             fastest) where tf32's wgmma, which reads shared-memory operands K-major only,
//             would need a transposed copy of it. The kernel's m and n are D's n and m:
//             tmA is B's map as dims {n, k, batch} with box {32, 32, 1} (BM/32 boxes a
//             stage, 4 KiB apart: k rows of 32 columns), whose elements the consumers load
//             into the registers of wgmma's A fragments (m64nBNk8, A from registers); tmB
//             is A's map as {k, m, batch} with box {BK, BN, 1}, the K-major B of the
//             kernel. The epilogue stores kernel element (i, j) at D's (j, i); split-K's
//             partial sums go to ws in D's layout (m x n of D), which gemm_splitk_reduce
//             reads with D's m and n. Each k step waits for its products before the next
//             step's loads rewrite the fragments (no group in flight across steps: on an
//             H200 a form that kept one, each step's fragments in registers of their own,
//             ran 9-30% slower at 64 to 8192 rows, 2026-11-30).                  default 0
// Builds: -DPREC=1 -DTRANS_B=1 | -DPREC=2 -DTRANS_B=1 -DSTAGES=2 | -DPREC=3 | -DPREC=4 -DTRANS_B=1 | -DPREC=3 -DMN_SWAP=1 | -DPREC=4 -DBN=128 | -DPREC=3 -DBN=128 -DTRANS_B=1 | -DPREC=6 -DTRANS_B=1 | -DPREC=7 -DTRANS_B=1 -DBN=128 | -DPREC=3 -DCLUSTER_M=2 | -DPREC=4 -DTRANS_B=1 -DCLUSTER_M=2 -DBN=128 | -DPREC=2 -DTRANS_B=1 -DSTAGES=2 -DCLUSTER_M=2 | -DPREC=3 -DPERSISTENT=1 | -DPREC=4 -DBN=64 | -DPREC=6 -DTRANS_B=1 -DBN=64 -DCLUSTER_M=2 | -DPREC=6 -DTRANS_B=1 -DPERSISTENT=1 -DCLUSTER_M=2 | -DPREC=3 -DPERSISTENT=2 -DBN=128 | -DPREC=4 -DTRANS_B=1 -DPERSISTENT=2 -DBN=128 -DCLUSTER_M=2 | -DPREC=2 -DTRANS_B=1 -DSTAGES=2 -DPERSISTENT=2 -DBN=128 | -DPREC=6 -DTRANS_B=1 -DPERSISTENT=2 -DBN=64 | -DPREC=1 -DTRANS_B=1 -DSWAP_AB=1 -DBN=64 | -DPREC=1 -DTRANS_B=1 -DSWAP_AB=1 -DBN=256 -DPERSISTENT=1 | -DPREC=3 -DBM=64 -DBN=64 | -DPREC=4 -DBM=64 -DBN=256 -DTRANS_B=1 | -DPREC=6 -DTRANS_B=1 -DBM=64 -DBN=128 | -DPREC=2 -DTRANS_B=1 -DSTAGES=4 -DBM=64 -DBN=128
// Launch: 3D grid (ceil(ceil(m/BM)/CLUSTER_M) * CLUSTER_M * ceil(n/BN), splits, batch) blocks of
//   384 threads in clusters of CLUSTER_M x 1 x 1 (PERSISTENT: any multiple of CLUSTER_M up
//   to that in x), dynamic shared memory STAGES * (BM +
//   BN) * 128 bytes + 1024 (the stages start on a 1024-byte boundary, the 128-byte
//   swizzle's period). With CLUSTER_M = 2 and TRANS_B, tmB's box is BK x BN/2 (each
//   block copies half the rows of B's tile).
// Shared layouts (128-byte swizzle: the 16-byte chunk c of row r of every 1024-byte group
//   of 8 rows is stored at chunk c ^ (r % 8)): A's box is 128 rows of 64 k (128 bytes
//   each); the nt B's box BN rows of 64 k; the nn B's BN/64 boxes of 64 k rows of 64
//   columns, 8 KiB apart. A K-major descriptor (A; B when TRANS_B) starts at the
//   consumer's row and the k step's 32-byte column, its 8-row groups 1024 bytes apart; the
//   MN-major one (B of nn) at the k step's row 16*ks, 8-row k groups 1024 bytes apart,
//   64-column groups 8 KiB apart.
// Boundaries: TMA reads boxes past m, n or k as zeros; stores past m or n are skipped.

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
#ifndef MN_SWAP
#define MN_SWAP 0
#endif
#ifndef BN
#define BN 256
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
#ifndef PERSISTENT
#define PERSISTENT 0
#endif
#ifndef SWAP_AB
#define SWAP_AB 0
#endif
// PREFETCH_C_STEPS: a one-tile block (PERSISTENT 0) of at most this many k steps, with C
// read, prefetches its tile of C into L2 from the producer warpgroup's idle threads, so
// that C's DRAM reads overlap the products instead of following them. On an H200
// (2026-12-01) 8192 x 8192 x 128 took 210 us against 227 in float16 and bfloat16, 232
// against 252 in tf32; with 8 to 32 steps (512^3 to 2048^3, 4096 x 1024 x 512, 4096 x
// 4096 x 1024) it ran 1-4% slower, hence the bound.
#ifndef PREFETCH_C_STEPS
#define PREFETCH_C_STEPS 4
#endif
#if PERSISTENT == 2
#define PINGPONG 1
#if BN > 128
#error "wgmma.cu: PERSISTENT=2 (ping-pong) takes BN 64 or 128: a warpgroup holds a whole tile's accumulators"
#endif
#else
#define PINGPONG 0
#endif
#if CLUSTER_M != 1 && CLUSTER_M != 2
#error "wgmma.cu: CLUSTER_M must be 1 or 2"
#endif
#if SWAP_AB && (PREC != 1 || !TRANS_B || PINGPONG || CLUSTER_M != 1)
#error "wgmma.cu: SWAP_AB=1 is tf32's (PREC 1) with TRANS_B=1, PERSISTENT 0 or 1 and CLUSTER_M 1"
#endif
#if GROUP_M < CLUSTER_M
#error "wgmma.cu: GROUP_M must be at least CLUSTER_M"
#endif

#if PREC == 3
#define WG_TYPE "f16"
#elif PREC == 4
#define WG_TYPE "bf16"
#elif PREC == 1 || PREC == 2
#define WG_TYPE "tf32"
#elif PREC == 6
#define WG_TYPE "e4m3"
#elif PREC == 7
#define WG_TYPE "e5m2"
#else
#error "wgmma.cu: PREC must be 1 (tf32), 2 (3xTF32), 3 (float16), 4 (bfloat16), 6 (e4m3) or 7 (e5m2)"
#endif
#if PREC <= 2
// tf32: k8 per instruction, both operands K-major (no transpose operands), 32 elements to a
// 128-byte row. PREC 2 reads the rounded and split copies gemm_split makes; PREC 1 reads
// float32 operands stored K-major in place, or gemm_split's copies of the others, and the
// tensor cores drop each float32's low 13 bits.
#if !TRANS_B
#error "wgmma.cu: tf32 takes B stored n x k (TRANS_B=1) only: in place or gemm_split's copy"
#endif
#define IN_BYTES 4
#define WG_K "8"
#define WG_TAIL ""
#define WG_RS_TAIL ""
#elif PREC >= 6
// 8-bit inputs: k32 per instruction, both operands K-major (the instruction has no
// transpose operands), 128 elements to a 128-byte row.
#if !TRANS_B
#error "wgmma.cu: float8 takes B stored n x k (TRANS_B=1) only"
#endif
#define IN_BYTES 1
#define WG_K "32"
#define WG_TAIL ""
#define WG_RS_TAIL ""
#else
#define IN_BYTES 2
#define WG_K "16"
#if TRANS_B // the transpose immediates: A's and B's (B's alone with A from registers)
#define WG_TAIL ", 0, 0"
#define WG_RS_TAIL ", 0"
#else
#define WG_TAIL ", 0, 1"
#define WG_RS_TAIL ", 1"
#endif
#endif
#if STAGES < 2
#error "wgmma.cu: STAGES must be at least 2"
#endif
#if BN != 64 && BN != 128 && BN != 256
#error "wgmma.cu: BN must be 64, 128 or 256"
#endif
#ifndef BM
#define BM 128
#endif
#if BM != 64 && BM != 128
#error "wgmma.cu: BM must be 64 or 128"
#endif
#if BM == 64 && (PERSISTENT != 0 || CLUSTER_M != 1 || SWAP_AB || STAGES % 2 != 0 || STAGES < 4)
// A stage serves one consumer warpgroup, which holds its last step's stage while it waits
// for its next: with two stages each would wait for the stage it holds.
#error "wgmma.cu: BM=64 takes PERSISTENT 0, CLUSTER_M 1, SWAP_AB 0 and an even STAGES of at least 4 (two a consumer)"
#endif
#define BK (128 / IN_BYTES) // elements of a 128-byte row: the swizzle's span
#define THREADS 384
#define STAGE_A (BM * BK * IN_BYTES) // bytes
#define STAGE_B (BN * BK * IN_BYTES)
#if PREC == 2
#define SPLIT 2 // tiles of the big and of the small parts
#else
#define SPLIT 1
#endif
#define STAGE ((STAGE_A + STAGE_B) * SPLIT)
// The accumulators of a consumer thread: a 64 x BN product, or with PINGPONG two (rows 0-63
// and 64-127 of its warpgroup's tile). With BM 64 both consumers hold the tile's 64 x BN
// (of alternate k steps).
#if PINGPONG
#define ACC BN
#else
#define ACC (BN / 2)
#endif


// WGMMA(d, da, db, acc): the block's m64nBN product, both operands from descriptors;
// WGMMA_RS(d, a, db, acc), with SWAP_AB, the same with A from registers.
#define WG_INSTR(n) "wgmma.mma_async.sync.aligned.m64n" n "k" WG_K ".f32." WG_TYPE "." WG_TYPE
#if BN == 64
PRISM_WGMMA_SS(WGMMA, 32, WG_INSTR("64"), WG_TAIL)
PRISM_WGMMA_RS(WGMMA_RS, 32, WG_INSTR("64"), WG_RS_TAIL)
#elif BN == 128
PRISM_WGMMA_SS(WGMMA, 64, WG_INSTR("128"), WG_TAIL)
PRISM_WGMMA_RS(WGMMA_RS, 64, WG_INSTR("128"), WG_RS_TAIL)
#else
PRISM_WGMMA_SS(WGMMA, 128, WG_INSTR("256"), WG_TAIL)
PRISM_WGMMA_RS(WGMMA_RS, 128, WG_INSTR("256"), WG_RS_TAIL)
#endif

// wgmma_wait1 waits until at most one wgmma group of this warpgroup is pending, and
// wgmma_wait0 until none is; both name the accumulators as operands, so that the compiler
// neither reads nor moves them while the tensor cores may still write them.
static __device__ __forceinline__ void wgmma_wait1(float *d) {
  asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < ACC; ++i) {
    asm volatile("" : "+f"(d[i])::"memory");
  }
}
static __device__ __forceinline__ void wgmma_wait0(float *d) {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < ACC; ++i) {
    asm volatile("" : "+f"(d[i])::"memory");
  }
}


// release tells the producers that this consumer warpgroup is done with the stage whose
// "empty" mbarrier is at bar: one thread of the warpgroup arrives for it (wgmma.wait_group
// has retired the warpgroup's reads of the stage), on this block's barrier and, in a
// cluster, on the other block's too, since each block's producer fills half of B in both.
static __device__ __forceinline__ void release(unsigned int bar) {
#if CLUSTER_M == 2
  const unsigned int t = threadIdx.x & 127;
  if (t == 0 || t == 64) {
    prism_mbar_arrive_cluster(bar, t >> 6);
  }
#else
  if ((threadIdx.x & 127) == 0) {
    prism_mbar_arrive(bar);
  }
#endif
}

#if SWAP_AB
// a_frags loads a consumer thread's A fragments of one stage for SWAP_AB: af[ks] for the
// k8 instruction ks (k 8*ks..8*ks+7 of the stage), registers a0..a3 the elements (row g,
// k t), (g+8, t), (g, t+4), (g+8, t+4) of its warp's 16 rows (g = lane/4, t = lane%4; the
// m16n8k8 tf32 layout), rows 64*cw + 16*warp + g of the kernel's A, which are columns of B.
// The stage holds B's columns in boxes of 32 (4 KiB apart), each k row of 128 bytes with
// its 16-byte chunk c at c ^ (k % 8) (the 128-byte swizzle); rows r and r+8 lie in one box.
static __device__ __forceinline__ void a_frags(unsigned int sa, int cw, int warp, int lane, unsigned int (&af)[4][4]) {
  const int g = lane >> 2, t = lane & 3;
  const int r = 64 * cw + 16 * warp + g;
  const unsigned int box = sa + (r >> 5) * 4096 + (r & 3) * 4;
  const int c = (r & 31) >> 2; // r's chunk in its row; r + 8's is c + 2
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int kk = 8 * ks + t + 4 * (i >> 1), cc = c + 2 * (i & 1);
      asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(af[ks][i]) : "r"(box + kk * 128 + ((cc ^ (kk & 7)) << 4)) : "memory");
    }
  }
}

// swap_step runs the ring's step it of a SWAP_AB tile for consumer cw: it waits for the
// stage, loads its fragments, issues the four products, waits for them and releases the
// stage.
static __device__ __forceinline__ void swap_step(float *acc, int it, unsigned int sbase, unsigned int full, unsigned int empty, int cw,
                                                 int warp, int lane) {
  const int s = it % STAGES;
  prism_mbar_wait(full + 8 * s, (it / STAGES) & 1);
  const unsigned int sa = sbase + s * STAGE, sb = sa + STAGE_A;
  unsigned int cur[4][4];
  a_frags(sa, cw, warp, lane, cur);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
    WGMMA_RS(acc, cur[ks], prism_wgmma_desc(sb + 32 * ks, 16, 1024), 1);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  wgmma_wait0(acc); // the products have read the fragments and the stage
  release(empty + 8 * s);
}
#endif

// load_b copies this block's share of B's k step kt for stage s (at shared address sb) with
// tensor map tm, completing its bytes on the barrier at full: all of it, or, in a cluster
// of two, one half multicast into both blocks (TRANS_B: rows rank*BN/2.. of the BN x BK
// box; nn: the 64-column boxes j with j % 2 == rank).
static __device__ __forceinline__ void load_b(unsigned int sb, const prism_tensor_map *tm, int kt, int n0, int z, unsigned int full,
                                              unsigned int rank) {
#if TRANS_B
#if CLUSTER_M == 2
  prism_tma_load_3d_multicast(sb + rank * (BN / 2) * 128, tm, kt * BK, n0 + rank * (BN / 2), z, full, 3);
#else
  prism_tma_load_3d(sb, tm, kt * BK, n0, z, full);
#endif
#else
#pragma unroll
  for (int j = 0; j < BN / 64; ++j) {
#if CLUSTER_M == 2
    if ((j & 1) == (int)rank) {
      prism_tma_load_3d_multicast(sb + j * 64 * BK * 2, tm, n0 + 64 * j, kt * BK, z, full, 3);
    }
#else
    prism_tma_load_3d(sb + j * 64 * BK * 2, tm, n0 + 64 * j, kt * BK, z, full);
#endif
  }
#endif
}

// EPI is the accumulators a consumer thread writes at a time: C's loads of a chunk are all
// issued before its stores, so that they wait for memory once, together. A store (asm
// volatile, "memory") between two loads would make each load wait behind the one before
// (d may be c): a DRAM latency per pair of accumulators, 64 of them a tile at BN=256.
#define EPI 32
// EPI_N: EPI, or with BM 64 at most half of the accumulators (each warpgroup stores half).
#if BM == 64 && ACC / 2 < EPI
#define EPI_N (ACC / 2)
#else
#define EPI_N EPI
#endif

// load2 returns in c0 and c1 C's elements (row, col) and (row, col+1) (the second only when
// col+1 < n; zeros elsewhere): one 8-byte load where cpair says C's rows and matrices allow it.
static __device__ __forceinline__ void load2(const float *c, int row, int col, int m, int n, int ldc, bool cpair, float &c0,
                                             float &c1) {
  c0 = 0.0f;
  c1 = 0.0f;
  if (row >= m || col >= n) {
    return;
  }
  const long long o = (long long)row * ldc + col;
  if (col + 1 < n && cpair) {
    const float2 v = *reinterpret_cast<const float2 *>(c + o);
    c0 = v.x;
    c1 = v.y;
  } else {
    c0 = c[o];
    if (col + 1 < n) {
      c1 = c[o + 1];
    }
  }
}

// store2 writes D's elements (row, col) and (row, col+1), alpha * r + beta * c (the second
// only when col+1 < n; c0 and c1 are C's elements, unread when beta is 0): one 8-byte store
// where pair says D's rows and matrices allow it.
static __device__ __forceinline__ void store2(float *d, float alpha, float beta, int row, int col, int m, int n, int ldc, bool pair,
                                              float r0, float r1, float c0, float c1) {
  if (row >= m || col >= n) {
    return;
  }
  const long long o = (long long)row * ldc + col;
  r0 *= alpha;
  r1 *= alpha;
  const bool two = col + 1 < n;
  if (beta != 0.0f) {
    r0 += beta * c0;
    r1 += beta * c1;
  }
  if (two && pair) {
    asm volatile("st.global.v2.f32 [%0], {%1, %2};" ::"l"(d + o), "f"(r0), "f"(r1) : "memory");
  } else {
    d[o] = r0;
    if (two) {
      d[o + 1] = r1;
    }
  }
}

// load2t and store2t are load2 and store2 for SWAP_AB, whose kernel element (row, col) is
// D's (col, row): C's elements (col, row) and (col+1, row), D's the same (the second
// where col+1 < n); rows ld apart, no pairs (they are in two rows of D). Within a warp
// the 8 lanes of one t store 8 consecutive elements of a row of D.
static __device__ __forceinline__ void load2t(const float *c, int row, int col, int m, int n, int ld, float &c0, float &c1) {
  c0 = 0.0f;
  c1 = 0.0f;
  if (row >= m || col >= n) {
    return;
  }
  c0 = c[(long long)col * ld + row];
  if (col + 1 < n) {
    c1 = c[(long long)(col + 1) * ld + row];
  }
}

static __device__ __forceinline__ void store2t(float *d, float alpha, float beta, int row, int col, int m, int n, int ld, float r0,
                                               float r1, float c0, float c1) {
  if (row >= m || col >= n) {
    return;
  }
  r0 *= alpha;
  r1 *= alpha;
  if (beta != 0.0f) {
    r0 += beta * c0;
    r1 += beta * c1;
  }
  d[(long long)col * ld + row] = r0;
  if (col + 1 < n) {
    d[(long long)(col + 1) * ld + row] = r1;
  }
}

// acc_pos returns the row and column of D that accumulator i of a consumer thread holds
// (i even; i+1 is the next column): row 64*cw + 16*warp + g + 8*((i%4)/2), column
// 8*(i/4) + 2*t, with g = lane/4 and t = lane%4 (the m16n8 layout, per warp of the
// warpgroup; with PINGPONG the warpgroup holds both 64-row halves of its tile, BN/2
// accumulators each; with BM 64 both warpgroups the tile's 64 rows).
static __device__ __forceinline__ void acc_pos(int i, int m0, int n0, int cw, int warp, int lane, int &row, int &col) {
  const int g = lane >> 2, t = lane & 3;
#if PINGPONG
  row = m0 + 64 * (i / (BN / 2)) + 16 * warp + g + 8 * ((i & 3) >> 1);
  col = n0 + 8 * ((i % (BN / 2)) >> 2) + 2 * t;
#elif BM == 64
  row = m0 + 16 * warp + g + 8 * ((i & 3) >> 1);
  col = n0 + 8 * (i >> 2) + 2 * t;
#else
  row = m0 + 64 * cw + 16 * warp + g + 8 * ((i & 3) >> 1);
  col = n0 + 8 * (i >> 2) + 2 * t;
#endif
}

// tile_origin returns in m0, n0 the first row and column of D of cluster tile id for the
// block of rank rank: tiles in groups of GROUP_M tile rows (GROUP_M / CLUSTER_M cluster
// rows), column by column within a group.
static __device__ __forceinline__ void tile_origin(int id, int tiles_mc, int tiles_n, unsigned int rank, int &m0, int &n0) {
  const int gm = GROUP_M / CLUSTER_M, per_group = gm * tiles_n;
  const int first_m = (id / per_group) * gm;
  const int group_m = tiles_mc - first_m < gm ? tiles_mc - first_m : gm;
  m0 = ((first_m + (id % per_group) % group_m) * CLUSTER_M + (int)rank) * BM;
  n0 = ((id % per_group) / group_m) * BN;
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_wgmma(const PRISM_GRID_CONSTANT prism_tensor_map tmA, const PRISM_GRID_CONSTANT prism_tensor_map tmB,
               const PRISM_GRID_CONSTANT prism_tensor_map tmA2, const PRISM_GRID_CONSTANT prism_tensor_map tmB2, float *d,
               const float *c, float alpha, float beta, int m, int n, int ldc, int strideC, int k, float *ws, int kt_per) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __attribute__((aligned(8))) unsigned long long bars[2 * STAGES]; // full[s], then empty[s]
  const unsigned int sbase = (prism_smem_addr(smem_raw) + 1023u) & ~1023u;
  const unsigned int full = prism_smem_addr(bars), empty = full + 8 * STAGES;
  const int z = blockIdx.z;
#if CLUSTER_M == 2
  const unsigned int rank = prism_cluster_rank();
#else
  const unsigned int rank = 0;
#endif
  // The tiles in groups of GROUP_M tile rows (L2 reuse), a cluster's blocks on consecutive
  // tile rows of one tile column: they share B. A cluster computes tile id (of tiles_mc *
  // tiles_n, in clusters), or with PERSISTENT ids blockIdx.x/CLUSTER_M, then that plus the
  // grid's clusters, ...
  const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
  const int tiles_mc = (tiles_m + CLUSTER_M - 1) / CLUSTER_M, ntiles = tiles_mc * tiles_n;
#if PERSISTENT != 0
  const int first = blockIdx.x / CLUSTER_M, step = gridDim.x / CLUSTER_M;
#else
  const int first = blockIdx.x / CLUSTER_M, step = ntiles;
#endif
  const int wg = threadIdx.x >> 7;
  // Split-K (kt_per > 0): the blocks of grid row blockIdx.y take k steps kt0.. of kt_per
  // and store their partial products in ws, which gemm_splitk_reduce sums into D.
  const int ktiles_all = (k + BK - 1) / BK;
  const int kt0 = kt_per > 0 ? blockIdx.y * kt_per : 0;
  const int kt1 = kt_per > 0 && kt0 + kt_per < ktiles_all ? kt0 + kt_per : ktiles_all;
  const int ktiles = kt1 > kt0 ? kt1 - kt0 : 0;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      prism_mbar_init(full + 8 * s, 1);
      // One arrival per consumer warpgroup of the cluster that reads the stage: both of a
      // block's, or with PINGPONG the one whose tile it holds, with BM 64 the one whose k
      // step it holds.
      prism_mbar_init(empty + 8 * s, (PINGPONG || BM == 64 ? 1 : 2) * CLUSTER_M);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
#if CLUSTER_M == 2
  prism_cluster_sync(); // the other block's barriers are ready before anything lands in them
#else
  __syncthreads();
#endif

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      int it = 0; // k steps copied so far, over the block's tiles: stage it % STAGES, round it / STAGES
      for (int id = first; id < ntiles; id += step) {
        int m0, n0;
        tile_origin(id, tiles_mc, tiles_n, rank, m0, n0);
        for (int kt = kt0; kt < kt1; ++kt, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) {
            prism_mbar_wait(empty + 8 * s, ((it / STAGES) + 1) & 1); // the consumers released round it/STAGES - 1
          }
          const unsigned int sa = sbase + s * STAGE, sb = sa + STAGE_A;
          prism_mbar_expect_tx(full + 8 * s, STAGE);
#if SWAP_AB
#pragma unroll
          for (int j = 0; j < BM / 32; ++j) { // B's columns m0 + 32j.., k rows of the step
            prism_tma_load_3d(sa + j * 4096, &tmA, m0 + 32 * j, kt * BK, z, full + 8 * s);
          }
#else
          prism_tma_load_3d(sa, &tmA, kt * BK, m0, z, full + 8 * s);
#endif
          load_b(sb, &tmB, kt, n0, z, full + 8 * s, rank);
#if SPLIT == 2
          prism_tma_load_3d(sa + STAGE_A + STAGE_B, &tmA2, kt * BK, m0, z, full + 8 * s);
          load_b(sb + STAGE_A + STAGE_B, &tmB2, kt, n0, z, full + 8 * s, rank);
#endif
        }
      }
    }
#if PERSISTENT == 0 && !SWAP_AB
    else if (kt_per == 0 && beta != 0.0f && ktiles <= PREFETCH_C_STEPS && first < ntiles) {
      // A short product: the producer's other 127 threads bring the block's tile of C into
      // L2 while the products run, so that the epilogue's loads of C hit L2 instead of
      // waiting on DRAM at the end of the block.
      int m0, n0;
      tile_origin(first, tiles_mc, tiles_n, rank, m0, n0);
      const float *cz = c + (long long)z * strideC;
      const int cols = n - n0 < BN ? n - n0 : BN;
      for (int r = threadIdx.x - 1; r < BM && m0 + r < m && cols > 0; r += 127) {
        const float *row = cz + (long long)(m0 + r) * ldc + n0;
        for (int j = 0; j < cols; j += 32) {
          asm volatile("prefetch.global.L2 [%0];\n" ::"l"(row + j));
        }
        asm volatile("prefetch.global.L2 [%0];\n" ::"l"(row + cols - 1)); // the row's last line where it starts unaligned
      }
    }
#endif
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int cw = wg - 1; // consumer warpgroup: rows 64*cw.. of the tile (PINGPONG: tiles j with j % 2 == cw; BM 64: k steps kt with kt % 2 == cw)
    c += (long long)z * strideC;
    d += (long long)z * strideC;
    const bool pair = ((ldc | strideC) & 1) == 0 && ((unsigned long long)d & 7) == 0;
    const bool cpair = ((ldc | strideC) & 1) == 0 && ((unsigned long long)c & 7) == 0;
    float *part = ws + ((long long)z * gridDim.y + blockIdx.y) * m * n; // split-K's slice
    const bool ppair = (n & 1) == 0 && ((unsigned long long)part & 7) == 0;
    const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3;
#if PINGPONG
    // Tile j of the block (in the producer's order) is this warpgroup's when j % 2 == cw;
    // its k steps are the ring's it = j*ktiles ... The named barrier 1 + cw says the other
    // warpgroup has waited for its tile's last stage: 128 threads arrive, 128 wait.
    int j = cw, it = cw * ktiles; // the k steps of the other's tiles are skipped at each tile's end
    for (int id = first + cw * step; id < ntiles; id += 2 * step, j += 2, it += ktiles) {
      if (j > 0) {
        asm volatile("bar.sync %0, 256;\n" ::"r"(1 + cw) : "memory");
      }
#else
    int it = 0; // k steps consumed so far, as the producer counts them
    for (int id = first; id < ntiles; id += step) {
#endif
      int m0, n0;
      tile_origin(id, tiles_mc, tiles_n, rank, m0, n0);
      float acc[ACC];
#pragma unroll
      for (int i = 0; i < ACC; ++i) {
        acc[i] = 0.0f;
      }
#if SWAP_AB
      for (int kt = 0; kt < ktiles; ++kt, ++it) {
        swap_step(acc, it, sbase, full, empty, cw, warp, lane);
      }
#else
#if BM == 64
      // This warpgroup's k steps, the even or the odd ones: with STAGES even, each stage
      // serves one warpgroup, which waits for its rounds in order (an mbarrier's parity
      // wait tells only its last two phases apart). prev: the ring index of its last step.
      int prev = -1;
      for (int kt = cw; kt < ktiles; kt += 2) {
        const int ii = it + kt, s = ii % STAGES;
        prism_mbar_wait(full + 8 * s, (ii / STAGES) & 1);
        const unsigned int sa = sbase + s * STAGE, sb = sa + STAGE_A;
#else
      for (int kt = 0; kt < ktiles; ++kt, ++it) {
        const int s = it % STAGES;
        prism_mbar_wait(full + 8 * s, (it / STAGES) & 1);
#if PINGPONG
        const unsigned int sa = sbase + s * STAGE, sb = sa + STAGE_A;
#else
        const unsigned int sa = sbase + s * STAGE + cw * 64 * 128, sb = sbase + s * STAGE + STAGE_A;
#endif
#endif
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int ks = 0; ks < 4; ++ks) { // four instructions of 32 bytes of k each
          const unsigned long long da = prism_wgmma_desc(sa + 32 * ks, 16, 1024);
#if TRANS_B
          const unsigned long long db = prism_wgmma_desc(sb + 32 * ks, 16, 1024);
#elif MN_SWAP
          const unsigned long long db = prism_wgmma_desc(sb + 2048 * ks, 1024, 64 * BK * 2);
#else
          const unsigned long long db = prism_wgmma_desc(sb + 2048 * ks, 64 * BK * 2, 1024);
#endif
#pragma unroll
          for (int h = 0; h < ACC / (BN / 2); ++h) { // PINGPONG: rows 64-127 of A's tile too
            float *ah = acc + h * (BN / 2);
            const unsigned long long dah = h == 0 ? da : prism_wgmma_desc(sa + h * 64 * 128 + 32 * ks, 16, 1024);
#if SPLIT == 2
            // 3xTF32: the small products first, then big*big (CUTLASS's order).
            const unsigned int small = STAGE_A + STAGE_B;
            WGMMA(ah, prism_wgmma_desc(sa + h * 64 * 128 + small + 32 * ks, 16, 1024), db, 1);
            WGMMA(ah, dah, prism_wgmma_desc(sb + small + 32 * ks, 16, 1024), 1);
#endif
            WGMMA(ah, dah, db, 1);
          }
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        // One group stays in flight: the wait retires step it-1's, whose stage goes back to
        // the producers, while the tensor cores work on step it.
        wgmma_wait1(acc);
#if BM == 64
        if (prev >= 0) {
          release(empty + 8 * (prev % STAGES));
        }
        prev = ii;
      }
      it += ktiles;
      wgmma_wait0(acc);
      if (prev >= 0) {
        release(empty + 8 * (prev % STAGES));
      }
      // Each warpgroup stores half of the tile's columns, accumulators 0..ACC/2-1 (cw 0) or
      // ACC/2.. (cw 1): it hands the other half to the other warpgroup through the ring,
      // which both have finished reading (their last wgmma groups retired; every stage
      // landed, each waited for), and adds the half it receives. Thread t's values lie 128
      // floats apart, so that a warp's 32 accesses are 32 consecutive words.
      {
        float *red = reinterpret_cast<float *>(smem_raw + (sbase - prism_smem_addr(smem_raw)));
        const int t = threadIdx.x & 127;
        asm volatile("bar.sync 1, 256;\n" ::: "memory");
#pragma unroll
        for (int j = 0; j < ACC / 2; ++j) {
          red[(cw * (ACC / 2) + j) * 128 + t] = cw == 0 ? acc[ACC / 2 + j] : acc[j];
        }
        asm volatile("bar.sync 1, 256;\n" ::: "memory");
#pragma unroll
        for (int j = 0; j < ACC / 2; ++j) {
          const float v = red[((1 - cw) * (ACC / 2) + j) * 128 + t];
          if (cw == 0) {
            acc[j] += v;
          } else {
            acc[ACC / 2 + j] += v;
          }
        }
      }
#else
        if (kt > 0) {
          release(empty + 8 * ((it - 1) % STAGES));
        }
      }
#if PINGPONG
      // This warpgroup has waited for its last stage: the other may start its next tile.
      if (id + step < ntiles) {
        asm volatile("bar.arrive %0, 256;\n" ::"r"(2 - cw) : "memory");
      }
#endif
      wgmma_wait0(acc);
      if (ktiles > 0) {
        release(empty + 8 * ((it - 1) % STAGES)); // the tile's last stage, for the next tile
      }
#endif // BM == 64
#endif

      // Epilogue, EPI accumulators at a time (acc_pos): accumulators i and i+1 (i even) are
      // two neighbours of one row, one 8-byte load of C and one 8-byte store where C's and
      // D's rows and matrices start on 8-byte boundaries. With PERSISTENT, the producer
      // copies the next tile's first stages meanwhile. Split-K: the partial sums as they
      // are, into the block's m x n slice of ws (rows n apart).
      const bool readc = kt_per == 0 && beta != 0.0f;
#pragma unroll
      for (int i0 = 0; i0 < ACC; i0 += EPI_N) {
#if BM == 64
        if ((i0 < ACC / 2) != (cw == 0)) {
          continue; // the other warpgroup's half
        }
#endif
        float cv[EPI_N];
#pragma unroll
        for (int i = i0; i < i0 + EPI_N; i += 2) {
          int row, col;
          acc_pos(i, m0, n0, cw, warp, lane, row, col);
          if (readc) {
#if SWAP_AB
            load2t(c, row, col, m, n, ldc, cv[i - i0], cv[i - i0 + 1]);
#else
            load2(c, row, col, m, n, ldc, cpair, cv[i - i0], cv[i - i0 + 1]);
#endif
          } else {
            cv[i - i0] = cv[i - i0 + 1] = 0.0f;
          }
        }
#pragma unroll
        for (int i = i0; i < i0 + EPI_N; i += 2) {
          int row, col;
          acc_pos(i, m0, n0, cw, warp, lane, row, col);
#if SWAP_AB
          if (kt_per > 0) {
            store2t(part, 1.0f, 0.0f, row, col, m, n, m, acc[i], acc[i + 1], 0.0f, 0.0f);
          } else {
            store2t(d, alpha, beta, row, col, m, n, ldc, acc[i], acc[i + 1], cv[i - i0], cv[i - i0 + 1]);
          }
#else
          if (kt_per > 0) {
            store2(part, 1.0f, 0.0f, row, col, m, n, n, ppair, acc[i], acc[i + 1], 0.0f, 0.0f);
          } else {
            store2(d, alpha, beta, row, col, m, n, ldc, pair, acc[i], acc[i + 1], cv[i - i0], cv[i - i0 + 1]);
          }
#endif
        }
      }
    }
  }
#if CLUSTER_M == 2
  // Neither block leaves while the other may still arrive on its barriers.
  prism_cluster_sync();
#endif
}

// gemm_splitk_reduce finishes a split-K GEMM: d[z*strideC + i*ldc + j] = alpha * sum over
// the splits y of ws[((z*splits + y)*m + i)*n + j] + beta * c[...] (c not read when beta is
// 0; d may be c), the splits added in order. Launch: 2D grid (any multiple of 256
// work-items, batch) of 256 threads; each takes elements i*n + j in strides of the grid.
extern "C" __global__ void __launch_bounds__(256) gemm_splitk_reduce(float *d, const float *c, const float *ws, float alpha, float beta,
                                                                    int m, int n, int ldc, int strideC, int splits) {
  const long long mn = (long long)m * n;
  const int z = blockIdx.y;
  const float *w = ws + (long long)z * splits * mn;
  for (long long e = (long long)blockIdx.x * 256 + threadIdx.x; e < mn; e += (long long)gridDim.x * 256) {
    float sum = 0.0f;
    for (int y = 0; y < splits; ++y) {
      sum += w[y * mn + e];
    }
    const long long o = (long long)z * strideC + (e / n) * ldc + e % n;
    float r = alpha * sum;
    if (beta != 0.0f) {
      r += beta * c[o];
    }
    d[o] = r;
  }
}

// tf32_round returns x rounded to tf32 (cvt.rna: ties away from zero) as float bits.
static __device__ __forceinline__ float tf32_round(float x) {
  unsigned int r;
  float f;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  asm("mov.b32 %0, %1;" : "=f"(f) : "r"(r));
  return f;
}

// gemm_split writes op(X) K-major for the tensor maps of gemm_wgmma: for PREC 1 out[z][r][c]
// = v, which the tensor cores truncate to tf32 as they read it (as they do an operand read
// in place); for PREC 2 out[z][r][c] = tf32(v) and small[z][r][c] = tf32(v - tf32(v)), where v = x[z*stridex + c*ldx
// + r] when trans, else x[z*stridex + r*ldx + c]; 0 <= r < rows, 0 <= c < cols, out rows
// ldo apart. Launch: grid (ceil(cols/32), ceil(rows/32), batch) of 32 x 8 threads; tiles of
// 32 x 32 through shared memory, so that reads and writes are both coalesced. Built with
// every PREC; the host launches it for PREC 1 and 2 only.
extern "C" __global__ void __launch_bounds__(256) gemm_split(float *big, float *small, const float *x, int rows, int cols, int ldx,
                                                            long long stridex, int trans, int ldo) {
  __shared__ float tile[32][33]; // [c][r] of the block
  const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32, z = blockIdx.z;
  const int tx = threadIdx.x, ty = threadIdx.y;
  x += (long long)z * stridex;
  for (int i = ty; i < 32; i += 8) {
    if (trans) {
      const int c = c0 + i, r = r0 + tx;
      tile[i][tx] = c < cols && r < rows ? x[(long long)c * ldx + r] : 0.0f;
    } else {
      const int r = r0 + i, c = c0 + tx;
      tile[tx][i] = r < rows && c < cols ? x[(long long)r * ldx + c] : 0.0f;
    }
  }
  __syncthreads();
  for (int i = ty; i < 32; i += 8) {
    const int r = r0 + i, c = c0 + tx;
    if (r < rows && c < cols) {
#if PREC == 2
      const float v = tile[tx][i], b = tf32_round(v);
#else
      const float v = tile[tx][i], b = v; // tf32: the tensor cores truncate, as in place
#endif
      const long long o = ((long long)z * rows + r) * ldo + c;
      big[o] = b;
#if PREC == 2
      small[o] = tf32_round(v - b);
#endif
    }
  }
}

// gemm_pad copies the rows x cols elements of each matrix z of x (rows ldx apart, matrices
// stridex apart) into out, rows ldo apart and matrices rows*ldo apart: an operand whose rows
// do not start on 16-byte boundaries, which TMA cannot read, copied to one whose rows do
// (ldo elements are a multiple of 16 bytes). Each thread writes 16 bytes of a row with one
// store, from PAD_N element loads (the source rows are not aligned); the columns from cols
// to the end of the row's last 16 bytes are written with zeros, those past it are left as
// they are (the tensor maps stop at cols). Launch: 2D grid (any number of blocks, batch) of
// 256 threads; block x copies rows x, x + gridDim.x, ..., its threads consecutive 16-byte
// pieces of a row (reads and writes coalesced). Built with every PREC; the host launches
// it for the 16- and 8-bit inputs.
#if IN_BYTES == 1
typedef unsigned char pad_t;
#elif IN_BYTES == 2
typedef unsigned short pad_t;
#else
typedef unsigned int pad_t;
#endif
#define PAD_N (16 / IN_BYTES)
extern "C" __global__ void __launch_bounds__(256) gemm_pad(pad_t *out, const pad_t *x, int rows, int cols, long long ldx,
                                                          long long stridex, long long ldo) {
  const int z = blockIdx.y;
  x += (long long)z * stridex;
  out += (long long)z * rows * ldo;
  const int pieces = (cols + PAD_N - 1) / PAD_N;
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    const pad_t *src = x + (long long)r * ldx;
    pad_t *dst = out + (long long)r * ldo;
    for (int p = threadIdx.x; p < pieces; p += 256) {
      union {
        uint4 v;
        pad_t e[PAD_N];
      } u;
      const int c0 = p * PAD_N;
      if (c0 + PAD_N <= cols) {
#pragma unroll
        for (int e = 0; e < PAD_N; e++) {
          u.e[e] = src[c0 + e];
        }
      } else {
#pragma unroll
        for (int e = 0; e < PAD_N; e++) {
          u.e[e] = c0 + e < cols ? src[c0 + e] : (pad_t)0;
        }
      }
      *(uint4 *)(dst + c0) = u.v;
    }
  }
}

// gemm_transpose writes op(X)^T rows into out: out[z][c][r] = x[z*stridex + r*ldx + c]
// for the rows x cols elements of each matrix z, out's rows (cols of them) ldo apart and
// its matrices cols*ldo apart: the B of float8's nn layout (stored k x n) copied n x k,
// K-major, which its wgmma reads. Launch: grid (ceil(cols/32), ceil(rows/32), batch) of
// 32 x 8 threads; tiles of 32 x 32 through shared memory, so that reads and writes are both
// along rows. Built with every PREC; the host launches it for the 8-bit inputs.
extern "C" __global__ void __launch_bounds__(256) gemm_transpose(pad_t *out, const pad_t *x, int rows, int cols, long long ldx,
                                                                long long stridex, long long ldo) {
  __shared__ pad_t tile[32][33]; // [c][r] of the block
  const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32, z = blockIdx.z;
  const int tx = threadIdx.x, ty = threadIdx.y;
  x += (long long)z * stridex;
  out += (long long)z * cols * ldo;
  for (int i = ty; i < 32; i += 8) {
    const int r = r0 + i, c = c0 + tx;
    if (r < rows && c < cols) {
      tile[tx][i] = x[(long long)r * ldx + c];
    }
  }
  __syncthreads();
  for (int i = ty; i < 32; i += 8) {
    const int c = c0 + i, r = r0 + tx;
    if (c < cols && r < rows) {
      out[(long long)c * ldo + r] = tile[i][tx];
    }
  }
}
