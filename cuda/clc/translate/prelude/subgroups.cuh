// Subgroups (OpenCL C 3.0's __opencl_c_subgroups, cl_khr_subgroups) as warps: the
// work-items of a group, numbered x fastest as CUDA numbers a block's threads, fall in
// subgroups of 32, the last one partial where the group's size is not a multiple of 32;
// each subgroup is one warp, and its collectives are warp shuffles and votes over the
// lanes the subgroup has. As in OpenCL, every work-item of a subgroup must reach a
// collective together. Collectives take int, uint, long, ulong, float and double.
#ifdef __CUDACC_RTC__
#define prism_shfl_idx(m, v, l) __shfl_sync(m, v, l)
#define prism_shfl_up(m, v, d) __shfl_up_sync(m, v, d)
#define prism_vote_any(m, p) __any_sync(m, p)
#define prism_vote_all(m, p) __all_sync(m, p)
#define prism_syncwarp(m) __syncwarp(m)
#else
// clang without the CUDA headers: the PTX those headers' intrinsics emit (sm_70 and later),
// written out, since clang's NVVM builtins for them need a PTX version it only assumes
// with a CUDA installation.
__device__ __forceinline__ int prism_shfl_idx(unsigned int m, int v, int l) {
  int r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(v), "r"(l), "r"(m));
  return r;
}
__device__ __forceinline__ int prism_shfl_up(unsigned int m, int v, unsigned int d) {
  int r;
  asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, %3;" : "=r"(r) : "r"(v), "r"(d), "r"(m));
  return r;
}
__device__ __forceinline__ int prism_vote_any(unsigned int m, int p) {
  int r;
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; vote.sync.any.pred q, p, %2; selp.s32 %0, 1, 0, q; }"
               : "=r"(r) : "r"(p), "r"(m));
  return r;
}
__device__ __forceinline__ int prism_vote_all(unsigned int m, int p) {
  int r;
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; vote.sync.all.pred q, p, %2; selp.s32 %0, 1, 0, q; }"
               : "=r"(r) : "r"(p), "r"(m));
  return r;
}
__device__ __forceinline__ void prism_syncwarp(unsigned int m) { asm volatile("bar.warp.sync %0;" : : "r"(m)); }
#endif

// The work-item's index in its group, x fastest, and the group's size.
__device__ __forceinline__ unsigned int prism_sg_linear() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ __forceinline__ unsigned int prism_sg_group_size() { return blockDim.x * blockDim.y * blockDim.z; }

__device__ __forceinline__ unsigned int get_sub_group_id() { return prism_sg_linear() / 32u; }
__device__ __forceinline__ unsigned int get_sub_group_local_id() { return prism_sg_linear() % 32u; }
__device__ __forceinline__ unsigned int get_num_sub_groups() { return (prism_sg_group_size() + 31u) / 32u; }
__device__ __forceinline__ unsigned int get_enqueued_num_sub_groups() { return get_num_sub_groups(); }
__device__ __forceinline__ unsigned int get_max_sub_group_size() {
  return prism_sg_group_size() < 32u ? prism_sg_group_size() : 32u;
}
__device__ __forceinline__ unsigned int get_sub_group_size() {
  unsigned int rest = prism_sg_group_size() - get_sub_group_id() * 32u;
  return rest < 32u ? rest : 32u;
}

// prism_sg_mask is the lanes of the work-item's subgroup.
__device__ __forceinline__ unsigned int prism_sg_mask() {
  unsigned int n = get_sub_group_size();
  return n >= 32u ? 0xffffffffu : (1u << n) - 1u;
}

__device__ __forceinline__ void sub_group_barrier(cl_mem_fence_flags flags) {
  prism_syncwarp(prism_sg_mask());
  if (flags & CLK_GLOBAL_MEM_FENCE) {
    __threadfence();
  } else if (flags & CLK_LOCAL_MEM_FENCE) {
    __threadfence_block();
  }
}

__device__ __forceinline__ int sub_group_all(int predicate) { return prism_vote_all(prism_sg_mask(), predicate != 0) ? 1 : 0; }
__device__ __forceinline__ int sub_group_any(int predicate) { return prism_vote_any(prism_sg_mask(), predicate != 0) ? 1 : 0; }

// Shuffles of any type of at most 8 bytes, 32 bits at a time.
template <class T> __device__ __forceinline__ T prism_sg_shfl(unsigned int m, T v, int lane) {
  int w[2] = {0, 0};
  __builtin_memcpy(w, &v, sizeof(T));
  w[0] = prism_shfl_idx(m, w[0], lane);
  if (sizeof(T) > 4) w[1] = prism_shfl_idx(m, w[1], lane);
  T r;
  __builtin_memcpy(&r, w, sizeof(T));
  return r;
}
template <class T> __device__ __forceinline__ T prism_sg_shfl_up(unsigned int m, T v, unsigned int d) {
  int w[2] = {0, 0};
  __builtin_memcpy(w, &v, sizeof(T));
  w[0] = prism_shfl_up(m, w[0], d);
  if (sizeof(T) > 4) w[1] = prism_shfl_up(m, w[1], d);
  T r;
  __builtin_memcpy(&r, w, sizeof(T));
  return r;
}

template <class T> __device__ __forceinline__ T sub_group_broadcast(T x, unsigned int lane) {
  return prism_sg_shfl(prism_sg_mask(), x, (int)lane);
}

// The operations of the reductions and scans, each with its identity.
template <class T> __device__ __forceinline__ T prism_sg_lowest();
template <class T> __device__ __forceinline__ T prism_sg_highest();
template <> __device__ __forceinline__ int prism_sg_lowest<int>() { return -0x7fffffff - 1; }
template <> __device__ __forceinline__ int prism_sg_highest<int>() { return 0x7fffffff; }
template <> __device__ __forceinline__ unsigned int prism_sg_lowest<unsigned int>() { return 0u; }
template <> __device__ __forceinline__ unsigned int prism_sg_highest<unsigned int>() { return 0xffffffffu; }
template <> __device__ __forceinline__ long prism_sg_lowest<long>() { return -0x7fffffffffffffffL - 1; }
template <> __device__ __forceinline__ long prism_sg_highest<long>() { return 0x7fffffffffffffffL; }
template <> __device__ __forceinline__ unsigned long prism_sg_lowest<unsigned long>() { return 0ul; }
template <> __device__ __forceinline__ unsigned long prism_sg_highest<unsigned long>() { return ~0ul; }
template <> __device__ __forceinline__ float prism_sg_lowest<float>() { return -PRISM_INFINITY_F; }
template <> __device__ __forceinline__ float prism_sg_highest<float>() { return PRISM_INFINITY_F; }
template <> __device__ __forceinline__ double prism_sg_lowest<double>() { return -(double)PRISM_INFINITY_F; }
template <> __device__ __forceinline__ double prism_sg_highest<double>() { return (double)PRISM_INFINITY_F; }
struct prism_sg_add {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
  template <class T> __device__ __forceinline__ static T identity() { return (T)0; }
};
struct prism_sg_min {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return b < a ? b : a; }
  template <class T> __device__ __forceinline__ static T identity() { return prism_sg_highest<T>(); }
};
struct prism_sg_max {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? b : a; }
  template <class T> __device__ __forceinline__ static T identity() { return prism_sg_lowest<T>(); }
};

// prism_sg_scan is the inclusive scan of x over the subgroup's lanes (Hillis-Steele over
// shuffles up, which read only lanes below, all of them in the subgroup).
template <class Op, class T> __device__ __forceinline__ T prism_sg_scan(T x) {
  unsigned int m = prism_sg_mask(), lane = get_sub_group_local_id();
  for (unsigned int d = 1; d < 32u; d <<= 1) {
    T y = prism_sg_shfl_up(m, x, d);
    if (lane >= d) x = Op()(x, y);
  }
  return x;
}
template <class Op, class T> __device__ __forceinline__ T prism_sg_scan_exclusive(T x) {
  T y = prism_sg_shfl_up(prism_sg_mask(), prism_sg_scan<Op>(x), 1u);
  return get_sub_group_local_id() == 0 ? Op::template identity<T>() : y;
}
template <class Op, class T> __device__ __forceinline__ T prism_sg_reduce(T x) {
  return prism_sg_shfl(prism_sg_mask(), prism_sg_scan<Op>(x), (int)get_sub_group_size() - 1);
}

template <class T> __device__ __forceinline__ T sub_group_reduce_add(T x) { return prism_sg_reduce<prism_sg_add>(x); }
template <class T> __device__ __forceinline__ T sub_group_reduce_min(T x) { return prism_sg_reduce<prism_sg_min>(x); }
template <class T> __device__ __forceinline__ T sub_group_reduce_max(T x) { return prism_sg_reduce<prism_sg_max>(x); }
template <class T> __device__ __forceinline__ T sub_group_scan_inclusive_add(T x) { return prism_sg_scan<prism_sg_add>(x); }
template <class T> __device__ __forceinline__ T sub_group_scan_inclusive_min(T x) { return prism_sg_scan<prism_sg_min>(x); }
template <class T> __device__ __forceinline__ T sub_group_scan_inclusive_max(T x) { return prism_sg_scan<prism_sg_max>(x); }
template <class T> __device__ __forceinline__ T sub_group_scan_exclusive_add(T x) { return prism_sg_scan_exclusive<prism_sg_add>(x); }
template <class T> __device__ __forceinline__ T sub_group_scan_exclusive_min(T x) { return prism_sg_scan_exclusive<prism_sg_min>(x); }
template <class T> __device__ __forceinline__ T sub_group_scan_exclusive_max(T x) { return prism_sg_scan_exclusive<prism_sg_max>(x); }

