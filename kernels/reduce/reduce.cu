// reduce.cu: single-pass whole-array sum with warp shuffles (CUDA C++, NVIDIA only).
//
// Purpose: the "cuda-shfl" variant of reduce/sum: one launch instead of the portable
// kernel's two, warp-level reduction through shfl.sync instead of a local-memory tree, and
// 16-byte loads. The last block to finish sums the per-block partials (a "last block"
// reduction, the completion counted with an atomic after a memory fence), so the result
// does not depend on which block finishes last: the partials are summed in block order.
//
// Arguments (x holds n elements of type ELEM; count is one unsigned int that is 0 before
// the first launch and that every launch leaves at 0):
//   reduce_sum_shfl(out, part, count, x, n)
//                  part[b] = sum over block b's grid-stride share of x;
//                  out[0]  = sum of part[0..gridDim.x) in block order.
//
// Semantics: as reduce.cl's reduce_sum: accumulated in ACC (ELEM for floats; unsigned int
// for int, so an int32 sum wraps modulo 2^32).
//
// Tunables (-D, part of the cache key):
//   ELEM     element type: float, double or int                           default float
//   ACC      accumulator: ELEM, or uint32_t for ELEM=int                   default ELEM
//   BLOCK    threads per block, a multiple of 32 up to 1024                default 256
//   VEC      elements per vector load: 4 (float, int) or 2 (double)      default 16/sizeof(ELEM)
//   UNROLL   vector loads in flight per thread                             default 4
// Builds: -DELEM=float | -DELEM=double | -DELEM=int -DACC=uint32_t | -DELEM=float -DBLOCK=1024 -DUNROLL=2
// Launch: 1D, block exactly BLOCK, any grid size G >= 1 with part holding >= G elements;
//   x 16-byte aligned (device allocations are).
// Boundaries: the vector loop covers n - n%VEC elements; the tail is read one by one, so
//   nothing past x[n-1] is read; only out[0], part[0..G) and count are written.

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
#ifndef VEC
#define VEC (16 / sizeof(ELEM))
#endif

#ifndef UNROLL
#define UNROLL 4
#endif

#define WARPS (BLOCK / 32)

// shfl_down returns v of lane (lane + delta) of the warp (v itself past the last lane).
static __device__ __forceinline__ unsigned int shfl_down(unsigned int v, int delta) {
  unsigned int r;
  asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(delta));
  return r;
}
static __device__ __forceinline__ float shfl_down(float v, int delta) {
  return __uint_as_float(shfl_down(__float_as_uint(v), delta));
}
static __device__ __forceinline__ double shfl_down(double v, int delta) {
  unsigned long long b = __double_as_longlong(v);
  unsigned int lo = shfl_down((unsigned int)b, delta), hi = shfl_down((unsigned int)(b >> 32), delta);
  return __longlong_as_double((long long)(((unsigned long long)hi << 32) | lo));
}

// warp_sum returns, in lane 0, the sum of v over the 32 lanes (tree order: deterministic).
static __device__ __forceinline__ ACC warp_sum(ACC v) {
#pragma unroll
  for (int d = 16; d > 0; d /= 2) v += shfl_down(v, d);
  return v;
}

// block_sum returns, in thread 0, the sum of v over the block.
static __device__ __forceinline__ ACC block_sum(ACC v, ACC *smem) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = (ACC)0;
  if (warp == 0) {
    if (lane < WARPS) v = smem[lane];
    v = warp_sum(v);
  }
  return v;
}

// Vector types of VEC elements, loaded with one 16-byte instruction.
struct __align__(16) vec_t { ELEM e[VEC]; };

extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_sum_shfl(ELEM *__restrict__ out, ACC *__restrict__ part, unsigned int *__restrict__ count,
                const ELEM *__restrict__ x, long long n) {
  __shared__ ACC smem[WARPS];
  __shared__ bool last;
  const long long stride = (long long)gridDim.x * BLOCK;
  const long long tid = (long long)blockIdx.x * BLOCK + threadIdx.x;
  ACC acc = (ACC)0;
  const long long nv = n / VEC;
  const vec_t *xv = (const vec_t *)x;
  long long i = tid;
  // UNROLL independent 16-byte loads in flight per thread, then the remainder one by one.
  for (; i + (UNROLL - 1) * stride < nv; i += UNROLL * stride) {
    vec_t v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) v[u] = xv[i + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
#pragma unroll
      for (int j = 0; j < VEC; j++) acc += (ACC)v[u].e[j];
  }
  for (; i < nv; i += stride) {
    vec_t v = xv[i];
#pragma unroll
    for (int j = 0; j < VEC; j++) acc += (ACC)v.e[j];
  }
  for (long long i = nv * VEC + tid; i < n; i += stride) acc += (ACC)x[i];
  acc = block_sum(acc, smem);
  if (threadIdx.x == 0) {
    part[blockIdx.x] = acc;
    __threadfence();  // the partial is visible device-wide before the count says so
    last = atomicAdd(count, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  // The last block: every partial is written. Read them past the L1 (volatile), in block
  // order per thread, then the same block-wide tree: the same order whichever block is last.
  __threadfence();
  acc = (ACC)0;
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK) acc += ((volatile ACC *)part)[b];
  __syncthreads();  // smem is reused
  acc = block_sum(acc, smem);
  if (threadIdx.x == 0) {
    out[0] = (ELEM)acc;
    *count = 0;  // ready for the next launch (stream order)
  }
}
