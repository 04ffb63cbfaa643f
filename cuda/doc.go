// Package cuda is Prism's CUDA backend: the CUDA driver API, and NVRTC to compile the
// kernel suite's OpenCL C sources for NVIDIA GPUs.
//
// Import it for its side effect, which registers the backend with engine as "cuda":
//
//	import _ "github.com/prism-compute/prism/cuda"
//
//	dev, err := engine.Open(ctx, "cuda:0")
//
// # Loading
//
// Importing does nothing else, and building needs no CUDA toolkit: libcuda.so.1 and NVRTC
// (libnvrtc.so.13, libnvrtc.so.12, then libnvrtc.so) are loaded with dlopen by the first
// call to Devices or Open, and their functions found with dlsym, under the ABI versions
// this package declares (cuMemAlloc_v2 and so on). Without either library, or without a
// device, Devices returns an error wrapping engine.ErrUnavailable that names every library
// tried with the dynamic loader's message. Device IDs are CUDA ordinals: "cuda:0", ...
//
// # Threads
//
// A CUDA context is current per OS thread, and goroutines move between threads at cgo
// calls. Each open device therefore has one goroutine locked to its OS thread, on which the
// device's primary context is made current once; every CUDA call for the device, from any
// goroutine, is handed to that thread and waited for. Waits (Event.Wait, Queue.Finish, and
// the ordering before Write and Read) poll from that thread instead of blocking it, so that
// one goroutine's wait does not hold up the others' launches, and honor their context.
//
// # Kernels
//
// Build compiles the suite's OpenCL C 1.2 with NVRTC after a translation prelude
// (prelude.cuh, embedded): the same text runs on both backends. OpenCL build options are
// translated (-cl-fast-relaxed-math to --use_fast_math, ...) or dropped, never passed
// through; -D and -I pass through; the architecture comes from the device (CUBIN for
// sm_XY where NVRTC supports it, else PTX). A source that does not compile gives a
// *driver.BuildError with NVRTC's log. Compiled code is cached on disk under
// $PRISM_CACHE_DIR/cuda, or the user cache directory's prism/cuda, keyed by the source,
// options, architecture and NVRTC version; PRISM_TRACE=1 reports hits and misses.
//
// # Beyond the engine API
//
// engine.Device.Driver() returns a Device, with the device's Properties, its free memory,
// page-locked host memory (AllocHost, HostSlice), and BuildCUDA, which compiles CUDA C++
// without the prelude for NVIDIA-only kernels; a driver-level Program's kernels are
// Kernels, with the occupancy query.
//
// # Errors
//
// Every error names the failing call and wraps a Result (CUresult) or NVRTCResult, named
// as in cuda.h and nvrtc.h ("cuda: cuMemAlloc_v2(1024 bytes): CUDA_ERROR_OUT_OF_MEMORY").
// errors.Is matches them against the engine sentinels they stand for: out of memory
// against engine.ErrOutOfMemory, invalid values and handles against engine.ErrInvalidArg,
// no device or driver against engine.ErrUnavailable, an unknown kernel against
// engine.ErrNotFound, unsupported operations against engine.ErrUnsupported.
//
// # Concurrency
//
// The Driver and each open device are safe for concurrent use, and so are buffers,
// programs and kernels. A queue, and an event, are used by one goroutine at a time.
package cuda
