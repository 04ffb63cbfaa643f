package engine

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// HostBuffer is host memory for fast transfers to and from a device, seen from Go as a
// slice: page-locked on CUDA (cuMemHostAlloc), a mapped CL_MEM_ALLOC_HOST_PTR buffer on
// OpenCL (page-locked on NVIDIA's), ordinary Go memory on a backend with neither. Copies
// from and to it with Buffer.WriteAsync and Buffer.ReadAsync are asynchronous: they are
// enqueued and return an Event, and the host goes on while the device copies.
//
// The host must not touch the part of the slice a copy reads or writes until the copy's
// Event has completed. Close waits for the copies in flight, then releases the memory;
// the slice must not be used after it. A HostBuffer is safe for concurrent use.
type HostBuffer[T Scalar] struct {
	handle
	drv driver.HostBuffer
	n   int

	mu       sync.Mutex
	inFlight []driver.Event // copies from or to the buffer, waited for by Close
}

// maxInFlight bounds the copies a HostBuffer remembers; the oldest is waited for beyond
// it (a queue completes its copies in order, so it is most likely done).
const maxInFlight = 64

// NewHostBuffer allocates host memory for n elements (n > 0) of type T, for transfers to
// and from d. Its contents are undefined.
func NewHostBuffer[T Scalar](d *Device, n int) (*HostBuffer[T], error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("engine: NewHostBuffer of %d elements: length must be positive: %w", n, ErrInvalidArg)
	}
	if int64(n) > math.MaxInt64/int64(SizeOf[T]()) {
		return nil, fmt.Errorf("engine: NewHostBuffer of %d elements: size overflows: %w", n, ErrInvalidArg)
	}
	size := int64(n) * int64(SizeOf[T]())
	var db driver.HostBuffer
	if ha, ok := d.drv.(driver.HostAllocator); ok {
		var err error
		if db, err = ha.AllocHost(size); err != nil {
			return nil, fmt.Errorf("engine: NewHostBuffer of %d bytes on %s: %w", size, d.id, err)
		}
	} else {
		db = newGoHost(make([]T, n))
	}
	h := &HostBuffer[T]{handle: handle{dev: d, what: "host buffer"}, drv: db, n: n}
	if err := d.adopt(h); err != nil {
		db.Close()
		return nil, err
	}
	return h, nil
}

// RegisterHostBuffer page-locks memory the caller allocated (a mapping shared with other
// processes, say) for transfers to and from d, and returns it as a HostBuffer whose
// Slice is s: copies with Buffer.WriteAsync and Buffer.ReadAsync then run as from
// NewHostBuffer's memory, and on CUDA (cuMemHostRegister, for every context) any blocking
// copy from or to s does too. Close unregisters the memory and leaves it allocated; s must
// stay valid until then. A backend that cannot register host memory (OpenCL) gives an
// error wrapping ErrUnsupported: copy from and to s with Buffer.Read and Buffer.Write.
func RegisterHostBuffer[T Scalar](d *Device, s []T) (*HostBuffer[T], error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("engine: RegisterHostBuffer of no elements: %w", ErrInvalidArg)
	}
	hr, ok := d.drv.(driver.HostRegisterer)
	if !ok {
		return nil, fmt.Errorf("engine: RegisterHostBuffer on %s: the backend does not register host memory: %w", d.id, ErrUnsupported)
	}
	size := int64(len(s)) * int64(SizeOf[T]())
	db, err := hr.RegisterHost(unsafe.Pointer(unsafe.SliceData(s)), size)
	if err != nil {
		return nil, fmt.Errorf("engine: RegisterHostBuffer of %d bytes on %s: %w", size, d.id, err)
	}
	h := &HostBuffer[T]{handle: handle{dev: d, what: "host buffer"}, drv: db, n: len(s)}
	if err := d.adopt(h); err != nil {
		db.Close()
		return nil, err
	}
	return h, nil
}

// Slice returns the memory as a slice of Len elements; nil once the buffer is closed.
func (h *HostBuffer[T]) Slice() []T {
	if h == nil || h.closed.Load() {
		return nil
	}
	return unsafe.Slice((*T)(h.drv.Pointer()), h.n)
}

// Len returns the number of elements.
func (h *HostBuffer[T]) Len() int {
	if h == nil {
		return 0
	}
	return h.n
}

// Pinned reports whether the memory is page-locked: copies then run at the bus's full
// speed, asynchronously to the host.
func (h *HostBuffer[T]) Pinned() bool { return h != nil && h.drv.Pinned() }

// Device returns the device the buffer was allocated for.
func (h *HostBuffer[T]) Device() *Device {
	if h == nil {
		return nil
	}
	return h.dev
}

// track remembers a copy from or to h and returns the event its caller owns.
func (h *HostBuffer[T]) track(ev driver.Event) driver.Event {
	se := share(ev, 2)
	h.mu.Lock()
	var oldest driver.Event
	if len(h.inFlight) >= maxInFlight {
		oldest = h.inFlight[0]
		h.inFlight = append(h.inFlight[:0], h.inFlight[1:]...)
	}
	h.inFlight = append(h.inFlight, se)
	h.mu.Unlock()
	if oldest != nil {
		oldest.Wait(context.Background())
		oldest.Close()
	}
	return se
}

// Close waits for the copies from and to the buffer in flight and releases its memory.
// Idempotent.
func (h *HostBuffer[T]) Close() error {
	if h == nil || h.drv == nil || !h.closed.CompareAndSwap(false, true) {
		return nil
	}
	h.dev.release(h)
	return h.free()
}

func (h *HostBuffer[T]) closeResource() error {
	if !h.closed.CompareAndSwap(false, true) {
		return nil
	}
	return h.free()
}

// After the queues (which finish their copies) and before the buffers.
func (h *HostBuffer[T]) order() int { return 3 }

func (h *HostBuffer[T]) free() error {
	h.mu.Lock()
	evs := h.inFlight
	h.inFlight = nil
	h.mu.Unlock()
	for _, ev := range evs {
		ev.Wait(context.Background()) // a failed copy is reported by its own event
		ev.Close()
	}
	return h.drv.Close()
}

// goHost is Go memory standing in for a driver's host buffer.
type goHost struct {
	mem  any // the slice, kept reachable
	p    unsafe.Pointer
	size int64
}

func newGoHost[T Scalar](s []T) *goHost {
	return &goHost{mem: s, p: unsafe.Pointer(unsafe.SliceData(s)), size: int64(len(s)) * int64(SizeOf[T]())}
}

func (g *goHost) Pointer() unsafe.Pointer { return g.p }
func (g *goHost) Size() int64             { return g.size }
func (g *goHost) Pinned() bool            { return false }
func (g *goHost) Close() error            { g.mem, g.p = nil, nil; return nil }

// doneEvent is a command that completed before its Event was returned: a copy that a
// backend without asynchronous copies made at once.
type doneEvent struct{ took time.Duration }

func (e doneEvent) Wait(ctx context.Context) error  { return nil }
func (e doneEvent) Elapsed() (time.Duration, error) { return e.took, nil }
func (e doneEvent) Close() error                    { return nil }

// WriteAsync enqueues a copy of count elements of src, from srcOffset, into the buffer at
// offset, after the commands enqueued on q before it, and returns its Event without
// waiting (the caller must Close it). src must stay open, and the host must not write
// that part of it, until the Event has completed. A backend without asynchronous copies
// copies at once and returns a completed Event.
func (b *Buffer[T]) WriteAsync(q *Queue, offset int, src *HostBuffer[T], srcOffset, count int) (*Event, error) {
	return b.async(q, "write", offset, src, srcOffset, count)
}

// ReadAsync enqueues a copy of count elements of the buffer, from offset, into dst at
// dstOffset, after the commands enqueued on q before it, and returns its Event without
// waiting (the caller must Close it). The data is in dst once the Event has completed;
// dst must stay open, and the host must not touch that part of it, until then.
func (b *Buffer[T]) ReadAsync(q *Queue, offset int, dst *HostBuffer[T], dstOffset, count int) (*Event, error) {
	return b.async(q, "read", offset, dst, dstOffset, count)
}

func (b *Buffer[T]) async(q *Queue, what string, offset int, h *HostBuffer[T], hOffset, count int) (*Event, error) {
	if err := b.onQueue(q); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("engine: %s: nil host buffer: %w", what, ErrInvalidArg)
	}
	if err := h.check(); err != nil {
		return nil, err
	}
	if err := h.sameDevice(q.dev); err != nil {
		return nil, err
	}
	if err := b.span(what, offset, count); err != nil {
		return nil, err
	}
	if hOffset < 0 || count > h.n-hOffset || hOffset > h.n {
		return nil, fmt.Errorf("engine: %s of %d elements at host offset %d: out of range for a host buffer of %d: %w", what, count, hOffset, h.n, ErrInvalidArg)
	}
	es := int64(SizeOf[T]())
	off, hoff, size := int64(offset)*es, int64(hOffset)*es, int64(count)*es
	_, ok := q.drv.(driver.AsyncCopier)
	if !ok && q.cap != nil {
		return nil, q.refuse("a copy from or to a host buffer on a backend without asynchronous copies")
	}
	if count == 0 || !ok {
		q.release() // a blocking copy
		start := time.Now()
		if count > 0 {
			p := unsafe.Add(h.drv.Pointer(), hoff)
			var err error
			if what == "write" {
				err = q.drv.Write(b.drv, off, p, size)
			} else {
				err = q.drv.Read(b.drv, off, p, size)
			}
			if err != nil {
				return nil, fmt.Errorf("engine: %s %s: %w", what, q.dev.id, err)
			}
		}
		return &Event{drv: doneEvent{took: time.Since(start)}}, nil
	}
	enqueue := func(dq driver.Queue) (driver.Event, error) {
		ac := dq.(driver.AsyncCopier)
		if what == "write" {
			return ac.WriteAsync(b.drv, off, h.drv, hoff, size)
		}
		return ac.ReadAsync(b.drv, off, h.drv, hoff, size)
	}
	if q.record(func(dq driver.Queue, _ bool) (driver.Event, error) { return enqueue(dq) }, &b.handle, &h.handle) {
		return &Event{drv: doneEvent{}}, nil
	}
	ev, err := enqueue(q.drv)
	if err != nil {
		return nil, fmt.Errorf("engine: %s %s: %w", what, q.dev.id, err)
	}
	if q.cap != nil { // captured by the backend: the event marks nothing that runs now
		ev.Close()
		return &Event{drv: doneEvent{}}, nil
	}
	return q.event(h.track(ev)), nil
}
