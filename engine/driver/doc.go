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
// Optional behaviour is expressed by capability interfaces that a value may implement;
// engine falls back to a generic path when one is missing:
//
//   - DialectBuilder (Device): sources in dialects beyond OpenCL C, such as CUDA C++.
//     Fallback: OpenCL C only, through Device.Build.
//   - LaunchFeaturer (Device): launch options beyond the range's shape (local-memory
//     arguments, dynamic shared memory, thread-block clusters). Fallback: none; engine
//     refuses them with ErrUnsupported.
//   - ArgCounter, WorkGroupLimiter, AttributeReporter (Kernel): the kernel's argument
//     count, work-group limit and attributes. Fallback: counts are not checked, the
//     device's work-group limit applies, attributes are zero.
//   - OccupancyReporter (Kernel): the theoretical occupancy of a launch shape, and the
//     resource that limits it (occupancy.go). Fallback: none; engine answers
//     ErrUnsupported.
//   - BLASProvider, FFTProvider (Device): the platform's vendor BLAS and FFT (vendor.go).
//     Fallback: none; engine answers ErrUnsupported.
//   - TensorMapEncoder (Device): tensor maps, the tile descriptions that Hopper's Tensor
//     Memory Accelerator copies by (tensormap.go); a kernel takes one as a by-value Arg of
//     TensorMapBytes. Fallback: none; engine answers ErrUnsupported.
//
// # Errors
//
// A backend's errors start with its package name ("cuda: cuMemAlloc_v2(1024 bytes):
// CUDA_ERROR_OUT_OF_MEMORY") and say it once: a backend that adds context to one of its own
// errors does not repeat the prefix. engine adds its own context only where it has some
// ("engine: open cuda:0: cuda: ..."), and never names the backend twice.
//
// docs/ARCHITECTURE.md lists the steps of a new backend and the import rule it keeps (a
// backend imports engine and engine/driver only).
package driver
