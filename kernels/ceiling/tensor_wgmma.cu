// tensor_wgmma.cu: the tensor-core peak of Hopper (CUDA C++, sm_90a): wgmma.mma_async on
// operands held in shared memory.
//
// Purpose: the tf32, float16, bfloat16 and float8 peaks of `prism bench` on GPUs of compute
// capability 9.0, whose warpgroup instructions (wgmma, HGMMA in SASS) reach rates that
// mma.sync does not (tensor_mma.cu is the form of the other architectures). A block of WGS
// warpgroups fills a tile of A (64 rows) and one of B (BN rows), one 128-byte row of k each,
// in shared memory with the values a and b, then each warpgroup repeats, iters times, four
// wgmma.mma_async m64nNk(32 bytes of k) instructions that walk the four 32-byte columns of
// the tiles (128-byte-swizzled K-major descriptors, as wgmma.cu's), accumulating in its BN/2
// float registers per thread, one group kept in flight while the next is issued, no other
// instruction touching the accumulators until the last wait. Every element of the
// accumulators then holds iters * 4 * K * a * b, exact (small integers).
// Each thread writes the sum of its accumulators (below 2^24: exact in float).
//
// Arguments:
//   tensor_peak_wgmma(out, abits, bbits, iters)
//     out: one float per thread of the launch, out[block * WGS*128 + thread] = the sum of
//       the thread's BN/2 accumulators = BN/2 * iters * 4 * K * a * b
//     abits, bbits: the 32-bit words that fill the tiles of A and B (a and b replicated:
//       4 fp8, 2 16-bit or 1 tf32 value per word)
//     iters: trips of the loop of four instructions
//
// Tunables (-D, part of the cache key):
//   PREC   1 tf32 (k8), 3 float16 (k16), 4 bfloat16 (k16), 6 float8 e4m3 (k32),
//          7 float8 e5m2 (k32): gemm's numbering                         default 3
//   BN     columns of an instruction: 128 or 256 (m64n128, m64n256)       default 256
//   WGS    warpgroups per block (1 to 4)                                   default 2
// Builds: -DPREC=1 | -DPREC=3 | -DPREC=4 -DBN=128 | -DPREC=6 -DWGS=3 | -DPREC=7 -DBN=128 -DWGS=4
// Launch: 1D grid of any number of blocks of WGS*128 threads, no dynamic shared memory
//   (the tiles take 8 KiB + BN*128 bytes + 1 KiB of alignment, static).
// Semantics: the inputs are exact small powers of two, so the tensor cores' alignment and
//   truncation lose nothing: the host checks every output for equality.

#include "prism_cuda.h"

#ifndef PREC
#define PREC 3
#endif
#ifndef BN
#define BN 256
#endif
#ifndef WGS
#define WGS 2
#endif

#if PREC == 1
#define WG_TYPE "tf32"
#define WG_K "8"
#define WG_TAIL ""
#elif PREC == 3
#define WG_TYPE "f16"
#define WG_K "16"
#define WG_TAIL ", 0, 0"
#elif PREC == 4
#define WG_TYPE "bf16"
#define WG_K "16"
#define WG_TAIL ", 0, 0"
#elif PREC == 6
#define WG_TYPE "e4m3"
#define WG_K "32"
#define WG_TAIL ""
#elif PREC == 7
#define WG_TYPE "e5m2"
#define WG_K "32"
#define WG_TAIL ""
#else
#error "tensor_wgmma.cu: PREC must be 1 (tf32), 3 (float16), 4 (bfloat16), 6 (e4m3) or 7 (e5m2)"
#endif
#if BN != 128 && BN != 256
#error "tensor_wgmma.cu: BN must be 128 or 256"
#endif
#if WGS < 1 || WGS > 4
#error "tensor_wgmma.cu: WGS must be 1 to 4"
#endif

#define THREADS (WGS * 128)
#define A_BYTES (64 * 128)
#define B_BYTES (BN * 128)

// desc returns the matrix descriptor of a K-major operand at shared address addr in the
// 128-byte swizzled layout (wgmma.cu's): 8-row groups 1024 bytes apart.
static __device__ __forceinline__ unsigned long long desc(unsigned int addr) { return prism_wgmma_desc(addr, 16, 1024); }

PRISM_WGMMA_SS(wgmma_n128, 64, "wgmma.mma_async.sync.aligned.m64n128k" WG_K ".f32." WG_TYPE "." WG_TYPE, WG_TAIL)

PRISM_WGMMA_SS(wgmma_n256, 128, "wgmma.mma_async.sync.aligned.m64n256k" WG_K ".f32." WG_TYPE "." WG_TYPE, WG_TAIL)

#if BN == 128
#define WGMMA wgmma_n128
#else
#define WGMMA wgmma_n256
#endif

// fence_acc tells the compiler that the accumulators may have changed (the tensor cores
// write them), so that it neither reads nor moves them across a wait.
static __device__ __forceinline__ void fence_acc(float *d) {
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) {
    asm volatile("" : "+f"(d[i])::"memory");
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) tensor_peak_wgmma(float *out, unsigned int abits, unsigned int bbits, int iters) {
  __shared__ unsigned int raw[(A_BYTES + B_BYTES + 1024) / 4];
  const unsigned int at = prism_smem_addr(raw), base = (at + 1023u) & ~1023u;
  unsigned int *tiles = raw + (base - at) / 4;
  for (int i = threadIdx.x; i < (A_BYTES + B_BYTES) / 4; i += THREADS) {
    tiles[i] = i < A_BYTES / 4 ? abits : bbits;
  }
  // The tensor cores read shared memory through the async proxy: make the stores visible
  // to it before any warpgroup starts.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  float acc[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) {
    acc[i] = 0.0f;
  }
  const unsigned int sa = base, sb = base + A_BYTES;
  // Nothing but wgmmas touches the accumulators between the first fence and the last wait:
  // an instruction that defines them while a group is in flight (the register fence a
  // wait would need) makes ptxas serialize every wgmma (C7515).
  for (int it = 0; it < iters; ++it) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      WGMMA(acc, desc(sa + 32 * ks), desc(sb + 32 * ks), 1);
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  fence_acc(acc);
  float s = 0.0f; // integers below 2^24: exact
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) {
    s += acc[i];
  }
  out[(long long)blockIdx.x * THREADS + threadIdx.x] = s;
}
