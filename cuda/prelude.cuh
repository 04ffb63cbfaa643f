// prelude.cuh: the OpenCL C 1.2 dialect of Prism's kernel suite, in CUDA C++.
//
// The CUDA backend compiles kernels/*.cl with NVRTC after this text, so that one kernel
// source serves both APIs (DESIGN.md, "One kernel source, two compilers"). It is written for
// two compilers:
//
//   - NVRTC (__CUDACC_RTC__ defined), which provides CUDA's built-in environment: thread
//     indices, vector types, the math API, atomics. The backend always compiles with
//     -default-device, so that plain helper functions of a .cl file are device functions.
//   - clang -x cuda --cuda-device-only -nocudainc -nocudalib (tests, CI), which provides
//     none of it: part 1 below declares the small subset of it that part 2 uses. Math and
//     fast-math functions are only declared (they are external calls in the PTX): the check
//     is that every kernel type-checks and compiles through the translation, not that the
//     PTX links.
//
// What maps (part 2): __kernel, __global, __local (kernel-scope arrays only), __constant
// (file-scope tables only: it becomes __constant__), __private; the work-item functions
// (returning size_t, as in OpenCL on a 64-bit device; kernels cast them to int); barrier and
// mem_fence with the CLK_* flags; atomic_* / atom_* on 32-bit int and uint (and atomic_xchg on
// float); min, max, clamp, mad, fma, mix, the common math functions and their native_*
// forms on float and double; as_* bit reinterpretation between types of one size; scalar
// convert_*; float2/float4/double2/int2/int4/uint2/uint4 with component-wise + - * / (vector
// or scalar operand), make_<type>(...), vload2/vload4/vstore2/vstore4;
// __attribute__((reqd_work_group_size(X, Y, Z))), which becomes launch_bounds(X*Y*Z) (the
// block size must not exceed it; CUDA cannot require it exactly, so launchers must pass it);
// #pragma OPENCL EXTENSION, which is ignored without a warning.
//
// What does not map, and is therefore not used by the suite (DESIGN.md): OpenCL vector
// literals ((float4)(a, b, c, d): a cast in C++; write make_float4 and define it for OpenCL
// under #ifndef PRISM_CUDA), swizzles other than .x .y .z .w, vector comparison and
// logic operators, __local pointer arguments, __constant pointer arguments, get_work_dim,
// get_global_offset other than 0, images, samplers, half, the unprefixed address-space
// keywords (global, local, constant, kernel, private: CUDA's own macros expand to those
// tokens, so they cannot be macros here), and float atomics other than atomic_xchg (write a
// compare-and-swap loop with atomic_cmpxchg and as_uint/as_float).
//
// Kernels can tell the compilers apart: PRISM_CUDA is defined here and nowhere else.

#ifndef PRISM_PRELUDE_CUH
#define PRISM_PRELUDE_CUH
#define PRISM_CUDA 1

// ---------------------------------------------------------------------------------------
// Part 1: what NVRTC provides and clang without the CUDA headers lacks.
// ---------------------------------------------------------------------------------------
#ifndef __CUDACC_RTC__

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

#pragma clang diagnostic ignored "-Wunknown-pragmas"

// Thread indices, read through the PTX special registers as clang's own CUDA headers do.
#define PRISM_SREG(type, name, reg)                                                                \
  struct type {                                                                                    \
    __declspec(property(get = get_x)) unsigned int x;                                              \
    __declspec(property(get = get_y)) unsigned int y;                                              \
    __declspec(property(get = get_z)) unsigned int z;                                              \
    static __device__ __forceinline__ unsigned int get_x() { return __nvvm_read_ptx_sreg_##reg##_x(); } \
    static __device__ __forceinline__ unsigned int get_y() { return __nvvm_read_ptx_sreg_##reg##_y(); } \
    static __device__ __forceinline__ unsigned int get_z() { return __nvvm_read_ptx_sreg_##reg##_z(); } \
  };                                                                                               \
  extern const __device__ type name;
PRISM_SREG(prism_sreg_tid, threadIdx, tid)
PRISM_SREG(prism_sreg_ntid, blockDim, ntid)
PRISM_SREG(prism_sreg_ctaid, blockIdx, ctaid)
PRISM_SREG(prism_sreg_nctaid, gridDim, nctaid)
#undef PRISM_SREG

static __device__ __forceinline__ void __threadfence_block() { __nvvm_membar_cta(); }
static __device__ __forceinline__ void __threadfence() { __nvvm_membar_gl(); }

// Atomics, as CUDA declares them (int and unsigned int; exchange also on float).
static __device__ __forceinline__ int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
static __device__ __forceinline__ unsigned int atomicAdd(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_add_gen_i((int *)p, (int)v); }
static __device__ __forceinline__ int atomicSub(int *p, int v) { return __nvvm_atom_add_gen_i(p, -v); }
static __device__ __forceinline__ unsigned int atomicSub(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_add_gen_i((int *)p, -(int)v); }
static __device__ __forceinline__ int atomicExch(int *p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
static __device__ __forceinline__ unsigned int atomicExch(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_xchg_gen_i((int *)p, (int)v); }
static __device__ __forceinline__ float atomicExch(float *p, float v) {
  int old = __nvvm_atom_xchg_gen_i((int *)p, __builtin_bit_cast(int, v));
  return __builtin_bit_cast(float, old);
}
static __device__ __forceinline__ int atomicMin(int *p, int v) { return __nvvm_atom_min_gen_i(p, v); }
static __device__ __forceinline__ unsigned int atomicMin(unsigned int *p, unsigned int v) { return __nvvm_atom_min_gen_ui(p, v); }
static __device__ __forceinline__ int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }
static __device__ __forceinline__ unsigned int atomicMax(unsigned int *p, unsigned int v) { return __nvvm_atom_max_gen_ui(p, v); }
static __device__ __forceinline__ int atomicCAS(int *p, int cmp, int v) { return __nvvm_atom_cas_gen_i(p, cmp, v); }
static __device__ __forceinline__ unsigned int atomicCAS(unsigned int *p, unsigned int cmp, unsigned int v) { return (unsigned int)__nvvm_atom_cas_gen_i((int *)p, (int)cmp, (int)v); }
static __device__ __forceinline__ int atomicAnd(int *p, int v) { return __nvvm_atom_and_gen_i(p, v); }
static __device__ __forceinline__ unsigned int atomicAnd(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_and_gen_i((int *)p, (int)v); }
static __device__ __forceinline__ int atomicOr(int *p, int v) { return __nvvm_atom_or_gen_i(p, v); }
static __device__ __forceinline__ unsigned int atomicOr(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_or_gen_i((int *)p, (int)v); }
static __device__ __forceinline__ int atomicXor(int *p, int v) { return __nvvm_atom_xor_gen_i(p, v); }
static __device__ __forceinline__ unsigned int atomicXor(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_xor_gen_i((int *)p, (int)v); }

// Vector types, as CUDA declares them.
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(16))) double2 { double x, y; };
struct __attribute__((aligned(8))) int2 { int x, y; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
struct __attribute__((aligned(8))) uint2 { unsigned int x, y; };
struct __attribute__((aligned(16))) uint4 { unsigned int x, y, z, w; };
static __device__ __forceinline__ float2 make_float2(float x, float y) { float2 v; v.x = x; v.y = y; return v; }
static __device__ __forceinline__ float4 make_float4(float x, float y, float z, float w) { float4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
static __device__ __forceinline__ double2 make_double2(double x, double y) { double2 v; v.x = x; v.y = y; return v; }
static __device__ __forceinline__ int2 make_int2(int x, int y) { int2 v; v.x = x; v.y = y; return v; }
static __device__ __forceinline__ int4 make_int4(int x, int y, int z, int w) { int4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
static __device__ __forceinline__ uint2 make_uint2(unsigned int x, unsigned int y) { uint2 v; v.x = x; v.y = y; return v; }
static __device__ __forceinline__ uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { uint4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }

// The CUDA math API part 2 calls: declarations only (see the file's header).
#define PRISM_DECLARE_MATH1(name) extern "C" __device__ float name##f(float); extern "C" __device__ double name(double);
#define PRISM_DECLARE_MATH2(name) extern "C" __device__ float name##f(float, float); extern "C" __device__ double name(double, double);
PRISM_DECLARE_MATH1(sqrt) PRISM_DECLARE_MATH1(rsqrt) PRISM_DECLARE_MATH1(cbrt)
PRISM_DECLARE_MATH1(exp) PRISM_DECLARE_MATH1(exp2) PRISM_DECLARE_MATH1(exp10) PRISM_DECLARE_MATH1(expm1)
PRISM_DECLARE_MATH1(log) PRISM_DECLARE_MATH1(log2) PRISM_DECLARE_MATH1(log10) PRISM_DECLARE_MATH1(log1p)
PRISM_DECLARE_MATH1(sin) PRISM_DECLARE_MATH1(cos) PRISM_DECLARE_MATH1(tan)
PRISM_DECLARE_MATH1(asin) PRISM_DECLARE_MATH1(acos) PRISM_DECLARE_MATH1(atan)
PRISM_DECLARE_MATH1(sinh) PRISM_DECLARE_MATH1(cosh) PRISM_DECLARE_MATH1(tanh)
PRISM_DECLARE_MATH1(fabs) PRISM_DECLARE_MATH1(floor) PRISM_DECLARE_MATH1(ceil)
PRISM_DECLARE_MATH1(round) PRISM_DECLARE_MATH1(trunc) PRISM_DECLARE_MATH1(rint)
PRISM_DECLARE_MATH1(erf) PRISM_DECLARE_MATH1(erfc) PRISM_DECLARE_MATH1(tgamma) PRISM_DECLARE_MATH1(lgamma)
PRISM_DECLARE_MATH2(pow) PRISM_DECLARE_MATH2(fmin) PRISM_DECLARE_MATH2(fmax) PRISM_DECLARE_MATH2(fmod)
PRISM_DECLARE_MATH2(atan2) PRISM_DECLARE_MATH2(hypot) PRISM_DECLARE_MATH2(copysign) PRISM_DECLARE_MATH2(fdim)
extern "C" __device__ float fmaf(float, float, float);
extern "C" __device__ double fma(double, double, double);
extern "C" __device__ float __expf(float);
extern "C" __device__ float __exp10f(float);
extern "C" __device__ float __logf(float);
extern "C" __device__ float __log2f(float);
extern "C" __device__ float __log10f(float);
extern "C" __device__ float __powf(float, float);
extern "C" __device__ float __sinf(float);
extern "C" __device__ float __cosf(float);
extern "C" __device__ float __tanf(float);
extern "C" __device__ float __fdividef(float, float);
extern "C" __device__ int __popc(unsigned int);
extern "C" __device__ int __clz(int);
extern "C" __device__ int __mul24(int, int);
extern "C" __device__ unsigned int __umul24(unsigned int, unsigned int);
extern "C" __device__ int __mulhi(int, int);
extern "C" __device__ unsigned int __umulhi(unsigned int, unsigned int);
extern "C" __device__ int printf(const char *, ...);
#undef PRISM_DECLARE_MATH1
#undef PRISM_DECLARE_MATH2

static __device__ __forceinline__ float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
static __device__ __forceinline__ unsigned int __float_as_uint(float x) { return __builtin_bit_cast(unsigned int, x); }
static __device__ __forceinline__ float __uint_as_float(unsigned int x) { return __builtin_bit_cast(float, x); }
static __device__ __forceinline__ long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
static __device__ __forceinline__ double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
#define __align__(n) __attribute__((aligned(n)))
#ifndef __restrict__
#define __restrict__ __restrict
#endif
static __device__ __forceinline__ int __float_as_int(float x) { return __builtin_bit_cast(int, x); }

#else // NVRTC

// #pragma OPENCL EXTENSION ... is unknown to NVRTC (warning 161, "unrecognized #pragma").
#pragma nv_diag_suppress 161

#endif // __CUDACC_RTC__

#define PRISM_INFINITY_F (__int_as_float(0x7f800000))
#define PRISM_NAN_F (__int_as_float(0x7fffffff))

// ---------------------------------------------------------------------------------------
// Part 2: OpenCL C in terms of CUDA, the same for both compilers.
// ---------------------------------------------------------------------------------------

// Types.
typedef decltype(sizeof(0)) size_t;
typedef decltype((char *)0 - (char *)0) ptrdiff_t;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

// Qualifiers. Address spaces are generic in CUDA, so only the storage of kernel-scope
// (__local) and file-scope (__constant) variables needs a CUDA qualifier. Both add static,
// which CUDA allows on such variables and C++ forbids on parameters: a __local or
// __constant pointer argument, which does not map, is then an error for both compilers.
#define __kernel extern "C" __global__
#define __global
#define __private
#define __local static __shared__
#define __constant static __constant__
#define __read_only
#define __write_only
#define restrict __restrict__
#define reqd_work_group_size(x, y, z) launch_bounds((x) * (y) * (z))

// Work-item functions. Dimensions other than 0, 1 and 2 give 0 for indices and 1 for sizes,
// as in OpenCL.
static __device__ __forceinline__ size_t get_local_id(uint d) {
  return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : d == 2 ? threadIdx.z : 0;
}
static __device__ __forceinline__ size_t get_local_size(uint d) {
  return d == 0 ? blockDim.x : d == 1 ? blockDim.y : d == 2 ? blockDim.z : 1;
}
static __device__ __forceinline__ size_t get_group_id(uint d) {
  return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : d == 2 ? blockIdx.z : 0;
}
static __device__ __forceinline__ size_t get_num_groups(uint d) {
  return d == 0 ? gridDim.x : d == 1 ? gridDim.y : d == 2 ? gridDim.z : 1;
}
static __device__ __forceinline__ size_t get_global_id(uint d) {
  return get_group_id(d) * get_local_size(d) + get_local_id(d);
}
static __device__ __forceinline__ size_t get_global_size(uint d) {
  return get_num_groups(d) * get_local_size(d);
}
static __device__ __forceinline__ size_t get_global_offset(uint d) { return 0; }

// Synchronization.
typedef uint cl_mem_fence_flags;
#define CLK_LOCAL_MEM_FENCE 1u
#define CLK_GLOBAL_MEM_FENCE 2u
static __device__ __forceinline__ void barrier(cl_mem_fence_flags flags) { __syncthreads(); }
static __device__ __forceinline__ void mem_fence(cl_mem_fence_flags flags) {
  if (flags & CLK_GLOBAL_MEM_FENCE) {
    __threadfence();
  } else {
    __threadfence_block();
  }
}
static __device__ __forceinline__ void read_mem_fence(cl_mem_fence_flags flags) { mem_fence(flags); }
static __device__ __forceinline__ void write_mem_fence(cl_mem_fence_flags flags) { mem_fence(flags); }

// Atomics on 32-bit integers (OpenCL 1.1 atomic_* and the 1.0 extension names atom_*):
// each returns the old value.
#define PRISM_ATOMICS(T)                                                                               \
  static __device__ __forceinline__ T atomic_add(volatile T *p, T v) { return atomicAdd((T *)p, v); } \
  static __device__ __forceinline__ T atomic_sub(volatile T *p, T v) { return atomicSub((T *)p, v); } \
  static __device__ __forceinline__ T atomic_inc(volatile T *p) { return atomicAdd((T *)p, (T)1); }   \
  static __device__ __forceinline__ T atomic_dec(volatile T *p) { return atomicSub((T *)p, (T)1); }   \
  static __device__ __forceinline__ T atomic_xchg(volatile T *p, T v) { return atomicExch((T *)p, v); } \
  static __device__ __forceinline__ T atomic_cmpxchg(volatile T *p, T cmp, T v) { return atomicCAS((T *)p, cmp, v); } \
  static __device__ __forceinline__ T atomic_min(volatile T *p, T v) { return atomicMin((T *)p, v); } \
  static __device__ __forceinline__ T atomic_max(volatile T *p, T v) { return atomicMax((T *)p, v); } \
  static __device__ __forceinline__ T atomic_and(volatile T *p, T v) { return atomicAnd((T *)p, v); } \
  static __device__ __forceinline__ T atomic_or(volatile T *p, T v) { return atomicOr((T *)p, v); }   \
  static __device__ __forceinline__ T atomic_xor(volatile T *p, T v) { return atomicXor((T *)p, v); }
PRISM_ATOMICS(int)
PRISM_ATOMICS(uint)
#undef PRISM_ATOMICS
static __device__ __forceinline__ float atomic_xchg(volatile float *p, float v) { return atomicExch((float *)p, v); }
#define atom_add atomic_add
#define atom_sub atomic_sub
#define atom_inc atomic_inc
#define atom_dec atomic_dec
#define atom_xchg atomic_xchg
#define atom_cmpxchg atomic_cmpxchg
#define atom_min atomic_min
#define atom_max atomic_max
#define atom_and atomic_and
#define atom_or atomic_or
#define atom_xor atomic_xor

// Integer and common functions, overloaded as OpenCL's are.
#define PRISM_MINMAX(T)                                                                             \
  static __device__ __forceinline__ T prism_min(T a, T b) { return b < a ? b : a; }                 \
  static __device__ __forceinline__ T prism_max(T a, T b) { return a < b ? b : a; }                 \
  static __device__ __forceinline__ T prism_clamp(T x, T lo, T hi) { return prism_min(prism_max(x, lo), hi); }
PRISM_MINMAX(char)
PRISM_MINMAX(uchar)
PRISM_MINMAX(short)
PRISM_MINMAX(ushort)
PRISM_MINMAX(int)
PRISM_MINMAX(uint)
PRISM_MINMAX(long)
PRISM_MINMAX(ulong)
PRISM_MINMAX(long long)
PRISM_MINMAX(unsigned long long)
#undef PRISM_MINMAX
// On floats OpenCL's min and max are fmin and fmax (a NaN operand gives the other).
static __device__ __forceinline__ float prism_min(float a, float b) { return fminf(a, b); }
static __device__ __forceinline__ float prism_max(float a, float b) { return fmaxf(a, b); }
static __device__ __forceinline__ float prism_clamp(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }
static __device__ __forceinline__ double prism_min(double a, double b) { return fmin(a, b); }
static __device__ __forceinline__ double prism_max(double a, double b) { return fmax(a, b); }
static __device__ __forceinline__ double prism_clamp(double x, double lo, double hi) { return fmin(fmax(x, lo), hi); }

static __device__ __forceinline__ uint prism_abs(int x) { return x < 0 ? 0u - (uint)x : (uint)x; }
static __device__ __forceinline__ uint prism_abs(uint x) { return x; }
static __device__ __forceinline__ ulong prism_abs(long x) { return x < 0 ? 0ul - (ulong)x : (ulong)x; }
static __device__ __forceinline__ ulong prism_abs(ulong x) { return x; }
static __device__ __forceinline__ int prism_mul24(int a, int b) { return __mul24(a, b); }
static __device__ __forceinline__ uint prism_mul24(uint a, uint b) { return __umul24(a, b); }
static __device__ __forceinline__ int prism_mad24(int a, int b, int c) { return __mul24(a, b) + c; }
static __device__ __forceinline__ uint prism_mad24(uint a, uint b, uint c) { return __umul24(a, b) + c; }
static __device__ __forceinline__ int prism_mul_hi(int a, int b) { return __mulhi(a, b); }
static __device__ __forceinline__ uint prism_mul_hi(uint a, uint b) { return __umulhi(a, b); }
static __device__ __forceinline__ int prism_popcount(int x) { return __popc((uint)x); }
static __device__ __forceinline__ uint prism_popcount(uint x) { return (uint)__popc(x); }
static __device__ __forceinline__ int prism_clz(int x) { return __clz(x); }
static __device__ __forceinline__ uint prism_clz(uint x) { return (uint)__clz((int)x); }

// Floating-point functions on float and double. CUDA names the float forms with an f.
#define PRISM_MATH1(name, cuda)                                                                  \
  static __device__ __forceinline__ float prism_##name(float x) { return cuda##f(x); }           \
  static __device__ __forceinline__ double prism_##name(double x) { return cuda(x); }
#define PRISM_MATH2(name, cuda)                                                                  \
  static __device__ __forceinline__ float prism_##name(float x, float y) { return cuda##f(x, y); } \
  static __device__ __forceinline__ double prism_##name(double x, double y) { return cuda(x, y); }
PRISM_MATH1(sqrt, sqrt)
PRISM_MATH1(rsqrt, rsqrt)
PRISM_MATH1(cbrt, cbrt)
PRISM_MATH1(exp, exp)
PRISM_MATH1(exp2, exp2)
PRISM_MATH1(exp10, exp10)
PRISM_MATH1(expm1, expm1)
PRISM_MATH1(log, log)
PRISM_MATH1(log2, log2)
PRISM_MATH1(log10, log10)
PRISM_MATH1(log1p, log1p)
PRISM_MATH1(sin, sin)
PRISM_MATH1(cos, cos)
PRISM_MATH1(tan, tan)
PRISM_MATH1(asin, asin)
PRISM_MATH1(acos, acos)
PRISM_MATH1(atan, atan)
PRISM_MATH1(sinh, sinh)
PRISM_MATH1(cosh, cosh)
PRISM_MATH1(tanh, tanh)
PRISM_MATH1(fabs, fabs)
PRISM_MATH1(floor, floor)
PRISM_MATH1(ceil, ceil)
PRISM_MATH1(round, round)
PRISM_MATH1(trunc, trunc)
PRISM_MATH1(rint, rint)
PRISM_MATH1(erf, erf)
PRISM_MATH1(erfc, erfc)
PRISM_MATH1(tgamma, tgamma)
PRISM_MATH1(lgamma, lgamma)
PRISM_MATH2(pow, pow)
PRISM_MATH2(powr, pow)
PRISM_MATH2(fmin, fmin)
PRISM_MATH2(fmax, fmax)
PRISM_MATH2(fmod, fmod)
PRISM_MATH2(atan2, atan2)
PRISM_MATH2(hypot, hypot)
PRISM_MATH2(copysign, copysign)
PRISM_MATH2(fdim, fdim)
#undef PRISM_MATH1
#undef PRISM_MATH2
static __device__ __forceinline__ float prism_fma(float a, float b, float c) { return fmaf(a, b, c); }
static __device__ __forceinline__ double prism_fma(double a, double b, double c) { return fma(a, b, c); }
// mad may fuse or not (OpenCL leaves it open); NVRTC fuses a*b + c by default (--fmad=true).
static __device__ __forceinline__ float prism_mad(float a, float b, float c) { return a * b + c; }
static __device__ __forceinline__ double prism_mad(double a, double b, double c) { return a * b + c; }
static __device__ __forceinline__ float prism_mix(float x, float y, float a) { return x + (y - x) * a; }
static __device__ __forceinline__ double prism_mix(double x, double y, double a) { return x + (y - x) * a; }
static __device__ __forceinline__ float prism_sign(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == x ? 0.0f * x : 0.0f; }
static __device__ __forceinline__ double prism_sign(double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x == x ? 0.0 * x : 0.0; }
static __device__ __forceinline__ float prism_step(float edge, float x) { return x < edge ? 0.0f : 1.0f; }
static __device__ __forceinline__ double prism_step(double edge, double x) { return x < edge ? 0.0 : 1.0; }
static __device__ __forceinline__ int prism_isnan(float x) { return x != x; }
static __device__ __forceinline__ int prism_isnan(double x) { return x != x; }
static __device__ __forceinline__ int prism_isinf(float x) { return fabsf(x) == PRISM_INFINITY_F; }
static __device__ __forceinline__ int prism_isinf(double x) { return fabs(x) == (double)PRISM_INFINITY_F; }
static __device__ __forceinline__ int prism_isfinite(float x) { return fabsf(x) < PRISM_INFINITY_F; }
static __device__ __forceinline__ int prism_isfinite(double x) { return fabs(x) < (double)PRISM_INFINITY_F; }

// native_*: CUDA's fast intrinsics where it has them (float only, as in OpenCL 1.2).
static __device__ __forceinline__ float prism_native_exp(float x) { return __expf(x); }
static __device__ __forceinline__ float prism_native_exp2(float x) { return exp2f(x); }
static __device__ __forceinline__ float prism_native_exp10(float x) { return __exp10f(x); }
static __device__ __forceinline__ float prism_native_log(float x) { return __logf(x); }
static __device__ __forceinline__ float prism_native_log2(float x) { return __log2f(x); }
static __device__ __forceinline__ float prism_native_log10(float x) { return __log10f(x); }
static __device__ __forceinline__ float prism_native_sqrt(float x) { return sqrtf(x); }
static __device__ __forceinline__ float prism_native_rsqrt(float x) { return rsqrtf(x); }
static __device__ __forceinline__ float prism_native_recip(float x) { return __fdividef(1.0f, x); }
static __device__ __forceinline__ float prism_native_divide(float x, float y) { return __fdividef(x, y); }
static __device__ __forceinline__ float prism_native_powr(float x, float y) { return __powf(x, y); }
static __device__ __forceinline__ float prism_native_sin(float x) { return __sinf(x); }
static __device__ __forceinline__ float prism_native_cos(float x) { return __cosf(x); }
static __device__ __forceinline__ float prism_native_tan(float x) { return __tanf(x); }

// Bit reinterpretation between types of one size (as_uint(1.0f) == 0x3f800000).
template <typename To, typename From>
static __device__ __forceinline__ To prism_as(From x) {
  static_assert(sizeof(To) == sizeof(From), "as_type: operand and result differ in size");
  union {
    From from;
    To to;
  } u;
  u.from = x;
  return u.to;
}
#define as_char(x) prism_as<char>(x)
#define as_uchar(x) prism_as<uchar>(x)
#define as_short(x) prism_as<short>(x)
#define as_ushort(x) prism_as<ushort>(x)
#define as_int(x) prism_as<int>(x)
#define as_uint(x) prism_as<uint>(x)
#define as_long(x) prism_as<long>(x)
#define as_ulong(x) prism_as<ulong>(x)
#define as_float(x) prism_as<float>(x)
#define as_double(x) prism_as<double>(x)

// Scalar conversions (default rounding only).
#define convert_char(x) ((char)(x))
#define convert_uchar(x) ((uchar)(x))
#define convert_short(x) ((short)(x))
#define convert_ushort(x) ((ushort)(x))
#define convert_int(x) ((int)(x))
#define convert_uint(x) ((uint)(x))
#define convert_long(x) ((long)(x))
#define convert_ulong(x) ((ulong)(x))
#define convert_float(x) ((float)(x))
#define convert_double(x) ((double)(x))

// Vector operators, component-wise, with a vector or a scalar on either side.
#define PRISM_VEC_OP2(V, S, op)                                                                              \
  static __device__ __forceinline__ V operator op(V a, V b) { V r; r.x = a.x op b.x; r.y = a.y op b.y; return r; } \
  static __device__ __forceinline__ V operator op(V a, S b) { V r; r.x = a.x op b; r.y = a.y op b; return r; }     \
  static __device__ __forceinline__ V operator op(S a, V b) { V r; r.x = a op b.x; r.y = a op b.y; return r; }     \
  static __device__ __forceinline__ V &operator op##=(V &a, V b) { a = a op b; return a; }                          \
  static __device__ __forceinline__ V &operator op##=(V &a, S b) { a = a op b; return a; }
#define PRISM_VEC_OP4(V, S, op)                                                                             \
  static __device__ __forceinline__ V operator op(V a, V b) {                                               \
    V r; r.x = a.x op b.x; r.y = a.y op b.y; r.z = a.z op b.z; r.w = a.w op b.w; return r;                  \
  }                                                                                                          \
  static __device__ __forceinline__ V operator op(V a, S b) {                                               \
    V r; r.x = a.x op b; r.y = a.y op b; r.z = a.z op b; r.w = a.w op b; return r;                          \
  }                                                                                                          \
  static __device__ __forceinline__ V operator op(S a, V b) {                                               \
    V r; r.x = a op b.x; r.y = a op b.y; r.z = a op b.z; r.w = a op b.w; return r;                          \
  }                                                                                                          \
  static __device__ __forceinline__ V &operator op##=(V &a, V b) { a = a op b; return a; }                  \
  static __device__ __forceinline__ V &operator op##=(V &a, S b) { a = a op b; return a; }
// vloadN/vstoreN need only element alignment in OpenCL; a CUDA vector access needs the
// vector's. One 8- or 16-byte access where the address allows it (always, for buffers
// indexed from their start: cuMemAlloc aligns to 256 bytes), scalar accesses otherwise.
#define PRISM_ALIGNED(q, V) ((((unsigned long long)(q)) & (sizeof(V) - 1)) == 0)
#define PRISM_VEC2(V, S)                                                                           \
  PRISM_VEC_OP2(V, S, +) PRISM_VEC_OP2(V, S, -) PRISM_VEC_OP2(V, S, *) PRISM_VEC_OP2(V, S, /)      \
  static __device__ __forceinline__ V operator-(V a) { V r; r.x = -a.x; r.y = -a.y; return r; }    \
  static __device__ __forceinline__ V vload2(size_t i, const S *p) {                               \
    const S *q = p + 2 * i;                                                                        \
    if (PRISM_ALIGNED(q, V)) return *(const V *)q;                                                 \
    V r; r.x = q[0]; r.y = q[1]; return r;                                                         \
  }                                                                                                \
  static __device__ __forceinline__ void vstore2(V v, size_t i, S *p) {                            \
    S *q = p + 2 * i;                                                                              \
    if (PRISM_ALIGNED(q, V)) { *(V *)q = v; return; }                                              \
    q[0] = v.x; q[1] = v.y;                                                                        \
  }
#define PRISM_VEC4(V, S)                                                                           \
  PRISM_VEC_OP4(V, S, +) PRISM_VEC_OP4(V, S, -) PRISM_VEC_OP4(V, S, *) PRISM_VEC_OP4(V, S, /)      \
  static __device__ __forceinline__ V operator-(V a) { V r; r.x = -a.x; r.y = -a.y; r.z = -a.z; r.w = -a.w; return r; } \
  static __device__ __forceinline__ V vload4(size_t i, const S *p) {                               \
    const S *q = p + 4 * i;                                                                        \
    if (PRISM_ALIGNED(q, V)) return *(const V *)q;                                                 \
    V r; r.x = q[0]; r.y = q[1]; r.z = q[2]; r.w = q[3]; return r;                                 \
  }                                                                                                \
  static __device__ __forceinline__ void vstore4(V v, size_t i, S *p) {                            \
    S *q = p + 4 * i;                                                                              \
    if (PRISM_ALIGNED(q, V)) { *(V *)q = v; return; }                                              \
    q[0] = v.x; q[1] = v.y; q[2] = v.z; q[3] = v.w;                                                \
  }
PRISM_VEC2(float2, float)
PRISM_VEC2(double2, double)
PRISM_VEC2(int2, int)
PRISM_VEC2(uint2, uint)
PRISM_VEC4(float4, float)
PRISM_VEC4(int4, int)
PRISM_VEC4(uint4, uint)
#undef PRISM_VEC_OP2
#undef PRISM_VEC_OP4
#undef PRISM_VEC2
#undef PRISM_VEC4
#undef PRISM_ALIGNED
static __device__ __forceinline__ float prism_dot(float a, float b) { return a * b; }
static __device__ __forceinline__ float prism_dot(float2 a, float2 b) { return a.x * b.x + a.y * b.y; }
static __device__ __forceinline__ float prism_dot(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
static __device__ __forceinline__ double prism_dot(double a, double b) { return a * b; }
static __device__ __forceinline__ double prism_dot(double2 a, double2 b) { return a.x * b.x + a.y * b.y; }

// Constants of OpenCL C (float.h, limits.h and the M_* math constants).
#ifndef FLT_MAX
#define FLT_MAX 3.402823466e+38F
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.175494351e-38F
#endif
#ifndef FLT_EPSILON
#define FLT_EPSILON 1.192092896e-07F
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.7976931348623158e+308
#endif
#ifndef DBL_MIN
#define DBL_MIN 2.2250738585072014e-308
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON 2.2204460492503131e-16
#endif
#ifndef CHAR_BIT
#define CHAR_BIT 8
#endif
#ifndef INT_MAX
#define INT_MAX 2147483647
#endif
#ifndef INT_MIN
#define INT_MIN (-2147483647 - 1)
#endif
#ifndef UINT_MAX
#define UINT_MAX 0xffffffffu
#endif
#ifndef LONG_MAX
#define LONG_MAX 0x7fffffffffffffffL
#endif
#ifndef LONG_MIN
#define LONG_MIN (-0x7fffffffffffffffL - 1)
#endif
#ifndef ULONG_MAX
#define ULONG_MAX 0xffffffffffffffffUL
#endif
#define MAXFLOAT FLT_MAX
#ifndef INFINITY
#define INFINITY PRISM_INFINITY_F
#endif
#ifndef NAN
#define NAN PRISM_NAN_F
#endif
#define HUGE_VALF PRISM_INFINITY_F
#define M_E_F 2.718281828f
#define M_LOG2E_F 1.442695041f
#define M_LN2_F 0.693147181f
#define M_LN10_F 2.302585093f
#define M_PI_F 3.141592654f
#define M_PI_2_F 1.570796327f
#define M_1_PI_F 0.318309886f
#define M_SQRT2_F 1.414213562f
#ifndef M_PI
#define M_E 2.718281828459045090796
#define M_LOG2E 1.442695040888963387005
#define M_LN2 0.693147180559945286227
#define M_LN10 2.302585092994045901094
#define M_PI 3.141592653589793115998
#define M_PI_2 1.570796326794896557999
#define M_1_PI 0.318309886183790691216
#define M_SQRT2 1.414213562373095145475
#endif

// The OpenCL names, last, so that nothing above is rewritten. Function-like macros rewrite
// only calls: a variable named like a function is left alone.
#define min(a, b) prism_min(a, b)
#define max(a, b) prism_max(a, b)
#define clamp(x, lo, hi) prism_clamp(x, lo, hi)
#define abs(x) prism_abs(x)
#define mul24(a, b) prism_mul24(a, b)
#define mad24(a, b, c) prism_mad24(a, b, c)
#define mul_hi(a, b) prism_mul_hi(a, b)
#define popcount(x) prism_popcount(x)
#define clz(x) prism_clz(x)
#define sqrt(x) prism_sqrt(x)
#define rsqrt(x) prism_rsqrt(x)
#define cbrt(x) prism_cbrt(x)
#define exp(x) prism_exp(x)
#define exp2(x) prism_exp2(x)
#define exp10(x) prism_exp10(x)
#define expm1(x) prism_expm1(x)
#define log(x) prism_log(x)
#define log2(x) prism_log2(x)
#define log10(x) prism_log10(x)
#define log1p(x) prism_log1p(x)
#define sin(x) prism_sin(x)
#define cos(x) prism_cos(x)
#define tan(x) prism_tan(x)
#define asin(x) prism_asin(x)
#define acos(x) prism_acos(x)
#define atan(x) prism_atan(x)
#define sinh(x) prism_sinh(x)
#define cosh(x) prism_cosh(x)
#define tanh(x) prism_tanh(x)
#define fabs(x) prism_fabs(x)
#define floor(x) prism_floor(x)
#define ceil(x) prism_ceil(x)
#define round(x) prism_round(x)
#define trunc(x) prism_trunc(x)
#define rint(x) prism_rint(x)
#define erf(x) prism_erf(x)
#define erfc(x) prism_erfc(x)
#define tgamma(x) prism_tgamma(x)
#define lgamma(x) prism_lgamma(x)
#define pow(x, y) prism_pow(x, y)
#define powr(x, y) prism_powr(x, y)
#define fmin(x, y) prism_fmin(x, y)
#define fmax(x, y) prism_fmax(x, y)
#define fmod(x, y) prism_fmod(x, y)
#define atan2(y, x) prism_atan2(y, x)
#define hypot(x, y) prism_hypot(x, y)
#define copysign(x, y) prism_copysign(x, y)
#define fdim(x, y) prism_fdim(x, y)
#define fma(a, b, c) prism_fma(a, b, c)
#define mad(a, b, c) prism_mad(a, b, c)
#define mix(x, y, a) prism_mix(x, y, a)
#define sign(x) prism_sign(x)
#define step(edge, x) prism_step(edge, x)
#define isnan(x) prism_isnan(x)
#define isinf(x) prism_isinf(x)
#define isfinite(x) prism_isfinite(x)
#define dot(a, b) prism_dot(a, b)
#define native_exp(x) prism_native_exp(x)
#define native_exp2(x) prism_native_exp2(x)
#define native_exp10(x) prism_native_exp10(x)
#define native_log(x) prism_native_log(x)
#define native_log2(x) prism_native_log2(x)
#define native_log10(x) prism_native_log10(x)
#define native_sqrt(x) prism_native_sqrt(x)
#define native_rsqrt(x) prism_native_rsqrt(x)
#define native_recip(x) prism_native_recip(x)
#define native_divide(x, y) prism_native_divide(x, y)
#define native_powr(x, y) prism_native_powr(x, y)
#define native_sin(x) prism_native_sin(x)
#define native_cos(x) prism_native_cos(x)
#define native_tan(x) prism_native_tan(x)

#ifndef __CUDACC_RTC__
// Plain functions of a .cl file are device functions, as NVRTC's -default-device makes them.
#pragma clang force_cuda_host_device begin
#endif

#endif // PRISM_PRELUDE_CUH
