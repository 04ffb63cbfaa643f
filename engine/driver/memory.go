package driver

import "unsafe"

// HostBuffer is host memory that a device copies from and to without staging: page-locked
// memory on CUDA, a mapped CL_MEM_ALLOC_HOST_PTR buffer on OpenCL. Its memory stays valid
// and in place until Close.
type HostBuffer interface {
	// Pointer returns the start of the memory.
	Pointer() unsafe.Pointer
	// Size returns the size in bytes.
	Size() int64
	// Pinned reports whether the memory is page-locked, so that copies reach the bus's
	// full speed and run asynchronously to the host.
	Pinned() bool
	// Close releases the memory. No copy from or to it may be in progress.
	Close() error
}

// HostAllocator is implemented by devices that allocate host memory for transfers.
type HostAllocator interface {
	// AllocHost allocates size bytes (size > 0) of host memory.
	AllocHost(size int64) (HostBuffer, error)
}

// HostRegisterer is implemented by devices that page-lock host memory allocated elsewhere
// (cuMemHostRegister), so that copies between it and the device run as from AllocHost's.
type HostRegisterer interface {
	// RegisterHost registers size bytes (size > 0) from p. Closing the returned buffer
	// unregisters them and leaves the memory allocated; the memory must stay mapped until
	// then.
	RegisterHost(p unsafe.Pointer, size int64) (HostBuffer, error)
}

// AsyncCopier is implemented by queues that copy between host buffers and device memory
// without blocking the caller. The copy is ordered on the queue like any other command;
// the host buffer must stay open, and untouched by the host where the copy reads or
// writes it, until the returned event completes.
type AsyncCopier interface {
	// WriteAsync enqueues a copy of size bytes from src at srcOffset to dst at offset.
	WriteAsync(dst Buffer, offset int64, src HostBuffer, srcOffset, size int64) (Event, error)
	// ReadAsync enqueues a copy of size bytes from src at offset to dst at dstOffset.
	ReadAsync(src Buffer, offset int64, dst HostBuffer, dstOffset, size int64) (Event, error)
}

// EventWaiter is implemented by queues that order their commands after other queues'
// events on the device, without blocking the host.
type EventWaiter interface {
	// WaitEvents makes the commands enqueued on the queue after the call wait until
	// every event in events has completed. The events are of queues of the same device;
	// they may be closed once the call returns.
	WaitEvents(events []Event) error
	// Record returns an event that completes when every command enqueued on the queue
	// before it has completed.
	Record() (Event, error)
}

// PeerEventWaiter is implemented by queues whose WaitEvents also takes the events of other
// devices' queues of the same driver (CUDA: cuStreamWaitEvent takes an event of any
// context): one device's commands ordered after another's on the devices, the host going
// on.
type PeerEventWaiter interface {
	EventWaiter
	// WaitsAcross reports whether WaitEvents takes the events of other's queue (a queue of
	// another device).
	WaitsAcross(other Queue) bool
}

// PoolAllocator is implemented by devices whose driver has a memory pool of its own
// (CUDA's stream-ordered allocator): engine's pool takes new memory from it, and gives it
// back there, instead of allocating and freeing through the driver each time.
type PoolAllocator interface {
	// AllocPooled reserves size bytes from the driver's pool. Closing the buffer returns
	// them to the pool.
	AllocPooled(size int64) (Buffer, error)
	// TrimPool returns the pool's unused memory to the system.
	TrimPool() error
	// PoolName names the driver's pool in statistics ("cuMemAllocFromPoolAsync").
	PoolName() string
}

// PeerCopier is implemented by queues that copy from the memory of another device of the
// same driver directly (CUDA: cuMemcpyPeerAsync, over NVLink or PCIe), without staging
// through host memory.
type PeerCopier interface {
	// CopyPeer enqueues a copy of size bytes from src at srcOffset, a buffer of any device
	// of this driver, into dst at dstOffset, a buffer of the queue's device. It returns an
	// error wrapping ErrUnsupported where src is not memory the queue's device copies
	// from directly.
	CopyPeer(dst Buffer, dstOffset int64, src Buffer, srcOffset int64, size int64) (Event, error)
}

// PeerAccessor is implemented by queues whose kernels read and write the memory of another
// device of the same driver directly (CUDA: peer access, over NVLink or PCIe), so that a
// buffer of that device is passed to Launch as an argument like one of the queue's own.
type PeerAccessor interface {
	// ReachPeer makes src, a buffer of another device of this driver, addressable by the
	// kernels of the queue's device, once per pair of devices. It returns an error
	// wrapping ErrUnsupported where they cannot reach it.
	ReachPeer(src Buffer) error
}
