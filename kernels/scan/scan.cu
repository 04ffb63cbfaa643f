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
// Persistent (PERSIST > 0, sm_80): a block waiting on its look-back has no loads in flight,
// so there the grid is a fixed number of resident blocks, each looping over tiles it takes
// from the same counter. While warp 0 looks back for the current tile, the other warps take
// the next tile's number, copy that tile into a second shared-memory stage (cp.async) and
// publish its aggregate as soon as it lands, waiting on no other block: the memory keeps
// working through the look-back, and a tile whose number is taken holds up later tiles'
// look-backs only for its own loads. The tiles, their status words and the arithmetic of
// their outputs are the same (a tile's aggregate is added up in another order); why the
// waits still end is argued above the persistent kernel.
//
// Arguments (n elements of ELEM; state holds 2 + 2*ceil(n/TILE) unsigned ints, all 0 before
// each launch: word 0 counts the tiles taken, with PERSIST one number past the last per
// block as well, then one 64-bit status word per tile):
//   scan_lookback(y, x, state, n, exclusive)
//       y = the inclusive (exclusive == 0) or exclusive (exclusive != 0) prefix sum of x.
//       y may be x (each block reads its whole tile before it writes it, and a tile is
//       read and written by one block only).
//
// Status word of a tile: flag << 32 | the 32 bits of a value in ACC; flag 0: nothing yet,
// 1: the tile's aggregate, 2: the inclusive prefix through the tile. One 64-bit store
// publishes flag and value together.
//
// Arithmetic: in ACC. int32 sums accumulate in unsigned int (wrap modulo 2^32, defined);
// uint32 wraps as well; float adds, never subtracting, and an input reaches an output
// through at most 2*ITEMS + ceil(log2(BLOCK)) + tiles + 4 roundings (the host's
// Lookback.Chain): ITEMS-1 + log2(BLOCK) into its tile's aggregate (thread total, warp scan,
// scan of the warp sums), tiles + 4 through the look-backs (a predecessor d tiles back
// costs at most d: its lanes of the warp's sum and the join; a window of 32, at most 7),
// one joining the thread's prefix and ITEMS along the thread's elements. PERSIST's early
// aggregate (four running sums per thread over at most ITEMS/2 vectors, their join, the
// warp's sum, the worker warps' sum) is no deeper, ITEMS being at least 4.
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
//   PERSIST 0: a block per tile; k > 0: the persistent kernel (sm_80 and newer, VEC=4,
//           BLOCK >= 64), whose grid the host makes at most k blocks per multiprocessor,
//           fewer where fewer fit (the kernel only tells 0 from the rest)   default 0
// Builds: -DELEM=float | -DELEM=int -DACC=uint32_t | -DELEM=uint32_t -DACC=uint32_t | -DELEM=float -DBLOCK=128 -DITEMS=8 | -DELEM=float -DBLOCK=64 -DITEMS=32 -DMINBLOCKS=24 | -DELEM=int -DACC=uint32_t -DBLOCK=128 -DITEMS=24 -DMINBLOCKS=16 | -DELEM=float -DVEC=1 -DMINBLOCKS=4 | -DELEM=float -DITEMS=20 -DMINBLOCKS=6 | -DELEM=float -DITEMS=32 -DMINBLOCKS=4 | -DELEM=float -DITEMS=32 -DMINBLOCKS=4 -DEARLY=1 | -DELEM=int -DACC=uint32_t -DITEMS=16 -DMINBLOCKS=8 -DEARLY=1 | -DELEM=float -DVEC=1 -DITEMS=5 -DEARLY=1 | -DELEM=float -DITEMS=32 -DMINBLOCKS=3 -DPERSIST=3 | -DELEM=int -DACC=uint32_t -DITEMS=16 -DMINBLOCKS=6 -DPERSIST=6 -DEARLY=1 | -DELEM=uint32_t -DACC=uint32_t -DBLOCK=128 -DITEMS=12 -DPERSIST=4 | -DELEM=float -DBLOCK=64 -DITEMS=4 -DMINBLOCKS=8 -DPERSIST=8 | -DELEM=float -DBLOCK=64 -DITEMS=32 -DMINBLOCKS=8 -DPERSIST=8 -DEARLY=1 | -DELEM=int -DACC=uint32_t -DBLOCK=1024 -DITEMS=8 -DPERSIST=2 -DEARLY=1
// Launch: 1D, block exactly BLOCK (n >= 1). PERSIST=0: grid ceil(n/TILE) blocks. PERSIST > 0:
// any grid (the host's: the blocks that fit at once, at most ceil(n/TILE)), with dynamic
// shared memory for two stages of 16 * STAGE_VECS bytes: 9*TILE bytes in all where ITEMS/4 is
// even, 8*TILE where it is odd (lookback.go's persistShared), besides 8*WARPS + 12 bytes of
// static shared memory (PERSIST=0: 4*PAD(TILE) + 4*WARPS + 8).
// Resources of PERSIST at BLOCK=256 (from the sizes; registers not yet measured): ITEMS=32
// takes 72 KiB + 76 bytes of shared memory per block, so 3 blocks fit an H100/H200
// multiprocessor (228 KiB, 1 KiB of it reserved per block), and MINBLOCKS=3 caps registers
// at 80 per thread (3 * 256 * 80 of 65536); ITEMS=16 takes 36 KiB + 76 bytes, 6 blocks, and
// MINBLOCKS=6 caps registers at 40, which may spill (ptxas -v tells).
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
#ifndef PERSIST
#define PERSIST 0
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

// BLOCK_SCAN() is the block-wide exclusive scan of the thread totals (total): warps, then
// the warp totals, through warp_sums, with two barriers. It declares aggregate (the tile's
// sum, in every thread) and thread_prefix (the sum of the tile's elements before the
// thread's). The exclusive value is the inclusive scan one lane down: no subtraction, which
// would cancel in floats. A macro, as SCAN_ITEMS, shared by both kernels below.
#define BLOCK_SCAN()                                                 \
  ACC incl = warp_inclusive(total, lane);                            \
  if (lane == 31) warp_sums[warp] = incl;                            \
  __syncthreads();                                                   \
  if (warp == 0) {                                                   \
    ACC w = lane < WARPS ? warp_sums[lane] : (ACC)0;                 \
    w = warp_inclusive(w, lane);                                     \
    if (lane < WARPS) warp_sums[lane] = w; /* inclusive over warps */ \
  }                                                                  \
  __syncthreads();                                                   \
  const ACC aggregate = warp_sums[WARPS - 1];                        \
  const ACC up = shfl_up(incl, 1);                                   \
  ACC thread_prefix = lane == 0 ? (ACC)0 : up;                       \
  if (warp > 0) thread_prefix += warp_sums[warp - 1]

// SPIN_BACK() adds to prefix (0 before) the sum of the tiles before tile, from their status
// words: warp 0 alone, 32 predecessors at a time (the nearest in lane 0), waiting on a
// predecessor that has published nothing yet, until it meets one whose inclusive prefix is
// known; lane 0's prefix is the one used.
#define SPIN_BACK()                                                                            \
      int end = tile - 1; /* the nearest predecessor of this window, in lane 0 */              \
      for (;;) {                                                                               \
        const int j = end - lane;                                                              \
        unsigned long long w = j >= 0 ? status_load(&status[j]) : FLAG_PREFIX << 32;           \
        while (warp_ballot((w >> 32) == 0)) {                                                  \
          if ((w >> 32) == 0) w = status_load(&status[j]);                                     \
        }                                                                                      \
        const unsigned int found = warp_ballot((w >> 32) == FLAG_PREFIX);                      \
        const int stop = found ? lowest_lane(found) : 32; /* the nearest known prefix */       \
        ACC add = lane <= stop ? acc_of((unsigned int)w) : (ACC)0;                             \
        prefix += warp_total(add);                                                             \
        if (found) break;                                                                      \
        end -= 32;                                                                             \
      }

// LOOK_BACK() publishes the aggregate of tile, looks back, publishes the inclusive prefix
// and leaves the sum of the tiles before tile in tile_prefix: warp 0 alone (SPIN_BACK); the
// other warps pass it at once.
#define LOOK_BACK()                                                                            \
  if (warp == 0) {                                                                             \
    ACC prefix = (ACC)0;                                                                       \
    if (tile == 0) {                                                                           \
      if (lane == 0) status_store(&status[0], FLAG_PREFIX << 32 | bits_of(aggregate));         \
    } else {                                                                                   \
      if (lane == 0) status_store(&status[tile], FLAG_AGGREGATE << 32 | bits_of(aggregate));   \
      SPIN_BACK();                                                                             \
      if (lane == 0) status_store(&status[tile], FLAG_PREFIX << 32 | bits_of(prefix + aggregate)); \
    }                                                                                          \
    if (lane == 0) tile_prefix = prefix;                                                       \
  }

#if !PERSIST
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

  BLOCK_SCAN();
  // Publish the aggregate, look back, publish the inclusive prefix.
  LOOK_BACK();
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
#else // PERSIST

// The persistent kernel: a fixed grid of blocks, each scanning tile after tile. While warp 0
// looks back for the current tile, the other warps (the workers) take the next tile, copy
// it into the other stage (cp.async, sm_80) and publish its aggregate as soon as it lands.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "scan.cu: PERSIST needs sm_80 or newer (cp.async)"
#endif
#if VEC != 4
#error "scan.cu: PERSIST needs VEC=4 (16-byte copies)"
#endif
#if BLOCK < 64
#error "scan.cu: PERSIST needs BLOCK >= 64 (warp 0 looks back, the other warps load)"
#endif

// A stage holds one tile as VECS 16-byte vectors: vector v (elements 4v..4v+3 of the tile)
// in slot SLOT(v). Thread t reads its ITEMS elements as the SPT vectors t*SPT.. (a 16-byte
// shared access serves 8 threads at a time, 8 slots cover the 32 banks): with SPT odd those
// 8 threads meet 8 different slots modulo 8 as they are; with SPT even one spare slot per 8
// spreads them (conflict-free at SPT 2, 4 and 8, two-way at 6). Striped accesses (vector
// k*THREADS + t, THREADS a multiple of 32) meet 8 consecutive vectors from a multiple of 8,
// in 8 different slots either way.
#define SPT (ITEMS / 4)
#define VECS (TILE / 4)
#if SPT % 2 == 0
#define SLOT(v) ((v) + ((v) >> 3))
#else
#define SLOT(v) (v)
#endif
#define STAGE_VECS SLOT(VECS)
// The workers: warps 1..WARPS-1, WORKERS threads, each copying and adding up to COPIES
// vectors of the next tile (at most ceil(ITEMS/2), since BLOCK >= 64).
#define WORKERS (BLOCK - 32)
#define COPIES ((VECS + WORKERS - 1) / WORKERS)

// load_tile starts the copies of tile's elements into the stage at shared address stage by
// thread t of THREADS: vectors t, t + THREADS, ..., one 16-byte cp.async each; those past n
// are zero-filled (0 adds nothing), and read nothing where all four are past it. The
// caller commits the group.
template <int THREADS>
static __device__ __forceinline__ void load_tile(unsigned int stage, const ELEM *x, int tile, int n, int t) {
  const long long base = (long long)tile * TILE;
  const ELEM *xt = x + base;
  if (base + TILE <= n) {
#pragma unroll
    for (int k = 0; k < (VECS + THREADS - 1) / THREADS; k++) {
      const int v = k * THREADS + t;
      if (VECS % THREADS == 0 || v < VECS) prism_cp_async16(stage + 16 * SLOT(v), xt + 4 * v, 16);
    }
  } else {
    const int left = (int)(n - base); // the tile's elements, fewer than TILE
#pragma unroll
    for (int k = 0; k < (VECS + THREADS - 1) / THREADS; k++) {
      const int v = k * THREADS + t;
      const int e = left - 4 * v; // the vector's elements before n
      const int bytes = e >= 4 ? 16 : e > 0 ? 4 * e : 0;
      if (VECS % THREADS == 0 || v < VECS) prism_cp_async16(stage + 16 * SLOT(v), bytes ? xt + 4 * v : x, bytes);
    }
  }
}

// workers_sync and workers_arrive are named barrier 1 (__syncthreads is barrier 0) among the
// WORKERS threads of the workers only: warp 0 may be looking back meanwhile. A worker warp
// that arrives goes on; one that syncs waits for all WORKERS threads, and sees what they
// wrote to shared memory before they arrived or synced.
static __device__ __forceinline__ void workers_sync() { asm volatile("bar.sync 1, %0;" ::"n"(WORKERS) : "memory"); }
static __device__ __forceinline__ void workers_arrive() { asm volatile("bar.arrive 1, %0;" ::"n"(WORKERS) : "memory"); }

// scan_word returns the running sum for one element (the bits of an ELEM) and adds the
// element to run: inclusive, or exclusive (the sum before it).
static __device__ __forceinline__ unsigned int scan_word(unsigned int b, ACC &run, int exclusive) {
  const ACC v = (ACC)elem_of(b);
  if (exclusive) {
    const ACC r = run;
    run += v;
    return bits_of(r);
  }
  run += v;
  return bits_of(run);
}

// SCAN_VECS(from) is SCAN_ITEMS over the thread's SPT vectors of stage st.
#define SCAN_VECS(from)                                             \
  do {                                                              \
    ACC run = (from);                                               \
    _Pragma("unroll") for (int k = 0; k < SPT; k++) {               \
      uint4 q = st[SLOT(tid * SPT + k)];                            \
      q.x = scan_word(q.x, run, exclusive);                         \
      q.y = scan_word(q.y, run, exclusive);                         \
      q.z = scan_word(q.z, run, exclusive);                         \
      q.w = scan_word(q.w, run, exclusive);                         \
      st[SLOT(tid * SPT + k)] = q;                                  \
    }                                                               \
  } while (0)

// STAGE_SCAN(sv) sums the thread's SPT vectors of stage sv (in order, as SCAN_VECS goes)
// and scans the sums over the block (BLOCK_SCAN, two barriers): cur_prefix becomes the
// thread's prefix within the tile, block_aggregate the tile's sum in this order.
#define STAGE_SCAN(sv)                                              \
  do {                                                              \
    ACC total = (ACC)0;                                             \
    _Pragma("unroll") for (int k = 0; k < SPT; k++) {               \
      const uint4 q = (sv)[SLOT(tid * SPT + k)];                    \
      total += (ACC)elem_of(q.x);                                   \
      total += (ACC)elem_of(q.y);                                   \
      total += (ACC)elem_of(q.z);                                   \
      total += (ACC)elem_of(q.w);                                   \
    }                                                               \
    BLOCK_SCAN();                                                   \
    cur_prefix = thread_prefix;                                     \
    block_aggregate = aggregate;                                    \
  } while (0)

// The loop. Before an iteration the block holds its current tile (number tile, elements
// in stage s, the thread's prefix within it in cur_prefix, its aggregate published, and
// that value in published). Then:
//   warp 0:  looks back (SPIN_BACK), publishes tile's inclusive prefix (prefix + published)
//            and leaves prefix in tile_prefix;
//   workers: the worker of thread 32 takes the next number (taken), a named barrier hands
//            it to the workers, who start its copies into the other stage, wait for their
//            own, add them up (four running sums per thread, the warp's shuffles, the
//            workers' warp sums through shared memory and a named barrier) and publish its
//            aggregate (taken_aggregate), all without waiting on warp 0 or another block;
//   all:     a barrier; each thread scans its ITEMS with tile_prefix + cur_prefix (with
//            EARLY: its ITEMS with cur_prefix during the above, warp 0 after its look-back,
//            and the stores add tile_prefix); a barrier; striped stores of the tile. If the
//            number taken is past the last tile the block is done; otherwise STAGE_SCAN of
//            the other stage (its barriers also free this stage for the next copies) gives
//            cur_prefix, and published becomes taken_aggregate, the value the successors
//            add, so that the inclusive prefix published later agrees with it.
//
// Why the waits end. A block holds at most two tile numbers, both taken from the counter
// (state word 0) and so in increasing order: its current tile, whose aggregate is published,
// and, within an iteration, the number just taken, whose copies are in flight and whose
// aggregate the workers publish waiting only on their own copies and on each other; a block
// that has not started holds none. The only wait on another block is warp 0's look-back,
// which reads the status words of tiles smaller than the current one only; the copies and
// barriers wait on the block itself, and a started block keeps running on CUDA devices.
// Were there a tile that never publishes its inclusive prefix, take the smallest, m. Every
// tile before m eventually holds flag 2 for good (its block stores its aggregate before its
// prefix, with barriers between), so every look-back of a tile up to m ends: it reads only
// tiles before m, and stops at the first with flag 2. The block that took m scans its
// earlier tiles (all smaller than m), whose look-backs end; it makes m current (m's copies
// waited on nothing else), and m's look-back ends too, after which m publishes its prefix:
// a contradiction. This holds for any grid: blocks not resident only start later, holding
// nothing until then, and a block ends at the first number past the last tile that it
// takes, so the counter ends at tiles + the grid's blocks.
// y may be x here as well: every tile is read once, into a stage of the block holding it,
// and its copies have landed (and a barrier passed) before that block writes it; the copies
// and stores that a block has in flight at once belong to different tiles.
//
// Shared memory per block: the two stages (dynamic, 2*16*STAGE_VECS bytes: 9*TILE where SPT
// is even, 8*TILE where odd) and 8*WARPS + 12 bytes of static words.
extern "C" __global__ void __launch_bounds__(BLOCK, MINBLOCKS)
scan_lookback(ELEM *__restrict__ y, const ELEM *__restrict__ x, unsigned int *__restrict__ state, int n, int exclusive) {
  extern __shared__ __align__(16) uint4 stages[]; // two stages of STAGE_VECS slots
  __shared__ ACC warp_sums[WARPS];
  __shared__ ACC worker_sums[WARPS]; // the workers' warp sums of the next tile: 1..WARPS-1
  __shared__ ACC tile_prefix;
  __shared__ ACC taken_aggregate; // the aggregate published for taken
  __shared__ int taken;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  unsigned long long *status = (unsigned long long *)(state + 2);
  const int tiles = (int)(((long long)n + TILE - 1) / TILE);
  const unsigned int stage0 = prism_smem_addr(stages);

  // The first tile, into stage 0 by every thread; its aggregate (its prefix for tile 0) is
  // published once the block has scanned it.
  if (tid == 0) taken = (int)atomicAdd(state, 1u);
  __syncthreads();
  int tile = taken;
  if (tile >= tiles) return;
  load_tile<BLOCK>(stage0, x, tile, n, tid);
  prism_cp_async_commit();
  prism_cp_async_wait<0>(); // this thread's copies have landed
  __syncthreads();          // and every thread's
  ACC cur_prefix, block_aggregate;
  STAGE_SCAN(stages);
  ACC published = block_aggregate;
  if (tid == 0) status_store(&status[tile], (tile == 0 ? FLAG_PREFIX : FLAG_AGGREGATE) << 32 | bits_of(published));

  for (int s = 0;; s ^= 1) {
    uint4 *st = stages + (s ? STAGE_VECS : 0);       // the current tile
    const uint4 *sn = stages + (s ? 0 : STAGE_VECS); // the next one
    if (warp == 0) {
      ACC prefix = (ACC)0;
      if (tile > 0) {
        SPIN_BACK();
        if (lane == 0) status_store(&status[tile], FLAG_PREFIX << 32 | bits_of(prefix + published));
      }
      if (lane == 0) tile_prefix = prefix;
#if EARLY
      SCAN_VECS(cur_prefix);
#endif
    } else {
      if (tid == 32) taken = (int)atomicAdd(state, 1u);
      workers_sync();
      const int next = taken;
      if (next < tiles) {
        load_tile<WORKERS>(stage0 + (s ? 0 : 16 * STAGE_VECS), x, next, n, tid - 32); // into sn
        prism_cp_async_commit();
      }
#if EARLY
      SCAN_VECS(cur_prefix); // while the copies are in flight
#endif
      if (next < tiles) {
        prism_cp_async_wait<0>(); // this thread's copies have landed: it reads only those
        ACC a0 = (ACC)0, a1 = (ACC)0, a2 = (ACC)0, a3 = (ACC)0;
#pragma unroll
        for (int k = 0; k < COPIES; k++) {
          const int v = k * WORKERS + tid - 32;
          if (VECS % WORKERS == 0 || v < VECS) {
            const uint4 q = sn[SLOT(v)];
            a0 += (ACC)elem_of(q.x);
            a1 += (ACC)elem_of(q.y);
            a2 += (ACC)elem_of(q.z);
            a3 += (ACC)elem_of(q.w);
          }
        }
        const ACC sum = warp_total((a0 + a1) + (a2 + a3));
        if (lane == 0) worker_sums[warp] = sum;
        if (warp == 1) {
          workers_sync();
          ACC w = lane < WARPS - 1 ? worker_sums[lane + 1] : (ACC)0;
          w = warp_total(w);
          if (lane == 0) {
            status_store(&status[next], (next == 0 ? FLAG_PREFIX : FLAG_AGGREGATE) << 32 | bits_of(w));
            taken_aggregate = w;
          }
        } else {
          workers_arrive();
        }
      }
    }
#if EARLY
    __syncthreads();
    const ACC add = tile_prefix;
#define SCAN_OUT(b) elem_bits((ELEM)(add + acc_of(b)))
#else
    __syncthreads();
    SCAN_VECS(tile_prefix + cur_prefix);
    __syncthreads();
#define SCAN_OUT(b) elem_bits((ELEM)acc_of(b))
#endif
    const int next = taken;
    const long long base = (long long)tile * TILE;
    if (base + TILE <= n) {
      uint4 *y4 = (uint4 *)(y + base);
#pragma unroll
      for (int k = 0; k < SPT; k++) {
        const int v = k * BLOCK + tid;
        uint4 q = st[SLOT(v)];
        q.x = SCAN_OUT(q.x);
        q.y = SCAN_OUT(q.y);
        q.z = SCAN_OUT(q.z);
        q.w = SCAN_OUT(q.w);
        y4[v] = q;
      }
    } else {
      const unsigned int *sw = (const unsigned int *)st;
#pragma unroll
      for (int k = 0; k < ITEMS; k++) {
        const int idx = k * BLOCK + tid;
        const long long i = base + idx;
        if (i < n) y[i] = elem_of(SCAN_OUT(sw[4 * SLOT(idx >> 2) + (idx & 3)]));
      }
    }
#undef SCAN_OUT
    if (next >= tiles) return;
    published = taken_aggregate;
    STAGE_SCAN(sn);
    tile = next;
  }
}
#endif // PERSIST
