package engine

import (
	"context"
	"fmt"
	"math"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// Scalar is the set of element types a Buffer can hold.
type Scalar interface {
	~float32 | ~float64 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~int16 | ~uint16 | ~int8 | ~uint8
}

// Buffer is device memory holding Len elements of type T. It is safe for concurrent use,
// but commands that write it must be ordered by the caller (one queue, or events).
type Buffer[T Scalar] struct {
	handle
	n   int
	drv driver.Buffer
}

// SizeOf returns the size in bytes of one element of type T.
func SizeOf[T Scalar]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// NewBuffer allocates a buffer of n elements (n > 0) on d. Its contents are undefined.
func NewBuffer[T Scalar](d *Device, n int) (*Buffer[T], error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("engine: NewBuffer of %d elements: length must be positive: %w", n, ErrInvalidArg)
	}
	if int64(n) > math.MaxInt64/int64(SizeOf[T]()) {
		return nil, fmt.Errorf("engine: NewBuffer of %d elements: size overflows: %w", n, ErrInvalidArg)
	}
	size := int64(n) * int64(SizeOf[T]())
	if m := d.info.MaxAllocBytes; m > 0 && size > m {
		return nil, fmt.Errorf("engine: NewBuffer of %d bytes exceeds the device's largest allocation (%d bytes): %w", size, m, ErrOutOfMemory)
	}
	db, err := d.pool.get(d, size)
	if err != nil {
		return nil, err
	}
	b := &Buffer[T]{handle: handle{dev: d, what: "buffer"}, n: n, drv: db}
	if err := d.adopt(b); err != nil {
		d.pool.put(db, size, nil)
		return nil, err
	}
	return b, nil
}

// Upload allocates a buffer on q's device holding a copy of src: NewBuffer, then Write. When
// ctx is done before the copy completes, the buffer is released and the error wraps
// ctx.Err().
func Upload[T Scalar](ctx context.Context, q *Queue, src []T) (*Buffer[T], error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, fmt.Errorf("engine: upload: nil context: %w", ErrInvalidArg)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("engine: upload %s: %w", q.dev.id, err)
	}
	b, err := NewBuffer[T](q.dev, len(src))
	if err != nil {
		return nil, err
	}
	if err := b.Write(ctx, q, 0, src); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Len returns the number of elements.
func (b *Buffer[T]) Len() int {
	if b == nil {
		return 0
	}
	return b.n
}

// Bytes returns the size in bytes.
func (b *Buffer[T]) Bytes() int64 { return int64(b.Len()) * int64(SizeOf[T]()) }

// Device returns the device the buffer lives on.
func (b *Buffer[T]) Device() *Device {
	if b == nil {
		return nil
	}
	return b.dev
}

func (b *Buffer[T]) span(op string, offset, count int) error {
	if offset < 0 || count < 0 || offset > b.n || count > b.n-offset {
		return fmt.Errorf("engine: %s of %d elements at offset %d: out of range for a buffer of %d: %w", op, count, offset, b.n, ErrInvalidArg)
	}
	return nil
}

func (b *Buffer[T]) onQueue(q *Queue) error {
	if b == nil {
		return fmt.Errorf("engine: nil buffer: %w", ErrInvalidArg)
	}
	if err := b.check(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	return b.sameDevice(q.dev)
}

// transferChunk is the most bytes a Read or Write moves in one driver call. A driver's
// blocking copy cannot be interrupted, so Read and Write look at their context between
// chunks: cancelling stops a large transfer after the chunk in flight, about 10 ms over
// PCIe 5, 20 ms over PCIe 4, 30 ms on PoCL. Smaller chunks cost throughput where each copy
// is a command of its own: on PoCL 3.1, 512 MiB moved in 64 MiB chunks were 10-15% slower
// than in one call, in 256 MiB chunks as fast (median of 6 runs of 20 each way, 2 cores).
// A variable so that tests can make it small.
var transferChunk int64 = 256 << 20

// Write copies src into the buffer starting at element offset, after the commands enqueued
// on q before it. It returns when src may be reused, or when ctx is done: ctx is checked
// before the copy starts and between chunks of transferChunk bytes (a driver's copy in
// flight cannot be interrupted), and the error then wraps ctx.Err(), with a part of src
// possibly written.
func (b *Buffer[T]) Write(ctx context.Context, q *Queue, offset int, src []T) error {
	if err := b.onQueue(q); err != nil {
		return err
	}
	if err := b.span("write", offset, len(src)); err != nil {
		return err
	}
	es := int64(SizeOf[T]())
	return transfer(ctx, q, "write", len(src), es, func(from, n int) error {
		return q.drv.Write(b.drv, int64(offset+from)*es, unsafe.Pointer(&src[from]), int64(n)*es)
	})
}

// Read copies len(dst) elements starting at element offset into dst, after the commands
// enqueued on q before it. It returns when the data is in dst, or when ctx is done: ctx is
// checked before the copy starts and between chunks, as for Write, and the error then wraps
// ctx.Err(), with dst partly written.
func (b *Buffer[T]) Read(ctx context.Context, q *Queue, offset int, dst []T) error {
	if err := b.onQueue(q); err != nil {
		return err
	}
	if err := b.span("read", offset, len(dst)); err != nil {
		return err
	}
	es := int64(SizeOf[T]())
	return transfer(ctx, q, "read", len(dst), es, func(from, n int) error {
		return q.drv.Read(b.drv, int64(offset+from)*es, unsafe.Pointer(&dst[from]), int64(n)*es)
	})
}

// transfer moves n elements of es bytes in chunks of at most transferChunk bytes through
// move(from, count), checking ctx before each.
func transfer(ctx context.Context, q *Queue, what string, n int, es int64, move func(from, count int) error) (err error) {
	if ctx == nil {
		return fmt.Errorf("engine: %s: nil context: %w", what, ErrInvalidArg)
	}
	if err := q.capturing("a blocking " + what); err != nil {
		return err
	}
	q.release()
	step := int(max(transferChunk/es, 1))
	seq := q.sub.Load()
	defer func() {
		if err == nil && n > 0 {
			q.completed(seq) // a blocking copy waits for the queue's earlier commands
		}
	}()
	for from := 0; from < n; from += step {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("engine: %s %s: %w", what, q.dev.id, err)
		}
		if err := move(from, min(step, n-from)); err != nil {
			return fmt.Errorf("engine: %s %s: %w", what, q.dev.id, err)
		}
	}
	return nil
}

// Download returns a new slice holding the whole buffer: Read of every element into it.
func (b *Buffer[T]) Download(ctx context.Context, q *Queue) ([]T, error) {
	if b == nil {
		return nil, fmt.Errorf("engine: download: nil buffer: %w", ErrInvalidArg)
	}
	out := make([]T, b.n)
	if err := b.Read(ctx, q, 0, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Fill enqueues setting count elements from offset to v. It returns once the fill is
// enqueued, without waiting for it (Queue.Finish waits), so it takes no context.
func (b *Buffer[T]) Fill(q *Queue, offset, count int, v T) error {
	if err := b.onQueue(q); err != nil {
		return err
	}
	if err := b.span("fill", offset, count); err != nil {
		return err
	}
	if count == 0 {
		return nil
	}
	es := int64(SizeOf[T]())
	pat := append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&v)), es)...)
	off, size := int64(offset)*es, int64(count)*es
	if q.record(func(dq driver.Queue, _ bool) (driver.Event, error) { return dq.Fill(b.drv, off, pat, size) }, &b.handle) {
		return nil
	}
	ev, err := q.drv.Fill(b.drv, off, pat, size)
	if err != nil {
		return fmt.Errorf("engine: fill %s: %w", q.dev.id, err)
	}
	return q.keep(ev).Close()
}

// CopyFrom enqueues a copy of count elements of src, from srcOffset, into b at offset. It
// returns once the copy is enqueued, without waiting for it, so it takes no context.
//
// src may be a buffer of another device whose driver copies from it directly
// (PeerPath(q, a queue of src's device) is "peer": CUDA devices of one process). Commands
// on the queues of src's device are not ordered with q: the caller orders those that
// write src before it (q.Wait on an event recorded after them, which CUDA queues wait for
// on the device, or by finishing them), and leaves src unchanged until the copy is done. Elsewhere a buffer of
// another device is refused with ErrUnsupported: CopyPeer copies through host memory.
func (b *Buffer[T]) CopyFrom(q *Queue, offset int, src *Buffer[T], srcOffset, count int) error {
	if err := b.onQueue(q); err != nil {
		return err
	}
	if src == nil {
		return fmt.Errorf("engine: copy from a nil buffer: %w", ErrInvalidArg)
	}
	if err := src.check(); err != nil {
		return err
	}
	peer := src.dev != q.dev
	if peer {
		if !copiesFrom(q, src.dev) {
			return fmt.Errorf("engine: copy from a buffer of %s on a queue of %s: the devices do not copy between each other directly (engine.CopyPeer stages through host memory): %w",
				src.dev.id, q.dev.id, ErrUnsupported)
		}
	}
	if err := b.span("copy", offset, count); err != nil {
		return err
	}
	if err := src.span("copy", srcOffset, count); err != nil {
		return err
	}
	if b == src && offset < srcOffset+count && srcOffset < offset+count {
		return fmt.Errorf("engine: copy of %d elements from offset %d to %d within one buffer: the regions overlap: %w", count, srcOffset, offset, ErrInvalidArg)
	}
	if count == 0 {
		return nil
	}
	es := int64(SizeOf[T]())
	off, soff, size := int64(offset)*es, int64(srcOffset)*es, int64(count)*es
	cp := func(dq driver.Queue) (driver.Event, error) { return dq.Copy(b.drv, off, src.drv, soff, size) }
	if peer {
		cp = func(dq driver.Queue) (driver.Event, error) {
			return dq.(driver.PeerCopier).CopyPeer(b.drv, off, src.drv, soff, size) // a queue of q's device
		}
	}
	if q.record(func(dq driver.Queue, _ bool) (driver.Event, error) { return cp(dq) }, &b.handle, &src.handle) {
		return nil
	}
	ev, err := cp(q.drv)
	if err != nil {
		return fmt.Errorf("engine: copy %s: %w", q.dev.id, err)
	}
	return q.keep(ev).Close()
}

// Close releases the device memory. It is idempotent.
func (b *Buffer[T]) Close() error {
	if b == nil || b.drv == nil || !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	b.dev.release(b)
	return b.dev.pool.put(b.drv, b.Bytes(), b.dev.inFlight())
}

func (b *Buffer[T]) closeResource() error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	return b.dev.pool.put(b.drv, b.Bytes(), nil) // the queues have finished
}
func (b *Buffer[T]) order() int { return 3 }

// kernelArg lets a Buffer of any element type be passed to Launch.
func (b *Buffer[T]) kernelArg() (*handle, driver.Buffer) {
	if b == nil {
		return nil, nil
	}
	return &b.handle, b.drv
}
