package cuda

import (
	"fmt"
	"github.com/prism-compute/prism/engine/driver"
	"strings"
)

// Result is a CUDA driver API status code (CUresult). Its Error method gives the name
// from cuda.h ("CUDA_ERROR_OUT_OF_MEMORY"); errors.Is matches it against the engine
// sentinel it stands for (see Is).
type Result int

// CUDA driver API status codes (cuda.h).
const (
	Success                      Result = 0
	InvalidValue                 Result = 1
	OutOfMemory                  Result = 2
	NotInitialized               Result = 3
	Deinitialized                Result = 4
	ProfilerDisabled             Result = 5
	StubLibrary                  Result = 34
	DeviceUnavailable            Result = 46
	NoDevice                     Result = 100
	InvalidDevice                Result = 101
	DeviceNotLicensed            Result = 102
	InvalidImage                 Result = 200
	InvalidContext               Result = 201
	MapFailed                    Result = 205
	UnmapFailed                  Result = 206
	NoBinaryForGPU               Result = 209
	ECCUncorrectable             Result = 214
	UnsupportedLimit             Result = 215
	ContextAlreadyInUse          Result = 216
	PeerAccessUnsupported        Result = 217
	InvalidPTX                   Result = 218
	InvalidGraphicsContext       Result = 219
	NVLinkUncorrectable          Result = 220
	JITCompilerNotFound          Result = 221
	UnsupportedPTXVersion        Result = 222
	JITCompilationDisabled       Result = 223
	UnsupportedExecAffinity      Result = 224
	UnsupportedDevsideSync       Result = 225
	InvalidSource                Result = 300
	FileNotFound                 Result = 301
	SharedObjectSymbolNotFound   Result = 302
	SharedObjectInitFailed       Result = 303
	OperatingSystem              Result = 304
	InvalidHandle                Result = 400
	IllegalState                 Result = 401
	LossyQuery                   Result = 402
	NotFound                     Result = 500
	NotReady                     Result = 600
	IllegalAddress               Result = 700
	LaunchOutOfResources         Result = 701
	LaunchTimeout                Result = 702
	LaunchIncompatibleTexturing  Result = 703
	PeerAccessAlreadyEnabled     Result = 704
	PeerAccessNotEnabled         Result = 705
	PrimaryContextActive         Result = 708
	ContextIsDestroyed           Result = 709
	Assert                       Result = 710
	TooManyPeers                 Result = 711
	HostMemoryAlreadyRegistered  Result = 712
	HostMemoryNotRegistered      Result = 713
	HardwareStackError           Result = 714
	IllegalInstruction           Result = 715
	MisalignedAddress            Result = 716
	InvalidAddressSpace          Result = 717
	InvalidPC                    Result = 718
	LaunchFailed                 Result = 719
	CooperativeLaunchTooLarge    Result = 720
	NotPermitted                 Result = 800
	NotSupported                 Result = 801
	SystemNotReady               Result = 802
	SystemDriverMismatch         Result = 803
	CompatNotSupportedOnDevice   Result = 804
	StreamCaptureUnsupported     Result = 900
	StreamCaptureInvalidated     Result = 901
	Timeout                      Result = 909
	GraphExecUpdateFailure       Result = 910
	ExternalDevice               Result = 911
	InvalidClusterSize           Result = 912
	FunctionNotLoaded            Result = 913
	InvalidResourceType          Result = 914
	InvalidResourceConfiguration Result = 915
	Unknown                      Result = 999
)

var resultNames = map[Result]string{
	Success:                      "CUDA_SUCCESS",
	InvalidValue:                 "CUDA_ERROR_INVALID_VALUE",
	OutOfMemory:                  "CUDA_ERROR_OUT_OF_MEMORY",
	NotInitialized:               "CUDA_ERROR_NOT_INITIALIZED",
	Deinitialized:                "CUDA_ERROR_DEINITIALIZED",
	ProfilerDisabled:             "CUDA_ERROR_PROFILER_DISABLED",
	StubLibrary:                  "CUDA_ERROR_STUB_LIBRARY",
	DeviceUnavailable:            "CUDA_ERROR_DEVICE_UNAVAILABLE",
	NoDevice:                     "CUDA_ERROR_NO_DEVICE",
	InvalidDevice:                "CUDA_ERROR_INVALID_DEVICE",
	DeviceNotLicensed:            "CUDA_ERROR_DEVICE_NOT_LICENSED",
	InvalidImage:                 "CUDA_ERROR_INVALID_IMAGE",
	InvalidContext:               "CUDA_ERROR_INVALID_CONTEXT",
	MapFailed:                    "CUDA_ERROR_MAP_FAILED",
	UnmapFailed:                  "CUDA_ERROR_UNMAP_FAILED",
	NoBinaryForGPU:               "CUDA_ERROR_NO_BINARY_FOR_GPU",
	ECCUncorrectable:             "CUDA_ERROR_ECC_UNCORRECTABLE",
	UnsupportedLimit:             "CUDA_ERROR_UNSUPPORTED_LIMIT",
	ContextAlreadyInUse:          "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
	PeerAccessUnsupported:        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	InvalidPTX:                   "CUDA_ERROR_INVALID_PTX",
	InvalidGraphicsContext:       "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT",
	NVLinkUncorrectable:          "CUDA_ERROR_NVLINK_UNCORRECTABLE",
	JITCompilerNotFound:          "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	UnsupportedPTXVersion:        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	JITCompilationDisabled:       "CUDA_ERROR_JIT_COMPILATION_DISABLED",
	UnsupportedExecAffinity:      "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY",
	UnsupportedDevsideSync:       "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC",
	InvalidSource:                "CUDA_ERROR_INVALID_SOURCE",
	FileNotFound:                 "CUDA_ERROR_FILE_NOT_FOUND",
	SharedObjectSymbolNotFound:   "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND",
	SharedObjectInitFailed:       "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
	OperatingSystem:              "CUDA_ERROR_OPERATING_SYSTEM",
	InvalidHandle:                "CUDA_ERROR_INVALID_HANDLE",
	IllegalState:                 "CUDA_ERROR_ILLEGAL_STATE",
	LossyQuery:                   "CUDA_ERROR_LOSSY_QUERY",
	NotFound:                     "CUDA_ERROR_NOT_FOUND",
	NotReady:                     "CUDA_ERROR_NOT_READY",
	IllegalAddress:               "CUDA_ERROR_ILLEGAL_ADDRESS",
	LaunchOutOfResources:         "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	LaunchTimeout:                "CUDA_ERROR_LAUNCH_TIMEOUT",
	LaunchIncompatibleTexturing:  "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING",
	PeerAccessAlreadyEnabled:     "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	PeerAccessNotEnabled:         "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
	PrimaryContextActive:         "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
	ContextIsDestroyed:           "CUDA_ERROR_CONTEXT_IS_DESTROYED",
	Assert:                       "CUDA_ERROR_ASSERT",
	TooManyPeers:                 "CUDA_ERROR_TOO_MANY_PEERS",
	HostMemoryAlreadyRegistered:  "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
	HostMemoryNotRegistered:      "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
	HardwareStackError:           "CUDA_ERROR_HARDWARE_STACK_ERROR",
	IllegalInstruction:           "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	MisalignedAddress:            "CUDA_ERROR_MISALIGNED_ADDRESS",
	InvalidAddressSpace:          "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	InvalidPC:                    "CUDA_ERROR_INVALID_PC",
	LaunchFailed:                 "CUDA_ERROR_LAUNCH_FAILED",
	CooperativeLaunchTooLarge:    "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
	NotPermitted:                 "CUDA_ERROR_NOT_PERMITTED",
	NotSupported:                 "CUDA_ERROR_NOT_SUPPORTED",
	SystemNotReady:               "CUDA_ERROR_SYSTEM_NOT_READY",
	SystemDriverMismatch:         "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	CompatNotSupportedOnDevice:   "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	StreamCaptureUnsupported:     "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
	StreamCaptureInvalidated:     "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
	Timeout:                      "CUDA_ERROR_TIMEOUT",
	GraphExecUpdateFailure:       "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
	ExternalDevice:               "CUDA_ERROR_EXTERNAL_DEVICE",
	InvalidClusterSize:           "CUDA_ERROR_INVALID_CLUSTER_SIZE",
	FunctionNotLoaded:            "CUDA_ERROR_FUNCTION_NOT_LOADED",
	InvalidResourceType:          "CUDA_ERROR_INVALID_RESOURCE_TYPE",
	InvalidResourceConfiguration: "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
	Unknown:                      "CUDA_ERROR_UNKNOWN",
}

// Error returns the code's name from cuda.h, or "CUresult(N)" for a code this package
// does not know.
func (r Result) Error() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("CUresult(%d)", int(r))
}

// Is reports whether r stands for target: out of memory for driver.ErrOutOfMemory;
// invalid values, handles, devices and launch configurations for driver.ErrInvalidArg; a
// missing device or driver (no device, not initialized, stub library, driver mismatch,
// ...) for driver.ErrUnavailable; an unknown symbol for driver.ErrNotFound; and an
// unsupported operation, or a binary or PTX the device cannot run, for
// driver.ErrUnsupported.
func (r Result) Is(target error) bool {
	switch target {
	case driver.ErrOutOfMemory:
		return r == OutOfMemory
	case driver.ErrInvalidArg:
		return r == InvalidValue || r == InvalidHandle || r == InvalidDevice || r == LaunchOutOfResources ||
			r == InvalidClusterSize
	case driver.ErrUnavailable:
		return r == NoDevice || r == NotInitialized || r == Deinitialized || r == StubLibrary ||
			r == DeviceUnavailable || r == SystemDriverMismatch || r == SystemNotReady ||
			r == CompatNotSupportedOnDevice || r == DeviceNotLicensed
	case driver.ErrNotFound:
		return r == NotFound
	case driver.ErrUnsupported:
		return r == NotSupported || r == NoBinaryForGPU || r == UnsupportedPTXVersion ||
			r == JITCompilerNotFound || r == JITCompilationDisabled
	}
	return false
}

// NVRTCResult is an NVRTC status code (nvrtcResult). Like Result, its Error method gives
// the name from nvrtc.h and errors.Is matches it against the engine sentinels.
type NVRTCResult int

// NVRTC status codes (nvrtc.h).
const (
	NVRTCSuccess                           NVRTCResult = 0
	NVRTCOutOfMemory                       NVRTCResult = 1
	NVRTCProgramCreationFailure            NVRTCResult = 2
	NVRTCInvalidInput                      NVRTCResult = 3
	NVRTCInvalidProgram                    NVRTCResult = 4
	NVRTCInvalidOption                     NVRTCResult = 5
	NVRTCCompilation                       NVRTCResult = 6
	NVRTCBuiltinOperationFailure           NVRTCResult = 7
	NVRTCNoNameExpressionsAfterCompilation NVRTCResult = 8
	NVRTCNoLoweredNamesBeforeCompilation   NVRTCResult = 9
	NVRTCNameExpressionNotValid            NVRTCResult = 10
	NVRTCInternalError                     NVRTCResult = 11
	NVRTCTimeFileWriteFailed               NVRTCResult = 12
	NVRTCNoPCHCreateAttempted              NVRTCResult = 13
	NVRTCPCHCreateHeuristicExceeded        NVRTCResult = 14
	NVRTCPCHCreate                         NVRTCResult = 15
	NVRTCCancelled                         NVRTCResult = 16
	NVRTCTimeTraceFileWriteFailed          NVRTCResult = 17
)

// Results that this package gives where NVRTC itself answered success but what it answered
// cannot be used: negative, so that they are never taken for a code of nvrtc.h.
const (
	// NVRTCImageRefused: the size NVRTC gave for the compiled image is none a module has
	// (0, or above the largest this package takes).
	NVRTCImageRefused NVRTCResult = -1
	// NVRTCHostOutOfMemory: the host had no memory for the image NVRTC compiled.
	NVRTCHostOutOfMemory NVRTCResult = -2
)

var nvrtcNames = map[NVRTCResult]string{
	NVRTCSuccess:                           "NVRTC_SUCCESS",
	NVRTCOutOfMemory:                       "NVRTC_ERROR_OUT_OF_MEMORY",
	NVRTCProgramCreationFailure:            "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	NVRTCInvalidInput:                      "NVRTC_ERROR_INVALID_INPUT",
	NVRTCInvalidProgram:                    "NVRTC_ERROR_INVALID_PROGRAM",
	NVRTCInvalidOption:                     "NVRTC_ERROR_INVALID_OPTION",
	NVRTCCompilation:                       "NVRTC_ERROR_COMPILATION",
	NVRTCBuiltinOperationFailure:           "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	NVRTCNoNameExpressionsAfterCompilation: "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
	NVRTCNoLoweredNamesBeforeCompilation:   "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	NVRTCNameExpressionNotValid:            "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
	NVRTCInternalError:                     "NVRTC_ERROR_INTERNAL_ERROR",
	NVRTCTimeFileWriteFailed:               "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
	NVRTCNoPCHCreateAttempted:              "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
	NVRTCPCHCreateHeuristicExceeded:        "NVRTC_ERROR_PCH_CREATE_HEURISTIC_EXCEEDED",
	NVRTCPCHCreate:                         "NVRTC_ERROR_PCH_CREATE",
	NVRTCCancelled:                         "NVRTC_ERROR_CANCELLED",
	NVRTCTimeTraceFileWriteFailed:          "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
	NVRTCImageRefused:                      "not a module image's size (NVRTC answered success; refused by Prism)",
	NVRTCHostOutOfMemory:                   "no host memory for the compiled image (NVRTC answered success)",
}

// Error returns the code's name from nvrtc.h, or "nvrtcResult(N)".
func (r NVRTCResult) Error() string {
	if s, ok := nvrtcNames[r]; ok {
		return s
	}
	return fmt.Sprintf("nvrtcResult(%d)", int(r))
}

// Is reports whether r stands for target: out of memory for driver.ErrOutOfMemory, an
// invalid option or input for driver.ErrInvalidArg, a compilation error for
// driver.ErrBuild.
func (r NVRTCResult) Is(target error) bool {
	switch target {
	case driver.ErrOutOfMemory:
		return r == NVRTCOutOfMemory || r == NVRTCHostOutOfMemory
	case driver.ErrInvalidArg:
		return r == NVRTCInvalidOption || r == NVRTCInvalidInput
	case driver.ErrBuild:
		return r == NVRTCCompilation
	}
	return false
}

// prefix starts every error of this package.
const prefix = "cuda: "

// check names the failing driver call: "cuda: cuMemAlloc_v2(1024 bytes):
// CUDA_ERROR_OUT_OF_MEMORY". Success gives nil.
func check(call string, r Result) error {
	if r == Success {
		return nil
	}
	return &contextError{context: call, err: r}
}

// checkNVRTC is check for NVRTC.
func checkNVRTC(call string, r NVRTCResult) error {
	if r == NVRTCSuccess {
		return nil
	}
	return &contextError{context: call, err: r}
}

// contextError is an error of this package with its context: the failing call, or what
// was being done. Its message says the package's prefix once, also when err is itself an
// error of this package ("cuda: launch k: argument 3: buffer is closed").
type contextError struct {
	context string
	err     error
}

func (e *contextError) Error() string {
	return prefix + e.context + ": " + strings.TrimPrefix(e.err.Error(), prefix)
}

func (e *contextError) Unwrap() error { return e.err }

// wrapf returns err with the context that format and args give, prefixed "cuda: " once.
func wrapf(err error, format string, args ...any) error {
	return &contextError{context: fmt.Sprintf(format, args...), err: err}
}

// errNoLibrary reports libraries that could not be loaded: what lists each library with
// every name tried and the dynamic loader's message.
func errNoLibrary(what string) error {
	return fmt.Errorf("cuda: cannot load %s: %w", what, driver.ErrUnavailable)
}

// errClosed reports use of a closed object of this package.
func errClosed(what string) error {
	return fmt.Errorf("cuda: %s is closed: %w", what, driver.ErrClosed)
}
