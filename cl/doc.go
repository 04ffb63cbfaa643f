// Files. The two backends, cl and cuda, mirror each other file for file where a concern
// exists in both: api.go (the OpenCL calls go-opencl lacks), blas.go (CLBlast; cuBLAS),
// buffer.go, device.go, doc.go, driver.go (probe and device description), errors.go
// (status codes, wrapping), fft.go (clFFT; cuFFT), memory.go (host buffers, asynchronous
// copies, waits across queues), occupancy.go (theoretical occupancy: CUDA computes it,
// OpenCL answers ErrUnsupported), program.go (build, kernels, attributes), queue.go
// (commands, launches, events), thread.go (the locked OS thread: internal/osthread, one
// helper for both), trace.go (PRISM_TRACE) and vendor.go (the vendor libraries' loader, on
// internal/dl, the dlopen loader of both). api.go, blas.go and fft.go are the package's
// cgo. OpenCL only: env.go (the drivers' defaults, PRISM_OPENCL_DEFAULTS), info.go
// (decoding of clGet*Info answers), pci.go (vendor PCI queries), stderr.go (the drivers'
// compilers' output to the trace; its redirection in stderr_linux.go), noopencl.go (the
// build tag that leaves the backend out).

// Package cl is Prism's OpenCL backend. It runs the kernel suite on any device an OpenCL
// driver exposes: NVIDIA, AMD and Intel GPUs, and CPUs through PoCL.
//
// Import it for its side effect, which registers the backend with engine as "opencl":
//
//	import _ "github.com/prism-compute/prism/cl"
//
//	dev, err := engine.Open(ctx, "opencl:0:0")
//
// Importing does nothing else: the OpenCL ICD loader (libOpenCL.so.1) is first asked for
// platforms by the first call to Devices or Open. Device IDs are "P:D", the platform's
// index and the device's index within it, so "opencl:1:0" is device 0 of platform 1. No
// platform, or no device on any platform, gives an error wrapping engine.ErrUnavailable
// that says what was tried. Build with the tag noopencl to leave the backend out (and with
// it the need for OpenCL headers and libOpenCL at build and run time).
//
// The backend is built on github.com/jgillich/go-opencl, plus a narrow layer of cgo for
// what that binding lacks (api.go): device queries of any length, vendor PCI queries, a
// build that keeps its status code and whole log, kernel arguments of every kind
// (__local pointer parameters included) and kernel work-group queries.
//
// # Kernels and launches
//
// Build compiles OpenCL C; the backend builds no other dialect (engine refuses CUDA C++
// with ErrUnsupported). A kernel may declare __local pointer parameters: their size is
// given at launch by an engine.LocalBytes argument (clSetKernelArg with no value). OpenCL
// has no other dynamic shared memory and no clusters: a launch asking for
// Range.SharedBytes or Range.Cluster gives ErrUnsupported. A kernel's attributes come
// from clGetKernelWorkGroupInfo: its work-group limit, static local memory, private
// memory and preferred work-group multiple. OpenCL reports neither a kernel's registers
// nor a compute unit's limits, so occupancy (engine.Kernel.Occupancy) is ErrUnsupported.
//
// # The drivers' environment
//
// OpenCL drivers read their settings from the environment when they load. Before the ICD
// loader is first asked for platforms (the first Devices or Open, never at import), the
// backend sets these, each only where the process has not set it (set to anything, even
// the empty string, the user's value stays):
//
//	POCL_WORK_GROUP_SPECIALIZATION=0  PoCL compiles a program once instead of once per
//	                                  work-group size (0.65-0.85 s each on a CPU)
//	POCL_CACHE_DIR=DIR/pocl           PoCL's compiled programs in Prism's cache: DIR is
//	                                  $PRISM_CACHE_DIR, else the user's cache directory's
//	                                  prism (~/.cache/prism), as the CUDA backend's cache
//	RUSTICL_ENABLE=llvmpipe           Mesa's Rusticl lists the CPU (llvmpipe); without the
//	                                  variable it lists no device at all
//
// PRISM_OPENCL_DEFAULTS=0 (EnvNoDefaults) leaves every variable as the process has it.
// PRISM_TRACE=1 says which were set. A platform that lists no device is named in the trace
// with a hint where one is known (Mesa's Rusticl without a driver enabled, Mesa's Clover,
// which has no CPU device), and in the error when no platform lists a device.
//
// PRISM_OPENCL_COMMAND_BUFFER=1 (EnvCommandBuffer) records graphs into cl_khr_command_buffer
// where a device has it (graph.go); off by default.
//
// Some drivers' compilers write to the process's standard error themselves, not through
// the build log: PoCL's clang prints "N warnings generated." and Mesa prints "MESA:
// warning: Treating load_kernel_arg in control flow as uniform, results may be incorrect"
// while they compile (seen here from clFFT's and CLBlast's kernels and from programs
// built with Build, once per program, only when the driver's cache misses). Neither is an
// error: every result Prism reports on such a device was verified against its float64
// reference. So the calls that compile (clBuildProgram, clfftBakePlan, and the first call
// of each CLBlast routine on a handle, outside the span that times it) run in a window
// during which file descriptor 2 is a pipe (stderr.go): that chatter (the counts of
// warnings, Mesa's warnings, clang's warnings with their notes, source excerpts and caret
// lines) goes to the trace, and every other line, whoever wrote it, goes on to the
// original stderr byte for byte as soon as it ends (a progress line at once). The windows
// of concurrent builds share one redirection, counted; Go's fatal errors inside one still
// print (debug.SetCrashOutput), and the pipe is read by blocking reads, so that a
// driver's message written just before it aborts the process gets out. PRISM_DRIVER_STDERR=1 (EnvDriverStderr) leaves file descriptor
// 2 alone, so the compilers print as they would. The build log of a program that compiled
// with warnings goes to the trace too. The redirection is done on Linux only.
//
// # Tracing
//
// PRISM_TRACE=1 reports on stderr the OpenCL library loaded, each platform and device
// found, where the platform's driver caches compiled programs (OpenCL drivers keep their
// own caches), each device opened with its queue and thread policy, and each build with
// its options and time, and the drivers' compilers' own output on stderr ("prism: cl:
// driver's compiler: 2 warnings generated.").
//
// # Errors
//
// An error from a failed OpenCL call names the call and wraps a Status, the OpenCL status
// code with its name: "cl: clCreateBuffer(1024 bytes): CL_OUT_OF_RESOURCES (-5)". errors.Is
// matches a Status against the engine sentinels it stands for (out of resources and
// allocation failures against engine.ErrOutOfMemory, invalid values and sizes against
// engine.ErrInvalidArg, an unknown kernel name against engine.ErrNotFound); errors.As
// extracts the Status. A program that does not compile gives a *driver.BuildError with the
// compiler's whole log.
//
// # Concurrency
//
// The Driver and each open device are safe for concurrent use, and so are buffers,
// programs and kernels: a kernel's arguments are set and its launch enqueued under a
// per-kernel mutex, because clSetKernelArg changes the one cl_kernel all launches share. A
// queue, and an event, are used by one goroutine at a time.
//
// # PoCL and Oclgrind: one queue per device
//
// With PoCL 3.1 one cl_command_queue per goroutine aborted the process in about 5 of 225
// measured runs (a reference-count assertion inside PoCL), while one in-order queue shared
// by many goroutines never failed in 125 runs. So on PoCL, and on Oclgrind, NewQueue
// returns handles on one shared in-order queue per physical device, and every enqueue and
// finish on that device is serialized by one mutex. The program sees the same semantics
// (each handle is in order; a handle's Finish may also wait for work enqueued by other
// handles); only overlap between goroutines is lost, which matters little on a CPU device,
// where one kernel already uses every core. Other drivers give each queue its own
// cl_command_queue.
//
// Oclgrind needs one more thing: its uninitialized-memory checker keeps state per OS
// thread, created by the thread that made the context, and crashes when a host transfer
// comes from another thread. Go moves goroutines between threads, so on Oclgrind every
// call on a context runs on one goroutine locked to one OS thread (see thread.go). And
// Build defines PRISM_OCLGRIND there (-DPRISM_OCLGRIND=1, after the options given), with
// which a kernel picks a form Oclgrind 21.10 checks correctly where its fast form draws a
// false report (a 16-byte store of a vector built from scalars: see oclgrindDefine).
//
// # Host buffers and waits across queues
//
// A host buffer (engine.NewHostBuffer) is a CL_MEM_ALLOC_HOST_PTR buffer mapped for its
// whole life, from which and into which Buffer.WriteAsync and ReadAsync copy without
// blocking; it reports Pinned on GPUs only (pinnedHost in memory.go says why). A queue's
// Wait on another queue's events is a clEnqueueBarrierWithWaitList, after a clFlush of
// those queues, which OpenCL requires (without it Rusticl never ran the command waited
// for); Record is a marker. Maps, unmaps and these waits follow the queue and thread
// policies like every other call; on a device whose queues are their own, nothing holds a
// device-wide lock while a command runs.
//
// # Vendor libraries
//
// Devices implement driver.BLASProvider with CLBlast and driver.FFTProvider with clFFT, so
// that engine's Device.BLAS and Device.FFT run them on the backend's own queues and
// buffers, beside Prism's kernels. libclblast.so.1 and libclFFT.so.2 (Debian: libclblast1,
// libclfft2; no -dev package: blas.go and fft.go declare the C API they call) are loaded
// with dlopen on first use, from the directories of PRISM_VENDOR_PATH, then the dynamic
// loader's path, then /usr/local/lib and the like; a missing library gives an error
// wrapping engine.ErrUnavailable that names every file tried.
//
// CLBlast is called with its row-major layout, which takes Prism's GEMM arguments as they
// are (CLBlastSgemm, CLBlastDgemm and their StridedBatched forms). clFFT plans are out of
// place, interleaved (real to Hermitian interleaved for r2c), with a scale of 1 in both
// directions (clFFT scales its backward transform by 1/n unless told otherwise), and are
// baked when made. Every call is bracketed by two markers (clEnqueueMarkerWithWaitList)
// whose profiling timestamps time the whole call in Queue.Timed: the event a library
// returns is only its last kernel's. Calls take the device's queue mutex under queue
// sharing and run on the context's thread under the thread policy, like every enqueue;
// clFFT's are also serialized across the process, because its plans of one shape share a
// cl_kernel whose arguments each call sets. The last handle to close clears CLBlast's cache
// of programs (CLBlastClearCache) and tears clFFT down (clfftTeardown), releasing the
// contexts they hold. clFFT reports its version (clfftGetVersion); CLBlast has no version
// call, so its version is that of the file loaded (libclblast.so.1.5.3). Failed calls wrap
// a BLASStatus or FFTStatus, named as in clblast_c.h and clFFT.h.
//
// docs/ARCHITECTURE.md describes how a kernel source becomes a program on each backend and
// which files of cl/ and cuda/ mirror each other.
package cl
