// half: IEEE binary16 as a storage type of 16 bits (NVRTC has no cuda_fp16.h). Without
// cl_khr_fp16 OpenCL C uses it through pointers only, with vload_half[N], vloada_halfN,
// vstore_half[N][_rte|_rtz|_rtp|_rtn] and vstorea_halfN[_rt*], which convert to and from
// float (and double for the stores); as a value (cl_khr_fp16 kernels), half converts to
// float implicitly, from float and the other scalars by rounding to nearest even, and its
// arithmetic computes in float and rounds back to half (exact for + - * /: float has more
// than 2 * 11 + 2 bits), with OpenCL's result types: half op integer is half, half op float
// is float. The conversions are cvt.f32.f16 and cvt.rn|rz|rp|rm.f16.f32 on the device;
// doubles, and everything in a host program (tests), convert in software.
__device__ __forceinline__ float prism_h2f(ushort h) {
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
template <int R> __device__ __forceinline__ ushort prism_d2h(double x) {
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
template <int R> __device__ __forceinline__ ushort prism_f2h(float f) {
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
template <int R> __device__ __forceinline__ ushort prism_to_half_bits(float f) { return prism_f2h<R>(f); }
template <int R> __device__ __forceinline__ ushort prism_to_half_bits(double d) { return prism_d2h<R>(d); }
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
  __device__ __forceinline__ half operator op(half a, half b) { return half((float)a op (float)b); } \
  template <class T>                                                                                \
  __device__ __forceinline__ typename prism_half_op<T>::type operator op(half a, T b) {      \
    typedef typename prism_half_calc<T>::type C;                                                    \
    return (typename prism_half_op<T>::type)((C)(float)a op (C)b);                                  \
  }                                                                                                 \
  template <class T>                                                                                \
  __device__ __forceinline__ typename prism_half_op<T>::type operator op(T a, half b) {      \
    typedef typename prism_half_calc<T>::type C;                                                    \
    return (typename prism_half_op<T>::type)((C)a op (C)(float)b);                                  \
  }                                                                                                 \
  template <class T>                                                                                \
  __device__ __forceinline__ typename prism_enable_if<sizeof(typename prism_half_op<T>::type) != 0, half &>::type \
  operator op##=(half &a, T b) { a = half((float)(a op b)); return a; }
PRISM_HALF_ARITH(+)
PRISM_HALF_ARITH(-)
PRISM_HALF_ARITH(*)
PRISM_HALF_ARITH(/)
#undef PRISM_HALF_ARITH
__device__ __forceinline__ half operator-(half a) {
  half r;
  r.bits = (ushort)(a.bits ^ 0x8000u);
  return r;
}
__device__ __forceinline__ half operator+(half a) { return a; }

template <int N, int S>
__device__ __forceinline__ typename prism_vec<float, N>::type prism_vload_half(size_t i, const half *p) {
  typename prism_vec<float, N>::type r;
  const half *q = p + (size_t)S * i;
  for (int k = 0; k < N; k++) prism_el(r, k) = prism_h2f(q[k].bits);
  return r;
}
template <int N, int S, int R, class A>
__device__ __forceinline__ void prism_vstore_half(const A &v, size_t i, half *p) {
  static_assert(prism_width<A>::value == N, "vstore_half: the operand's width is not the function's");
  half *q = p + (size_t)S * i;
  for (int k = 0; k < N; k++) q[k].bits = prism_to_half_bits<R>(prism_get(v, k));
}
__device__ __forceinline__ float vload_half(size_t i, const half *p) { return prism_h2f(p[i].bits); }
#define PRISM_VLOAD_HALF(N, A)                                                                        \
  __device__ __forceinline__ float##N vload_half##N(size_t i, const half *p) { return prism_vload_half<N, N>(i, p); } \
  __device__ __forceinline__ float##N vloada_half##N(size_t i, const half *p) { return prism_vload_half<N, A>(i, p); }
PRISM_VLOAD_HALF(2, 2)
PRISM_VLOAD_HALF(3, 4)
PRISM_VLOAD_HALF(4, 4)
PRISM_VLOAD_HALF(8, 8)
PRISM_VLOAD_HALF(16, 16)
#undef PRISM_VLOAD_HALF
#define PRISM_VSTORE_HALF(SUFFIX, R)                                                                  \
  template <class A> __device__ __forceinline__ void vstore_half##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<1, 1, R>(v, i, p); } \
  template <class A> __device__ __forceinline__ void vstore_half2##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<2, 2, R>(v, i, p); } \
  template <class A> __device__ __forceinline__ void vstore_half3##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<3, 3, R>(v, i, p); } \
  template <class A> __device__ __forceinline__ void vstore_half4##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<4, 4, R>(v, i, p); } \
  template <class A> __device__ __forceinline__ void vstore_half8##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<8, 8, R>(v, i, p); } \
  template <class A> __device__ __forceinline__ void vstore_half16##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<16, 16, R>(v, i, p); } \
  template <class A> __device__ __forceinline__ void vstorea_half2##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<2, 2, R>(v, i, p); } \
  template <class A> __device__ __forceinline__ void vstorea_half3##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<3, 4, R>(v, i, p); } \
  template <class A> __device__ __forceinline__ void vstorea_half4##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<4, 4, R>(v, i, p); } \
  template <class A> __device__ __forceinline__ void vstorea_half8##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<8, 8, R>(v, i, p); } \
  template <class A> __device__ __forceinline__ void vstorea_half16##SUFFIX(const A &v, size_t i, half *p) { prism_vstore_half<16, 16, R>(v, i, p); }
PRISM_VSTORE_HALF(, 1)
PRISM_VSTORE_HALF(_rte, 1)
PRISM_VSTORE_HALF(_rtz, 2)
PRISM_VSTORE_HALF(_rtp, 3)
PRISM_VSTORE_HALF(_rtn, 4)
#undef PRISM_VSTORE_HALF

