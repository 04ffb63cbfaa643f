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
__device__ __forceinline__ typename prism_enable_if<prism_scalar<S>::value, S &>::type prism_el(S &s, int) { return s; }
template <class V>
__device__ __forceinline__ typename prism_vt<V>::E &prism_el(V &v, int i) { return ((typename prism_vt<V>::E *)&v)[i]; }
template <class V>
__device__ __forceinline__ const typename prism_vt<V>::E &prism_el(const V &v, int i) { return ((const typename prism_vt<V>::E *)&v)[i]; }

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
__device__ __forceinline__ typename prism_enable_if<prism_scalar<S>::value, S>::type prism_get(const S &s, int) { return s; }
template <class V>
__device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), typename prism_vt<V>::E>::type prism_get(const V &v, int i) {
  return prism_el(v, i);
}
template <class V, int M, unsigned long long I>
__device__ __forceinline__ typename prism_vt<V>::E prism_get(const prism_swizzle<V, M, I> &s, int k) {
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
  __device__ __forceinline__ typename prism_bin<A, B>::type operator op(const A &a, const B &b) { \
    typedef typename prism_bin<A, B>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    V r;                                                                                            \
    for (int i = 0; i < prism_vt<V>::N; i++) prism_el(r, i) = (E)((E)prism_get(a, i) op (E)prism_get(b, i)); \
    return r;                                                                                       \
  }                                                                                                 \
  template <class V, class B>                                                                       \
  __device__ __forceinline__ typename prism_enable_if<prism_same<typename prism_bin<V, B>::type, V>::value, V &>::type \
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
  __device__ __forceinline__ typename prism_bin<A, B>::type operator op(const A &a, const B &b) { \
    typedef typename prism_bin<A, B>::type V;                                                       \
    typedef typename prism_vt<V>::E E;                                                              \
    V r;                                                                                            \
    for (int i = 0; i < prism_vt<V>::N; i++)                                                        \
      prism_el(r, i) = (E)((E)prism_get(a, i) op ((E)prism_get(b, i) & (E)(8 * sizeof(E) - 1)));     \
    return r;                                                                                       \
  }                                                                                                 \
  template <class V, class B>                                                                       \
  __device__ __forceinline__ typename prism_enable_if<prism_same<typename prism_bin<V, B>::type, V>::value, V &>::type \
  operator op##=(V &a, const B &b) { a = a op b; return a; }
PRISM_VEC_SHIFT(<<)
PRISM_VEC_SHIFT(>>)
#undef PRISM_VEC_SHIFT
#define PRISM_VEC_RELOP(op)                                                                         \
  template <class A, class B>                                                                       \
  __device__ __forceinline__ typename prism_mask<typename prism_bin<A, B>::type>::type operator op(const A &a, const B &b) { \
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
  __device__ __forceinline__ typename prism_mask<typename prism_bin<A, B>::type>::type operator op(const A &a, const B &b) { \
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
  __device__ __forceinline__ typename R<typename prism_bin<A, A>::type>::type operator op(const A &a) { \
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
__device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), V &>::type operator++(V &a) { return a += 1; }
template <class V>
__device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), V &>::type operator--(V &a) { return a -= 1; }
template <class V>
__device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), V>::type operator++(V &a, int) { V t = a; a += 1; return t; }
template <class V>
__device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), V>::type operator--(V &a, int) { V t = a; a -= 1; return t; }

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
__device__ __forceinline__ void prism_fill(V &, int) {}
template <class V, class A, class... Rest>
__device__ __forceinline__ void prism_fill(V &r, int k, const A &a, const Rest &...rest) {
  for (int i = 0; i < prism_width<A>::value; i++) prism_el(r, k + i) = (typename prism_vt<V>::E)prism_get(a, i);
  prism_fill(r, k + prism_width<A>::value, rest...);
}
template <class V, class... A>
__device__ __forceinline__ V prism_vmake(const A &...a) {
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
__device__ __forceinline__ typename prism_enable_if<(prism_vt<V>::N > 0), typename prism_swz_lvalue<V, M, I>::type>::type prism_swzn(V &v) {
  return prism_swz_lvalue<V, M, I>::make(v);
}
template <int M, unsigned long long I, class V>
__device__ __forceinline__ typename prism_vec<typename prism_vt<typename prism_value<V>::type>::E, M>::type prism_swzn(const V &v) {
  typedef typename prism_value<V>::type T;
  const T t = v;
  typename prism_vec<typename prism_vt<T>::E, M>::type r;
  for (int k = 0; k < M; k++) prism_el(r, k) = prism_el(t, prism_swizzle<T, M, I>::at(k));
  return r;
}
#define PRISM_SWZ(M)                                                                                \
  template <unsigned long long I, class V>                                                          \
  __device__ __forceinline__ auto prism_swz##M(const V &v)->decltype(prism_swzn<M, I>(v)) { return prism_swzn<M, I>(v); } \
  template <unsigned long long I, class V>                                                          \
  __device__ __forceinline__ auto prism_swz##M##_ref(V &v)->decltype(prism_swzn<M, I>(v)) { return prism_swzn<M, I>(v); } \
  template <unsigned long long I, class V>                                                          \
  __device__ __forceinline__ auto prism_swz##M##_ref(const V &v)->decltype(prism_swzn<M, I>(v)) { return prism_swzn<M, I>(v); }
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
  __device__ __forceinline__ auto prism_##name(const V &v)                                  \
      ->decltype(prism_swzn<prism_vhalf<V>::M, prism_vhalf<V>::pack(first, step)>(v)) {             \
    return prism_swzn<prism_vhalf<V>::M, prism_vhalf<V>::pack(first, step)>(v);                     \
  }                                                                                                 \
  template <class V>                                                                                \
  __device__ __forceinline__ auto prism_##name##_ref(V &v)                                  \
      ->decltype(prism_swzn<prism_vhalf<V>::M, prism_vhalf<V>::pack(first, step)>(v)) {             \
    return prism_swzn<prism_vhalf<V>::M, prism_vhalf<V>::pack(first, step)>(v);                     \
  }                                                                                                 \
  template <class V>                                                                                \
  __device__ __forceinline__ auto prism_##name##_ref(const V &v)                            \
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
__device__ __forceinline__ To prism_as(From x) {
  static_assert(sizeof(To) == sizeof(From), "as_type: operand and result differ in size");
  union {
    From from;
    To to;
  } u;
  u.from = x;
  return u.to;
}

