// Package suitekernels holds the kernels of the conformance suite (package
// engine/enginetest), in one place for the two packages that need them: the suite, which
// builds and launches them on every backend, and the fake backend (engine/internal/fake),
// which implements each of them in Go under the same name.
//
// Source follows the suite's rules for portable sources: OpenCL C 1.2, work-item indices
// cast to int, local memory only in kernel-scope arrays, every access bounds-checked so
// that a global size rounded up to the work-group size writes nothing past n. Every
// backend builds it. The other sources need a feature that only some devices have: a
// __local pointer parameter (LocalArgSource), CUDA C++ with dynamic shared memory
// (CUDASource), thread-block clusters (ClusterSource), tensor maps (TensorMapSource).
package suitekernels

// Kernel names in Source, with their arguments in order.
const (
	// Axpy computes y[off+i] = a*x[i] + y[off+i] for i in [0, n).
	// Arguments: int n, int off, float a, global const float *x, global float *y.
	Axpy = "prism_axpy"
	// Iota writes out[off+i] = i for i in [0, n).
	// Arguments: int n, int off, global uint *out.
	Iota = "prism_iota"
	// Index2D writes out[off + y*w + x] = (y << 16) | x for x < w, y < h, with x and y the
	// global IDs in dimensions 0 and 1.
	// Arguments: int w, int h, int off, global uint *out.
	Index2D = "prism_index2d"
	// Index3D writes out[off + (z*h + y)*w + x] = (z << 20) | (y << 10) | x for x < w,
	// y < h, z < d.
	// Arguments: int w, int h, int d, int off, global uint *out.
	Index3D = "prism_index3d"
	// Define writes out[0] = DefineMacro, which defaults to DefineDefault when the build
	// options do not set it with -D.
	// Arguments: global int *out.
	Define = "prism_define"
	// GroupReverse reverses each work-group's part of in through a kernel-scope __local
	// array of GroupMax uints: out[off+i] = in[j] for i < n, where i = base + l is
	// work-item l of a work-group of size s starting at base, and j = base + s-1-l; in[j]
	// reads as 0 when j >= n. The work-group size must not exceed GroupMax.
	// Arguments: int n, int off, global const uint *in, global uint *out.
	GroupReverse = "prism_group_reverse"
	// Count counts the work-items of a launch: each item (x, y, z) inside w×h×d adds one
	// to counts[off + (z*h + y)*w + x] atomically, each item outside it adds one to
	// counts[off + w*h*d]; item (0, 0, 0) writes the global sizes it sees to
	// sizes[off:off+3] and its local sizes to sizes[off+3:off+6].
	// Arguments: int w, int h, int d, int off, global uint *counts, global uint *sizes.
	Count = "prism_count"
	// CountFixed is Count in work-groups of exactly FixedLocal, which its source requires
	// (reqd_work_group_size).
	// Arguments: those of Count.
	CountFixed = "prism_count_fixed"
)

// FixedLocal is the work-group size that kernel CountFixed requires.
var FixedLocal = [3]int{4, 2, 1}

// NumArgs is the number of arguments each kernel of Source declares.
var NumArgs = map[string]int{Axpy: 5, Iota: 3, Index2D: 4, Index3D: 5, Define: 1, GroupReverse: 4, Count: 6, CountFixed: 6}

// GroupMax is the largest work-group of the group-reverse kernels of Source and
// LocalArgSource; GroupReverse's __local array holds GroupMax uints, so a backend that
// reports a kernel's static local memory reports at least GroupMax*4 bytes for it.
const GroupMax = 64

// DefineMacro is the macro that kernel Define writes; DefineDefault is its value when no
// -D option sets it.
const (
	DefineMacro   = "PRISM_DEFINE_VALUE"
	DefineDefault = 1
)

// Source holds every kernel of the suite.
const Source = `// Conformance-suite kernels (package engine/enginetest).
// Every kernel checks its bounds: the global size is n rounded up to the work-group size.
// Tunables: PRISM_DEFINE_VALUE (default 1), read by prism_define only.

#ifndef PRISM_DEFINE_VALUE
#define PRISM_DEFINE_VALUE 1
#endif

__kernel void prism_axpy(const int n, const int off, const float a,
                         __global const float *x, __global float *y) {
  const int i = (int)get_global_id(0);
  if (i < n) {
    y[off + i] = a * x[i] + y[off + i];
  }
}

__kernel void prism_iota(const int n, const int off, __global uint *out) {
  const int i = (int)get_global_id(0);
  if (i < n) {
    out[off + i] = (uint)i;
  }
}

__kernel void prism_index2d(const int w, const int h, const int off, __global uint *out) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  if (x < w && y < h) {
    out[off + y * w + x] = ((uint)y << 16) | (uint)x;
  }
}

__kernel void prism_index3d(const int w, const int h, const int d, const int off,
                            __global uint *out) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int z = (int)get_global_id(2);
  if (x < w && y < h && z < d) {
    out[off + (z * h + y) * w + x] = ((uint)z << 20) | ((uint)y << 10) | (uint)x;
  }
}

__kernel void prism_define(__global int *out) {
  if (get_global_id(0) == 0) {
    out[0] = PRISM_DEFINE_VALUE;
  }
}

// Work-groups of at most 64 items, each reversing its part of in through local memory.
__kernel void prism_group_reverse(const int n, const int off, __global const uint *in,
                                  __global uint *out) {
  __local uint tile[64];
  const int l = (int)get_local_id(0);
  const int s = (int)get_local_size(0);
  const int base = (int)get_group_id(0) * s;
  const int i = base + l;
  tile[l] = i < n ? in[i] : 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < n) {
    out[off + i] = tile[s - 1 - l];
  }
}

// Every work-item of the launch counts itself: in its cell inside w x h x d, else in the
// one cell after them.
void count_item(const int w, const int h, const int d, const int off,
                __global uint *counts, __global uint *sizes) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int z = (int)get_global_id(2);
  int cell = w * h * d;
  if (x < w && y < h && z < d) {
    cell = (z * h + y) * w + x;
  }
  atomic_inc(&counts[off + cell]);
  if (x == 0 && y == 0 && z == 0) {
    sizes[off + 0] = (uint)get_global_size(0);
    sizes[off + 1] = (uint)get_global_size(1);
    sizes[off + 2] = (uint)get_global_size(2);
    sizes[off + 3] = (uint)get_local_size(0);
    sizes[off + 4] = (uint)get_local_size(1);
    sizes[off + 5] = (uint)get_local_size(2);
  }
}

__kernel void prism_count(const int w, const int h, const int d, const int off,
                          __global uint *counts, __global uint *sizes) {
  count_item(w, h, d, off, counts, sizes);
}

__kernel __attribute__((reqd_work_group_size(4, 2, 1)))
void prism_count_fixed(const int w, const int h, const int d, const int off,
                       __global uint *counts, __global uint *sizes) {
  count_item(w, h, d, off, counts, sizes);
}
`

// GroupReverseLocal is GroupReverse with its local memory given at launch, through a
// __local pointer parameter of at least s*4 bytes for work-groups of s items.
// Arguments: int n, int off, global const uint *in, global uint *out, local uint *tile.
const GroupReverseLocal = "prism_group_reverse_local"

// LocalArgSource holds GroupReverseLocal. It builds only where a backend takes __local
// pointer parameters (OpenCL; engine.LaunchFeatures.LocalArgs).
const LocalArgSource = `// Conformance-suite kernel with a __local pointer parameter, sized at launch.

__kernel void prism_group_reverse_local(const int n, const int off, __global const uint *in,
                                        __global uint *out, __local uint *tile) {
  const int l = (int)get_local_id(0);
  const int s = (int)get_local_size(0);
  const int base = (int)get_group_id(0) * s;
  const int i = base + l;
  tile[l] = i < n ? in[i] : 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < n) {
    out[off + i] = tile[s - 1 - l];
  }
}
`

// GroupReverseShared is GroupReverse in CUDA C++, with its tile in dynamic shared memory
// of at least s*4 bytes for blocks of s threads (Range.SharedBytes), and no limit on the
// block size. Its first thread also writes HalfCheck at out[off+n].
// Arguments: int n, int off, const uint32_t *in, uint32_t *out.
const GroupReverseShared = "prism_group_reverse_shared"

// HalfCheck is the value GroupReverseShared writes after the reversed elements, at
// out[off+n], from its first thread: the half and bfloat16 bits of 1.0f and -1.0f as the
// embedded header prism_cuda.h converts them (0x3c00 and 0xbf80), so that the suite checks
// that a CUDA C++ source can include it.
const HalfCheck = 0x3c00bf80

// CUDASource holds GroupReverseShared. It builds where a backend builds CUDA C++
// (engine.DialectCUDA), and its launch needs dynamic shared memory
// (engine.LaunchFeatures.SharedBytes).
const CUDASource = `// Conformance-suite kernel in CUDA C++: dynamic shared memory, the embedded header.
#include "prism_cuda.h"

extern "C" __global__ void prism_group_reverse_shared(int n, int off, const uint32_t *in,
                                                      uint32_t *out) {
  extern __shared__ uint32_t tile[];
  const int l = (int)threadIdx.x;
  const int s = (int)blockDim.x;
  const int base = (int)blockIdx.x * s;
  const int i = base + l;
  tile[l] = i < n ? in[i] : 0u;
  __syncthreads();
  if (i < n) {
    out[off + i] = tile[s - 1 - l];
  }
  if (i == 0) {
    const uint32_t h = prism_float_to_half(1.0f).bits;
    const uint32_t b = prism_float_to_bfloat16(-1.0f).bits;
    out[off + n] = h << 16 | b;
  }
}
`

// ClusterRank writes, from thread 0 of each block, out[b] = size<<16 | rank for block b
// (linear over the grid): the number of blocks in its thread-block cluster and its rank
// in it (PTX %cluster_nctarank and %cluster_ctarank).
// Arguments: uint32_t *out.
const ClusterRank = "prism_cluster_rank"

// ClusterSource holds ClusterRank, in CUDA C++ for compute capability 9.0 and newer. It
// builds and launches where a backend builds CUDA C++ and has thread-block clusters
// (engine.LaunchFeatures.MaxClusterSize > 0).
const ClusterSource = `// Conformance-suite kernel in CUDA C++: thread-block clusters (sm_90 and newer).
extern "C" __global__ void prism_cluster_rank(unsigned int *out) {
  unsigned int rank, size;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  if (threadIdx.x == 0) {
    const unsigned int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    out[b] = size << 16 | rank;
  }
}
`

// TMABox copies one box of a two-dimensional float32 tensor map to shared memory with the
// Tensor Memory Accelerator (cp.async.bulk.tensor, completing on an mbarrier) and writes
// it out: out[off + y*TMABoxW + x] = the tensor's element (x0+x, y0+y), fastest dimension
// first, or 0 where that lies outside the tensor, for x < TMABoxW and y < TMABoxH. The
// map's box is {TMABoxW, TMABoxH} without swizzle. Every block copies the same box and
// writes the same values: launch one block, of any size.
// Arguments: a tensor map tm (128 bytes by value), int x0, int y0, int off, float *out.
const TMABox = "prism_tma_box"

// TMABoxW and TMABoxH are the box of TMABox, in elements: 64 float32 (256 bytes) by 32.
const (
	TMABoxW = 64
	TMABoxH = 32
)

// TensorMapSource holds TMABox, in CUDA C++ for compute capability 9.0 and newer. It
// builds and launches where a backend builds CUDA C++ and encodes tensor maps
// (engine.Device.TensorMapSupport). The tensor map parameter is a 64-byte-aligned
// structure of 128 bytes that the kernel declares itself, const __grid_constant__ so that
// its address is the parameter's own (a copy in local memory is no tensor map to TMA).
const TensorMapSource = `// Conformance-suite kernel in CUDA C++: a TMA copy of a tensor map's box (sm_90 and newer).
#define PRISM_TMA_BOX_W 64
#define PRISM_TMA_BOX_H 32

// The 128 bytes of a CUtensorMap, as the host encodes them.
struct alignas(64) prism_suite_tmap {
  unsigned long long v[16];
};

// The 32-bit shared-memory address of p, a generic pointer into shared memory.
static __device__ inline unsigned int prism_suite_smem(const void *p) {
  unsigned int a;
  asm volatile("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}

extern "C" __global__ void prism_tma_box(const __grid_constant__ prism_suite_tmap tm, const int x0, const int y0,
                                         const int off, float *out) {
  __shared__ __attribute__((aligned(128))) float tile[PRISM_TMA_BOX_H * PRISM_TMA_BOX_W];
  __shared__ __attribute__((aligned(8))) unsigned long long bar;
  const unsigned int sbar = prism_suite_smem(&bar);
  const unsigned int stile = prism_suite_smem(tile);
  if (threadIdx.x == 0) {
    // One arrival per phase: thread 0's, which also sets the bytes the phase waits for.
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar) : "memory");
    // Make the initialized barrier visible to the async proxy, which the TMA copy uses.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }" ::"r"(sbar),
                 "r"((unsigned int)sizeof(tile))
                 : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(stile),
                 "l"(&tm), "r"(x0), "r"(y0), "r"(sbar)
                 : "memory");
  }
  // Every thread waits for phase 0 to complete: thread 0's arrival and the box's bytes.
  unsigned int done = 0;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(sbar), "r"(0u)
                 : "memory");
  } while (!done);
  for (unsigned int i = threadIdx.x; i < PRISM_TMA_BOX_H * PRISM_TMA_BOX_W; i += blockDim.x) {
    out[off + (int)i] = tile[i];
  }
}
`

// BadIdent is the undeclared identifier in BadSource; a backend's build log must name it.

const BadIdent = "undefined_symbol_q"

// BadSource is a kernel that does not compile: it reads an undeclared identifier.
const BadSource = `__kernel void prism_bad(__global float *x) {
  x[0] = undefined_symbol_q;
}
`

// BadCUDASource is a CUDA C++ kernel that does not compile: it reads BadIdent, which is
// undeclared.
const BadCUDASource = `extern "C" __global__ void prism_bad(float *x) {
  x[0] = undefined_symbol_q;
}
`
