// Geometric functions, on float and double vectors of any width (OpenCL has them for 2, 3
// and 4 components; cross for 3 and 4). length scales its operand where the sum of squares
// would overflow or lose precision to underflow; fast_* are the plain formulas.
template <class A, class B>
__device__ __forceinline__ typename prism_vt<typename prism_bin<A, B>::type>::E prism_dot(const A &a, const B &b) {
  typedef typename prism_bin<A, B>::type V;
  typedef typename prism_vt<V>::E E;
  E s = (E)prism_get(a, 0) * (E)prism_get(b, 0);
  for (int i = 1; i < prism_vt<V>::N; i++) s += (E)prism_get(a, i) * (E)prism_get(b, i);
  return s;
}
template <class A>
__device__ __forceinline__ typename prism_vt<typename prism_bin<A, A>::type>::E prism_length(const A &a) {
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
__device__ __forceinline__ typename prism_vt<typename prism_bin<A, B>::type>::E prism_distance(const A &a, const B &b) {
  typedef typename prism_bin<A, B>::type V;
  return prism_length((V)(a - b));
}
template <class A>
__device__ __forceinline__ typename prism_bin<A, A>::type prism_normalize(const A &a) {
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
__device__ __forceinline__ typename prism_vt<typename prism_bin<A, A>::type>::E prism_fast_length(const A &a) {
  return prism_sqrt(prism_dot(a, a));
}
template <class A, class B>
__device__ __forceinline__ typename prism_vt<typename prism_bin<A, B>::type>::E prism_fast_distance(const A &a, const B &b) {
  typedef typename prism_bin<A, B>::type V;
  return prism_fast_length((V)(a - b));
}
template <class A>
__device__ __forceinline__ typename prism_bin<A, A>::type prism_fast_normalize(const A &a) {
  typedef typename prism_bin<A, A>::type V;
  typedef typename prism_vt<V>::E E;
  const V p = a;
  const E s = prism_dot(p, p);
  return s == (E)0 ? p : p * prism_rsqrt(s);
}
template <class A, class B>
__device__ __forceinline__ typename prism_bin<A, B>::type prism_cross(const A &a, const B &b) {
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

