package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prism-compute/prism/engine/driver"
)

// Range is the shape of a kernel launch: global and local (work-group) sizes in 1, 2 or 3
// dimensions, Global a multiple of Local in every dimension, or Local Auto for the launch
// to choose (a size that divides Global: the launch covers exactly Global), and the launch options
// SharedBytes (dynamic shared memory per work-group) and Cluster (thread-block clusters),
// which only some devices accept (Device.LaunchFeatures). Set them with WithSharedBytes
// and WithCluster:
//
//	r := engine.Range1D(n, 256).WithSharedBytes(96 << 10)
//	r := engine.Range2D(w, h, engine.Auto, engine.Auto)
type Range = driver.Range

// LaunchFeatures says which launch options a device accepts; see driver.LaunchFeatures.
type LaunchFeatures = driver.LaunchFeatures

// LocalBytes is a kernel argument for a __local pointer parameter (OpenCL): the size in
// bytes of the local memory each work-group gets for it, chosen at launch
// (clSetKernelArg with no value). A device whose LaunchFeatures lack LocalArgs refuses it
// with ErrUnsupported; on CUDA, size a kernel's dynamic shared memory with
// Range.SharedBytes instead.
//
//	q.Launch(k, r, in, out, engine.LocalBytes(256*4))
type LocalBytes int64

// Range1D returns a one-dimensional range. A local size of Auto lets the launch choose it.
func Range1D(global, local int) Range {
	return Range{Dims: 1, Global: [3]int{global, 1, 1}, Local: [3]int{local, 1, 1}}
}

// Range2D returns a two-dimensional range.
func Range2D(gx, gy, lx, ly int) Range {
	return Range{Dims: 2, Global: [3]int{gx, gy, 1}, Local: [3]int{lx, ly, 1}}
}

// Range3D returns a three-dimensional range.
func Range3D(gx, gy, gz, lx, ly, lz int) Range {
	return Range{Dims: 3, Global: [3]int{gx, gy, gz}, Local: [3]int{lx, ly, lz}}
}

// RoundUp returns the smallest multiple of m that is >= n (m > 0).
func RoundUp(n, m int) int { return (n + m - 1) / m * m }

// Queue is an in-order command queue on one device. A Queue belongs to one goroutine at a
// time; use one Queue per goroutine.
type Queue struct {
	handle
	drv driver.Queue
	rec *[]driver.Event // events kept for Timed, nil when not timing

	// Scratch memory of prepare, reused by every launch (a Queue is used by one goroutine
	// at a time): the driver's arguments and the bytes of their scalar values.
	args   []driver.Arg
	values []byte

	notes []LaunchNote // the launches of the last Timed call (occupancy.go)
	cap   *capture     // the capture in progress (graph.go), nil when none
	host  bool         // the last Timed call measured host time
	held  bool         // the last Timed call held the queue while f enqueued (driver.Gater)
	// open opens the hold of the Timed call in progress (nil when none); atomic, since an
	// Event of q may be waited for from another goroutine.
	open atomic.Pointer[func()]

	// sub counts the commands enqueued; done is the most of them seen complete (a Finish,
	// a blocking Read or Write, a waited Event, Close). The memory pool reuses a freed
	// block once every queue that had commands in flight at the free has done that many.
	// Written by the queue's goroutine, read by any.
	sub, done atomic.Uint64

	// joins are the other queues' commands q waits for on the device (Queue.Wait): once
	// q completes the wait, they have completed too. Guarded by joinMu.
	joinMu sync.Mutex
	joins  []join
}

// maxJoins bounds the joins a queue remembers until it completes them.
const maxJoins = 1024

// join says that when q has completed its command number at, queue p has completed seq.
type join struct {
	at  uint64
	p   *Queue
	seq uint64
}

// enqueued counts one command enqueued on q and returns its number.
func (q *Queue) enqueued() uint64 { return q.sub.Add(1) }

// completed records that q's first seq commands have completed, and with them the
// commands of other queues q waited for before them.
func (q *Queue) completed(seq uint64) {
	for {
		d := q.done.Load()
		if d >= seq {
			return
		}
		if q.done.CompareAndSwap(d, seq) {
			break
		}
	}
	q.joinMu.Lock()
	var reached []join
	keep := q.joins[:0]
	for _, j := range q.joins {
		if j.at <= seq {
			reached = append(reached, j)
		} else {
			keep = append(keep, j)
		}
	}
	clear(q.joins[len(keep):])
	q.joins = keep
	q.joinMu.Unlock()
	for _, j := range reached {
		j.p.completed(j.seq)
	}
}

// NewQueue creates an in-order queue whose commands carry device timestamps.
func (d *Device) NewQueue() (*Queue, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	dq, err := d.drv.NewQueue()
	if err != nil {
		return nil, fmt.Errorf("engine: new queue on %s: %w", d.id, err)
	}
	q := &Queue{handle: handle{dev: d, what: "queue"}, drv: dq}
	if err := d.adopt(q); err != nil {
		dq.Close()
		return nil, err
	}
	d.mu.Lock()
	d.queues[q] = struct{}{}
	d.mu.Unlock()
	return q, nil
}

func (q *Queue) check() error {
	if q == nil {
		return fmt.Errorf("engine: nil queue: %w", ErrInvalidArg)
	}
	return q.handle.check()
}

// Device returns the queue's device.
func (q *Queue) Device() *Device {
	if q == nil {
		return nil
	}
	return q.dev
}

// Finish waits until every command enqueued so far has completed, or ctx is done.
func (q *Queue) Finish(ctx context.Context) error {
	if err := q.check(); err != nil {
		return err
	}
	if err := q.capturing("Finish"); err != nil {
		return err
	}
	q.release()
	seq := q.sub.Load()
	if err := q.drv.Finish(ctx); err != nil {
		return fmt.Errorf("engine: finish %s: %w", q.dev.id, err)
	}
	q.completed(seq)
	return nil
}

// Wait makes the commands enqueued on q after it wait until every one of events has
// completed, events of other queues included: on the device, without blocking the host,
// where the backend orders queues by events (CUDA, OpenCL) and the events are of q's
// device, or of another device whose events the backend's queues wait for (CUDA's, of one
// process); else by waiting for them here, until ctx is done. It is how one queue consumes
// what another produced:
//
//	up, _ := dst.WriteAsync(copyQueue, 0, host, 0, n)
//	computeQueue.Wait(ctx, up) // kernels enqueued next on computeQueue see the data
func (q *Queue) Wait(ctx context.Context, events ...*Event) error {
	if err := q.check(); err != nil {
		return err
	}
	if ctx == nil {
		return fmt.Errorf("engine: wait: nil context: %w", ErrInvalidArg)
	}
	if err := q.capturing("Queue.Wait"); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("engine: wait on %s: %w", q.dev.id, err)
	}
	ew, onDevice := q.drv.(driver.EventWaiter)
	var dev []driver.Event
	for i, e := range events {
		if err := e.usable(); err != nil {
			return fmt.Errorf("engine: wait on event %d: %w", i, err)
		}
		inner := unshare(e.drv)
		if _, ok := inner.(doneEvent); ok {
			continue
		}
		if onDevice && e.q != nil && (e.q.dev == q.dev || waitsAcross(q, e.q)) {
			dev = append(dev, inner)
			continue
		}
		if err := e.Wait(ctx); err != nil {
			return fmt.Errorf("engine: wait on event %d: %w", i, err)
		}
	}
	if len(dev) > 0 {
		if err := ew.WaitEvents(dev); err != nil {
			return fmt.Errorf("engine: wait on %s: %w", q.dev.id, err)
		}
		// The wait counts as a command of q: completing it completes what it waited for.
		at := q.enqueued()
		q.joinMu.Lock()
		for _, e := range events {
			if e.q != nil && e.q != q && e.q.dev == q.dev {
				q.joins = append(q.joins, join{at: at, p: e.q, seq: e.seq})
			}
		}
		if n := len(q.joins); n > maxJoins { // forgetting a join only delays reuse
			q.joins = append(q.joins[:0], q.joins[n-maxJoins:]...)
		}
		q.joinMu.Unlock()
	}
	return nil
}

// waitsAcross reports whether q's driver orders q after the events of p, a queue of
// another device, on the devices (driver.PeerEventWaiter: CUDA devices of one process).
func waitsAcross(q, p *Queue) bool {
	pw, ok := q.drv.(driver.PeerEventWaiter)
	return ok && p.dev != q.dev && p.dev.backend == q.dev.backend && pw.WaitsAcross(p.drv)
}

// Record returns an Event that completes when every command enqueued on q before it has
// completed: for another queue's Wait, or to wait for q's work so far from the host
// without stopping q. The caller must Close it. A backend that cannot record events
// between commands gives ErrUnsupported.
func (q *Queue) Record() (*Event, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if err := q.capturing("Queue.Record"); err != nil {
		return nil, err
	}
	ew, ok := q.drv.(driver.EventWaiter)
	if !ok {
		return nil, fmt.Errorf("engine: record an event on %s (%s): the backend cannot: %w", q.dev.id, q.dev.info.Name, ErrUnsupported)
	}
	seq := q.sub.Load()
	ev, err := ew.Record()
	if err != nil {
		return nil, fmt.Errorf("engine: record an event on %s: %w", q.dev.id, err)
	}
	return &Event{drv: ev, q: q, seq: seq}, nil
}

// Launch enqueues kernel k over range r. args are, in order, the kernel's arguments:
// *Buffer[T] of any element type, scalars of a fixed size (int32, uint32, int64, uint64,
// float32, float64, int16, uint16, int8, uint8, and the 16- and 8-bit floating-point
// types), LocalBytes for a __local pointer parameter, or a *TensorMap, whose 128 bytes the
// kernel takes by value (its buffer must be open, and of k's device). A plain int is
// refused: its size on the device would be ambiguous. r's
// launch options are checked against the device's LaunchFeatures and limits: an option
// the device lacks gives ErrUnsupported, one beyond its limits ErrInvalidArg.
//
// Outside Timed, Launch records no event where the backend can launch without one
// (driver.UntimedLauncher: CUDA, OpenCL): it goes from the caller to the driver with no
// allocation of its own (a scalar argument boxed into an interface may cost the caller
// one). Its failures are reported by a later Finish.
func (q *Queue) Launch(k *Kernel, r Range, args ...any) error {
	if q != nil && q.cap != nil {
		return q.captureLaunch(k, r, args)
	}
	if ul, ok := q.untimed(); ok {
		r, dargs, err := q.prepare(k, r, args)
		if err != nil {
			return err
		}
		q.enqueued()
		if err := ul.LaunchUntimed(k.drv, r, dargs); err != nil {
			return fmt.Errorf("engine: launch %s on %s: %w", k.name, q.dev.id, err)
		}
		return nil
	}
	ev, err := q.LaunchEvent(k, r, args...)
	if err != nil {
		return err
	}
	return ev.Close()
}

// release lets the commands go that Timed calls hold, before every call that blocks until
// the device has run them (Timed lets its own go when f returns: releaseOwn). A blocking
// call on any queue of the device lets every queue's held commands go: a Timed function
// that waits on a queue of its own (launch/graph, say) would otherwise leave the gate on
// the device for the whole wait (up to holdLimit), and a wait on work that depends on the
// held commands would stall until the limit.
func (q *Queue) release() {
	q.releaseOwn()
	if q.dev.holding.Load() == 0 {
		return
	}
	q.dev.mu.Lock()
	defer q.dev.mu.Unlock()
	for other := range q.dev.queues {
		other.releaseOwn()
	}
}

// releaseOwn lets q's held commands go, if any.
func (q *Queue) releaseOwn() {
	if open := q.open.Swap(nil); open != nil {
		q.dev.holding.Add(-1)
		(*open)()
	}
}

// TimingHeld reports whether the last Queue.Timed call on q held its commands until they
// were all enqueued (see Timed): then its device time leaves out the host's enqueueing.
func (q *Queue) TimingHeld() bool { return q != nil && q.held }

// TimedByHost reports whether the last Queue.Timed call on q returned host time: the device
// reports no usable timestamps, or the function enqueued no command that has them (only
// blocking copies, say, or launches on other queues it waited for).
func (q *Queue) TimedByHost() bool { return q != nil && q.host }

// untimed returns the driver queue's UntimedLauncher when launches are not being timed.
func (q *Queue) untimed() (driver.UntimedLauncher, bool) {
	if q == nil || q.rec != nil {
		return nil, false
	}
	ul, ok := q.drv.(driver.UntimedLauncher)
	return ul, ok
}

// LaunchEvent is Launch returning an Event that times the kernel on the device.
// The caller must Close the Event.
func (q *Queue) LaunchEvent(k *Kernel, r Range, args ...any) (*Event, error) {
	if err := q.capturing("LaunchEvent"); err != nil {
		return nil, err
	}
	r, dargs, err := q.prepare(k, r, args)
	if err != nil {
		return nil, err
	}
	ev, err := q.drv.Launch(k.drv, r, dargs)
	if err != nil {
		return nil, fmt.Errorf("engine: launch %s on %s: %w", k.name, q.dev.id, err)
	}
	return q.event(ev), nil
}

// prepare checks a launch of k over r, chooses r's Auto local sizes, and converts the
// arguments for the driver, into the queue's scratch memory: the result is valid until
// the next launch on q (drivers copy arguments during the call). It returns the range to
// launch.
func (q *Queue) prepare(k *Kernel, r Range, args []any) (Range, []driver.Arg, error) {
	if err := q.check(); err != nil {
		return r, nil, err
	}
	if k == nil {
		return r, nil, fmt.Errorf("engine: launch: nil kernel: %w", ErrInvalidArg)
	}
	if err := k.check(); err != nil {
		return r, nil, err
	}
	if err := k.sameDevice(q.dev); err != nil {
		return r, nil, err
	}
	r, err := k.resolve(r)
	if err != nil {
		return r, nil, fmt.Errorf("engine: launch %s: %w", k.name, err)
	}
	if err := checkRange(r, k.maxWG, q.dev.info.MaxWorkItemSizes); err != nil {
		return r, nil, fmt.Errorf("engine: launch %s: %w", k.name, err)
	}
	if err := checkOptions(r, k, q.dev); err != nil {
		return r, nil, fmt.Errorf("engine: launch %s: %w", k.name, err)
	}
	if k.numArgs >= 0 && len(args) != k.numArgs {
		return r, nil, fmt.Errorf("engine: launch %s: %d arguments given, the kernel declares %d: %w", k.name, len(args), k.numArgs, ErrInvalidArg)
	}
	if q.rec != nil {
		q.noteLaunch(k, r)
	}
	dargs := q.args[:0]
	q.values = q.values[:0]
	var local int64 // bytes of LocalBytes arguments
	for i, a := range args {
		da, err := toArg(a, q.dev, &q.values)
		if err != nil {
			return r, nil, wrapf(err, "launch %s: argument %d", k.name, i)
		}
		dargs = append(dargs, da)
		local += da.Local
	}
	q.args = dargs
	if local > 0 {
		if err := checkLocalArgs(local, k, q.dev); err != nil {
			return r, nil, fmt.Errorf("engine: launch %s: %w", k.name, err)
		}
	}
	return r, dargs, nil
}

// event counts the command ev marks, records it for Timed (keep) and returns it as an
// Event the caller owns.
func (q *Queue) event(ev driver.Event) *Event {
	return &Event{drv: q.keep(ev), q: q, seq: q.sub.Load()}
}

// keep counts the command ev marks as enqueued, records ev for Timed and returns the
// event the caller owns. While timing, the event is shared: it is released when both
// Timed and the caller have closed it.
func (q *Queue) keep(ev driver.Event) driver.Event {
	q.enqueued()
	if q.rec == nil {
		return ev
	}
	se := share(ev, 2)
	*q.rec = append(*q.rec, se)
	return se
}

// sharedEvent is a driver event with several owners.
type sharedEvent struct {
	driver.Event
	refs atomic.Int32
}

// share returns ev with n owners, each of which closes it.
func share(ev driver.Event, n int32) *sharedEvent {
	se := &sharedEvent{Event: ev}
	se.refs.Store(n)
	return se
}

// unshare returns the backend's event under ev's sharing.
func unshare(ev driver.Event) driver.Event {
	for {
		se, ok := ev.(*sharedEvent)
		if !ok {
			return ev
		}
		ev = se.Event
	}
}

func (e *sharedEvent) Close() error {
	if e.refs.Add(-1) == 0 {
		return e.Event.Close()
	}
	return nil
}

// holdLimit is the longest a Timed call holds its queue's commands on the device while f
// enqueues them: a call that takes longer to enqueue lets them go at the limit, and is
// timed as it would be without the hold.
const holdLimit = 10 * time.Millisecond

// Timed runs f, which enqueues work on q, and returns the device time of the kernels,
// copies and fills f enqueued, summed from their device timestamps (gaps between commands
// are not counted). It waits for that work to finish. Timed calls do not nest.
//
// Where the backend can hold a queue (the CUDA backend), Timed holds q's commands on the
// device until f has returned, up to 10 ms, so that they run back to back and their
// timestamps measure the device alone: without the hold, a command whose start is
// recorded while the device waits for the host to enqueue it counts the host's time too
// (about 4 µs a launch on the CUDA driver). A blocking call inside f (Finish, a blocking
// Read or Write, Event.Wait) lets the commands go first. TimingHeld says whether the last
// call held q.
//
// On a device that reports no usable event timestamps (Device.EventTiming false; learned
// from the first timed command), and when f enqueued no command with timestamps (only
// blocking Reads and Writes, say), Timed returns the host time from its call until the
// work finished, which includes enqueueing, launch overheads and the gaps.
func (q *Queue) Timed(ctx context.Context, f func() error) (time.Duration, error) {
	if err := q.check(); err != nil {
		return 0, err
	}
	if q.rec != nil {
		return 0, fmt.Errorf("engine: Timed calls do not nest: %w", ErrInvalidArg)
	}
	if err := q.capturing("Timed"); err != nil {
		return 0, err
	}
	var evs []driver.Event
	q.held = false
	if g, ok := q.drv.(driver.Gater); ok && !q.dev.hostTiming.Load() {
		// A queue that cannot be held is timed without: the hold only removes the
		// host's time from the measure.
		if open, err := g.Hold(holdLimit); err == nil {
			q.dev.holding.Add(1)
			q.open.Store(&open)
			q.held = true
		} else {
			Tracef("%s: timing without holding the queue: %v", q.dev.id, err)
		}
	}
	q.rec = &evs
	q.notes = q.notes[:0]
	start := time.Now()
	err := func() error {
		defer func() { q.rec = nil; q.releaseOwn() }() // also when f panics; other Timed calls keep their holds
		return f()
	}()
	defer func() {
		for _, ev := range evs {
			ev.Close()
		}
	}()
	if err != nil {
		return 0, err
	}
	seq := q.sub.Load()
	for _, ev := range evs {
		if err := ev.Wait(ctx); err != nil {
			return 0, fmt.Errorf("engine: timed wait on %s: %w", q.dev.id, err)
		}
	}
	host := time.Since(start)
	if len(evs) > 0 {
		q.completed(seq) // every command of f was timed, the last one is done
	}
	q.host = q.dev.hostTiming.Load() || len(evs) == 0
	if q.host {
		return host, nil
	}
	var total time.Duration
	for _, ev := range evs {
		d, err := ev.Elapsed()
		if errors.Is(err, ErrUnsupported) {
			q.dev.hostTiming.Store(true)
			q.host = true
			return host, nil
		}
		if err != nil {
			return 0, fmt.Errorf("engine: timed elapsed on %s: %w", q.dev.id, err)
		}
		total += d
	}
	return total, nil
}

func checkRange(r Range, maxWG int, maxItems [3]int) error {
	if r.Dims < 1 || r.Dims > 3 {
		return fmt.Errorf("range has %d dimensions, want 1, 2 or 3: %w", r.Dims, ErrInvalidArg)
	}
	wg := 1
	for i := 0; i < r.Dims; i++ {
		g, l := r.Global[i], r.Local[i]
		if g <= 0 || l <= 0 {
			return fmt.Errorf("range dimension %d: global %d and local %d must be positive (or the local size engine.Auto): %w", i, g, l, ErrInvalidArg)
		}
		if g%l != 0 {
			return fmt.Errorf("range dimension %d: global size %d is not a multiple of local size %d (round up with engine.RoundUp, or let engine.Auto choose a divisor): %w", i, g, l, ErrInvalidArg)
		}
		if g > math.MaxUint32 {
			return fmt.Errorf("range dimension %d: global size %d too large: %w", i, g, ErrInvalidArg)
		}
		if maxItems[i] > 0 && l > maxItems[i] {
			return fmt.Errorf("range dimension %d: local size %d exceeds the device's %d: %w", i, l, maxItems[i], ErrInvalidArg)
		}
		wg *= l
	}
	if maxWG > 0 && wg > maxWG {
		return fmt.Errorf("work-group of %d items exceeds the limit of %d: %w", wg, maxWG, ErrInvalidArg)
	}
	return nil
}

// checkOptions checks a range's launch options against the device's features and limits
// and the kernel's static local memory.
func checkOptions(r Range, k *Kernel, dev *Device) error {
	f, info := dev.features, dev.info
	if n := r.SharedBytes; n != 0 {
		if n < 0 {
			return fmt.Errorf("dynamic shared memory of %d bytes: %w", n, ErrInvalidArg)
		}
		if !f.SharedBytes {
			return fmt.Errorf("dynamic shared memory (Range.SharedBytes %d): %s (%s) does not size it at launch (use a LocalBytes argument for a __local pointer parameter): %w",
				n, dev.id, info.Name, ErrUnsupported)
		}
		if limit := info.MaxLocalBytes(); limit > 0 && n+k.attrs.LocalBytes > limit {
			return fmt.Errorf("dynamic shared memory of %d bytes and the kernel's %d static bytes exceed the %d bytes a work-group may use on %s: %w",
				n, k.attrs.LocalBytes, limit, dev.id, ErrInvalidArg)
		}
	}
	if !r.Clustered() {
		return nil
	}
	size := 1
	for i, c := range r.Cluster {
		switch {
		case c < 0 || (i < r.Dims && c == 0) || (i >= r.Dims && c > 1):
			return fmt.Errorf("cluster %v in %d dimensions: each used dimension must be positive, the others 0 or 1: %w", r.Cluster, r.Dims, ErrInvalidArg)
		case i < r.Dims && (r.Global[i]/r.Local[i])%c != 0:
			return fmt.Errorf("cluster %v: %d work-groups in dimension %d is not a multiple of %d: %w", r.Cluster, r.Global[i]/r.Local[i], i, c, ErrInvalidArg)
		}
		size *= max(c, 1)
	}
	if f.MaxClusterSize == 0 {
		return fmt.Errorf("thread-block cluster %v: %s (%s) has no clusters: %w", r.Cluster, dev.id, info.Name, ErrUnsupported)
	}
	if size > f.MaxClusterSize {
		return fmt.Errorf("thread-block cluster %v of %d work-groups exceeds the %d of %s: %w", r.Cluster, size, f.MaxClusterSize, dev.id, ErrInvalidArg)
	}
	return nil
}

// checkLocalArgs checks local bytes of LocalBytes arguments against the device's features
// and limits and the kernel's static local memory.
func checkLocalArgs(local int64, k *Kernel, dev *Device) error {
	if !dev.features.LocalArgs {
		return fmt.Errorf("LocalBytes arguments (%d bytes): %s (%s) takes no __local pointer parameters (size dynamic shared memory with Range.SharedBytes): %w",
			local, dev.id, dev.info.Name, ErrUnsupported)
	}
	if limit := dev.info.LocalMemBytes; limit > 0 && local+k.attrs.LocalBytes > limit {
		return fmt.Errorf("LocalBytes arguments of %d bytes and the kernel's %d static bytes exceed the %d bytes of local memory of %s: %w",
			local, k.attrs.LocalBytes, limit, dev.id, ErrInvalidArg)
	}
	return nil
}

type bufferArg interface {
	kernelArg() (*handle, driver.Buffer)
}

func toArg(a any, dev *Device, values *[]byte) (driver.Arg, error) {
	le := binary.LittleEndian
	// value appends a scalar's bytes to values and returns them; an earlier argument's
	// bytes stay valid when values grows (they keep the array they were appended to).
	value := func(b []byte) driver.Arg {
		start := len(*values)
		*values = append(*values, b...)
		return driver.Arg{Value: (*values)[start:len(*values):len(*values)]}
	}
	var scalar [8]byte
	switch v := a.(type) {
	case bufferArg:
		h, db := v.kernelArg()
		if h == nil {
			return driver.Arg{}, fmt.Errorf("nil buffer: %w", ErrInvalidArg)
		}
		if err := h.check(); err != nil {
			return driver.Arg{}, err
		}
		if err := h.sameDevice(dev); err != nil {
			return driver.Arg{}, err
		}
		return driver.Arg{Buffer: db}, nil
	case *TensorMap:
		return v.arg(dev)
	case Remote:
		if v.h == nil {
			return driver.Arg{}, fmt.Errorf("a zero Remote (Buffer.Reach makes them): %w", ErrInvalidArg)
		}
		if err := v.h.check(); err != nil {
			return driver.Arg{}, err
		}
		if v.dev != dev {
			return driver.Arg{}, fmt.Errorf("a buffer of %s reached for the kernels of %s, launched on %s: %w", v.h.dev.id, v.dev.id, dev.id, ErrInvalidArg)
		}
		return driver.Arg{Buffer: v.db}, nil
	case int32:
		return value(le.AppendUint32(scalar[:0], uint32(v))), nil
	case uint32:
		return value(le.AppendUint32(scalar[:0], v)), nil
	case int64:
		return value(le.AppendUint64(scalar[:0], uint64(v))), nil
	case uint64:
		return value(le.AppendUint64(scalar[:0], v)), nil
	case float32:
		return value(le.AppendUint32(scalar[:0], math.Float32bits(v))), nil
	case float64:
		return value(le.AppendUint64(scalar[:0], math.Float64bits(v))), nil
	case int16:
		return value(le.AppendUint16(scalar[:0], uint16(v))), nil
	case uint16:
		return value(le.AppendUint16(scalar[:0], v)), nil
	case Half:
		return value(le.AppendUint16(scalar[:0], uint16(v))), nil
	case BFloat16:
		return value(le.AppendUint16(scalar[:0], uint16(v))), nil
	case int8:
		return value(append(scalar[:0], byte(v))), nil
	case uint8:
		return value(append(scalar[:0], v)), nil
	case Float8E4M3:
		return value(append(scalar[:0], byte(v))), nil
	case Float8E5M2:
		return value(append(scalar[:0], byte(v))), nil
	case LocalBytes:
		if v <= 0 {
			return driver.Arg{}, fmt.Errorf("LocalBytes(%d): the size must be positive: %w", int64(v), ErrInvalidArg)
		}
		return driver.Arg{Local: int64(v)}, nil
	case nil:
		return driver.Arg{}, fmt.Errorf("nil: %w", ErrInvalidArg)
	case int, uint:
		return driver.Arg{}, fmt.Errorf("%s has no fixed size on the device; convert to int32 or int64: %w", reflect.TypeOf(a), ErrInvalidArg)
	}
	return driver.Arg{}, fmt.Errorf("type %s cannot be a kernel argument: %w", reflect.TypeOf(a), ErrInvalidArg)
}

// Close finishes outstanding work and releases the queue. Idempotent.
func (q *Queue) Close() error {
	if q == nil || !q.closed.CompareAndSwap(false, true) {
		return nil
	}
	q.dev.release(q)
	return q.closeDriver()
}

func (q *Queue) closeResource() error {
	if !q.closed.CompareAndSwap(false, true) {
		return nil
	}
	return q.closeDriver()
}

// closeDriver closes the driver's queue, which finishes its commands, and takes q off the
// device's open queues.
func (q *Queue) closeDriver() error {
	q.release()
	seq := q.sub.Load()
	err := q.drv.Close()
	q.completed(seq)
	q.dev.mu.Lock()
	delete(q.dev.queues, q)
	q.dev.mu.Unlock()
	return err
}
func (q *Queue) order() int { return 0 }

// Event marks the completion of one command and times it with device timestamps.
type Event struct {
	drv    driver.Event
	closed bool
	q      *Queue // the queue of the command, nil for one that completed at once
	seq    uint64 // the command's number on q
}

func (e *Event) usable() error {
	if e == nil || e.drv == nil {
		return fmt.Errorf("engine: a nil Event or one not made by engine: %w", ErrInvalidArg)
	}
	if e.closed {
		return fmt.Errorf("engine: the event is closed: %w", ErrClosed)
	}
	return nil
}

// Wait blocks until the command has completed or ctx is done.
func (e *Event) Wait(ctx context.Context) error {
	if err := e.usable(); err != nil {
		return fmt.Errorf("engine: wait: %w", err)
	}
	if ctx == nil {
		return fmt.Errorf("engine: wait: nil context: %w", ErrInvalidArg)
	}
	if e.q != nil {
		e.q.release()
	}
	if err := e.drv.Wait(ctx); err != nil {
		return err
	}
	if e.q != nil {
		e.q.completed(e.seq)
	}
	return nil
}

// Elapsed waits for the command and returns its execution time on the device.
func (e *Event) Elapsed(ctx context.Context) (time.Duration, error) {
	if err := e.Wait(ctx); err != nil {
		return 0, err
	}
	return e.drv.Elapsed()
}

// Close releases the event. Idempotent.
func (e *Event) Close() error {
	if e == nil || e.drv == nil || e.closed {
		return nil
	}
	e.closed = true
	return e.drv.Close()
}
