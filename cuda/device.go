package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prism-compute/prism/engine/driver"
)

// Properties is what the CUDA backend knows about a device beyond engine's DeviceInfo.
// Zero values mean "not reported".
type Properties struct {
	ComputeCapability           [2]int // major, minor: {9, 0} for sm_90
	Multiprocessors             int
	ClockMHz                    int
	MemoryClockMHz              int
	MemoryBusWidth              int // bits
	L2CacheBytes                int64
	TotalMemBytes               int64
	SharedMemPerBlock           int64 // without opt-in
	SharedMemPerBlockOptin      int64 // with cuFuncSetAttribute's opt-in
	SharedMemPerMultiprocessor  int64
	RegistersPerBlock           int
	MaxThreadsPerBlock          int
	MaxThreadsPerMultiprocessor int
	MaxBlockDim                 [3]int
	MaxGridDim                  [3]int
	WarpSize                    int
	ClusterLaunch               bool   // thread-block clusters (CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)
	PCIBusID                    string // "0000:17:00.0"
	DriverVersion               int    // cuDriverGetVersion: 13000 for CUDA 13.0
	NVRTCVersion                string // "13.0"
}

// Device is the CUDA view of an open device: what engine.Device.Driver() returns for a
// device of this backend, with the methods that engine does not offer. It is safe for
// concurrent use.
type Device interface {
	driver.Device
	// Properties returns the device's CUDA properties.
	Properties() Properties
	// MemInfo returns the free and total device memory (cuMemGetInfo_v2).
	MemInfo() (free, total int64, err error)
	// AllocHost allocates size bytes of page-locked host memory (cuMemHostAlloc), a
	// *HostBuffer, from which the queues copy asynchronously and faster than from
	// pageable memory (engine.NewHostBuffer on a CUDA device).
	AllocHost(size int64) (driver.HostBuffer, error)
	// BuildSource compiles OpenCL C (through the prelude) or CUDA C++ (NVIDIA-only
	// kernels: tensor cores, warp shuffles, Hopper's wgmma); see driver.DialectBuilder.
	driver.DialectBuilder
	// LaunchFeatures reports dynamic shared memory and, from compute capability 9.0,
	// thread-block clusters.
	driver.LaunchFeaturer
	// EncodeTensorMap encodes tensor maps (cuTensorMapEncodeTiled) from compute
	// capability 9.0, with a CUDA 12.0 driver (TensorMapSupport says which).
	driver.TensorMapEncoder
}

// device is an open CUDA device: the primary context, retained by Open and released by
// Close, and the OS thread on which it is current and every call that needs it runs.
type device struct {
	info    driver.DeviceInfo
	props   Properties
	rt      *libInfo
	ordinal int
	spin    time.Duration // how long a wait queries before it blocks (PRISM_WAIT_SPIN)
	th      *osThread
	ctx     cuContext
	closed  atomic.Bool

	// events are free timing events, reused by queues' commands. Guarded by mu.
	mu     sync.Mutex
	events []cuEvent

	// mem is the device's pool of the stream-ordered allocator, made by the first pooled
	// allocation; nil where the device has none (memory.go).
	memOnce sync.Once
	mem     *memPool

	// abandoned counts the waits (stream and event queries) that a done context gave up
	// on while the device still ran their work: a kernel that never returns keeps one
	// there for good. While it is not zero, closing a queue or the device does not wait
	// for the device and releases nothing (see leaking).
	abandoned atomic.Int32

	// gate is the kernel that holds a queue (queue.Hold), built by the first Hold.
	gateOnce sync.Once
	gate     *gateKernel
	gateErr  error
}

var _ Device = (*device)(nil)

// abandon records that a wait a done context gave up on still has its work running on
// the device; the returned function records its end.
func (d *device) abandon() (ended func()) {
	d.abandoned.Add(1)
	return func() { d.abandoned.Add(-1) }
}

// leaking reports whether a wait given up on still has its work running: closing must
// then leave the driver's objects unreleased rather than wait for work that may never
// end. The process that gave up is usually on its way out (a signal, a time limit); the
// driver's objects go with it.
func (d *device) leaking() bool { return d.abandoned.Load() > 0 }

// giveUp records a wait on query that a done context ended while the work runs, and
// watches, in the background, for the work's end (one query per maxSleep) until the
// device is closed.
func (d *device) giveUp(query func() Result) {
	ended := d.abandon()
	go func() {
		defer ended()
		for !d.closed.Load() && query() == NotReady {
			time.Sleep(maxSleep)
		}
	}()
}

// maxPooledEvents bounds the events a device keeps for reuse.
const maxPooledEvents = 256

func openDevice(p probed, rt *libInfo) (*device, error) {
	spin, err := waitSpin()
	if err != nil {
		return nil, err
	}
	d := &device{info: p.info, props: p.props, rt: rt, ordinal: p.ordinal, spin: spin}
	th, err := startOSThread(func() error {
		ctx, r := cuDevicePrimaryCtxRetain(d.ordinal)
		if err := check(fmt.Sprintf("cuDevicePrimaryCtxRetain(%d)", d.ordinal), r); err != nil {
			return err
		}
		if err := check("cuCtxSetCurrent", cuCtxSetCurrent(ctx)); err != nil {
			cuDevicePrimaryCtxRelease(d.ordinal)
			return err
		}
		d.ctx = ctx
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.th = th
	return d, nil
}

// Info returns what the probe found.
func (d *device) Info() driver.DeviceInfo { return d.info }

// Properties returns the device's CUDA properties.
func (d *device) Properties() Properties { return d.props }

// maxClusterSize is the largest thread-block cluster, in blocks, that a launch may ask for
// without the kernel opting in to non-portable sizes: 8 on every device that has clusters
// (CUDA Programming Guide, "Thread Block Clusters").
const maxClusterSize = 8

// LaunchFeatures reports dynamic shared memory (the launch's sharedMemBytes, with the
// opt-in above 48 KiB done per kernel) and, on devices with cluster launch
// (CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, compute capability 9.0 and newer), clusters of up
// to 8 blocks; __local pointer parameters of kernels built from OpenCL C, whose memory
// the launch places in the dynamic shared memory (queue.go, withLocals).
func (d *device) LaunchFeatures() driver.LaunchFeatures {
	f := driver.LaunchFeatures{LocalArgs: true, SharedBytes: true}
	if d.props.ClusterLaunch {
		f.MaxClusterSize = maxClusterSize
	}
	return f
}

// MemInfo returns the free and total device memory (cuMemGetInfo_v2).
func (d *device) MemInfo() (free, total int64, err error) {
	err = d.th.Call(func() error {
		var r Result
		free, total, r = cuMemGetInfo()
		return check("cuMemGetInfo_v2", r)
	})
	return free, total, err
}

// Alloc reserves size bytes of device memory (cuMemAlloc_v2).
func (d *device) Alloc(size int64) (driver.Buffer, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	var p devptr
	err := d.th.Call(func() error {
		var r Result
		p, r = cuMemAlloc(size)
		return check(fmt.Sprintf("cuMemAlloc_v2(%d bytes)", size), r)
	})
	if err != nil {
		return nil, err
	}
	return &buffer{ptr: p, size: size, d: d}, nil
}

// NewQueue creates a stream (see queue).
func (d *device) NewQueue() (driver.Queue, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	var s cuStream
	err := d.th.Call(func() error {
		var r Result
		s, r = cuStreamCreate(streamNonBlocking)
		return check("cuStreamCreate(CU_STREAM_NON_BLOCKING)", r)
	})
	if err != nil {
		return nil, err
	}
	return &queue{d: d, stream: s}, nil
}

// Close releases the primary context (cuDevicePrimaryCtxRelease_v2) and ends the device's
// thread. engine calls it once, after every object made from the device is closed. While
// a wait that a done context gave up on still has its work running (a kernel that never
// returns), Close only ends the thread and releases nothing: see leaking. Idempotent.
func (d *device) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	forgetPeers(d)
	if d.leaking() {
		tracef("closing a device that still runs work a done context gave up on: context, pool and events left unreleased")
		d.th.Stop()
		return nil
	}
	if g := d.gate; g != nil {
		g.k.Close()
		g.prog.Close()
	}
	d.mu.Lock() // after closed is set: giveBack adds nothing more
	back := d.events
	d.events = nil
	d.mu.Unlock()
	var errs []error
	d.th.Do(func() {
		for _, e := range back {
			cuEventDestroy(e)
		}
		errs = append(errs, d.mem.close())
		cuCtxSetCurrent(nil)
		errs = append(errs, check(fmt.Sprintf("cuDevicePrimaryCtxRelease_v2(%d)", d.ordinal), cuDevicePrimaryCtxRelease(d.ordinal)))
	})
	d.th.Stop()
	return errors.Join(errs...)
}

// onCaller runs f on the calling goroutine, locked to its OS thread with the device's
// context current there: the way queues enqueue commands, so that the queues of a device
// never wait for one another's calls on the device's thread. (A CUDA context is current
// per OS thread, and a goroutine may move between threads at each cgo call unless locked;
// cuCtxSetCurrent of the context already current costs a thread-local store.)
func (d *device) onCaller(f func() error) error {
	if d.closed.Load() {
		return errClosed("device")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check("cuCtxSetCurrent", cuCtxSetCurrent(d.ctx)); err != nil {
		return err
	}
	return f()
}

// event returns a timing event from the pool, or a new one (cuEventCreate). It runs with
// the context current (on the device's thread or in onCaller).
func (d *device) event() (cuEvent, error) {
	d.mu.Lock()
	var extra []cuEvent
	if n := len(d.events); n > maxPooledEvents {
		extra = slices.Clone(d.events[maxPooledEvents:])
		d.events = d.events[:maxPooledEvents]
	}
	var e cuEvent
	if n := len(d.events); n > 0 {
		e = d.events[n-1]
		d.events = d.events[:n-1]
	}
	d.mu.Unlock()
	for _, x := range extra {
		cuEventDestroy(x)
	}
	if e != nil {
		return e, nil
	}
	e, r := cuEventCreate()
	return e, check("cuEventCreate", r)
}

// giveBack returns events to the pool from any goroutine, without a driver call; event
// destroys those beyond the pool's bound when it next runs. After Close it does nothing
// (the context's destruction released the events). An event may be returned while its
// last record is pending: recording it again replaces that state, and nothing reads it
// after its owner closed it.
func (d *device) giveBack(events ...cuEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return
	}
	for _, e := range events {
		if e != nil {
			d.events = append(d.events, e)
		}
	}
}

// Waiting for asynchronous work. A wait queries once (cuEventQuery, cuStreamQuery) from
// the calling goroutine, which returns at once for work already done; then, by default,
// it blocks in the driver (cuEventSynchronize, cuStreamSynchronize) on a goroutine of its
// own, with the context made current in the same C call, while the caller waits for that
// or for its context. Nothing holds the device's thread, so the other queues of the
// device go on, and a cancelled context returns at once (the driver's wait then ends
// with the work). The primary context schedules its waits automatically, which on a
// host with more cores than contexts means the driver's blocking wait spins on a
// semaphore itself: measured on an H200 (BenchmarkWait, 2026-11-30), a wait for work of
// 20 us to 1 ms returned 16-22 us after the work's length (launch included), 17-34 us
// at the 90th percentile, using no more host time than the work lasted; querying first
// for 100 us (the default before) returned up to 12 us later at the median and 20 us at
// the 90th percentile, and 1 ms of queries used 1.7 cores. PRISM_WAIT_SPIN (default
// defaultSpin) still sets how long a wait queries before it blocks, for drivers whose
// blocking wait sleeps. Sleeping between queries instead costs up to a millisecond a wait
// where the Go runtime sleeps in epoll's millisecond steps: a 0.3 ms NCCL all-reduce of
// 64 MiB on two H200s was waited for in 1.2 ms, and one of 1 GiB in 4.2 ms instead of 3.4.
// Where the driver lacks the blocking call, the queries go on with sleeps that double
// from minSleep to maxSleep.
const (
	defaultSpin time.Duration = 0
	maxSpin                   = time.Second
	minSleep                  = 20 * time.Microsecond
	maxSleep                  = time.Millisecond
)

// waitSpinEnv names the variable that sets how long a wait queries before it blocks.
const waitSpinEnv = "PRISM_WAIT_SPIN"

// waitSpin returns the spin of a wait: PRISM_WAIT_SPIN as a Go duration from 0 to
// maxSpin ("0", "100us", "2ms"), defaultSpin where it is unset or empty, else an error
// wrapping driver.ErrInvalidArg that names the variable and its value.
func waitSpin() (time.Duration, error) {
	v := strings.TrimSpace(os.Getenv(waitSpinEnv))
	if v == "" {
		return defaultSpin, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > maxSpin {
		return 0, fmt.Errorf("cuda: %s=%q: want a duration from 0 to %v, as 100us or 2ms: %w", waitSpinEnv, v, maxSpin, driver.ErrInvalidArg)
	}
	return d, nil
}

// poll waits until query no longer answers NotReady, or ctx is done: queries for d.spin,
// then block where it is given and the driver has blocking waits, else queries with
// sleeps.
func (d *device) poll(ctx context.Context, call string, query func() Result, block func() Result) error {
	start := time.Now()
	var sleep time.Duration
	var timer *time.Timer
	for {
		if d.closed.Load() {
			return errClosed("device")
		}
		r := query()
		if r != NotReady {
			return check(call, r)
		}
		if err := ctx.Err(); err != nil {
			d.giveUp(query)
			return fmt.Errorf("cuda: %s: %w", call, err)
		}
		if time.Since(start) < d.spin {
			runtime.Gosched()
			continue
		}
		if block != nil && haveEventSynchronize() {
			done := make(chan Result, 1)
			go func() { done <- block() }()
			select {
			case r := <-done:
				return check(call, r)
			case <-ctx.Done():
				ended := d.abandon()
				go func() {
					<-done
					ended()
				}()
				return fmt.Errorf("cuda: %s: %w", call, ctx.Err())
			}
		}
		sleep = min(max(2*sleep, minSleep), maxSleep)
		if timer == nil {
			timer = time.NewTimer(sleep)
			defer timer.Stop()
		} else {
			timer.Reset(sleep)
		}
		select {
		case <-ctx.Done():
			d.giveUp(query)
			return fmt.Errorf("cuda: %s: %w", call, ctx.Err())
		case <-timer.C:
		}
	}
}
