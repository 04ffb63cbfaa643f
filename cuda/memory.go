package cuda

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Memory beyond plain buffers: the stream-ordered allocator's pool behind engine's memory
// pool, page-locked host buffers, asynchronous copies between them and the device, and
// waits of one queue on another's events. (cl/memory.go is the OpenCL counterpart.)

var (
	_ driver.PoolAllocator   = (*device)(nil)
	_ driver.HostAllocator   = (*device)(nil)
	_ driver.HostBuffer      = (*HostBuffer)(nil)
	_ driver.AsyncCopier     = (*queue)(nil)
	_ driver.EventWaiter     = (*queue)(nil)
	_ driver.PeerEventWaiter = (*queue)(nil)
)

// attrMemoryPoolsSupported is CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: the device has
// the stream-ordered allocator (cuMemAllocAsync and pools, CUDA 11.2).
const attrMemoryPoolsSupported = 115

// memPool is a pool of the stream-ordered allocator (cuMemPoolCreate) that keeps the
// memory freed to it (its release threshold is the largest size), and the stream on which
// buffers are taken from it and given back.
type memPool struct {
	pool   cuMemoryPool
	stream cuStream
}

// pooled returns the device's pool, made on first use; nil where the device or the
// driver has no stream-ordered allocator.
func (d *device) pooled() *memPool {
	d.memOnce.Do(func() {
		if !haveMemPools() {
			return
		}
		err := d.th.Call(func() error {
			if v, r := cuDeviceGetAttribute(attrMemoryPoolsSupported, d.ordinal); r != Success || v == 0 {
				return nil
			}
			p, r := cuMemPoolCreateDevice(d.ordinal)
			if err := check(fmt.Sprintf("cuMemPoolCreate(device %d)", d.ordinal), r); err != nil {
				return err
			}
			s, r := cuStreamCreate(streamNonBlocking)
			if err := check("cuStreamCreate(CU_STREAM_NON_BLOCKING)", r); err != nil {
				cuMemPoolDestroy(p)
				return err
			}
			d.mem = &memPool{pool: p, stream: s}
			return nil
		})
		if err != nil {
			tracef("device %d: no stream-ordered pool: %v", d.ordinal, err)
		}
	})
	return d.mem
}

// close destroys the pool and its stream; every buffer taken from it has been given back.
// It runs on the device's thread. A nil pool has nothing to close.
func (m *memPool) close() error {
	if m == nil {
		return nil
	}
	err := check("cuStreamSynchronize", cuStreamSynchronize(m.stream))
	if derr := check("cuStreamDestroy_v2", cuStreamDestroy(m.stream)); err == nil {
		err = derr
	}
	if derr := check("cuMemPoolDestroy", cuMemPoolDestroy(m.pool)); err == nil {
		err = derr
	}
	return err
}

// AllocPooled reserves size bytes from the device's stream-ordered pool
// (cuMemAllocFromPoolAsync, then a wait for its stream, so that every queue may use the
// memory at once); where the device has none, from cuMemAlloc_v2. Closing a pooled buffer
// gives it back to the pool (cuMemFreeAsync) without waiting for the device: engine's pool
// closes a buffer only once no queue has a command in flight that may use it.
func (d *device) AllocPooled(size int64) (driver.Buffer, error) {
	m := d.pooled()
	if m == nil {
		return d.Alloc(size)
	}
	var p devptr
	err := d.onCaller(func() error {
		var r Result
		p, r = cuMemAllocFromPoolIn(d.ctx, m.pool, size, m.stream)
		return check(fmt.Sprintf("cuMemAllocFromPoolAsync(%d bytes)", size), r)
	})
	if err != nil {
		return nil, err
	}
	return &buffer{ptr: p, size: size, d: d, pool: m}, nil
}

// TrimPool returns the memory the device's pool holds unused to the system
// (cuMemPoolTrimTo with nothing kept).
func (d *device) TrimPool() error {
	m := d.pooled()
	if m == nil {
		return nil
	}
	return d.onCaller(func() error {
		if err := check("cuStreamSynchronize", cuStreamSynchronize(m.stream)); err != nil {
			return err
		}
		return check("cuMemPoolTrimTo(0)", cuMemPoolTrimTo(m.pool, 0))
	})
}

// PoolName names where pooled memory comes from.
func (d *device) PoolName() string {
	if d.pooled() == nil {
		return "cuMemAlloc_v2"
	}
	return "cuMemAllocFromPoolAsync"
}

// freePooled gives a pooled buffer back to its pool.
func (b *buffer) freePooled() error {
	return b.d.onCaller(func() error {
		return check(fmt.Sprintf("cuMemFreeAsync(%d bytes)", b.size), cuMemFreeAsyncIn(b.d.ctx, b.ptr, b.pool.stream))
	})
}

// HostBuffer is page-locked (pinned) host memory from cuMemHostAlloc, portable to every
// context: engine's NewHostBuffer on a CUDA device. Copies between it and the device run
// at the full speed of the bus, asynchronously to the host. It is safe for concurrent
// use; the memory stays valid until Close.
type HostBuffer struct {
	p          unsafe.Pointer
	size       int64
	d          *device
	registered bool // memory allocated elsewhere, page-locked by RegisterHost
	mu         sync.Mutex
	closed     bool
}

// AllocHost allocates size bytes (size > 0) of page-locked host memory (cuMemHostAlloc
// with CU_MEMHOSTALLOC_PORTABLE).
func (d *device) AllocHost(size int64) (driver.HostBuffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("cuda: AllocHost(%d bytes): size must be positive: %w", size, driver.ErrInvalidArg)
	}
	var p unsafe.Pointer
	err := d.onCaller(func() error {
		var r Result
		p, r = cuMemHostAllocPortable(size)
		return check(fmt.Sprintf("cuMemHostAlloc(%d bytes, CU_MEMHOSTALLOC_PORTABLE)", size), r)
	})
	if err != nil {
		return nil, err
	}
	return &HostBuffer{p: p, size: size, d: d}, nil
}

var _ driver.HostRegisterer = (*device)(nil)

// RegisterHost page-locks size bytes of host memory allocated elsewhere, from p
// (cuMemHostRegister_v2 with CU_MEMHOSTREGISTER_PORTABLE: for every context), so that
// copies between it and any device run as from cuMemHostAlloc's memory. Closing the
// returned buffer unregisters the memory and leaves it allocated. A range may be
// registered once at a time.
func (d *device) RegisterHost(p unsafe.Pointer, size int64) (driver.HostBuffer, error) {
	if p == nil || size <= 0 {
		return nil, fmt.Errorf("cuda: RegisterHost(%p, %d bytes): needs memory and a positive size: %w", p, size, driver.ErrInvalidArg)
	}
	if !haveHostRegister() {
		return nil, fmt.Errorf("cuda: RegisterHost: the driver has no cuMemHostRegister: %w", driver.ErrUnsupported)
	}
	err := d.onCaller(func() error {
		return check(fmt.Sprintf("cuMemHostRegister_v2(%d bytes, CU_MEMHOSTREGISTER_PORTABLE)", size), cuMemHostRegisterPortable(p, size))
	})
	if err != nil {
		return nil, err
	}
	return &HostBuffer{p: p, size: size, d: d, registered: true}, nil
}

// Pointer returns the start of the memory; nil once closed.
func (h *HostBuffer) Pointer() unsafe.Pointer {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	return h.p
}

// Size returns the size in bytes.
func (h *HostBuffer) Size() int64 { return h.size }

// Pinned reports true: the memory is page-locked.
func (h *HostBuffer) Pinned() bool { return true }

// HostSlice returns the memory of h as a slice of T (as many whole elements as fit), valid
// until h is closed; nil for a host buffer of another backend or a closed one.
func HostSlice[T engine.Scalar](hb driver.HostBuffer) []T {
	h, ok := hb.(*HostBuffer)
	if !ok || h == nil {
		return nil
	}
	p := h.Pointer()
	if p == nil {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(p), h.size/int64(unsafe.Sizeof(z)))
}

// Close frees the memory (cuMemFreeHost), or unregisters memory RegisterHost page-locked
// (cuMemHostUnregister) and leaves it allocated. No copy from or to it may be in progress:
// engine's HostBuffer waits for its copies first. Idempotent.
func (h *HostBuffer) Close() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	return h.d.onCaller(func() error {
		if h.registered {
			return check("cuMemHostUnregister", cuMemHostUnregister(h.p))
		}
		return check("cuMemFreeHost", cuMemFreeHost(h.p))
	})
}

// asHost returns hb as an open CUDA host buffer holding size bytes at offset.
func asHost(hb driver.HostBuffer, offset, size int64) (*HostBuffer, unsafe.Pointer, error) {
	h, ok := hb.(*HostBuffer)
	if !ok || h == nil {
		return nil, nil, fmt.Errorf("cuda: host buffer %T is not a CUDA host buffer: %w", hb, driver.ErrInvalidArg)
	}
	p := h.Pointer()
	if p == nil {
		return nil, nil, errClosed("host buffer")
	}
	if offset < 0 || size < 0 || offset > h.size || size > h.size-offset {
		return nil, nil, fmt.Errorf("cuda: %d bytes at offset %d of a host buffer of %d: %w", size, offset, h.size, driver.ErrInvalidArg)
	}
	return h, unsafe.Add(p, offset), nil
}

// WriteAsync enqueues cuMemcpyHtoDAsync_v2 from a page-locked host buffer, timed like
// every command, and returns without waiting for it.
func (q *queue) WriteAsync(dst driver.Buffer, offset int64, src driver.HostBuffer, srcOffset, size int64) (driver.Event, error) {
	b, err := asBuffer(dst)
	if err != nil {
		return nil, err
	}
	_, p, err := asHost(src, srcOffset, size)
	if err != nil {
		return nil, err
	}
	return q.command("write", func() error {
		r := cuMemcpyHtoDAsync(b.ptr+devptr(offset), p, size, q.stream)
		return check(fmt.Sprintf("cuMemcpyHtoDAsync_v2(%d bytes at %d)", size, offset), r)
	})
}

// ReadAsync enqueues cuMemcpyDtoHAsync_v2 into a page-locked host buffer, timed like
// every command, and returns without waiting for it.
func (q *queue) ReadAsync(src driver.Buffer, offset int64, dst driver.HostBuffer, dstOffset, size int64) (driver.Event, error) {
	b, err := asBuffer(src)
	if err != nil {
		return nil, err
	}
	_, p, err := asHost(dst, dstOffset, size)
	if err != nil {
		return nil, err
	}
	return q.command("read", func() error {
		r := cuMemcpyDtoHAsync(p, b.ptr+devptr(offset), size, q.stream)
		return check(fmt.Sprintf("cuMemcpyDtoHAsync_v2(%d bytes at %d)", size, offset), r)
	})
}

// WaitEvents makes the stream wait for each event's end (cuStreamWaitEvent): the device
// orders the commands, the host goes on. The events may be of other CUDA devices' queues
// (WaitsAcross): cuStreamWaitEvent takes an event of any context.
func (q *queue) WaitEvents(events []driver.Event) error {
	if err := q.check(); err != nil {
		return err
	}
	if !haveStreamWaitEvent() {
		return fmt.Errorf("cuda: the driver has no cuStreamWaitEvent: %w", driver.ErrUnsupported)
	}
	ends := make([]cuEvent, 0, len(events))
	for i, ev := range events {
		e, ok := ev.(*event)
		switch {
		case !ok || e == nil:
			return fmt.Errorf("cuda: wait on event %d: %T is not a CUDA event: %w", i, ev, driver.ErrInvalidArg)
		case e.closed:
			return errClosed(fmt.Sprintf("event %d (%s)", i, e.what))
		}
		ends = append(ends, e.end)
	}
	return q.d.onCaller(func() error {
		for i, e := range ends {
			if err := check(fmt.Sprintf("cuStreamWaitEvent(event %d)", i), cuStreamWaitEvent(q.stream, e)); err != nil {
				return err
			}
		}
		return nil
	})
}

// WaitsAcross reports whether WaitEvents takes the events of other: any CUDA queue.
func (q *queue) WaitsAcross(other driver.Queue) bool {
	_, ok := other.(*queue)
	return ok
}

// Record records an event on the stream (cuEventRecord) that completes when the commands
// enqueued before it have; it brackets no command, so its Elapsed is zero.
func (q *queue) Record() (driver.Event, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	var end cuEvent
	err := q.d.onCaller(func() error {
		var err error
		if end, err = q.d.event(); err != nil {
			return err
		}
		if err := check("cuEventRecord", cuEventRecord(end, q.stream)); err != nil {
			q.d.giveBack(end)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &event{d: q.d, end: end, what: "recorded event"}, nil
}
