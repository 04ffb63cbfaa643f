// Work-item functions. Dimensions other than 0, 1 and 2 give 0 for indices and 1 for sizes,
// as in OpenCL.
__device__ __forceinline__ size_t get_local_id(uint d) {
  return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : d == 2 ? threadIdx.z : 0;
}
__device__ __forceinline__ size_t get_local_size(uint d) {
  return d == 0 ? blockDim.x : d == 1 ? blockDim.y : d == 2 ? blockDim.z : 1;
}
__device__ __forceinline__ size_t get_group_id(uint d) {
  return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : d == 2 ? blockIdx.z : 0;
}
__device__ __forceinline__ size_t get_num_groups(uint d) {
  return d == 0 ? gridDim.x : d == 1 ? gridDim.y : d == 2 ? gridDim.z : 1;
}
__device__ __forceinline__ size_t get_global_id(uint d) {
  return get_group_id(d) * get_local_size(d) + get_local_id(d);
}
__device__ __forceinline__ size_t get_global_size(uint d) {
  return get_num_groups(d) * get_local_size(d);
}
__device__ __forceinline__ size_t get_global_offset(uint) { return 0; }

// Synchronization.
typedef uint cl_mem_fence_flags;
#define CLK_LOCAL_MEM_FENCE 1u
#define CLK_GLOBAL_MEM_FENCE 2u
__device__ __forceinline__ void barrier(cl_mem_fence_flags) { __syncthreads(); }
__device__ __forceinline__ void mem_fence(cl_mem_fence_flags flags) {
  if (flags & CLK_GLOBAL_MEM_FENCE) {
    __threadfence();
  } else {
    __threadfence_block();
  }
}
__device__ __forceinline__ void read_mem_fence(cl_mem_fence_flags flags) { mem_fence(flags); }
__device__ __forceinline__ void write_mem_fence(cl_mem_fence_flags flags) { mem_fence(flags); }

