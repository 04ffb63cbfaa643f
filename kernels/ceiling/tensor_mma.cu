// tensor_mma.cu: the tensor-core peak through warp-level mma.sync (CUDA C++, sm_80 and
// newer), for tf32, float16, bfloat16, float8 and float64 (DMMA).
//
// Purpose: the tensor peaks of `prism bench` on NVIDIA GPUs of compute capability 8.0 and
// newer, and the float64 one (DMMA) everywhere there, Hopper included (tensor_wgmma.cu
// measures Hopper's other precisions, which mma.sync reaches only in part). Each warp holds
// constant A and B fragments in registers (every element a, or b) and CH independent
// accumulators, and repeats iters times one mma.sync per accumulator (independent, so that
// the tensor pipe always has work while an mma's result is pending). Every element of every
// accumulator then holds iters * K * a * b, exact (small integers). Each thread writes the
// sum of its accumulators (below 2^24: exact in float).
//
// Arguments:
//   tensor_peak_mma(out, abits, bbits, iters)
//     out: one float per thread of the launch, out[block * THREADS + thread] = the sum of
//       the thread's CH * D accumulators (D the accumulator registers of one mma) =
//       CH * D * iters * K * a * b
//     abits, bbits: the fragments' words: a and b replicated in 32 bits (4 fp8, 2 16-bit or
//       1 tf32 value; the low 32 bits are used), or, for PREC 5, the bits of the doubles
//     iters: trips of the loop of CH instructions
//
// Tunables (-D, part of the cache key):
//   PREC     1 tf32 m16n8k8, 3 float16 m16n8k16, 4 bfloat16 m16n8k16, 5 float64,
//            6 float8 e4m3 m16n8k32 (sm_89), 7 float8 e5m2 m16n8k32 (sm_89): gemm's
//            numbering                                                   default 3
//   DSHAPE   PREC 5's shape: 4 m8n8k4 (sm_80), 8 m16n8k8, 16 m16n8k16 (both sm_90) default 4
//   CH       independent accumulators per warp                           default 8
//   THREADS  threads per block, a multiple of 32                         default 256
// Builds: -DPREC=1 | -DPREC=3 | -DPREC=4 -DCH=4 | -DPREC=5 | -DPREC=5 -DDSHAPE=8 | -DPREC=5 -DDSHAPE=16 | -DPREC=6 -DTHREADS=128 | -DPREC=7
// Launch: 1D grid of any number of blocks of THREADS threads, no shared memory.
// Semantics: the inputs are exact small powers of two, so the tensor cores' alignment and
//   truncation lose nothing: the host checks every output for equality.

#include "prism_cuda.h"

#ifndef PREC
#define PREC 3
#endif
#ifndef DSHAPE
#define DSHAPE 4
#endif
#ifndef CH
#define CH 8
#endif
#ifndef THREADS
#define THREADS 256
#endif
#if THREADS % 32 != 0 || CH < 1
#error "tensor_mma.cu: THREADS must be a multiple of 32 and CH at least 1"
#endif

#if PREC == 5
typedef double frag_t;
typedef double acc_t;
#if DSHAPE == 4
#define A_REGS 1
#define B_REGS 1
#define D_REGS 2
#define MMA_OP "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
#define MMA(d, a, b) asm volatile(MMA_OP : "+d"(d[0]), "+d"(d[1]) : "d"(a[0]), "d"(b[0]))
#elif DSHAPE == 8
#define A_REGS 4
#define B_REGS 2
#define D_REGS 4
#define MMA(d, a, b)                                                                                                         \
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"  \
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])                                                            \
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]))
#elif DSHAPE == 16
#define A_REGS 8
#define B_REGS 4
#define D_REGS 4
#define MMA(d, a, b)                                                                                            \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, " \
               "{%12,%13,%14,%15}, {%0,%1,%2,%3};"                                                                \
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])                                                   \
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),          \
                 "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]))
#else
#error "tensor_mma.cu: DSHAPE must be 4, 8 or 16"
#endif
#else
typedef unsigned int frag_t;
typedef float acc_t;
#define A_REGS 4
#define B_REGS 2
#define D_REGS 4
#if PREC == 1
#define MMA_OP "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
#elif PREC == 3
#define MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#elif PREC == 4
#define MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#elif PREC == 6
#define MMA_OP "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"
#elif PREC == 7
#define MMA_OP "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"
#else
#error "tensor_mma.cu: PREC must be 1, 3, 4, 5, 6 or 7"
#endif
#define MMA(d, a, b)                                                                   \
  asm volatile(MMA_OP " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"        \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                       \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#endif

// frag returns the fragment element of the argument bits: the low word, or the double.
static __device__ __forceinline__ frag_t frag(unsigned long long bits) {
#if PREC == 5
  double x;
  asm("mov.b64 %0, %1;" : "=d"(x) : "l"(bits));
  return x;
#else
  return (unsigned int)bits;
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS) tensor_peak_mma(float *out, unsigned long long abits, unsigned long long bbits, int iters) {
  frag_t a[A_REGS], b[B_REGS];
#pragma unroll
  for (int i = 0; i < A_REGS; ++i) {
    a[i] = frag(abits);
  }
#pragma unroll
  for (int i = 0; i < B_REGS; ++i) {
    b[i] = frag(bbits);
  }
  acc_t acc[CH][D_REGS];
#pragma unroll
  for (int c = 0; c < CH; ++c) {
#pragma unroll
    for (int i = 0; i < D_REGS; ++i) {
      acc[c][i] = (acc_t)0;
    }
  }
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      MMA(acc[c], a, b);
    }
  }
  acc_t s = (acc_t)0; // integers below 2^24: exact
#pragma unroll
  for (int c = 0; c < CH; ++c) {
#pragma unroll
    for (int i = 0; i < D_REGS; ++i) {
      s += acc[c][i];
    }
  }
  out[(long long)blockIdx.x * THREADS + threadIdx.x] = (float)s;
}
