//go:build !noopencl

package cl

// clFFT (libclFFT.so.2), AMD's OpenCL FFT, loaded with dlopen on first use: its C API
// (clFFT.h of clFFT 2.12) is declared here, so that neither the -dev package nor the
// library is needed to build. Mirrors cuda/fft.go (cuFFT).

/*
#include <stdlib.h>
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

// From clFFT.h.
typedef int clfftStatus;
typedef size_t clfftPlanHandle;
typedef enum { CLFFT_1D = 1, CLFFT_2D, CLFFT_3D } clfftDim;
typedef enum { CLFFT_COMPLEX_INTERLEAVED = 1, CLFFT_COMPLEX_PLANAR, CLFFT_HERMITIAN_INTERLEAVED, CLFFT_HERMITIAN_PLANAR, CLFFT_REAL } clfftLayout;
typedef enum { CLFFT_SINGLE = 1, CLFFT_DOUBLE } clfftPrecision;
typedef enum { CLFFT_FORWARD = -1, CLFFT_BACKWARD = 1 } clfftDirection;
typedef enum { CLFFT_INPLACE = 1, CLFFT_OUTOFPLACE } clfftResultLocation;
typedef struct { cl_uint major, minor, patch; cl_ulong debugFlags; } clfftSetupData;

enum {
	fn_clfftSetup,
	fn_clfftTeardown,
	fn_clfftGetVersion,
	fn_clfftCreateDefaultPlan,
	fn_clfftSetPlanPrecision,
	fn_clfftSetLayout,
	fn_clfftSetResultLocation,
	fn_clfftSetPlanBatchSize,
	fn_clfftSetPlanDistance,
	fn_clfftSetPlanInStride,
	fn_clfftSetPlanOutStride,
	fn_clfftSetPlanScale,
	fn_clfftBakePlan,
	fn_clfftEnqueueTransform,
	fn_clfftDestroyPlan,
	clfft_count
};

// clfft holds the resolved functions, written under the Go loader's lock before any call
// can be made.
static void *clfft[clfft_count];
static void prism_clfft_set(int i, void *f) { clfft[i] = f; }

static clfftStatus prism_clfft_version(cl_uint *major, cl_uint *minor, cl_uint *patch) {
	return ((clfftStatus (*)(cl_uint *, cl_uint *, cl_uint *))clfft[fn_clfftGetVersion])(major, minor, patch);
}

// prism_clfft_setup initializes clFFT, telling it the library's own version (clFFT 2.12
// does not check it) and no debug flags.
static clfftStatus prism_clfft_setup(void) {
	clfftSetupData d = {0, 0, 0, 0};
	prism_clfft_version(&d.major, &d.minor, &d.patch);
	return ((clfftStatus (*)(const clfftSetupData *))clfft[fn_clfftSetup])(&d);
}

static clfftStatus prism_clfft_teardown(void) { return ((clfftStatus (*)(void))clfft[fn_clfftTeardown])(); }

// prism_clfft_plan creates and configures an out-of-place plan; *step names the call that
// failed. lengths and strides are clFFT's: index 0 is the contiguous dimension.
static clfftStatus prism_clfft_plan(clfftPlanHandle *plan, void *context, int dims, size_t *lengths,
	int dbl, int real, size_t *istrides, size_t *ostrides, size_t idist, size_t odist, size_t batch, int *step) {
	clfftStatus st;
	clfftDim dim = dims == 2 ? CLFFT_2D : CLFFT_1D;
	*step = fn_clfftCreateDefaultPlan;
	st = ((clfftStatus (*)(clfftPlanHandle *, cl_context, clfftDim, const size_t *))clfft[fn_clfftCreateDefaultPlan])(
		plan, (cl_context)context, dim, lengths);
	if (st != 0) return st;
	*step = fn_clfftSetPlanPrecision;
	st = ((clfftStatus (*)(clfftPlanHandle, clfftPrecision))clfft[fn_clfftSetPlanPrecision])(*plan, dbl ? CLFFT_DOUBLE : CLFFT_SINGLE);
	if (st != 0) return st;
	*step = fn_clfftSetLayout;
	st = ((clfftStatus (*)(clfftPlanHandle, clfftLayout, clfftLayout))clfft[fn_clfftSetLayout])(*plan,
		real ? CLFFT_REAL : CLFFT_COMPLEX_INTERLEAVED, real ? CLFFT_HERMITIAN_INTERLEAVED : CLFFT_COMPLEX_INTERLEAVED);
	if (st != 0) return st;
	*step = fn_clfftSetResultLocation;
	st = ((clfftStatus (*)(clfftPlanHandle, clfftResultLocation))clfft[fn_clfftSetResultLocation])(*plan, CLFFT_OUTOFPLACE);
	if (st != 0) return st;
	*step = fn_clfftSetPlanInStride;
	st = ((clfftStatus (*)(clfftPlanHandle, clfftDim, size_t *))clfft[fn_clfftSetPlanInStride])(*plan, dim, istrides);
	if (st != 0) return st;
	*step = fn_clfftSetPlanOutStride;
	st = ((clfftStatus (*)(clfftPlanHandle, clfftDim, size_t *))clfft[fn_clfftSetPlanOutStride])(*plan, dim, ostrides);
	if (st != 0) return st;
	*step = fn_clfftSetPlanDistance;
	st = ((clfftStatus (*)(clfftPlanHandle, size_t, size_t))clfft[fn_clfftSetPlanDistance])(*plan, idist, odist);
	if (st != 0) return st;
	*step = fn_clfftSetPlanBatchSize;
	st = ((clfftStatus (*)(clfftPlanHandle, size_t))clfft[fn_clfftSetPlanBatchSize])(*plan, batch);
	if (st != 0) return st;
	// clFFT scales the backward transform by 1/n unless told otherwise; Prism's is
	// unnormalized, as cuFFT's and FFTW's.
	*step = fn_clfftSetPlanScale;
	st = ((clfftStatus (*)(clfftPlanHandle, clfftDirection, cl_float))clfft[fn_clfftSetPlanScale])(*plan, CLFFT_FORWARD, 1.0f);
	if (st != 0) return st;
	st = ((clfftStatus (*)(clfftPlanHandle, clfftDirection, cl_float))clfft[fn_clfftSetPlanScale])(*plan, CLFFT_BACKWARD, 1.0f);
	return st;
}

// prism_clfft_bake compiles the plan's kernels for the device of queue.
static clfftStatus prism_clfft_bake(clfftPlanHandle plan, void *queue) {
	cl_command_queue q = (cl_command_queue)queue;
	return ((clfftStatus (*)(clfftPlanHandle, cl_uint, cl_command_queue *, void *, void *))clfft[fn_clfftBakePlan])(plan, 1, &q, NULL, NULL);
}

static clfftStatus prism_clfft_destroy(clfftPlanHandle plan) {
	return ((clfftStatus (*)(clfftPlanHandle *))clfft[fn_clfftDestroyPlan])(&plan);
}

// prism_clfft_enqueue enqueues the plan's transform on queue, letting clFFT allocate its
// own scratch, and releases the event clFFT returns (the caller times the call itself).
static clfftStatus prism_clfft_enqueue(clfftPlanHandle plan, int inverse, void *queue, void *in, void *out) {
	cl_command_queue q = (cl_command_queue)queue;
	cl_mem i = (cl_mem)in, o = (cl_mem)out;
	cl_event ev = NULL;
	clfftStatus st = ((clfftStatus (*)(clfftPlanHandle, clfftDirection, cl_uint, cl_command_queue *, cl_uint, const cl_event *,
		cl_event *, cl_mem *, cl_mem *, cl_mem))clfft[fn_clfftEnqueueTransform])(
		plan, inverse ? CLFFT_BACKWARD : CLFFT_FORWARD, 1, &q, 0, NULL, &ev, &i, &o, NULL);
	if (ev != NULL) {
		clReleaseEvent(ev);
	}
	return st;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// clfftLibraries are the file names of clFFT, newest ABI first.
var clfftLibraries = []string{"libclFFT.so.2", "libclFFT.so"}

// clfftSymbols are clFFT's functions, in the order of the C table.
var clfftSymbols = []vendorSymbol{
	{"clfftSetup", false},
	{"clfftTeardown", false},
	{"clfftGetVersion", false},
	{"clfftCreateDefaultPlan", false},
	{"clfftSetPlanPrecision", false},
	{"clfftSetLayout", false},
	{"clfftSetResultLocation", false},
	{"clfftSetPlanBatchSize", false},
	{"clfftSetPlanDistance", false},
	{"clfftSetPlanInStride", false},
	{"clfftSetPlanOutStride", false},
	{"clfftSetPlanScale", false},
	{"clfftBakePlan", false},
	{"clfftEnqueueTransform", false},
	{"clfftDestroyPlan", false},
}

// clfftStepNames name the calls of prism_clfft_plan by their index in the C table.
var clfftStepNames = func() map[C.int]string {
	m := map[C.int]string{}
	for i, s := range clfftSymbols {
		m[C.int(i)] = s.name
	}
	return m
}()

// clfftState is the process's clFFT: loaded once (a failure is tried again), set up by
// the first handle (clfftSetup) and torn down by the last one to close (clfftTeardown,
// which releases the programs clFFT caches and the contexts they hold). run serializes
// clfftEnqueueTransform across the process: clFFT shares one cl_kernel among the plans of
// one shape and sets its arguments at every call, and clSetKernelArg on one kernel is not
// thread-safe.
var clfftState struct {
	mu      sync.Mutex
	lib     *vendorLib
	version string
	open    int
	run     sync.Mutex
}

var _ driver.FFTProvider = (*device)(nil)

// FFT loads clFFT (on the first call in the process), sets it up if no handle is open,
// and returns a handle on it for the device. Without the library the error wraps
// driver.ErrUnavailable and names every file tried.
func (d *device) FFT() (driver.FFT, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	clfftState.mu.Lock()
	defer clfftState.mu.Unlock()
	if clfftState.lib == nil {
		lib, err := loadVendor("clFFT", clfftLibraries, clfftSymbols)
		if err != nil {
			return nil, err
		}
		for i, f := range lib.fns {
			C.prism_clfft_set(C.int(i), f)
		}
		var major, minor, patch C.cl_uint
		if st := FFTStatus(C.prism_clfft_version(&major, &minor, &patch)); st != 0 {
			return nil, checkCLFFT("clfftGetVersion", st)
		}
		clfftState.lib, clfftState.version = lib, fmt.Sprintf("%d.%d.%d", major, minor, patch)
	}
	if clfftState.open == 0 {
		var st C.clfftStatus
		d.c.thread.Do(func() { st = C.prism_clfft_setup() })
		if err := checkCLFFT("clfftSetup", FFTStatus(st)); err != nil {
			return nil, err
		}
	}
	clfftState.open++
	return &fft{d: d, lib: driver.Library{Name: "clFFT", Version: clfftState.version, Path: clfftState.lib.path}}, nil
}

// fft is a handle on clFFT for one device. It is safe for concurrent use.
type fft struct {
	d      *device
	lib    driver.Library
	mu     sync.Mutex
	closed bool
}

var _ driver.FFT = (*fft)(nil)

// Library returns clFFT's name, version and path.
func (f *fft) Library() driver.Library { return f.lib }

// Plan creates a clFFT plan in the device's context (clfftCreateDefaultPlan), sets its
// precision, layout (complex interleaved, or real to Hermitian interleaved), out-of-place
// result, strides, distances, batch and a scale of 1 in both directions, then bakes it
// for the device (clfftBakePlan on one of its queues), which compiles its kernels.
func (f *fft) Plan(s driver.FFTSpec) (driver.FFTPlan, error) {
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return nil, errClosed("clFFT handle")
	}
	if s.Type != driver.Float32 && s.Type != driver.Float64 {
		return nil, fmt.Errorf("cl: clFFT plan of %v: %w", s.Type, driver.ErrUnsupported)
	}
	l := clfftLayoutOf(s)
	var (
		plan C.clfftPlanHandle
		step C.int
	)
	dbl, isReal := C.int(0), C.int(0)
	if s.Type == driver.Float64 {
		dbl = 1
	}
	if s.Kind == driver.R2C {
		isReal = 1
	}
	sizes := func(v []int) *C.size_t {
		p := (*C.size_t)(C.calloc(C.size_t(len(v)), C.size_t(unsafe.Sizeof(C.size_t(0)))))
		for i, x := range v {
			unsafe.Slice(p, len(v))[i] = C.size_t(x)
		}
		return p
	}
	lengths, istrides, ostrides := sizes(l.lengths), sizes(l.inStrides), sizes(l.outStrides)
	defer C.free(unsafe.Pointer(lengths))
	defer C.free(unsafe.Pointer(istrides))
	defer C.free(unsafe.Pointer(ostrides))
	ctx := rawContext(f.d.c.ctx)
	var st C.clfftStatus
	f.d.c.thread.Do(func() {
		st = C.prism_clfft_plan(&plan, ctx, C.int(len(l.lengths)), lengths, dbl, isReal, istrides, ostrides,
			C.size_t(l.inDist), C.size_t(l.outDist), C.size_t(s.Batch), &step)
	})
	if st != 0 {
		if step != C.fn_clfftCreateDefaultPlan {
			f.d.c.thread.Do(func() { C.prism_clfft_destroy(plan) })
		}
		return nil, checkCLFFT(fmt.Sprintf("%s(%v %v %v batch %d)", clfftStepNames[step], s.Kind, s.Type, s.Shape, s.Batch), FFTStatus(st))
	}
	p := &fftPlan{f: f, plan: plan, inverse: s.Inverse, what: fmt.Sprintf("clfftEnqueueTransform(%v %v %v batch %d)", s.Kind, s.Type, s.Shape, s.Batch)}
	if err := p.bake(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// clfftLayout is a plan's geometry in clFFT's terms: dimension 0 is the contiguous one.
type clfftLayout struct {
	lengths, inStrides, outStrides []int
	inDist, outDist                int // elements (real or complex) between transforms
}

// clfftLayoutOf translates a spec's row-major shape: the lengths reversed, packed strides,
// and for R2C an output whose contiguous dimension holds n/2+1 complex elements.
func clfftLayoutOf(s driver.FFTSpec) clfftLayout {
	var l clfftLayout
	for i := len(s.Shape) - 1; i >= 0; i-- {
		l.lengths = append(l.lengths, s.Shape[i])
	}
	outFast := l.lengths[0]
	if s.Kind == driver.R2C {
		outFast = l.lengths[0]/2 + 1
	}
	l.inStrides, l.outStrides = []int{1}, []int{1}
	l.inDist, l.outDist = l.lengths[0], outFast
	if len(l.lengths) == 2 {
		l.inStrides = append(l.inStrides, l.lengths[0])
		l.outStrides = append(l.outStrides, outFast)
		l.inDist *= l.lengths[1]
		l.outDist *= l.lengths[1]
	}
	return l
}

// Close releases the handle; the last handle of the process to close tears clFFT down
// (clfftTeardown). engine has closed the handle's plans first. Idempotent.
func (f *fft) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	clfftState.mu.Lock()
	defer clfftState.mu.Unlock()
	clfftState.open--
	if clfftState.open > 0 {
		return nil
	}
	var st C.clfftStatus
	f.d.c.thread.Do(func() { st = C.prism_clfft_teardown() })
	return checkCLFFT("clfftTeardown", FFTStatus(st))
}

// fftPlan is a baked clFFT plan. It is safe for concurrent use, but runs of one plan
// share its scratch buffer and must not overlap on the device.
type fftPlan struct {
	f       *fft
	plan    C.clfftPlanHandle
	inverse bool
	what    string
	mu      sync.Mutex
	closed  bool
}

var _ driver.FFTPlan = (*fftPlan)(nil)

// bake compiles the plan for the device (clfftBakePlan), on a queue of the device used
// for nothing else: clFFT only asks it for its device.
func (p *fftPlan) bake() error {
	dq, err := p.f.d.NewQueue()
	if err != nil {
		return err
	}
	defer dq.Close()
	q := dq.(*queue)
	var st C.clfftStatus
	release := captureDriverStderr() // the compiler's own output goes to the trace
	q.lock()
	q.th.Do(func() { st = C.prism_clfft_bake(p.plan, rawQueue(q.q)) })
	q.unlock()
	release()
	return checkCLFFT("clfftBakePlan", FFTStatus(st))
}

// Run enqueues clfftEnqueueTransform from in to out on q (forward, or backward for an
// inverse plan). The event spans the whole call (see queue.span).
func (p *fftPlan) Run(dq driver.Queue, in, out driver.Buffer) (driver.Event, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errClosed("clFFT plan")
	}
	q, err := queueOf(dq)
	if err != nil {
		return nil, err
	}
	ib, err := asBuffer(in)
	if err != nil {
		return nil, err
	}
	ob, err := asBuffer(out)
	if err != nil {
		return nil, err
	}
	inv := cbool(p.inverse)
	clfftState.run.Lock()
	defer clfftState.run.Unlock()
	return q.span(p.what, func(cq unsafe.Pointer) error {
		st := C.prism_clfft_enqueue(p.plan, inv, cq, unsafe.Pointer(rawMem(ib.mem)), unsafe.Pointer(rawMem(ob.mem)))
		return checkCLFFT(p.what, FFTStatus(st))
	})
}

// Close destroys the plan (clfftDestroyPlan). Idempotent.
func (p *fftPlan) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var st C.clfftStatus
	p.f.d.c.thread.Do(func() { st = C.prism_clfft_destroy(p.plan) })
	return checkCLFFT("clfftDestroyPlan", FFTStatus(st))
}

// FFTStatus is a clFFT status code (clfftStatus): an OpenCL status, or one of clFFT's own
// (from 4096 up). Its Error method gives the name from clFFT.h; errors.Is matches it
// against the engine sentinels, OpenCL codes as Status does.
type FFTStatus int32

// clFFT's own status codes (clFFT.h); the others are OpenCL's (Status).
const (
	FFTBugCheck                 FFTStatus = 4096
	FFTNotImplemented           FFTStatus = 4097
	FFTTransposedNotImplemented FFTStatus = 4098
	FFTFileNotFound             FFTStatus = 4099
	FFTFileCreateFailure        FFTStatus = 4100
	FFTVersionMismatch          FFTStatus = 4101
	FFTInvalidPlan              FFTStatus = 4102
	FFTDeviceNoDouble           FFTStatus = 4103
	FFTDeviceMismatch           FFTStatus = 4104
)

var fftStatusNames = map[FFTStatus]string{
	FFTBugCheck:                 "CLFFT_BUGCHECK",
	FFTNotImplemented:           "CLFFT_NOTIMPLEMENTED",
	FFTTransposedNotImplemented: "CLFFT_TRANSPOSED_NOTIMPLEMENTED",
	FFTFileNotFound:             "CLFFT_FILE_NOT_FOUND",
	FFTFileCreateFailure:        "CLFFT_FILE_CREATE_FAILURE",
	FFTVersionMismatch:          "CLFFT_VERSION_MISMATCH",
	FFTInvalidPlan:              "CLFFT_INVALID_PLAN",
	FFTDeviceNoDouble:           "CLFFT_DEVICE_NO_DOUBLE",
	FFTDeviceMismatch:           "CLFFT_DEVICE_MISMATCH",
}

// Error returns the code's name and value, "CLFFT_NOTIMPLEMENTED (4097)"; an OpenCL code
// is named as Status names it.
func (s FFTStatus) Error() string {
	if n, ok := fftStatusNames[s]; ok {
		return fmt.Sprintf("%s (%d)", n, int32(s))
	}
	return Status(s).Error()
}

// Is reports whether s stands for target: a length clFFT cannot factor (radices 2, 3, 5,
// 7, 11, 13), a transposed layout or a device without fp64 for driver.ErrUnsupported; an
// invalid plan for driver.ErrInvalidArg; an OpenCL code as Status.Is.
func (s FFTStatus) Is(target error) bool {
	if _, own := fftStatusNames[s]; !own {
		return Status(s).Is(target)
	}
	switch target {
	case driver.ErrUnsupported:
		return s == FFTNotImplemented || s == FFTTransposedNotImplemented || s == FFTDeviceNoDouble
	case driver.ErrInvalidArg:
		return s == FFTInvalidPlan || s == FFTDeviceMismatch
	}
	return false
}

// checkCLFFT names the failing clFFT call; success (0) gives nil.
func checkCLFFT(call string, s FFTStatus) error {
	if s == 0 {
		return nil
	}
	return fmt.Errorf("cl: %s: %w", call, s)
}
