//go:build !noopencl

package cl

// This file is the only cgo in the package: the few raw OpenCL calls that go-opencl lacks
// or gets wrong, made on the handles that go-opencl keeps in unexported fields.
//
//   - clGetDeviceInfo / clGetPlatformInfo: go-opencl reads strings into a fixed 1024-byte
//     (device) or 2048-byte (platform) array, so a long answer (a GPU's extension list is
//     often longer) fails with CL_INVALID_VALUE, and its Name, Vendor, Extensions, ... methods
//     panic on any failure. It also has no way to ask vendor queries (PCI identity). Here
//     every query asks for the size first and never panics.
//   - clBuildProgram / clGetProgramBuildInfo: go-opencl's BuildProgram drops the status code
//     (an invalid option and a syntax error give the same BuildError) and reads the log into
//     a fixed 1 MiB buffer, so a longer log turns the build error into a bare
//     CL_INVALID_VALUE. Here the status is kept and the log is read whole.
//
// go-opencl's Platform, Device and Program keep their OpenCL handle as their first field
// (cl_platform_id id; cl_device_id id; cl_program clProgram) and export no accessor, so the
// handle is read through unsafe. The layout is that of the version pinned in go.mod; the
// constant checks below fail to compile if the structs change size.

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
	"encoding/binary"
	"fmt"
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
)

// programLayout mirrors go-opencl's Program{clProgram C.cl_program; devices []*Device}.
type programLayout struct {
	handle  unsafe.Pointer
	devices []*ocl.Device
}

func rawPlatform(p *ocl.Platform) C.cl_platform_id { return *(*C.cl_platform_id)(unsafe.Pointer(p)) }
func rawDevice(d *ocl.Device) C.cl_device_id       { return *(*C.cl_device_id)(unsafe.Pointer(d)) }
func rawProgram(p *ocl.Program) C.cl_program       { return *(*C.cl_program)(unsafe.Pointer(p)) }

// deviceKey identifies a device for the life of the process (its cl_device_id).
func deviceKey(d *ocl.Device) uintptr { return uintptr(unsafe.Pointer(rawDevice(d))) }

// OpenCL query parameters used by this package (cl.h, cl_ext.h). The vendor ones are
// spelled out because older headers lack them.
const (
	paramPlatformName = 0x0902 // CL_PLATFORM_NAME

	paramDeviceType        = 0x1000 // CL_DEVICE_TYPE (cl_device_type bitfield)
	paramMaxComputeUnits   = 0x1002 // cl_uint
	paramMaxWorkGroupSize  = 0x1004 // size_t
	paramMaxWorkItemSizes  = 0x1005 // size_t[]
	paramMaxClockFrequency = 0x100C // cl_uint, MHz
	paramMaxMemAllocSize   = 0x1010 // cl_ulong
	paramGlobalMemSize     = 0x101F // cl_ulong
	paramLocalMemSize      = 0x1023 // cl_ulong
	paramDeviceName        = 0x102B
	paramDeviceVendor      = 0x102C
	paramDriverVersion     = 0x102D
	paramDeviceVersion     = 0x102F
	paramDeviceExtensions  = 0x1030
	paramDoubleFPConfig    = 0x1032 // cl_device_fp_config (cl_ulong bitfield)
	paramOpenCLCVersion    = 0x103D
	paramPCIBusIDNV        = 0x4008 // cl_uint, cl_nv_device_attribute_query
	paramPCISlotIDNV       = 0x4009 // cl_uint, device<<3 | function
	paramPCIDomainIDNV     = 0x400A // cl_uint, newer NVIDIA drivers only
	paramTopologyAMD       = 0x4037 // cl_device_topology_amd, cl_amd_device_attribute_query
	paramPCIBusInfoKHR     = 0x410F // cl_device_pci_bus_info_khr, cl_khr_pci_bus_info
	deviceTypeCPU          = 1 << 1
	deviceTypeGPU          = 1 << 2
	deviceTypeAccelerator  = 1 << 3
	programBuildLog        = 0x1183 // CL_PROGRAM_BUILD_LOG
	sizeofSizeT            = int(unsafe.Sizeof(C.size_t(0)))
)

// deviceInfo returns the raw bytes of one clGetDeviceInfo query, asking for the size first.
func deviceInfo(d C.cl_device_id, param uint32) ([]byte, error) {
	var n C.size_t
	if s := Status(C.clGetDeviceInfo(d, C.cl_device_info(param), 0, nil, &n)); s != Success {
		return nil, check(fmt.Sprintf("clGetDeviceInfo(0x%04x)", param), s)
	}
	if n == 0 {
		return nil, nil
	}
	buf := make([]byte, n)
	if s := Status(C.clGetDeviceInfo(d, C.cl_device_info(param), n, unsafe.Pointer(&buf[0]), nil)); s != Success {
		return nil, check(fmt.Sprintf("clGetDeviceInfo(0x%04x)", param), s)
	}
	return buf, nil
}

// platformString returns a clGetPlatformInfo string, asking for the size first.
func platformString(p C.cl_platform_id, param uint32) (string, error) {
	var n C.size_t
	if s := Status(C.clGetPlatformInfo(p, C.cl_platform_info(param), 0, nil, &n)); s != Success {
		return "", check(fmt.Sprintf("clGetPlatformInfo(0x%04x)", param), s)
	}
	if n == 0 {
		return "", nil
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

// buildLog returns the whole build log of p for device d.
func buildLog(p C.cl_program, d C.cl_device_id) (string, error) {
	var n C.size_t
	if s := Status(C.clGetProgramBuildInfo(p, d, programBuildLog, 0, nil, &n)); s != Success {
		return "", check("clGetProgramBuildInfo(CL_PROGRAM_BUILD_LOG)", s)
	}
	if n == 0 {
		return "", nil
	}
	buf := make([]byte, n)
	if s := Status(C.clGetProgramBuildInfo(p, d, programBuildLog, n, unsafe.Pointer(&buf[0]), nil)); s != Success {
		return "", check("clGetProgramBuildInfo(CL_PROGRAM_BUILD_LOG)", s)
	}
	return strings.TrimRight(cString(buf), "\n"), nil
}

// cString converts a NUL-terminated answer to a string, trimming the padding some drivers
// add.
func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

// infoQuery asks one device query; it abstracts clGetDeviceInfo so that decoding can be
// tested without a device.
type infoQuery func(param uint32) ([]byte, error)

func queryDevice(d *ocl.Device) infoQuery {
	id := rawDevice(d)
	return func(param uint32) ([]byte, error) { return deviceInfo(id, param) }
}

func queryString(q infoQuery, param uint32) (string, error) {
	b, err := q(param)
	if err != nil {
		return "", err
	}
	return cString(b), nil
}

func queryUint(q infoQuery, param uint32) (uint32, error) {
	b, err := q(param)
	if err != nil {
		return 0, err
	}
	if len(b) < 4 {
		return 0, fmt.Errorf("cl: clGetDeviceInfo(0x%04x): %d bytes, want 4: %w", param, len(b), InvalidValue)
	}
	return binary.NativeEndian.Uint32(b), nil
}

func queryUlong(q infoQuery, param uint32) (uint64, error) {
	b, err := q(param)
	if err != nil {
		return 0, err
	}
	if len(b) < 8 {
		return 0, fmt.Errorf("cl: clGetDeviceInfo(0x%04x): %d bytes, want 8: %w", param, len(b), InvalidValue)
	}
	return binary.NativeEndian.Uint64(b), nil
}

// querySizes decodes a size_t or size_t[] answer.
func querySizes(q infoQuery, param uint32) ([]uint64, error) {
	b, err := q(param)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || len(b)%sizeofSizeT != 0 {
		return nil, fmt.Errorf("cl: clGetDeviceInfo(0x%04x): %d bytes is not a whole number of size_t: %w", param, len(b), InvalidValue)
	}
	out := make([]uint64, len(b)/sizeofSizeT)
	for i := range out {
		if sizeofSizeT == 8 {
			out[i] = binary.NativeEndian.Uint64(b[8*i:])
		} else {
			out[i] = uint64(binary.NativeEndian.Uint32(b[4*i:]))
		}
	}
	return out, nil
}
