//go:build !noopencl

package cl

// Graphs as OpenCL command buffers (cl_khr_command_buffer): engine records a capture's
// commands itself (Queue.Capture on a backend without stream capture), then hands them to
// RecordGraph (driver.GraphRecorder), which records them into one cl_command_buffer_khr
// (clCommandNDRangeKernelKHR, clCommandCopyBufferKHR, clCommandFillBufferKHR,
// clFinalizeCommandBufferKHR); each Graph.Launch is then one clEnqueueCommandBufferKHR. A
// device without the extension, or with a version of it this file does not speak, keeps
// engine's recording, enqueued again command by command: Oclgrind and Mesa's Rusticl 22.3
// report no cl_khr_command_buffer, PoCL 3.1 reports version 0.9.0.
//
// Versions. The extension was provisional until 1.0 and its recording calls changed
// signature on the way (the Khronos specification's version history, OpenCL-Docs
// api/cl_khr_command_buffer.asciidoc): 0.9.0 to 0.9.4 take a properties argument in
// clCommandNDRangeKernelKHR only; 0.9.5 added one to every other recording call (copy,
// fill, barrier); 0.9.8 removed the pending state and reworked simultaneous use. This file
// declares the 0.9.0 forms by hand, as cl_ext.h of the OpenCL headers of 2023.02.06 gives
// them, and refuses other versions (read from CL_DEVICE_EXTENSIONS_WITH_VERSION) with
// ErrUnsupported naming the version.
//
// Arguments. The specification (since the clarification of 2022-09-07, OpenCL-Docs #803)
// captures a kernel's arguments when clCommandNDRangeKernelKHR records it: a later
// clSetKernelArg does not change the recorded command. PoCL 3.1 does not: it copies the
// kernel's arguments when the command buffer is enqueued, so that eight recorded
// launches of one kernel object with eight values all ran with the last one set
// (measured here, 2026-11-29). Each recorded launch therefore gets a kernel object of its
// own (clCreateKernel of the kernel's program, one per distinct kernel and argument list),
// whose arguments are set once and never again: correct under both readings.
//
// Enqueueing again. A command buffer made without CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR
// may not be enqueued while an earlier enqueue of it is pending (0.9.0 to 0.9.7:
// CL_INVALID_OPERATION, which PoCL 3.1 returns). Where the device reports
// CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR (PoCL 3.1 does) the buffer is made with
// that flag; elsewhere a launch first waits for the previous one's event.
//
// Timing. PoCL 3.1's event of clEnqueueCommandBufferKHR times only a marker that runs
// after the recorded commands (a few hundred nanoseconds for a graph of kernels of 2 ms
// each), so a timed launch (LaunchEvent) is bracketed by two markers instead, as a vendor
// library call is, and its device time is their span.
//
// Size. PoCL 3.1 appends each recorded command to a list it walks from the head, so
// recording costs grow with the square of the count (about 1 us a command at 1,000,
// 15 us at 16,000, measured here): graphs of more than maxCommandBufferCommands commands
// keep engine's recording.
//
// Command buffers are off unless PRISM_OPENCL_COMMAND_BUFFER=1 (or on) turns them on:
// measured on PoCL, the one implementation here that has them, a graph replayed through
// a command buffer is no faster than engine's replay of its launches (3.3 against 2.6-3.7
// us a kernel at 100 launches, 3.6-5.7 against 2.5-3.4 at 1000: PoCL makes an event per
// recorded command). NVIDIA's OpenCL (driver 580, H200, 2026-11-29) does not report the
// extension, so its replay stays one clEnqueueNDRangeKernel a kernel, 4.0-4.4 us each.

/*
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <stdlib.h>
#ifdef __APPLE__
#include <OpenCL/cl.h>
#else
#include <CL/cl.h>
#endif

// cl_khr_command_buffer 0.9.0, declared by hand from Khronos' cl_ext.h (OpenCL-Headers,
// 2023.02.06): the installed headers may lack it, or carry a later version's forms.
typedef void *prism_cmdbuf;          // cl_command_buffer_khr
typedef cl_ulong prism_cmdbuf_prop;  // cl_command_buffer_properties_khr, cl_ndrange_kernel_command_properties_khr (cl_properties)
typedef cl_uint prism_sync_point;    // cl_sync_point_khr
typedef void *prism_mutable_command; // cl_mutable_command_khr

typedef prism_cmdbuf (CL_API_CALL *prism_create_cmdbuf_fn)(cl_uint num_queues,
	const cl_command_queue *queues, const prism_cmdbuf_prop *properties, cl_int *errcode_ret);
typedef cl_int (CL_API_CALL *prism_cmdbuf_fn)(prism_cmdbuf command_buffer);
typedef cl_int (CL_API_CALL *prism_enqueue_cmdbuf_fn)(cl_uint num_queues, cl_command_queue *queues,
	prism_cmdbuf command_buffer, cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
	cl_event *event);
typedef cl_int (CL_API_CALL *prism_command_ndrange_fn)(prism_cmdbuf command_buffer,
	cl_command_queue command_queue, const prism_cmdbuf_prop *properties, cl_kernel kernel,
	cl_uint work_dim, const size_t *global_work_offset, const size_t *global_work_size,
	const size_t *local_work_size, cl_uint num_sync_points_in_wait_list,
	const prism_sync_point *sync_point_wait_list, prism_sync_point *sync_point,
	prism_mutable_command *mutable_handle);
typedef cl_int (CL_API_CALL *prism_command_copy_fn)(prism_cmdbuf command_buffer,
	cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset,
	size_t dst_offset, size_t size, cl_uint num_sync_points_in_wait_list,
	const prism_sync_point *sync_point_wait_list, prism_sync_point *sync_point,
	prism_mutable_command *mutable_handle);
typedef cl_int (CL_API_CALL *prism_command_fill_fn)(prism_cmdbuf command_buffer,
	cl_command_queue command_queue, cl_mem buffer, const void *pattern, size_t pattern_size,
	size_t offset, size_t size, cl_uint num_sync_points_in_wait_list,
	const prism_sync_point *sync_point_wait_list, prism_sync_point *sync_point,
	prism_mutable_command *mutable_handle);

// The entry points, found with clGetExtensionFunctionAddressForPlatform.
typedef struct {
	prism_create_cmdbuf_fn create;
	prism_cmdbuf_fn finalize;
	prism_cmdbuf_fn release;
	prism_enqueue_cmdbuf_fn enqueue;
	prism_command_ndrange_fn ndrange;
	prism_command_copy_fn copy;
	prism_command_fill_fn fill;
} prism_cmdbuf_api;

static const char *prism_cmdbuf_names[] = {
	"clCreateCommandBufferKHR", "clFinalizeCommandBufferKHR", "clReleaseCommandBufferKHR",
	"clEnqueueCommandBufferKHR", "clCommandNDRangeKernelKHR", "clCommandCopyBufferKHR",
	"clCommandFillBufferKHR",
};

// prism_cmdbuf_load fills api with platform p's entry points; it returns the index in
// prism_cmdbuf_names of the first one missing, or -1.
static int prism_cmdbuf_load(cl_platform_id p, prism_cmdbuf_api *api) {
	void *f[7];
	for (int i = 0; i < 7; i++) {
		f[i] = clGetExtensionFunctionAddressForPlatform(p, prism_cmdbuf_names[i]);
		if (f[i] == NULL) {
			return i;
		}
	}
	api->create = (prism_create_cmdbuf_fn)f[0];
	api->finalize = (prism_cmdbuf_fn)f[1];
	api->release = (prism_cmdbuf_fn)f[2];
	api->enqueue = (prism_enqueue_cmdbuf_fn)f[3];
	api->ndrange = (prism_command_ndrange_fn)f[4];
	api->copy = (prism_command_copy_fn)f[5];
	api->fill = (prism_command_fill_fn)f[6];
	return -1;
}

static const char *prism_cmdbuf_name(int i) { return prism_cmdbuf_names[i]; }

// prism_cmdbuf_create makes a command buffer that records for queue q; simultaneous sets
// CL_COMMAND_BUFFER_FLAGS_KHR (0x1293) to CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR (1 << 0).
static prism_cmdbuf prism_cmdbuf_create(const prism_cmdbuf_api *api, cl_command_queue q, int simultaneous, cl_int *st) {
	prism_cmdbuf_prop props[] = {0x1293, 1 << 0, 0};
	return api->create(1, &q, simultaneous ? props : NULL, st);
}

static cl_int prism_cmdbuf_finalize(const prism_cmdbuf_api *api, prism_cmdbuf cb) { return api->finalize(cb); }
static cl_int prism_cmdbuf_release(const prism_cmdbuf_api *api, prism_cmdbuf cb) { return api->release(cb); }

// prism_cmdbuf_enqueue enqueues cb on q, which replaces the queue it was recorded for (a
// compatible one: same device, context and properties); ev may be NULL.
static cl_int prism_cmdbuf_enqueue(const prism_cmdbuf_api *api, cl_command_queue q, prism_cmdbuf cb, cl_event *ev) {
	return api->enqueue(1, &q, cb, 0, NULL, ev);
}

// The recording calls: command_queue NULL (the one queue the buffer was made for), no
// properties, no sync points (the queue is in order, so are the commands), no mutable handle.
static cl_int prism_cmdbuf_ndrange(const prism_cmdbuf_api *api, prism_cmdbuf cb, cl_kernel k, cl_uint dims,
	const size_t *global, const size_t *local) {
	return api->ndrange(cb, NULL, NULL, k, dims, NULL, global, local, 0, NULL, NULL, NULL);
}
static cl_int prism_cmdbuf_copy(const prism_cmdbuf_api *api, prism_cmdbuf cb, cl_mem src, cl_mem dst,
	size_t src_offset, size_t dst_offset, size_t size) {
	return api->copy(cb, NULL, src, dst, src_offset, dst_offset, size, 0, NULL, NULL, NULL);
}
static cl_int prism_cmdbuf_fill(const prism_cmdbuf_api *api, prism_cmdbuf cb, cl_mem m, const void *pattern,
	size_t pattern_size, size_t offset, size_t size) {
	return api->fill(cb, NULL, m, pattern, pattern_size, offset, size, 0, NULL, NULL, NULL);
}

static cl_int prism_queue_device(cl_command_queue q, cl_device_id *d) {
	return clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof *d, d, NULL);
}
static cl_int prism_device_platform(cl_device_id d, cl_platform_id *p) {
	return clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof *p, p, NULL);
}
static cl_int prism_kernel_program(cl_kernel k, cl_program *p) {
	return clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof *p, p, NULL);
}
*/
import "C"

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	ocl "github.com/jgillich/go-opencl/cl"

	"github.com/prism-compute/prism/engine/driver"
)

// EnvCommandBuffer is the environment variable that turns command buffers on: set to 1
// (or on, true, yes), graphs record into one where the device has the extension; unset
// or anything else, every graph keeps engine's recording, enqueued command by command.
const EnvCommandBuffer = "PRISM_OPENCL_COMMAND_BUFFER"

// maxCommandBufferCommands is the most commands a graph records into a command buffer
// (see Size above); a larger one keeps engine's recording.
const maxCommandBufferCommands = 4096

// cl_khr_command_buffer's device queries and capability (cl_ext.h).
const (
	paramExtensionsWithVersion   = 0x1060 // CL_DEVICE_EXTENSIONS_WITH_VERSION: cl_name_version[], OpenCL 3.0
	paramCommandBufferCaps       = 0x12A9 // CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR: cl_bitfield
	paramCommandBufferQueueProps = 0x12AA // CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR: cl_bitfield
	capSimultaneousUse           = 1 << 2 // CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR
	queueProfilingEnable         = 1 << 1 // CL_QUEUE_PROFILING_ENABLE, which every queue of this package has
	commandBufferExtension       = "cl_khr_command_buffer"
)

var (
	_ driver.GraphRecorder = (*queue)(nil)
	_ driver.Graph         = (*commandBuffer)(nil)
	_ driver.EventLauncher = (*commandBuffer)(nil)
)

// commandBuffersRecorded counts the command buffers RecordGraph made, for tests.
var commandBuffersRecorded atomic.Int64

// sequentialUseOnly makes RecordGraph leave CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR off
// whatever the device reports, so that tests reach the path of devices without it.
var sequentialUseOnly atomic.Bool

// cmdbufDevice is what a device offers of cl_khr_command_buffer, found once per device.
type cmdbufDevice struct {
	api          C.prism_cmdbuf_api
	version      string
	simultaneous bool  // CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR
	err          error // why the device records none, wrapping ErrUnsupported
}

var cmdbufDevices = struct {
	mu   sync.Mutex
	byID map[C.cl_device_id]*cmdbufDevice
}{byID: map[C.cl_device_id]*cmdbufDevice{}}

// commandBuffers returns what q's device offers of cl_khr_command_buffer, or an error
// wrapping ErrUnsupported that says why it records none. The caller is on q's thread.
func (q *queue) commandBuffers() (*cmdbufDevice, error) {
	var dev C.cl_device_id
	if err := check("clGetCommandQueueInfo(CL_QUEUE_DEVICE)", Status(C.prism_queue_device(C.cl_command_queue(rawQueue(q.q)), &dev))); err != nil {
		return nil, err
	}
	cmdbufDevices.mu.Lock()
	defer cmdbufDevices.mu.Unlock()
	d := cmdbufDevices.byID[dev]
	if d == nil {
		d = &cmdbufDevice{}
		d.err = probeCommandBuffers(dev, d)
		if d.err != nil {
			tracef("graphs stay engine's recording: %v", d.err)
		} else {
			tracef("graphs record into command buffers (%s %s, simultaneous use %t)", commandBufferExtension, d.version, d.simultaneous)
		}
		cmdbufDevices.byID[dev] = d
	}
	return d, d.err
}

// probeCommandBuffers fills d from device dev's queries: the extension and its version,
// the capabilities, the queue properties it requires, and the entry points.
func probeCommandBuffers(dev C.cl_device_id, d *cmdbufDevice) error {
	unsupported := func(format string, args ...any) error {
		return fmt.Errorf("cl: "+format+": %w", append(args, driver.ErrUnsupported)...)
	}
	b, err := deviceInfo(dev, paramDeviceExtensions)
	if err != nil {
		return unsupported("%s: %v", commandBufferExtension, err)
	}
	if !slices.Contains(strings.Fields(cString(b)), commandBufferExtension) {
		return unsupported("the device does not report %s", commandBufferExtension)
	}
	b, err = deviceInfo(dev, paramExtensionsWithVersion)
	if err != nil {
		return unsupported("the device reports %s but not its version (CL_DEVICE_EXTENSIONS_WITH_VERSION: %v), and the recording calls changed between versions",
			commandBufferExtension, err)
	}
	found := false
	for _, nv := range nameVersions(b) {
		if nv.name == commandBufferExtension {
			d.version, found = versionString(nv.version), true
			if err := commandBufferVersion(nv.version); err != nil {
				return err
			}
		}
	}
	if !found {
		return unsupported("the device reports %s but CL_DEVICE_EXTENSIONS_WITH_VERSION does not list it", commandBufferExtension)
	}
	caps, err := deviceBits(dev, paramCommandBufferCaps)
	if err != nil {
		return unsupported("CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR: %v", err)
	}
	d.simultaneous = caps&capSimultaneousUse != 0
	props, err := deviceBits(dev, paramCommandBufferQueueProps)
	if err != nil {
		return unsupported("CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR: %v", err)
	}
	if props&^queueProfilingEnable != 0 {
		return unsupported("command buffers require queue properties 0x%x, and this package's queues are in order with profiling (0x%x)", props, queueProfilingEnable)
	}
	var p C.cl_platform_id
	if err := check("clGetDeviceInfo(CL_DEVICE_PLATFORM)", Status(C.prism_device_platform(dev, &p))); err != nil {
		return unsupported("%v", err)
	}
	if i := C.prism_cmdbuf_load(p, &d.api); i >= 0 {
		return unsupported("the platform reports %s %s but no %s (clGetExtensionFunctionAddressForPlatform)",
			commandBufferExtension, d.version, C.GoString(C.prism_cmdbuf_name(i)))
	}
	return nil
}

// commandBufferVersion returns nil for the versions of cl_khr_command_buffer whose calls
// this file declares (0.9.0 to 0.9.4), else an error wrapping ErrUnsupported that names
// the version. v is a cl_version: major<<22 | minor<<12 | patch.
func commandBufferVersion(v uint32) error {
	if major, minor, patch := v>>22, v>>12&0x3FF, v&0xFFF; major == 0 && minor == 9 && patch <= 4 {
		return nil
	}
	return fmt.Errorf("cl: %s %s: this package records command buffers of versions 0.9.0 to 0.9.4 (from 0.9.5 every recording call takes a properties argument, and 0.9.8 reworked simultaneous use): %w",
		commandBufferExtension, versionString(v), driver.ErrUnsupported)
}

// versionString writes a cl_version as major.minor.patch.
func versionString(v uint32) string { return fmt.Sprintf("%d.%d.%d", v>>22, v>>12&0x3FF, v&0xFFF) }

// deviceBits reads a cl_bitfield (cl_ulong) device query.
func deviceBits(dev C.cl_device_id, param uint32) (uint64, error) {
	b, err := deviceInfo(dev, param)
	if err != nil {
		return 0, err
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("cl: clGetDeviceInfo(0x%04x): %d bytes, want 8: %w", param, len(b), driver.ErrUnavailable)
	}
	return binary.NativeEndian.Uint64(b), nil
}

// RecordGraph records the commands replay enqueues into one command buffer
// (driver.GraphRecorder). It gives an error wrapping ErrUnsupported, and engine keeps its
// own recording, when command buffers are off (EnvCommandBuffer), the device has none of
// a version this package speaks, the graph holds more than maxCommandBufferCommands
// commands, or the driver will not record one of them (a host transfer, a call failing).
func (q *queue) RecordGraph(commands int, replay func(driver.Queue) error) (driver.Graph, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if v := os.Getenv(EnvCommandBuffer); !on(v) {
		return nil, fmt.Errorf("cl: %s=%q: command buffers are off (1 turns them on): %w", EnvCommandBuffer, v, driver.ErrUnsupported)
	}
	if commands > maxCommandBufferCommands {
		return nil, fmt.Errorf("cl: a graph of %d commands: command buffers hold at most %d here: %w", commands, maxCommandBufferCommands, driver.ErrUnsupported)
	}
	var d *cmdbufDevice
	if err := q.th.Call(func() (err error) { d, err = q.commandBuffers(); return err }); err != nil {
		return nil, err // traced once per device
	}
	q.lock()
	defer q.unlock()
	var g *commandBuffer
	err := q.th.Call(func() error {
		raw := C.cl_command_queue(rawQueue(q.q))
		simultaneous := d.simultaneous && !sequentialUseOnly.Load()
		var st C.cl_int
		cb := C.prism_cmdbuf_create(&d.api, raw, cbool(simultaneous), &st)
		if err := unsupportedCall("clCreateCommandBufferKHR", Status(st)); err != nil {
			return err
		}
		rec := &recorder{q: q, d: d, cb: cb, clones: map[string]*kernel{}}
		err := replay(rec)
		if err == nil {
			err = unsupportedCall("clFinalizeCommandBufferKHR", Status(C.prism_cmdbuf_finalize(&d.api, cb)))
		}
		if err != nil {
			C.prism_cmdbuf_release(&d.api, cb)
			for _, k := range rec.kernels {
				C.clReleaseKernel(k)
			}
			return err
		}
		C.clRetainCommandQueue(raw)
		g = &commandBuffer{d: d, c: q.c, th: q.th, cb: cb, home: raw, kernels: rec.kernels, sequential: !simultaneous, n: rec.n}
		return nil
	})
	if err != nil {
		tracef("a graph of %d commands stays engine's recording: %v", commands, err)
		return nil, err
	}
	commandBuffersRecorded.Add(1)
	return g, nil
}

// unsupportedCall is check for a call that records or makes a command buffer: a failure
// means the command buffer cannot hold the graph, and wraps ErrUnsupported too.
func unsupportedCall(call string, s Status) error {
	if err := check(call, s); err != nil {
		return fmt.Errorf("%w: the command buffer cannot hold it: %w", err, driver.ErrUnsupported)
	}
	return nil
}

// recorder is the queue RecordGraph hands engine: its launches, copies and fills are
// recorded into the command buffer cb instead of running. It runs on the queue's thread,
// under its lock.
type recorder struct {
	q       *queue
	d       *cmdbufDevice
	cb      C.prism_cmdbuf
	kernels []C.cl_kernel      // the kernel objects made for the recorded launches
	clones  map[string]*kernel // by kernel and arguments
	n       int
	sizes   launchSizes
	key     []byte
}

var (
	_ driver.Queue           = (*recorder)(nil)
	_ driver.UntimedLauncher = (*recorder)(nil)
	_ driver.AsyncCopier     = (*recorder)(nil)
)

func (r *recorder) refuse(what string) error {
	return fmt.Errorf("cl: %s cannot be recorded into a command buffer: %w", what, driver.ErrUnsupported)
}

func (r *recorder) Write(driver.Buffer, int64, unsafe.Pointer, int64) error {
	return r.refuse("a blocking write")
}

func (r *recorder) Read(driver.Buffer, int64, unsafe.Pointer, int64) error {
	return r.refuse("a blocking read")
}

func (r *recorder) WriteAsync(driver.Buffer, int64, driver.HostBuffer, int64, int64) (driver.Event, error) {
	return nil, r.refuse("a copy from host memory")
}

func (r *recorder) ReadAsync(driver.Buffer, int64, driver.HostBuffer, int64, int64) (driver.Event, error) {
	return nil, r.refuse("a copy to host memory")
}

func (r *recorder) Finish(ctx context.Context) error { return r.refuse("Finish") }

func (r *recorder) Close() error { return nil }

// count counts one more command, refusing one past maxCommandBufferCommands.
func (r *recorder) count() error {
	if r.n++; r.n > maxCommandBufferCommands {
		return r.refuse(fmt.Sprintf("command %d", r.n))
	}
	return nil
}

// Copy records clCommandCopyBufferKHR; it returns no event.
func (r *recorder) Copy(dst driver.Buffer, dstOffset int64, src driver.Buffer, srcOffset int64, size int64) (driver.Event, error) {
	d, err := asBuffer(dst)
	if err != nil {
		return nil, err
	}
	s, err := asBuffer(src)
	if err != nil {
		return nil, err
	}
	if err := r.count(); err != nil {
		return nil, err
	}
	st := C.prism_cmdbuf_copy(&r.d.api, r.cb, rawMem(s.mem), rawMem(d.mem), C.size_t(srcOffset), C.size_t(dstOffset), C.size_t(size))
	return nil, unsupportedCall(fmt.Sprintf("clCommandCopyBufferKHR(%d bytes)", size), Status(st))
}

// Fill records clCommandFillBufferKHR, which copies the pattern; it returns no event.
func (r *recorder) Fill(dst driver.Buffer, offset int64, pattern []byte, size int64) (driver.Event, error) {
	b, err := asBuffer(dst)
	if err != nil {
		return nil, err
	}
	if len(pattern) == 0 {
		return nil, fmt.Errorf("cl: clCommandFillBufferKHR: empty pattern: %w", driver.ErrInvalidArg)
	}
	if err := r.count(); err != nil {
		return nil, err
	}
	st := C.prism_cmdbuf_fill(&r.d.api, r.cb, rawMem(b.mem), unsafe.Pointer(&pattern[0]), C.size_t(len(pattern)), C.size_t(offset), C.size_t(size))
	return nil, unsupportedCall(fmt.Sprintf("clCommandFillBufferKHR(%d-byte pattern, %d bytes at %d)", len(pattern), size, offset), Status(st))
}

// Launch records the launch as LaunchUntimed does; it returns no event.
func (r *recorder) Launch(dk driver.Kernel, rg driver.Range, args []driver.Arg) (driver.Event, error) {
	return nil, r.LaunchUntimed(dk, rg, args)
}

// LaunchUntimed records clCommandNDRangeKernelKHR of a kernel object that holds args and
// nothing else (see Arguments above).
func (r *recorder) LaunchUntimed(dk driver.Kernel, rg driver.Range, args []driver.Arg) error {
	k, err := r.q.launchable(dk, rg)
	if err != nil {
		return err
	}
	if err := r.count(); err != nil {
		return err
	}
	own, err := r.kernelFor(k, args)
	if err != nil {
		return err
	}
	for i := range rg.Dims {
		r.sizes.set(i, rg.Global[i], rg.Local[i])
	}
	st := C.prism_cmdbuf_ndrange(&r.d.api, r.cb, rawKernel(own.k), C.cl_uint(rg.Dims), &r.sizes[0][0], &r.sizes[1][0])
	return unsupportedCall(fmt.Sprintf("clCommandNDRangeKernelKHR(%s, %s)", k.name, r.sizes.describe(rg.Dims)), Status(st))
}

// kernelFor returns a kernel object of k's function whose arguments are args, made for
// this command buffer (clCreateKernel of k's program) the first time k runs with them.
func (r *recorder) kernelFor(k *kernel, args []driver.Arg) (*kernel, error) {
	key := binary.NativeEndian.AppendUint64(r.key[:0], uint64(uintptr(unsafe.Pointer(rawKernel(k.k)))))
	for _, a := range args {
		switch {
		case a.Buffer != nil:
			b, err := asBuffer(a.Buffer)
			if err != nil {
				return nil, wrapf(err, "launch %s", k.name)
			}
			key = binary.NativeEndian.AppendUint64(append(key, 'b'), uint64(uintptr(unsafe.Pointer(rawMem(b.mem)))))
		case a.Local > 0:
			key = binary.NativeEndian.AppendUint64(append(key, 'l'), uint64(a.Local))
		default:
			key = append(binary.NativeEndian.AppendUint32(append(key, 'v'), uint32(len(a.Value))), a.Value...)
		}
	}
	r.key = key
	if own := r.clones[string(key)]; own != nil {
		return own, nil
	}
	var prog C.cl_program
	if err := check(fmt.Sprintf("clGetKernelInfo(%s, CL_KERNEL_PROGRAM)", k.name), Status(C.prism_kernel_program(rawKernel(k.k), &prog))); err != nil {
		return nil, err
	}
	name := C.CString(k.name)
	defer C.free(unsafe.Pointer(name))
	var st C.cl_int
	h := C.clCreateKernel(prog, name, &st)
	if err := check(fmt.Sprintf("clCreateKernel(%q)", k.name), Status(st)); err != nil {
		return nil, err
	}
	r.kernels = append(r.kernels, h)
	kk := new(ocl.Kernel)
	(*kernelLayout)(unsafe.Pointer(kk)).handle = unsafe.Pointer(h)
	own := &kernel{k: kk, name: k.name, numArgs: k.numArgs, th: k.th}
	if err := setArgs(own, args); err != nil {
		return nil, err
	}
	r.clones[string(key)] = own
	return own, nil
}

// commandBuffer is a finalized command buffer and what it holds: the kernel objects of
// its launches, and the queue it was recorded for (retained). It is safe for concurrent
// use.
type commandBuffer struct {
	d          *cmdbufDevice
	c          *clContext
	th         *osThread
	cb         C.prism_cmdbuf
	home       C.cl_command_queue
	kernels    []C.cl_kernel
	sequential bool // made without CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR
	n          int

	mu      sync.Mutex
	pending *ocl.Event // when sequential: the last enqueue, waited for before the next
	closed  bool
}

// Launch enqueues the command buffer on q (clEnqueueCommandBufferKHR with q in place of
// the queue it was recorded for). One made without simultaneous use first waits for its
// previous launch to complete.
func (g *commandBuffer) Launch(dq driver.Queue) error {
	_, err := g.enqueue(dq, false)
	return err
}

// LaunchEvent enqueues the command buffer between two markers (clEnqueueMarkerWithWaitList),
// as a vendor library call is (vendor.go), and returns their span: its Elapsed is the
// device time from the first marker's start to the second's end, the graph's commands and
// the gaps between them.
func (g *commandBuffer) LaunchEvent(dq driver.Queue) (driver.Event, error) {
	return g.enqueue(dq, true)
}

func (g *commandBuffer) enqueue(dq driver.Queue, timed bool) (driver.Event, error) {
	q, err := queueOf(dq)
	if err != nil {
		return nil, err
	}
	if q.c != g.c {
		return nil, fmt.Errorf("cl: launch of a command buffer on a queue of another device: %w", driver.ErrInvalidArg)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errClosed("command buffer")
	}
	q.lock()
	defer q.unlock()
	var before, after *ocl.Event
	err = q.th.Call(func() error {
		if g.pending != nil {
			if err := wrap("clWaitForEvents(the command buffer's previous launch)", ocl.WaitForEvents([]*ocl.Event{g.pending})); err != nil {
				return err
			}
			g.pending.Release()
			g.pending = nil
		}
		if timed {
			var err error
			if before, err = q.q.EnqueueMarkerWithWaitList(nil); err != nil {
				before.Release()
				return wrap("clEnqueueMarkerWithWaitList", err)
			}
		}
		var ev C.cl_event
		evp := (*C.cl_event)(nil)
		if g.sequential {
			evp = &ev
		}
		if err := check(fmt.Sprintf("clEnqueueCommandBufferKHR(%d commands)", g.n), Status(C.prism_cmdbuf_enqueue(&g.d.api, C.cl_command_queue(rawQueue(q.q)), g.cb, evp))); err != nil {
			if before != nil {
				before.Release()
			}
			return err
		}
		if g.sequential {
			g.pending = new(ocl.Event)
			*(*C.cl_event)(unsafe.Pointer(g.pending)) = ev
		}
		if timed {
			var err error
			if after, err = q.q.EnqueueMarkerWithWaitList(nil); err != nil {
				after.Release()
				before.Release()
				return wrap("clEnqueueMarkerWithWaitList", err)
			}
		}
		return nil
	})
	if err != nil || !timed {
		return nil, err
	}
	return &spanEvent{start: q.event(before, "marker before a graph"), end: q.event(after, "graph"), what: "graph"}, nil
}

// Close releases the command buffer, the kernel objects made for it and the queue it was
// recorded for (a launch still running completes first, as the driver keeps what it
// uses). Idempotent.
func (g *commandBuffer) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	release(g.th, func() {
		if g.pending != nil {
			g.pending.Release()
		}
		C.prism_cmdbuf_release(&g.d.api, g.cb)
		for _, k := range g.kernels {
			C.clReleaseKernel(k)
		}
		C.clReleaseCommandQueue(g.home)
	})
	return nil
}
