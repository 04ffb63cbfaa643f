// scan.cu: single-pass prefix sum with decoupled look-back (CUDA C++, NVIDIA only).
//
// Purpose: the "cuda-lookback" variant of scan/*: one pass over memory (x read once, y
// written once: 2n elements moved, against 3n for scan.cl's reduce-then-scan) in one launch.
// Each block scans one tile of TILE = BLOCK*ITEMS elements and learns the sum of all
// tiles before it from their published status words (Merrill and Garland, "Single-pass
// Parallel Prefix Scan with Decoupled Look-back", 2016): it publishes its own tile's sum
// (aggregate) at once, then looks back through its predecessors, 32 at a time with one warp,
// adding aggregates until it meets a tile whose inclusive prefix is known, and publishes its
// own inclusive prefix. Tiles are numbered in the order blocks start (an atomic counter), so
// every tile a block waits on belongs to a block that is already running and publishes its
// aggregate before it waits on anyone: the wait always ends on CUDA devices, which keep
// resident blocks running; OpenCL promises no such progress between work-groups, so the
// portable scan stays reduce-then-scan.
//
// Arguments (n elements of ELEM; state holds 2 + 2*ceil(n/TILE) unsigned ints, all 0 before
// each launch: word 0 counts started tiles, then one 64-bit status word per tile):
//   scan_lookback(y, x, state, n, exclusive)
//       y = the inclusive (exclusive == 0) or exclusive (exclusive != 0) prefix sum of x.
//       y may be x (each block reads its whole tile before it writes it).
//
// Status word of a tile: flag << 32 | the 32 bits of a value in ACC; flag 0: nothing yet,
// 1: the tile's aggregate, 2: the inclusive prefix through the tile. One 64-bit store
// publishes flag and value together.
//
// Arithmetic: in ACC. int32 sums accumulate in unsigned int (wrap modulo 2^32, defined);
// uint32 wraps as well; float adds along chains of at most ITEMS + 2*log2(BLOCK) + tiles
// + 2 additions (the host's Lookback.Chain), never subtracting.
//
// Tunables (-D, part of the cache key):
//   ELEM    element type: float, int or unsigned int                  default float
//   ACC     accumulator: ELEM, or unsigned int for ELEM=int          default ELEM
//   BLOCK   threads per block, a multiple of 32, at most 1024        default 256
//   ITEMS   consecutive elements per thread                          default 16
//   VEC     elements per global load and store of a full tile: 4 (16-byte accesses) or 1
//                                                                     default 4
//   MINBLOCKS  blocks per multiprocessor the compiler must fit (its register budget:
//           __launch_bounds__'s second argument; 1 asks nothing)    default 1
//   EARLY   1: every warp but the one looking back scans its ITEMS within the tile while
//           that warp waits on its predecessors, and the stores add the tile's prefix
//           (the block otherwise waits at a barrier through the look-back: 27.8 of 46.6
//           cycles between a warp's instructions on an H200); 0: after it   default 0
// Builds: -DELEM=float | -DELEM=int -DACC=uint32_t | -DELEM=uint32_t -DACC=uint32_t | -DELEM=float -DBLOCK=128 -DITEMS=8 | -DELEM=float -DBLOCK=64 -DITEMS=32 -DMINBLOCKS=24 | -DELEM=int -DACC=uint32_t -DBLOCK=128 -DITEMS=24 -DMINBLOCKS=16 | -DELEM=float -DVEC=1 -DMINBLOCKS=4 | -DELEM=float -DITEMS=20 -DMINBLOCKS=6 | -DELEM=float -DITEMS=32 -DMINBLOCKS=4 | -DELEM=float -DITEMS=32 -DMINBLOCKS=4 -DEARLY=1 | -DELEM=int -DACC=uint32_t -DITEMS=16 -DMINBLOCKS=8 -DEARLY=1 | -DELEM=float -DVEC=1 -DITEMS=5 -DEARLY=1
// Launch: 1D, block exactly BLOCK, grid ceil(n/TILE) blocks (n >= 1).
// Boundaries: the last tile is partial: loads past n read 0, stores past n are skipped.

#include "prism_cuda.h"

#ifndef ELEM
#define ELEM float
#endif
#ifndef ACC
#define ACC ELEM
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 16
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef MINBLOCKS
#define MINBLOCKS 1
#endif
#ifndef EARLY
#define EARLY 0
#endif
#if VEC != 1 && VEC != 4
#error "scan.cu: VEC must be 1 or 4"
#endif

#define TILE (BLOCK * ITEMS)
#define WARPS (BLOCK / 32)
// Shared-memory index with one pad word per 32, so that thread t reading its ITEMS
// consecutive elements (stride ITEMS across threads) spreads over the banks.
#define PAD(i) ((i) + ((i) >> 5))

#define FLAG_AGGREGATE 1ull
#define FLAG_PREFIX 2ull

static __device__ __forceinline__ unsigned int bits_of(float v) { return __float_as_uint(v); }
static __device__ __forceinline__ unsigned int bits_of(unsigned int v) { return v; }
template <typename T> static __device__ __forceinline__ T from_bits(unsigned int b);
template <> __device__ __forceinline__ float from_bits<float>(unsigned int b) { return __uint_as_float(b); }
template <> __device__ __forceinline__ unsigned int from_bits<unsigned int>(unsigned int b) { return b; }
static __device__ __forceinline__ ACC acc_of(unsigned int b) { return from_bits<ACC>(b); }
// The element whose 32 bits are b, and the bits of an element (ELEM is 4 bytes).
static __device__ __forceinline__ unsigned int bits_of(int v) { return (unsigned int)v; }
template <> __device__ __forceinline__ int from_bits<int>(unsigned int b) { return (int)b; }
static __device__ __forceinline__ ELEM elem_of(unsigned int b) { return from_bits<ELEM>(b); }
static __device__ __forceinline__ unsigned int elem_bits(ELEM e) { return bits_of(e); }

// shfl_up returns v of lane (lane - delta) of the warp (v itself below lane delta).
static __device__ __forceinline__ ACC shfl_up(ACC v, int delta) {
  unsigned int r;
  asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(bits_of(v)), "r"(delta));
  return acc_of(r);
}
static __device__ __forceinline__ ACC shfl_xor(ACC v, int mask) {
  unsigned int r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(bits_of(v)), "r"(mask));
  return acc_of(r);
}

// warp_inclusive returns the inclusive scan of v over the lanes of the warp.
static __device__ __forceinline__ ACC warp_inclusive(ACC v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    ACC u = shfl_up(v, d);
    if (lane >= d) v += u;
  }
  return v;
}

// warp_total returns the sum of v over the warp, in every lane.
static __device__ __forceinline__ ACC warp_total(ACC v) {
#pragma unroll
  for (int m = 16; m > 0; m /= 2) v += shfl_xor(v, m);
  return v;
}

// warp_ballot returns the lanes of the warp whose pred is non-zero (vote.sync.ballot).
static __device__ __forceinline__ unsigned int warp_ballot(int pred) {
  unsigned int r;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.ballot.b32 %0, p, 0xffffffff;\n\t}" : "=r"(r) : "r"(pred));
  return r;
}

// lowest_lane returns the index of the lowest set bit of x (x != 0).
static __device__ __forceinline__ int lowest_lane(unsigned int x) {
  unsigned int r;
  asm("{\n\t.reg .u32 t;\n\tbrev.b32 t, %1;\n\tbfind.u32 %0, t;\n\t}" : "=r"(r) : "r"(x));
  return 31 - (int)r;
}

static __device__ __forceinline__ unsigned long long status_load(const unsigned long long *p) {
  unsigned long long w;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
  return w;
}
static __device__ __forceinline__ void status_store(unsigned long long *p, unsigned long long w) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}

// SCAN_ITEMS(from) replaces the thread's ITEMS elements in sh by their running sums from
// from: inclusive, or exclusive (each element's sum before it). A macro, so that the
// kernel's code stays as written in place (a function taking sh compiled, with clang -O3,
// to more address arithmetic).
#define SCAN_ITEMS(from)                           \
  do {                                             \
    ACC run = (from);                              \
    _Pragma("unroll") for (int j = 0; j < ITEMS; j++) { \
      const ACC v = sh[PAD(tid * ITEMS + j)];      \
      if (exclusive) {                             \
        sh[PAD(tid * ITEMS + j)] = run;            \
        run += v;                                  \
      } else {                                     \
        run += v;                                  \
        sh[PAD(tid * ITEMS + j)] = run;            \
      }                                            \
    }                                              \
  } while (0)

extern "C" __global__ void __launch_bounds__(BLOCK, MINBLOCKS)
scan_lookback(ELEM *__restrict__ y, const ELEM *__restrict__ x, unsigned int *__restrict__ state, int n, int exclusive) {
  __shared__ ACC sh[PAD(TILE)];
  __shared__ ACC warp_sums[WARPS];
  __shared__ ACC tile_prefix;
  __shared__ int tile_id;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  unsigned long long *status = (unsigned long long *)(state + 2);

  if (tid == 0) tile_id = (int)atomicAdd(state, 1u);
  __syncthreads();
  const int tile = tile_id;
  const long long base = (long long)tile * TILE;

  // Striped, coalesced loads into shared memory (16 bytes at a time in a full tile); then
  // each thread takes ITEMS in a row.
  const bool full = VEC == 4 && base + TILE <= n;
  if (full) {
    const uint4 *x4 = (const uint4 *)(x + base);
#pragma unroll
    for (int k = 0; k < ITEMS / 4; k++) {
      const int idx = k * BLOCK + tid;
      const uint4 q = x4[idx];
      sh[PAD(4 * idx)] = (ACC)elem_of(q.x);
      sh[PAD(4 * idx + 1)] = (ACC)elem_of(q.y);
      sh[PAD(4 * idx + 2)] = (ACC)elem_of(q.z);
      sh[PAD(4 * idx + 3)] = (ACC)elem_of(q.w);
    }
  } else {
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
      const int idx = k * BLOCK + tid;
      const long long i = base + idx;
      sh[PAD(idx)] = i < n ? (ACC)x[i] : (ACC)0;
    }
  }
  __syncthreads();
  ACC total = (ACC)0;
#pragma unroll
  for (int j = 0; j < ITEMS; j++) total += sh[PAD(tid * ITEMS + j)];

  // Block-wide exclusive scan of the thread totals: warps, then the warp totals.
  ACC incl = warp_inclusive(total, lane);
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    ACC w = lane < WARPS ? warp_sums[lane] : (ACC)0;
    w = warp_inclusive(w, lane);
    if (lane < WARPS) warp_sums[lane] = w; // inclusive over warps
  }
  __syncthreads();
  const ACC aggregate = warp_sums[WARPS - 1];
  // The exclusive value is the inclusive scan one lane down: no subtraction, which would
  // cancel in floats.
  const ACC up = shfl_up(incl, 1);
  ACC thread_prefix = lane == 0 ? (ACC)0 : up;
  if (warp > 0) thread_prefix += warp_sums[warp - 1];

  // Publish the aggregate, look back, publish the inclusive prefix.
  if (warp == 0) {
    ACC prefix = (ACC)0;
    if (tile == 0) {
      if (lane == 0) status_store(&status[0], FLAG_PREFIX << 32 | bits_of(aggregate));
    } else {
      if (lane == 0) status_store(&status[tile], FLAG_AGGREGATE << 32 | bits_of(aggregate));
      int end = tile - 1; // the nearest predecessor of this window, in lane 0
      for (;;) {
        const int j = end - lane;
        unsigned long long w = j >= 0 ? status_load(&status[j]) : FLAG_PREFIX << 32;
        while (warp_ballot((w >> 32) == 0)) {
          if ((w >> 32) == 0) w = status_load(&status[j]);
        }
        const unsigned int found = warp_ballot((w >> 32) == FLAG_PREFIX);
        const int stop = found ? lowest_lane(found) : 32; // the nearest known prefix
        ACC add = lane <= stop ? acc_of((unsigned int)w) : (ACC)0;
        prefix += warp_total(add);
        if (found) break;
        end -= 32;
      }
      if (lane == 0) status_store(&status[tile], FLAG_PREFIX << 32 | bits_of(prefix + aggregate));
    }
    if (lane == 0) tile_prefix = prefix;
  }
  // The thread's ITEMS results back through shared memory (its elements read again there,
  // not held in registers through the look-back), then striped, coalesced stores. With
  // EARLY, the results within the tile, without its prefix: warps 1 and up while warp 0
  // looks back (warp 0 after it, so that its successors get the tile's prefix first), and
  // the stores add the prefix.
#if EARLY
  SCAN_ITEMS(thread_prefix);
  __syncthreads();
  const ACC add = tile_prefix;
#define SCAN_OUT(v) ((ELEM)(add + (v)))
#else
  __syncthreads();
  SCAN_ITEMS(tile_prefix + thread_prefix);
  __syncthreads();
#define SCAN_OUT(v) ((ELEM)(v))
#endif
  if (full) {
    uint4 *y4 = (uint4 *)(y + base);
#pragma unroll
    for (int k = 0; k < ITEMS / 4; k++) {
      const int idx = k * BLOCK + tid;
      uint4 q;
      q.x = elem_bits(SCAN_OUT(sh[PAD(4 * idx)]));
      q.y = elem_bits(SCAN_OUT(sh[PAD(4 * idx + 1)]));
      q.z = elem_bits(SCAN_OUT(sh[PAD(4 * idx + 2)]));
      q.w = elem_bits(SCAN_OUT(sh[PAD(4 * idx + 3)]));
      y4[idx] = q;
    }
  } else {
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
      const int idx = k * BLOCK + tid;
      const long long i = base + idx;
      if (i < n) y[i] = SCAN_OUT(sh[PAD(idx)]);
    }
  }
#undef SCAN_OUT
}
