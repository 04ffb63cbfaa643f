//go:build !noopencl

package cl

import (
	"errors"
	"fmt"
	"github.com/prism-compute/prism/engine/driver"
	"strings"

	ocl "github.com/jgillich/go-opencl/cl"
)

// Status is an OpenCL status code (cl_int), the value every OpenCL call returns. It is an
// error; errors.Is matches it against the engine sentinels it corresponds to (for example
// OutOfResources against driver.ErrOutOfMemory, InvalidKernelName against
// driver.ErrNotFound), and errors.As extracts it from any error this package returns for a
// failed OpenCL call.
type Status int32

// OpenCL status codes, as defined by the OpenCL 3.0 headers (cl.h) and the ICD loader
// (cl_ext.h for PlatformNotFoundKHR).
const (
	Success                            Status = 0
	DeviceNotFound                     Status = -1
	DeviceNotAvailable                 Status = -2
	CompilerNotAvailable               Status = -3
	MemObjectAllocationFailure         Status = -4
	OutOfResources                     Status = -5
	OutOfHostMemory                    Status = -6
	ProfilingInfoNotAvailable          Status = -7
	MemCopyOverlap                     Status = -8
	ImageFormatMismatch                Status = -9
	ImageFormatNotSupported            Status = -10
	BuildProgramFailure                Status = -11
	MapFailure                         Status = -12
	MisalignedSubBufferOffset          Status = -13
	ExecStatusErrorForEventsInWaitList Status = -14
	CompileProgramFailure              Status = -15
	LinkerNotAvailable                 Status = -16
	LinkProgramFailure                 Status = -17
	DevicePartitionFailed              Status = -18
	KernelArgInfoNotAvailable          Status = -19
	InvalidValue                       Status = -30
	InvalidDeviceType                  Status = -31
	InvalidPlatform                    Status = -32
	InvalidDevice                      Status = -33
	InvalidContext                     Status = -34
	InvalidQueueProperties             Status = -35
	InvalidCommandQueue                Status = -36
	InvalidHostPtr                     Status = -37
	InvalidMemObject                   Status = -38
	InvalidImageFormatDescriptor       Status = -39
	InvalidImageSize                   Status = -40
	InvalidSampler                     Status = -41
	InvalidBinary                      Status = -42
	InvalidBuildOptions                Status = -43
	InvalidProgram                     Status = -44
	InvalidProgramExecutable           Status = -45
	InvalidKernelName                  Status = -46
	InvalidKernelDefinition            Status = -47
	InvalidKernel                      Status = -48
	InvalidArgIndex                    Status = -49
	InvalidArgValue                    Status = -50
	InvalidArgSize                     Status = -51
	InvalidKernelArgs                  Status = -52
	InvalidWorkDimension               Status = -53
	InvalidWorkGroupSize               Status = -54
	InvalidWorkItemSize                Status = -55
	InvalidGlobalOffset                Status = -56
	InvalidEventWaitList               Status = -57
	InvalidEvent                       Status = -58
	InvalidOperation                   Status = -59
	InvalidGLObject                    Status = -60
	InvalidBufferSize                  Status = -61
	InvalidMipLevel                    Status = -62
	InvalidGlobalWorkSize              Status = -63
	InvalidProperty                    Status = -64
	InvalidImageDescriptor             Status = -65
	InvalidCompilerOptions             Status = -66
	InvalidLinkerOptions               Status = -67
	InvalidDevicePartitionCount        Status = -68
	InvalidPipeSize                    Status = -69
	InvalidDeviceQueue                 Status = -70
	InvalidSpecID                      Status = -71
	MaxSizeRestrictionExceeded         Status = -72
	PlatformNotFoundKHR                Status = -1001
)

var statusNames = map[Status]string{
	Success:                            "CL_SUCCESS",
	DeviceNotFound:                     "CL_DEVICE_NOT_FOUND",
	DeviceNotAvailable:                 "CL_DEVICE_NOT_AVAILABLE",
	CompilerNotAvailable:               "CL_COMPILER_NOT_AVAILABLE",
	MemObjectAllocationFailure:         "CL_MEM_OBJECT_ALLOCATION_FAILURE",
	OutOfResources:                     "CL_OUT_OF_RESOURCES",
	OutOfHostMemory:                    "CL_OUT_OF_HOST_MEMORY",
	ProfilingInfoNotAvailable:          "CL_PROFILING_INFO_NOT_AVAILABLE",
	MemCopyOverlap:                     "CL_MEM_COPY_OVERLAP",
	ImageFormatMismatch:                "CL_IMAGE_FORMAT_MISMATCH",
	ImageFormatNotSupported:            "CL_IMAGE_FORMAT_NOT_SUPPORTED",
	BuildProgramFailure:                "CL_BUILD_PROGRAM_FAILURE",
	MapFailure:                         "CL_MAP_FAILURE",
	MisalignedSubBufferOffset:          "CL_MISALIGNED_SUB_BUFFER_OFFSET",
	ExecStatusErrorForEventsInWaitList: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
	CompileProgramFailure:              "CL_COMPILE_PROGRAM_FAILURE",
	LinkerNotAvailable:                 "CL_LINKER_NOT_AVAILABLE",
	LinkProgramFailure:                 "CL_LINK_PROGRAM_FAILURE",
	DevicePartitionFailed:              "CL_DEVICE_PARTITION_FAILED",
	KernelArgInfoNotAvailable:          "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
	InvalidValue:                       "CL_INVALID_VALUE",
	InvalidDeviceType:                  "CL_INVALID_DEVICE_TYPE",
	InvalidPlatform:                    "CL_INVALID_PLATFORM",
	InvalidDevice:                      "CL_INVALID_DEVICE",
	InvalidContext:                     "CL_INVALID_CONTEXT",
	InvalidQueueProperties:             "CL_INVALID_QUEUE_PROPERTIES",
	InvalidCommandQueue:                "CL_INVALID_COMMAND_QUEUE",
	InvalidHostPtr:                     "CL_INVALID_HOST_PTR",
	InvalidMemObject:                   "CL_INVALID_MEM_OBJECT",
	InvalidImageFormatDescriptor:       "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
	InvalidImageSize:                   "CL_INVALID_IMAGE_SIZE",
	InvalidSampler:                     "CL_INVALID_SAMPLER",
	InvalidBinary:                      "CL_INVALID_BINARY",
	InvalidBuildOptions:                "CL_INVALID_BUILD_OPTIONS",
	InvalidProgram:                     "CL_INVALID_PROGRAM",
	InvalidProgramExecutable:           "CL_INVALID_PROGRAM_EXECUTABLE",
	InvalidKernelName:                  "CL_INVALID_KERNEL_NAME",
	InvalidKernelDefinition:            "CL_INVALID_KERNEL_DEFINITION",
	InvalidKernel:                      "CL_INVALID_KERNEL",
	InvalidArgIndex:                    "CL_INVALID_ARG_INDEX",
	InvalidArgValue:                    "CL_INVALID_ARG_VALUE",
	InvalidArgSize:                     "CL_INVALID_ARG_SIZE",
	InvalidKernelArgs:                  "CL_INVALID_KERNEL_ARGS",
	InvalidWorkDimension:               "CL_INVALID_WORK_DIMENSION",
	InvalidWorkGroupSize:               "CL_INVALID_WORK_GROUP_SIZE",
	InvalidWorkItemSize:                "CL_INVALID_WORK_ITEM_SIZE",
	InvalidGlobalOffset:                "CL_INVALID_GLOBAL_OFFSET",
	InvalidEventWaitList:               "CL_INVALID_EVENT_WAIT_LIST",
	InvalidEvent:                       "CL_INVALID_EVENT",
	InvalidOperation:                   "CL_INVALID_OPERATION",
	InvalidGLObject:                    "CL_INVALID_GL_OBJECT",
	InvalidBufferSize:                  "CL_INVALID_BUFFER_SIZE",
	InvalidMipLevel:                    "CL_INVALID_MIP_LEVEL",
	InvalidGlobalWorkSize:              "CL_INVALID_GLOBAL_WORK_SIZE",
	InvalidProperty:                    "CL_INVALID_PROPERTY",
	InvalidImageDescriptor:             "CL_INVALID_IMAGE_DESCRIPTOR",
	InvalidCompilerOptions:             "CL_INVALID_COMPILER_OPTIONS",
	InvalidLinkerOptions:               "CL_INVALID_LINKER_OPTIONS",
	InvalidDevicePartitionCount:        "CL_INVALID_DEVICE_PARTITION_COUNT",
	InvalidPipeSize:                    "CL_INVALID_PIPE_SIZE",
	InvalidDeviceQueue:                 "CL_INVALID_DEVICE_QUEUE",
	InvalidSpecID:                      "CL_INVALID_SPEC_ID",
	MaxSizeRestrictionExceeded:         "CL_MAX_SIZE_RESTRICTION_EXCEEDED",
	PlatformNotFoundKHR:                "CL_PLATFORM_NOT_FOUND_KHR",
}

// String returns the status's OpenCL name, e.g. "CL_OUT_OF_RESOURCES", or "CL_STATUS(-9999)"
// for a code the headers do not define (vendor codes).
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("CL_STATUS(%d)", int32(s))
}

// Error returns the name and the code, e.g. "CL_OUT_OF_RESOURCES (-5)".
func (s Status) Error() string {
	if n, ok := statusNames[s]; ok {
		return fmt.Sprintf("%s (%d)", n, int32(s))
	}
	return s.String()
}

// Is reports whether the status corresponds to target, one of the engine sentinels.
func (s Status) Is(target error) bool {
	switch target {
	case driver.ErrOutOfMemory:
		switch s {
		case MemObjectAllocationFailure, OutOfResources, OutOfHostMemory:
			return true
		}
	case driver.ErrInvalidArg:
		switch s {
		case MemCopyOverlap, MisalignedSubBufferOffset, InvalidValue, InvalidHostPtr,
			InvalidMemObject, InvalidBuildOptions, InvalidArgIndex, InvalidArgValue,
			InvalidArgSize, InvalidKernelArgs, InvalidWorkDimension, InvalidWorkGroupSize,
			InvalidWorkItemSize, InvalidGlobalOffset, InvalidEventWaitList, InvalidBufferSize,
			InvalidGlobalWorkSize, InvalidProperty, InvalidCompilerOptions,
			InvalidLinkerOptions, MaxSizeRestrictionExceeded:
			return true
		}
	case driver.ErrNotFound:
		return s == InvalidKernelName || s == DeviceNotFound
	case driver.ErrUnavailable:
		return s == PlatformNotFoundKHR || s == DeviceNotAvailable
	case driver.ErrUnsupported:
		switch s {
		case CompilerNotAvailable, LinkerNotAvailable, ImageFormatNotSupported:
			return true
		}
	case driver.ErrBuild:
		switch s {
		case BuildProgramFailure, CompileProgramFailure, LinkProgramFailure:
			return true
		}
	}
	return false
}

// goStatus maps go-opencl's sentinel errors back to the status codes they stand for, so
// that the code and its name survive (go-opencl turns codes into one error value each).
var goStatus = map[error]Status{
	ocl.ErrDeviceNotFound:                     DeviceNotFound,
	ocl.ErrDeviceNotAvailable:                 DeviceNotAvailable,
	ocl.ErrCompilerNotAvailable:               CompilerNotAvailable,
	ocl.ErrMemObjectAllocationFailure:         MemObjectAllocationFailure,
	ocl.ErrOutOfResources:                     OutOfResources,
	ocl.ErrOutOfHostMemory:                    OutOfHostMemory,
	ocl.ErrProfilingInfoNotAvailable:          ProfilingInfoNotAvailable,
	ocl.ErrMemCopyOverlap:                     MemCopyOverlap,
	ocl.ErrImageFormatMismatch:                ImageFormatMismatch,
	ocl.ErrImageFormatNotSupported:            ImageFormatNotSupported,
	ocl.ErrBuildProgramFailure:                BuildProgramFailure,
	ocl.ErrMapFailure:                         MapFailure,
	ocl.ErrMisalignedSubBufferOffset:          MisalignedSubBufferOffset,
	ocl.ErrExecStatusErrorForEventsInWaitList: ExecStatusErrorForEventsInWaitList,
	ocl.ErrCompileProgramFailure:              CompileProgramFailure,
	ocl.ErrLinkerNotAvailable:                 LinkerNotAvailable,
	ocl.ErrLinkProgramFailure:                 LinkProgramFailure,
	ocl.ErrDevicePartitionFailed:              DevicePartitionFailed,
	ocl.ErrKernelArgInfoNotAvailable:          KernelArgInfoNotAvailable,
	ocl.ErrInvalidValue:                       InvalidValue,
	ocl.ErrInvalidDeviceType:                  InvalidDeviceType,
	ocl.ErrInvalidPlatform:                    InvalidPlatform,
	ocl.ErrInvalidDevice:                      InvalidDevice,
	ocl.ErrInvalidContext:                     InvalidContext,
	ocl.ErrInvalidQueueProperties:             InvalidQueueProperties,
	ocl.ErrInvalidCommandQueue:                InvalidCommandQueue,
	ocl.ErrInvalidHostPtr:                     InvalidHostPtr,
	ocl.ErrInvalidMemObject:                   InvalidMemObject,
	ocl.ErrInvalidImageFormatDescriptor:       InvalidImageFormatDescriptor,
	ocl.ErrInvalidImageSize:                   InvalidImageSize,
	ocl.ErrInvalidSampler:                     InvalidSampler,
	ocl.ErrInvalidBinary:                      InvalidBinary,
	ocl.ErrInvalidBuildOptions:                InvalidBuildOptions,
	ocl.ErrInvalidProgram:                     InvalidProgram,
	ocl.ErrInvalidProgramExecutable:           InvalidProgramExecutable,
	ocl.ErrInvalidKernelName:                  InvalidKernelName,
	ocl.ErrInvalidKernelDefinition:            InvalidKernelDefinition,
	ocl.ErrInvalidKernel:                      InvalidKernel,
	ocl.ErrInvalidArgIndex:                    InvalidArgIndex,
	ocl.ErrInvalidArgValue:                    InvalidArgValue,
	ocl.ErrInvalidArgSize:                     InvalidArgSize,
	ocl.ErrInvalidKernelArgs:                  InvalidKernelArgs,
	ocl.ErrInvalidWorkDimension:               InvalidWorkDimension,
	ocl.ErrInvalidWorkGroupSize:               InvalidWorkGroupSize,
	ocl.ErrInvalidWorkItemSize:                InvalidWorkItemSize,
	ocl.ErrInvalidGlobalOffset:                InvalidGlobalOffset,
	ocl.ErrInvalidEventWaitList:               InvalidEventWaitList,
	ocl.ErrInvalidEvent:                       InvalidEvent,
	ocl.ErrInvalidOperation:                   InvalidOperation,
	ocl.ErrInvalidGlObject:                    InvalidGLObject,
	ocl.ErrInvalidBufferSize:                  InvalidBufferSize,
	ocl.ErrInvalidMipLevel:                    InvalidMipLevel,
	ocl.ErrInvalidGlobalWorkSize:              InvalidGlobalWorkSize,
	ocl.ErrInvalidProperty:                    InvalidProperty,
	ocl.ErrInvalidImageDescriptor:             InvalidImageDescriptor,
	ocl.ErrInvalidCompilerOptions:             InvalidCompilerOptions,
	ocl.ErrInvalidLinkerOptions:               InvalidLinkerOptions,
	ocl.ErrInvalidDevicePartitionCount:        InvalidDevicePartitionCount,
}

// statusOf returns the Status behind an error from go-opencl, or err itself when it carries
// no status (ocl.ErrUnknown: a call that succeeded but returned a nil handle).
func statusOf(err error) error {
	var other ocl.ErrOther
	switch {
	case err == nil:
		return nil
	case errors.As(err, &other):
		return Status(other)
	}
	if s, ok := goStatus[err]; ok {
		return s
	}
	return err
}

// prefix starts every error of this package.
const prefix = "cl: "

// contextError is an error of this package with its context: the failing call, or what
// was being done. Its message says the package's prefix once, also when err is itself an
// error of this package ("cl: launch k: argument 3: buffer is closed").
type contextError struct {
	context string
	err     error
}

func (e *contextError) Error() string {
	return prefix + e.context + ": " + strings.TrimPrefix(e.err.Error(), prefix)
}

func (e *contextError) Unwrap() error { return e.err }

// wrapf returns err with the context that format and args give, prefixed "cl: " once.
func wrapf(err error, format string, args ...any) error {
	return &contextError{context: fmt.Sprintf(format, args...), err: err}
}

// wrap names the failing OpenCL call in an error from go-opencl or a Status:
// "cl: clCreateBuffer(1024 bytes): CL_OUT_OF_RESOURCES (-5)". It returns nil for nil.
func wrap(call string, err error) error {
	if err == nil {
		return nil
	}
	return &contextError{context: call, err: statusOf(err)}
}

// check is wrap for a raw status code; Success gives nil.
func check(call string, s Status) error {
	if s == Success {
		return nil
	}
	return &contextError{context: call, err: s}
}

// errClosed reports use of a closed object of this package.
func errClosed(what string) error {
	return fmt.Errorf("cl: %s is closed: %w", what, driver.ErrClosed)
}
