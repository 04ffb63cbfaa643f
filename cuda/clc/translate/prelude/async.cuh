// Asynchronous copies between global and local memory (section 6.12.10), done at once: the
// work-items of the group share the elements of the copy, and wait_group_events, which
// every work-item of the group reaches with the same events, is a barrier, after which the
// copies are complete and visible to the group. A strided copy reads with the stride from
// global memory into local memory, or writes with it from local memory to global memory:
// which, the destination's address space tells (__isShared). prefetch is a hint, and
// does nothing.
typedef struct prism_event *event_t;
__device__ __forceinline__ size_t prism_group_rank() {
  return get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));
}
__device__ __forceinline__ size_t prism_group_size() { return get_local_size(0) * get_local_size(1) * get_local_size(2); }
template <class T>
__device__ __forceinline__ event_t async_work_group_copy(T *dst, const T *src, size_t n, event_t e) {
  for (size_t i = prism_group_rank(); i < n; i += prism_group_size()) dst[i] = src[i];
  return e;
}
template <class T>
__device__ __forceinline__ event_t async_work_group_strided_copy(T *dst, const T *src, size_t n, size_t stride, event_t e) {
  const bool gather = __isShared((const void *)dst);
  for (size_t i = prism_group_rank(); i < n; i += prism_group_size()) {
    if (gather) dst[i] = src[i * stride];
    else dst[i * stride] = src[i];
  }
  return e;
}
__device__ __forceinline__ void wait_group_events(int, event_t *) { __syncthreads(); }
template <class T> __device__ __forceinline__ void prefetch(const T *, size_t) {}
