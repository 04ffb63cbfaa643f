//go:build !noopencl

package cl

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	ocl "github.com/jgillich/go-opencl/cl"

	"github.com/prism-compute/prism/engine/driver"
)

// queue is an in-order command queue with profiling enabled. A queue is used by one
// goroutine at a time. Under the queue-sharing policy (see sharedQueue) it is a handle on
// the device's single cl_command_queue and every call that enqueues or finishes holds the
// device's mutex mu; otherwise it owns its cl_command_queue and mu is nil. th is the
// context's thread under the thread policy (see pinnedThread), else nil.
type queue struct {
	q       *ocl.CommandQueue
	own     bool
	mu      *sync.Mutex
	th      *osThread
	c       *clContext // the context, whose abandoned waits Close does not wait for; nil for a host buffer's queue
	closed  atomic.Bool
	pending sync.WaitGroup // Finish calls that may still run after their context was done
	// life is held for reading by another queue's WaitEvents while it flushes this one
	// (memory.go), for writing by Close while it releases the cl_command_queue.
	life sync.RWMutex

	sizes launchSizes // LaunchUntimed's global and local sizes, reused
}

var (
	_ driver.Queue           = (*queue)(nil)
	_ driver.UntimedLauncher = (*queue)(nil)
)

func (q *queue) lock() {
	if q.mu != nil {
		q.mu.Lock()
	}
}

func (q *queue) unlock() {
	if q.mu != nil {
		q.mu.Unlock()
	}
}

func (q *queue) check() error {
	if q.closed.Load() {
		return errClosed("queue")
	}
	return nil
}

func asBuffer(b driver.Buffer) (*buffer, error) {
	cb, ok := b.(*buffer)
	if !ok || cb == nil {
		return nil, fmt.Errorf("cl: buffer %T is not an OpenCL buffer: %w", b, driver.ErrInvalidArg)
	}
	if cb.closed.Load() {
		return nil, errClosed("buffer")
	}
	return cb, nil
}

// Write copies size bytes from src to dst at offset with a blocking clEnqueueWriteBuffer:
// src is read only during the call, so Go memory is fine (it holds no Go pointers).
func (q *queue) Write(dst driver.Buffer, offset int64, src unsafe.Pointer, size int64) error {
	if err := q.check(); err != nil {
		return err
	}
	b, err := asBuffer(dst)
	if err != nil {
		return err
	}
	q.lock()
	err = q.th.Call(func() error {
		ev, err := q.q.EnqueueWriteBuffer(b.mem, true, int(offset), int(size), src, nil)
		ev.Release()
		return err
	})
	q.unlock()
	if err != nil {
		return wrap(fmt.Sprintf("clEnqueueWriteBuffer(%d bytes at %d)", size, offset), err)
	}
	return nil
}

// Read copies size bytes from src at offset to dst with a blocking clEnqueueReadBuffer.
func (q *queue) Read(src driver.Buffer, offset int64, dst unsafe.Pointer, size int64) error {
	if err := q.check(); err != nil {
		return err
	}
	b, err := asBuffer(src)
	if err != nil {
		return err
	}
	q.lock()
	err = q.th.Call(func() error {
		ev, err := q.q.EnqueueReadBuffer(b.mem, true, int(offset), int(size), dst, nil)
		ev.Release()
		return err
	})
	q.unlock()
	if err != nil {
		return wrap(fmt.Sprintf("clEnqueueReadBuffer(%d bytes at %d)", size, offset), err)
	}
	return nil
}

// Copy enqueues clEnqueueCopyBuffer.
func (q *queue) Copy(dst driver.Buffer, dstOffset int64, src driver.Buffer, srcOffset int64, size int64) (driver.Event, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	d, err := asBuffer(dst)
	if err != nil {
		return nil, err
	}
	s, err := asBuffer(src)
	if err != nil {
		return nil, err
	}
	var ev *ocl.Event
	q.lock()
	err = q.th.Call(func() error {
		var err error
		if ev, err = q.q.EnqueueCopyBuffer(s.mem, d.mem, int(srcOffset), int(dstOffset), int(size), nil); err != nil {
			ev.Release()
		}
		return err
	})
	q.unlock()
	if err != nil {
		return nil, wrap(fmt.Sprintf("clEnqueueCopyBuffer(%d bytes)", size), err)
	}
	return q.event(ev, "clEnqueueCopyBuffer"), nil
}

// Fill enqueues clEnqueueFillBuffer (OpenCL 1.2), which copies the pattern before it
// returns.
func (q *queue) Fill(dst driver.Buffer, offset int64, pattern []byte, size int64) (driver.Event, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	b, err := asBuffer(dst)
	if err != nil {
		return nil, err
	}
	if len(pattern) == 0 {
		return nil, fmt.Errorf("cl: clEnqueueFillBuffer: empty pattern: %w", driver.ErrInvalidArg)
	}
	var ev *ocl.Event
	q.lock()
	err = q.th.Call(func() error {
		var err error
		if ev, err = q.q.EnqueueFillBuffer(b.mem, unsafe.Pointer(&pattern[0]), len(pattern), int(offset), int(size), nil); err != nil {
			ev.Release()
		}
		return err
	})
	q.unlock()
	if err != nil {
		return nil, wrap(fmt.Sprintf("clEnqueueFillBuffer(%d-byte pattern, %d bytes at %d)", len(pattern), size, offset), err)
	}
	return q.event(ev, "clEnqueueFillBuffer"), nil
}

// Launch sets the arguments (clSetKernelArg) and enqueues the kernel
// (clEnqueueNDRangeKernel), holding the kernel's mutex in between so that concurrent
// launches of one kernel cannot mix their arguments. A buffer argument is set to its
// cl_mem, a value to its bytes, a local size (a __local pointer parameter) to no value and
// that size. OpenCL has neither dynamic shared memory apart from __local parameters nor
// clusters: a range asking for them gives ErrUnsupported.
func (q *queue) Launch(dk driver.Kernel, r driver.Range, args []driver.Arg) (driver.Event, error) {
	k, err := q.launchable(dk, r)
	if err != nil {
		return nil, err
	}
	global, local := make([]int, r.Dims), make([]int, r.Dims)
	copy(global, r.Global[:r.Dims])
	copy(local, r.Local[:r.Dims])

	// Lock order: the device's queue mutex (when shared), then the kernel's, then the thread.
	q.lock()
	defer q.unlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	var ev *ocl.Event
	err = q.th.Call(func() error {
		if err := setArgs(k, args); err != nil {
			return err
		}
		var err error
		ev, err = q.q.EnqueueNDRangeKernel(k.k, nil, global, local, nil)
		if err != nil {
			ev.Release()
			return wrap(fmt.Sprintf("clEnqueueNDRangeKernel(%s, global %v, local %v)", k.name, global, local), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return q.event(ev, "kernel "+k.name), nil
}

// LaunchUntimed enqueues a kernel with no event (driver.UntimedLauncher):
// clEnqueueNDRangeKernel is given no event to create, the sizes go through the queue's own
// memory, and, without a thread policy, the calls are made from the calling goroutine, so
// that the launch allocates nothing.
func (q *queue) LaunchUntimed(dk driver.Kernel, r driver.Range, args []driver.Arg) error {
	k, err := q.launchable(dk, r)
	if err != nil {
		return err
	}
	for i := range r.Dims {
		q.sizes.set(i, r.Global[i], r.Local[i])
	}
	q.lock()
	defer q.unlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	if q.th == nil {
		return q.enqueueUntimed(k, r.Dims, args)
	}
	return q.th.Call(func() error { return q.enqueueUntimed(k, r.Dims, args) })
}

func (q *queue) enqueueUntimed(k *kernel, dims int, args []driver.Arg) error {
	if err := setArgs(k, args); err != nil {
		return err
	}
	if st := enqueueKernel(q.q, k.k, dims, &q.sizes); st != Success {
		return check(fmt.Sprintf("clEnqueueNDRangeKernel(%s, %s)", k.name, q.sizes.describe(dims)), st)
	}
	return nil
}

// launchable checks a launch of dk over r on q and returns the kernel.
func (q *queue) launchable(dk driver.Kernel, r driver.Range) (*kernel, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	k, ok := dk.(*kernel)
	if !ok || k == nil {
		return nil, fmt.Errorf("cl: kernel %T is not an OpenCL kernel: %w", dk, driver.ErrInvalidArg)
	}
	if k.closed.Load() {
		return nil, errClosed("kernel " + k.name)
	}
	if err := checkLaunch(r); err != nil {
		return nil, wrapf(err, "launch %s", k.name)
	}
	return k, nil
}

// setArgs sets the kernel's arguments (clSetKernelArg); the caller holds k.mu and is on
// the queue's thread.
func setArgs(k *kernel, args []driver.Arg) error {
	for i, a := range args {
		var st Status
		switch {
		case a.Buffer != nil:
			b, err := asBuffer(a.Buffer)
			if err != nil {
				return wrapf(err, "launch %s: argument %d", k.name, i)
			}
			st = setArgBuffer(k.k, i, b.mem)
		case len(a.Value) > 0:
			st = setArgValue(k.k, i, a.Value)
		case a.Local > 0:
			st = setArgLocal(k.k, i, a.Local)
		default:
			return fmt.Errorf("cl: launch %s: argument %d has no buffer, value or local size: %w", k.name, i, driver.ErrInvalidArg)
		}
		if st != Success {
			return check(fmt.Sprintf("clSetKernelArg(%s, %d)", k.name, i), st)
		}
	}
	return nil
}

// checkLaunch refuses what an OpenCL launch cannot do: a range of other than 1 to 3
// dimensions, dynamic shared memory (Range.SharedBytes) and clusters.
func checkLaunch(r driver.Range) error {
	switch {
	case r.Dims < 1 || r.Dims > 3:
		return fmt.Errorf("%d dimensions: %w", r.Dims, driver.ErrInvalidArg)
	case r.SharedBytes != 0:
		return fmt.Errorf("dynamic shared memory (Range.SharedBytes %d): OpenCL sizes local memory at launch only through __local pointer parameters: %w",
			r.SharedBytes, driver.ErrUnsupported)
	case r.Clustered():
		return fmt.Errorf("thread-block cluster %v: OpenCL has no clusters: %w", r.Cluster, driver.ErrUnsupported)
	}
	return nil
}

func (q *queue) event(ev *ocl.Event, what string) *event {
	return &event{ev: ev, what: what, q: q, th: q.th, refs: 1}
}

// Finish waits for every command enqueued so far (clFinish). On a shared queue it also
// waits for the commands other handles enqueued before it, holding the device's mutex so
// that the wait is bounded. If ctx is done first, Finish returns ctx's error at once and
// clFinish completes in the background; Close waits for it only if it has ended (see
// clContext.leaking).
func (q *queue) Finish(ctx context.Context) error {
	if err := q.check(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cl: clFinish: %w", err)
	}
	q.pending.Add(1)
	return await(ctx, "clFinish", q.c, func() error {
		defer q.pending.Done()
		return q.finish()
	})
}

func (q *queue) finish() error {
	q.lock()
	defer q.unlock()
	return wrap("clFinish", q.th.Call(q.q.Finish))
}

// Close finishes the queue's outstanding work, then releases the cl_command_queue it owns
// (clReleaseCommandQueue); a shared queue is released with its device. While a wait that
// a done context gave up on still runs on the queue's context (a kernel that never
// returns), Close returns at once and leaves the queue unreleased: clFinish would never
// return. Idempotent.
func (q *queue) Close() error {
	if !q.closed.CompareAndSwap(false, true) {
		return nil
	}
	if q.c.leaking() {
		tracef("closing a queue whose device still runs work a done context gave up on: left unreleased")
		return nil
	}
	err := q.finish()
	q.pending.Wait()
	if q.own {
		q.life.Lock()
		release(q.th, q.q.Release)
		q.life.Unlock()
	}
	return err
}

// await runs f and returns its error. When ctx can be done, f runs on another goroutine
// and a done ctx returns at once with ctx's error; OpenCL waits cannot be interrupted, so f
// then runs to completion in the background and must itself keep alive what it uses, and
// c counts it as abandoned until it ends (clContext.abandon).
func await(ctx context.Context, what string, c *clContext, f func() error) error {
	if ctx.Done() == nil {
		return f()
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done:
			return err
		default:
			ended := c.abandon()
			go func() {
				<-done
				ended()
			}()
			return fmt.Errorf("cl: %s: %w", what, ctx.Err())
		}
	}
}

// event is a cl_event of one enqueued command. It is used by one goroutine at a time. The
// cl_event is released when the event is closed and no background wait still uses it.
type event struct {
	ev     *ocl.Event
	what   string
	q      *queue // the queue of the command, which another queue's WaitEvents flushes
	th     *osThread
	mu     sync.Mutex
	refs   int // 1 for the owner until Close, plus one per running wait
	closed bool
}

var _ driver.Event = (*event)(nil)

func (e *event) acquire() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errClosed("event of " + e.what)
	}
	e.refs++
	return nil
}

func (e *event) drop() {
	e.mu.Lock()
	e.refs--
	last := e.refs == 0
	e.mu.Unlock()
	if last {
		release(e.th, e.ev.Release)
	}
}

// Wait blocks until the command has completed (clWaitForEvents) or ctx is done.
func (e *event) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cl: wait for %s: %w", e.what, err)
	}
	if err := e.acquire(); err != nil {
		return err
	}
	return await(ctx, "wait for "+e.what, e.q.c, func() error {
		defer e.drop()
		return wrap("clWaitForEvents("+e.what+")", e.th.Call(func() error {
			return ocl.WaitForEvents([]*ocl.Event{e.ev})
		}))
	})
}

// placeholderTimestamp bounds the timestamps no device clock gives: a nanosecond counter
// below 2^20 (one millisecond after it started). Mesa's Rusticl 22.3 answers 0, 1, 2 and 3
// for queued, submit, start and end of every command: profiling it does not implement.
const placeholderTimestamp = 1 << 20

// Elapsed returns CL_PROFILING_COMMAND_END minus CL_PROFILING_COMMAND_START. Timestamps
// that no device clock gives (both below placeholderTimestamp) or an end before the start
// return an error wrapping driver.ErrUnsupported: the device reports no usable event
// times, and engine.Queue.Timed measures host time instead.
func (e *event) Elapsed() (time.Duration, error) {
	if err := e.acquire(); err != nil {
		return 0, err
	}
	defer e.drop()
	var start, end int64
	err := e.th.Call(func() error {
		var err error
		if start, err = e.ev.GetEventProfilingInfo(ocl.ProfilingInfoCommandStart); err != nil {
			return wrap("clGetEventProfilingInfo("+e.what+", CL_PROFILING_COMMAND_START)", err)
		}
		if end, err = e.ev.GetEventProfilingInfo(ocl.ProfilingInfoCommandEnd); err != nil {
			return wrap("clGetEventProfilingInfo("+e.what+", CL_PROFILING_COMMAND_END)", err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if (start < placeholderTimestamp && end < placeholderTimestamp) || end < start {
		return 0, fmt.Errorf("cl: %s: event timestamps start %d ns, end %d ns are no device clock's: %w", e.what, start, end, driver.ErrUnsupported)
	}
	return time.Duration(end - start), nil
}

// Close releases the event (clReleaseEvent) once no background wait uses it. It does not
// wait for the command. Idempotent.
func (e *event) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.drop()
	return nil
}
