package driver

import (
	"context"
	"time"
	"unsafe"
)

// Driver is a compute backend: one API (OpenCL, CUDA, ...) over all the devices it can see.
// Implementations must be safe for concurrent use.
type Driver interface {
	// Devices probes the API on first use and lists its devices. A missing library or an
	// API with no platform returns an error wrapping engine.ErrUnavailable that names what
	// was tried. The IDs in the result are local to the backend ("1:0" for OpenCL platform 1,
	// device 0) and stable for a given machine configuration.
	Devices(ctx context.Context) ([]DeviceInfo, error)
	// Open returns a handle on the device with the given local ID.
	Open(ctx context.Context, id string) (Device, error)
}

// Device is an opened compute device. Alloc, Build and NewQueue must be safe for
// concurrent use; Close is called once, after every object made from the device is closed.
type Device interface {
	Info() DeviceInfo
	// Alloc reserves size bytes of device memory (size > 0). Contents are undefined.
	Alloc(size int64) (Buffer, error)
	// Build compiles source with the given options for this device. A compile failure
	// returns a *BuildError carrying the compiler log.
	Build(source string, options []string) (Program, error)
	// NewQueue creates an in-order command queue with device timestamps enabled.
	NewQueue() (Queue, error)
	Close() error
}

// Buffer is a region of device memory.
type Buffer interface {
	Size() int64
	Close() error
}

// Program is a compiled module of kernels.
type Program interface {
	// Kernel looks up the kernel function with the given name.
	Kernel(name string) (Kernel, error)
	Close() error
}

// Kernel is one kernel function of a Program. Arguments are passed at launch, so a Kernel
// may be launched from several queues at once.
type Kernel interface {
	Name() string
	Close() error
}

// ArgCounter is implemented by kernels that know how many arguments they declare, so
// engine can reject a launch with the wrong count before it reaches the driver.
type ArgCounter interface {
	NumArgs() int
}

// WorkGroupLimiter is implemented by kernels that know the largest work-group they can be
// launched with on their device (registers and local memory included).
type WorkGroupLimiter interface {
	MaxWorkGroupSize() int
}

// Arg is one kernel argument: exactly one of a buffer, a value's bytes, or the size in
// bytes of the local memory that a __local pointer parameter points to (only on devices
// whose LaunchFeatures have LocalArgs). A value is a scalar of 1 to 8 bytes, or a
// structure passed by value: an encoded tensor map is TensorMapBytes bytes, in memory
// aligned to TensorMapAlign. The driver copies a value during the call that receives it
// and never writes it.
type Arg struct {
	Buffer Buffer
	Value  []byte
	Local  int64
}

// Queue is an in-order command queue. A Queue is used by one goroutine at a time.
type Queue interface {
	// Write copies size bytes from host memory at src into dst at offset, and returns
	// when src may be reused.
	Write(dst Buffer, offset int64, src unsafe.Pointer, size int64) error
	// Read copies size bytes from src at offset into host memory at dst, and returns when
	// the data is there.
	Read(src Buffer, offset int64, dst unsafe.Pointer, size int64) error
	// Copy enqueues a device-to-device copy.
	Copy(dst Buffer, dstOffset int64, src Buffer, srcOffset int64, size int64) (Event, error)
	// Fill enqueues a fill of size bytes at offset with a repeated pattern of 1, 2, 4, 8,
	// 16, 32, 64 or 128 bytes; offset and size are multiples of the pattern's length.
	Fill(dst Buffer, offset int64, pattern []byte, size int64) (Event, error)
	// Launch enqueues a kernel. r's launch options (SharedBytes, Cluster) and Local
	// arguments are set only where the device's LaunchFeatures accept them, within the
	// device's limits.
	Launch(k Kernel, r Range, args []Arg) (Event, error)
	// Finish waits until every enqueued command has completed.
	Finish(ctx context.Context) error
	Close() error
}

// Event marks the completion of one enqueued command.
type Event interface {
	// Wait blocks until the command has completed or ctx is done.
	Wait(ctx context.Context) error
	// Elapsed returns the command's execution time measured by device timestamps. It is
	// valid once Wait has returned nil.
	Elapsed() (time.Duration, error)
	Close() error
}
