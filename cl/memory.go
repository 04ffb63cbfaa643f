//go:build !noopencl

package cl

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	ocl "github.com/jgillich/go-opencl/cl"

	"github.com/prism-compute/prism/engine/driver"
)

// Host buffers, asynchronous copies and cross-queue waits (driver.HostAllocator,
// driver.AsyncCopier, driver.EventWaiter; cuda/memory.go is the CUDA side).
//
// A host buffer is a CL_MEM_ALLOC_HOST_PTR buffer mapped once, for reading and writing,
// for its whole life: the mapped pointer is the host memory that WriteAsync and ReadAsync
// give clEnqueueWriteBuffer and clEnqueueReadBuffer (non-blocking), the way NVIDIA's OpenCL
// best-practice guide gets page-locked transfers. The buffer object itself is never used
// by a command; only its mapping is.
//
// Maps and unmaps run on a queue of the device's context, clContext.queue: under queue
// sharing the device's one queue, under its mutex like every other enqueue (the map then
// waits behind the work enqueued before it); otherwise a queue of the context that no
// NewQueue hands out, so that a map never waits behind a queue's work. Either way the map
// and the unmap are enqueued without blocking and waited for (clWaitForEvents) with no
// lock held, as an event's Wait is: an own-queue device holds no device-wide lock while a
// command runs, and even a shared queue's mutex is held only while enqueueing. Under the
// thread policy every call runs on the context's thread.

var (
	_ driver.HostAllocator = (*device)(nil)
	_ driver.AsyncCopier   = (*queue)(nil)
	_ driver.EventWaiter   = (*queue)(nil)
)

// hostBuffer is host memory for transfers: a CL_MEM_ALLOC_HOST_PTR buffer, mapped from
// AllocHost to Close (or to its device's Close, if that comes first). It is safe for
// concurrent use.
type hostBuffer struct {
	dev    *device
	q      *queue // maps and unmaps it (hostQueue)
	mem    *ocl.MemObject
	mapped *ocl.MappedMemObject // nil once unmapped
	ptr    unsafe.Pointer
	size   int64
	pinned bool
	closed atomic.Bool
}

var _ driver.HostBuffer = (*hostBuffer)(nil)

// hostBuffers is the set of a device's open host buffers. The device's Close closes those
// still open (which engine never leaves), while the queue that maps them and the context
// are there: a buffer released after its context corrupted Oclgrind 21.10's heap (a
// crash in a later clWaitForEvents), an ordinary buffer as well as a host buffer.
type hostBuffers struct {
	mu   sync.Mutex
	open map[*hostBuffer]struct{}
}

func (s *hostBuffers) add(h *hostBuffer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		s.open = map[*hostBuffer]struct{}{}
	}
	s.open[h] = struct{}{}
}

func (s *hostBuffers) remove(h *hostBuffer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, h)
}

// closeAll closes every open host buffer; their Close then does nothing.
func (s *hostBuffers) closeAll() {
	s.mu.Lock()
	open := s.open
	s.open = nil
	s.mu.Unlock()
	for h := range open {
		if h.closed.CompareAndSwap(false, true) {
			h.free()
		}
	}
}

// hostQueue returns a handle on the queue that maps and unmaps the device's host buffers,
// clContext.queue, made on first use: under queue sharing the device's one queue, with
// its mutex; otherwise the context's own queue for host buffers, with no mutex (OpenCL
// calls on a queue are thread-safe; only the queue-sharing policy serializes them).
func (d *device) hostQueue() (*queue, error) {
	c := d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queue == nil {
		q, err := d.createQueue()
		if err != nil {
			return nil, err
		}
		c.queue = q
	}
	if c.shared {
		return &queue{q: c.queue, mu: &c.mu, th: c.thread}, nil
	}
	return &queue{q: c.queue, th: c.thread}, nil
}

// AllocHost allocates size bytes of host memory for transfers (driver.HostAllocator): a
// buffer of CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE (clCreateBuffer), mapped for
// reading and writing (clEnqueueMapBuffer) until Close. The mapping is the memory.
//
// Whether the memory is page-locked (Pinned) is the pinned-host policy, pinnedHost.
func (d *device) AllocHost(size int64) (driver.HostBuffer, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	call := fmt.Sprintf("clCreateBuffer(CL_MEM_ALLOC_HOST_PTR, %d bytes)", size)
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("cl: %s: size out of range: %w", call, driver.ErrInvalidArg)
	}
	if m := d.info.MaxAllocBytes; m > 0 && size > m {
		return nil, fmt.Errorf("cl: %s: exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE (%d): %w", call, m, driver.ErrOutOfMemory)
	}
	q, err := d.hostQueue()
	if err != nil {
		return nil, err
	}
	var mem *ocl.MemObject
	err = d.c.thread.Call(func() error {
		var err error
		mem, err = d.c.ctx.CreateEmptyBuffer(ocl.MemReadWrite|ocl.MemAllocHostPtr, int(size))
		return err
	})
	if err != nil {
		return nil, wrap(call, err)
	}
	h := &hostBuffer{dev: d, q: q, mem: mem, size: size, pinned: pinnedHost(d.info)}
	if err := h.mapAll(); err != nil {
		release(q.th, mem.Release)
		return nil, err
	}
	d.hosts.add(h)
	return h, nil
}

// pinnedHost is the pinned-host policy: it reports whether a mapped CL_MEM_ALLOC_HOST_PTR
// buffer of the device is page-locked memory. OpenCL has no query for it. NVIDIA's driver
// backs such a buffer with page-locked memory that its copy engines reach directly (its
// OpenCL best-practice guide gets pinned transfers this way, and BenchmarkTransfer shows
// WriteAsync and ReadAsync at the bus's speed beside Write and Read from Go memory), as
// AMD's documents for its GPUs; other GPUs are taken to do the same: true. On a CPU device
// (PoCL, Rusticl on llvmpipe) the buffer is ordinary pageable memory, and a copy a memcpy
// by the driver's threads; Oclgrind says it is a GPU but simulates one in ordinary memory:
// false.
func pinnedHost(info driver.DeviceInfo) bool {
	return info.Kind == driver.KindGPU && !strings.Contains(info.Platform, "Oclgrind")
}

// mapAll maps the whole buffer for reading and writing: clEnqueueMapBuffer without
// blocking, then clWaitForEvents on its event with no lock held.
func (h *hostBuffer) mapAll() error {
	q := h.q
	call := fmt.Sprintf("clEnqueueMapBuffer(%d bytes)", h.size)
	var ev *ocl.Event
	q.lock()
	err := q.th.Call(func() error {
		m, e, err := q.q.EnqueueMapBuffer(h.mem, false, ocl.MapFlagRead|ocl.MapFlagWrite, 0, int(h.size), nil)
		if err != nil {
			if e != nil { // a mapping at a null pointer: go-opencl returns its event
				e.Release()
			}
			return err
		}
		h.mapped, ev = m, e
		return nil
	})
	q.unlock()
	if err != nil {
		return wrap(call, err)
	}
	if err := waitRelease(q.th, ev); err != nil {
		h.unmap() // the map failed: undo whatever it left, if anything
		return wrap("clWaitForEvents("+call+")", err)
	}
	h.ptr = h.mapped.Ptr()
	return nil
}

// unmap unmaps the buffer (clEnqueueUnmapMemObject without blocking, then
// clWaitForEvents with no lock held), once.
func (h *hostBuffer) unmap() error {
	if h.mapped == nil {
		return nil
	}
	q := h.q
	call := fmt.Sprintf("clEnqueueUnmapMemObject(%d bytes)", h.size)
	var ev *ocl.Event
	q.lock()
	err := q.th.Call(func() error {
		var err error
		ev, err = q.q.EnqueueUnmapMemObject(h.mem, h.mapped, nil)
		return err
	})
	q.unlock()
	h.mapped = nil // a failed unmap is not tried again
	if err != nil {
		return wrap(call, err)
	}
	return wrap("clWaitForEvents("+call+")", waitRelease(q.th, ev))
}

// waitRelease waits for ev (clWaitForEvents) and releases it, on th.
func waitRelease(th *osThread, ev *ocl.Event) error {
	return th.Call(func() error {
		defer ev.Release()
		return ocl.WaitForEvents([]*ocl.Event{ev})
	})
}

// Pointer returns the mapped memory.
func (h *hostBuffer) Pointer() unsafe.Pointer { return h.ptr }

// Size returns the size in bytes.
func (h *hostBuffer) Size() int64 { return h.size }

// Pinned reports whether the memory is page-locked: true on GPUs (see AllocHost).
func (h *hostBuffer) Pinned() bool { return h.pinned }

// Close unmaps the buffer, waits for the unmap and releases the buffer
// (clReleaseMemObject). No copy from or to it may be in progress: a copy on another queue
// is not ordered before the unmap. A buffer whose device closed first (which engine never
// lets happen) was closed by the device. Idempotent.
func (h *hostBuffer) Close() error {
	if !h.closed.CompareAndSwap(false, true) {
		return nil
	}
	h.dev.hosts.remove(h)
	return h.free()
}

// free unmaps and releases the buffer; it runs once, after closed was set.
func (h *hostBuffer) free() error {
	err := h.unmap()
	release(h.q.th, h.mem.Release)
	h.ptr = nil
	return err
}

// asHost returns hb as an open host buffer of this package that holds size bytes
// (size > 0) at offset, for the call named.
func asHost(hb driver.HostBuffer, call string, offset, size int64) (*hostBuffer, error) {
	h, ok := hb.(*hostBuffer)
	switch {
	case !ok || h == nil:
		return nil, fmt.Errorf("cl: %s: host buffer %T is not an OpenCL host buffer (from AllocHost of an OpenCL device): %w", call, hb, driver.ErrInvalidArg)
	case h.closed.Load():
		return nil, errClosed("host buffer")
	case size <= 0 || offset < 0 || offset > h.size || size > h.size-offset:
		return nil, fmt.Errorf("cl: %s of %d bytes at host offset %d: out of range for a host buffer of %d bytes: %w", call, size, offset, h.size, driver.ErrInvalidArg)
	}
	return h, nil
}

// asRange returns b as an open buffer of this package that holds size bytes at offset,
// for the call named.
func asRange(b driver.Buffer, call string, offset, size int64) (*buffer, error) {
	cb, err := asBuffer(b)
	if err != nil {
		return nil, err
	}
	if offset < 0 || offset > cb.size || size > cb.size-offset {
		return nil, fmt.Errorf("cl: %s of %d bytes at offset %d: out of range for a buffer of %d bytes: %w", call, size, offset, cb.size, driver.ErrInvalidArg)
	}
	return cb, nil
}

// WriteAsync enqueues a copy of size bytes from src at srcOffset to dst at offset: a
// non-blocking clEnqueueWriteBuffer from the mapped memory, whose event carries
// profiling timestamps like every command's. src must be a host buffer of this package.
func (q *queue) WriteAsync(dst driver.Buffer, offset int64, src driver.HostBuffer, srcOffset, size int64) (driver.Event, error) {
	return q.copyAsync("clEnqueueWriteBuffer", dst, offset, src, srcOffset, size)
}

// ReadAsync enqueues a copy of size bytes from src at offset to dst at dstOffset: a
// non-blocking clEnqueueReadBuffer into the mapped memory. dst must be a host buffer of
// this package.
func (q *queue) ReadAsync(src driver.Buffer, offset int64, dst driver.HostBuffer, dstOffset, size int64) (driver.Event, error) {
	return q.copyAsync("clEnqueueReadBuffer", src, offset, dst, dstOffset, size)
}

// copyAsync enqueues the non-blocking copy call names between the device buffer db at
// offset and the host buffer hb at hOffset.
func (q *queue) copyAsync(call string, db driver.Buffer, offset int64, hb driver.HostBuffer, hOffset, size int64) (driver.Event, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	h, err := asHost(hb, call, hOffset, size)
	if err != nil {
		return nil, err
	}
	b, err := asRange(db, call, offset, size)
	if err != nil {
		return nil, err
	}
	p := unsafe.Add(h.ptr, hOffset)
	var ev *ocl.Event
	q.lock()
	err = q.th.Call(func() error {
		var err error
		if call == "clEnqueueWriteBuffer" {
			ev, err = q.q.EnqueueWriteBuffer(b.mem, false, int(offset), int(size), p, nil)
		} else {
			ev, err = q.q.EnqueueReadBuffer(b.mem, false, int(offset), int(size), p, nil)
		}
		if err != nil {
			ev.Release()
		}
		return err
	})
	q.unlock()
	if err != nil {
		return nil, wrap(fmt.Sprintf("%s(%d bytes at %d, non-blocking)", call, size, offset), err)
	}
	return q.event(ev, call), nil
}

// asEvent returns the cl_event's holder of de, an event of this package: a command's, or
// the second marker of a vendor library call's span.
func asEvent(de driver.Event) (*event, error) {
	switch e := de.(type) {
	case *event:
		if e != nil {
			return e, nil
		}
	case *spanEvent:
		if e != nil && e.end != nil {
			return e.end, nil
		}
	}
	return nil, fmt.Errorf("cl: event %T is not an OpenCL event: %w", de, driver.ErrInvalidArg)
}

// WaitEvents makes the commands enqueued on q after it wait for events, events of queues
// of q's device (clEnqueueBarrierWithWaitList with their cl_events; the barrier makes no
// event). The events may be closed once it returns: the barrier holds its own references.
// No events enqueue nothing.
//
// OpenCL runs a command enqueued on one queue only once that queue is flushed, and a
// wait on another queue does not flush it ("the application must call clFlush", OpenCL
// 1.2, 5.10): without a flush, Rusticl here never ran the write another queue waited for.
// So WaitEvents first flushes (clFlush, which does not wait) every other cl_command_queue
// that an event comes from, unless that queue is closing: its Close finishes it.
//
// Under queue sharing every queue of the device is the one in-order cl_command_queue, so
// the events' commands, enqueued before, already complete first and nothing is flushed;
// the barrier is still enqueued, so that the driver checks the events and the path is the
// same everywhere.
func (q *queue) WaitEvents(events []driver.Event) error {
	if err := q.check(); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	call := fmt.Sprintf("clEnqueueBarrierWithWaitList(%d events)", len(events))
	held := make([]*event, 0, len(events))
	defer func() {
		for _, e := range held {
			e.drop()
		}
	}()
	list := make([]*ocl.Event, 0, len(events))
	for i, de := range events {
		e, err := asEvent(de)
		if err == nil {
			err = e.acquire()
		}
		if err != nil {
			return wrapf(err, "%s: event %d", call, i)
		}
		held = append(held, e)
		list = append(list, e.ev)
	}
	for i, e := range held {
		if e.q == nil || e.q.q == q.q || slices.ContainsFunc(held[:i], func(o *event) bool { return o.q == e.q }) {
			continue
		}
		if err := e.q.flush(); err != nil {
			return wrapf(err, "%s: event %d", call, i)
		}
	}
	q.lock()
	err := q.th.Call(func() error { return check(call, enqueueBarrier(q.q, list)) })
	q.unlock()
	return err
}

// flush submits the queue's commands (clFlush) for another queue's WaitEvents, which may
// run while this queue's goroutine enqueues. A queue that is closing is left alone: its
// Close finishes it, and may be releasing it.
func (q *queue) flush() error {
	q.life.RLock()
	defer q.life.RUnlock()
	if q.closed.Load() {
		return nil
	}
	q.lock()
	defer q.unlock()
	return q.th.Call(func() error { return check("clFlush", flushQueue(q.q)) })
}

// Record enqueues a marker (clEnqueueMarkerWithWaitList with no events, which on an
// in-order queue completes after every command enqueued before it) and returns its event.
// Its Elapsed is the marker's own time, about zero.
func (q *queue) Record() (driver.Event, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	var ev *ocl.Event
	q.lock()
	err := q.th.Call(func() error {
		var err error
		if ev, err = q.q.EnqueueMarkerWithWaitList(nil); err != nil {
			ev.Release()
		}
		return err
	})
	q.unlock()
	if err != nil {
		return nil, wrap("clEnqueueMarkerWithWaitList", err)
	}
	return q.event(ev, "marker"), nil
}
