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

__device__ __forceinline__ void __threadfence_block() { __nvvm_membar_cta(); }
__device__ __forceinline__ void __threadfence() { __nvvm_membar_gl(); }

// Atomics, as CUDA declares them (int and unsigned int; exchange also on float).
__device__ __forceinline__ int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
__device__ __forceinline__ unsigned int atomicAdd(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_add_gen_i((int *)p, (int)v); }
__device__ __forceinline__ int atomicSub(int *p, int v) { return __nvvm_atom_add_gen_i(p, -v); }
__device__ __forceinline__ unsigned int atomicSub(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_add_gen_i((int *)p, -(int)v); }
__device__ __forceinline__ int atomicExch(int *p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
__device__ __forceinline__ unsigned int atomicExch(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_xchg_gen_i((int *)p, (int)v); }
__device__ __forceinline__ float atomicExch(float *p, float v) {
  int old = __nvvm_atom_xchg_gen_i((int *)p, __builtin_bit_cast(int, v));
  return __builtin_bit_cast(float, old);
}
__device__ __forceinline__ int atomicMin(int *p, int v) { return __nvvm_atom_min_gen_i(p, v); }
__device__ __forceinline__ unsigned int atomicMin(unsigned int *p, unsigned int v) { return __nvvm_atom_min_gen_ui(p, v); }
__device__ __forceinline__ int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }
__device__ __forceinline__ unsigned int atomicMax(unsigned int *p, unsigned int v) { return __nvvm_atom_max_gen_ui(p, v); }
__device__ __forceinline__ int atomicCAS(int *p, int cmp, int v) { return __nvvm_atom_cas_gen_i(p, cmp, v); }
__device__ __forceinline__ unsigned int atomicCAS(unsigned int *p, unsigned int cmp, unsigned int v) { return (unsigned int)__nvvm_atom_cas_gen_i((int *)p, (int)cmp, (int)v); }
__device__ __forceinline__ int atomicAnd(int *p, int v) { return __nvvm_atom_and_gen_i(p, v); }
__device__ __forceinline__ unsigned int atomicAnd(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_and_gen_i((int *)p, (int)v); }
__device__ __forceinline__ int atomicOr(int *p, int v) { return __nvvm_atom_or_gen_i(p, v); }
__device__ __forceinline__ unsigned int atomicOr(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_or_gen_i((int *)p, (int)v); }
__device__ __forceinline__ int atomicXor(int *p, int v) { return __nvvm_atom_xor_gen_i(p, v); }
__device__ __forceinline__ unsigned int atomicXor(unsigned int *p, unsigned int v) { return (unsigned int)__nvvm_atom_xor_gen_i((int *)p, (int)v); }
// The 64-bit ones, on unsigned long long (min and max also on long long).
typedef unsigned long long prism_ull;
__device__ __forceinline__ prism_ull atomicAdd(prism_ull *p, prism_ull v) { return (prism_ull)__nvvm_atom_add_gen_ll((long long *)p, (long long)v); }
__device__ __forceinline__ prism_ull atomicExch(prism_ull *p, prism_ull v) { return (prism_ull)__nvvm_atom_xchg_gen_ll((long long *)p, (long long)v); }
__device__ __forceinline__ prism_ull atomicCAS(prism_ull *p, prism_ull c, prism_ull v) { return (prism_ull)__nvvm_atom_cas_gen_ll((long long *)p, (long long)c, (long long)v); }
__device__ __forceinline__ long long atomicMin(long long *p, long long v) { return __nvvm_atom_min_gen_ll(p, v); }
__device__ __forceinline__ prism_ull atomicMin(prism_ull *p, prism_ull v) { return __nvvm_atom_min_gen_ull(p, v); }
__device__ __forceinline__ long long atomicMax(long long *p, long long v) { return __nvvm_atom_max_gen_ll(p, v); }
__device__ __forceinline__ prism_ull atomicMax(prism_ull *p, prism_ull v) { return __nvvm_atom_max_gen_ull(p, v); }
__device__ __forceinline__ prism_ull atomicAnd(prism_ull *p, prism_ull v) { return (prism_ull)__nvvm_atom_and_gen_ll((long long *)p, (long long)v); }
__device__ __forceinline__ prism_ull atomicOr(prism_ull *p, prism_ull v) { return (prism_ull)__nvvm_atom_or_gen_ll((long long *)p, (long long)v); }
__device__ __forceinline__ prism_ull atomicXor(prism_ull *p, prism_ull v) { return (prism_ull)__nvvm_atom_xor_gen_ll((long long *)p, (long long)v); }
// Whether a generic address is in shared memory.
__device__ __forceinline__ unsigned int __isShared(const void *p) { return __nvvm_isspacep_shared(p); }

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
__device__ __forceinline__ float2 make_float2(float x, float y) { float2 v; v.x = x; v.y = y; return v; }
__device__ __forceinline__ float4 make_float4(float x, float y, float z, float w) { float4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
__device__ __forceinline__ double2 make_double2(double x, double y) { double2 v; v.x = x; v.y = y; return v; }
__device__ __forceinline__ int2 make_int2(int x, int y) { int2 v; v.x = x; v.y = y; return v; }
__device__ __forceinline__ int4 make_int4(int x, int y, int z, int w) { int4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
__device__ __forceinline__ uint2 make_uint2(unsigned int x, unsigned int y) { uint2 v; v.x = x; v.y = y; return v; }
__device__ __forceinline__ uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { uint4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }

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
PRISM_DECLARE_MATH1(asinh) PRISM_DECLARE_MATH1(acosh) PRISM_DECLARE_MATH1(atanh) PRISM_DECLARE_MATH1(sinpi)
PRISM_DECLARE_MATH1(cospi) PRISM_DECLARE_MATH1(logb) PRISM_DECLARE_MATH2(nextafter) PRISM_DECLARE_MATH2(remainder)
extern "C" __device__ float ldexpf(float, int);
extern "C" __device__ double ldexp(double, int);
extern "C" __device__ int ilogbf(float);
extern "C" __device__ int ilogb(double);
extern "C" __device__ float modff(float, float *);
extern "C" __device__ double modf(double, double *);
extern "C" __device__ float frexpf(float, int *);
extern "C" __device__ double frexp(double, int *);
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

__device__ __forceinline__ float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
__device__ __forceinline__ unsigned int __float_as_uint(float x) { return __builtin_bit_cast(unsigned int, x); }
__device__ __forceinline__ float __uint_as_float(unsigned int x) { return __builtin_bit_cast(float, x); }
__device__ __forceinline__ long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
__device__ __forceinline__ double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
#define __align__(n) __attribute__((aligned(n)))
#ifndef __restrict__
#define __restrict__ __restrict
#endif
__device__ __forceinline__ int __float_as_int(float x) { return __builtin_bit_cast(int, x); }

#else // NVRTC

// #pragma OPENCL EXTENSION ... is unknown to NVRTC (warning 161, "unrecognized #pragma").
#pragma nv_diag_suppress 161

// CUDA 13 deprecates long4, ulong4 and double4 (a warning at every use) for their forms of
// stated alignment; OpenCL's are 32-byte aligned, as the _32a forms.
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 13
#define long4 long4_32a
#define ulong4 ulong4_32a
#define double4 double4_32a
#endif

#endif // __CUDACC_RTC__

