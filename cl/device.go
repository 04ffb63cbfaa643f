//go:build !noopencl

package cl

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	ocl "github.com/jgillich/go-opencl/cl"

	"github.com/prism-compute/prism/engine/driver"
)

// sharedQueue is the queue-sharing policy: it reports whether the platform named must run
// all the work of one device through a single cl_command_queue, serialized by one mutex.
//
// Measured here (2026-11-21, PoCL 3.1): one in-order queue shared by many goroutines passed
// 125 of 125 runs, while one queue per goroutine aborted the process in about 5 of 225 runs
// (a reference-count assertion inside PoCL). A later attempt with this package's tests and
// the policy turned off saw no abort in 420 runs, so the abort is rare; CI must not flake
// on it, and on a CPU device serializing loses little. Oclgrind, which CI also runs the
// tests under, gets the same treatment: it simulates on the CPU, and so exercises the path
// PoCL takes. Every other driver (NVIDIA, AMD, Intel) gets one queue per NewQueue, which
// is what lets independent goroutines overlap on a GPU.
func sharedQueue(platform string) bool {
	return platform == "Portable Computing Language" || strings.Contains(platform, "Oclgrind")
}

// pinnedThread is the thread policy: it reports whether every OpenCL call on a context of
// the platform named must be made from the one OS thread that created the context.
//
// Oclgrind 21.10 needs it. Its uninitialized-memory checker (--uninitialized) keeps a
// thread-local memory pool that only the thread calling clCreateContext (and Oclgrind's own
// kernel threads) ever allocate; a host write, fill or copy executed from any other thread
// dereferences a null pool. Go moves goroutines between OS threads, so without the policy
// the tests crashed here with SIGSEGV in oclgrind::MemoryPool::alloc (reached from
// Uninitialized::hostMemoryStore under clEnqueueWriteBuffer / clFinish) in 1 to 3 of 10
// runs. Real drivers are thread-safe, as OpenCL requires, and run calls on the caller's
// thread.
func pinnedThread(platform string) bool {
	return strings.Contains(platform, "Oclgrind")
}

// release runs a clRelease* call f on th, or on the caller's goroutine once th has
// stopped: OpenCL objects may outlive their context (an event closed after its device),
// and their release no longer touches the context's thread-local state.
func release(th *osThread, f func()) {
	if !th.Do(f) {
		f()
	}
}

// clContext is the OpenCL context of open devices. Without queue sharing each open device
// has its own. With it, every open device of one physical device shares one clContext
// (found in sharedContexts), and with it one command queue and the mutex that serializes
// every call that enqueues on that queue or waits for it. Under the thread policy (see
// pinnedThread) every call on the context, from its creation to its release, runs on
// thread; otherwise thread is nil and calls run on the caller's goroutine.
type clContext struct {
	ctx    *ocl.Context
	thread *osThread
	key    uintptr // the device's cl_device_id
	shared bool
	refs   int // open devices using it; guarded by sharedContexts.mu

	// mu is held, when shared, around every enqueue and finish on queue: clSetKernelArg
	// with clEnqueueNDRangeKernel, the blocking reads and writes, copies, fills, clFinish,
	// the maps and unmaps of host buffers. Unshared, it guards only the making of queue.
	// Lock order: mu, then a kernel's mutex, then thread.
	mu sync.Mutex
	// queue is, when shared, the one queue of the device, made by the first NewQueue or
	// AllocHost; unshared, the context's own queue that maps and unmaps host buffers
	// (memory.go), made by the first AllocHost. Guarded by mu; close finishes and
	// releases it.
	queue *ocl.CommandQueue

	// abandoned counts the waits (clFinish, clWaitForEvents) that a done context gave up
	// on and whose driver call still runs: a kernel that never returns keeps one there
	// for good. While it is not zero, closing a queue or the context does not wait for
	// the device and releases nothing (see leaking).
	abandoned atomic.Int32
}

// abandon records that a wait a done context gave up on still runs in the driver; the
// returned function records its end. A nil context (a queue made elsewhere) counts nothing.
func (c *clContext) abandon() (ended func()) {
	if c == nil {
		return func() {}
	}
	c.abandoned.Add(1)
	return func() { c.abandoned.Add(-1) }
}

// leaking reports whether a wait given up on still runs: closing must then leave the
// driver's objects unreleased rather than wait for work that may never end. The process
// that gave up is usually on its way out (a signal, a time limit); the driver's objects
// go with it.
func (c *clContext) leaking() bool { return c != nil && c.abandoned.Load() > 0 }

var sharedContexts = struct {
	mu   sync.Mutex
	byID map[uintptr]*clContext
}{byID: map[uintptr]*clContext{}}

func newContext(p probed, shared bool) (*clContext, error) {
	c := &clContext{key: deviceKey(p.dev), shared: shared, refs: 1}
	create := func() error {
		ctx, err := ocl.CreateContext([]*ocl.Device{p.dev})
		c.ctx = ctx
		return wrap("clCreateContext", err)
	}
	var err error
	if pinnedThread(p.platform) {
		c.thread, err = startOSThread(create)
	} else {
		err = create()
	}
	if err != nil {
		return nil, err
	}
	queues := "a queue per NewQueue"
	if shared {
		queues = "one in-order queue shared by every NewQueue, serialized"
	}
	thread := "calls on the caller's thread"
	if c.thread != nil {
		thread = "every call on one locked OS thread"
	}
	tracef("opened %s (%s) on %q: %s, %s", p.info.ID, p.info.Name, p.platform, queues, thread)
	return c, nil
}

func openContext(p probed) (*clContext, error) {
	if !sharedQueue(p.platform) {
		return newContext(p, false)
	}
	key := deviceKey(p.dev)
	sharedContexts.mu.Lock()
	defer sharedContexts.mu.Unlock()
	if c := sharedContexts.byID[key]; c != nil {
		c.refs++
		return c, nil
	}
	c, err := newContext(p, true)
	if err != nil {
		return nil, err
	}
	sharedContexts.byID[key] = c
	return c, nil
}

// close drops one reference; the last one finishes the shared queue and releases it and
// the context.
func (c *clContext) close() error {
	if c.shared {
		sharedContexts.mu.Lock()
		c.refs--
		last := c.refs == 0
		if last {
			delete(sharedContexts.byID, c.key)
		}
		sharedContexts.mu.Unlock()
		if !last {
			return nil
		}
	}
	if c.leaking() {
		// clFinish would wait for the abandoned work, and releasing the context under a
		// running command is undefined: leave both to the driver (and the thread, which
		// may be in that work).
		tracef("closing a context whose device still runs work a done context gave up on: context and queue left unreleased")
		return nil
	}
	c.mu.Lock()
	err := c.thread.Call(func() error {
		var err error
		if c.queue != nil {
			err = wrap("clFinish", c.queue.Finish())
			c.queue.Release()
			c.queue = nil
		}
		c.ctx.Release()
		return err
	})
	c.mu.Unlock()
	c.thread.Stop()
	return err
}

// device is an open OpenCL device. It is safe for concurrent use.
type device struct {
	info   driver.DeviceInfo
	dev    *ocl.Device
	c      *clContext
	closed atomic.Bool
	hosts  hostBuffers // the open host buffers, closed by Close (memory.go)
}

var (
	_ driver.Device         = (*device)(nil)
	_ driver.LaunchFeaturer = (*device)(nil)
	_ driver.DialectBuilder = (*device)(nil)
)

func openDevice(p probed) (*device, error) {
	c, err := openContext(p)
	if err != nil {
		return nil, err
	}
	return &device{info: p.info, dev: p.dev, c: c}, nil
}

// Info returns the facts found by the probe.
func (d *device) Info() driver.DeviceInfo { return d.info }

// LaunchFeatures reports the launch options OpenCL has: __local pointer parameters sized at
// launch (LocalArgs). It has no dynamic shared memory apart from them, and no clusters.
func (d *device) LaunchFeatures() driver.LaunchFeatures {
	return driver.LaunchFeatures{LocalArgs: true}
}

// Alloc creates a read-write buffer of size bytes (clCreateBuffer).
func (d *device) Alloc(size int64) (driver.Buffer, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("cl: clCreateBuffer(%d bytes): size out of range: %w", size, driver.ErrInvalidArg)
	}
	// The spec makes this CL_INVALID_BUFFER_SIZE, but NVIDIA's driver (580, H100,
	// 2026-11-21) accepts even 2^62 bytes and defers the failure to first use: refuse here.
	if m := d.info.MaxAllocBytes; m > 0 && size > m {
		return nil, fmt.Errorf("cl: clCreateBuffer(%d bytes): exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE (%d): %w", size, m, driver.ErrOutOfMemory)
	}
	var mem *ocl.MemObject
	err := d.c.thread.Call(func() error {
		var err error
		mem, err = d.c.ctx.CreateEmptyBuffer(ocl.MemReadWrite, int(size))
		return err
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("clCreateBuffer(%d bytes)", size), err)
	}
	return &buffer{mem: mem, size: size, th: d.c.thread}, nil
}

// NewQueue returns an in-order queue with profiling enabled (clCreateCommandQueue). Under
// the queue-sharing policy it returns a handle on the device's single queue, creating it
// on first use.
func (d *device) NewQueue() (driver.Queue, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	if !d.c.shared {
		q, err := d.createQueue()
		if err != nil {
			return nil, err
		}
		return &queue{q: q, own: true, th: d.c.thread, c: d.c}, nil
	}
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	if d.c.queue == nil {
		q, err := d.createQueue()
		if err != nil {
			return nil, err
		}
		d.c.queue = q
	}
	return &queue{q: d.c.queue, mu: &d.c.mu, th: d.c.thread, c: d.c}, nil
}

// createQueue makes an in-order queue with profiling enabled (clCreateCommandQueue).
func (d *device) createQueue() (*ocl.CommandQueue, error) {
	var q *ocl.CommandQueue
	err := d.c.thread.Call(func() error {
		var err error
		q, err = d.c.ctx.CreateCommandQueue(d.dev, ocl.CommandQueueProfilingEnable)
		return wrap("clCreateCommandQueue", err)
	})
	return q, err
}

// Close releases the context (and, for the last user of a shared one, its queue after
// finishing it). The engine closes every object made from the device first; a host buffer
// still open is closed first, while its queue and context are there. While a wait that a
// done context gave up on still runs (a kernel that never returns), Close returns at once
// and releases nothing: see clContext.leaking. Idempotent.
func (d *device) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	if d.c.leaking() {
		return d.c.close() // its reference only; unmapping host buffers would wait
	}
	d.hosts.closeAll()
	return d.c.close()
}

// OpenCL 3.0's queries of the language a device compiles and the intermediate languages it
// takes (cl.h of OpenCL 3.0; the package is built against 1.2's).
const (
	paramILVersion          = 0x105B // CL_DEVICE_IL_VERSION: a string, "SPIR-V_1.0 ..."
	paramOpenCLCAllVersions = 0x1066 // CL_DEVICE_OPENCL_C_ALL_VERSIONS: cl_name_version[]
	paramOpenCLCFeatures    = 0x106F // CL_DEVICE_OPENCL_C_FEATURES: cl_name_version[]
	// nameVersionSize is sizeof(cl_name_version): a cl_version (major<<22 | minor<<12 |
	// patch) and a name of CL_NAME_VERSION_MAX_NAME_SIZE (64) bytes.
	nameVersionSize = 4 + 64
)

// describeLanguage fills the OpenCL C versions and features and the intermediate
// languages of info, whose APIVersion and LanguageVersion are read: on an OpenCL 3.0
// device CL_DEVICE_OPENCL_C_ALL_VERSIONS and CL_DEVICE_OPENCL_C_FEATURES, elsewhere the
// version of CL_DEVICE_OPENCL_C_VERSION ("OpenCL C 1.2 ...") and the ones before it (an
// OpenCL compiler takes every earlier -cl-std); CL_DEVICE_IL_VERSION where the device
// answers it (OpenCL 2.1 and later). It also counts the __opencl_c_subgroups feature as
// Subgroups. A query that fails leaves its field empty.
func describeLanguage(q infoQuery, info *driver.DeviceInfo) {
	var versions []string
	if apiAtLeast(info.APIVersion, 3, 0) {
		if b, err := q(paramOpenCLCAllVersions); err == nil {
			for _, nv := range nameVersions(b) {
				if v := fmt.Sprintf("%d.%d", nv.version>>22, nv.version>>12&0x3FF); !slices.Contains(versions, v) {
					versions = append(versions, v)
				}
			}
		}
		if b, err := q(paramOpenCLCFeatures); err == nil {
			var features []string
			for _, nv := range nameVersions(b) {
				if !slices.Contains(features, nv.name) {
					features = append(features, nv.name)
				}
			}
			info.OpenCLCFeatures = strings.Join(features, " ")
		}
	}
	if len(versions) == 0 {
		versions = openCLCUpTo(info.LanguageVersion)
	}
	sortVersions(versions)
	info.OpenCLCVersions = strings.Join(versions, " ")
	if apiAtLeast(info.APIVersion, 2, 1) {
		if il, err := queryString(q, paramILVersion); err == nil {
			info.ILVersions = strings.Join(strings.Fields(il), " ")
		}
	}
	if info.HasOpenCLCFeature("__opencl_c_subgroups") {
		info.Subgroups = true
	}
}

// nameVersion is a cl_name_version.
type nameVersion struct {
	version uint32
	name    string
}

// nameVersions decodes an array of cl_name_version; a trailing partial entry is dropped.
func nameVersions(b []byte) []nameVersion {
	var out []nameVersion
	for ; len(b) >= nameVersionSize; b = b[nameVersionSize:] {
		out = append(out, nameVersion{version: binary.NativeEndian.Uint32(b), name: cString(b[4:nameVersionSize])})
	}
	return out
}

// apiAtLeast reports whether a CL_DEVICE_VERSION ("OpenCL 3.0 PoCL ...") is major.minor or
// later.
func apiAtLeast(api string, major, minor int) bool {
	maj, min, ok := parseVersion(strings.TrimPrefix(api, "OpenCL "))
	return ok && (maj > major || maj == major && min >= minor)
}

// openCLCVersions are the OpenCL C versions before 3.0, in order: a device compiles the
// one CL_DEVICE_OPENCL_C_VERSION names and those before it.
var openCLCVersions = []string{"1.0", "1.1", "1.2", "2.0"}

// openCLCUpTo returns the versions a device whose CL_DEVICE_OPENCL_C_VERSION is lang
// ("OpenCL C 1.2 PoCL") compiles: those of openCLCVersions up to its own, and its own.
func openCLCUpTo(lang string) []string {
	maj, min, ok := parseVersion(strings.TrimPrefix(lang, "OpenCL C "))
	if !ok {
		return nil
	}
	var out []string
	for _, v := range openCLCVersions {
		if m, n, _ := parseVersion(v); m < maj || m == maj && n <= min {
			out = append(out, v)
		}
	}
	if own := fmt.Sprintf("%d.%d", maj, min); !slices.Contains(out, own) {
		out = append(out, own)
	}
	return out
}

// parseVersion reads the "major.minor" that s starts with.
func parseVersion(s string) (major, minor int, ok bool) {
	f, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	a, b, found := strings.Cut(f, ".")
	if !found {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(a)
	min, err2 := strconv.Atoi(b)
	return maj, min, err1 == nil && err2 == nil && maj >= 0 && min >= 0
}

// sortVersions sorts "major.minor" versions in ascending order.
func sortVersions(v []string) {
	slices.SortFunc(v, func(a, b string) int {
		am, an, _ := parseVersion(a)
		bm, bn, _ := parseVersion(b)
		return cmp.Or(cmp.Compare(am, bm), cmp.Compare(an, bn))
	})
}
