/*
 * A fake OpenCL driver (an ICD that ocl-icd loads) for TestFaultyICD. It implements what
 * the cl package calls, on host memory: platform and device queries, contexts, queues with
 * profiling, buffers (read, write, fill, copy, map, unmap), programs from source, kernels,
 * launches that do nothing but return an event, markers, barriers, event times, waits.
 * Every command completes when it is enqueued. The FAKE_* environment variables, read at
 * each call, make it misbehave:
 *
 *   FAKE_PLATFORMS=n       report n platforms (at most 64), one device each by default
 *   FAKE_DEVICES=n         clGetDeviceIDs reports n devices (any cl_uint; at most 128 exist)
 *   FAKE_HUGE_PARAM=0x...  that clGetPlatformInfo / clGetDeviceInfo /
 *                          clGetKernelWorkGroupInfo query claims a size of 1 TiB
 *   FAKE_NAME_NOTERM=1     CL_DEVICE_NAME is 64 bytes with no terminator
 *   FAKE_CONTEXT_ERR=code  clCreateContext fails with that status
 *   FAKE_QUEUE_ERR=code    clCreateCommandQueue fails with that status
 *   FAKE_ALLOC_OK=n        clCreateBuffer fails after n successful allocations ...
 *   FAKE_ALLOC_ERR=code    ... with that status (default CL_MEM_OBJECT_ALLOCATION_FAILURE)
 *   FAKE_MAP_ERR=code      clEnqueueMapBuffer fails with that status
 *   FAKE_BUILD_ERR=code    clBuildProgram fails with that status
 *   FAKE_LOG_SIZE=n        the build log claims n bytes
 *   FAKE_TS_START=ns, FAKE_TS_END=ns   every event's start and end times
 *
 * Any function of the dispatch table it does not implement aborts the process with a
 * message, so that a call the test did not foresee is seen at once.
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl_icd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct _cl_icd_dispatch table;

/* Every object starts with the dispatch table, as the ICD extension requires. */
struct _cl_platform_id { struct _cl_icd_dispatch *dispatch; };
struct _cl_device_id { struct _cl_icd_dispatch *dispatch; };
struct _cl_context { struct _cl_icd_dispatch *dispatch; int refs; };
struct _cl_command_queue { struct _cl_icd_dispatch *dispatch; int refs; };
struct _cl_mem { struct _cl_icd_dispatch *dispatch; int refs; size_t size; unsigned char *host; };
struct _cl_program { struct _cl_icd_dispatch *dispatch; int refs; };
struct _cl_kernel { struct _cl_icd_dispatch *dispatch; int refs; };
struct _cl_event { struct _cl_icd_dispatch *dispatch; int refs; };

#define MAX_PLATFORMS 64
#define MAX_DEVICES 128
static struct _cl_platform_id platforms[MAX_PLATFORMS];
static struct _cl_device_id devices[MAX_DEVICES];
static long allocations; /* successful clCreateBuffer calls */

static long long env(const char *name, long long def) {
	const char *v = getenv(name);
	return v && *v ? strtoll(v, NULL, 0) : def;
}

static int huge(unsigned param) { return getenv("FAKE_HUGE_PARAM") && (unsigned)env("FAKE_HUGE_PARAM", 0) == param; }

static const size_t TiB = (size_t)1 << 40;

/* answer copies an n-byte answer the way every clGet*Info call does. */
static cl_int answer(const void *v, size_t n, size_t size, void *value, size_t *ret) {
	if (value) {
		if (size < n)
			return CL_INVALID_VALUE;
		memcpy(value, v, n);
	}
	if (ret)
		*ret = n;
	return CL_SUCCESS;
}

/* claim answers a query whose size is a lie: the size only, never the bytes. */
static cl_int claim(size_t n, size_t size, void *value, size_t *ret) {
	if (value && size < n)
		return CL_INVALID_VALUE;
	if (value)
		memset(value, 'X', size);
	if (ret)
		*ret = n;
	return CL_SUCCESS;
}

#define STR(s) answer(s, sizeof(s), size, value, ret)
#define VAL(type, x) do { type v_ = (x); return answer(&v_, sizeof v_, size, value, ret); } while (0)

static cl_event new_event(void) {
	cl_event e = calloc(1, sizeof *e);
	e->dispatch = &table;
	e->refs = 1;
	return e;
}

static void give_event(cl_event *out) {
	if (out)
		*out = new_event();
}

/* Platforms and devices */

static cl_uint platform_count(void) {
	long long n = env("FAKE_PLATFORMS", 1);
	return n < 1 ? 1 : n > MAX_PLATFORMS ? MAX_PLATFORMS : (cl_uint)n;
}

static cl_int icd_platform_ids(cl_uint n, cl_platform_id *out, cl_uint *count) {
	cl_uint have = platform_count();
	if (count)
		*count = have;
	for (cl_uint i = 0; out && i < n && i < have; i++) {
		platforms[i].dispatch = &table;
		out[i] = &platforms[i];
	}
	return CL_SUCCESS;
}

static cl_int fake_clGetPlatformInfo(cl_platform_id p, cl_platform_info param, size_t size, void *value, size_t *ret) {
	if (huge(param))
		return claim(TiB, size, value, ret);
	switch (param) {
	case CL_PLATFORM_NAME: return STR("Fake ICD");
	case CL_PLATFORM_VENDOR: return STR("Prism test");
	case CL_PLATFORM_VERSION: return STR("OpenCL 1.2 Fake");
	case CL_PLATFORM_PROFILE: return STR("FULL_PROFILE");
	case CL_PLATFORM_EXTENSIONS: return STR("cl_khr_icd");
	case CL_PLATFORM_ICD_SUFFIX_KHR: return STR("Fake");
	}
	return CL_INVALID_VALUE;
}

static cl_int fake_clGetDeviceIDs(cl_platform_id p, cl_device_type type, cl_uint n, cl_device_id *out, cl_uint *count) {
	if (!(type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT)) && type != CL_DEVICE_TYPE_ALL)
		return CL_DEVICE_NOT_FOUND;
	cl_uint claimed = (cl_uint)env("FAKE_DEVICES", 1);
	if (claimed == 0)
		return CL_DEVICE_NOT_FOUND;
	if (count)
		*count = claimed;
	for (cl_uint i = 0; out && i < n && i < claimed && i < MAX_DEVICES; i++) {
		devices[i].dispatch = &table;
		out[i] = &devices[i];
	}
	return CL_SUCCESS;
}

static cl_int fake_clGetDeviceInfo(cl_device_id d, cl_device_info param, size_t size, void *value, size_t *ret) {
	if (huge(param))
		return claim(TiB, size, value, ret);
	switch (param) {
	case CL_DEVICE_NAME:
		if (env("FAKE_NAME_NOTERM", 0)) {
			char name[64];
			memset(name, 'N', sizeof name);
			return answer(name, sizeof name, size, value, ret);
		}
		return STR("Fake Device");
	case CL_DEVICE_VENDOR: return STR("Prism test");
	case CL_DEVICE_VERSION: return STR("OpenCL 1.2 Fake");
	case CL_DRIVER_VERSION: return STR("1.0");
	case CL_DEVICE_OPENCL_C_VERSION: return STR("OpenCL C 1.2");
	case CL_DEVICE_EXTENSIONS: return STR("cl_khr_byte_addressable_store");
	case CL_DEVICE_TYPE: VAL(cl_device_type, CL_DEVICE_TYPE_GPU);
	case CL_DEVICE_MAX_COMPUTE_UNITS: VAL(cl_uint, 4);
	case CL_DEVICE_MAX_CLOCK_FREQUENCY: VAL(cl_uint, 1000);
	case CL_DEVICE_GLOBAL_MEM_SIZE: VAL(cl_ulong, (cl_ulong)1 << 30);
	case CL_DEVICE_MAX_MEM_ALLOC_SIZE: VAL(cl_ulong, (cl_ulong)1 << 28);
	case CL_DEVICE_LOCAL_MEM_SIZE: VAL(cl_ulong, 32768);
	case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: VAL(cl_ulong, 1 << 20);
	case CL_DEVICE_MAX_WORK_GROUP_SIZE: VAL(size_t, 256);
	case CL_DEVICE_DOUBLE_FP_CONFIG: VAL(cl_ulong, 0);
	case CL_DEVICE_PROFILING_TIMER_RESOLUTION: VAL(size_t, 1);
	case CL_DEVICE_AVAILABLE: VAL(cl_bool, CL_TRUE);
	case CL_DEVICE_COMPILER_AVAILABLE: VAL(cl_bool, CL_TRUE);
	case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS: VAL(cl_uint, 3);
	case CL_DEVICE_MAX_WORK_ITEM_SIZES: {
		size_t s[3] = {256, 256, 64};
		return answer(s, sizeof s, size, value, ret);
	}
	}
	return CL_INVALID_VALUE;
}

static cl_int fake_retain_release(void *o) { return CL_SUCCESS; }

/* Contexts and queues */

static cl_context fake_clCreateContext(const cl_context_properties *props, cl_uint n, const cl_device_id *devs,
                                       void (CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                       void *user, cl_int *err) {
	cl_int code = (cl_int)env("FAKE_CONTEXT_ERR", 0);
	if (code) {
		if (err)
			*err = code;
		return NULL;
	}
	cl_context c = calloc(1, sizeof *c);
	c->dispatch = &table;
	c->refs = 1;
	if (err)
		*err = CL_SUCCESS;
	return c;
}

static cl_int fake_clReleaseContext(cl_context c) {
	if (--c->refs == 0)
		free(c);
	return CL_SUCCESS;
}

static cl_command_queue fake_clCreateCommandQueue(cl_context c, cl_device_id d, cl_command_queue_properties props, cl_int *err) {
	cl_int code = (cl_int)env("FAKE_QUEUE_ERR", 0);
	if (code) {
		if (err)
			*err = code;
		return NULL;
	}
	cl_command_queue q = calloc(1, sizeof *q);
	q->dispatch = &table;
	q->refs = 1;
	if (err)
		*err = CL_SUCCESS;
	return q;
}

static cl_int fake_clReleaseCommandQueue(cl_command_queue q) {
	if (--q->refs == 0)
		free(q);
	return CL_SUCCESS;
}

static cl_int fake_success_queue(cl_command_queue q) { return CL_SUCCESS; }

/* Buffers */

static cl_mem fake_clCreateBuffer(cl_context c, cl_mem_flags flags, size_t size, void *host, cl_int *err) {
	long long ok = env("FAKE_ALLOC_OK", -1);
	cl_int code = CL_SUCCESS;
	cl_mem m = NULL;
	if (ok >= 0 && allocations >= ok)
		code = (cl_int)env("FAKE_ALLOC_ERR", CL_MEM_OBJECT_ALLOCATION_FAILURE);
	else if (size == 0)
		code = CL_INVALID_BUFFER_SIZE;
	else if (!(m = calloc(1, sizeof *m)) || !(m->host = calloc(size, 1))) {
		free(m);
		m = NULL;
		code = CL_MEM_OBJECT_ALLOCATION_FAILURE;
	}
	if (err)
		*err = code;
	if (!m)
		return NULL;
	m->dispatch = &table;
	m->refs = 1;
	m->size = size;
	allocations++;
	return m;
}

static cl_int fake_clReleaseMemObject(cl_mem m) {
	if (--m->refs == 0) {
		free(m->host);
		free(m);
	}
	return CL_SUCCESS;
}

static int outside(cl_mem m, size_t offset, size_t n) { return !m || offset > m->size || n > m->size - offset; }

static cl_int fake_clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t offset, size_t n, void *dst,
                                       cl_uint nw, const cl_event *wait, cl_event *ev) {
	if (outside(m, offset, n))
		return CL_INVALID_VALUE;
	memcpy(dst, m->host + offset, n);
	give_event(ev);
	return CL_SUCCESS;
}

static cl_int fake_clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t offset, size_t n,
                                        const void *src, cl_uint nw, const cl_event *wait, cl_event *ev) {
	if (outside(m, offset, n))
		return CL_INVALID_VALUE;
	memcpy(m->host + offset, src, n);
	give_event(ev);
	return CL_SUCCESS;
}

static cl_int fake_clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t so, size_t dO, size_t n,
                                       cl_uint nw, const cl_event *wait, cl_event *ev) {
	if (outside(src, so, n) || outside(dst, dO, n))
		return CL_INVALID_VALUE;
	memmove(dst->host + dO, src->host + so, n);
	give_event(ev);
	return CL_SUCCESS;
}

static cl_int fake_clEnqueueFillBuffer(cl_command_queue q, cl_mem m, const void *pattern, size_t psize, size_t offset,
                                       size_t n, cl_uint nw, const cl_event *wait, cl_event *ev) {
	if (outside(m, offset, n) || psize == 0 || n % psize || offset % psize)
		return CL_INVALID_VALUE;
	for (size_t i = 0; i < n; i += psize)
		memcpy(m->host + offset + i, pattern, psize);
	give_event(ev);
	return CL_SUCCESS;
}

static void *fake_clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool block, cl_map_flags flags, size_t offset,
                                     size_t n, cl_uint nw, const cl_event *wait, cl_event *ev, cl_int *err) {
	cl_int code = (cl_int)env("FAKE_MAP_ERR", 0);
	if (!code && (outside(m, offset, n) || n == 0))
		code = CL_INVALID_VALUE;
	if (err)
		*err = code;
	if (code)
		return NULL;
	give_event(ev);
	return m->host + offset;
}

static cl_int fake_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p, cl_uint nw, const cl_event *wait,
                                           cl_event *ev) {
	if (!m || (unsigned char *)p < m->host || (unsigned char *)p >= m->host + m->size)
		return CL_INVALID_VALUE;
	give_event(ev);
	return CL_SUCCESS;
}

static cl_int fake_clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint nw, const cl_event *wait, cl_event *ev) {
	if (!nw != !wait)
		return CL_INVALID_EVENT_WAIT_LIST;
	give_event(ev);
	return CL_SUCCESS;
}

/* Programs and kernels */

static cl_program fake_clCreateProgramWithSource(cl_context c, cl_uint n, const char **src, const size_t *len, cl_int *err) {
	cl_program p = calloc(1, sizeof *p);
	p->dispatch = &table;
	p->refs = 1;
	if (err)
		*err = CL_SUCCESS;
	return p;
}

static cl_int fake_clReleaseProgram(cl_program p) {
	if (--p->refs == 0)
		free(p);
	return CL_SUCCESS;
}

static cl_int fake_clBuildProgram(cl_program p, cl_uint n, const cl_device_id *devs, const char *options,
                                  void (CL_CALLBACK *notify)(cl_program, void *), void *user) {
	return (cl_int)env("FAKE_BUILD_ERR", CL_SUCCESS);
}

static cl_int fake_clGetProgramBuildInfo(cl_program p, cl_device_id d, cl_program_build_info param, size_t size,
                                         void *value, size_t *ret) {
	switch (param) {
	case CL_PROGRAM_BUILD_LOG:
		if (getenv("FAKE_LOG_SIZE"))
			return claim((size_t)env("FAKE_LOG_SIZE", 1), size, value, ret);
		return STR("fake build log");
	case CL_PROGRAM_BUILD_STATUS:
		VAL(cl_build_status, env("FAKE_BUILD_ERR", 0) ? CL_BUILD_ERROR : CL_BUILD_SUCCESS);
	case CL_PROGRAM_BUILD_OPTIONS:
		return STR("");
	}
	return CL_INVALID_VALUE;
}

static cl_kernel fake_clCreateKernel(cl_program p, const char *name, cl_int *err) {
	cl_kernel k = calloc(1, sizeof *k);
	k->dispatch = &table;
	k->refs = 1;
	if (err)
		*err = CL_SUCCESS;
	return k;
}

static cl_int fake_clReleaseKernel(cl_kernel k) {
	if (--k->refs == 0)
		free(k);
	return CL_SUCCESS;
}

static cl_int fake_clSetKernelArg(cl_kernel k, cl_uint i, size_t size, const void *value) { return CL_SUCCESS; }

static cl_int fake_clGetKernelInfo(cl_kernel k, cl_kernel_info param, size_t size, void *value, size_t *ret) {
	switch (param) {
	case CL_KERNEL_NUM_ARGS: VAL(cl_uint, 1);
	case CL_KERNEL_REFERENCE_COUNT: VAL(cl_uint, (cl_uint)k->refs);
	}
	return CL_INVALID_VALUE;
}

static cl_int fake_clGetKernelWorkGroupInfo(cl_kernel k, cl_device_id d, cl_kernel_work_group_info param, size_t size,
                                            void *value, size_t *ret) {
	if (huge(param))
		return claim(TiB, size, value, ret);
	switch (param) {
	case CL_KERNEL_WORK_GROUP_SIZE: VAL(size_t, 256);
	case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: VAL(size_t, 32);
	case CL_KERNEL_LOCAL_MEM_SIZE: VAL(cl_ulong, 0);
	case CL_KERNEL_PRIVATE_MEM_SIZE: VAL(cl_ulong, 0);
	}
	return CL_INVALID_VALUE;
}

static cl_int fake_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *offset,
                                          const size_t *global, const size_t *local, cl_uint nw, const cl_event *wait,
                                          cl_event *ev) {
	if (dims < 1 || dims > 3)
		return CL_INVALID_WORK_DIMENSION;
	give_event(ev);
	return CL_SUCCESS;
}

/* Events */

static cl_int fake_clRetainEvent(cl_event e) {
	e->refs++;
	return CL_SUCCESS;
}

static cl_int fake_clReleaseEvent(cl_event e) {
	if (--e->refs == 0)
		free(e);
	return CL_SUCCESS;
}

static cl_int fake_clWaitForEvents(cl_uint n, const cl_event *evs) { return n && evs ? CL_SUCCESS : CL_INVALID_VALUE; }

static cl_int fake_clGetEventInfo(cl_event e, cl_event_info param, size_t size, void *value, size_t *ret) {
	switch (param) {
	case CL_EVENT_COMMAND_EXECUTION_STATUS: VAL(cl_int, CL_COMPLETE);
	case CL_EVENT_REFERENCE_COUNT: VAL(cl_uint, (cl_uint)e->refs);
	}
	return CL_INVALID_VALUE;
}

static cl_int fake_clGetEventProfilingInfo(cl_event e, cl_profiling_info param, size_t size, void *value, size_t *ret) {
	cl_ulong start = (cl_ulong)env("FAKE_TS_START", 1000000000LL);
	cl_ulong end = (cl_ulong)env("FAKE_TS_END", (long long)start + 1000000);
	switch (param) {
	case CL_PROFILING_COMMAND_QUEUED:
	case CL_PROFILING_COMMAND_SUBMIT:
	case CL_PROFILING_COMMAND_START: VAL(cl_ulong, start);
	case CL_PROFILING_COMMAND_END:
	case CL_PROFILING_COMMAND_COMPLETE: VAL(cl_ulong, end);
	}
	return CL_INVALID_VALUE;
}

/* The loader's entry points */

static void *fake_clGetExtensionFunctionAddress(const char *name);

static void unimplemented(void) {
	fprintf(stderr, "fake ICD: a function it does not implement was called\n");
	abort();
}

__attribute__((constructor)) static void init_table(void) {
	void (**slot)(void) = (void (**)(void))&table;
	for (size_t i = 0; i < sizeof table / sizeof *slot; i++)
		slot[i] = unimplemented;
	table.clGetPlatformIDs = icd_platform_ids;
	table.clGetPlatformInfo = fake_clGetPlatformInfo;
	table.clGetDeviceIDs = fake_clGetDeviceIDs;
	table.clGetDeviceInfo = fake_clGetDeviceInfo;
	table.clRetainDevice = (__typeof__(table.clRetainDevice))fake_retain_release;
	table.clReleaseDevice = (__typeof__(table.clReleaseDevice))fake_retain_release;
	table.clCreateContext = fake_clCreateContext;
	table.clRetainContext = (__typeof__(table.clRetainContext))fake_retain_release;
	table.clReleaseContext = fake_clReleaseContext;
	table.clCreateCommandQueue = fake_clCreateCommandQueue;
	table.clRetainCommandQueue = (__typeof__(table.clRetainCommandQueue))fake_retain_release;
	table.clReleaseCommandQueue = fake_clReleaseCommandQueue;
	table.clFlush = fake_success_queue;
	table.clFinish = fake_success_queue;
	table.clCreateBuffer = fake_clCreateBuffer;
	table.clRetainMemObject = (__typeof__(table.clRetainMemObject))fake_retain_release;
	table.clReleaseMemObject = fake_clReleaseMemObject;
	table.clEnqueueReadBuffer = fake_clEnqueueReadBuffer;
	table.clEnqueueWriteBuffer = fake_clEnqueueWriteBuffer;
	table.clEnqueueCopyBuffer = fake_clEnqueueCopyBuffer;
	table.clEnqueueFillBuffer = fake_clEnqueueFillBuffer;
	table.clEnqueueMapBuffer = fake_clEnqueueMapBuffer;
	table.clEnqueueUnmapMemObject = fake_clEnqueueUnmapMemObject;
	table.clEnqueueMarkerWithWaitList = fake_clEnqueueMarkerWithWaitList;
	table.clEnqueueBarrierWithWaitList = fake_clEnqueueMarkerWithWaitList; /* both only order */
	table.clCreateProgramWithSource = fake_clCreateProgramWithSource;
	table.clRetainProgram = (__typeof__(table.clRetainProgram))fake_retain_release;
	table.clReleaseProgram = fake_clReleaseProgram;
	table.clBuildProgram = fake_clBuildProgram;
	table.clGetProgramBuildInfo = fake_clGetProgramBuildInfo;
	table.clCreateKernel = fake_clCreateKernel;
	table.clRetainKernel = (__typeof__(table.clRetainKernel))fake_retain_release;
	table.clReleaseKernel = fake_clReleaseKernel;
	table.clSetKernelArg = fake_clSetKernelArg;
	table.clGetKernelInfo = fake_clGetKernelInfo;
	table.clGetKernelWorkGroupInfo = fake_clGetKernelWorkGroupInfo;
	table.clEnqueueNDRangeKernel = fake_clEnqueueNDRangeKernel;
	table.clRetainEvent = fake_clRetainEvent;
	table.clReleaseEvent = fake_clReleaseEvent;
	table.clWaitForEvents = fake_clWaitForEvents;
	table.clGetEventInfo = fake_clGetEventInfo;
	table.clGetEventProfilingInfo = fake_clGetEventProfilingInfo;
	table.clGetExtensionFunctionAddress = fake_clGetExtensionFunctionAddress;
}

/* Exported for ocl-icd, which looks these three up by name. The dispatch table holds only
 * static functions, so that no call inside this library can be bound to the loader's
 * symbols of the same name. */

CL_API_ENTRY cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *out, cl_uint *count) {
	return icd_platform_ids(n, out, count);
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id p, cl_platform_info param, size_t size, void *value,
                                                  size_t *ret) {
	return fake_clGetPlatformInfo(p, param, size, value, ret);
}

static void *fake_clGetExtensionFunctionAddress(const char *name) {
	if (!strcmp(name, "clIcdGetPlatformIDsKHR"))
		return (void *)icd_platform_ids;
	if (!strcmp(name, "clGetPlatformInfo"))
		return (void *)fake_clGetPlatformInfo;
	return NULL;
}

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *name) {
	return fake_clGetExtensionFunctionAddress(name);
}
