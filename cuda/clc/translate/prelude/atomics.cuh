// Atomics on 32-bit integers (OpenCL 1.1 atomic_* and the 1.0 extension names atom_*):
// each returns the old value.
#define PRISM_ATOMICS(T)                                                                               \
  __device__ __forceinline__ T atomic_add(volatile T *p, T v) { return atomicAdd((T *)p, v); } \
  __device__ __forceinline__ T atomic_sub(volatile T *p, T v) { return atomicSub((T *)p, v); } \
  __device__ __forceinline__ T atomic_inc(volatile T *p) { return atomicAdd((T *)p, (T)1); }   \
  __device__ __forceinline__ T atomic_dec(volatile T *p) { return atomicSub((T *)p, (T)1); }   \
  __device__ __forceinline__ T atomic_xchg(volatile T *p, T v) { return atomicExch((T *)p, v); } \
  __device__ __forceinline__ T atomic_cmpxchg(volatile T *p, T cmp, T v) { return atomicCAS((T *)p, cmp, v); } \
  __device__ __forceinline__ T atomic_min(volatile T *p, T v) { return atomicMin((T *)p, v); } \
  __device__ __forceinline__ T atomic_max(volatile T *p, T v) { return atomicMax((T *)p, v); } \
  __device__ __forceinline__ T atomic_and(volatile T *p, T v) { return atomicAnd((T *)p, v); } \
  __device__ __forceinline__ T atomic_or(volatile T *p, T v) { return atomicOr((T *)p, v); }   \
  __device__ __forceinline__ T atomic_xor(volatile T *p, T v) { return atomicXor((T *)p, v); }
PRISM_ATOMICS(int)
PRISM_ATOMICS(uint)
#undef PRISM_ATOMICS
__device__ __forceinline__ float atomic_xchg(volatile float *p, float v) { return atomicExch((float *)p, v); }
#define atom_add atomic_add
#define atom_sub atomic_sub
#define atom_inc atomic_inc
#define atom_dec atomic_dec
#define atom_xchg atomic_xchg
#define atom_cmpxchg atomic_cmpxchg
#define atom_min atomic_min
#define atom_max atomic_max
#define atom_and atomic_and
#define atom_or atomic_or
#define atom_xor atomic_xor

// 64-bit atom_* (cl_khr_int64_base_atomics and cl_khr_int64_extended_atomics), on long and
// ulong, through CUDA's unsigned long long and long long atomics.
#define PRISM_ATOMICS64(T)                                                                             \
  __device__ __forceinline__ T atomic_add(volatile T *p, T v) { return (T)atomicAdd((unsigned long long *)p, (unsigned long long)v); } \
  __device__ __forceinline__ T atomic_sub(volatile T *p, T v) { return (T)atomicAdd((unsigned long long *)p, 0ull - (unsigned long long)v); } \
  __device__ __forceinline__ T atomic_inc(volatile T *p) { return (T)atomicAdd((unsigned long long *)p, 1ull); } \
  __device__ __forceinline__ T atomic_dec(volatile T *p) { return (T)atomicAdd((unsigned long long *)p, ~0ull); } \
  __device__ __forceinline__ T atomic_xchg(volatile T *p, T v) { return (T)atomicExch((unsigned long long *)p, (unsigned long long)v); } \
  __device__ __forceinline__ T atomic_cmpxchg(volatile T *p, T cmp, T v) {                        \
    return (T)atomicCAS((unsigned long long *)p, (unsigned long long)cmp, (unsigned long long)v);          \
  }                                                                                                      \
  __device__ __forceinline__ T atomic_and(volatile T *p, T v) { return (T)atomicAnd((unsigned long long *)p, (unsigned long long)v); } \
  __device__ __forceinline__ T atomic_or(volatile T *p, T v) { return (T)atomicOr((unsigned long long *)p, (unsigned long long)v); } \
  __device__ __forceinline__ T atomic_xor(volatile T *p, T v) { return (T)atomicXor((unsigned long long *)p, (unsigned long long)v); }
PRISM_ATOMICS64(long)
PRISM_ATOMICS64(ulong)
#undef PRISM_ATOMICS64
__device__ __forceinline__ long atomic_min(volatile long *p, long v) { return (long)atomicMin((long long *)p, (long long)v); }
__device__ __forceinline__ long atomic_max(volatile long *p, long v) { return (long)atomicMax((long long *)p, (long long)v); }
__device__ __forceinline__ ulong atomic_min(volatile ulong *p, ulong v) { return (ulong)atomicMin((unsigned long long *)p, (unsigned long long)v); }
__device__ __forceinline__ ulong atomic_max(volatile ulong *p, ulong v) { return (ulong)atomicMax((unsigned long long *)p, (unsigned long long)v); }
