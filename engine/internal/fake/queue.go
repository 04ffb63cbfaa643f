package fake

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// queue runs every command synchronously, so it is in order and Finish has nothing to wait for.
type queue struct {
	dev    *device
	closed atomic.Bool
	// held is set by Hold until its open is called: a real queue's later commands would
	// not run meanwhile, so a call that waits for them (Finish, Read, Write, Close, an
	// event's Wait), on this queue or on another of the device (whose work may wait for
	// them), is a contract violation (it would wait for the hold's limit).
	held  atomic.Bool
	holds int
}

var (
	_ driver.Queue = (*queue)(nil)
	_ driver.Gater = (*queue)(nil)
)

// Hold holds the queue until open is called (driver.Gater): the commands run at once as
// ever, but a blocking call before open is a violation.
func (q *queue) Hold(limit time.Duration) (func(), error) {
	count(q.dev, "Queue.Hold")
	if err := q.open("Hold"); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, violation("Hold with a limit of %v", limit)
	}
	if q.held.Load() {
		return nil, violation("Hold on a queue already held")
	}
	q.held.Store(true)
	q.holds++
	hold := q.holds
	return func() {
		if q.holds == hold {
			q.held.Store(false)
		}
	}, nil
}

// blocking checks a call that waits for the queue's commands.
func (q *queue) blocking(op string) error {
	if q.held.Load() {
		return violation("%s on a held queue: it would wait for the hold's limit", op)
	}
	q.dev.mu.Lock()
	defer q.dev.mu.Unlock()
	for obj := range q.dev.live {
		if other, ok := obj.(*queue); ok && other.held.Load() {
			return violation("%s while another queue of the device is held: work it waits for may wait for the hold's limit", op)
		}
	}
	return nil
}

func (q *queue) open(op string) error {
	if q.closed.Load() {
		return violation("%s on a closed queue", op)
	}
	if q.dev.isClosed() {
		return violation("%s on a queue of a closed device", op)
	}
	return nil
}

func (q *queue) Write(dst driver.Buffer, offset int64, src unsafe.Pointer, size int64) error {
	count(q.dev, "Queue.Write")
	if err := q.open("Write"); err != nil {
		return err
	}
	if err := q.blocking("Write"); err != nil {
		return err
	}
	b := asBuffer(dst)
	if err := b.use(q.dev, "Write", offset, size); err != nil {
		return err
	}
	if src == nil {
		return violation("Write from a nil pointer")
	}
	copy(b.mem[offset:offset+size], unsafe.Slice((*byte)(src), size))
	return nil
}

func (q *queue) Read(src driver.Buffer, offset int64, dst unsafe.Pointer, size int64) error {
	count(q.dev, "Queue.Read")
	if err := q.open("Read"); err != nil {
		return err
	}
	if err := q.blocking("Read"); err != nil {
		return err
	}
	b := asBuffer(src)
	if err := b.use(q.dev, "Read", offset, size); err != nil {
		return err
	}
	if dst == nil {
		return violation("Read into a nil pointer")
	}
	copy(unsafe.Slice((*byte)(dst), size), b.mem[offset:offset+size])
	return nil
}

func (q *queue) Copy(dst driver.Buffer, dstOffset int64, src driver.Buffer, srcOffset int64, size int64) (driver.Event, error) {
	count(q.dev, "Queue.Copy")
	if err := q.open("Copy"); err != nil {
		return nil, err
	}
	d, s := asBuffer(dst), asBuffer(src)
	if err := d.use(q.dev, "Copy to", dstOffset, size); err != nil {
		return nil, err
	}
	if err := s.use(q.dev, "Copy from", srcOffset, size); err != nil {
		return nil, err
	}
	if d == s && dstOffset < srcOffset+size && srcOffset < dstOffset+size {
		// OpenCL fails with CL_MEM_COPY_OVERLAP; for CUDA it is undefined.
		return nil, violation("Copy between overlapping regions of one buffer ([%d,%d) to [%d,%d))", srcOffset, srcOffset+size, dstOffset, dstOffset+size)
	}
	start := time.Now()
	copy(d.mem[dstOffset:dstOffset+size], s.mem[srcOffset:srcOffset+size])
	return q.event(start), nil
}

func (q *queue) Fill(dst driver.Buffer, offset int64, pattern []byte, size int64) (driver.Event, error) {
	count(q.dev, "Queue.Fill")
	if err := q.open("Fill"); err != nil {
		return nil, err
	}
	b := asBuffer(dst)
	if err := b.use(q.dev, "Fill", offset, size); err != nil {
		return nil, err
	}
	p := int64(len(pattern))
	switch p {
	case 1, 2, 4, 8, 16, 32, 64, 128:
	default:
		return nil, violation("Fill with a pattern of %d bytes", p)
	}
	if offset%p != 0 || size%p != 0 {
		return nil, violation("Fill of %d bytes at offset %d with a pattern of %d bytes", size, offset, p)
	}
	start := time.Now()
	for i := offset; i < offset+size; i += p {
		copy(b.mem[i:i+p], pattern)
	}
	return q.event(start), nil
}

func (q *queue) Launch(k driver.Kernel, r driver.Range, dargs []driver.Arg) (driver.Event, error) {
	count(q.dev, "Queue.Launch")
	if err := q.open("Launch"); err != nil {
		return nil, err
	}
	fk, ok := k.(*kernel)
	switch {
	case !ok || fk == nil:
		return nil, violation("Launch of a %T, not a fake kernel", k)
	case fk.dev != q.dev:
		return nil, violation("Launch of a kernel of another device")
	case fk.closed.Load():
		return nil, violation("Launch of a closed kernel")
	}
	if err := q.checkRange(r); err != nil {
		return nil, err
	}
	if len(dargs) != len(fk.impl.params) {
		return nil, violation("Launch %s with %d arguments, it declares %d", fk.name, len(dargs), len(fk.impl.params))
	}
	local := fk.impl.localBytes
	for i, a := range dargs {
		if err := q.checkArg(fk, i, a); err != nil {
			return nil, err
		}
		local += a.Local
	}
	if limit := q.dev.info.LocalMemBytes; local > limit {
		return nil, violation("Launch %s with %d bytes of local memory, more than %d", fk.name, local, limit)
	}
	if limit := q.dev.info.MaxLocalBytes(); r.SharedBytes+fk.impl.localBytes > limit {
		return nil, violation("Launch %s with %d bytes of shared memory, more than %d", fk.name, r.SharedBytes+fk.impl.localBytes, limit)
	}
	run, err := fk.impl.bind(args(dargs), fk.defines, r)
	if err != nil {
		return nil, fmt.Errorf("fake: Launch %s: %w", fk.name, err)
	}
	start := time.Now()
	if err := grid(fk.name, r, run); err != nil {
		return nil, err
	}
	return q.event(start), nil
}

// LaunchUntimed is Launch without an event (driver.UntimedLauncher).
func (q *queue) LaunchUntimed(k driver.Kernel, r driver.Range, dargs []driver.Arg) error {
	count(q.dev, "Queue.LaunchUntimed")
	ev, err := q.Launch(k, r, dargs)
	if err != nil {
		return err
	}
	return ev.Close()
}

func (q *queue) checkRange(r driver.Range) error {
	if r.Dims < 1 || r.Dims > 3 {
		return violation("Launch with %d dimensions", r.Dims)
	}
	wg := 1
	for i := 0; i < r.Dims; i++ {
		g, l := r.Global[i], r.Local[i]
		if g <= 0 || l <= 0 || g%l != 0 || l > q.dev.info.MaxWorkItemSizes[i] {
			return violation("Launch with global %v, local %v in %d dimensions", r.Global, r.Local, r.Dims)
		}
		wg *= l
	}
	if wg > q.dev.info.MaxWorkGroupSize {
		return violation("Launch with a work-group of %d items, more than %d", wg, q.dev.info.MaxWorkGroupSize)
	}
	switch f := q.dev.features; {
	case r.SharedBytes < 0 || (r.SharedBytes > 0 && !f.SharedBytes):
		return violation("Launch with %d bytes of dynamic shared memory", r.SharedBytes)
	case r.SharedBytes > q.dev.info.MaxLocalBytes():
		return violation("Launch with %d bytes of dynamic shared memory, more than %d", r.SharedBytes, q.dev.info.MaxLocalBytes())
	case r.Clustered():
		size := 1
		for i, c := range r.Cluster {
			if i < r.Dims && (c <= 0 || (r.Global[i]/r.Local[i])%c != 0) || i >= r.Dims && c > 1 || c < 0 {
				return violation("Launch with cluster %v for global %v, local %v", r.Cluster, r.Global, r.Local)
			}
			size *= max(c, 1)
		}
		if size > f.MaxClusterSize {
			return violation("Launch with a cluster of %d work-groups, more than %d", size, f.MaxClusterSize)
		}
	}
	return nil
}

func (q *queue) checkArg(k *kernel, i int, a driver.Arg) error {
	want := k.impl.params[i]
	kinds := 0
	for _, set := range []bool{a.Buffer != nil, a.Value != nil, a.Local != 0} {
		if set {
			kinds++
		}
	}
	switch {
	case kinds != 1:
		return violation("Launch %s: argument %d is not exactly one of a buffer, a value and a local size", k.name, i)
	case a.Local < 0 || a.Local > 0 && !q.dev.features.LocalArgs:
		return violation("Launch %s: argument %d: %d bytes of local memory", k.name, i, a.Local)
	case want == localParam && a.Local == 0:
		// OpenCL reports CL_INVALID_ARG_VALUE for a value given to a __local parameter.
		return fmt.Errorf("fake: Launch %s: argument %d is a __local pointer: want a local size (INVALID_ARG_VALUE)", k.name, i)
	case want == localParam:
	case a.Local != 0:
		return fmt.Errorf("fake: Launch %s: argument %d is not a __local pointer: a local size given (INVALID_ARG_VALUE)", k.name, i)
	case want == bufferParam && a.Buffer == nil:
		return violation("Launch %s: argument %d: want a buffer", k.name, i)
	case want == bufferParam:
		b := asBuffer(a.Buffer)
		if b == nil || b.dev != q.dev || b.closed.Load() {
			return violation("Launch %s: argument %d: not an open buffer of this device", k.name, i)
		}
	case len(a.Value) != int(want):
		// OpenCL reports CL_INVALID_ARG_SIZE; this is the caller's error, not engine's.
		return fmt.Errorf("fake: Launch %s: argument %d has %d bytes, the kernel takes %d (INVALID_ARG_SIZE)", k.name, i, len(a.Value), want)
	}
	return nil
}

// grid runs one work-item per point of the global range. A kernel that indexes out of its
// buffers stops the launch with an error naming the work-item.
func grid(name string, r driver.Range, run func(gid [3]int)) (err error) {
	size := [3]int{1, 1, 1}
	copy(size[:r.Dims], r.Global[:r.Dims])
	var gid [3]int
	defer func() {
		if e := recover(); e != nil {
			err = fmt.Errorf("fake: Launch %s: work-item %v of %v: %v", name, gid, size, e)
		}
	}()
	for gid[2] = 0; gid[2] < size[2]; gid[2]++ {
		for gid[1] = 0; gid[1] < size[1]; gid[1]++ {
			for gid[0] = 0; gid[0] < size[0]; gid[0]++ {
				run(gid)
			}
		}
	}
	return nil
}

func (q *queue) Finish(ctx context.Context) error {
	count(q.dev, "Queue.Finish")
	if err := q.open("Finish"); err != nil {
		return err
	}
	return q.blocking("Finish")
}

func (q *queue) Close() error {
	count(q.dev, "Queue.Close")
	if q.closed.Swap(true) {
		return violation("Queue.Close called twice")
	}
	if err := q.blocking("Close"); err != nil {
		q.dev.drop(q, "NewQueue")
		return err
	}
	return q.dev.drop(q, "NewQueue")
}

// event is a completed command, timed by the host clock.
type event struct {
	dev     *device
	q       *queue
	elapsed time.Duration
	closed  atomic.Bool
}

var _ driver.Event = (*event)(nil)

func (q *queue) event(start time.Time) *event {
	// Never zero, so that callers can tell a timed command from an untimed one.
	return &event{dev: q.dev, q: q, elapsed: max(time.Since(start), time.Nanosecond)}
}

func (e *event) Wait(ctx context.Context) error {
	count(e.dev, "Event.Wait")
	if e.closed.Load() {
		return violation("Event.Wait on a closed event")
	}
	if e.q != nil {
		return e.q.blocking("Event.Wait")
	}
	return nil
}

func (e *event) Elapsed() (time.Duration, error) {
	count(e.dev, "Event.Elapsed")
	if e.closed.Load() {
		return 0, violation("Event.Elapsed on a closed event")
	}
	return e.elapsed, nil
}

func (e *event) Close() error {
	count(e.dev, "Event.Close")
	if e.closed.Swap(true) {
		return violation("Event.Close called twice")
	}
	return nil
}
