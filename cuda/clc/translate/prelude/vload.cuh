// vloadN and vstoreN need only component alignment in OpenCL; a CUDA vector access needs
// the vector's. One access where the address allows it (always, for buffers indexed from
// their start: cuMemAlloc aligns to 256 bytes), component accesses otherwise.
#define PRISM_VLOAD(W)                                                                              \
  template <class E>                                                                                \
  __device__ __forceinline__ typename prism_vec<E, W>::type vload##W(size_t i, const E *p) { \
    typedef typename prism_vec<E, W>::type V;                                                       \
    const E *q = p + W * i;                                                                         \
    if (W != 3 && (((unsigned long long)q) & (sizeof(V) - 1)) == 0) return *(const V *)q;            \
    V r;                                                                                            \
    for (int k = 0; k < W; k++) prism_el(r, k) = q[k];                                              \
    return r;                                                                                       \
  }                                                                                                 \
  template <class E>                                                                                \
  __device__ __forceinline__ void vstore##W(const typename prism_vec<E, W>::type &v, size_t i, E *p) { \
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
__device__ __forceinline__ float prism_dot(float a, float b) { return a * b; }
__device__ __forceinline__ double prism_dot(double a, double b) { return a * b; }

