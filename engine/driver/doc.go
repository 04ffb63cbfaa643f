// Package driver defines the interfaces a Prism compute backend implements.
//
// Like database/sql/driver, it is written for backend authors, not for users: users program
// against package engine, which validates every call before it reaches a driver. A driver
// may therefore assume that sizes are positive, offsets in range, buffers open and owned by
// the device they are used on, and launch ranges well formed; it must still report every
// failure of the underlying API as an error that names the failing call.
//
// A backend registers itself once, in an init function, with engine.Register. init must not
// load libraries or call the driver: probing happens on the first call to Driver.Devices.
//
// The interfaces, grouped. Every backend implements the core:
//
//   - Driver: a backend's entry point, registered with engine.Register; lists and opens
//     devices (driver.go).
//   - Device, Buffer, Program, Kernel, Queue, Event: an open device and what is made from
//     it (driver.go).
//
// Optional behaviour is expressed by capability interfaces that a value may implement;
// engine falls back to a generic path when one is missing:
//
//   - Building: DialectBuilder (Device): sources in dialects beyond OpenCL C, such as
//     CUDA C++ (dialect.go). Fallback: OpenCL C only, through Device.Build.
//   - Kernels: ArgCounter, WorkGroupLimiter (driver.go), AttributeReporter (launch.go):
//     the kernel's argument count, work-group limit and attributes. Fallback: counts are
//     not checked, the device's work-group limit applies, attributes are zero.
//     OccupancyReporter (occupancy.go): the theoretical occupancy of a launch shape and the
//     resource that limits it. Fallback: none; engine answers ErrUnsupported.
//   - Launching: LaunchFeaturer (Device): launch options beyond the range's shape
//     (local-memory arguments, dynamic shared memory, thread-block clusters). Fallback:
//     none; engine refuses them with ErrUnsupported. UntimedLauncher (Queue): a launch
//     that records no event, for Queue.Launch outside Queue.Timed. Fallback: Launch.
//     Gater (Queue): a hold of the queue's later commands until the host opens it (or a
//     limit passes), so that Queue.Timed's events time the device alone. Fallback: Timed
//     without a hold.
//   - Memory and queues (memory.go): HostAllocator (Device): host memory for transfers,
//     as HostBuffers. HostRegisterer (Device): memory allocated elsewhere page-locked as a
//     HostBuffer (engine.RegisterHostBuffer). Fallback: ErrUnsupported; copies from and to
//     the memory are plain ones. AsyncCopier (Queue): copies that do not block the caller and return
//     an event. EventWaiter (Queue): a queue ordered after other queues' events on the
//     device, without blocking the host; PeerEventWaiter (Queue): also after the events
//     of another device's queues (CUDA), where engine.Queue.Wait would otherwise wait on
//     the host. PoolAllocator (Device): the driver's own memory
//     pool (CUDA's stream-ordered allocator), which engine's pool then takes memory from.
//     PeerCopier (Queue): a copy from another device's memory of the same driver
//     (engine.CopyPeer). Fallback: the elements pass through host memory. PeerAccessor
//     (Queue): kernels that read and write another device's buffer (Buffer.Reach).
//     Fallback: ErrUnsupported; the caller copies instead.
//   - Graphs (graph.go): GraphCapturer (Queue) captures commands into a Graph launched
//     again as one; GraphRecorder (Queue) builds that Graph from the commands engine
//     recorded; EventLauncher (Graph): a graph launch bracketed by an event, so that
//     Queue.Timed counts its device time. Fallback: engine records the commands and
//     enqueues them again at each launch.
//   - Vendor libraries (vendor.go): BLASProvider gives a BLAS, FFTProvider an FFT that
//     makes FFTPlans (Device); BLAS1 (BLAS): the level-1 routines the suite has operations
//     for; MixedBLAS (BLAS): the GEMM of tf32, float16, bfloat16 and float8 inputs
//     (cuBLASLt). Fallback: none; engine answers ErrUnsupported.
//   - Tensor maps: TensorMapEncoder (Device): the tile descriptions that Hopper's Tensor
//     Memory Accelerator copies by (tensormap.go); a kernel takes one as a by-value Arg of
//     TensorMapBytes. Fallback: none; engine answers ErrUnsupported.
//   - Collectives (collective.go): CollectiveProvider (Device) makes Communicators that
//     run collectives through a library such as NCCL. Fallback: package engine/group
//     stages them through host memory.
//
// # Errors
//
// The sentinel errors (ErrUnavailable, ErrNotFound, ErrClosed, ErrInvalidArg,
// ErrOutOfMemory, ErrUnsupported, ErrBuild) are defined here and re-exported by engine
// under the same names: a backend wraps these and needs no import of engine for them.
// A backend's errors start with its package name ("cuda: cuMemAlloc_v2(1024 bytes):
// CUDA_ERROR_OUT_OF_MEMORY") and say it once: a backend that adds context to one of its own
// errors does not repeat the prefix. engine adds its own context only where it has some
// ("engine: open cuda:0: cuda: ..."), and never names the backend twice.
//
// docs/ARCHITECTURE.md lists the steps of a new backend and the import rule it keeps (a
// backend imports engine, to register, and engine/driver, and the helpers both backends
// share: internal/osthread and internal/dl).
package driver
