package fake

import (
	"time"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// Host buffers, asynchronous copies and cross-queue waits. Commands run at once, so an
// asynchronous copy is a synchronous one that returns an event, a wait has nothing to wait
// for, and a recorded event is complete; what the fake checks is the contract: open
// objects, of this device, in range.

var (
	_ driver.HostAllocator = (*device)(nil)
	_ driver.AsyncCopier   = (*queue)(nil)
	_ driver.EventWaiter   = (*queue)(nil)
)

// hostBuffer is Go memory, 8-byte aligned, that says it is pinned so that engine takes the
// asynchronous path.
type hostBuffer struct {
	dev    *device
	mem    []byte
	closed bool
}

func (d *device) AllocHost(size int64) (driver.HostBuffer, error) {
	count(d, "Device.AllocHost")
	if size <= 0 {
		return nil, violation("AllocHost of %d bytes", size)
	}
	words := make([]uint64, (size+7)/8)
	h := &hostBuffer{dev: d, mem: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), size)}
	if err := d.adopt(h, "AllocHost"); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *hostBuffer) Pointer() unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(h.mem)) }
func (h *hostBuffer) Size() int64             { return int64(len(h.mem)) }
func (h *hostBuffer) Pinned() bool            { return true }

func (h *hostBuffer) Close() error {
	count(h.dev, "HostBuffer.Close")
	if h.closed {
		return violation("HostBuffer.Close called twice")
	}
	h.closed = true
	return h.dev.drop(h, "AllocHost")
}

// host checks a host buffer for a copy of size bytes at offset.
func (q *queue) host(hb driver.HostBuffer, op string, offset, size int64) (*hostBuffer, error) {
	h, ok := hb.(*hostBuffer)
	switch {
	case !ok || h == nil:
		return nil, violation("%s: host buffer %T is not the fake's", op, hb)
	case h.dev != q.dev:
		return nil, violation("%s: host buffer of another device", op)
	case h.closed:
		return nil, violation("%s: closed host buffer", op)
	case size <= 0 || offset < 0 || offset > int64(len(h.mem)) || size > int64(len(h.mem))-offset:
		return nil, violation("%s of %d bytes at host offset %d: out of range for a host buffer of %d", op, size, offset, len(h.mem))
	}
	return h, nil
}

func (q *queue) WriteAsync(dst driver.Buffer, offset int64, src driver.HostBuffer, srcOffset, size int64) (driver.Event, error) {
	count(q.dev, "Queue.WriteAsync")
	if err := q.open("WriteAsync"); err != nil {
		return nil, err
	}
	h, err := q.host(src, "WriteAsync", srcOffset, size)
	if err != nil {
		return nil, err
	}
	b := asBuffer(dst)
	if err := b.use(q.dev, "WriteAsync", offset, size); err != nil {
		return nil, err
	}
	start := time.Now()
	copy(b.mem[offset:offset+size], h.mem[srcOffset:srcOffset+size])
	return q.event(start), nil
}

func (q *queue) ReadAsync(src driver.Buffer, offset int64, dst driver.HostBuffer, dstOffset, size int64) (driver.Event, error) {
	count(q.dev, "Queue.ReadAsync")
	if err := q.open("ReadAsync"); err != nil {
		return nil, err
	}
	h, err := q.host(dst, "ReadAsync", dstOffset, size)
	if err != nil {
		return nil, err
	}
	b := asBuffer(src)
	if err := b.use(q.dev, "ReadAsync", offset, size); err != nil {
		return nil, err
	}
	start := time.Now()
	copy(h.mem[dstOffset:dstOffset+size], b.mem[offset:offset+size])
	return q.event(start), nil
}

func (q *queue) WaitEvents(events []driver.Event) error {
	count(q.dev, "Queue.WaitEvents")
	if err := q.open("WaitEvents"); err != nil {
		return err
	}
	for i, ev := range events {
		e, ok := ev.(*event)
		switch {
		case !ok || e == nil:
			return violation("WaitEvents: event %d is a %T, not the fake's", i, ev)
		case e.dev != q.dev:
			return violation("WaitEvents: event %d is of another device", i)
		case e.closed.Load():
			return violation("WaitEvents: event %d is closed", i)
		}
	}
	return nil
}

func (q *queue) Record() (driver.Event, error) {
	count(q.dev, "Queue.Record")
	if err := q.open("Record"); err != nil {
		return nil, err
	}
	return q.event(time.Now()), nil
}
