#define PRISM_INFINITY_F (__int_as_float(0x7f800000))
#define PRISM_NAN_F (__int_as_float(0x7fffffff))

// ---------------------------------------------------------------------------------------
// Part 2: OpenCL C in terms of CUDA, the same for both compilers.
// ---------------------------------------------------------------------------------------

// Types.
typedef decltype(sizeof(0)) size_t;
typedef decltype((char *)0 - (char *)0) ptrdiff_t;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

// Qualifiers. Address spaces are generic in CUDA, so only the storage of kernel-scope
// (__local) and file-scope (__constant) variables needs a CUDA qualifier. Both add static,
// which CUDA allows on such variables and C++ forbids on parameters: the translation
// rewrites __local and __constant pointer parameters (translate.go, kernelParams), so that
// these macros never reach a parameter list.
#define __kernel extern "C" __global__
#define __global
#define __private
#define __local static __shared__
#define __constant static __constant__
#define __read_only
#define __write_only
#define restrict __restrict__
#define reqd_work_group_size(x, y, z) launch_bounds((x) * (y) * (z))

// __local pointer parameters. The translation makes each a uint, the byte offset of its
// memory in the block's dynamic shared memory (the launch places them one after another,
// each at a multiple of 16 bytes, and sizes the block's dynamic shared memory to hold them),
// and starts the kernel's body with the pointer's declaration: T *p = prism_local_at(off),
// whose value converts to a pointer of any type.
extern __shared__ __attribute__((aligned(16))) unsigned char prism_local_mem[];
struct prism_local_ptr {
  unsigned char *p;
  template <class T> __device__ __forceinline__ operator T *() const { return (T *)p; }
};
__device__ __forceinline__ prism_local_ptr prism_local_at(uint offset) {
  prism_local_ptr l = {prism_local_mem + offset};
  return l;
}

