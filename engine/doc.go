// Package engine is Prism's user API: it finds compute backends, opens devices, moves data
// and launches kernels, the same way on every backend.
//
// Backends (OpenCL, CUDA) live in their own packages and register themselves with Register
// when imported, like database/sql drivers:
//
//	import _ "github.com/prism-compute/prism/cl"
//
//	dev, err := engine.Open(ctx, "opencl:0:0")
//	...
//	defer dev.Close()
//	q, _ := dev.NewQueue()
//	x, _ := engine.Upload(ctx, q, []float32{1, 2, 3})
//	prog, _ := dev.Build(src, "-DWG=256")
//	k, _ := prog.Kernel("scale")
//	err = q.Launch(k, engine.Range1D(3, engine.Auto), x, float32(2), int32(3))
//
// A local size of Auto lets the launch choose the work-group size within the compiled
// kernel's and the device's limits (some devices allow only 32 items), dividing the global
// size so that the launch covers exactly the range asked; Kernel.Resolve tells the choice.
//
// Package platform lists the devices of every backend at once and applies the selection
// policy (PRISM_DEVICE); most programs start there.
//
// # Dialects
//
// Build compiles OpenCL C, which every backend builds. BuildSource compiles a Source that
// says its dialect: OpenCL C, or CUDA C++ for NVIDIA-only kernels, which only the CUDA
// backend builds (Device.Dialects lists what a device builds). A dialect the device lacks
// gives an error wrapping ErrUnsupported that names the dialect and the device:
//
//	if dev.Builds(engine.DialectCUDA) {
//		prog, err = dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: wgmmaSrc, Name: "gemm.cu"})
//	}
//
// On OpenCL devices a build of the same source and options as a Program still open, or
// recently closed, returns that compile; BuildUncached always compiles.
//
// # Launch options
//
// Beyond its shape, a launch may size local memory at launch time, in the way each API
// does: an OpenCL C kernel's __local pointer parameter takes a LocalBytes argument (on
// CUDA devices too, through the translation), a CUDA C++ kernel's extern __shared__ array
// takes Range.SharedBytes; and on CUDA devices of
// compute capability 9.0 and newer, Range.Cluster groups work-groups into thread-block
// clusters. Device.LaunchFeatures says which of these a device accepts; engine refuses the
// others with ErrUnsupported, and sizes beyond the device's limits (DeviceInfo.LocalMemBytes,
// LocalMemOptInBytes) or the kernel's (Kernel.Attributes) with ErrInvalidArg, before the
// backend is called.
//
// # Tensor maps
//
// On CUDA devices of compute capability 9.0 and newer, kernels copy boxes (tiles) of a
// tensor between global and shared memory with the Tensor Memory Accelerator, by a tensor
// map the host encodes: NewTensorMap describes a tensor of 1 to 5 dimensions in a buffer
// and the box a copy moves (TensorMapDesc), and a *TensorMap passed to Queue.Launch is its
// 128 bytes, by value, for a `const __grid_constant__ CUtensorMap` parameter. Every rule
// of the description is checked before the backend is called (ErrInvalidArg names the
// field); a device without tensor maps answers ErrUnsupported (Device.TensorMapSupport
// says why). A launch refuses a map whose buffer is closed or of another device.
//
// Kernel.Attributes reports what the backend knows of a compiled kernel: registers,
// static local memory, private and constant memory, its largest work-group, the preferred
// work-group multiple (the warp size on NVIDIA GPUs).
//
// # Vendor libraries
//
// Device.BLAS and Device.FFT load the vendor BLAS and FFT of the device's platform (cuBLAS
// and cuFFT on CUDA, CLBlast and clFFT on OpenCL) and run them on Prism's own queues and
// buffers: Gemm has exactly the row-major semantics of Prism's GEMM, FFTPlan runs
// out-of-place transforms on interleaved data as Prism's FFT lays it out, and Queue.Timed
// counts a library call like a kernel, so that a benchmark can put a vendor routine and a
// Prism kernel side by side on the same inputs. The span Timed counts runs from the queue
// reaching the call to the end of the last command the library enqueued for it; it also
// holds any time the device waited for the library's host-side work, such as compiling its
// kernels on a first call: warm up before timing. A library that is not installed gives an
// error wrapping ErrUnavailable naming every file tried (PRISM_VENDOR_PATH lists
// directories to search first); a backend without one, ErrUnsupported.
//
// # Memory
//
// Each open Device keeps a memory pool: Buffer.Close returns the memory to free lists by
// size class (four per power of two, at most 25% above the size asked), and NewBuffer
// takes it from there before it asks the driver, which on CUDA is itself the driver's
// stream-ordered pool (cuMemAllocFromPoolAsync). A buffer closed while queues still have
// commands in flight is handed out again only once those queues have been seen to
// complete them (Finish, a blocking Read or Write, a waited Event), so memory is never
// reused under a running kernel. Device.PoolStats reports bytes in use, cached and at
// peak, hits, misses and fragmentation; Device.TrimPool gives the cache back;
// Device.SetPoolLimit and PRISM_POOL_LIMIT ("8GiB") cap what the pool holds; PRISM_POOL=off
// sends every allocation to the driver. Pooled buffers are indistinguishable from others.
//
// NewHostBuffer allocates host memory for transfers, seen as a Go slice: page-locked on
// CUDA, a mapped CL_MEM_ALLOC_HOST_PTR buffer on OpenCL. Buffer.WriteAsync and ReadAsync
// copy between it and a device buffer without blocking, and return an Event:
//
//	in, _ := engine.NewHostBuffer[float32](dev, n)
//	copy(in.Slice(), data)
//	up, _ := x.WriteAsync(copyQ, 0, in, 0, n)
//	computeQ.Wait(ctx, up) // computeQ's next commands run after the copy, on the device
//	computeQ.Launch(k, r, x)
//
// Queue.Wait orders a queue after other queues' events on the device (cuStreamWaitEvent,
// clEnqueueBarrierWithWaitList) and Queue.Record marks a point in a queue, so that copies
// and kernels on several queues of one device run at the same time, ordered only where
// the program says so.
//
// # Graphs
//
// Queue.Capture runs a function that enqueues commands and returns them as a Graph
// instead of running them; Graph.Launch enqueues them all again, on any queue of the
// device. On CUDA a capture is the stream's capture into a CUDA graph, and a launch is one
// cuGraphLaunch however many kernels it holds; on OpenCL engine records the commands with
// their converted arguments and enqueues them again without checking them. A graph keeps
// the buffers, kernels and argument values it captured; what needs the host while the
// device works (Finish, Timed, Wait, blocking copies) is refused inside a capture.
//
// # Waiting
//
// Calls that wait take a context: Buffer.Read and Write (and Upload and Download, built on
// them), Queue.Finish, Queue.Wait, Queue.Timed, Event.Wait and Elapsed. Launch, Fill,
// CopyFrom, WriteAsync and ReadAsync only enqueue and return at once. CopyPeer copies
// between devices and returns when the elements are there: directly where the devices'
// driver copies between them (PeerPath "peer": CUDA GPUs of one process; CopyFrom then
// takes the other device's buffer too), through host memory elsewhere. A driver's
// blocking copy cannot be interrupted, so Read and Write move
// large transfers in chunks (256 MiB) and look at the context before each: cancelling
// stops a transfer after the chunk in flight, with an error wrapping ctx.Err().
//
// # Validation
//
// Every call is checked before it reaches a driver: a nil or closed object, a buffer of
// another device, a range whose global size is not a multiple of its local size, an offset
// out of range or an argument of a type kernels cannot take all return an error wrapping
// ErrInvalidArg or ErrClosed, and the driver is never called. Errors say each layer once:
// "engine: open cuda:0: cuda: cannot load libcuda.so.1 ...", where engine adds what it
// knows to the backend's own message.
//
// # Concurrency
//
// A Device, and the Buffers, Programs and Kernels made from it, are safe for concurrent use.
// A Queue belongs to one goroutine at a time. Closing an object while another goroutine
// uses it is a programming error.
//
// # Lifetimes
//
// Every resource has an idempotent Close. Closing a Device closes whatever made from it is
// still open, so a deferred dev.Close() releases everything.
//
// docs/ARCHITECTURE.md describes the layers around this package, the two kernel dialects,
// the launch options and how a new backend is added.
package engine
