//go:build !noopencl

package cl

// This file is the cgo of the OpenCL calls this package makes itself, on the handles that
// go-opencl keeps in unexported fields, where go-opencl lacks a call or gets it wrong
// (blas.go and fft.go hold the cgo of CLBlast and clFFT, graph.go that of the extension
// cl_khr_command_buffer, whose entry points are looked up at run time). Everything else goes through
// go-opencl. Every function here is a thin
// wrapper that returns the call's status; callers add the call's name and arguments to
// errors, and make the calls on the context's thread where there is one (thread.go).
//
//   - clGetDeviceInfo / clGetPlatformInfo: go-opencl reads strings into a fixed 1024-byte
//     (device) or 2048-byte (platform) array, so a long answer (a GPU's extension list is
//     often longer) fails with CL_INVALID_VALUE, and its Name, Vendor, Extensions, ... methods
//     panic on any failure. It also has no way to ask vendor queries (PCI identity). Here
//     every query asks for the size first and never panics.
//   - clBuildProgram / clGetProgramBuildInfo: go-opencl's BuildProgram drops the status code
//     (an invalid option and a syntax error give the same BuildError) and reads the log into
//     a fixed 1 MiB buffer, so a longer log turns the build error into a bare
//     CL_INVALID_VALUE. Here the status is kept and the log is read whole (bounded below).
//   - clSetKernelArg: one call for the three kinds of argument (a buffer's cl_mem, a
//     scalar's bytes, and no value at all for a __local pointer parameter, whose size is
//     given at launch), returning its status.
//   - clGetKernelWorkGroupInfo: go-opencl asks only for the size_t answers, and reads them
//     into a size_t whatever their size; the local and private memory sizes are cl_ulong.
//   - clGetPlatformIDs / clGetDeviceIDs: go-opencl reads the lists into fixed arrays of 32
//     platforms and 64 devices; it then indexes the platform array with whatever count the
//     loader reports (a panic past 32) and drops devices past 64 without a word. Here the
//     count is asked first and bounded, and the list read whole.
//   - clEnqueueBarrierWithWaitList: go-opencl's always has the barrier make an event (with
//     a finalizer), which a wait on other queues' events never uses. Here it makes none.
//   - clFlush: go-opencl's CommandQueue.Flush calls clFinish, which blocks until the
//     queue's work is done.
//
// No size or count the driver reports is believed blindly: an info answer is read up to 1
// MiB, a build log up to 16 MiB, a list up to 1024 entries; a driver that claims more gets
// an error that names the call and the size, and nothing of that size is allocated.
//
// go-opencl's Platform, Device, Program, Kernel, MemObject and Event keep their OpenCL
// handle as their first field (cl_platform_id id; cl_device_id id; cl_program clProgram;
// cl_kernel clKernel; cl_mem clMem; cl_event clEvent) and export no accessor, so the
// handle is read through unsafe (and written, for the platforms and devices listed here). The layout is that of the version
// pinned in go.mod; the constant checks below fail to compile if the structs change size.

/*
#cgo linux pkg-config: OpenCL
#cgo darwin LDFLAGS: -framework OpenCL
#cgo windows LDFLAGS: -lOpenCL
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <stdlib.h>
#ifdef __APPLE__
#include <OpenCL/cl.h>
#else
#include <CL/cl.h>
#endif
*/
import "C"

import (
	"fmt"
	"github.com/prism-compute/prism/engine/driver"
	"strings"
	"unsafe"

	ocl "github.com/jgillich/go-opencl/cl"
)

// Compile-time checks that go-opencl's handle structs still have the pinned layout: each
// line overflows (a compile error) unless the two sizes are equal.
const (
	_ = uint(unsafe.Sizeof(ocl.Platform{}) - unsafe.Sizeof(uintptr(0)))
	_ = uint(unsafe.Sizeof(uintptr(0)) - unsafe.Sizeof(ocl.Platform{}))
	_ = uint(unsafe.Sizeof(ocl.Device{}) - unsafe.Sizeof(uintptr(0)))
	_ = uint(unsafe.Sizeof(uintptr(0)) - unsafe.Sizeof(ocl.Device{}))
	_ = uint(unsafe.Sizeof(ocl.Program{}) - unsafe.Sizeof(programLayout{}))
	_ = uint(unsafe.Sizeof(programLayout{}) - unsafe.Sizeof(ocl.Program{}))
	_ = uint(unsafe.Sizeof(ocl.Kernel{}) - unsafe.Sizeof(kernelLayout{}))
	_ = uint(unsafe.Sizeof(kernelLayout{}) - unsafe.Sizeof(ocl.Kernel{}))
	_ = uint(unsafe.Sizeof(ocl.MemObject{}) - unsafe.Sizeof(memLayout{}))
	_ = uint(unsafe.Sizeof(memLayout{}) - unsafe.Sizeof(ocl.MemObject{}))
	_ = uint(unsafe.Sizeof(ocl.Event{}) - unsafe.Sizeof(uintptr(0)))
	_ = uint(unsafe.Sizeof(uintptr(0)) - unsafe.Sizeof(ocl.Event{}))
)

// programLayout mirrors go-opencl's Program{clProgram C.cl_program; devices []*Device}.
type programLayout struct {
	handle  unsafe.Pointer
	devices []*ocl.Device
}

// kernelLayout mirrors go-opencl's Kernel{clKernel C.cl_kernel; name string}.
type kernelLayout struct {
	handle unsafe.Pointer
	name   string
}

// memLayout mirrors go-opencl's MemObject{clMem C.cl_mem; size int}.
type memLayout struct {
	handle unsafe.Pointer
	size   int
}

func rawPlatform(p *ocl.Platform) C.cl_platform_id { return *(*C.cl_platform_id)(unsafe.Pointer(p)) }
func rawDevice(d *ocl.Device) C.cl_device_id       { return *(*C.cl_device_id)(unsafe.Pointer(d)) }
func rawProgram(p *ocl.Program) C.cl_program       { return *(*C.cl_program)(unsafe.Pointer(p)) }
func rawKernel(k *ocl.Kernel) C.cl_kernel          { return *(*C.cl_kernel)(unsafe.Pointer(k)) }
func rawMem(m *ocl.MemObject) C.cl_mem             { return *(*C.cl_mem)(unsafe.Pointer(m)) }
func rawEvent(e *ocl.Event) C.cl_event             { return *(*C.cl_event)(unsafe.Pointer(e)) }

// asPlatform and asDevice wrap a handle in go-opencl's type (the inverse of rawPlatform,
// rawDevice).
func asPlatform(id C.cl_platform_id) *ocl.Platform {
	p := new(ocl.Platform)
	*(*C.cl_platform_id)(unsafe.Pointer(p)) = id
	return p
}

func asDevice(id C.cl_device_id) *ocl.Device {
	d := new(ocl.Device)
	*(*C.cl_device_id)(unsafe.Pointer(d)) = id
	return d
}

// deviceKey identifies a device for the life of the process (its cl_device_id).
func deviceKey(d *ocl.Device) uintptr { return uintptr(unsafe.Pointer(rawDevice(d))) }

// OpenCL query parameters used by this package (cl.h, cl_ext.h). The vendor ones are
// spelled out because older headers lack them.
const (
	paramPlatformName    = 0x0902 // CL_PLATFORM_NAME
	paramPlatformVersion = 0x0901 // CL_PLATFORM_VERSION

	paramDeviceType           = 0x1000 // CL_DEVICE_TYPE (cl_device_type bitfield)
	paramMaxComputeUnits      = 0x1002 // cl_uint
	paramMaxWorkGroupSize     = 0x1004 // size_t
	paramMaxWorkItemSizes     = 0x1005 // size_t[]
	paramMaxClockFrequency    = 0x100C // cl_uint, MHz
	paramMaxMemAllocSize      = 0x1010 // cl_ulong
	paramGlobalMemSize        = 0x101F // cl_ulong
	paramLocalMemSize         = 0x1023 // cl_ulong
	paramGlobalMemCacheSize   = 0x101E // cl_ulong
	paramDeviceName           = 0x102B
	paramDeviceVendor         = 0x102C
	paramDriverVersion        = 0x102D
	paramDeviceVersion        = 0x102F
	paramDeviceExtensions     = 0x1030
	paramDoubleFPConfig       = 0x1032 // cl_device_fp_config (cl_ulong bitfield)
	paramOpenCLCVersion       = 0x103D
	paramComputeCapMajorNV    = 0x4000 // cl_uint, cl_nv_device_attribute_query
	paramComputeCapMinorNV    = 0x4001 // cl_uint
	paramPCIBusIDNV           = 0x4008 // cl_uint
	paramPCISlotIDNV          = 0x4009 // cl_uint, device<<3 | function
	paramPCIDomainIDNV        = 0x400A // cl_uint, newer NVIDIA drivers only
	paramTopologyAMD          = 0x4037 // cl_device_topology_amd, cl_amd_device_attribute_query
	paramPCIBusInfoKHR        = 0x410F // cl_device_pci_bus_info_khr, cl_khr_pci_bus_info
	deviceTypeCPU             = 1 << 1
	deviceTypeGPU             = 1 << 2
	deviceTypeAccelerator     = 1 << 3
	programBuildLog           = 0x1183 // CL_PROGRAM_BUILD_LOG
	kernelWorkGroupSize       = 0x11B0 // CL_KERNEL_WORK_GROUP_SIZE, size_t
	kernelLocalMemSize        = 0x11B2 // CL_KERNEL_LOCAL_MEM_SIZE, cl_ulong
	kernelPreferredWGMultiple = 0x11B3 // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, size_t
	kernelPrivateMemSize      = 0x11B4 // CL_KERNEL_PRIVATE_MEM_SIZE, cl_ulong
	sizeofSizeT               = int(unsafe.Sizeof(C.size_t(0)))
	sizeofMem                 = int(unsafe.Sizeof(C.cl_mem(nil)))
)

// Bounds on what the driver says it has: the entries of a platform or device list (as in
// the CUDA backend), the bytes of one info answer (a GPU's extension list is a few KiB),
// the bytes of a build log (as NVRTC's in the CUDA backend).
const (
	maxListed    = 1024
	maxInfoBytes = 1 << 20
	maxLogBytes  = 16 << 20
)

// tooLarge is the error for a size the driver reports above max bytes.
func tooLarge(call string, n C.size_t, max int) error {
	return fmt.Errorf("cl: %s: the driver reports %d bytes, over the %d read: the driver is not trusted: %w",
		call, uint64(n), max, driver.ErrUnavailable)
}

// platformIDs lists the platforms (clGetPlatformIDs), asking for the count first; a count
// above maxListed is refused. A failed call returns its Status unwrapped.
func platformIDs() ([]*ocl.Platform, error) {
	var n C.cl_uint
	if s := Status(C.clGetPlatformIDs(0, nil, &n)); s != Success {
		return nil, s
	}
	if n > maxListed {
		return nil, fmt.Errorf("cl: clGetPlatformIDs reports %d platforms, outside 0 to %d: the driver is not trusted: %w",
			uint32(n), maxListed, driver.ErrUnavailable)
	}
	if n == 0 {
		return nil, nil
	}
	ids := make([]C.cl_platform_id, n)
	if s := Status(C.clGetPlatformIDs(n, &ids[0], &n)); s != Success {
		return nil, s
	}
	var list []*ocl.Platform
	for i, id := range ids[:min(int(n), len(ids))] {
		if id == nil {
			return nil, fmt.Errorf("cl: clGetPlatformIDs: platform %d of %d is null: %w", i, len(ids), driver.ErrUnavailable)
		}
		list = append(list, asPlatform(id))
	}
	return list, nil
}

// deviceIDs lists the devices of every type of platform p (clGetDeviceIDs), asking for the
// count first; a count above maxListed is refused.
func deviceIDs(p *ocl.Platform) ([]*ocl.Device, error) {
	var n C.cl_uint
	if s := Status(C.clGetDeviceIDs(rawPlatform(p), C.CL_DEVICE_TYPE_ALL, 0, nil, &n)); s != Success {
		return nil, check("clGetDeviceIDs", s)
	}
	if n > maxListed {
		return nil, fmt.Errorf("cl: clGetDeviceIDs reports %d devices, outside 0 to %d: the driver is not trusted: %w",
			uint32(n), maxListed, driver.ErrUnavailable)
	}
	if n == 0 {
		return nil, nil
	}
	ids := make([]C.cl_device_id, n)
	if s := Status(C.clGetDeviceIDs(rawPlatform(p), C.CL_DEVICE_TYPE_ALL, n, &ids[0], &n)); s != Success {
		return nil, check("clGetDeviceIDs", s)
	}
	var list []*ocl.Device
	for i, id := range ids[:min(int(n), len(ids))] {
		if id == nil {
			return nil, fmt.Errorf("cl: clGetDeviceIDs: device %d of %d is null: %w", i, len(ids), driver.ErrUnavailable)
		}
		list = append(list, asDevice(id))
	}
	return list, nil
}

// deviceInfo returns the raw bytes of one clGetDeviceInfo query, asking for the size first
// (up to maxInfoBytes).
func deviceInfo(d C.cl_device_id, param uint32) ([]byte, error) {
	var n C.size_t
	if s := Status(C.clGetDeviceInfo(d, C.cl_device_info(param), 0, nil, &n)); s != Success {
		return nil, check(fmt.Sprintf("clGetDeviceInfo(0x%04x)", param), s)
	}
	if n == 0 {
		return nil, nil
	}
	if n > maxInfoBytes {
		return nil, tooLarge(fmt.Sprintf("clGetDeviceInfo(0x%04x)", param), n, maxInfoBytes)
	}
	buf := make([]byte, n)
	if s := Status(C.clGetDeviceInfo(d, C.cl_device_info(param), n, unsafe.Pointer(&buf[0]), nil)); s != Success {
		return nil, check(fmt.Sprintf("clGetDeviceInfo(0x%04x)", param), s)
	}
	return buf, nil
}

// platformString returns a clGetPlatformInfo string, asking for the size first (up to
// maxInfoBytes).
func platformString(p C.cl_platform_id, param uint32) (string, error) {
	var n C.size_t
	if s := Status(C.clGetPlatformInfo(p, C.cl_platform_info(param), 0, nil, &n)); s != Success {
		return "", check(fmt.Sprintf("clGetPlatformInfo(0x%04x)", param), s)
	}
	if n == 0 {
		return "", nil
	}
	if n > maxInfoBytes {
		return "", tooLarge(fmt.Sprintf("clGetPlatformInfo(0x%04x)", param), n, maxInfoBytes)
	}
	buf := make([]byte, n)
	if s := Status(C.clGetPlatformInfo(p, C.cl_platform_info(param), n, unsafe.Pointer(&buf[0]), nil)); s != Success {
		return "", check(fmt.Sprintf("clGetPlatformInfo(0x%04x)", param), s)
	}
	return cString(buf), nil
}

// buildProgram runs clBuildProgram for one device and returns its status.
func buildProgram(p C.cl_program, d C.cl_device_id, options string) Status {
	var copts *C.char
	if options != "" {
		copts = C.CString(options)
		defer C.free(unsafe.Pointer(copts))
	}
	return Status(C.clBuildProgram(p, 1, &d, copts, nil, nil))
}

// buildLog returns the whole build log of p for device d, up to maxLogBytes.
func buildLog(p C.cl_program, d C.cl_device_id) (string, error) {
	var n C.size_t
	if s := Status(C.clGetProgramBuildInfo(p, d, programBuildLog, 0, nil, &n)); s != Success {
		return "", check("clGetProgramBuildInfo(CL_PROGRAM_BUILD_LOG)", s)
	}
	if n == 0 {
		return "", nil
	}
	if n > maxLogBytes {
		return "", tooLarge("clGetProgramBuildInfo(CL_PROGRAM_BUILD_LOG)", n, maxLogBytes)
	}
	buf := make([]byte, n)
	if s := Status(C.clGetProgramBuildInfo(p, d, programBuildLog, n, unsafe.Pointer(&buf[0]), nil)); s != Success {
		return "", check("clGetProgramBuildInfo(CL_PROGRAM_BUILD_LOG)", s)
	}
	return strings.TrimRight(cString(buf), "\n"), nil
}

// setArgBuffer sets argument i of k to a buffer (clSetKernelArg with its cl_mem). The
// handle is read where go-opencl keeps it, the MemObject's first field (memLayout): a copy
// on the stack would move to the heap at every launch, since its address goes to C.
func setArgBuffer(k *ocl.Kernel, i int, m *ocl.MemObject) Status {
	return Status(C.clSetKernelArg(rawKernel(k), C.cl_uint(i), C.size_t(sizeofMem), unsafe.Pointer(&(*memLayout)(unsafe.Pointer(m)).handle)))
}

// setArgValue sets argument i of k to a scalar's bytes (clSetKernelArg copies them).
func setArgValue(k *ocl.Kernel, i int, value []byte) Status {
	return Status(C.clSetKernelArg(rawKernel(k), C.cl_uint(i), C.size_t(len(value)), unsafe.Pointer(&value[0])))
}

// launchSizes holds a launch's global (0) and local (1) sizes as the driver reads them,
// in memory that outlives the call (a queue's), so that passing them to C allocates
// nothing.
type launchSizes [2][3]C.size_t

// set sets dimension i's global and local sizes.
func (s *launchSizes) set(i, global, local int) {
	s[0][i], s[1][i] = C.size_t(global), C.size_t(local)
}

// describe writes the first dims sizes as errors show them.
func (s *launchSizes) describe(dims int) string {
	return fmt.Sprintf("global %v, local %v", s[0][:dims], s[1][:dims])
}

// enqueueKernel enqueues k over the first dims sizes with no event
// (clEnqueueNDRangeKernel with a null event pointer).
func enqueueKernel(q *ocl.CommandQueue, k *ocl.Kernel, dims int, sizes *launchSizes) Status {
	return Status(C.clEnqueueNDRangeKernel(C.cl_command_queue(rawQueue(q)), rawKernel(k), C.cl_uint(dims), nil, &sizes[0][0], &sizes[1][0], 0, nil, nil))
}

// setArgLocal sets argument i of k, a __local pointer parameter, to size bytes of local
// memory per work-group (clSetKernelArg with no value).
func setArgLocal(k *ocl.Kernel, i int, size int64) Status {
	return Status(C.clSetKernelArg(rawKernel(k), C.cl_uint(i), C.size_t(size), nil))
}

// kernelQuery asks clGetKernelWorkGroupInfo of k on device d, asking for the size first.
func kernelQuery(k *ocl.Kernel, d *ocl.Device) infoQuery {
	kh, dh := rawKernel(k), rawDevice(d)
	return func(param uint32) ([]byte, error) {
		call := fmt.Sprintf("clGetKernelWorkGroupInfo(0x%04x)", param)
		var n C.size_t
		if s := Status(C.clGetKernelWorkGroupInfo(kh, dh, C.cl_kernel_work_group_info(param), 0, nil, &n)); s != Success {
			return nil, check(call, s)
		}
		if n == 0 {
			return nil, nil
		}
		if n > maxInfoBytes {
			return nil, tooLarge(call, n, maxInfoBytes)
		}
		buf := make([]byte, n)
		if s := Status(C.clGetKernelWorkGroupInfo(kh, dh, C.cl_kernel_work_group_info(param), n, unsafe.Pointer(&buf[0]), nil)); s != Success {
			return nil, check(call, s)
		}
		return buf, nil
	}
}

// queryDevice asks clGetDeviceInfo of d.
func queryDevice(d *ocl.Device) infoQuery {
	id := rawDevice(d)
	return func(param uint32) ([]byte, error) { return deviceInfo(id, param) }
}

// enqueueBarrier enqueues on q a barrier that holds the commands enqueued after it until
// every one of events (at least one) has completed (clEnqueueBarrierWithWaitList), and
// makes no event of its own.
func enqueueBarrier(q *ocl.CommandQueue, events []*ocl.Event) Status {
	list := make([]C.cl_event, len(events))
	for i, e := range events {
		list[i] = rawEvent(e)
	}
	return Status(C.clEnqueueBarrierWithWaitList(C.cl_command_queue(rawQueue(q)), C.cl_uint(len(list)), &list[0], nil))
}

// flushQueue submits the commands enqueued on q to the device without waiting for them
// (clFlush).
func flushQueue(q *ocl.CommandQueue) Status {
	return Status(C.clFlush(C.cl_command_queue(rawQueue(q))))
}
