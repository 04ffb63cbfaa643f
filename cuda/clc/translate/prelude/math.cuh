// Integer and common functions, overloaded as OpenCL's are.
#define PRISM_MINMAX(T)                                                                             \
  __device__ __forceinline__ T prism_min(T a, T b) { return b < a ? b : a; }                 \
  __device__ __forceinline__ T prism_max(T a, T b) { return a < b ? b : a; }                 \
  __device__ __forceinline__ T prism_clamp(T x, T lo, T hi) { return prism_min(prism_max(x, lo), hi); }
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
__device__ __forceinline__ float prism_min(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ float prism_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ float prism_clamp(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }
__device__ __forceinline__ double prism_min(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ double prism_max(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ double prism_clamp(double x, double lo, double hi) { return fmin(fmax(x, lo), hi); }

__device__ __forceinline__ uint prism_abs(int x) { return x < 0 ? 0u - (uint)x : (uint)x; }
__device__ __forceinline__ uint prism_abs(uint x) { return x; }
__device__ __forceinline__ ulong prism_abs(long x) { return x < 0 ? 0ul - (ulong)x : (ulong)x; }
__device__ __forceinline__ ulong prism_abs(ulong x) { return x; }
__device__ __forceinline__ int prism_mul24(int a, int b) { return __mul24(a, b); }
__device__ __forceinline__ uint prism_mul24(uint a, uint b) { return __umul24(a, b); }
__device__ __forceinline__ int prism_mad24(int a, int b, int c) { return __mul24(a, b) + c; }
__device__ __forceinline__ uint prism_mad24(uint a, uint b, uint c) { return __umul24(a, b) + c; }
__device__ __forceinline__ int prism_mul_hi(int a, int b) { return __mulhi(a, b); }
__device__ __forceinline__ uint prism_mul_hi(uint a, uint b) { return __umulhi(a, b); }
__device__ __forceinline__ int prism_popcount(int x) { return __popc((uint)x); }
__device__ __forceinline__ uint prism_popcount(uint x) { return (uint)__popc(x); }
__device__ __forceinline__ int prism_clz(int x) { return __clz(x); }
__device__ __forceinline__ uint prism_clz(uint x) { return (uint)__clz((int)x); }

// Floating-point functions on float and double. CUDA names the float forms with an f.
#define PRISM_MATH1(name, cuda)                                                                  \
  __device__ __forceinline__ float prism_##name(float x) { return cuda##f(x); }           \
  __device__ __forceinline__ double prism_##name(double x) { return cuda(x); }
#define PRISM_MATH2(name, cuda)                                                                  \
  __device__ __forceinline__ float prism_##name(float x, float y) { return cuda##f(x, y); } \
  __device__ __forceinline__ double prism_##name(double x, double y) { return cuda(x, y); }
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
__device__ __forceinline__ float prism_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double prism_fma(double a, double b, double c) { return fma(a, b, c); }
// mad may fuse or not (OpenCL leaves it open); NVRTC fuses a*b + c by default (--fmad=true).
__device__ __forceinline__ float prism_mad(float a, float b, float c) { return a * b + c; }
__device__ __forceinline__ double prism_mad(double a, double b, double c) { return a * b + c; }
__device__ __forceinline__ float prism_mix(float x, float y, float a) { return x + (y - x) * a; }
__device__ __forceinline__ double prism_mix(double x, double y, double a) { return x + (y - x) * a; }
__device__ __forceinline__ float prism_sign(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == x ? 0.0f * x : 0.0f; }
__device__ __forceinline__ double prism_sign(double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x == x ? 0.0 * x : 0.0; }
__device__ __forceinline__ float prism_step(float edge, float x) { return x < edge ? 0.0f : 1.0f; }
__device__ __forceinline__ double prism_step(double edge, double x) { return x < edge ? 0.0 : 1.0; }
__device__ __forceinline__ int prism_isnan(float x) { return x != x; }
__device__ __forceinline__ int prism_isnan(double x) { return x != x; }
__device__ __forceinline__ int prism_isinf(float x) { return fabsf(x) == PRISM_INFINITY_F; }
__device__ __forceinline__ int prism_isinf(double x) { return fabs(x) == (double)PRISM_INFINITY_F; }
__device__ __forceinline__ int prism_isfinite(float x) { return fabsf(x) < PRISM_INFINITY_F; }
__device__ __forceinline__ int prism_isfinite(double x) { return fabs(x) < (double)PRISM_INFINITY_F; }

// native_*: CUDA's fast intrinsics where it has them (float only, as in OpenCL 1.2).
__device__ __forceinline__ float prism_native_exp(float x) { return __expf(x); }
__device__ __forceinline__ float prism_native_exp2(float x) { return exp2f(x); }
__device__ __forceinline__ float prism_native_exp10(float x) { return __exp10f(x); }
__device__ __forceinline__ float prism_native_log(float x) { return __logf(x); }
__device__ __forceinline__ float prism_native_log2(float x) { return __log2f(x); }
__device__ __forceinline__ float prism_native_log10(float x) { return __log10f(x); }
__device__ __forceinline__ float prism_native_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ float prism_native_rsqrt(float x) { return rsqrtf(x); }
__device__ __forceinline__ float prism_native_recip(float x) { return __fdividef(1.0f, x); }
__device__ __forceinline__ float prism_native_divide(float x, float y) { return __fdividef(x, y); }
__device__ __forceinline__ float prism_native_powr(float x, float y) { return __powf(x, y); }
__device__ __forceinline__ float prism_native_sin(float x) { return __sinf(x); }
__device__ __forceinline__ float prism_native_cos(float x) { return __cosf(x); }
__device__ __forceinline__ float prism_native_tan(float x) { return __tanf(x); }

