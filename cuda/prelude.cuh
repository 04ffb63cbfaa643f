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
// What maps (part 2, with the source translation of translate.go): __kernel, __global,
// __local (kernel-scope arrays, and pointer parameters: the translation makes each an
// offset in the block's dynamic shared memory, which the launch sizes), __constant
// (file-scope tables: it becomes __constant__; pointer parameters become const ones),
// __private, and the same without underscores (the translation spells them with); the
// work-item functions (returning size_t, as in OpenCL on a
// 64-bit device; kernels cast them to int); barrier and mem_fence with the CLK_* flags;
// atomic_* / atom_* on 32-bit int and uint (and atomic_xchg on float); the built-in
// functions below on scalars and, component-wise, on vectors of 2, 3, 4, 8 and 16
// components, with OpenCL's vector-and-scalar forms (clamp(float4, float, float),
// min(int4, int), mix(float4, float4, float), step(float, float4), ...; section "Built-in
// functions"): the math functions sqrt, rsqrt, cbrt, exp, exp2, exp10, expm1, log, log2,
// log10, log1p, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, pow, powr, fabs,
// floor, ceil, round, trunc, rint, fmin, fmax, fmod, hypot, copysign, fdim, maxmag, minmag,
// erf, erfc, tgamma, lgamma, fma and mad, their native_* forms and half_* forms (the latter
// at full precision); the common functions min, max, clamp, mix, step, smoothstep, sign,
// degrees and radians; the integer functions abs, abs_diff, add_sat, sub_sat, hadd, rhadd,
// rotate, mul_hi, mad_hi, mul24, mad24, popcount and clz on every integer type; the
// relational functions isequal, isnotequal, isgreater, isgreaterequal, isless,
// islessequal, islessgreater, isordered, isunordered, isnan, isinf, isfinite, isnormal and
// signbit (scalars give 1 and 0, vectors -1 and 0 of the component's size), any, all,
// select and bitselect; the geometric functions dot, length, distance, normalize, their
// fast_* forms, and cross of 3 and 4 components; half as a 16-bit storage type, with
// vload_half[N], vloada_halfN, vstore_half[N] and vstorea_halfN in every rounding mode
// (_rte, _rtz, _rtp, _rtn) on __global, __local and private arrays, and, as in
// cl_khr_fp16, half values that convert to and from float and compute in float; the
// vector types of 2, 3, 4, 8 and 16 components of char, uchar, short, ushort, int, uint,
// long, ulong, float and double, with vector literals ((float4)(a, b, c, d), (float4)(k),
// (float4)(v2, a, b)), swizzles (.xyzw, .s0-.sF, .lo .hi .even .odd) read and written,
// component-wise arithmetic, bitwise, shift, comparison and logical operators (comparisons
// give -1 and 0), as_<type>, convert_<type>[_sat][_rte|_rtz|_rtp|_rtn], vloadN and vstoreN
// (section "Vectors"), make_<type>(...) for CUDA's vector types;
// __attribute__((reqd_work_group_size(X, Y, Z))), which becomes launch_bounds(X*Y*Z) (the
// block size must not exceed it; CUDA cannot require it exactly, so launchers must pass it);
// #pragma OPENCL EXTENSION, which is ignored without a warning.
//
// What does not map: get_work_dim, images and samplers, and __global or __constant
// pointers to 3-component vectors (OpenCL's float3 is 16 bytes, CUDA's 12: the translation
// refuses them with ErrUnsupported, naming the construct); get_global_offset other than
// 0; the ?: operator with a vector condition (C++ takes it as one bool: use
// select), the built-in functions not listed above (those with pointer arguments: fract,
// modf, sincos, frexp, remquo, lgamma_r; and ldexp, pown, rootn, ilogb, logb, nextafter,
// remainder, asinh, acosh, atanh, sinpi, cospi, tanpi, the *pi inverses, mad_sat,
// upsample, shuffle, shuffle2, nan), the vector types of half (half2, ...) and
// convert_half, OpenCL's size of 3-component vectors elsewhere (arrays of float3 in
// __local or private memory are 12 bytes an element), and float atomics other than
// atomic_xchg (write a compare-and-swap loop with atomic_cmpxchg and as_uint/as_float).
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

// Vector types, as CUDA declares them (2, 3 and 4 components of every OpenCL scalar type).
#define PRISM_CUDA_VEC(V, S, A2, A4)                                                                \
  struct __attribute__((aligned(A2))) V##2 { S x, y; };                                            \
  struct V##3 { S x, y, z; };                                                                      \
  struct __attribute__((aligned(A4))) V##4 { S x, y, z, w; };
PRISM_CUDA_VEC(char, signed char, 2, 4)
PRISM_CUDA_VEC(uchar, unsigned char, 2, 4)
PRISM_CUDA_VEC(short, short, 4, 8)
PRISM_CUDA_VEC(ushort, unsigned short, 4, 8)
PRISM_CUDA_VEC(int, int, 8, 16)
PRISM_CUDA_VEC(uint, unsigned int, 8, 16)
PRISM_CUDA_VEC(long, long, 16, 16)
PRISM_CUDA_VEC(ulong, unsigned long, 16, 16)
PRISM_CUDA_VEC(float, float, 8, 16)
PRISM_CUDA_VEC(double, double, 16, 16)
#undef PRISM_CUDA_VEC
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
// which CUDA allows on such variables and C++ forbids on parameters: the translation
// rewrites __local and __constant pointer parameters (translate.go, kernelParams), so that
// these macros never reach a parameter list.
#define __kernel extern "C" __global__
#define __global
#define __private
#define __local static __shared__
#define __constant static __constant__
#define __read_only
#define __write_only
#define restrict __restrict__
#define reqd_work_group_size(x, y, z) launch_bounds((x) * (y) * (z))

// __local pointer parameters. The translation makes each a uint, the byte offset of its
// memory in the block's dynamic shared memory (the launch places them one after another,
// each at a multiple of 16 bytes, and sizes the block's dynamic shared memory to hold them),
// and starts the kernel's body with the pointer's declaration: T *p = prism_local_at(off),
// whose value converts to a pointer of any type.
extern __shared__ __attribute__((aligned(16))) unsigned char prism_local_mem[];
struct prism_local_ptr {
  unsigned char *p;
  template <class T> __device__ __forceinline__ operator T *() const { return (T *)p; }
};
static __device__ __forceinline__ prism_local_ptr prism_local_at(uint offset) {
  prism_local_ptr l = {prism_local_mem + offset};
  return l;
}

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

// Vectors. OpenCL's vector types of 2, 3 and 4 components are CUDA's own (float4 is CUDA's
// float4, with its members x, y, z and w, so that make_float4 and CUDA C++ code agree); those
// of 8 and 16 components are Prism's structs (prism_float8, ...), an array s of components
// aligned to the vector's size as in OpenCL. Unlike OpenCL's, a CUDA 3-component vector has
// the size and alignment of its three components (float3: 12 bytes, not 16).
//
// The translation (translate.go) rewrites what C++ cannot say: vector literals become
// prism_vmake<V>(...), swizzles prism_swzM<I>(v) with M components whose indices are the
// hexadecimal digits of I (v.wzyx: prism_swz4<0x3210>(v)), .lo .hi .even .odd prism_lo(v),
// ...; where the swizzle is assigned, prism_swzM_ref<I>(v) and prism_lo_ref(v), ..., which
// of a multi-component swizzle of an lvalue give a prism_swizzle, a reference to the
// vector that reads as a vector and assigns (=, +=, ...) to its components, and of a
// one-component swizzle of an lvalue a reference to the component. Everything else is templates and
// operator overloads: component-wise arithmetic (a scalar operand is converted to the
// component type, as in OpenCL), comparisons and logical operators giving the signed
// integer vector of the component's size with -1 for true and 0 for false, as_<type>,
// convert_<type>[_sat][_rte|_rtz|_rtp|_rtn], vloadN and vstoreN.
template <bool C, class T = void> struct prism_enable_if {};
template <class T> struct prism_enable_if<true, T> { typedef T type; };
template <class A, class B> struct prism_same { static const bool value = false; };
template <class A> struct prism_same<A, A> { static const bool value = true; };
template <class T> struct prism_scalar { static const bool value = false; };
template <class T> struct prism_int { static const bool value = false; static const bool is_signed = false; };
#define PRISM_SCALAR(T, I, SIGNED)                                                                  \
  template <> struct prism_scalar<T> { static const bool value = true; };                           \
  template <> struct prism_int<T> { static const bool value = I; static const bool is_signed = SIGNED; };
PRISM_SCALAR(bool, true, false)
PRISM_SCALAR(char, true, true)
PRISM_SCALAR(signed char, true, true)
PRISM_SCALAR(unsigned char, true, false)
PRISM_SCALAR(short, true, true)
PRISM_SCALAR(unsigned short, true, false)
PRISM_SCALAR(int, true, true)
PRISM_SCALAR(unsigned int, true, false)
PRISM_SCALAR(long, true, true)
PRISM_SCALAR(unsigned long, true, false)
PRISM_SCALAR(long long, true, true)
PRISM_SCALAR(unsigned long long, true, false)
PRISM_SCALAR(float, false, true)
PRISM_SCALAR(double, false, true)
#undef PRISM_SCALAR
// The signed integer type of a size: the component type of comparisons' results.
template <int Size> struct prism_sint {};
template <> struct prism_sint<1> { typedef char type; };
template <> struct prism_sint<2> { typedef short type; };
template <> struct prism_sint<4> { typedef int type; };
template <> struct prism_sint<8> { typedef long type; };

// prism_vt<V>: a vector type's component type E and width N; prism_vec<E, N>::type: the
// vector type of N components of E (E itself for N == 1).
template <class V> struct prism_vt {};
template <class E, int N> struct prism_vec {};
template <class E> struct prism_vec<E, 1> { typedef E type; };
#define PRISM_VT(V, S, W)                                                                           \
  template <> struct prism_vt<V> { typedef S E; static const int N = W; };                          \
  template <> struct prism_vec<S, W> { typedef V type; };
#define PRISM_VECTORS(T, S)                                                                         \
  struct __attribute__((aligned(8 * sizeof(S)))) prism_##T##8 { S s[8]; };                          \
  struct __attribute__((aligned(16 * sizeof(S)))) prism_##T##16 { S s[16]; };                      \
  typedef prism_##T##8 T##8;                                                                       \
  typedef prism_##T##16 T##16;                                                                     \
  PRISM_VT(T##2, S, 2) PRISM_VT(T##3, S, 3) PRISM_VT(T##4, S, 4) PRISM_VT(T##8, S, 8) PRISM_VT(T##16, S, 16)
PRISM_VECTORS(char, char)
PRISM_VECTORS(uchar, uchar)
PRISM_VECTORS(short, short)
PRISM_VECTORS(ushort, ushort)
PRISM_VECTORS(int, int)
PRISM_VECTORS(uint, uint)
PRISM_VECTORS(long, long)
PRISM_VECTORS(ulong, ulong)
PRISM_VECTORS(float, float)
PRISM_VECTORS(double, double)
#undef PRISM_VECTORS
#undef PRISM_VT
template <> struct prism_vec<signed char, 2> { typedef char2 type; };
template <> struct prism_vec<signed char, 3> { typedef char3 type; };
template <> struct prism_vec<signed char, 4> { typedef char4 type; };
template <> struct prism_vec<signed char, 8> { typedef char8 type; };
template <> struct prism_vec<signed char, 16> { typedef char16 type; };

// Component i of a vector, as an lvalue (of a scalar: the scalar).
template <class S>
static __device__ __forceinline__ typename prism_enable_if<prism_scalar<S>::value, S &>::type prism_el(S &s, int) { return s; }
template <class V>
static __device__ __forceinline__ typename prism_vt<V>::E &prism_el(V &v, int i) { return ((typename prism_vt<V>::E *)&v)[i]; }
template <class V>
static __device__ __forceinline__ const typename prism_vt<V>::E &prism_el(const V &v, int i) { return ((const typename prism_vt<V>::E *)&v)[i]; }

// A swizzle of an lvalue: M components of the vector V at the indices packed in I (one
// hexadecimal digit each, the first component's most significant). Indices past the
// vector (the undefined component of .hi and .odd of a 3-component vector) read the last
// component and are not written.
template <class V, int M, unsigned long long I> struct prism_swizzle {
  typedef typename prism_vt<V>::E E;
  typedef typename prism_vec<E, M>::type R;
  V &v;
  static __device__ __forceinline__ int at(int k) {
    const int i = (int)((I >> (4 * (M - 1 - k))) & 15);
    return i < prism_vt<V>::N ? i : prism_vt<V>::N - 1;
  }
  static __device__ __forceinline__ bool writes(int k) { return (int)((I >> (4 * (M - 1 - k))) & 15) < prism_vt<V>::N; }
  __device__ __forceinline__ R get() const {
    R r;
    for (int k = 0; k < M; k++) prism_el(r, k) = prism_el(v, at(k));
    return r;
  }
  __device__ __forceinline__ operator R() const { return get(); }
  __device__ __forceinline__ prism_swizzle &set(const R &r) {
    for (int k = 0; k < M; k++)
      if (writes(k)) prism_el(v, at(k)) = prism_el(r, k);
    return *this;
  }
  __device__ __forceinline__ prism_swizzle &operator=(const prism_swizzle &o) { return set(o.get()); }
  template <class B> __device__ __forceinline__ prism_swizzle &operator=(const B &b);
  template <class B> __device__ __forceinline__ prism_swizzle &operator+=(const B &b) { return set(get() + b); }
  template <class B> __device__ __forceinline__ prism_swizzle &operator-=(const B &b) { return set(get() - b); }
  template <class B> __device__ __forceinline__ prism_swizzle &operator*=(const B &b) { return set(get() * b); }
  template <class B> __device__ __forceinline__ prism_swizzle &operator/=(const B &b) { return set(get() / b); }
  template <class B> __device__ __forceinline__ prism_swizzle &operator%=(const B &b) { return set(get() % b); }
  template <class B> __device__ __forceinline__ prism_swizzle &operator&=(const B &b) { return set(get() & b); }
  template <class B> __device__ __forceinline__ prism_swizzle &operator|=(const B &b) { return set(get() | b); }
  template <class B> __device__ __forceinline__ prism_swizzle &operator^=(const B &b) { return set(get() ^ b); }
  template <class B> __device__ __forceinline__ prism_swizzle &operator<<=(const B &b) { return set(get() << b); }
  template <class B> __device__ __forceinline__ prism_swizzle &operator>>=(const B &b) { return set(get() >> b); }
};

// prism_value<A>::type: what an operand is as a value (a swizzle: its vector); width: its
// number of components (1 for a scalar); prism_get(a, i): its component i (a scalar: itself).
template <class A> struct prism_value { typedef A type; };
template <class V, int M, unsigned long long I> struct prism_value<prism_swizzle<V, M, I> > {
  typedef typename prism_swizzle<V, M, I>::R type;
};
template <class A, class = void> struct prism_width { static const int value = 1; };
template <class A> struct prism_width<A, typename prism_enable_if<(prism_vt<typename prism_value<A>::type>::N > 0)>::type> {
  static const int value = prism_vt<typename prism_value<A>::type>::N;
};
template <class S>
static __device__ __forceinline__ typename prism_enable_if<prism_scalar<S>::value, S>::type prism_get(const S &s, int) { return s; }
template <class V>
static __device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), typename prism_vt<V>::E>::type prism_get(const V &v, int i) {
  return prism_el(v, i);
}
template <class V, int M, unsigned long long I>
static __device__ __forceinline__ typename prism_vt<V>::E prism_get(const prism_swizzle<V, M, I> &s, int k) {
  return prism_el(s.v, s.at(k));
}

// prism_bin<A, B>::type: the vector type of a binary operation's operands (a vector and a
// vector of its type, or a scalar), undefined when neither is a vector (no overload).
template <class A, class B, class = void> struct prism_bin2 {};
template <class V> struct prism_bin2<V, V, typename prism_enable_if<(prism_vt<V>::N > 0)>::type> { typedef V type; };
template <class V, class S> struct prism_bin2<V, S, typename prism_enable_if<(prism_vt<V>::N > 0) && prism_scalar<S>::value>::type> { typedef V type; };
template <class S, class V> struct prism_bin2<S, V, typename prism_enable_if<(prism_vt<V>::N > 0) && prism_scalar<S>::value>::type> { typedef V type; };
template <class A, class B> struct prism_bin : prism_bin2<typename prism_value<A>::type, typename prism_value<B>::type> {};
// prism_mask<V>::type: the result of comparing two V, signed integers of the component's size.
template <class V> struct prism_mask {
  typedef typename prism_vec<typename prism_sint<sizeof(typename prism_vt<V>::E)>::type, prism_vt<V>::N>::type type;
};

#define PRISM_VEC_BINOP(op)                                                                         \
  template <class A, class B>                                                                       \
  static __device__ __forceinline__ typename prism_bin<A, B>::type operator op(const A &a, const B &b) { \
    typedef typename prism_bin<A, B>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    V r;                                                                                            \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = (E)((E)prism_get(a, i) op (E)prism_get(b, i)); \
    return r;                                                                                       \
  }                                                                                                 \
  template <class V, class B>                                                                       \
  static __device__ __forceinline__ typename prism_enable_if<prism_same<typename prism_bin<V, B>::type, V>::value, V &>::type \
  operator op##=(V &a, const B &b) { a = a op b; return a; }
PRISM_VEC_BINOP(+)
PRISM_VEC_BINOP(-)
PRISM_VEC_BINOP(*)
PRISM_VEC_BINOP(/)
PRISM_VEC_BINOP(%)
PRISM_VEC_BINOP(&)
PRISM_VEC_BINOP(|)
PRISM_VEC_BINOP(^)
#undef PRISM_VEC_BINOP
// Shifts use the low bits of the right operand only, as in OpenCL.
#define PRISM_VEC_SHIFT(op)                                                                         \
  template <class A, class B>                                                                       \
  static __device__ __forceinline__ typename prism_bin<A, B>::type operator op(const A &a, const B &b) { \
    typedef typename prism_bin<A, B>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    V r;                                                                                            \
    for (int i = 0; i < prism_vt<V>::N; i++)                                                        \
      prism_el(r, i) = (E)((E)prism_get(a, i) op ((E)prism_get(b, i) & (E)(8 * sizeof(E) - 1)));     \
    return r;                                                                                       \
  }                                                                                                 \
  template <class V, class B>                                                                       \
  static __device__ __forceinline__ typename prism_enable_if<prism_same<typename prism_bin<V, B>::type, V>::value, V &>::type \
  operator op##=(V &a, const B &b) { a = a op b; return a; }
PRISM_VEC_SHIFT(<<)
PRISM_VEC_SHIFT(>>)
#undef PRISM_VEC_SHIFT
#define PRISM_VEC_RELOP(op)                                                                         \
  template <class A, class B>                                                                       \
  static __device__ __forceinline__ typename prism_mask<typename prism_bin<A, B>::type>::type operator op(const A &a, const B &b) { \
    typedef typename prism_bin<A, B>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    typedef typename prism_mask<V>::type R;                                                         \
    R r;                                                                                            \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = ((E)prism_get(a, i) op (E)prism_get(b, i)) ? -1 : 0; \
    return r;                                                                                       \
  }
PRISM_VEC_RELOP(==)
PRISM_VEC_RELOP(!=)
PRISM_VEC_RELOP(<)
PRISM_VEC_RELOP(>)
PRISM_VEC_RELOP(<=)
PRISM_VEC_RELOP(>=)
#undef PRISM_VEC_RELOP
#define PRISM_VEC_LOGIC(op)                                                                         \
  template <class A, class B>                                                                       \
  static __device__ __forceinline__ typename prism_mask<typename prism_bin<A, B>::type>::type operator op(const A &a, const B &b) { \
    typedef typename prism_bin<A, B>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    typedef typename prism_mask<V>::type R;                                                         \
    R r;                                                                                            \
    for (int i = 0; i < prism_vt<V>::N; i++)                                                        \
      prism_el(r, i) = ((E)prism_get(a, i) != (E)0 op (E)prism_get(b, i) != (E)0) ? -1 : 0;         \
    return r;                                                                                       \
  }
PRISM_VEC_LOGIC(&&)
PRISM_VEC_LOGIC(||)
#undef PRISM_VEC_LOGIC
#define PRISM_VEC_UNARY(op, R, expr)                                                                \
  template <class A>                                                                                \
  static __device__ __forceinline__ typename R<typename prism_bin<A, A>::type>::type operator op(const A &a) { \
    typedef typename prism_bin<A, A>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    typename R<V>::type r;                                                                          \
    for (int i = 0; i < prism_vt<V>::N; i++) {                                                      \
      const E x = prism_get(a, i);                                                                  \
      prism_el(r, i) = expr;                                                                        \
    }                                                                                               \
    return r;                                                                                       \
  }
template <class V> struct prism_self { typedef V type; };
PRISM_VEC_UNARY(-, prism_self, (E)-x)
PRISM_VEC_UNARY(+, prism_self, x)
PRISM_VEC_UNARY(~, prism_self, (E)~x)
PRISM_VEC_UNARY(!, prism_mask, x == (E)0 ? -1 : 0)
#undef PRISM_VEC_UNARY
template <class V>
static __device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), V &>::type operator++(V &a) { return a += 1; }
template <class V>
static __device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), V &>::type operator--(V &a) { return a -= 1; }
template <class V>
static __device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), V>::type operator++(V &a, int) { V t = a; a += 1; return t; }
template <class V>
static __device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), V>::type operator--(V &a, int) { V t = a; a -= 1; return t; }

template <class V, int M, unsigned long long I>
template <class B>
__device__ __forceinline__ prism_swizzle<V, M, I> &prism_swizzle<V, M, I>::operator=(const B &b) {
  static_assert(prism_width<B>::value == M || prism_width<B>::value == 1, "swizzle assignment: the operand's width is not the swizzle's");
  R r;
  for (int k = 0; k < M; k++) prism_el(r, k) = (E)prism_get(b, k < prism_width<B>::value ? k : 0);
  return set(r);
}

// Vector literals: (float4)(a, b, c, d), (float4)(x) and (float4)(v2, a, b) are
// prism_vmake<float4>(...): the components of the operands in order, or one scalar in
// every component.
template <class V>
static __device__ __forceinline__ void prism_fill(V &, int) {}
template <class V, class A, class... Rest>
static __device__ __forceinline__ void prism_fill(V &r, int k, const A &a, const Rest &...rest) {
  for (int i = 0; i < prism_width<A>::value; i++) prism_el(r, k + i) = (typename prism_vt<V>::E)prism_get(a, i);
  prism_fill(r, k + prism_width<A>::value, rest...);
}
template <class V, class... A>
static __device__ __forceinline__ V prism_vmake(const A &...a) {
  const int n = (0 + ... + prism_width<A>::value);
  static_assert(n == prism_vt<V>::N || (n == 1 && sizeof...(A) == 1), "vector literal: the operands' components do not make the vector");
  V r;
  prism_fill(r, 0, a...);
  for (int i = n; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_el(r, 0);
  return r;
}

// Swizzles: prism_swzM<I>(v), M components at the indices packed in I, is the swizzle's
// value; prism_swzM_ref<I>(v), which the translation writes where a swizzle is assigned,
// incremented or swizzled again, is of an lvalue a prism_swizzle (of one component: a
// reference to it), and of a constant or a temporary the value.
template <class V, int M, unsigned long long I> struct prism_swz_lvalue {
  typedef prism_swizzle<V, M, I> type;
  static __device__ __forceinline__ type make(V &v) {
    type s = {v};
    return s;
  }
};
template <class V, unsigned long long I> struct prism_swz_lvalue<V, 1, I> {
  typedef typename prism_vt<V>::E &type;
  static __device__ __forceinline__ type make(V &v) { return prism_el(v, prism_swizzle<V, 1, I>::at(0)); }
};
template <int M, unsigned long long I, class V>
static __device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), typename prism_swz_lvalue<V, M, I>::type>::type prism_swzn(V &v) {
  return prism_swz_lvalue<V, M, I>::make(v);
}
template <int M, unsigned long long I, class V>
static __device__ __forceinline__ typename prism_vec<typename prism_vt<typename prism_value<V>::type>::E, M>::type prism_swzn(const V &v) {
  typedef typename prism_value<V>::type T;
  const T t = v;
  typename prism_vec<typename prism_vt<T>::E, M>::type r;
  for (int k = 0; k < M; k++) prism_el(r, k) = prism_el(t, prism_swizzle<T, M, I>::at(k));
  return r;
}
#define PRISM_SWZ(M)                                                                                \
  template <unsigned long long I, class V>                                                          \
  static __device__ __forceinline__ auto prism_swz##M(const V &v)->decltype(prism_swzn<M, I>(v)) { return prism_swzn<M, I>(v); } \
  template <unsigned long long I, class V>                                                          \
  static __device__ __forceinline__ auto prism_swz##M##_ref(V &v)->decltype(prism_swzn<M, I>(v)) { return prism_swzn<M, I>(v); } \
  template <unsigned long long I, class V>                                                          \
  static __device__ __forceinline__ auto prism_swz##M##_ref(const V &v)->decltype(prism_swzn<M, I>(v)) { return prism_swzn<M, I>(v); }
PRISM_SWZ(1)
PRISM_SWZ(2)
PRISM_SWZ(3)
PRISM_SWZ(4)
PRISM_SWZ(8)
PRISM_SWZ(16)
#undef PRISM_SWZ
// .lo .hi .even .odd: half the components (of a 3-component vector, as of 4), at indices
// that depend on the width; prism_lo(v), or prism_lo_ref(v) as prism_swzM_ref.
template <class V> struct prism_unconst { typedef V type; };
template <class V> struct prism_unconst<const V> { typedef V type; };
template <class V> struct prism_vhalf {
  static const int N = prism_vt<typename prism_value<typename prism_unconst<V>::type>::type>::N;
  static const int M = (N == 3 ? 4 : N) / 2;
  static constexpr unsigned long long pack(int first, int step) {
    unsigned long long I = 0;
    for (int k = 0; k < M; k++) I = I << 4 | (unsigned long long)(first + step * k);
    return I;
  }
};
#define PRISM_HALF(name, first, step)                                                               \
  template <class V>                                                                                \
  static __device__ __forceinline__ auto prism_##name(const V &v)                                  \
      ->decltype(prism_swzn<prism_vhalf<V>::M, prism_vhalf<V>::pack(first, step)>(v)) {             \
    return prism_swzn<prism_vhalf<V>::M, prism_vhalf<V>::pack(first, step)>(v);                     \
  }                                                                                                 \
  template <class V>                                                                                \
  static __device__ __forceinline__ auto prism_##name##_ref(V &v)                                  \
      ->decltype(prism_swzn<prism_vhalf<V>::M, prism_vhalf<V>::pack(first, step)>(v)) {             \
    return prism_swzn<prism_vhalf<V>::M, prism_vhalf<V>::pack(first, step)>(v);                     \
  }                                                                                                 \
  template <class V>                                                                                \
  static __device__ __forceinline__ auto prism_##name##_ref(const V &v)                            \
      ->decltype(prism_swzn<prism_vhalf<V>::M, prism_vhalf<V>::pack(first, step)>(v)) {             \
    return prism_swzn<prism_vhalf<V>::M, prism_vhalf<V>::pack(first, step)>(v);                     \
  }
PRISM_HALF(lo, 0, 1)
PRISM_HALF(hi, prism_vhalf<V>::M, 1)
PRISM_HALF(even, 0, 2)
PRISM_HALF(odd, 1, 2)
#undef PRISM_HALF

// Bit reinterpretation between types of one size (as_uint(1.0f) == 0x3f800000), scalars and
// vectors.
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

// Conversions: convert_<type>(x) is prism_cvt<type>::def(x); the translation writes the
// saturating and rounding forms, convert_int4_sat_rte(x), as prism_cvt<int4>::sat_rte(x).
// Conversions to integers round toward zero by default, to floating point to nearest even;
// saturation (integers only) clamps to the type's range, and gives 0 for a NaN.
template <class T, class = void> struct prism_component { typedef T type; };
template <class T> struct prism_component<T, typename prism_enable_if<(prism_vt<T>::N > 0)>::type> { typedef typename prism_vt<T>::E type; };
template <class T> static __device__ __forceinline__ T prism_int_max() {
  return prism_int<T>::is_signed ? (T)((1ull << (8 * sizeof(T) - 1)) - 1) : (T)~0ull;
}
template <class T> static __device__ __forceinline__ T prism_int_min() {
  return prism_int<T>::is_signed ? (T)(-(long long)((1ull << (8 * sizeof(T) - 1)) - 1) - 1) : (T)0;
}
static __device__ __forceinline__ float prism_round_mode(float x, int r) { return r == 1 ? rintf(x) : r == 3 ? ceilf(x) : r == 4 ? floorf(x) : x; }
static __device__ __forceinline__ double prism_round_mode(double x, int r) { return r == 1 ? rint(x) : r == 3 ? ceil(x) : r == 4 ? floor(x) : x; }
template <class F> static __device__ __forceinline__ F prism_round_mode(F x, int) { return x; }
// The sign of f - x, exactly, for f the rounded-to-nearest conversion of x.
template <class T, class F> static __device__ __forceinline__ int prism_order(T f, F x) {
  if constexpr (!prism_int<F>::value || sizeof(F) < 8) {
    return ((double)f > (double)x) - ((double)f < (double)x);
  } else {
    const double d = (double)f, top = prism_int<F>::is_signed ? 9223372036854775808.0 : 18446744073709551616.0;
    if (d >= top) return 1;
    if (d < (prism_int<F>::is_signed ? -top : 0.0)) return -1;
    const F back = (F)d;
    return (back > x) - (back < x);
  }
}
static __device__ __forceinline__ float prism_step_to(float f, int dir) {
  if (f == 0.0f) return dir > 0 ? __uint_as_float(1u) : -__uint_as_float(1u);
  const unsigned int u = __float_as_uint(f);
  return __uint_as_float((f > 0.0f) == (dir > 0) ? u + 1 : u - 1);
}
static __device__ __forceinline__ double prism_step_to(double f, int dir) {
  if (f == 0.0) return dir > 0 ? __longlong_as_double(1ll) : -__longlong_as_double(1ll);
  const long long u = __double_as_longlong(f);
  return __longlong_as_double((f > 0.0) == (dir > 0) ? u + 1 : u - 1);
}
// R: 0 the default, 1 rte, 2 rtz, 3 rtp, 4 rtn.
template <class To, bool Sat, int R, class F>
static __device__ __forceinline__ To prism_conv(F x) {
  if constexpr (prism_int<To>::value) {
    if constexpr (!prism_int<F>::value) {
      const F y = prism_round_mode(x, R);
      if (Sat) {
        if (y != y) return (To)0;
        if (y <= (F)prism_int_min<To>()) return prism_int_min<To>();
        if (y >= (F)prism_int_max<To>()) return prism_int_max<To>();
      }
      return (To)y;
    } else {
      if (Sat) {
        if (prism_int<F>::is_signed && (long long)x < 0) {
          if (!prism_int<To>::is_signed) return (To)0;
          if ((long long)x < (long long)prism_int_min<To>()) return prism_int_min<To>();
        } else if ((unsigned long long)x > (unsigned long long)prism_int_max<To>()) {
          return prism_int_max<To>();
        }
      }
      return (To)x;
    }
  } else {
    To f = (To)x;
    if (R >= 2 && f == f) {
      const int c = prism_order(f, x);
      if ((R == 2 && ((c > 0 && f > (To)0) || (c < 0 && f < (To)0))) || (R == 3 && c < 0) || (R == 4 && c > 0))
        f = prism_step_to(f, c > 0 ? -1 : 1);
    }
    return f;
  }
}
template <class To> struct prism_cvt {
  typedef typename prism_component<To>::type E;
  template <bool Sat, int R, class F> static __device__ __forceinline__ To run(const F &x) {
    static_assert(prism_width<F>::value == prism_width<To>::value, "convert_type: operand and result differ in width");
    To r;
    for (int i = 0; i < prism_width<To>::value; i++) prism_el(r, i) = prism_conv<E, Sat, R>(prism_get(x, i));
    return r;
  }
  template <class F> static __device__ __forceinline__ To def(const F &x) { return run<false, 0>(x); }
  template <class F> static __device__ __forceinline__ To rte(const F &x) { return run<false, 1>(x); }
  template <class F> static __device__ __forceinline__ To rtz(const F &x) { return run<false, 2>(x); }
  template <class F> static __device__ __forceinline__ To rtp(const F &x) { return run<false, 3>(x); }
  template <class F> static __device__ __forceinline__ To rtn(const F &x) { return run<false, 4>(x); }
  template <class F> static __device__ __forceinline__ To sat(const F &x) { return run<true, 0>(x); }
  template <class F> static __device__ __forceinline__ To sat_rte(const F &x) { return run<true, 1>(x); }
  template <class F> static __device__ __forceinline__ To sat_rtz(const F &x) { return run<true, 2>(x); }
  template <class F> static __device__ __forceinline__ To sat_rtp(const F &x) { return run<true, 3>(x); }
  template <class F> static __device__ __forceinline__ To sat_rtn(const F &x) { return run<true, 4>(x); }
};
#define as_char(x) prism_as<char>(x)
#define as_char2(x) prism_as<char2>(x)
#define as_char3(x) prism_as<char3>(x)
#define as_char4(x) prism_as<char4>(x)
#define as_char8(x) prism_as<char8>(x)
#define as_char16(x) prism_as<char16>(x)
#define as_uchar(x) prism_as<uchar>(x)
#define as_uchar2(x) prism_as<uchar2>(x)
#define as_uchar3(x) prism_as<uchar3>(x)
#define as_uchar4(x) prism_as<uchar4>(x)
#define as_uchar8(x) prism_as<uchar8>(x)
#define as_uchar16(x) prism_as<uchar16>(x)
#define as_short(x) prism_as<short>(x)
#define as_short2(x) prism_as<short2>(x)
#define as_short3(x) prism_as<short3>(x)
#define as_short4(x) prism_as<short4>(x)
#define as_short8(x) prism_as<short8>(x)
#define as_short16(x) prism_as<short16>(x)
#define as_ushort(x) prism_as<ushort>(x)
#define as_ushort2(x) prism_as<ushort2>(x)
#define as_ushort3(x) prism_as<ushort3>(x)
#define as_ushort4(x) prism_as<ushort4>(x)
#define as_ushort8(x) prism_as<ushort8>(x)
#define as_ushort16(x) prism_as<ushort16>(x)
#define as_int(x) prism_as<int>(x)
#define as_int2(x) prism_as<int2>(x)
#define as_int3(x) prism_as<int3>(x)
#define as_int4(x) prism_as<int4>(x)
#define as_int8(x) prism_as<int8>(x)
#define as_int16(x) prism_as<int16>(x)
#define as_uint(x) prism_as<uint>(x)
#define as_uint2(x) prism_as<uint2>(x)
#define as_uint3(x) prism_as<uint3>(x)
#define as_uint4(x) prism_as<uint4>(x)
#define as_uint8(x) prism_as<uint8>(x)
#define as_uint16(x) prism_as<uint16>(x)
#define as_long(x) prism_as<long>(x)
#define as_long2(x) prism_as<long2>(x)
#define as_long3(x) prism_as<long3>(x)
#define as_long4(x) prism_as<long4>(x)
#define as_long8(x) prism_as<long8>(x)
#define as_long16(x) prism_as<long16>(x)
#define as_ulong(x) prism_as<ulong>(x)
#define as_ulong2(x) prism_as<ulong2>(x)
#define as_ulong3(x) prism_as<ulong3>(x)
#define as_ulong4(x) prism_as<ulong4>(x)
#define as_ulong8(x) prism_as<ulong8>(x)
#define as_ulong16(x) prism_as<ulong16>(x)
#define as_float(x) prism_as<float>(x)
#define as_float2(x) prism_as<float2>(x)
#define as_float3(x) prism_as<float3>(x)
#define as_float4(x) prism_as<float4>(x)
#define as_float8(x) prism_as<float8>(x)
#define as_float16(x) prism_as<float16>(x)
#define as_double(x) prism_as<double>(x)
#define as_double2(x) prism_as<double2>(x)
#define as_double3(x) prism_as<double3>(x)
#define as_double4(x) prism_as<double4>(x)
#define as_double8(x) prism_as<double8>(x)
#define as_double16(x) prism_as<double16>(x)
#define convert_char(x) prism_cvt<char>::def(x)
#define convert_char2(x) prism_cvt<char2>::def(x)
#define convert_char3(x) prism_cvt<char3>::def(x)
#define convert_char4(x) prism_cvt<char4>::def(x)
#define convert_char8(x) prism_cvt<char8>::def(x)
#define convert_char16(x) prism_cvt<char16>::def(x)
#define convert_uchar(x) prism_cvt<uchar>::def(x)
#define convert_uchar2(x) prism_cvt<uchar2>::def(x)
#define convert_uchar3(x) prism_cvt<uchar3>::def(x)
#define convert_uchar4(x) prism_cvt<uchar4>::def(x)
#define convert_uchar8(x) prism_cvt<uchar8>::def(x)
#define convert_uchar16(x) prism_cvt<uchar16>::def(x)
#define convert_short(x) prism_cvt<short>::def(x)
#define convert_short2(x) prism_cvt<short2>::def(x)
#define convert_short3(x) prism_cvt<short3>::def(x)
#define convert_short4(x) prism_cvt<short4>::def(x)
#define convert_short8(x) prism_cvt<short8>::def(x)
#define convert_short16(x) prism_cvt<short16>::def(x)
#define convert_ushort(x) prism_cvt<ushort>::def(x)
#define convert_ushort2(x) prism_cvt<ushort2>::def(x)
#define convert_ushort3(x) prism_cvt<ushort3>::def(x)
#define convert_ushort4(x) prism_cvt<ushort4>::def(x)
#define convert_ushort8(x) prism_cvt<ushort8>::def(x)
#define convert_ushort16(x) prism_cvt<ushort16>::def(x)
#define convert_int(x) prism_cvt<int>::def(x)
#define convert_int2(x) prism_cvt<int2>::def(x)
#define convert_int3(x) prism_cvt<int3>::def(x)
#define convert_int4(x) prism_cvt<int4>::def(x)
#define convert_int8(x) prism_cvt<int8>::def(x)
#define convert_int16(x) prism_cvt<int16>::def(x)
#define convert_uint(x) prism_cvt<uint>::def(x)
#define convert_uint2(x) prism_cvt<uint2>::def(x)
#define convert_uint3(x) prism_cvt<uint3>::def(x)
#define convert_uint4(x) prism_cvt<uint4>::def(x)
#define convert_uint8(x) prism_cvt<uint8>::def(x)
#define convert_uint16(x) prism_cvt<uint16>::def(x)
#define convert_long(x) prism_cvt<long>::def(x)
#define convert_long2(x) prism_cvt<long2>::def(x)
#define convert_long3(x) prism_cvt<long3>::def(x)
#define convert_long4(x) prism_cvt<long4>::def(x)
#define convert_long8(x) prism_cvt<long8>::def(x)
#define convert_long16(x) prism_cvt<long16>::def(x)
#define convert_ulong(x) prism_cvt<ulong>::def(x)
#define convert_ulong2(x) prism_cvt<ulong2>::def(x)
#define convert_ulong3(x) prism_cvt<ulong3>::def(x)
#define convert_ulong4(x) prism_cvt<ulong4>::def(x)
#define convert_ulong8(x) prism_cvt<ulong8>::def(x)
#define convert_ulong16(x) prism_cvt<ulong16>::def(x)
#define convert_float(x) prism_cvt<float>::def(x)
#define convert_float2(x) prism_cvt<float2>::def(x)
#define convert_float3(x) prism_cvt<float3>::def(x)
#define convert_float4(x) prism_cvt<float4>::def(x)
#define convert_float8(x) prism_cvt<float8>::def(x)
#define convert_float16(x) prism_cvt<float16>::def(x)
#define convert_double(x) prism_cvt<double>::def(x)
#define convert_double2(x) prism_cvt<double2>::def(x)
#define convert_double3(x) prism_cvt<double3>::def(x)
#define convert_double4(x) prism_cvt<double4>::def(x)
#define convert_double8(x) prism_cvt<double8>::def(x)
#define convert_double16(x) prism_cvt<double16>::def(x)

// vloadN and vstoreN need only component alignment in OpenCL; a CUDA vector access needs
// the vector's. One access where the address allows it (always, for buffers indexed from
// their start: cuMemAlloc aligns to 256 bytes), component accesses otherwise.
#define PRISM_VLOAD(W)                                                                              \
  template <class E>                                                                                \
  static __device__ __forceinline__ typename prism_vec<E, W>::type vload##W(size_t i, const E *p) { \
    typedef typename prism_vec<E, W>::type V;                                                       \
    const E *q = p + W * i;                                                                         \
    if (W != 3 && (((unsigned long long)q) & (sizeof(V) - 1)) == 0) return *(const V *)q;            \
    V r;                                                                                            \
    for (int k = 0; k < W; k++) prism_el(r, k) = q[k];                                              \
    return r;                                                                                       \
  }                                                                                                 \
  template <class E>                                                                                \
  static __device__ __forceinline__ void vstore##W(const typename prism_vec<E, W>::type &v, size_t i, E *p) { \
    typedef typename prism_vec<E, W>::type V;                                                       \
    E *q = p + W * i;                                                                               \
    if (W != 3 && (((unsigned long long)q) & (sizeof(V) - 1)) == 0) {                               \
      *(V *)q = v;                                                                                  \
      return;                                                                                       \
    }                                                                                               \
    for (int k = 0; k < W; k++) q[k] = prism_el(v, k);                                              \
  }
PRISM_VLOAD(2)
PRISM_VLOAD(3)
PRISM_VLOAD(4)
PRISM_VLOAD(8)
PRISM_VLOAD(16)
#undef PRISM_VLOAD
static __device__ __forceinline__ float prism_dot(float a, float b) { return a * b; }
static __device__ __forceinline__ double prism_dot(double a, double b) { return a * b; }

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

// ---------------------------------------------------------------------------------------
// Built-in functions beyond the scalar float and double ones above: the integer functions
// on every integer type, relational functions, select and bitselect, the vector forms of
// all of them (component-wise, with OpenCL's vector-and-scalar mixes), geometric functions
// and half.
// ---------------------------------------------------------------------------------------

// The unsigned integer type of a size (abs and abs_diff give it).
template <int Size> struct prism_usize {};
template <> struct prism_usize<1> { typedef uchar type; };
template <> struct prism_usize<2> { typedef ushort type; };
template <> struct prism_usize<4> { typedef uint type; };
template <> struct prism_usize<8> { typedef ulong type; };
#define PRISM_IFINT(T, R) typename prism_enable_if<prism_int<T>::value && !prism_same<T, bool>::value, R>::type
#define PRISM_UNS(T) typename prism_usize<sizeof(T)>::type

// Integer functions on every integer scalar type. The int and uint overloads above stay
// (a non-template exact match wins); these give char, short and long theirs, with OpenCL's
// result types (abs(char) is a uchar).
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, PRISM_UNS(T)) prism_abs(T x) {
  typedef PRISM_UNS(T) U;
  return prism_int<T>::is_signed && x < (T)0 ? (U)((U)0 - (U)x) : (U)x;
}
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, PRISM_UNS(T)) prism_abs_diff(T x, T y) {
  typedef PRISM_UNS(T) U;
  return x > y ? (U)((U)x - (U)y) : (U)((U)y - (U)x);
}
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, T) prism_add_sat(T x, T y) {
  if constexpr (sizeof(T) < 4) {
    const long long r = (long long)x + (long long)y;
    return r < (long long)prism_int_min<T>() ? prism_int_min<T>() : r > (long long)prism_int_max<T>() ? prism_int_max<T>() : (T)r;
  } else if constexpr (!prism_int<T>::is_signed) {
    const T r = (T)(x + y);
    return r < x ? prism_int_max<T>() : r;
  } else {
    typedef PRISM_UNS(T) U;
    const T r = (T)((U)x + (U)y);
    return ((x ^ r) & (y ^ r)) < 0 ? (x < 0 ? prism_int_min<T>() : prism_int_max<T>()) : r;
  }
}
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, T) prism_sub_sat(T x, T y) {
  if constexpr (sizeof(T) < 4) {
    const long long r = (long long)x - (long long)y;
    return r < (long long)prism_int_min<T>() ? prism_int_min<T>() : r > (long long)prism_int_max<T>() ? prism_int_max<T>() : (T)r;
  } else if constexpr (!prism_int<T>::is_signed) {
    return x < y ? (T)0 : (T)(x - y);
  } else {
    typedef PRISM_UNS(T) U;
    const T r = (T)((U)x - (U)y);
    return ((x ^ y) & (x ^ r)) < 0 ? (x < 0 ? prism_int_min<T>() : prism_int_max<T>()) : r;
  }
}
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, T) prism_hadd(T x, T y) { return (T)((x >> 1) + (y >> 1) + (x & y & 1)); }
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, T) prism_rhadd(T x, T y) { return (T)((x >> 1) + (y >> 1) + ((x | y) & 1)); }
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, T) prism_rotate(T v, T i) {
  typedef PRISM_UNS(T) U;
  const unsigned int bits = 8 * sizeof(T), n = (unsigned int)((U)i & (U)(bits - 1));
  const U u = (U)v;
  return (T)(U)((u << n) | (u >> ((bits - n) & (bits - 1))));
}
static __device__ __forceinline__ ulong prism_umulhi64(ulong a, ulong b) {
  const ulong a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const ulong p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const ulong mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, T) prism_mul_hi(T a, T b) {
  if constexpr (sizeof(T) < 8) {
    if constexpr (prism_int<T>::is_signed) return (T)(((long long)a * (long long)b) >> (8 * sizeof(T)));
    else return (T)(((unsigned long long)a * (unsigned long long)b) >> (8 * sizeof(T)));
  } else {
    ulong hi = prism_umulhi64((ulong)a, (ulong)b);
    if (prism_int<T>::is_signed) hi -= (a < 0 ? (ulong)b : 0ul) + (b < 0 ? (ulong)a : 0ul);
    return (T)hi;
  }
}
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, T) prism_mad_hi(T a, T b, T c) { return (T)(prism_mul_hi(a, b) + c); }
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, T) prism_popcount(T x) {
  typedef PRISM_UNS(T) U;
  if constexpr (sizeof(T) < 8) return (T)__popc((uint)(U)x);
  else return (T)(__popc((uint)(ulong)x) + __popc((uint)((ulong)x >> 32)));
}
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, T) prism_clz(T x) {
  typedef PRISM_UNS(T) U;
  if constexpr (sizeof(T) < 8) {
    return (T)(__clz((int)(uint)(U)x) - (int)(32 - 8 * sizeof(T)));
  } else {
    const uint hi = (uint)((ulong)x >> 32);
    return (T)(hi ? __clz((int)hi) : 32 + __clz((int)(uint)(ulong)x));
  }
}
// any and all of a scalar: its most significant bit.
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, int) prism_any(T x) { return (typename prism_sint<sizeof(T)>::type)x < 0; }
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, int) prism_all(T x) { return (typename prism_sint<sizeof(T)>::type)x < 0; }
template <class T> static __device__ __forceinline__ PRISM_IFINT(T, T) prism_bitselect(T a, T b, T c) { return (T)((a & ~c) | (b & c)); }

// Common, math and relational functions on float and double scalars that part 2 lacks so
// far. Scalar relational functions give 1 or 0 (an int).
#define PRISM_FLOAT_FNS(T, U, C)                                                                     \
  static __device__ __forceinline__ T prism_degrees(T x) { return x * (T)57.295779513082320876798; } \
  static __device__ __forceinline__ T prism_radians(T x) { return x * (T)0.017453292519943295769237; } \
  static __device__ __forceinline__ T prism_smoothstep(T e0, T e1, T x) {                             \
    const T t = prism_clamp((x - e0) / (e1 - e0), (T)0, (T)1);                                       \
    return t * t * ((T)3 - (T)2 * t);                                                               \
  }                                                                                                 \
  static __device__ __forceinline__ T prism_maxmag(T x, T y) {                                       \
    const T ax = prism_fabs(x), ay = prism_fabs(y);                                                 \
    return ax > ay ? x : ay > ax ? y : prism_fmax(x, y);                                            \
  }                                                                                                 \
  static __device__ __forceinline__ T prism_minmag(T x, T y) {                                       \
    const T ax = prism_fabs(x), ay = prism_fabs(y);                                                 \
    return ax < ay ? x : ay < ax ? y : prism_fmin(x, y);                                            \
  }                                                                                                 \
  static __device__ __forceinline__ int prism_isnormal(T x) { const T a = prism_fabs(x); return a >= (T)C##_MIN && a <= (T)C##_MAX; } \
  static __device__ __forceinline__ int prism_signbit(T x) { return prism_as<U>(x) >> (8 * sizeof(U) - 1) != 0; } \
  static __device__ __forceinline__ int prism_isequal(T x, T y) { return x == y; }                    \
  static __device__ __forceinline__ int prism_isnotequal(T x, T y) { return x != y; }                 \
  static __device__ __forceinline__ int prism_isgreater(T x, T y) { return x > y; }                   \
  static __device__ __forceinline__ int prism_isgreaterequal(T x, T y) { return x >= y; }             \
  static __device__ __forceinline__ int prism_isless(T x, T y) { return x < y; }                      \
  static __device__ __forceinline__ int prism_islessequal(T x, T y) { return x <= y; }                \
  static __device__ __forceinline__ int prism_islessgreater(T x, T y) { return x < y || x > y; }      \
  static __device__ __forceinline__ int prism_isordered(T x, T y) { return x == x && y == y; }        \
  static __device__ __forceinline__ int prism_isunordered(T x, T y) { return x != x || y != y; }      \
  static __device__ __forceinline__ T prism_bitselect(T a, T b, T c) {                                \
    return prism_as<T>((U)((prism_as<U>(a) & ~prism_as<U>(c)) | (prism_as<U>(b) & prism_as<U>(c)))); \
  }                                                                                                 \
  static __device__ __forceinline__ T prism_length(T x) { return prism_fabs(x); }                    \
  static __device__ __forceinline__ T prism_fast_length(T x) { return prism_fabs(x); }               \
  static __device__ __forceinline__ T prism_distance(T x, T y) { return prism_fabs(x - y); }         \
  static __device__ __forceinline__ T prism_fast_distance(T x, T y) { return prism_fabs(x - y); }    \
  static __device__ __forceinline__ T prism_normalize(T x) { return x == (T)0 || x != x ? x : prism_copysign((T)1, x); } \
  static __device__ __forceinline__ T prism_fast_normalize(T x) { return prism_normalize(x); }
PRISM_FLOAT_FNS(float, uint, FLT)
PRISM_FLOAT_FNS(double, ulong, DBL)
#undef PRISM_FLOAT_FNS

// Vector forms. prism_bin3<A, B, C>::type is the vector type of a three-operand call: the
// vector operands of one type, the others scalars (clamp(float4, float, float),
// mix(float4, float4, float), smoothstep(float, float, float4)).
template <class T> struct prism_void { typedef void type; };
template <class A, class B, class = void> struct prism_join : prism_bin<A, B> {};
template <class A, class B>
struct prism_join<A, B, typename prism_enable_if<prism_scalar<A>::value && prism_scalar<B>::value>::type> { typedef A type; };
template <class A, class B, class C, class = void> struct prism_bin3 {};
template <class A, class B, class C>
struct prism_bin3<A, B, C, typename prism_void<typename prism_bin<typename prism_join<typename prism_value<A>::type, typename prism_value<B>::type>::type, C>::type>::type> {
  typedef typename prism_bin<typename prism_join<typename prism_value<A>::type, typename prism_value<B>::type>::type, C>::type type;
};
// Result types: the operands' vector type, the unsigned one of its component's size
// (abs, abs_diff), or the comparison mask (relational functions: -1 and 0).
template <class V> struct prism_uvec {
  typedef typename prism_vec<typename prism_usize<sizeof(typename prism_vt<V>::E)>::type, prism_vt<V>::N>::type type;
};
#define PRISM_VFN1(name, R)                                                                          \
  template <class A>                                                                                \
  static __device__ __forceinline__ typename R<typename prism_bin<A, A>::type>::type prism_##name(const A &a) { \
    typedef typename prism_bin<A, A>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    typename R<V>::type r;                                                                          \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_##name((E)prism_get(a, i));     \
    return r;                                                                                       \
  }
#define PRISM_VFN2(name, R)                                                                          \
  template <class A, class B>                                                                       \
  static __device__ __forceinline__ typename R<typename prism_bin<A, B>::type>::type prism_##name(const A &a, const B &b) { \
    typedef typename prism_bin<A, B>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    typename R<V>::type r;                                                                          \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_##name((E)prism_get(a, i), (E)prism_get(b, i)); \
    return r;                                                                                       \
  }
#define PRISM_VFN3(name)                                                                             \
  template <class A, class B, class C>                                                              \
  static __device__ __forceinline__ typename prism_bin3<A, B, C>::type prism_##name(const A &a, const B &b, const C &c) { \
    typedef typename prism_bin3<A, B, C>::type V;                                                   \
    typedef typename prism_vt<V>::E E;                                                              \
    V r;                                                                                            \
    for (int i = 0; i < prism_vt<V>::N; i++)                                                        \
      prism_el(r, i) = prism_##name((E)prism_get(a, i), (E)prism_get(b, i), (E)prism_get(c, i));     \
    return r;                                                                                       \
  }
#define PRISM_VREL1(name)                                                                            \
  template <class A>                                                                                \
  static __device__ __forceinline__ typename prism_mask<typename prism_bin<A, A>::type>::type prism_##name(const A &a) { \
    typedef typename prism_bin<A, A>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    typename prism_mask<V>::type r;                                                                 \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_##name((E)prism_get(a, i)) ? -1 : 0; \
    return r;                                                                                       \
  }
#define PRISM_VREL2(name)                                                                            \
  template <class A, class B>                                                                       \
  static __device__ __forceinline__ typename prism_mask<typename prism_bin<A, B>::type>::type prism_##name(const A &a, const B &b) { \
    typedef typename prism_bin<A, B>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    typename prism_mask<V>::type r;                                                                 \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_##name((E)prism_get(a, i), (E)prism_get(b, i)) ? -1 : 0; \
    return r;                                                                                       \
  }
PRISM_VFN1(sqrt, prism_self) PRISM_VFN1(rsqrt, prism_self) PRISM_VFN1(cbrt, prism_self)
PRISM_VFN1(exp, prism_self) PRISM_VFN1(exp2, prism_self) PRISM_VFN1(exp10, prism_self) PRISM_VFN1(expm1, prism_self)
PRISM_VFN1(log, prism_self) PRISM_VFN1(log2, prism_self) PRISM_VFN1(log10, prism_self) PRISM_VFN1(log1p, prism_self)
PRISM_VFN1(sin, prism_self) PRISM_VFN1(cos, prism_self) PRISM_VFN1(tan, prism_self)
PRISM_VFN1(asin, prism_self) PRISM_VFN1(acos, prism_self) PRISM_VFN1(atan, prism_self)
PRISM_VFN1(sinh, prism_self) PRISM_VFN1(cosh, prism_self) PRISM_VFN1(tanh, prism_self)
PRISM_VFN1(fabs, prism_self) PRISM_VFN1(floor, prism_self) PRISM_VFN1(ceil, prism_self)
PRISM_VFN1(round, prism_self) PRISM_VFN1(trunc, prism_self) PRISM_VFN1(rint, prism_self)
PRISM_VFN1(erf, prism_self) PRISM_VFN1(erfc, prism_self) PRISM_VFN1(tgamma, prism_self) PRISM_VFN1(lgamma, prism_self)
PRISM_VFN1(sign, prism_self) PRISM_VFN1(degrees, prism_self) PRISM_VFN1(radians, prism_self)
PRISM_VFN1(native_exp, prism_self) PRISM_VFN1(native_exp2, prism_self) PRISM_VFN1(native_exp10, prism_self)
PRISM_VFN1(native_log, prism_self) PRISM_VFN1(native_log2, prism_self) PRISM_VFN1(native_log10, prism_self)
PRISM_VFN1(native_sqrt, prism_self) PRISM_VFN1(native_rsqrt, prism_self) PRISM_VFN1(native_recip, prism_self)
PRISM_VFN1(native_sin, prism_self) PRISM_VFN1(native_cos, prism_self) PRISM_VFN1(native_tan, prism_self)
PRISM_VFN1(abs, prism_uvec) PRISM_VFN1(popcount, prism_self) PRISM_VFN1(clz, prism_self)
PRISM_VFN2(pow, prism_self) PRISM_VFN2(powr, prism_self) PRISM_VFN2(fmin, prism_self) PRISM_VFN2(fmax, prism_self)
PRISM_VFN2(fmod, prism_self) PRISM_VFN2(atan2, prism_self) PRISM_VFN2(hypot, prism_self) PRISM_VFN2(copysign, prism_self)
PRISM_VFN2(fdim, prism_self) PRISM_VFN2(step, prism_self) PRISM_VFN2(maxmag, prism_self) PRISM_VFN2(minmag, prism_self)
PRISM_VFN2(native_divide, prism_self) PRISM_VFN2(native_powr, prism_self)
PRISM_VFN2(min, prism_self) PRISM_VFN2(max, prism_self) PRISM_VFN2(abs_diff, prism_uvec) PRISM_VFN2(add_sat, prism_self)
PRISM_VFN2(sub_sat, prism_self) PRISM_VFN2(hadd, prism_self) PRISM_VFN2(rhadd, prism_self) PRISM_VFN2(rotate, prism_self)
PRISM_VFN2(mul_hi, prism_self) PRISM_VFN2(mul24, prism_self)
PRISM_VFN3(fma) PRISM_VFN3(mad) PRISM_VFN3(mix) PRISM_VFN3(clamp) PRISM_VFN3(smoothstep) PRISM_VFN3(mad24)
PRISM_VFN3(mad_hi) PRISM_VFN3(bitselect)
PRISM_VREL1(isnan) PRISM_VREL1(isinf) PRISM_VREL1(isfinite) PRISM_VREL1(isnormal) PRISM_VREL1(signbit)
PRISM_VREL2(isequal) PRISM_VREL2(isnotequal) PRISM_VREL2(isgreater) PRISM_VREL2(isgreaterequal) PRISM_VREL2(isless)
PRISM_VREL2(islessequal) PRISM_VREL2(islessgreater) PRISM_VREL2(isordered) PRISM_VREL2(isunordered)
#undef PRISM_VFN1
#undef PRISM_VFN2
#undef PRISM_VFN3
#undef PRISM_VREL1
#undef PRISM_VREL2

// any and all of a vector: whether the most significant bit of any (every) component is
// set, 1 or 0.
template <class A>
static __device__ __forceinline__ typename prism_enable_if<(prism_vt<typename prism_value<A>::type>::N > 0), int>::type prism_any(const A &a) {
  typedef typename prism_value<A>::type V;
  for (int i = 0; i < prism_vt<V>::N; i++)
    if (prism_any(prism_get(a, i))) return 1;
  return 0;
}
template <class A>
static __device__ __forceinline__ typename prism_enable_if<(prism_vt<typename prism_value<A>::type>::N > 0), int>::type prism_all(const A &a) {
  typedef typename prism_value<A>::type V;
  for (int i = 0; i < prism_vt<V>::N; i++)
    if (!prism_all(prism_get(a, i))) return 0;
  return 1;
}

// select(a, b, c): of scalars c != 0 ? b : a; of vectors, component-wise, b's component
// where the most significant bit of c's is set, a's otherwise (c: integers of the
// component's size).
template <class A, class B, class C>
static __device__ __forceinline__ typename prism_enable_if<prism_scalar<A>::value && prism_scalar<B>::value && prism_int<C>::value, A>::type
prism_select(A a, B b, C c) {
  return c ? (A)b : a;
}
template <class A, class B, class C>
static __device__ __forceinline__ typename prism_bin<A, B>::type prism_select(const A &a, const B &b, const C &c) {
  typedef typename prism_bin<A, B>::type V;
  typedef typename prism_vt<V>::E E;
  typedef typename prism_component<typename prism_value<C>::type>::type CE;
  static_assert(prism_width<C>::value == prism_vt<V>::N && prism_int<CE>::value, "select: the condition is not an integer vector of the operands' width");
  V r;
  for (int i = 0; i < prism_vt<V>::N; i++)
    prism_el(r, i) = (typename prism_sint<sizeof(CE)>::type)prism_get(c, i) < 0 ? (E)prism_get(b, i) : (E)prism_get(a, i);
  return r;
}

// Geometric functions, on float and double vectors of any width (OpenCL has them for 2, 3
// and 4 components; cross for 3 and 4). length scales its operand where the sum of squares
// would overflow or lose precision to underflow; fast_* are the plain formulas.
template <class A, class B>
static __device__ __forceinline__ typename prism_vt<typename prism_bin<A, B>::type>::E prism_dot(const A &a, const B &b) {
  typedef typename prism_bin<A, B>::type V;
  typedef typename prism_vt<V>::E E;
  E s = (E)prism_get(a, 0) * (E)prism_get(b, 0);
  for (int i = 1; i < prism_vt<V>::N; i++) s += (E)prism_get(a, i) * (E)prism_get(b, i);
  return s;
}
template <class A>
static __device__ __forceinline__ typename prism_vt<typename prism_bin<A, A>::type>::E prism_length(const A &a) {
  typedef typename prism_bin<A, A>::type V;
  typedef typename prism_vt<V>::E E;
  const V p = a;
  const E s = prism_dot(p, p);
  const E tiny = sizeof(E) == 4 ? (E)(FLT_MIN / FLT_EPSILON) : (E)(DBL_MIN / DBL_EPSILON);
  if (s != s || (s >= tiny && s < (E)PRISM_INFINITY_F)) return prism_sqrt(s);
  E m = 0;
  for (int i = 0; i < prism_vt<V>::N; i++) m = prism_fmax(m, prism_fabs(prism_el(p, i)));
  if (m == (E)0 || m == (E)PRISM_INFINITY_F) return m;
  E t = 0;
  for (int i = 0; i < prism_vt<V>::N; i++) {
    const E q = prism_el(p, i) / m;
    t += q * q;
  }
  return m * prism_sqrt(t);
}
template <class A, class B>
static __device__ __forceinline__ typename prism_vt<typename prism_bin<A, B>::type>::E prism_distance(const A &a, const B &b) {
  typedef typename prism_bin<A, B>::type V;
  return prism_length((V)(a - b));
}
template <class A>
static __device__ __forceinline__ typename prism_bin<A, A>::type prism_normalize(const A &a) {
  typedef typename prism_bin<A, A>::type V;
  typedef typename prism_vt<V>::E E;
  V p = a;
  bool inf = false;
  for (int i = 0; i < prism_vt<V>::N; i++) inf = inf || prism_isinf(prism_el(p, i));
  if (inf) // infinities become 1 with their sign, the other components 0
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(p, i) = prism_copysign(prism_isinf(prism_el(p, i)) ? (E)1 : (E)0, prism_el(p, i));
  const E l = prism_length(p);
  if (l == (E)0) return p;
  for (int i = 0; i < prism_vt<V>::N; i++) prism_el(p, i) = prism_el(p, i) / l;
  return p;
}
template <class A>
static __device__ __forceinline__ typename prism_vt<typename prism_bin<A, A>::type>::E prism_fast_length(const A &a) {
  return prism_sqrt(prism_dot(a, a));
}
template <class A, class B>
static __device__ __forceinline__ typename prism_vt<typename prism_bin<A, B>::type>::E prism_fast_distance(const A &a, const B &b) {
  typedef typename prism_bin<A, B>::type V;
  return prism_fast_length((V)(a - b));
}
template <class A>
static __device__ __forceinline__ typename prism_bin<A, A>::type prism_fast_normalize(const A &a) {
  typedef typename prism_bin<A, A>::type V;
  typedef typename prism_vt<V>::E E;
  const V p = a;
  const E s = prism_dot(p, p);
  return s == (E)0 ? p : p * prism_rsqrt(s);
}
template <class A, class B>
static __device__ __forceinline__ typename prism_bin<A, B>::type prism_cross(const A &a, const B &b) {
  typedef typename prism_bin<A, B>::type V;
  static_assert(prism_vt<V>::N == 3 || prism_vt<V>::N == 4, "cross: the operands are not 3- or 4-component vectors");
  const V p = a, q = b;
  V r = p;
  prism_el(r, 0) = prism_el(p, 1) * prism_el(q, 2) - prism_el(p, 2) * prism_el(q, 1);
  prism_el(r, 1) = prism_el(p, 2) * prism_el(q, 0) - prism_el(p, 0) * prism_el(q, 2);
  prism_el(r, 2) = prism_el(p, 0) * prism_el(q, 1) - prism_el(p, 1) * prism_el(q, 0);
  if (prism_vt<V>::N == 4) prism_el(r, 3) = 0;
  return r;
}
#undef PRISM_IFINT
#undef PRISM_UNS

// half: IEEE binary16 as a storage type of 16 bits (NVRTC has no cuda_fp16.h). Without
// cl_khr_fp16 OpenCL C uses it through pointers only, with vload_half[N], vloada_halfN,
// vstore_half[N][_rte|_rtz|_rtp|_rtn] and vstorea_halfN[_rt*], which convert to and from
// float (and double for the stores); as a value (cl_khr_fp16 kernels), half converts to
// float implicitly, from float and the other scalars by rounding to nearest even, and its
// arithmetic computes in float and rounds back to half (exact for + - * /: float has more
// than 2 * 11 + 2 bits), with OpenCL's result types: half op integer is half, half op float
// is float. The conversions are cvt.f32.f16 and cvt.rn|rz|rp|rm.f16.f32 on the device;
// doubles, and everything in a host program (tests), convert in software.
static __device__ __forceinline__ float prism_h2f(ushort h) {
#ifdef __CUDA_ARCH__
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  const int e = (h >> 10) & 0x1f;
  const uint m = h & 0x3ffu, s = (uint)(h & 0x8000u) << 16;
  if (e == 31) return __uint_as_float(s | 0x7f800000u | (m << 13));
  const float a = e == 0 ? (float)m * 5.9604644775390625e-8f : __uint_as_float((uint)(e + 112) << 23 | (m << 13));
  return s ? -a : a;
#endif
}
// R: 0 and 1 round to nearest even, 2 toward zero, 3 toward +infinity, 4 toward -infinity.
// Magnitudes beyond the largest half (65504) give infinity, or 65504 where the rounding
// is toward zero; NaN stays NaN (quiet, with the high bits of the payload).
template <int R> static __device__ __forceinline__ ushort prism_d2h(double x) {
  const unsigned long long u = (unsigned long long)__double_as_longlong(x);
  const ushort sign = (ushort)((u >> 48) & 0x8000u);
  const int be = (int)((u >> 52) & 0x7ff);
  if (be == 0x7ff) return (ushort)(sign | ((u << 12) ? 0x7e00u | ((u >> 42) & 0x1ffu) : 0x7c00u));
  const bool neg = sign != 0;
  const ushort big = (ushort)(sign | ((R == 0 || R == 1 || (R == 3 && !neg) || (R == 4 && neg)) ? 0x7c00u : 0x7bffu));
  int e = be - 1023;
  if (e > 15) return big;
  if (e < -14) e = -14;
  // m: the magnitude in units of the result's last place (2^(e-10)), exactly.
  const double m = (neg ? -x : x) * __longlong_as_double((long long)(1023 + 10 - e) << 52);
  const long long n = (long long)m;
  const double frac = m - (double)n;
  const bool up = R == 2 ? false : R == 3 ? (frac > 0 && !neg) : R == 4 ? (frac > 0 && neg) : (frac > 0.5 || (frac == 0.5 && (n & 1)));
  const int bits = ((e + 15) << 10) + (int)(n + up) - 1024; // subnormals too: e == -14
  return bits >= 0x7c00 ? big : (ushort)(sign | bits);
}
template <int R> static __device__ __forceinline__ ushort prism_f2h(float f) {
#ifdef __CUDA_ARCH__
  ushort h;
  if (R == 2) asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  else if (R == 3) asm("cvt.rp.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  else if (R == 4) asm("cvt.rm.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  else asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  return prism_d2h<R>((double)f);
#endif
}
template <int R> static __device__ __forceinline__ ushort prism_to_half_bits(float f) { return prism_f2h<R>(f); }
template <int R> static __device__ __forceinline__ ushort prism_to_half_bits(double d) { return prism_d2h<R>(d); }
struct half {
  ushort bits;
  half() = default;
  template <class T, class = typename prism_enable_if<prism_scalar<T>::value>::type>
  __device__ __forceinline__ half(T x) : bits(prism_same<T, double>::value ? prism_d2h<1>((double)x) : prism_f2h<1>((float)x)) {}
  __device__ __forceinline__ operator float() const { return prism_h2f(bits); }
};
static_assert(sizeof(half) == 2, "half: 16 bits");
// The type of half op T: half for integers (and half), T for float and double.
template <class T> struct prism_half_op {};
template <> struct prism_half_op<float> { typedef float type; };
template <> struct prism_half_op<double> { typedef double type; };
template <> struct prism_half_op<half> { typedef half type; };
#define PRISM_HALF_INT(T) template <> struct prism_half_op<T> { typedef half type; };
PRISM_HALF_INT(bool) PRISM_HALF_INT(char) PRISM_HALF_INT(signed char) PRISM_HALF_INT(unsigned char) PRISM_HALF_INT(short)
PRISM_HALF_INT(unsigned short) PRISM_HALF_INT(int) PRISM_HALF_INT(unsigned int) PRISM_HALF_INT(long)
PRISM_HALF_INT(unsigned long) PRISM_HALF_INT(long long) PRISM_HALF_INT(unsigned long long)
#undef PRISM_HALF_INT
template <class T> struct prism_half_calc { typedef float type; };
template <> struct prism_half_calc<double> { typedef double type; };
#define PRISM_HALF_ARITH(op)                                                                        \
  static __device__ __forceinline__ half operator op(half a, half b) { return half((float)a op (float)b); } \
  template <class T>                                                                                \
  static __device__ __forceinline__ typename prism_half_op<T>::type operator op(half a, T b) {      \
    typedef typename prism_half_calc<T>::type C;                                                    \
    return (typename prism_half_op<T>::type)((C)(float)a op (C)b);                                  \
  }                                                                                                 \
  template <class T>                                                                                \
  static __device__ __forceinline__ typename prism_half_op<T>::type operator op(T a, half b) {      \
    typedef typename prism_half_calc<T>::type C;                                                    \
    return (typename prism_half_op<T>::type)((C)a op (C)(float)b);                                  \
  }                                                                                                 \
  template <class T>                                                                                \
  static __device__ __forceinline__ typename prism_enable_if<sizeof(typename prism_half_op<T>::type) != 0, half &>::type \
  operator op##=(half &a, T b) { a = half((float)(a op b)); return a; }
PRISM_HALF_ARITH(+)
PRISM_HALF_ARITH(-)
PRISM_HALF_ARITH(*)
PRISM_HALF_ARITH(/)
#undef PRISM_HALF_ARITH
static __device__ __forceinline__ half operator-(half a) {
  half r;
  r.bits = (ushort)(a.bits ^ 0x8000u);
  return r;
}
static __device__ __forceinline__ half operator+(half a) { return a; }

template <int N, int S>
static __device__ __forceinline__ typename prism_vec<float, N>::type prism_vload_half(size_t i, const half *p) {
  typename prism_vec<float, N>::type r;
  const half *q = p + (size_t)S * i;
  for (int k = 0; k < N; k++) prism_el(r, k) = prism_h2f(q[k].bits);
  return r;
}
template <int N, int S, int R, class A>
static __device__ __forceinline__ void prism_vstore_half(const A &v, size_t i, half *p) {
  static_assert(prism_width<A>::value == N, "vstore_half: the operand's width is not the function's");
  half *q = p + (size_t)S * i;
  for (int k = 0; k < N; k++) q[k].bits = prism_to_half_bits<R>(prism_get(v, k));
}
static __device__ __forceinline__ float vload_half(size_t i, const half *p) { return prism_h2f(p[i].bits); }
#define PRISM_VLOAD_HALF(N, A)                                                                        \
  static __device__ __forceinline__ float##N vload_half##N(size_t i, const half *p) { return prism_vload_half<N, N>(i, p); } \
  static __device__ __forceinline__ float##N vloada_half##N(size_t i, const half *p) { return prism_vload_half<N, A>(i, p); }
PRISM_VLOAD_HALF(2, 2)
PRISM_VLOAD_HALF(3, 4)
PRISM_VLOAD_HALF(4, 4)
PRISM_VLOAD_HALF(8, 8)
PRISM_VLOAD_HALF(16, 16)
#undef PRISM_VLOAD_HALF
#define PRISM_VSTORE_HALF(SUFFIX, R)                                                                  \
  template <class A> static __device__ __forceinline__ void vstore_half##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<1, 1, R>(v, i, p); } \
  template <class A> static __device__ __forceinline__ void vstore_half2##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<2, 2, R>(v, i, p); } \
  template <class A> static __device__ __forceinline__ void vstore_half3##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<3, 3, R>(v, i, p); } \
  template <class A> static __device__ __forceinline__ void vstore_half4##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<4, 4, R>(v, i, p); } \
  template <class A> static __device__ __forceinline__ void vstore_half8##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<8, 8, R>(v, i, p); } \
  template <class A> static __device__ __forceinline__ void vstore_half16##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<16, 16, R>(v, i, p); } \
  template <class A> static __device__ __forceinline__ void vstorea_half2##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<2, 2, R>(v, i, p); } \
  template <class A> static __device__ __forceinline__ void vstorea_half3##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<3, 4, R>(v, i, p); } \
  template <class A> static __device__ __forceinline__ void vstorea_half4##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<4, 4, R>(v, i, p); } \
  template <class A> static __device__ __forceinline__ void vstorea_half8##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<8, 8, R>(v, i, p); } \
  template <class A> static __device__ __forceinline__ void vstorea_half16##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<16, 16, R>(v, i, p); }
PRISM_VSTORE_HALF(, 1)
PRISM_VSTORE_HALF(_rte, 1)
PRISM_VSTORE_HALF(_rtz, 2)
PRISM_VSTORE_HALF(_rtp, 3)
PRISM_VSTORE_HALF(_rtn, 4)
#undef PRISM_VSTORE_HALF

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
#define cross(a, b) prism_cross(a, b)
#define length(x) prism_length(x)
#define distance(a, b) prism_distance(a, b)
#define normalize(x) prism_normalize(x)
#define fast_length(x) prism_fast_length(x)
#define fast_distance(a, b) prism_fast_distance(a, b)
#define fast_normalize(x) prism_fast_normalize(x)
#define degrees(x) prism_degrees(x)
#define radians(x) prism_radians(x)
#define smoothstep(e0, e1, x) prism_smoothstep(e0, e1, x)
#define maxmag(x, y) prism_maxmag(x, y)
#define minmag(x, y) prism_minmag(x, y)
#define abs_diff(a, b) prism_abs_diff(a, b)
#define add_sat(a, b) prism_add_sat(a, b)
#define sub_sat(a, b) prism_sub_sat(a, b)
#define hadd(a, b) prism_hadd(a, b)
#define rhadd(a, b) prism_rhadd(a, b)
#define rotate(v, i) prism_rotate(v, i)
#define mad_hi(a, b, c) prism_mad_hi(a, b, c)
#define isnormal(x) prism_isnormal(x)
#define signbit(x) prism_signbit(x)
#define isequal(x, y) prism_isequal(x, y)
#define isnotequal(x, y) prism_isnotequal(x, y)
#define isgreater(x, y) prism_isgreater(x, y)
#define isgreaterequal(x, y) prism_isgreaterequal(x, y)
#define isless(x, y) prism_isless(x, y)
#define islessequal(x, y) prism_islessequal(x, y)
#define islessgreater(x, y) prism_islessgreater(x, y)
#define isordered(x, y) prism_isordered(x, y)
#define isunordered(x, y) prism_isunordered(x, y)
#define any(x) prism_any(x)
#define all(x) prism_all(x)
#define select(a, b, c) prism_select(a, b, c)
#define bitselect(a, b, c) prism_bitselect(a, b, c)
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
// half_*: at least the precision OpenCL asks of them (8192 ulp), from the full functions.
#define half_cos(x) prism_cos(x)
#define half_divide(x, y) ((x) / (y))
#define half_exp(x) prism_exp(x)
#define half_exp2(x) prism_exp2(x)
#define half_exp10(x) prism_exp10(x)
#define half_log(x) prism_log(x)
#define half_log2(x) prism_log2(x)
#define half_log10(x) prism_log10(x)
#define half_powr(x, y) prism_powr(x, y)
#define half_recip(x) (1.0f / (x))
#define half_rsqrt(x) prism_rsqrt(x)
#define half_sin(x) prism_sin(x)
#define half_sqrt(x) prism_sqrt(x)
#define half_tan(x) prism_tan(x)

#ifndef __CUDACC_RTC__
// Plain functions of a .cl file are device functions, as NVRTC's -default-device makes them.
#pragma clang force_cuda_host_device begin
#endif

#endif // PRISM_PRELUDE_CUH
