package cuda

// This file is the cgo of the CUDA driver API and NVRTC, loaded at run time with dlopen
// (internal/dl, the loader of every library both backends load). No CUDA header or library is needed to build: the types below are our
// own minimal declarations, the functions are pointers found with dlsym, and each is called
// through a small C trampoline (Go cannot call a C function pointer). Where the driver
// exports a function under several ABI versions, the table names the one whose signature
// is declared here (cuMemAlloc_v2, not the legacy cuMemAlloc, which is exported too with
// another signature).
//
// Every function here is a thin wrapper that returns the call's status; callers add the
// call's name and arguments to errors, and run the calls that need a current context on
// the device's thread (thread.go).

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUevent;
typedef unsigned long long CUdeviceptr;
typedef int nvrtcResult;
typedef void *nvrtcProgram;

enum {
	fn_cuInit,
	fn_cuDriverGetVersion,
	fn_cuDeviceGetCount,
	fn_cuDeviceGet,
	fn_cuDeviceGetName,
	fn_cuDeviceGetAttribute,
	fn_cuDeviceTotalMem,
	fn_cuDeviceGetPCIBusId,
	fn_cuDevicePrimaryCtxRetain,
	fn_cuDevicePrimaryCtxRelease,
	fn_cuCtxSetCurrent,
	fn_cuCtxSynchronize,
	fn_cuMemGetInfo,
	fn_cuMemAlloc,
	fn_cuMemFree,
	fn_cuMemHostAlloc,
	fn_cuMemFreeHost,
	fn_cuMemHostRegister,
	fn_cuMemHostUnregister,
	fn_cuMemcpyHtoDAsync,
	fn_cuMemcpyDtoHAsync,
	fn_cuMemcpyDtoDAsync,
	fn_cuMemcpyPeerAsync,
	fn_cuCtxEnablePeerAccess,
	fn_cuMemsetD8Async,
	fn_cuMemsetD16Async,
	fn_cuMemsetD32Async,
	fn_cuStreamCreate,
	fn_cuStreamDestroy,
	fn_cuStreamQuery,
	fn_cuStreamSynchronize,
	fn_cuEventCreate,
	fn_cuEventDestroy,
	fn_cuEventRecord,
	fn_cuEventQuery,
	fn_cuEventSynchronize,
	fn_cuEventElapsedTime,
	fn_cuModuleLoadDataEx,
	fn_cuModuleUnload,
	fn_cuModuleGetFunction,
	fn_cuFuncGetAttribute,
	fn_cuFuncSetAttribute,
	fn_cuFuncGetParamInfo,
	fn_cuFuncGetParamCount,
	fn_cuLaunchKernel,
	fn_cuLaunchKernelEx,
	fn_cuOccupancyMaxActiveBlocksPerMultiprocessor,
	fn_cuTensorMapEncodeTiled,
	fn_cuStreamWaitEvent,
	fn_cuMemPoolCreate,
	fn_cuMemPoolDestroy,
	fn_cuMemPoolSetAttribute,
	fn_cuMemPoolTrimTo,
	fn_cuMemPoolSetAccess,
	fn_cuMemAllocFromPoolAsync,
	fn_cuMemFreeAsync,
	fn_cuStreamBeginCapture,
	fn_cuStreamEndCapture,
	fn_cuGraphInstantiateWithFlags,
	fn_cuGraphLaunch,
	fn_cuGraphExecDestroy,
	fn_cuGraphDestroy,
	fn_cuGraphGetNodes,
	fn_cuGraphNodeGetType,
	fn_nvrtcVersion,
	fn_nvrtcCreateProgram,
	fn_nvrtcDestroyProgram,
	fn_nvrtcCompileProgram,
	fn_nvrtcGetProgramLogSize,
	fn_nvrtcGetProgramLog,
	fn_nvrtcGetPTXSize,
	fn_nvrtcGetPTX,
	fn_nvrtcGetCUBINSize,
	fn_nvrtcGetCUBIN,
	fn_nvrtcGetNumSupportedArchs,
	fn_nvrtcGetSupportedArchs,
	fn_count
};

// fns holds the resolved functions, indexed by the enum. It is written only while the Go
// side holds its loader lock, before any trampoline of the library can be called.
static void *fns[fn_count];

static void prism_set(int i, void *f) { fns[i] = f; }
static int prism_have(int i) { return fns[i] != NULL; }

#define TRAMPOLINE(ret, name, params, args) \
	static ret call_##name params { return ((ret(*) params)fns[fn_##name]) args; }

TRAMPOLINE(CUresult, cuInit, (unsigned int flags), (flags))
TRAMPOLINE(CUresult, cuDriverGetVersion, (int *v), (v))
TRAMPOLINE(CUresult, cuDeviceGetCount, (int *n), (n))
TRAMPOLINE(CUresult, cuDeviceGet, (CUdevice *d, int ordinal), (d, ordinal))
TRAMPOLINE(CUresult, cuDeviceGetName, (char *name, int len, CUdevice d), (name, len, d))
TRAMPOLINE(CUresult, cuDeviceGetAttribute, (int *v, int attr, CUdevice d), (v, attr, d))
TRAMPOLINE(CUresult, cuDeviceTotalMem, (size_t *bytes, CUdevice d), (bytes, d))
TRAMPOLINE(CUresult, cuDeviceGetPCIBusId, (char *id, int len, CUdevice d), (id, len, d))
TRAMPOLINE(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *c, CUdevice d), (c, d))
TRAMPOLINE(CUresult, cuDevicePrimaryCtxRelease, (CUdevice d), (d))
TRAMPOLINE(CUresult, cuCtxSetCurrent, (CUcontext c), (c))
TRAMPOLINE(CUresult, cuCtxSynchronize, (void), ())
TRAMPOLINE(CUresult, cuMemGetInfo, (size_t *free, size_t *total), (free, total))
TRAMPOLINE(CUresult, cuMemAlloc, (CUdeviceptr *p, size_t size), (p, size))
TRAMPOLINE(CUresult, cuMemFree, (CUdeviceptr p), (p))
TRAMPOLINE(CUresult, cuMemHostAlloc, (void **p, size_t size, unsigned int flags), (p, size, flags))
TRAMPOLINE(CUresult, cuMemFreeHost, (void *p), (p))
TRAMPOLINE(CUresult, cuMemHostRegister, (void *p, size_t size, unsigned int flags), (p, size, flags))
TRAMPOLINE(CUresult, cuMemHostUnregister, (void *p), (p))
TRAMPOLINE(CUresult, cuMemcpyHtoDAsync, (CUdeviceptr dst, const void *src, size_t n, CUstream s), (dst, src, n, s))
TRAMPOLINE(CUresult, cuMemcpyDtoHAsync, (void *dst, CUdeviceptr src, size_t n, CUstream s), (dst, src, n, s))
TRAMPOLINE(CUresult, cuMemcpyDtoDAsync, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s), (dst, src, n, s))
TRAMPOLINE(CUresult, cuMemcpyPeerAsync, (CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s), (dst, dc, src, sc, n, s))
TRAMPOLINE(CUresult, cuCtxEnablePeerAccess, (CUcontext peer, unsigned int flags), (peer, flags))
TRAMPOLINE(CUresult, cuMemsetD8Async, (CUdeviceptr dst, unsigned char v, size_t n, CUstream s), (dst, v, n, s))
TRAMPOLINE(CUresult, cuMemsetD16Async, (CUdeviceptr dst, unsigned short v, size_t n, CUstream s), (dst, v, n, s))
TRAMPOLINE(CUresult, cuMemsetD32Async, (CUdeviceptr dst, unsigned int v, size_t n, CUstream s), (dst, v, n, s))
TRAMPOLINE(CUresult, cuStreamCreate, (CUstream *s, unsigned int flags), (s, flags))
TRAMPOLINE(CUresult, cuStreamDestroy, (CUstream s), (s))
TRAMPOLINE(CUresult, cuStreamQuery, (CUstream s), (s))
TRAMPOLINE(CUresult, cuStreamSynchronize, (CUstream s), (s))
TRAMPOLINE(CUresult, cuEventCreate, (CUevent *e, unsigned int flags), (e, flags))
TRAMPOLINE(CUresult, cuEventDestroy, (CUevent e), (e))
TRAMPOLINE(CUresult, cuEventRecord, (CUevent e, CUstream s), (e, s))
TRAMPOLINE(CUresult, cuEventQuery, (CUevent e), (e))
TRAMPOLINE(CUresult, cuEventSynchronize, (CUevent e), (e))
TRAMPOLINE(CUresult, cuEventElapsedTime, (float *ms, CUevent start, CUevent end), (ms, start, end))
TRAMPOLINE(CUresult, cuModuleLoadDataEx, (CUmodule *m, const void *image, unsigned int n, int *opts, void **vals), (m, image, n, opts, vals))
TRAMPOLINE(CUresult, cuModuleUnload, (CUmodule m), (m))
TRAMPOLINE(CUresult, cuModuleGetFunction, (CUfunction *f, CUmodule m, const char *name), (f, m, name))
TRAMPOLINE(CUresult, cuFuncGetAttribute, (int *v, int attr, CUfunction f), (v, attr, f))
TRAMPOLINE(CUresult, cuFuncSetAttribute, (CUfunction f, int attr, int v), (f, attr, v))
TRAMPOLINE(CUresult, cuFuncGetParamInfo, (CUfunction f, size_t i, size_t *off, size_t *size), (f, i, off, size))
TRAMPOLINE(CUresult, cuFuncGetParamCount, (CUfunction f, size_t *n), (f, n))
TRAMPOLINE(CUresult, cuLaunchKernel,
	(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz,
	 unsigned int shared, CUstream s, void **params, void **extra),
	(f, gx, gy, gz, bx, by, bz, shared, s, params, extra))

// The launch configuration of cuLaunchKernelEx (CUDA 12.0), laid out as cuda.h's
// CUlaunchAttribute and CUlaunchConfig: an attribute is its 4-byte ID, 4 bytes of padding
// and a 64-byte union (8-byte aligned: it holds pointers), of which a cluster dimension
// uses the first three unsigned ints.
typedef struct {
	int id;
	char pad[4];
	union {
		char bytes[64];
		unsigned long long align;
		struct { unsigned int x, y, z; } clusterDim;
	} value;
} prism_launch_attribute;

typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	prism_launch_attribute *attrs;
	unsigned int numAttrs;
} prism_launch_config;

TRAMPOLINE(CUresult, cuLaunchKernelEx, (const prism_launch_config *c, CUfunction f, void **params, void **extra), (c, f, params, extra))

// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION in CUlaunchAttributeID.
enum { prism_attr_cluster_dimension = 4 };

// prism_launch_cluster launches f in thread-block clusters of cx*cy*cz blocks.
static CUresult prism_launch_cluster(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void **params,
		unsigned int cx, unsigned int cy, unsigned int cz) {
	prism_launch_attribute attr;
	memset(&attr, 0, sizeof attr);
	attr.id = prism_attr_cluster_dimension;
	attr.value.clusterDim.x = cx;
	attr.value.clusterDim.y = cy;
	attr.value.clusterDim.z = cz;
	prism_launch_config c;
	memset(&c, 0, sizeof c);
	c.gridDimX = gx; c.gridDimY = gy; c.gridDimZ = gz;
	c.blockDimX = bx; c.blockDimY = by; c.blockDimZ = bz;
	c.sharedMemBytes = shared;
	c.hStream = s;
	c.attrs = &attr;
	c.numAttrs = 1;
	return call_cuLaunchKernelEx(&c, f, params, NULL);
}
// The calls below are made from any goroutine, not only the device's thread: each makes
// the context current on the calling OS thread and makes its call in one C function, so
// that the goroutine cannot move to another thread between the two (it moves only between
// cgo calls). cuCtxSetCurrent of the context already current costs a thread-local store.
static CUresult prism_launch_in(CUcontext c, CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void **params) {
	CUresult r = call_cuCtxSetCurrent(c);
	if (r != 0) return r;
	return call_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, params, NULL);
}
// prism_enable_peer_in lets context c reach the memory of context peer.
static CUresult prism_enable_peer_in(CUcontext c, CUcontext peer) {
	CUresult r = call_cuCtxSetCurrent(c);
	return r != 0 ? r : call_cuCtxEnablePeerAccess(peer, 0);
}
static CUresult prism_stream_query_in(CUcontext c, CUstream s) {
	CUresult r = call_cuCtxSetCurrent(c);
	return r != 0 ? r : call_cuStreamQuery(s);
}
static CUresult prism_event_query_in(CUcontext c, CUevent e) {
	CUresult r = call_cuCtxSetCurrent(c);
	return r != 0 ? r : call_cuEventQuery(e);
}
// prism_stream_sync_in and prism_event_sync_in block until the stream's work or the
// event is done, with c current (CUDA's own wait: it spins, yields or sleeps as the
// context's scheduling flags say).
static CUresult prism_stream_sync_in(CUcontext c, CUstream s) {
	CUresult r = call_cuCtxSetCurrent(c);
	return r != 0 ? r : call_cuStreamSynchronize(s);
}
static CUresult prism_event_sync_in(CUcontext c, CUevent e) {
	CUresult r = call_cuCtxSetCurrent(c);
	return r != 0 ? r : call_cuEventSynchronize(e);
}
TRAMPOLINE(CUresult, cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *n, CUfunction f, int block, size_t shared), (n, f, block, shared))

// A CUtensorMap as cuda.h declares it: 128 opaque bytes, 64-byte aligned. Its enums
// (CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
// CUtensorMapFloatOOBfill) are ints; cuuint64_t and cuuint32_t are the unsigned types below.
typedef struct {
	__attribute__((aligned(64))) unsigned long long opaque[16];
} prism_tensor_map;

TRAMPOLINE(CUresult, cuTensorMapEncodeTiled,
	(prism_tensor_map *m, int type, unsigned int rank, void *addr, const unsigned long long *dims,
	 const unsigned long long *strides, const unsigned int *box, const unsigned int *elementStrides,
	 int interleave, int swizzle, int l2Promotion, int oobFill),
	(m, type, rank, addr, dims, strides, box, elementStrides, interleave, swizzle, l2Promotion, oobFill))

// prism_tensor_map_encode encodes a tiled tensor map of rank (1 to 5) dimensions at addr
// into the 128 bytes at out: every element stride 1, no interleave
// (CU_TENSOR_MAP_INTERLEAVE_NONE), and elements outside the tensor read as zero
// (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE). The driver writes an aligned map on this stack,
// which is then copied out.
static CUresult prism_tensor_map_encode(void *out, int type, unsigned int rank, CUdeviceptr addr,
		const unsigned long long *dims, const unsigned long long *strides, const unsigned int *box,
		int swizzle, int l2Promotion) {
	static const unsigned int elementStrides[5] = {1, 1, 1, 1, 1};
	prism_tensor_map m;
	memset(&m, 0, sizeof m);
	CUresult r = call_cuTensorMapEncodeTiled(&m, type, rank, (void *)(uintptr_t)addr, dims, strides, box, elementStrides,
		0, swizzle, l2Promotion, 0);
	memcpy(out, &m, sizeof m);
	return r;
}

TRAMPOLINE(CUresult, cuStreamWaitEvent, (CUstream s, CUevent e, unsigned int flags), (s, e, flags))

// CUmemPoolProps as cuda.h declares it: the allocation type, the handle types, the
// location (a type and an ID), a pointer for Windows, then 64 bytes that later drivers
// partly name (maxSize, usage) and that are zero here: no limit, default usage.
typedef struct {
	int allocType;
	int handleTypes;
	struct { int type; int id; } location;
	void *win32SecurityAttributes;
	unsigned char reserved[64];
} prism_mem_pool_props;
typedef void *CUmemoryPool;

TRAMPOLINE(CUresult, cuMemPoolCreate, (CUmemoryPool *p, const prism_mem_pool_props *props), (p, props))
TRAMPOLINE(CUresult, cuMemPoolDestroy, (CUmemoryPool p), (p))
TRAMPOLINE(CUresult, cuMemPoolSetAttribute, (CUmemoryPool p, int attr, void *v), (p, attr, v))
TRAMPOLINE(CUresult, cuMemPoolTrimTo, (CUmemoryPool p, size_t keep), (p, keep))
// CUmemAccessDesc: a location (CU_MEM_LOCATION_TYPE_DEVICE 1 and an ordinal) and its
// access (CU_MEM_ACCESS_FLAGS_PROT_READWRITE 3).
typedef struct {
	struct { int type; int id; } location;
	int flags;
} prism_mem_access_desc;
TRAMPOLINE(CUresult, cuMemPoolSetAccess, (CUmemoryPool p, const prism_mem_access_desc *map, size_t count), (p, map, count))
// prism_pool_grant lets device ordinal read and write the memory of pool p.
static CUresult prism_pool_grant(CUmemoryPool p, int ordinal) {
	prism_mem_access_desc d;
	d.location.type = 1;
	d.location.id = ordinal;
	d.flags = 3;
	return call_cuMemPoolSetAccess(p, &d, 1);
}
TRAMPOLINE(CUresult, cuMemAllocFromPoolAsync, (CUdeviceptr *d, size_t size, CUmemoryPool p, CUstream s), (d, size, p, s))
TRAMPOLINE(CUresult, cuMemFreeAsync, (CUdeviceptr d, CUstream s), (d, s))

// prism_pool_create makes a pool of device memory on device ordinal (pinned allocations,
// CU_MEM_ALLOCATION_TYPE_PINNED, located on CU_MEM_LOCATION_TYPE_DEVICE, no shareable
// handles) that keeps freed memory instead of returning it to the system at each
// synchronization: CU_MEMPOOL_ATTR_RELEASE_THRESHOLD (4) at the largest size.
static CUresult prism_pool_create(CUmemoryPool *p, int ordinal) {
	prism_mem_pool_props props;
	memset(&props, 0, sizeof props);
	props.allocType = 1;
	props.location.type = 1;
	props.location.id = ordinal;
	CUresult r = call_cuMemPoolCreate(p, &props);
	if (r != 0) return r;
	unsigned long long threshold = ~0ULL;
	r = call_cuMemPoolSetAttribute(*p, 4, &threshold);
	if (r != 0) {
		call_cuMemPoolDestroy(*p);
		*p = NULL;
	}
	return r;
}

// prism_pool_alloc_in takes size bytes from pool p on stream s and waits for the stream,
// so that every stream may use the memory at once; c is made current first.
static CUresult prism_pool_alloc_in(CUcontext c, CUmemoryPool p, size_t size, CUstream s, CUdeviceptr *d) {
	CUresult r = call_cuCtxSetCurrent(c);
	if (r != 0) return r;
	r = call_cuMemAllocFromPoolAsync(d, size, p, s);
	if (r != 0) return r;
	return call_cuStreamSynchronize(s);
}

// prism_pool_free_in returns d to its pool on stream s, with c current.
static CUresult prism_pool_free_in(CUcontext c, CUdeviceptr d, CUstream s) {
	CUresult r = call_cuCtxSetCurrent(c);
	return r != 0 ? r : call_cuMemFreeAsync(d, s);
}

typedef void *CUgraph;
typedef void *CUgraphExec;
TRAMPOLINE(CUresult, cuStreamBeginCapture, (CUstream s, int mode), (s, mode))
TRAMPOLINE(CUresult, cuStreamEndCapture, (CUstream s, CUgraph *g), (s, g))
TRAMPOLINE(CUresult, cuGraphInstantiateWithFlags, (CUgraphExec *e, CUgraph g, unsigned long long flags), (e, g, flags))
TRAMPOLINE(CUresult, cuGraphLaunch, (CUgraphExec e, CUstream s), (e, s))
TRAMPOLINE(CUresult, cuGraphExecDestroy, (CUgraphExec e), (e))
TRAMPOLINE(CUresult, cuGraphDestroy, (CUgraph g), (g))
typedef void *CUgraphNode;
TRAMPOLINE(CUresult, cuGraphGetNodes, (CUgraph g, CUgraphNode *nodes, size_t *n), (g, nodes, n))
TRAMPOLINE(CUresult, cuGraphNodeGetType, (CUgraphNode node, int *t), (node, t))

// prism_graph_node_types counts the nodes of g by their type (CUgraphNodeType, below
// ntypes; the others in the last slot), where the driver has the calls.
static void prism_graph_node_types(CUgraph g, size_t *types, int ntypes) {
	size_t n = 0;
	if (fns[fn_cuGraphGetNodes] == NULL || fns[fn_cuGraphNodeGetType] == NULL || call_cuGraphGetNodes(g, NULL, &n) != 0 || n == 0) return;
	CUgraphNode *v = (CUgraphNode *)malloc(n * sizeof *v);
	if (v != NULL && call_cuGraphGetNodes(g, v, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			int t = 0;
			if (call_cuGraphNodeGetType(v[i], &t) == 0) types[t >= 0 && t < ntypes - 1 ? t : ntypes - 1]++;
		}
	}
	free(v);
}

// prism_capture_end_in ends the capture of stream s and instantiates its graph, which it
// then destroys (the executable graph keeps what it needs), with c current. Where types is
// not NULL it first counts the graph's nodes by type (prism_graph_node_types).
static CUresult prism_capture_end_in(CUcontext c, CUstream s, CUgraphExec *e, size_t *types, int ntypes) {
	CUresult r = call_cuCtxSetCurrent(c);
	if (r != 0) return r;
	CUgraph g = NULL;
	r = call_cuStreamEndCapture(s, &g);
	if (r != 0) {
		if (g != NULL) call_cuGraphDestroy(g);
		return r;
	}
	if (types != NULL) prism_graph_node_types(g, types, ntypes);
	r = call_cuGraphInstantiateWithFlags(e, g, 0);
	call_cuGraphDestroy(g);
	return r;
}

// prism_graph_launch_in launches e on s with c current.
static CUresult prism_graph_launch_in(CUcontext c, CUgraphExec e, CUstream s) {
	CUresult r = call_cuCtxSetCurrent(c);
	return r != 0 ? r : call_cuGraphLaunch(e, s);
}

// prism_calloc_aligned returns size bytes of zeroed memory aligned to align (a power of
// two, a multiple of the size of a pointer), or NULL; free releases it.
static void *prism_calloc_aligned(size_t size, size_t align) {
	void *p = NULL;
	if (posix_memalign(&p, align, size) != 0) return NULL;
	memset(p, 0, size);
	return p;
}
TRAMPOLINE(nvrtcResult, nvrtcVersion, (int *major, int *minor), (major, minor))
TRAMPOLINE(nvrtcResult, nvrtcCreateProgram,
	(nvrtcProgram *p, const char *src, const char *name, int nh, const char *const *h, const char *const *hn),
	(p, src, name, nh, h, hn))
TRAMPOLINE(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram *p), (p))
TRAMPOLINE(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram p, int n, const char *const *opts), (p, n, opts))
TRAMPOLINE(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram p, size_t *n), (p, n))
TRAMPOLINE(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram p, char *log), (p, log))
TRAMPOLINE(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram p, size_t *n), (p, n))
TRAMPOLINE(nvrtcResult, nvrtcGetPTX, (nvrtcProgram p, char *ptx), (p, ptx))
TRAMPOLINE(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram p, size_t *n), (p, n))
TRAMPOLINE(nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram p, char *cubin), (p, cubin))
TRAMPOLINE(nvrtcResult, nvrtcGetNumSupportedArchs, (int *n), (n))
TRAMPOLINE(nvrtcResult, nvrtcGetSupportedArchs, (int *archs), (archs))

// prism_module_load loads a CUBIN or PTX image, keeping the JIT's error log (CUjit_option
// 5 = CU_JIT_ERROR_LOG_BUFFER, 6 = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES).
static CUresult prism_module_load(CUmodule *m, const void *image, char *log, size_t logsize) {
	int opts[2] = {5, 6};
	void *vals[2] = {log, (void *)logsize};
	return call_cuModuleLoadDataEx(m, image, 2, opts, vals);
}
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/prism-compute/prism/internal/dl"
)

// Library names, tried in order at the first call to Driver.Devices or Driver.Open (NVRTC's
// also in a toolkit's directory: toolkitCandidates). They are variables so that tests can
// point the loader at a library that does not exist.
var (
	cudaLibraries  = []string{"libcuda.so.1"}
	nvrtcLibraries = []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}
)

// symbol is one function the loader resolves: the first of names that the library
// exports is stored at index.
type symbol struct {
	index    C.int
	names    []string
	optional bool
}

var cudaSymbols = []symbol{
	{C.fn_cuInit, []string{"cuInit"}, false},
	{C.fn_cuDriverGetVersion, []string{"cuDriverGetVersion"}, false},
	{C.fn_cuDeviceGetCount, []string{"cuDeviceGetCount"}, false},
	{C.fn_cuDeviceGet, []string{"cuDeviceGet"}, false},
	{C.fn_cuDeviceGetName, []string{"cuDeviceGetName"}, false},
	{C.fn_cuDeviceGetAttribute, []string{"cuDeviceGetAttribute"}, false},
	{C.fn_cuDeviceTotalMem, []string{"cuDeviceTotalMem_v2"}, false},
	{C.fn_cuDeviceGetPCIBusId, []string{"cuDeviceGetPCIBusId"}, false},
	{C.fn_cuDevicePrimaryCtxRetain, []string{"cuDevicePrimaryCtxRetain"}, false},
	{C.fn_cuDevicePrimaryCtxRelease, []string{"cuDevicePrimaryCtxRelease_v2"}, false},
	{C.fn_cuCtxSetCurrent, []string{"cuCtxSetCurrent"}, false},
	{C.fn_cuCtxSynchronize, []string{"cuCtxSynchronize"}, false},
	{C.fn_cuMemGetInfo, []string{"cuMemGetInfo_v2"}, false},
	{C.fn_cuMemAlloc, []string{"cuMemAlloc_v2"}, false},
	{C.fn_cuMemFree, []string{"cuMemFree_v2"}, false},
	{C.fn_cuMemHostAlloc, []string{"cuMemHostAlloc"}, false},
	{C.fn_cuMemFreeHost, []string{"cuMemFreeHost"}, false},
	{C.fn_cuMemHostRegister, []string{"cuMemHostRegister_v2", "cuMemHostRegister"}, true},
	{C.fn_cuMemHostUnregister, []string{"cuMemHostUnregister"}, true},
	{C.fn_cuMemcpyHtoDAsync, []string{"cuMemcpyHtoDAsync_v2"}, false},
	{C.fn_cuMemcpyDtoHAsync, []string{"cuMemcpyDtoHAsync_v2"}, false},
	{C.fn_cuMemcpyDtoDAsync, []string{"cuMemcpyDtoDAsync_v2"}, false},
	{C.fn_cuMemcpyPeerAsync, []string{"cuMemcpyPeerAsync"}, false},
	{C.fn_cuCtxEnablePeerAccess, []string{"cuCtxEnablePeerAccess"}, true},
	{C.fn_cuMemsetD8Async, []string{"cuMemsetD8Async"}, false},
	{C.fn_cuMemsetD16Async, []string{"cuMemsetD16Async"}, false},
	{C.fn_cuMemsetD32Async, []string{"cuMemsetD32Async"}, false},
	{C.fn_cuStreamCreate, []string{"cuStreamCreate"}, false},
	{C.fn_cuStreamDestroy, []string{"cuStreamDestroy_v2"}, false},
	{C.fn_cuStreamQuery, []string{"cuStreamQuery"}, false},
	{C.fn_cuStreamSynchronize, []string{"cuStreamSynchronize"}, false},
	{C.fn_cuEventCreate, []string{"cuEventCreate"}, false},
	{C.fn_cuEventDestroy, []string{"cuEventDestroy_v2"}, false},
	{C.fn_cuEventRecord, []string{"cuEventRecord"}, false},
	{C.fn_cuEventQuery, []string{"cuEventQuery"}, false},
	{C.fn_cuEventSynchronize, []string{"cuEventSynchronize"}, true},
	// CUDA 12.8 added _v2 (same signature); the headers of 13.0 no longer declare the old one.
	{C.fn_cuEventElapsedTime, []string{"cuEventElapsedTime_v2", "cuEventElapsedTime"}, false},
	{C.fn_cuModuleLoadDataEx, []string{"cuModuleLoadDataEx"}, false},
	{C.fn_cuModuleUnload, []string{"cuModuleUnload"}, false},
	{C.fn_cuModuleGetFunction, []string{"cuModuleGetFunction"}, false},
	{C.fn_cuFuncGetAttribute, []string{"cuFuncGetAttribute"}, false},
	{C.fn_cuFuncSetAttribute, []string{"cuFuncSetAttribute"}, true}, // CUDA 9.0
	{C.fn_cuFuncGetParamInfo, []string{"cuFuncGetParamInfo"}, true}, // CUDA 12.4
	{C.fn_cuFuncGetParamCount, []string{"cuFuncGetParamCount"}, true},
	// cuLaunchKernelEx (CUDA 12.0) is looked up by the first launch in clusters (lazySymbol).
	{C.fn_cuLaunchKernel, []string{"cuLaunchKernel"}, false},
	{C.fn_cuOccupancyMaxActiveBlocksPerMultiprocessor, []string{"cuOccupancyMaxActiveBlocksPerMultiprocessor"}, false},
	{C.fn_cuTensorMapEncodeTiled, []string{"cuTensorMapEncodeTiled"}, true}, // CUDA 12.0
	{C.fn_cuStreamWaitEvent, []string{"cuStreamWaitEvent"}, true},
	// The stream-ordered allocator (CUDA 11.2); a device says whether it has it
	// (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED).
	{C.fn_cuMemPoolCreate, []string{"cuMemPoolCreate"}, true},
	{C.fn_cuMemPoolDestroy, []string{"cuMemPoolDestroy"}, true},
	{C.fn_cuMemPoolSetAttribute, []string{"cuMemPoolSetAttribute"}, true},
	{C.fn_cuMemPoolTrimTo, []string{"cuMemPoolTrimTo"}, true},
	{C.fn_cuMemPoolSetAccess, []string{"cuMemPoolSetAccess"}, true},
	{C.fn_cuMemAllocFromPoolAsync, []string{"cuMemAllocFromPoolAsync"}, true},
	{C.fn_cuMemFreeAsync, []string{"cuMemFreeAsync"}, true},
	// Graphs by stream capture (cuGraphInstantiateWithFlags: CUDA 11.4).
	{C.fn_cuStreamBeginCapture, []string{"cuStreamBeginCapture_v2"}, true},
	{C.fn_cuStreamEndCapture, []string{"cuStreamEndCapture"}, true},
	{C.fn_cuGraphInstantiateWithFlags, []string{"cuGraphInstantiateWithFlags"}, true},
	{C.fn_cuGraphLaunch, []string{"cuGraphLaunch"}, true},
	{C.fn_cuGraphExecDestroy, []string{"cuGraphExecDestroy"}, true},
	{C.fn_cuGraphDestroy, []string{"cuGraphDestroy"}, true},
	// A captured graph's nodes, counted for PRISM_TRACE (CUDA 10.0).
	{C.fn_cuGraphGetNodes, []string{"cuGraphGetNodes"}, true},
	{C.fn_cuGraphNodeGetType, []string{"cuGraphNodeGetType"}, true},
}

var nvrtcSymbols = []symbol{
	{C.fn_nvrtcVersion, []string{"nvrtcVersion"}, false},
	{C.fn_nvrtcCreateProgram, []string{"nvrtcCreateProgram"}, false},
	{C.fn_nvrtcDestroyProgram, []string{"nvrtcDestroyProgram"}, false},
	{C.fn_nvrtcCompileProgram, []string{"nvrtcCompileProgram"}, false},
	{C.fn_nvrtcGetProgramLogSize, []string{"nvrtcGetProgramLogSize"}, false},
	{C.fn_nvrtcGetProgramLog, []string{"nvrtcGetProgramLog"}, false},
	{C.fn_nvrtcGetPTXSize, []string{"nvrtcGetPTXSize"}, false},
	{C.fn_nvrtcGetPTX, []string{"nvrtcGetPTX"}, false},
	{C.fn_nvrtcGetCUBINSize, []string{"nvrtcGetCUBINSize"}, true},                 // NVRTC 11.1
	{C.fn_nvrtcGetCUBIN, []string{"nvrtcGetCUBIN"}, true},                         // NVRTC 11.1
	{C.fn_nvrtcGetNumSupportedArchs, []string{"nvrtcGetNumSupportedArchs"}, true}, // NVRTC 11.2
	{C.fn_nvrtcGetSupportedArchs, []string{"nvrtcGetSupportedArchs"}, true},       // NVRTC 11.2
}

// loader records the libraries whose functions are in the C table.
var loader struct {
	mu         sync.Mutex
	cudaPath   string         // the name that loaded, "" until then
	cudaHandle unsafe.Pointer // its dlopen handle, for symbols looked up on first use
	nvrtcPath  string
	lazy       map[C.int]bool // symbols looked up on first use: whether each was found
}

// loadLibraries loads libcuda and NVRTC, once: the first success is kept, a failure is
// tried again on the next call. The error wraps driver.ErrUnavailable (through errNoLibrary)
// and names every library tried with dlerror's message.
func loadLibraries() (cudaPath, nvrtcPath string, err error) {
	loader.mu.Lock()
	defer loader.mu.Unlock()
	var problems []string
	if loader.cudaPath == "" {
		p, h, msg := loadLibrary(cudaLibraries, cudaSymbols)
		if p == "" {
			problems = append(problems, fmt.Sprintf("the CUDA driver library (tried %s)", msg))
		}
		loader.cudaPath, loader.cudaHandle = p, h
	}
	if loader.nvrtcPath == "" {
		p, _, msg := loadLibrary(toolkitCandidates(nvrtcLibraries), nvrtcSymbols)
		if p == "" {
			problems = append(problems, fmt.Sprintf("NVRTC (tried %s)", msg))
		}
		loader.nvrtcPath = p
	}
	if len(problems) > 0 {
		return "", "", errNoLibrary(strings.Join(problems, " nor "))
	}
	return loader.cudaPath, loader.nvrtcPath, nil
}

// toolkitCandidates returns names, then each name in the library directories of a CUDA
// toolkit ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda) that exist: NVRTC ships with the
// toolkit, whose directory is often not known to the dynamic loader.
func toolkitCandidates(names []string) []string {
	out := slices.Clone(names)
	seen := map[string]bool{}
	for _, root := range []string{os.Getenv("CUDA_HOME"), os.Getenv("CUDA_PATH"), "/usr/local/cuda"} {
		dir := filepath.Join(root, "lib64")
		if root == "" || seen[dir] {
			continue
		}
		seen[dir] = true
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		for _, n := range names {
			if !strings.Contains(n, "/") {
				out = append(out, filepath.Join(dir, n))
			}
		}
	}
	return out
}

// loadLibrary opens the first of names that loads and exports every required symbol, and
// stores its functions in the C table. It returns the name that loaded and its handle, or
// "" and what went wrong with each name. The library stays open for the life of the
// process.
func loadLibrary(names []string, syms []symbol) (string, unsafe.Pointer, string) {
	ds := make([]dl.Symbol, len(syms))
	for i, s := range syms {
		ds[i] = dl.Symbol{Names: s.names, Optional: s.optional}
	}
	lib, tried := dl.Load(names, ds, nil)
	if lib != nil {
		for i, s := range syms {
			C.prism_set(s.index, lib.Fns[i])
		}
		return lib.Name, lib.Handle, ""
	}
	return "", nil, strings.Join(tried, "; ")
}

// lazySymbol looks up a driver function that only some launches need, the first time one
// needs it, and reports whether the driver exports it (a later call answers from memory).
// name is the symbol, of the signature the C table declares for index.
func lazySymbol(index C.int, name string) bool {
	loader.mu.Lock()
	defer loader.mu.Unlock()
	if found, ok := loader.lazy[index]; ok {
		return found
	}
	if loader.lazy == nil {
		loader.lazy = map[C.int]bool{}
	}
	var f unsafe.Pointer
	if loader.cudaHandle != nil {
		f = dl.Sym(loader.cudaHandle, name)
	}
	if f != nil {
		C.prism_set(index, f)
	}
	loader.lazy[index] = f != nil
	tracef("looked up %s on first use: found %v", name, f != nil)
	return f != nil
}

// have reports whether an optional function was found.
func have(index C.int) bool { return C.prism_have(index) != 0 }

// Opaque handles, as Go sees them.
type (
	cuContext  = C.CUcontext
	cuModule   = C.CUmodule
	cuFunction = C.CUfunction
	cuStream   = C.CUstream
	cuEvent    = C.CUevent
	devptr     = uint64
)

// Driver API wrappers. Each returns the call's Result.

func cuInit() Result { return Result(C.call_cuInit(0)) }

func cuDriverGetVersion() (int, Result) {
	var v C.int
	r := Result(C.call_cuDriverGetVersion(&v))
	return int(v), r
}

func cuDeviceGetCount() (int, Result) {
	var n C.int
	r := Result(C.call_cuDeviceGetCount(&n))
	return int(n), r
}

func cuDeviceGet(ordinal int) (int, Result) {
	var d C.CUdevice
	r := Result(C.call_cuDeviceGet(&d, C.int(ordinal)))
	return int(d), r
}

// maxDevices bounds the device count a driver is believed: more is a broken driver.
const maxDevices = 1024

// The buffers of strings the driver writes are one byte longer than the driver is told,
// and zeroed: a name the driver leaves unterminated still ends inside them.
func cuDeviceGetName(dev int) (string, Result) {
	buf := (*C.char)(C.calloc(257, 1))
	if buf == nil {
		return "", OutOfMemory
	}
	defer C.free(unsafe.Pointer(buf))
	r := Result(C.call_cuDeviceGetName(buf, 256, C.CUdevice(dev)))
	return C.GoString(buf), r
}

func cuDeviceGetAttribute(attr, dev int) (int, Result) {
	var v C.int
	r := Result(C.call_cuDeviceGetAttribute(&v, C.int(attr), C.CUdevice(dev)))
	return int(v), r
}

func cuDeviceTotalMem(dev int) (int64, Result) {
	var n C.size_t
	r := Result(C.call_cuDeviceTotalMem(&n, C.CUdevice(dev)))
	return int64(n), r
}

func cuDeviceGetPCIBusID(dev int) (string, Result) {
	buf := (*C.char)(C.calloc(65, 1))
	if buf == nil {
		return "", OutOfMemory
	}
	defer C.free(unsafe.Pointer(buf))
	r := Result(C.call_cuDeviceGetPCIBusId(buf, 64, C.CUdevice(dev)))
	return C.GoString(buf), r
}

func cuDevicePrimaryCtxRetain(dev int) (cuContext, Result) {
	var c C.CUcontext
	r := Result(C.call_cuDevicePrimaryCtxRetain(&c, C.CUdevice(dev)))
	return c, r
}

func cuDevicePrimaryCtxRelease(dev int) Result {
	return Result(C.call_cuDevicePrimaryCtxRelease(C.CUdevice(dev)))
}

func cuCtxSetCurrent(c cuContext) Result { return Result(C.call_cuCtxSetCurrent(c)) }
func cuCtxSynchronize() Result           { return Result(C.call_cuCtxSynchronize()) }

func cuMemGetInfo() (free, total int64, r Result) {
	var f, t C.size_t
	r = Result(C.call_cuMemGetInfo(&f, &t))
	return int64(f), int64(t), r
}

func cuMemAlloc(size int64) (devptr, Result) {
	var p C.CUdeviceptr
	r := Result(C.call_cuMemAlloc(&p, C.size_t(size)))
	return devptr(p), r
}

func cuMemFree(p devptr) Result { return Result(C.call_cuMemFree(C.CUdeviceptr(p))) }

// cuMemHostAllocPortable allocates page-locked host memory usable from every context
// (CU_MEMHOSTALLOC_PORTABLE).
func cuMemHostAllocPortable(size int64) (unsafe.Pointer, Result) {
	var p unsafe.Pointer
	r := Result(C.call_cuMemHostAlloc(&p, C.size_t(size), 1))
	return p, r
}

// cuMemHostAllocMapped allocates page-locked host memory that kernels can read
// (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP): with unified addressing, which
// every 64-bit platform CUDA supports has, the device reads it at the host's address.
func cuMemHostAllocMapped(size int64) (unsafe.Pointer, Result) {
	var p unsafe.Pointer
	r := Result(C.call_cuMemHostAlloc(&p, C.size_t(size), 3))
	return p, r
}

func cuMemFreeHost(p unsafe.Pointer) Result { return Result(C.call_cuMemFreeHost(p)) }

// cuMemHostRegisterPortable page-locks host memory allocated elsewhere, for every context
// (CU_MEMHOSTREGISTER_PORTABLE).
func cuMemHostRegisterPortable(p unsafe.Pointer, size int64) Result {
	return Result(C.call_cuMemHostRegister(p, C.size_t(size), 1))
}

func cuMemHostUnregister(p unsafe.Pointer) Result { return Result(C.call_cuMemHostUnregister(p)) }

// haveHostRegister reports whether the driver registers host memory.
func haveHostRegister() bool {
	return have(C.fn_cuMemHostRegister) && have(C.fn_cuMemHostUnregister)
}

func cuMemcpyHtoDAsync(dst devptr, src unsafe.Pointer, n int64, s cuStream) Result {
	return Result(C.call_cuMemcpyHtoDAsync(C.CUdeviceptr(dst), src, C.size_t(n), s))
}

func cuMemcpyDtoHAsync(dst unsafe.Pointer, src devptr, n int64, s cuStream) Result {
	return Result(C.call_cuMemcpyDtoHAsync(dst, C.CUdeviceptr(src), C.size_t(n), s))
}

func cuMemcpyDtoDAsync(dst, src devptr, n int64, s cuStream) Result {
	return Result(C.call_cuMemcpyDtoDAsync(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s))
}

func cuMemcpyPeerAsync(dst devptr, dc cuContext, src devptr, sc cuContext, n int64, s cuStream) Result {
	return Result(C.call_cuMemcpyPeerAsync(C.CUdeviceptr(dst), dc, C.CUdeviceptr(src), sc, C.size_t(n), s))
}

func cuMemsetD8Async(dst devptr, v uint8, n int64, s cuStream) Result {
	return Result(C.call_cuMemsetD8Async(C.CUdeviceptr(dst), C.uchar(v), C.size_t(n), s))
}

func cuMemsetD16Async(dst devptr, v uint16, n int64, s cuStream) Result {
	return Result(C.call_cuMemsetD16Async(C.CUdeviceptr(dst), C.ushort(v), C.size_t(n), s))
}

func cuMemsetD32Async(dst devptr, v uint32, n int64, s cuStream) Result {
	return Result(C.call_cuMemsetD32Async(C.CUdeviceptr(dst), C.uint(v), C.size_t(n), s))
}

func cuStreamCreate(flags uint) (cuStream, Result) {
	var s C.CUstream
	r := Result(C.call_cuStreamCreate(&s, C.uint(flags)))
	return s, r
}

func cuStreamDestroy(s cuStream) Result     { return Result(C.call_cuStreamDestroy(s)) }
func cuStreamQuery(s cuStream) Result       { return Result(C.call_cuStreamQuery(s)) }
func cuStreamSynchronize(s cuStream) Result { return Result(C.call_cuStreamSynchronize(s)) }

// cuEventCreate creates an event with the default flags: timing enabled.
func cuEventCreate() (cuEvent, Result) {
	var e C.CUevent
	r := Result(C.call_cuEventCreate(&e, 0))
	return e, r
}

func cuEventDestroy(e cuEvent) Result            { return Result(C.call_cuEventDestroy(e)) }
func cuEventRecord(e cuEvent, s cuStream) Result { return Result(C.call_cuEventRecord(e, s)) }
func cuEventQuery(e cuEvent) Result              { return Result(C.call_cuEventQuery(e)) }

func cuEventElapsedTime(start, end cuEvent) (float32, Result) {
	var ms C.float
	r := Result(C.call_cuEventElapsedTime(&ms, start, end))
	return float32(ms), r
}

// cuModuleLoad loads a CUBIN or a NUL-terminated PTX image and returns the JIT's error log.
func cuModuleLoad(image []byte) (cuModule, string, Result) {
	const logSize = 1 << 16
	log := (*C.char)(C.calloc(logSize, 1))
	defer C.free(unsafe.Pointer(log))
	img := C.CBytes(image)
	defer C.free(img)
	var m C.CUmodule
	r := Result(C.prism_module_load(&m, img, log, logSize))
	return m, strings.TrimSpace(C.GoString(log)), r
}

func cuModuleUnload(m cuModule) Result { return Result(C.call_cuModuleUnload(m)) }

func cuModuleGetFunction(m cuModule, name string) (cuFunction, Result) {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var f C.CUfunction
	r := Result(C.call_cuModuleGetFunction(&f, m, cn))
	return f, r
}

func cuFuncGetAttribute(attr int, f cuFunction) (int, Result) {
	var v C.int
	r := Result(C.call_cuFuncGetAttribute(&v, C.int(attr), f))
	return int(v), r
}

// haveFuncGetParamInfo reports whether the driver has cuFuncGetParamInfo (CUDA 12.4).
func haveFuncGetParamInfo() bool { return have(C.fn_cuFuncGetParamInfo) }

func cuFuncGetParamInfo(f cuFunction, i int) (offset, size int, r Result) {
	var off, sz C.size_t
	r = Result(C.call_cuFuncGetParamInfo(f, C.size_t(i), &off, &sz))
	return int(off), int(sz), r
}

// haveFuncGetParamCount reports whether the driver has cuFuncGetParamCount (newer than
// cuFuncGetParamInfo).
func haveFuncGetParamCount() bool { return have(C.fn_cuFuncGetParamCount) }

func cuFuncGetParamCount(f cuFunction) (int, Result) {
	var n C.size_t
	r := Result(C.call_cuFuncGetParamCount(f, &n))
	return int(n), r
}

// haveFuncSetAttribute reports whether the driver has cuFuncSetAttribute (CUDA 9.0).
func haveFuncSetAttribute() bool { return have(C.fn_cuFuncSetAttribute) }

func cuFuncSetAttribute(f cuFunction, attr, v int) Result {
	return Result(C.call_cuFuncSetAttribute(f, C.int(attr), C.int(v)))
}

// cuLaunchKernel launches f with shared bytes of dynamic shared memory per block. params
// points to C memory holding one pointer per kernel parameter.
func cuLaunchKernel(f cuFunction, grid, block [3]int, shared int64, s cuStream, params unsafe.Pointer) Result {
	return Result(C.call_cuLaunchKernel(f,
		C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]),
		C.uint(shared), s, (*unsafe.Pointer)(params), nil))
}

// cuLaunchKernelIn is cuLaunchKernel made from the calling goroutine with c current on its
// thread (prism_launch_in), without a hop to the device's thread.
func cuLaunchKernelIn(c cuContext, f cuFunction, grid, block [3]int, shared int64, s cuStream, params unsafe.Pointer) Result {
	return Result(C.prism_launch_in(c, f,
		C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]),
		C.uint(shared), s, (*unsafe.Pointer)(params)))
}

// cuStreamQueryIn and cuEventQueryIn are cuStreamQuery and cuEventQuery made from the
// calling goroutine with c current on its thread.
// cuCtxEnablePeerAccessIn lets context c reach the memory of context peer
// (cuCtxEnablePeerAccess with c current); NotFound where the driver lacks the call.
func cuCtxEnablePeerAccessIn(c, peer cuContext) Result {
	if !have(C.fn_cuCtxEnablePeerAccess) {
		return NotFound
	}
	return Result(C.prism_enable_peer_in(c, peer))
}

func cuStreamQueryIn(c cuContext, s cuStream) Result { return Result(C.prism_stream_query_in(c, s)) }

func haveStreamWaitEvent() bool { return have(C.fn_cuStreamWaitEvent) }

func cuStreamWaitEvent(s cuStream, e cuEvent) Result {
	return Result(C.call_cuStreamWaitEvent(s, e, 0))
}

// cuGraphExec is a CUgraphExec.
type cuGraphExec = C.CUgraphExec

func haveGraphs() bool {
	for _, f := range []C.int{C.fn_cuStreamBeginCapture, C.fn_cuStreamEndCapture, C.fn_cuGraphInstantiateWithFlags,
		C.fn_cuGraphLaunch, C.fn_cuGraphExecDestroy, C.fn_cuGraphDestroy} {
		if !have(f) {
			return false
		}
	}
	return true
}

// captureModeRelaxed is CU_STREAM_CAPTURE_MODE_RELAXED: the queue's commands come from
// whichever thread its goroutine runs on, and no other thread's calls are restricted.
const captureModeRelaxed = 2

func cuStreamBeginCapture(s cuStream) Result {
	return Result(C.call_cuStreamBeginCapture(s, captureModeRelaxed))
}

// graphNodeTypes are the names of CUgraphNodeType (cuda.h, CUDA 12), in its order; the
// last counts the types a newer driver has.
var graphNodeTypes = [...]string{"kernel", "memcpy", "memset", "host", "graph", "empty",
	"event wait", "event record", "semaphore signal", "semaphore wait", "allocation", "free",
	"memory operation", "conditional", "other"}

// cuStreamEndCaptureIn ends a capture and instantiates its graph, with c current. With
// count, it returns the captured graph's nodes by type (graphNodeTypes' order; nil where
// the driver cannot tell).
func cuStreamEndCaptureIn(c cuContext, s cuStream, count bool) (cuGraphExec, []int, Result) {
	var e C.CUgraphExec
	if !count {
		return e, nil, Result(C.prism_capture_end_in(c, s, &e, nil, 0))
	}
	var types [len(graphNodeTypes)]C.size_t
	r := Result(C.prism_capture_end_in(c, s, &e, &types[0], C.int(len(types))))
	out := make([]int, len(types))
	for i, n := range types {
		out[i] = int(n)
	}
	return e, out, r
}

func cuGraphLaunchIn(c cuContext, e cuGraphExec, s cuStream) Result {
	return Result(C.prism_graph_launch_in(c, e, s))
}

func cuGraphExecDestroy(e cuGraphExec) Result { return Result(C.call_cuGraphExecDestroy(e)) }

// cuMemoryPool is a CUmemoryPool.
type cuMemoryPool = C.CUmemoryPool

func haveMemPools() bool {
	for _, f := range []C.int{C.fn_cuMemPoolCreate, C.fn_cuMemPoolDestroy, C.fn_cuMemPoolSetAttribute,
		C.fn_cuMemPoolTrimTo, C.fn_cuMemAllocFromPoolAsync, C.fn_cuMemFreeAsync} {
		if !have(f) {
			return false
		}
	}
	return true
}

// cuMemPoolCreateDevice makes a pool of the device's memory that keeps what is freed
// (prism_pool_create).
func cuMemPoolCreateDevice(ordinal int) (cuMemoryPool, Result) {
	var p C.CUmemoryPool
	r := Result(C.prism_pool_create(&p, C.int(ordinal)))
	return p, r
}

func cuMemPoolDestroy(p cuMemoryPool) Result { return Result(C.call_cuMemPoolDestroy(p)) }

// cuMemPoolGrant lets device ordinal read and write the memory of pool p
// (cuMemPoolSetAccess); NotFound where the driver lacks the call.
func cuMemPoolGrant(p cuMemoryPool, ordinal int) Result {
	if !have(C.fn_cuMemPoolSetAccess) {
		return NotFound
	}
	return Result(C.prism_pool_grant(p, C.int(ordinal)))
}

func cuMemPoolTrimTo(p cuMemoryPool, keep int64) Result {
	return Result(C.call_cuMemPoolTrimTo(p, C.size_t(keep)))
}

// cuMemAllocFromPoolIn allocates from p on s and waits for s, with c current on the
// calling thread.
func cuMemAllocFromPoolIn(c cuContext, p cuMemoryPool, size int64, s cuStream) (devptr, Result) {
	var d C.CUdeviceptr
	r := Result(C.prism_pool_alloc_in(c, p, C.size_t(size), s, &d))
	return devptr(d), r
}

// cuMemFreeAsyncIn returns d to its pool on s, with c current on the calling thread.
func cuMemFreeAsyncIn(c cuContext, d devptr, s cuStream) Result {
	return Result(C.prism_pool_free_in(c, C.CUdeviceptr(d), s))
}
func cuEventQueryIn(c cuContext, e cuEvent) Result { return Result(C.prism_event_query_in(c, e)) }

// cuStreamSynchronizeIn and cuEventSynchronizeIn block in the driver until the stream's
// work or the event is done, with c made current in the same C call. haveEventSynchronize
// says whether the driver has cuEventSynchronize (every libcuda does; a test's fake may
// not).
func cuStreamSynchronizeIn(c cuContext, s cuStream) Result {
	return Result(C.prism_stream_sync_in(c, s))
}
func cuEventSynchronizeIn(c cuContext, e cuEvent) Result { return Result(C.prism_event_sync_in(c, e)) }
func haveEventSynchronize() bool                         { return have(C.fn_cuEventSynchronize) }

// haveLaunchKernelEx reports whether the driver has cuLaunchKernelEx (CUDA 12.0), looking
// it up on first use.
func haveLaunchKernelEx() bool { return lazySymbol(C.fn_cuLaunchKernelEx, "cuLaunchKernelEx") }

// cuLaunchKernelEx launches f in thread-block clusters of the given shape
// (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION); the rest is as cuLaunchKernel. The caller checks
// haveLaunchKernelEx first.
func cuLaunchKernelEx(f cuFunction, grid, block, cluster [3]int, shared int64, s cuStream, params unsafe.Pointer) Result {
	return Result(C.prism_launch_cluster(f,
		C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]),
		C.uint(shared), s, (*unsafe.Pointer)(params),
		C.uint(cluster[0]), C.uint(cluster[1]), C.uint(cluster[2])))
}

func cuOccupancyMaxActiveBlocksPerMultiprocessor(f cuFunction, block int, shared int64) (int, Result) {
	var n C.int
	r := Result(C.call_cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, C.int(block), C.size_t(shared)))
	return int(n), r
}

// haveTensorMapEncodeTiled reports whether the driver has cuTensorMapEncodeTiled (CUDA
// 12.0).
func haveTensorMapEncodeTiled() bool { return have(C.fn_cuTensorMapEncodeTiled) }

// cuTensorMapEncodeTiled encodes a tiled tensor map of len(dims) dimensions (1 to 5, with
// len(dims)-1 strides and len(dims) box sizes) of the tensor at addr, of elements of
// dataType (CUtensorMapDataType), with the swizzle and L2 promotion given as
// CUtensorMapSwizzle and CUtensorMapL2promotion (prism_tensor_map_encode). The caller
// checks haveTensorMapEncodeTiled first, and the lengths.
func cuTensorMapEncodeTiled(dataType int, addr devptr, dims, strides []uint64, box []uint32, swizzle, l2Promotion int) ([128]byte, Result) {
	var d, s [5]C.ulonglong
	var b [5]C.uint
	for i := range dims {
		d[i], b[i] = C.ulonglong(dims[i]), C.uint(box[i])
	}
	for i := range strides {
		s[i] = C.ulonglong(strides[i])
	}
	var out [128]byte
	r := Result(C.prism_tensor_map_encode(unsafe.Pointer(&out[0]), C.int(dataType), C.uint(len(dims)), C.CUdeviceptr(addr),
		&d[0], &s[0], &b[0], C.int(swizzle), C.int(l2Promotion)))
	return out, r
}

// NVRTC wrappers.

func nvrtcVersion() (major, minor int, r NVRTCResult) {
	var ma, mi C.int
	r = NVRTCResult(C.call_nvrtcVersion(&ma, &mi))
	return int(ma), int(mi), r
}

// nvrtcSupportedArchs returns the compute capabilities NVRTC can compile for (75, 80, ...),
// or nil if it cannot tell (before NVRTC 11.2).
func nvrtcSupportedArchs() []int {
	if !have(C.fn_nvrtcGetNumSupportedArchs) || !have(C.fn_nvrtcGetSupportedArchs) {
		return nil
	}
	var n C.int
	if C.call_nvrtcGetNumSupportedArchs(&n) != 0 || n <= 0 || n > 1024 {
		return nil
	}
	buf := (*C.int)(C.calloc(C.size_t(n), C.sizeof_int))
	if buf == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(buf))
	if C.call_nvrtcGetSupportedArchs(buf) != 0 {
		return nil
	}
	out := make([]int, int(n))
	for i, v := range unsafe.Slice(buf, int(n)) {
		out[i] = int(v)
	}
	return out
}

// haveCUBIN reports whether NVRTC can return CUBIN (nvrtcGetCUBIN, NVRTC 11.1).
func haveCUBIN() bool { return have(C.fn_nvrtcGetCUBINSize) && have(C.fn_nvrtcGetCUBIN) }

// nvrtcOutput is what one compilation produced.
type nvrtcOutput struct {
	image []byte // CUBIN, or PTX with its terminating NUL
	log   string
}

// cStrings copies strs to a C array of C strings; free releases both. A nil array stands
// for an empty list.
func cStrings(strs []string) (array **C.char, free func()) {
	if len(strs) == 0 {
		return nil, func() {}
	}
	array = (**C.char)(C.calloc(C.size_t(len(strs)), C.size_t(unsafe.Sizeof(uintptr(0)))))
	list := unsafe.Slice(array, len(strs))
	for i, s := range strs {
		list[i] = C.CString(s)
	}
	return array, func() {
		for _, p := range list {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(array))
	}
}

// nvrtcCompile compiles src (named name in the log) with options and the in-memory
// headers (the sources of the files that #include names by includeNames) and returns the
// CUBIN (cubin) or the PTX. The log is returned whatever the outcome; call names the
// failing NVRTC function when r is not NVRTCSuccess.
func nvrtcCompile(src, name string, headers []header, options []string, cubin bool) (out nvrtcOutput, call string, r NVRTCResult) {
	csrc := C.CString(src)
	defer C.free(unsafe.Pointer(csrc))
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	texts, names := make([]string, len(headers)), make([]string, len(headers))
	for i, h := range headers {
		texts[i], names[i] = h.text, h.name
	}
	ctexts, freeTexts := cStrings(texts)
	defer freeTexts()
	cnames, freeNames := cStrings(names)
	defer freeNames()
	var prog C.nvrtcProgram
	r = NVRTCResult(C.call_nvrtcCreateProgram(&prog, csrc, cname, C.int(len(headers)),
		(**C.char)(unsafe.Pointer(ctexts)), (**C.char)(unsafe.Pointer(cnames))))
	if r != NVRTCSuccess {
		return out, "nvrtcCreateProgram", r
	}
	defer C.call_nvrtcDestroyProgram(&prog)

	copts, freeOpts := cStrings(options)
	defer freeOpts()
	compiled := NVRTCResult(C.call_nvrtcCompileProgram(prog, C.int(len(options)), copts))

	var logSize C.size_t
	switch {
	case C.call_nvrtcGetProgramLogSize(prog, &logSize) != 0 || logSize <= 1:
	case logSize > maxLogBytes:
		out.log = fmt.Sprintf("(NVRTC reports a compiler log of %d bytes, over the %d read)", uint64(logSize), maxLogBytes)
	default:
		buf := (*C.char)(C.calloc(logSize+1, 1))
		if buf == nil {
			out.log = fmt.Sprintf("(no memory for the compiler log of %d bytes)", uint64(logSize))
			break
		}
		if C.call_nvrtcGetProgramLog(prog, buf) == 0 {
			out.log = strings.TrimRight(C.GoString(buf), "\n\x00 ")
		}
		C.free(unsafe.Pointer(buf))
	}
	if compiled != NVRTCSuccess {
		return out, "nvrtcCompileProgram", compiled
	}

	var size C.size_t
	if cubin {
		if r = NVRTCResult(C.call_nvrtcGetCUBINSize(prog, &size)); r != NVRTCSuccess {
			return out, "nvrtcGetCUBINSize", r
		}
	} else if r = NVRTCResult(C.call_nvrtcGetPTXSize(prog, &size)); r != NVRTCSuccess {
		return out, "nvrtcGetPTXSize", r
	}
	if size == 0 || size > maxImageBytes {
		call := "nvrtcGetPTXSize"
		if cubin {
			call = "nvrtcGetCUBINSize"
		}
		return out, fmt.Sprintf("%s (%d bytes, outside 1 to %d)", call, uint64(size), maxImageBytes), NVRTCImageRefused
	}
	buf := (*C.char)(C.calloc(size+1, 1))
	if buf == nil {
		return out, fmt.Sprintf("calloc(%d bytes)", uint64(size)+1), NVRTCHostOutOfMemory
	}
	defer C.free(unsafe.Pointer(buf))
	if cubin {
		if r = NVRTCResult(C.call_nvrtcGetCUBIN(prog, buf)); r != NVRTCSuccess {
			return out, "nvrtcGetCUBIN", r
		}
	} else if r = NVRTCResult(C.call_nvrtcGetPTX(prog, buf)); r != NVRTCSuccess {
		return out, "nvrtcGetPTX", r
	}
	out.image = C.GoBytes(unsafe.Pointer(buf), C.int(size))
	return out, "", NVRTCSuccess
}

// maxLogBytes and maxImageBytes bound what NVRTC says it produced: a compiler log is read
// up to 16 MiB, a module image up to 1 GiB (C.GoBytes takes an int32 length); a driver
// claiming more is not believed.
const (
	maxLogBytes   = 16 << 20
	maxImageBytes = 1 << 30
)

// cMemory is a block of C memory, for kernel parameters that the driver reads through
// pointers (it must not read Go memory after the call that received it returns, and the
// pointers in a kernelParams array must not point into Go memory at all).
type cMemory struct{ p unsafe.Pointer }

// cAlign is the alignment of the blocks cAlloc returns: that of the most aligned kernel
// parameter, a tensor map (64 bytes).
const cAlign = 64

// cAlloc returns size bytes of zeroed C memory aligned to cAlign.
func cAlloc(size int) cMemory {
	if size < 1 {
		size = 1
	}
	return cMemory{C.prism_calloc_aligned(C.size_t(size), cAlign)}
}

func (m cMemory) bytes(n int) []byte { return unsafe.Slice((*byte)(m.p), n) }
func (m cMemory) free()              { C.free(m.p) }

// cScratch is C memory reused from call to call, grown as needed; its user serializes the
// calls.
type cScratch struct {
	m    cMemory
	size int
}

// get returns at least n bytes, valid until the next get or free.
func (s *cScratch) get(n int) cMemory {
	if n > s.size {
		s.free()
		s.m, s.size = cAlloc(max(n, 256)), max(n, 256)
	}
	return s.m
}

// free releases the memory. Idempotent.
func (s *cScratch) free() {
	if s.size > 0 {
		s.m.free()
		s.m, s.size = cMemory{}, 0
	}
}
