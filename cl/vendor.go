//go:build !noopencl

package cl

// This file is what the vendor libraries (blas.go: CLBlast, fft.go: clFFT) share: the
// loader, which opens a library with dlopen and resolves its functions with dlsym
// (internal/dl, the loader both backends use), so that a binary without them still starts
// and builds need no -dev package; the raw OpenCL
// handles they are called with; and the timing of a library call on a queue.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unsafe"

	ocl "github.com/jgillich/go-opencl/cl"

	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/internal/dl"
)

// vendorDirs are the usual install locations of vendor libraries that the dynamic loader
// may not search, tried after PRISM_VENDOR_PATH and the loader's own path.
var vendorDirs = []string{"/usr/local/lib", "/usr/local/lib64", "/usr/lib64", "/opt/clblast/lib", "/opt/clfft/lib64"}

// vendorSymbol is one function a library must (or may) export.
type vendorSymbol struct {
	name     string
	optional bool
}

// vendorLib is a loaded vendor library: the path it was found at and its
// functions, in the order they were asked for (nil for a missing optional one).
type vendorLib struct {
	path string
	fns  []unsafe.Pointer
}

// dlSymbols returns syms as the loader takes them.
func dlSymbols(syms []vendorSymbol) []dl.Symbol {
	out := make([]dl.Symbol, len(syms))
	for i, s := range syms {
		out[i] = dl.Symbol{Names: []string{s.name}, Optional: s.optional}
	}
	return out
}

// loadVendor opens the first candidate (driver.LibraryCandidates of names and
// vendorDirs) that loads and exports every required symbol. The library stays open for
// the life of the process. A failure wraps driver.ErrUnavailable and names every file
// tried with the loader's message.
func loadVendor(what string, names []string, syms []vendorSymbol) (*vendorLib, error) {
	lib, tried := dl.Load(driver.LibraryCandidates(names, vendorDirs...), dlSymbols(syms), nil)
	if lib != nil {
		return &vendorLib{path: lib.Path, fns: lib.Fns}, nil
	}
	return nil, fmt.Errorf("cl: cannot load %s (tried %s; set %s to a directory holding it): %w",
		what, strings.Join(tried, "; "), driver.VendorPathEnv, driver.ErrUnavailable)
}

// go-opencl keeps the OpenCL handle of a CommandQueue, MemObject and Context as their first
// field and exports no accessor, as info.go explains for Platform, Device and Program. The
// checks below fail to compile if the structs change size.
const (
	_ = uint(unsafe.Sizeof(ocl.CommandQueue{}) - unsafe.Sizeof(queueLayout{}))
	_ = uint(unsafe.Sizeof(queueLayout{}) - unsafe.Sizeof(ocl.CommandQueue{}))
	_ = uint(unsafe.Sizeof(ocl.MemObject{}) - unsafe.Sizeof(memLayout{}))
	_ = uint(unsafe.Sizeof(memLayout{}) - unsafe.Sizeof(ocl.MemObject{}))
	_ = uint(unsafe.Sizeof(ocl.Context{}) - unsafe.Sizeof(contextLayout{}))
	_ = uint(unsafe.Sizeof(contextLayout{}) - unsafe.Sizeof(ocl.Context{}))
)

// queueLayout mirrors go-opencl's CommandQueue{clQueue C.cl_command_queue; device *Device}.
type queueLayout struct {
	handle unsafe.Pointer
	device *ocl.Device
}

// contextLayout mirrors go-opencl's Context{clContext C.cl_context; devices []*Device}.
type contextLayout struct {
	handle  unsafe.Pointer
	devices []*ocl.Device
}

// rawQueue returns the cl_command_queue of q.
func rawQueue(q *ocl.CommandQueue) unsafe.Pointer { return (*queueLayout)(unsafe.Pointer(q)).handle }

// rawContext returns the cl_context of c.
func rawContext(c *ocl.Context) unsafe.Pointer { return (*contextLayout)(unsafe.Pointer(c)).handle }

// queueOf returns dq as a queue of this package that is open.
func queueOf(dq driver.Queue) (*queue, error) {
	q, ok := dq.(*queue)
	if !ok || q == nil {
		return nil, fmt.Errorf("cl: queue %T is not an OpenCL queue: %w", dq, driver.ErrInvalidArg)
	}
	return q, q.check()
}

// vendorCalls makes one vendor library call at a time in the process. CLBlast and clFFT
// compile their kernels inside the first call for a device; two such calls at once on
// devices of two platforms (PoCL and Mesa's Rusticl, a split across both) were seen to
// fail inside CLBlast with std::bad_alloc. A call only enqueues once compiled, so the
// lock costs little.
var vendorCalls sync.Mutex

// span enqueues one vendor library call on q, between two markers
// (clEnqueueMarkerWithWaitList on the in-order queue, which profiling timestamps), and
// returns an event whose Elapsed runs from the start of the first marker to the end of the
// second: the whole call, whatever commands the library enqueued for it, which its own
// event (that of its last kernel) does not cover. call receives the raw cl_command_queue;
// it runs holding the device's queue mutex (under queue sharing) and on the context's
// thread (under the thread policy), like every other enqueue of the backend.
//
// The span also counts any time the queue sat idle while the library prepared its work
// on the host, as a kernel's time does not: on a first call, that includes compiling the
// library's kernels. Benchmarks warm up first.
func (q *queue) span(what string, call func(cq unsafe.Pointer) error) (driver.Event, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	var before, after *ocl.Event
	q.lock()
	err := q.th.Call(func() error {
		var err error
		if before, err = q.q.EnqueueMarkerWithWaitList(nil); err != nil {
			before.Release()
			return wrap("clEnqueueMarkerWithWaitList (before "+what+")", err)
		}
		vendorCalls.Lock()
		callErr := call(rawQueue(q.q))
		vendorCalls.Unlock()
		// The second marker goes in even when the call failed, so that the first is
		// released only once the queue is past it.
		after, err = q.q.EnqueueMarkerWithWaitList(nil)
		if err != nil {
			after.Release()
			after = nil
			if callErr == nil {
				callErr = wrap("clEnqueueMarkerWithWaitList (after "+what+")", err)
			}
		}
		return callErr
	})
	q.unlock()
	if err != nil {
		q.th.Do(func() {
			if before != nil {
				before.Release()
			}
			if after != nil {
				after.Release()
			}
		})
		return nil, err
	}
	return &spanEvent{start: q.event(before, "marker before "+what), end: q.event(after, what), what: what}, nil
}

// spanEvent is the completion of a vendor library call: the markers enqueued before and
// after it. It is used by one goroutine at a time.
type spanEvent struct {
	start, end *event
	what       string
}

var _ driver.Event = (*spanEvent)(nil)

// Wait blocks until the call's commands have completed (clWaitForEvents on the second
// marker) or ctx is done.
func (e *spanEvent) Wait(ctx context.Context) error { return e.end.Wait(ctx) }

// Elapsed returns the second marker's CL_PROFILING_COMMAND_END minus the first's
// CL_PROFILING_COMMAND_START.
func (e *spanEvent) Elapsed() (time.Duration, error) {
	start, err := e.start.profile(ocl.ProfilingInfoCommandStart, "CL_PROFILING_COMMAND_START")
	if err != nil {
		return 0, err
	}
	end, err := e.end.profile(ocl.ProfilingInfoCommandEnd, "CL_PROFILING_COMMAND_END")
	if err != nil {
		return 0, err
	}
	return time.Duration(end - start), nil
}

// Close releases both markers once no wait uses them. Idempotent.
func (e *spanEvent) Close() error {
	e.start.Close()
	return e.end.Close()
}

// profile returns one profiling timestamp of the event's command.
func (e *event) profile(info ocl.ProfilingInfo, name string) (int64, error) {
	if err := e.acquire(); err != nil {
		return 0, err
	}
	defer e.drop()
	var v int64
	err := e.th.Call(func() error {
		var err error
		v, err = e.ev.GetEventProfilingInfo(info)
		return wrap("clGetEventProfilingInfo("+e.what+", "+name+")", err)
	})
	return v, err
}
