// prism_cuda.h: the headers Prism embeds for CUDA C++ sources, which NVRTC compiles without
// a CUDA toolkit's include directory (NVRTC ships no cuda_fp16.h or cuda_bf16.h, and no C
// library headers). Include it as "prism_cuda.h"; the CUDA backend hands it to NVRTC with
// every CUDA C++ build.
//
// What it declares:
//   - the fixed-width integer types of <stdint.h> (int8_t ... uint64_t), unless
//     PRISM_NO_STDINT is defined (for a source that brings its own);
//   - prism_half and prism_bfloat16, storage types holding the 16 bits of an IEEE
//     binary16 and of a bfloat16, with conversions to and from float through inline PTX
//     (cvt), rounding to nearest even, NaN staying NaN: fp16 and bf16 kernels compute in
//     float, or in PTX of their own (mma.sync, wgmma), and need neither cuda_fp16.h nor
//     cuda_bf16.h;
//   - prism_pack2, which packs two 16-bit values in the 32-bit register layout that
//     f16x2/bf16x2 PTX instructions and mma fragments use (lo in bits 0-15).
//
// The backend compiles CUDA C++ for the device's architecture-specific target where there
// is one (compute_90a on sm_90): Hopper-only PTX (wgmma, setmaxnreg, mbarrier with
// transaction counts) is available there, and __CUDA_ARCH_FEAT_SM90_ALL is defined.
//
// Every function is __device__ __forceinline__ and static.

#ifndef PRISM_CUDA_H
#define PRISM_CUDA_H

#ifndef PRISM_NO_STDINT
#if defined(__INT8_TYPE__) && defined(__INT16_TYPE__) && defined(__INT32_TYPE__) && defined(__INT64_TYPE__) && \
    defined(__UINT8_TYPE__) && defined(__UINT16_TYPE__) && defined(__UINT32_TYPE__) && defined(__UINT64_TYPE__)
typedef __INT8_TYPE__ int8_t;
typedef __INT16_TYPE__ int16_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
#else
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t; // LP64, as the host: NVRTC runs on 64-bit Linux
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
#endif
#endif // PRISM_NO_STDINT

// prism_half holds the bits of an IEEE 754 binary16 (CUDA's __half).
typedef struct {
  unsigned short bits;
} prism_half;

// prism_bfloat16 holds the bits of a bfloat16: the upper half of a float (CUDA's
// __nv_bfloat16).
typedef struct {
  unsigned short bits;
} prism_bfloat16;

// prism_half_to_float converts exactly.
static __device__ __forceinline__ float prism_half_to_float(prism_half h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
  return f;
}

// prism_float_to_half rounds to nearest even; out-of-range values become infinities.
static __device__ __forceinline__ prism_half prism_float_to_half(float f) {
  prism_half h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
  return h;
}

// prism_bfloat16_to_float converts exactly: the bits become the upper half of a float.
static __device__ __forceinline__ float prism_bfloat16_to_float(prism_bfloat16 b) {
  float f;
  asm("mov.b32 %0, %1;" : "=f"(f) : "r"((unsigned int)b.bits << 16));
  return f;
}

// prism_float_to_bfloat16 rounds to nearest even: with cvt.rn.bf16.f32 on sm_80 and
// newer, with integer arithmetic before.
static __device__ __forceinline__ prism_bfloat16 prism_float_to_bfloat16(float f) {
  prism_bfloat16 b;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b.bits) : "f"(f));
#else
  unsigned int u;
  asm("mov.b32 %0, %1;" : "=r"(u) : "f"(f));
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    b.bits = (unsigned short)((u >> 16) | 0x0040u); // NaN: keep it a (quiet) NaN
  } else {
    b.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
#endif
  return b;
}

// prism_pack2 packs two 16-bit values in one 32-bit register: lo in bits 0-15.
static __device__ __forceinline__ unsigned int prism_pack2(unsigned short lo, unsigned short hi) {
  return (unsigned int)lo | (unsigned int)hi << 16;
}

#endif // PRISM_CUDA_H
