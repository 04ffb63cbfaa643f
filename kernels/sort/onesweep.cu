// onesweep.cu: LSD radix sort with 8-bit digits in one pass per digit (CUDA C++, NVIDIA only).
//
// Purpose: the "cuda-onesweep" variant of sort/*, after Adinets and Merrill, "Onesweep: A
// Faster Least Significant Digit Radix Sort for GPUs" (2022). One histogram kernel reads the
// keys once and counts the digits of all four passes; a tiny kernel turns each pass's 256
// counts into the digits' first output positions; then each pass is one kernel that reads
// keys (and values) once and writes them once: 4 + 4 passes over the keys where sort.cl's
// reduce-then-scan with 4-bit digits makes 16 reads and 8 writes.
//
// A pass kernel ranks one tile of TILE = BLOCK*ITEMS keys: each warp owns 32*ITEMS
// consecutive keys, loaded warp-striped (coalesced), and ranks them in input order from the
// lanes whose key has the same digit (RANK: a shared word per warp and digit that the lanes
// set with atomicOr, or match.any.sync, which costs far more): a key's rank is the number of
// keys of its digit before it in the warp. The
// block then knows, per digit, its keys' count; it publishes each count in the tile's status
// word of that digit and looks back through its predecessors' words (one thread per digit,
// decoupled look-back, as scan.cu) until it meets an inclusive prefix, which gives the
// output position of the tile's first key of each digit. The tile is reordered by digit in
// shared memory and written in runs of equal digits. Tiles are numbered in the order blocks
// start (an atomic counter), so every tile a block waits on belongs to a running block that
// publishes before it waits: the wait ends on CUDA devices, which keep resident blocks
// running.
//
// Keys are sorted as unsigned ints after an order-preserving map applied when the first
// pass reads them (tin = mode) and undone when the last pass writes them (tout = mode), as
// sort.cl: mode bit 0, float32 keys; bit 1, descending.
//
// Arguments (n keys, 1 <= n < 2^30; all buffers unsigned int words). scratch holds
// 1024 + 4*(1 + 256*tiles) words, all 0 before the histogram, tiles = ceil(n/TILE): the
// counts of the four passes' digits (words p*256 + d), then per pass a counter of started
// tiles and 256 status words per tile.
//   onesweep_histogram(scratch, keys, n, mode, from)
//       scratch[p*256 + d] += the number of keys whose mapped digit p is d, digit p being
//       bits from + 8p on (from 0, or 4 for keys a crossing pass has sorted by their low 4
//       bits, whose last digit has 4 bits); any grid of BLOCK-thread blocks.
//   onesweep_offsets(scratch)
//       scratch[p*256 + d] = the sum of scratch[p*256 + e] for e < d, in place: the first
//       output position of digit d in pass p; 4 blocks of 256 threads.
//   onesweep_pass(kout, kin, vout, vin, scratch, n, shift, tin, tout, pairs)
//       pass shift/8 (shift = from + 8p: 0, 8, 16, 24, or 4, 12, 20, 28) of kin into kout,
//       and of vin into vout with pairs != 0 (else vin and vout are not touched); grid
//       exactly tiles blocks.
//
// Status word of a (tile, digit): flag << 30 | value; flag 0 nothing yet, 1 the tile's count
// of the digit, 2 the count of the digit in this tile and all before it.
//
// Tunables (-D, part of the cache key):
//   BLOCK   threads per block: 256 (one thread per digit)                 default 256
//   ITEMS   keys per thread per tile                                        default 16
//   MINBLOCKS  blocks per multiprocessor the pass kernel's registers must allow
//           (__launch_bounds__'s second argument; 1 asks nothing)              default 1
//   RANK    how a warp finds the lanes whose key has the same digit: 0, match.any.sync;
//           1, each lane sets its bit in a shared word per (warp, digit) with atomicOr
//           and reads the word back (CUB's "match early counts any" ranking, which avoids
//           match.any's cost; the words overlay the tile's keys, which are in registers
//           then: ITEMS >= 8; the host builds 1)                              default 0
//   Shared memory: 4*(2*TILE + (BLOCK/32 + 3)*256) + 4 bytes (41 KB at the defaults).
// Builds: -DITEMS=16 | -DITEMS=8 | -DITEMS=12 -DMINBLOCKS=5 | -DITEMS=18 -DMINBLOCKS=3 | -DITEMS=16 -DMINBLOCKS=4 -DRANK=1 | -DITEMS=8 -DRANK=1
// Launch: 1D, blocks of exactly BLOCK threads.
// Boundaries: the last tile is padded with the largest mapped key, which ranks after every
// real key of the tile; the pads are counted out of their digit (255, or 15 in a last pass
// of 4 bits) and never written.

#include "prism_cuda.h"

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 16
#endif
#ifndef MINBLOCKS
#define MINBLOCKS 1
#endif
#ifndef RANK
#define RANK 0
#endif

#define RADIX 256
#define PASSES 4
#define WARPS (BLOCK / 32)
#define TILE (BLOCK * ITEMS)
#define FLAG_COUNT 1u
#define FLAG_PREFIX 2u
#define VALUE_MASK 0x3fffffffu

#if BLOCK != RADIX
#error "onesweep.cu: BLOCK must be 256, one thread per digit"
#endif
#if RANK == 1 && WARPS * RADIX > TILE
#error "onesweep.cu: RANK=1 keeps its match words in the tile's shared keys: ITEMS >= 8"
#endif

// map_in applies the order-preserving map of mode; map_out undoes it (sort.cl's).
static __device__ __forceinline__ unsigned int map_in(unsigned int k, int mode) {
  if (mode & 1) k ^= (0u - (k >> 31)) | 0x80000000u;
  if (mode & 2) k = ~k;
  return k;
}
static __device__ __forceinline__ unsigned int map_out(unsigned int k, int mode) {
  if (mode & 2) k = ~k;
  if (mode & 1) k ^= ((k >> 31) - 1u) | 0x80000000u;
  return k;
}

// match_any returns the lanes of the warp whose v equals this lane's (match.any.sync).
static __device__ __forceinline__ unsigned int match_any(unsigned int v) {
  unsigned int r;
  asm volatile("match.any.sync.b32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}
static __device__ __forceinline__ unsigned int popc(unsigned int x) {
  unsigned int r;
  asm("popc.b32 %0, %1;" : "=r"(r) : "r"(x));
  return r;
}
static __device__ __forceinline__ unsigned int shfl_up(unsigned int v, int delta) {
  unsigned int r;
  asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(delta));
  return r;
}
static __device__ __forceinline__ void syncwarp() { asm volatile("bar.warp.sync 0xffffffff;" ::: "memory"); }
static __device__ __forceinline__ unsigned int status_load(const unsigned int *p) {
  unsigned int w;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(w) : "l"(p) : "memory");
  return w;
}
static __device__ __forceinline__ void status_store(unsigned int *p, unsigned int w) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(w) : "memory");
}

extern "C" __global__ void __launch_bounds__(BLOCK)
onesweep_histogram(unsigned int *__restrict__ counts, const unsigned int *__restrict__ keys, int n, int mode, int from) {
  // counts: scratch's first PASSES*RADIX words.
  __shared__ unsigned int h[PASSES * RADIX];
  for (int i = threadIdx.x; i < PASSES * RADIX; i += BLOCK) h[i] = 0;
  __syncthreads();
  const int stride = gridDim.x * BLOCK;
  const int quads = n / 4;
  const uint4 *k4 = (const uint4 *)keys;
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < quads + 3; i += stride) {
    unsigned int k[4];
    int m = 4;
    if (i < quads) {
      uint4 q = k4[i];
      k[0] = q.x, k[1] = q.y, k[2] = q.z, k[3] = q.w;
    } else { // the last n % 4 keys, one per thread
      const int j = quads * 4 + (i - quads);
      if (j >= n) continue;
      k[0] = keys[j];
      m = 1;
    }
    for (int j = 0; j < m; j++) {
      const unsigned int v = map_in(k[j], mode);
#pragma unroll
      for (int p = 0; p < PASSES; p++) atomicAdd(&h[p * RADIX + (v >> (from + 8 * p) & 0xff)], 1u);
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < PASSES * RADIX; i += BLOCK) {
    const unsigned int c = h[i];
    if (c) atomicAdd(&counts[i], c);
  }
}

extern "C" __global__ void __launch_bounds__(RADIX) onesweep_offsets(unsigned int *__restrict__ counts) {
  __shared__ unsigned int s[RADIX];
  unsigned int *c = counts + blockIdx.x * RADIX;
  const int t = threadIdx.x;
  const unsigned int v = c[t];
  s[t] = v;
  __syncthreads();
  for (int d = 1; d < RADIX; d *= 2) {
    const unsigned int x = t >= d ? s[t - d] : 0u;
    __syncthreads();
    s[t] += x;
    __syncthreads();
  }
  c[t] = s[t] - v; // exclusive: integers, exact
}

extern "C" __global__ void __launch_bounds__(BLOCK, MINBLOCKS)
onesweep_pass(unsigned int *__restrict__ kout, const unsigned int *__restrict__ kin, unsigned int *__restrict__ vout,
              const unsigned int *__restrict__ vin, unsigned int *__restrict__ scratch, int n, int shift, int tin,
              int tout, int pairs) {
  const unsigned int *counts = scratch + (shift >> 3) * RADIX;
  unsigned int *state = scratch + PASSES * RADIX + (long long)(shift >> 3) * (1 + (long long)gridDim.x * RADIX);
  __shared__ unsigned int sk[TILE];
  __shared__ unsigned int sv[TILE];
  __shared__ unsigned int wh[WARPS][RADIX]; // per warp and digit: count, then the warps before
  __shared__ unsigned int tile_start[RADIX]; // the digit's first index in the reordered tile
  __shared__ unsigned int out_start[RADIX];  // the output position of the tile's first key of the digit
  __shared__ unsigned int warp_sums[WARPS];
  __shared__ int tile_id;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
#if RANK == 1
  // The match words, per warp and digit: the lanes whose key has the digit (the tile's
  // shared keys are not used until the reorder).
  unsigned int(*mm)[RADIX] = (unsigned int(*)[RADIX])sk;
  for (int i = tid; i < WARPS * RADIX; i += BLOCK) (&mm[0][0])[i] = 0;
#endif
  for (int i = tid; i < WARPS * RADIX; i += BLOCK) (&wh[0][0])[i] = 0;
  if (tid == 0) tile_id = (int)atomicAdd(state, 1u);
  __syncthreads();
  const int tile = tile_id;
  const long long base = (long long)tile * TILE;
  const int valid = (long long)n - base < TILE ? (int)((long long)n - base) : TILE;
  unsigned int *status = state + 1 + (long long)tile * RADIX;

  // Warp-striped loads: the warp's keys are consecutive, lane-interleaved.
  const long long wbase = base + warp * (32 * ITEMS);
  unsigned int k[ITEMS], pos[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; j++) {
    const long long i = wbase + j * 32 + lane;
    k[j] = i < n ? map_in(kin[i], tin) : 0xffffffffu;
  }
  // Rank in input order: key j of the lane comes after keys 0..j-1 of every lane and key j
  // of the lanes below it.
  const unsigned int below = (1u << lane) - 1u;
#pragma unroll
  for (int j = 0; j < ITEMS; j++) {
    const unsigned int d = k[j] >> shift & 0xff;
#if RANK == 1
    atomicOr(&mm[warp][d], 1u << lane);
    syncwarp();
    const unsigned int peers = mm[warp][d];
#else
    const unsigned int peers = match_any(d);
#endif
    const unsigned int before = wh[warp][d];
    syncwarp();
    pos[j] = before + popc(peers & below);
    if ((peers & below) == 0) {
      wh[warp][d] = before + popc(peers);
#if RANK == 1
      mm[warp][d] = 0; // the first lane of the digit clears its word for the next key
#endif
    }
    syncwarp();
  }
  __syncthreads();

  // Thread d: the digit's count in the tile, and the warps' exclusive offsets.
  const int d = tid;
  unsigned int count = 0;
#pragma unroll
  for (int w = 0; w < WARPS; w++) {
    const unsigned int c = wh[w][d];
    wh[w][d] = count;
    count += c;
  }
  // The pads (all ones) have the digit 0xffffffff >> shift & 0xff: 255, or 15 in a last
  // pass of 4 bits (from 4).
  const unsigned int real = d == (0xffffffffu >> shift & 0xffu) ? count - (unsigned int)(TILE - valid) : count;
  unsigned int prefix = 0;
  if (tile == 0) {
    status_store(&status[d], FLAG_PREFIX << 30 | real);
  } else {
    status_store(&status[d], FLAG_COUNT << 30 | real);
    const unsigned int *p = status - RADIX + d;
    for (;;) {
      const unsigned int w = status_load(p);
      if ((w >> 30) == 0) continue;
      prefix += w & VALUE_MASK;
      if ((w >> 30) == FLAG_PREFIX) break;
      p -= RADIX;
    }
    status_store(&status[d], FLAG_PREFIX << 30 | (prefix + real));
  }
  out_start[d] = counts[d] + prefix;

  // Exclusive scan of the counts over the digits: each digit's first index in the tile.
  unsigned int incl = count;
#pragma unroll
  for (int s = 1; s < 32; s *= 2) {
    const unsigned int u = shfl_up(incl, s);
    if (lane >= s) incl += u;
  }
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  unsigned int before_warp = 0;
#pragma unroll
  for (int w = 0; w < WARPS; w++) before_warp += w < warp ? warp_sums[w] : 0u;
  tile_start[d] = before_warp + incl - count;
  __syncthreads();

  // Reorder the tile by digit in shared memory, keys then values.
#pragma unroll
  for (int j = 0; j < ITEMS; j++) {
    const unsigned int dj = k[j] >> shift & 0xff;
    pos[j] += tile_start[dj] + wh[warp][dj];
    sk[pos[j]] = k[j];
  }
  if (pairs) {
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
      const long long i = wbase + j * 32 + lane;
      if (i < n) sv[pos[j]] = vin[i];
    }
  }
  __syncthreads();

  // Runs of equal digits to their places: the first valid entries are the real keys.
  for (int i = tid; i < valid; i += BLOCK) {
    const unsigned int key = sk[i];
    const unsigned int di = key >> shift & 0xff;
    const unsigned int o = out_start[di] + (unsigned int)i - tile_start[di];
    kout[o] = map_out(key, tout);
    if (pairs) vout[o] = sv[i];
  }
}
