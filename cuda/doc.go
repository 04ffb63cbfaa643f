// Files. The two backends, cl and cuda, mirror each other file for file where a concern
// exists in both: api.go (the driver's and NVRTC's C calls), blas.go (cuBLAS; CLBlast),
// buffer.go, device.go, doc.go, driver.go (probe and device description), errors.go
// (status codes, wrapping), fft.go (cuFFT; clFFT), memory.go (pooled and host buffers,
// asynchronous copies, waits across queues), occupancy.go (theoretical occupancy: CUDA
// computes it, OpenCL answers ErrUnsupported), program.go (build, kernels, attributes),
// queue.go (commands, launches, events), thread.go (the locked OS thread: internal/osthread, one
// helper for both), trace.go (PRISM_TRACE) and vendor.go (the vendor libraries' loader, on
// internal/dl, the dlopen loader of both). CUDA only:
// cache.go (the disk cache of NVRTC's output), graph.go (graphs by stream capture; engine
// records OpenCL queues itself), headers.go and include/ (the headers embedded for CUDA
// C++), nccl.go (NCCL's communicators and collectives; no OpenCL mirror: engine/group stages
// the collectives of OpenCL devices through host memory), options.go (build options and target
// architecture), params.go (parameter counts from module images), tensormap.go (tensor
// maps). The translation of OpenCL C to CUDA C++, the prelude and the source translation
// that rewrites vector literals, swizzles and conversions, is package cuda/clc/translate:
// pure Go, tested without cgo or a GPU; program.go compiles what it returns.

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
// device's primary context is made current once; the device's calls are handed to that
// thread and waited for, except the hot ones: an untimed launch (Queue.Launch outside
// Timed, driver.UntimedLauncher) and the stream and event queries that waits poll with
// (Event.Wait, Queue.Finish, the ordering before Write and Read) are made from the calling
// goroutine, by C functions that make the context current on the caller's thread and make
// the call in one cgo call (prism_launch_in in api.go), so that the goroutine cannot move
// in between. Such a launch costs no channel hop, no event and no allocation; a wait never
// occupies the device's thread, and honors its context. A wait queries once, then
// blocks in the driver (cuStreamSynchronize, cuEventSynchronize) on a goroutine of its
// own, which returns sooner than querying from Go and costs the host no more;
// PRISM_WAIT_SPIN (a duration from 0 to 1s, as 100us) makes it query for that long
// first, a core of the host busy for as long (a value out of range fails the device's
// open).
//
// # Kernels
//
// The backend builds two dialects (driver.DialectBuilder). OpenCL C 1.2, the suite's, is
// compiled with NVRTC after its translation (package cuda/clc/translate): a prelude of
// CUDA C++ put before the source, and a source translation that rewrites, within the
// source's lines, what macros cannot carry: vector literals, swizzles, and conversions with
// saturation or rounding modes. The same text runs on both backends, and NVRTC's messages
// give the user's lines; a construct with no CUDA counterpart (an image) is refused with
// ErrUnsupported, naming it and its line. Its build options are translated
// (-cl-fast-relaxed-math to --use_fast_math, ...) or dropped, never passed through; -D and
// -I pass through. CUDA C++,
// for NVIDIA-only kernels (tensor cores, warp shuffles, Hopper's wgmma), is compiled as it
// is, with NVRTC's options, for the device's architecture-specific target where it has
// one (sm_90a, virtual compute_90a, on an H100), and with an embedded header set that
// NVRTC gets in memory: prism_cuda.h (include/), with fixed-width integer types and half
// and bfloat16 storage types whose conversions are inline PTX, since NVRTC ships no
// cuda_fp16.h or cuda_bf16.h. Its kernels are declared extern "C". Either way the
// architecture comes from the device (CUBIN for it where NVRTC supports it, else PTX),
// and a source that does not compile gives a *driver.BuildError with NVRTC's log.
//
// Compiled code is cached on disk under $PRISM_CACHE_DIR/cuda, or the user cache
// directory's prism/cuda, keyed by the dialect, the whole text compiled, the embedded
// headers, the options (the -arch one included), the device's architecture and target,
// and the NVRTC and driver versions; PRISM_TRACE=1 reports the libraries loaded, the
// devices, each build's target and options, cache hits and misses, and what each captured
// graph holds (its nodes by type: a graph of n launches holds n kernel nodes). A cache
// entry is a short header (magic, kind, checksum) followed by the image, CUBIN or PTX:
// tools that read CUBIN (cuobjdump) take the entry from its ELF header on.
//
// # Launches
//
// A launch may give the kernel dynamic shared memory (Range.SharedBytes, the launch's
// sharedMemBytes): above the 48 KiB a block gets by default, up to the device's opt-in
// limit, the kernel opts in once per size (cuFuncSetAttribute with
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). On devices of compute capability 9.0
// and newer, a launch may group blocks in thread-block clusters of up to 8 (Range.Cluster;
// cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, looked up on first use).
// Kernels built from OpenCL C keep their __local pointer parameters: the translation makes
// each a byte offset into the block's dynamic shared memory, and the launch turns the
// engine.LocalBytes arguments into those offsets, 16-byte aligned after Range.SharedBytes,
// and sizes the dynamic shared memory to hold them all (queue.go, withLocals); CUDA C++
// kernels have none, and a LocalBytes argument gives them ErrUnsupported. Kernels report their attributes (cuFuncGetAttribute): registers, static
// shared, local and constant memory, the largest block, the binary and PTX versions; and
// their theoretical occupancy at a block size (occupancy.go): the blocks resident on a
// multiprocessor from cuOccupancyMaxActiveBlocksPerMultiprocessor, and the limiting
// factor from the kernel's registers and shared memory against the multiprocessor's
// registers, shared memory, threads and blocks, by the rules of CUDA's occupancy
// calculator.
//
// Devices of compute capability 9.0 and newer encode tensor maps (driver.TensorMapEncoder)
// with cuTensorMapEncodeTiled, an optional symbol of CUDA 12.0 drivers, on the device's
// thread: element strides 1, no interleave, zeros outside the tensor. A kernel takes the
// 128-byte map by value; launches pass every argument from C memory in which each value
// is aligned to its size's power of two, up to 64 bytes (a tensor map's alignment), and
// check each size against the kernel's parameters where the driver reports them
// (cuFuncGetParamInfo, CUDA 12.4).
//
// # Beyond the engine API
//
// engine.Device.Driver() returns a Device, with the device's Properties, its free memory
// and page-locked host memory (AllocHost, HostSlice); a driver-level Program's kernels are
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
// # Collectives
//
// Devices implement driver.CollectiveProvider with NCCL, so that engine runs all-reduce,
// all-gather, reduce-scatter and broadcast on the devices' own streams and buffers, among
// the devices of this process and of others. libnccl.so.2 (then libnccl.so) is loaded on
// first use like the vendor libraries, from PRISM_VENDOR_PATH first; a missing library gives
// an error wrapping engine.ErrUnavailable. Before it is loaded, NCCL_NVLS_ENABLE is set to 0
// unless the environment sets it: NVLink multicast (NVLS) is left off because on shared
// machines its multicast objects can take GPUs out of service, and the backend never makes
// multicast objects itself.
//
// One thread drives every device of a communicator through NCCL's group calls: making the
// communicator (ncclCommInitRank for each device, with its primary context current, which
// is the context NCCL's CUDA runtime uses), each collective (one NCCL call per device, on
// its queue's stream) and closing it (ncclCommFinalize together, then ncclCommDestroy) are
// each one C call, from the calling goroutine locked to its OS thread, never from a
// device's thread: NCCL makes the devices' contexts current in turn, and making a
// communicator waits for every rank of every process. Failed calls wrap an NCCLResult
// (ncclResult_t), named as in nccl.h, with NCCL's text for it.
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
//
// docs/ARCHITECTURE.md describes the prelude, the CUDA C++ dialect, NVRTC's targets
// (compute_90a on sm_90) and the disk cache's key.
package cuda
