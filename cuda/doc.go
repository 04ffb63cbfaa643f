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
// # Vendor libraries
//
// Devices implement driver.BLASProvider with cuBLAS and driver.FFTProvider with cuFFT, so
// that engine's Device.BLAS and Device.FFT run them on the backend's own streams and
// buffers, beside Prism's kernels. libcublas.so.13 (.12, .11) and libcufft.so.12 (.11,
// .10) are loaded with dlopen on first use, like the driver, from the directories of
// PRISM_VENDOR_PATH, then the dynamic loader's path, then $CUDA_HOME/lib64,
// $CUDA_PATH/lib64, /usr/local/cuda/lib64 and /usr/local/cuda/targets/<arch>/lib (cuBLASLt
// is opened first from the same directory); a missing library gives an error wrapping
// engine.ErrUnavailable that names every file tried. Versions come from
// cublasGetProperty and cufftGetProperty.
//
// Every library call runs on the device's thread with its context current, bound to the
// queue's stream at each call (cublasSetStream_v2, cufftSetStream), between the queue's
// two timing events, so that Queue.Timed counts the whole call. cuBLAS computes Prism's
// row-major product as the column-major C^T = op(B)^T op(A)^T (the operands swapped, M and
// N too, leading dimensions and strides as they are), with alpha and beta in host memory
// and CUBLAS_DEFAULT_MATH, which keeps a float32 GEMM in float32 (no TF32); there is one
// cuBLAS handle per stream, so that streams never share a workspace. cuFFT plans
// (cufftCreate, cufftMakePlanMany) use the basic layout, which is Prism's: contiguous
// transforms, n/2+1 complex outputs in the last dimension of an r2c transform; cuFFT's
// inverse is unnormalized, as Prism's. Failed calls wrap a BLASStatus (cublasStatus_t) or
// FFTResult (cufftResult), named as in the headers.
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
