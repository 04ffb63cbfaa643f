// Conversions: convert_<type>(x) is prism_cvt<type>::def(x); the translation writes the
// saturating and rounding forms, convert_int4_sat_rte(x), as prism_cvt<int4>::sat_rte(x).
// Conversions to integers round toward zero by default, to floating point to nearest even;
// saturation (integers only) clamps to the type's range, and gives 0 for a NaN.
template <class T, class = void> struct prism_component { typedef T type; };
template <class T> struct prism_component<T, typename prism_enable_if<(prism_vt<T>::N > 0)>::type> { typedef typename prism_vt<T>::E type; };
template <class T> __device__ __forceinline__ T prism_int_max() {
  return prism_int<T>::is_signed ? (T)((1ull << (8 * sizeof(T) - 1)) - 1) : (T)~0ull;
}
template <class T> __device__ __forceinline__ T prism_int_min() {
  return prism_int<T>::is_signed ? (T)(-(long long)((1ull << (8 * sizeof(T) - 1)) - 1) - 1) : (T)0;
}
__device__ __forceinline__ float prism_round_mode(float x, int r) { return r == 1 ? rintf(x) : r == 3 ? ceilf(x) : r == 4 ? floorf(x) : x; }
__device__ __forceinline__ double prism_round_mode(double x, int r) { return r == 1 ? rint(x) : r == 3 ? ceil(x) : r == 4 ? floor(x) : x; }
template <class F> __device__ __forceinline__ F prism_round_mode(F x, int) { return x; }
// The sign of f - x, exactly, for f the rounded-to-nearest conversion of x.
template <class T, class F> __device__ __forceinline__ int prism_order(T f, F x) {
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
__device__ __forceinline__ float prism_step_to(float f, int dir) {
  if (f == 0.0f) return dir > 0 ? __uint_as_float(1u) : -__uint_as_float(1u);
  const unsigned int u = __float_as_uint(f);
  return __uint_as_float((f > 0.0f) == (dir > 0) ? u + 1 : u - 1);
}
__device__ __forceinline__ double prism_step_to(double f, int dir) {
  if (f == 0.0) return dir > 0 ? __longlong_as_double(1ll) : -__longlong_as_double(1ll);
  const long long u = __double_as_longlong(f);
  return __longlong_as_double((f > 0.0) == (dir > 0) ? u + 1 : u - 1);
}
// R: 0 the default, 1 rte, 2 rtz, 3 rtp, 4 rtn.
template <class To, bool Sat, int R, class F>
__device__ __forceinline__ To prism_conv(F x) {
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

