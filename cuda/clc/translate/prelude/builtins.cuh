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
template <class T> __device__ __forceinline__ PRISM_IFINT(T, PRISM_UNS(T)) prism_abs(T x) {
  typedef PRISM_UNS(T) U;
  return prism_int<T>::is_signed && x < (T)0 ? (U)((U)0 - (U)x) : (U)x;
}
template <class T> __device__ __forceinline__ PRISM_IFINT(T, PRISM_UNS(T)) prism_abs_diff(T x, T y) {
  typedef PRISM_UNS(T) U;
  return x > y ? (U)((U)x - (U)y) : (U)((U)y - (U)x);
}
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_add_sat(T x, T y) {
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
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_sub_sat(T x, T y) {
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
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_hadd(T x, T y) { return (T)((x >> 1) + (y >> 1) + (x & y & 1)); }
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_rhadd(T x, T y) { return (T)((x >> 1) + (y >> 1) + ((x | y) & 1)); }
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_rotate(T v, T i) {
  typedef PRISM_UNS(T) U;
  const unsigned int bits = 8 * sizeof(T), n = (unsigned int)((U)i & (U)(bits - 1));
  const U u = (U)v;
  return (T)(U)((u << n) | (u >> ((bits - n) & (bits - 1))));
}
__device__ __forceinline__ ulong prism_umulhi64(ulong a, ulong b) {
  const ulong a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const ulong p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const ulong mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_mul_hi(T a, T b) {
  if constexpr (sizeof(T) < 8) {
    if constexpr (prism_int<T>::is_signed) return (T)(((long long)a * (long long)b) >> (8 * sizeof(T)));
    else return (T)(((unsigned long long)a * (unsigned long long)b) >> (8 * sizeof(T)));
  } else {
    ulong hi = prism_umulhi64((ulong)a, (ulong)b);
    if (prism_int<T>::is_signed) hi -= (a < 0 ? (ulong)b : 0ul) + (b < 0 ? (ulong)a : 0ul);
    return (T)hi;
  }
}
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_mad_hi(T a, T b, T c) { return (T)(prism_mul_hi(a, b) + c); }
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_popcount(T x) {
  typedef PRISM_UNS(T) U;
  if constexpr (sizeof(T) < 8) return (T)__popc((uint)(U)x);
  else return (T)(__popc((uint)(ulong)x) + __popc((uint)((ulong)x >> 32)));
}
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_clz(T x) {
  typedef PRISM_UNS(T) U;
  if constexpr (sizeof(T) < 8) {
    return (T)(__clz((int)(uint)(U)x) - (int)(32 - 8 * sizeof(T)));
  } else {
    const uint hi = (uint)((ulong)x >> 32);
    return (T)(hi ? __clz((int)hi) : 32 + __clz((int)(uint)(ulong)x));
  }
}
// any and all of a scalar: its most significant bit.
template <class T> __device__ __forceinline__ PRISM_IFINT(T, int) prism_any(T x) { return (typename prism_sint<sizeof(T)>::type)x < 0; }
template <class T> __device__ __forceinline__ PRISM_IFINT(T, int) prism_all(T x) { return (typename prism_sint<sizeof(T)>::type)x < 0; }
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_bitselect(T a, T b, T c) { return (T)((a & ~c) | (b & c)); }

// Common, math and relational functions on float and double scalars that part 2 lacks so
// far. Scalar relational functions give 1 or 0 (an int).
#define PRISM_FLOAT_FNS(T, U, C)                                                                     \
  __device__ __forceinline__ T prism_degrees(T x) { return x * (T)57.295779513082320876798; } \
  __device__ __forceinline__ T prism_radians(T x) { return x * (T)0.017453292519943295769237; } \
  __device__ __forceinline__ T prism_smoothstep(T e0, T e1, T x) {                             \
    const T t = prism_clamp((x - e0) / (e1 - e0), (T)0, (T)1);                                       \
    return t * t * ((T)3 - (T)2 * t);                                                               \
  }                                                                                                 \
  __device__ __forceinline__ T prism_maxmag(T x, T y) {                                       \
    const T ax = prism_fabs(x), ay = prism_fabs(y);                                                 \
    return ax > ay ? x : ay > ax ? y : prism_fmax(x, y);                                            \
  }                                                                                                 \
  __device__ __forceinline__ T prism_minmag(T x, T y) {                                       \
    const T ax = prism_fabs(x), ay = prism_fabs(y);                                                 \
    return ax < ay ? x : ay < ax ? y : prism_fmin(x, y);                                            \
  }                                                                                                 \
  __device__ __forceinline__ int prism_isnormal(T x) { const T a = prism_fabs(x); return a >= (T)C##_MIN && a <= (T)C##_MAX; } \
  __device__ __forceinline__ int prism_signbit(T x) { return prism_as<U>(x) >> (8 * sizeof(U) - 1) != 0; } \
  __device__ __forceinline__ int prism_isequal(T x, T y) { return x == y; }                    \
  __device__ __forceinline__ int prism_isnotequal(T x, T y) { return x != y; }                 \
  __device__ __forceinline__ int prism_isgreater(T x, T y) { return x > y; }                   \
  __device__ __forceinline__ int prism_isgreaterequal(T x, T y) { return x >= y; }             \
  __device__ __forceinline__ int prism_isless(T x, T y) { return x < y; }                      \
  __device__ __forceinline__ int prism_islessequal(T x, T y) { return x <= y; }                \
  __device__ __forceinline__ int prism_islessgreater(T x, T y) { return x < y || x > y; }      \
  __device__ __forceinline__ int prism_isordered(T x, T y) { return x == x && y == y; }        \
  __device__ __forceinline__ int prism_isunordered(T x, T y) { return x != x || y != y; }      \
  __device__ __forceinline__ T prism_bitselect(T a, T b, T c) {                                \
    return prism_as<T>((U)((prism_as<U>(a) & ~prism_as<U>(c)) | (prism_as<U>(b) & prism_as<U>(c)))); \
  }                                                                                                 \
  __device__ __forceinline__ T prism_length(T x) { return prism_fabs(x); }                    \
  __device__ __forceinline__ T prism_fast_length(T x) { return prism_fabs(x); }               \
  __device__ __forceinline__ T prism_distance(T x, T y) { return prism_fabs(x - y); }         \
  __device__ __forceinline__ T prism_fast_distance(T x, T y) { return prism_fabs(x - y); }    \
  __device__ __forceinline__ T prism_normalize(T x) { return x == (T)0 || x != x ? x : prism_copysign((T)1, x); } \
  __device__ __forceinline__ T prism_fast_normalize(T x) { return prism_normalize(x); }
PRISM_FLOAT_FNS(float, uint, FLT)
PRISM_FLOAT_FNS(double, ulong, DBL)
#undef PRISM_FLOAT_FNS

// The rest of OpenCL's math functions (section 6.12.2) on float and double scalars. The
// *pi forms of the inverse functions divide by pi, in double for float; tanpi is sinpi
// over cospi, which gives OpenCL's signs at integers and half-integers; pown and rootn
// are pow (rootn refined by a Newton step); fract, modf, sincos, frexp, lgamma_r and remquo
// write their second result through a pointer of any address space (all are generic in
// CUDA).
#define PRISM_MATH_MORE(T, F, U)                                                                    \
  __device__ __forceinline__ T prism_asinh(T x) { return asinh##F(x); }                     \
  __device__ __forceinline__ T prism_acosh(T x) { return acosh##F(x); }                     \
  __device__ __forceinline__ T prism_atanh(T x) { return atanh##F(x); }                     \
  __device__ __forceinline__ T prism_sinpi(T x) { return sinpi##F(x); }                     \
  __device__ __forceinline__ T prism_cospi(T x) { return cospi##F(x); }                     \
  __device__ __forceinline__ T prism_tanpi(T x) { return sinpi##F(x) / cospi##F(x); }       \
  __device__ __forceinline__ T prism_logb(T x) { return logb##F(x); }                       \
  __device__ __forceinline__ T prism_nextafter(T x, T y) { return nextafter##F(x, y); }     \
  __device__ __forceinline__ T prism_remainder(T x, T y) { return remainder##F(x, y); }     \
  __device__ __forceinline__ T prism_ldexp(T x, int n) { return ldexp##F(x, n); }           \
  __device__ __forceinline__ int prism_ilogb(T x) {                                         \
    return x != x ? FP_ILOGBNAN : x == (T)0 ? FP_ILOGB0 : fabs##F(x) == (T)PRISM_INFINITY_F ? INT_MAX : ilogb##F(x); \
  }                                                                                                 \
  __device__ __forceinline__ T prism_pown(T x, int n) { return (T)pow((double)x, (double)n); } \
  /* rootn: the root of |x|, negated for a negative x (or -0) and odd n; not recursive, so  \
     that it inlines (a recursive call needs a stack NVRTC cannot size: it overflowed). */        \
  __device__ __forceinline__ T prism_rootn(T x, int n) {                                    \
    if (n == 0 || x != x) return (T)PRISM_NAN_F;                                                    \
    const bool neg = x < (T)0 || (x == (T)0 && prism_as<U>(x) >> (8 * sizeof(U) - 1));             \
    if (neg && x != (T)0 && !(n & 1)) return (T)PRISM_NAN_F;                                        \
    const T s = neg && (n & 1) ? (T)-1 : (T)1, a = fabs##F(x);                                      \
    if (a == (T)0) return s * (n > 0 ? (T)0 : (T)PRISM_INFINITY_F);                                 \
    if (a == (T)PRISM_INFINITY_F) return s * (n > 0 ? a : (T)0);                                    \
    double y = pow((double)a, 1.0 / (double)n);                                                     \
    if (y > 0.0 && y < (double)PRISM_INFINITY_F) y -= y * (pow(y, (double)n) / (double)a - 1.0) / (double)n; \
    return s * (T)y;                                                                                \
  }                                                                                                 \
  __device__ __forceinline__ T prism_fract(T x, T *ip) {                                    \
    if (fabs##F(x) == (T)PRISM_INFINITY_F) { *ip = x; return copysign##F((T)0, x); }                \
    const T f = floor##F(x);                                                                        \
    *ip = f;                                                                                        \
    return x != x ? x : x == (T)0 ? x : fmin##F(x - f, prism_as<T>((U)(prism_as<U>((T)1) - 1)));   \
  }                                                                                                 \
  __device__ __forceinline__ T prism_modf(T x, T *ip) { return modf##F(x, ip); }            \
  __device__ __forceinline__ T prism_frexp(T x, int *e) { return frexp##F(x, e); }          \
  __device__ __forceinline__ T prism_sincos(T x, T *c) { *c = cos##F(x); return sin##F(x); } \
  __device__ __forceinline__ T prism_lgamma_r(T x, int *s) {                                \
    const T fl = floor##F(x);                                                                       \
    *s = x > (T)0 || x != x ? 1 : x == (T)0 ? (prism_as<U>(x) >> (8 * sizeof(U) - 1) ? -1 : 1)      \
       : fl == x ? 1 : fmod##F(fl, (T)2) != (T)0 ? -1 : 1;                                          \
    return lgamma##F(x);                                                                            \
  }                                                                                                 \
  /* remquo: the remainder, and the quotient's sign and 7 low bits (C promises only 3). */         \
  __device__ __forceinline__ T prism_remquo(T x, T y, int *q) {                             \
    const T ax = fabs##F(x), ay = fabs##F(y);                                                       \
    if (x != x || y != y || ay == (T)0 || ax == (T)PRISM_INFINITY_F) { *q = 0; return (T)PRISM_NAN_F; } \
    const T a = fmod##F(ax, ay * (T)128), r = remainder##F(a, ay);                                  \
    const int k = (int)rint##F((a - r) / ay) & 127;                                                 \
    *q = (x < (T)0) != (y < (T)0) ? -k : k;                                                         \
    return x < (T)0 ? -r : r;                                                                       \
  }
PRISM_MATH_MORE(float, f, uint)
PRISM_MATH_MORE(double, , ulong)
#undef PRISM_MATH_MORE
// The inverse functions over pi: float through double; double as the quotient.
__device__ __forceinline__ float prism_asinpi(float x) { return (float)(asin((double)x) * M_1_PI); }
__device__ __forceinline__ float prism_acospi(float x) { return (float)(acos((double)x) * M_1_PI); }
__device__ __forceinline__ float prism_atanpi(float x) { return (float)(atan((double)x) * M_1_PI); }
__device__ __forceinline__ float prism_atan2pi(float y, float x) { return (float)(atan2((double)y, (double)x) * M_1_PI); }
__device__ __forceinline__ double prism_asinpi(double x) { return asin(x) * M_1_PI; }
__device__ __forceinline__ double prism_acospi(double x) { return acos(x) * M_1_PI; }
__device__ __forceinline__ double prism_atanpi(double x) { return atan(x) * M_1_PI; }
__device__ __forceinline__ double prism_atan2pi(double y, double x) { return atan2(y, x) * M_1_PI; }
// nan(uint) and nan(ulong): a quiet NaN carrying the operand in its significand.
__device__ __forceinline__ float prism_nan(uint c) { return prism_as<float>(0x7fc00000u | (c & 0x3fffffu)); }
__device__ __forceinline__ double prism_nan(ulong c) { return prism_as<double>(0x7ff8000000000000ul | (c & 0x7fffffffffffful)); }

// mad_sat: a * b + c, saturated to the type's range.
template <class T> __device__ __forceinline__ PRISM_IFINT(T, T) prism_mad_sat(T a, T b, T c) {
  if constexpr (sizeof(T) < 8) {
    const long long r = (long long)a * (long long)b + (long long)c;
    if constexpr (!prism_int<T>::is_signed) {
      const unsigned long long u = (unsigned long long)a * (unsigned long long)b + (unsigned long long)c;
      return u > (unsigned long long)prism_int_max<T>() ? prism_int_max<T>() : (T)u;
    }
    return r < (long long)prism_int_min<T>() ? prism_int_min<T>() : r > (long long)prism_int_max<T>() ? prism_int_max<T>() : (T)r;
  } else {
    // 64 bits: the 128-bit a*b + c as hi:lo words (NVRTC takes 128-bit integers only with
    // -device-int128), from mul_hi and the wrapped low product.
    const ulong lo0 = (ulong)a * (ulong)b, lo = lo0 + (ulong)c;
    ulong hi = (ulong)prism_mul_hi(a, b) + (lo < lo0 ? 1ul : 0ul);
    if constexpr (prism_int<T>::is_signed) {
      hi += c < 0 ? ~0ul : 0ul; // c sign-extended
      // It fits when hi is the sign extension of lo's top bit.
      if (hi != ((long)lo < 0 ? ~0ul : 0ul)) return (long)hi < 0 ? prism_int_min<T>() : prism_int_max<T>();
      return (T)lo;
    } else {
      return hi != 0 ? prism_int_max<T>() : (T)lo;
    }
  }
}

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
// prism_ivec<V>::type: the int vector of V's width (ilogb).
template <class V> struct prism_ivec { typedef typename prism_vec<int, prism_vt<V>::N>::type type; };
#define PRISM_VFN1(name, R)                                                                          \
  template <class A>                                                                                \
  __device__ __forceinline__ typename R<typename prism_bin<A, A>::type>::type prism_##name(const A &a) { \
    typedef typename prism_bin<A, A>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    typename R<V>::type r;                                                                          \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_##name((E)prism_get(a, i));     \
    return r;                                                                                       \
  }
#define PRISM_VFN2(name, R)                                                                          \
  template <class A, class B>                                                                       \
  __device__ __forceinline__ typename R<typename prism_bin<A, B>::type>::type prism_##name(const A &a, const B &b) { \
    typedef typename prism_bin<A, B>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    typename R<V>::type r;                                                                          \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_##name((E)prism_get(a, i), (E)prism_get(b, i)); \
    return r;                                                                                       \
  }
#define PRISM_VFN3(name)                                                                             \
  template <class A, class B, class C>                                                              \
  __device__ __forceinline__ typename prism_bin3<A, B, C>::type prism_##name(const A &a, const B &b, const C &c) { \
    typedef typename prism_bin3<A, B, C>::type V;                                                   \
    typedef typename prism_vt<V>::E E;                                                              \
    V r;                                                                                            \
    for (int i = 0; i < prism_vt<V>::N; i++)                                                        \
      prism_el(r, i) = prism_##name((E)prism_get(a, i), (E)prism_get(b, i), (E)prism_get(c, i));     \
    return r;                                                                                       \
  }
#define PRISM_VREL1(name)                                                                            \
  template <class A>                                                                                \
  __device__ __forceinline__ typename prism_mask<typename prism_bin<A, A>::type>::type prism_##name(const A &a) { \
    typedef typename prism_bin<A, A>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    typename prism_mask<V>::type r;                                                                 \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_##name((E)prism_get(a, i)) ? -1 : 0; \
    return r;                                                                                       \
  }
#define PRISM_VREL2(name)                                                                            \
  template <class A, class B>                                                                       \
  __device__ __forceinline__ typename prism_mask<typename prism_bin<A, B>::type>::type prism_##name(const A &a, const B &b) { \
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
PRISM_VFN1(asinh, prism_self) PRISM_VFN1(acosh, prism_self) PRISM_VFN1(atanh, prism_self) PRISM_VFN1(sinpi, prism_self)
PRISM_VFN1(cospi, prism_self) PRISM_VFN1(tanpi, prism_self) PRISM_VFN1(asinpi, prism_self) PRISM_VFN1(acospi, prism_self)
PRISM_VFN1(atanpi, prism_self) PRISM_VFN1(logb, prism_self) PRISM_VFN1(ilogb, prism_ivec)
PRISM_VFN2(atan2pi, prism_self) PRISM_VFN2(nextafter, prism_self) PRISM_VFN2(remainder, prism_self)
PRISM_VFN3(mad_sat)
#undef PRISM_VFN1
#undef PRISM_VFN2
#undef PRISM_VFN3
#undef PRISM_VREL1
#undef PRISM_VREL2

// any and all of a vector: whether the most significant bit of any (every) component is
// set, 1 or 0.
template <class A>
__device__ __forceinline__ typename prism_enable_if<(prism_vt<typename prism_value<A>::type>::N > 0), int>::type prism_any(const A &a) {
  typedef typename prism_value<A>::type V;
  for (int i = 0; i < prism_vt<V>::N; i++)
    if (prism_any(prism_get(a, i))) return 1;
  return 0;
}
template <class A>
__device__ __forceinline__ typename prism_enable_if<(prism_vt<typename prism_value<A>::type>::N > 0), int>::type prism_all(const A &a) {
  typedef typename prism_value<A>::type V;
  for (int i = 0; i < prism_vt<V>::N; i++)
    if (!prism_all(prism_get(a, i))) return 0;
  return 1;
}

// select(a, b, c): of scalars c != 0 ? b : a; of vectors, component-wise, b's component
// where the most significant bit of c's is set, a's otherwise (c: integers of the
// component's size).
template <class A, class B, class C>
__device__ __forceinline__ typename prism_enable_if<prism_scalar<A>::value && prism_scalar<B>::value && prism_int<C>::value, A>::type
prism_select(A a, B b, C c) {
  return c ? (A)b : a;
}
template <class A, class B, class C>
__device__ __forceinline__ typename prism_bin<A, B>::type prism_select(const A &a, const B &b, const C &c) {
  typedef typename prism_bin<A, B>::type V;
  typedef typename prism_vt<V>::E E;
  typedef typename prism_component<typename prism_value<C>::type>::type CE;
  static_assert(prism_width<C>::value == prism_vt<V>::N && prism_int<CE>::value, "select: the condition is not an integer vector of the operands' width");
  V r;
  for (int i = 0; i < prism_vt<V>::N; i++)
    prism_el(r, i) = (typename prism_sint<sizeof(CE)>::type)prism_get(c, i) < 0 ? (E)prism_get(b, i) : (E)prism_get(a, i);
  return r;
}


// The functions with an int operand of the operand's width or a scalar int (ldexp(float4,
// int4), ldexp(float4, int), pown, rootn).
#define PRISM_VFNI(name)                                                                             \
  template <class A, class I>                                                                       \
  __device__ __forceinline__ typename prism_enable_if<prism_int<typename prism_component<typename prism_value<I>::type>::type>::value, \
                                                             typename prism_bin<A, A>::type>::type  \
  prism_##name(const A &a, const I &n) {                                                            \
    typedef typename prism_bin<A, A>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    V r;                                                                                            \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_##name((E)prism_get(a, i), (int)prism_get(n, i)); \
    return r;                                                                                       \
  }
PRISM_VFNI(ldexp) PRISM_VFNI(pown) PRISM_VFNI(rootn)
#undef PRISM_VFNI
// The functions with a second result through a pointer to the operand's type (sincos, fract,
// modf) or to the int vector of its width (frexp, lgamma_r), and remquo.
#define PRISM_VFNP(name)                                                                             \
  template <class A, class P>                                                                       \
  __device__ __forceinline__ typename prism_enable_if<(prism_vt<P>::N > 0), typename prism_bin<A, A>::type>::type \
  prism_##name(const A &a, P *p) {                                                                  \
    typedef typename prism_bin<A, A>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    static_assert(prism_vt<P>::N == prism_vt<V>::N, #name ": the pointer's width is not the operand's"); \
    V r;                                                                                            \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_##name((E)prism_get(a, i), &prism_el(*p, i)); \
    return r;                                                                                       \
  }
PRISM_VFNP(sincos) PRISM_VFNP(fract) PRISM_VFNP(modf) PRISM_VFNP(frexp) PRISM_VFNP(lgamma_r)
#undef PRISM_VFNP
template <class A, class B, class P>
__device__ __forceinline__ typename prism_enable_if<(prism_vt<P>::N > 0), typename prism_bin<A, B>::type>::type
prism_remquo(const A &a, const B &b, P *q) {
  typedef typename prism_bin<A, B>::type V;
  typedef typename prism_vt<V>::E E;
  static_assert(prism_vt<P>::N == prism_vt<V>::N, "remquo: the pointer's width is not the operands'");
  V r;
  for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = prism_remquo((E)prism_get(a, i), (E)prism_get(b, i), &prism_el(*q, i));
  return r;
}
// nan of a vector of uint (floats) or ulong (doubles).
template <class C> struct prism_nan_of {};
template <> struct prism_nan_of<uint> { typedef float type; };
template <> struct prism_nan_of<ulong> { typedef double type; };
template <class A>
__device__ __forceinline__ typename prism_vec<typename prism_nan_of<typename prism_vt<A>::E>::type, prism_vt<A>::N>::type
prism_nan(const A &c) {
  typename prism_vec<typename prism_nan_of<typename prism_vt<A>::E>::type, prism_vt<A>::N>::type r;
  for (int i = 0; i < prism_vt<A>::N; i++) prism_el(r, i) = prism_nan(prism_el(c, i));
  return r;
}

// upsample(hi, lo): hi in the high half and lo in the low half of the integer twice as
// wide, of hi's signedness.
template <class T> struct prism_wide {};
template <> struct prism_wide<char> { typedef short type; };
template <> struct prism_wide<signed char> { typedef short type; };
template <> struct prism_wide<uchar> { typedef ushort type; };
template <> struct prism_wide<short> { typedef int type; };
template <> struct prism_wide<ushort> { typedef uint type; };
template <> struct prism_wide<int> { typedef long type; };
template <> struct prism_wide<uint> { typedef ulong type; };
template <class T, class U>
__device__ __forceinline__ typename prism_enable_if<prism_scalar<T>::value && prism_same<U, PRISM_UNS(T)>::value, typename prism_wide<T>::type>::type
prism_upsample(T hi, U lo) {
  typedef typename prism_wide<T>::type W;
  return (W)(((typename prism_usize<sizeof(W)>::type)(PRISM_UNS(T))hi << (8 * sizeof(T))) | lo);
}
template <class A, class B>
__device__ __forceinline__ typename prism_vec<typename prism_wide<typename prism_vt<typename prism_value<A>::type>::E>::type, prism_width<A>::value>::type
prism_upsample(const A &hi, const B &lo) {
  static_assert(prism_width<A>::value == prism_width<B>::value, "upsample: the operands differ in width");
  typename prism_vec<typename prism_wide<typename prism_vt<typename prism_value<A>::type>::E>::type, prism_width<A>::value>::type r;
  for (int i = 0; i < prism_width<A>::value; i++) prism_el(r, i) = prism_upsample(prism_get(hi, i), prism_get(lo, i));
  return r;
}

// shuffle(x, mask) and shuffle2(x, y, mask): the result has the mask's width; component i
// is x's (or, past x's width, y's) component at mask's component i modulo the width (of
// both, for shuffle2).
template <class A, class M>
__device__ __forceinline__ typename prism_vec<typename prism_vt<A>::E, prism_vt<M>::N>::type prism_shuffle(const A &x, const M &mask) {
  typename prism_vec<typename prism_vt<A>::E, prism_vt<M>::N>::type r;
  for (int i = 0; i < prism_vt<M>::N; i++) prism_el(r, i) = prism_el(x, (int)(prism_el(mask, i) % prism_vt<A>::N));
  return r;
}
template <class A, class M>
__device__ __forceinline__ typename prism_vec<typename prism_vt<A>::E, prism_vt<M>::N>::type prism_shuffle2(const A &x, const A &y, const M &mask) {
  typename prism_vec<typename prism_vt<A>::E, prism_vt<M>::N>::type r;
  for (int i = 0; i < prism_vt<M>::N; i++) {
    const int k = (int)(prism_el(mask, i) % (2 * prism_vt<A>::N));
    prism_el(r, i) = k < prism_vt<A>::N ? prism_el(x, k) : prism_el(y, k - prism_vt<A>::N);
  }
  return r;
}

// vec_step: the number of components, 4 for 3-component vectors, 1 for scalars. The
// translation writes vec_step(type) as prism_vec_step<type>::value; vec_step(expression) is
// the macro of names.cuh, over the expression's type.
template <class T, class = void> struct prism_vec_step { static const int value = 1; };
template <class T> struct prism_vec_step<T, typename prism_enable_if<(prism_vt<T>::N > 0)>::type> {
  static const int value = prism_vt<T>::N == 3 ? 4 : prism_vt<T>::N;
};
template <class T> struct prism_vec_step<T &> : prism_vec_step<T> {};
template <class T> struct prism_vec_step<const T> : prism_vec_step<T> {};
template <class T> struct prism_vec_step<volatile T> : prism_vec_step<T> {};
template <class V, int M, unsigned long long I> struct prism_vec_step<prism_swizzle<V, M, I> > : prism_vec_step<typename prism_vec<typename prism_vt<V>::E, M>::type> {};

