package cuda

// cuFFT (libcufft.so.12, .11 or .10), loaded with dlopen on first use: the functions below
// are declared here from cufft.h, so that no CUDA toolkit is needed to build. Mirrors
// cl/fft.go (clFFT).

/*
#include <stdint.h>
#include <stdlib.h>

typedef int cufftResult;
typedef int cufftHandle;
typedef void *cudaStream_t; // the driver API's CUstream: the two are interchangeable

enum {
	fn_cufftCreate,
	fn_cufftMakePlanMany,
	fn_cufftSetStream,
	fn_cufftExecC2C,
	fn_cufftExecZ2Z,
	fn_cufftExecR2C,
	fn_cufftExecD2Z,
	fn_cufftDestroy,
	fn_cufftGetVersion,
	fn_cufftGetProperty,
	cufft_count
};

// cufft holds the resolved functions, written under the Go loader's lock before any call
// can be made.
static void *cufft[cufft_count];
static void prism_cufft_set(int i, void *f) { cufft[i] = f; }
static int prism_cufft_have(int i) { return cufft[i] != NULL; }

static cufftResult prism_cufft_get_property(int type, int *v) {
	return ((cufftResult (*)(int, int *))cufft[fn_cufftGetProperty])(type, v);
}

static cufftResult prism_cufft_version(int *v) { return ((cufftResult (*)(int *))cufft[fn_cufftGetVersion])(v); }

// prism_cufft_plan creates a plan (cufftCreate) and makes it (cufftMakePlanMany) for
// batch transforms of rank 1 (n0) or 2 (n0 x n1, row-major) in the basic layout: inembed
// and onembed NULL, so that strides and distances are those of contiguous, packed data
// (for R2C, n real points in and n0 x (n1/2+1) complex points out). cuFFT allocates the
// plan's work area. *step is the index of the call that failed.
static cufftResult prism_cufft_plan(cufftHandle *plan, int rank, int n0, int n1, int type, int batch, size_t *work, int *step) {
	cufftResult st;
	int n[2] = {n0, n1};
	*step = fn_cufftCreate;
	st = ((cufftResult (*)(cufftHandle *))cufft[fn_cufftCreate])(plan);
	if (st != 0) return st;
	*step = fn_cufftMakePlanMany;
	return ((cufftResult (*)(cufftHandle, int, int *, int *, int, int, int *, int, int, int, int, size_t *))cufft[fn_cufftMakePlanMany])(
		*plan, rank, n, NULL, 1, 0, NULL, 1, 0, type, batch, work);
}

static cufftResult prism_cufft_destroy(cufftHandle plan) { return ((cufftResult (*)(cufftHandle))cufft[fn_cufftDestroy])(plan); }

// prism_cufft_exec binds the plan to the stream (cufftSetStream), then executes the
// transform of the plan's type: exec is the index of cufftExecC2C, Z2Z, R2C or D2Z, dir
// CUFFT_FORWARD (-1) or CUFFT_INVERSE (1) for the complex ones. *step is the index of the
// call that failed.
static cufftResult prism_cufft_exec(cufftHandle plan, void *stream, int exec, int dir, unsigned long long in,
	unsigned long long out, int *step) {
	cufftResult st;
	void *i = (void *)(uintptr_t)in, *o = (void *)(uintptr_t)out;
	*step = fn_cufftSetStream;
	st = ((cufftResult (*)(cufftHandle, cudaStream_t))cufft[fn_cufftSetStream])(plan, (cudaStream_t)stream);
	if (st != 0) return st;
	*step = exec;
	switch (exec) {
	case fn_cufftExecC2C:
	case fn_cufftExecZ2Z:
		return ((cufftResult (*)(cufftHandle, void *, void *, int))cufft[exec])(plan, i, o, dir);
	case fn_cufftExecR2C:
	case fn_cufftExecD2Z:
		return ((cufftResult (*)(cufftHandle, void *, void *))cufft[exec])(plan, i, o);
	}
	return 4; // CUFFT_INVALID_VALUE
}
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// cufftLibraries are the file names of cuFFT, newest first (CUDA 13, 12, 11).
var cufftLibraries = []string{"libcufft.so.12", "libcufft.so.11", "libcufft.so.10"}

// cufftSymbols are cuFFT's functions, in the order of the C table.
var cufftSymbols = []vendorSymbol{
	{"cufftCreate", false},
	{"cufftMakePlanMany", false},
	{"cufftSetStream", false},
	{"cufftExecC2C", false},
	{"cufftExecZ2Z", false},
	{"cufftExecR2C", false},
	{"cufftExecD2Z", false},
	{"cufftDestroy", false},
	{"cufftGetVersion", false},
	{"cufftGetProperty", true},
}

// cufftState is the process's cuFFT, loaded once (a failure is tried again).
var cufftState struct {
	mu      sync.Mutex
	lib     *vendorLib
	version string
}

var _ driver.FFTProvider = (*device)(nil)

// FFT loads cuFFT (on the first call in the process) and returns a handle on it for the
// device. Without the library the error wraps driver.ErrUnavailable and names every file
// tried.
func (d *device) FFT() (driver.FFT, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	cufftState.mu.Lock()
	defer cufftState.mu.Unlock()
	if cufftState.lib == nil {
		lib, err := loadVendor("cuFFT", cufftLibraries, cufftSymbols, nil)
		if err != nil {
			return nil, err
		}
		for i, f := range lib.fns {
			C.prism_cufft_set(C.int(i), f)
		}
		if C.prism_cufft_have(C.fn_cufftGetProperty) != 0 {
			cufftState.version = propertyVersion(func(p int) (int, bool) {
				var v C.int
				ok := C.prism_cufft_get_property(C.int(p), &v) == 0
				return int(v), ok
			})
		}
		if cufftState.version == "" {
			var v C.int
			if err := checkFFT("cufftGetVersion", FFTResult(C.prism_cufft_version(&v))); err != nil {
				return nil, err
			}
			cufftState.version = cufftVersionString(int(v))
		}
		cufftState.lib = lib
	}
	return &fft{d: d, lib: driver.Library{Name: "cuFFT", Version: cufftState.version, Path: cufftState.lib.path}}, nil
}

// cufftVersionString formats cufftGetVersion's number, major*1000 + minor*100 + patch.
func cufftVersionString(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/1000, v%1000/100, v%100)
}

// fft is cuFFT for one device. cuFFT keeps no state beyond its plans, each made in the
// device's context on its thread. It is safe for concurrent use.
type fft struct {
	d      *device
	lib    driver.Library
	mu     sync.Mutex
	closed bool
}

var _ driver.FFT = (*fft)(nil)

// Library returns cuFFT's name, version (cufftGetProperty) and path.
func (f *fft) Library() driver.Library { return f.lib }

// Plan makes a cuFFT plan (cufftCreate, cufftMakePlanMany) on the device's thread: see
// cufftPlanOf for its arguments. cuFFT allocates the plan's work area in the device's
// context.
func (f *fft) Plan(s driver.FFTSpec) (driver.FFTPlan, error) {
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return nil, errClosed("cuFFT handle")
	}
	a, err := cufftPlanOf(s)
	if err != nil {
		return nil, err
	}
	p := &fftPlan{d: f.d, args: a, what: fmt.Sprintf("%s(%v %v %v batch %d)", cufftSymbols[a.exec].name, s.Kind, s.Type, s.Shape, s.Batch)}
	err = f.d.th.Call(func() error {
		var (
			work C.size_t
			step C.int
		)
		st := FFTResult(C.prism_cufft_plan(&p.plan, C.int(a.rank), C.int(a.n[0]), C.int(a.n[1]), C.int(a.typ), C.int(a.batch), &work, &step))
		if st != FFTSuccess {
			if step != C.fn_cufftCreate {
				C.prism_cufft_destroy(p.plan)
			}
			return checkFFT(fmt.Sprintf("%s(%v %v %v batch %d)", cufftSymbols[int(step)].name, s.Kind, s.Type, s.Shape, s.Batch), st)
		}
		p.work = int64(work)
		return nil
	})
	if err != nil {
		return nil, err
	}
	tracef("cuFFT plan %v %v %v batch %d: work area %d bytes", s.Kind, s.Type, s.Shape, s.Batch, p.work)
	return p, nil
}

// Close releases the handle; engine has closed its plans. Idempotent.
func (f *fft) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// Indexes of the cufftExec functions in cufftSymbols (and the C table).
const (
	execC2C = C.fn_cufftExecC2C
	execZ2Z = C.fn_cufftExecZ2Z
	execR2C = C.fn_cufftExecR2C
	execD2Z = C.fn_cufftExecD2Z
)

// cuFFT transform types (cufftType) and directions.
const (
	cufftR2C     = 0x2a
	cufftC2C     = 0x29
	cufftD2Z     = 0x6a
	cufftZ2Z     = 0x69
	cufftForward = -1
	cufftInverse = 1
)

// cufftPlan is what a plan is made and executed with.
type cufftPlan struct {
	rank  int
	n     [2]int // row-major dimensions: n[0] the slowest, as cufftMakePlanMany takes them
	typ   int    // cufftType
	batch int
	exec  int // index in cufftSymbols of the cufftExec function
	dir   int // cufftForward or cufftInverse (complex transforms only)
}

// cufftPlanOf maps a spec to cuFFT's terms: the row-major shape as it is (cuFFT's n[0] is
// the slowest dimension too), the type from the kind and precision (C2C, Z2Z, R2C, D2Z),
// the direction, and the basic layout, which is exactly the engine's (contiguous
// transforms; an R2C output of n/2+1 complex points in the last dimension). cuFFT takes
// dimensions and the batch as 32-bit ints: larger ones give driver.ErrUnsupported.
func cufftPlanOf(s driver.FFTSpec) (cufftPlan, error) {
	var a cufftPlan
	if len(s.Shape) < 1 || len(s.Shape) > 2 {
		return a, fmt.Errorf("cuda: cuFFT plan of %d dimensions: %w", len(s.Shape), driver.ErrUnsupported)
	}
	a.rank, a.batch = len(s.Shape), s.Batch
	total := float64(s.Batch)
	for i, d := range s.Shape {
		a.n[i] = d
		total *= float64(d)
	}
	if a.batch > math.MaxInt32 || a.n[0] > math.MaxInt32 || a.n[1] > math.MaxInt32 || total > math.MaxInt32 {
		return a, fmt.Errorf("cuda: cuFFT plan of %v batch %d exceeds the 32-bit sizes of cufftMakePlanMany: %w", s.Shape, s.Batch, driver.ErrUnsupported)
	}
	dbl := s.Type == driver.Float64
	if s.Type != driver.Float32 && !dbl {
		return a, fmt.Errorf("cuda: cuFFT plan of %v: %w", s.Type, driver.ErrUnsupported)
	}
	switch {
	case s.Kind == driver.C2C && !dbl:
		a.typ, a.exec = cufftC2C, execC2C
	case s.Kind == driver.C2C:
		a.typ, a.exec = cufftZ2Z, execZ2Z
	case s.Kind == driver.R2C && !s.Inverse && !dbl:
		a.typ, a.exec = cufftR2C, execR2C
	case s.Kind == driver.R2C && !s.Inverse:
		a.typ, a.exec = cufftD2Z, execD2Z
	default:
		return a, fmt.Errorf("cuda: cuFFT plan of kind %v (inverse %v): %w", s.Kind, s.Inverse, driver.ErrUnsupported)
	}
	a.dir = cufftForward
	if s.Inverse {
		a.dir = cufftInverse
	}
	return a, nil
}

// fftPlan is a cuFFT plan. It is safe for concurrent use, but runs of one plan share its
// work area and must not overlap on the device.
type fftPlan struct {
	d      *device
	plan   C.cufftHandle
	args   cufftPlan
	work   int64 // bytes of the work area cuFFT allocated
	what   string
	mu     sync.Mutex
	closed bool
}

var _ driver.FFTPlan = (*fftPlan)(nil)

// Run binds the plan to the queue's stream (cufftSetStream) and executes it from in to
// out (cufftExecC2C, Z2Z, R2C or D2Z). The event spans the whole call: the queue's timing
// events are recorded on the stream before and after it.
func (p *fftPlan) Run(dq driver.Queue, in, out driver.Buffer) (driver.Event, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errClosed("cuFFT plan")
	}
	q, ok := dq.(*queue)
	if !ok || q == nil {
		return nil, fmt.Errorf("cuda: queue %T is not a CUDA queue: %w", dq, driver.ErrInvalidArg)
	}
	ib, err := asBuffer(in)
	if err != nil {
		return nil, err
	}
	ob, err := asBuffer(out)
	if err != nil {
		return nil, err
	}
	return q.command(p.what, func() error {
		var step C.int
		st := FFTResult(C.prism_cufft_exec(p.plan, unsafe.Pointer(q.stream), C.int(p.args.exec), C.int(p.args.dir),
			C.ulonglong(ib.ptr), C.ulonglong(ob.ptr), &step))
		if st == FFTSuccess {
			return nil
		}
		call := p.what
		if step == C.fn_cufftSetStream {
			call = "cufftSetStream"
		}
		return checkFFT(call, st)
	})
}

// Close destroys the plan (cufftDestroy) on the device's thread, which frees its work
// area. Idempotent.
func (p *fftPlan) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return p.d.th.Call(func() error {
		return checkFFT("cufftDestroy", FFTResult(C.prism_cufft_destroy(p.plan)))
	})
}

// FFTResult is a cuFFT status code (cufftResult). Its Error method gives the name from
// cufft.h; errors.Is matches it against the engine sentinels (see Is).
type FFTResult int

// cuFFT status codes (cufft.h).
const (
	FFTSuccess                 FFTResult = 0
	FFTInvalidPlan             FFTResult = 1
	FFTAllocFailed             FFTResult = 2
	FFTInvalidType             FFTResult = 3
	FFTInvalidValue            FFTResult = 4
	FFTInternalError           FFTResult = 5
	FFTExecFailed              FFTResult = 6
	FFTSetupFailed             FFTResult = 7
	FFTInvalidSize             FFTResult = 8
	FFTUnalignedData           FFTResult = 9
	FFTIncompleteParameterList FFTResult = 10
	FFTInvalidDevice           FFTResult = 11
	FFTParseError              FFTResult = 12
	FFTNoWorkspace             FFTResult = 13
	FFTNotImplemented          FFTResult = 14
	FFTLicenseError            FFTResult = 15
	FFTNotSupported            FFTResult = 16
	FFTMissingDependency       FFTResult = 17
	FFTNVRTCFailure            FFTResult = 18
	FFTNVJitLinkFailure        FFTResult = 19
	FFTNVSHMEMFailure          FFTResult = 20
)

var fftResultNames = map[FFTResult]string{
	FFTSuccess:                 "CUFFT_SUCCESS",
	FFTInvalidPlan:             "CUFFT_INVALID_PLAN",
	FFTAllocFailed:             "CUFFT_ALLOC_FAILED",
	FFTInvalidType:             "CUFFT_INVALID_TYPE",
	FFTInvalidValue:            "CUFFT_INVALID_VALUE",
	FFTInternalError:           "CUFFT_INTERNAL_ERROR",
	FFTExecFailed:              "CUFFT_EXEC_FAILED",
	FFTSetupFailed:             "CUFFT_SETUP_FAILED",
	FFTInvalidSize:             "CUFFT_INVALID_SIZE",
	FFTUnalignedData:           "CUFFT_UNALIGNED_DATA",
	FFTIncompleteParameterList: "CUFFT_INCOMPLETE_PARAMETER_LIST",
	FFTInvalidDevice:           "CUFFT_INVALID_DEVICE",
	FFTParseError:              "CUFFT_PARSE_ERROR",
	FFTNoWorkspace:             "CUFFT_NO_WORKSPACE",
	FFTNotImplemented:          "CUFFT_NOT_IMPLEMENTED",
	FFTLicenseError:            "CUFFT_LICENSE_ERROR",
	FFTNotSupported:            "CUFFT_NOT_SUPPORTED",
	FFTMissingDependency:       "CUFFT_MISSING_DEPENDENCY",
	FFTNVRTCFailure:            "CUFFT_NVRTC_FAILURE",
	FFTNVJitLinkFailure:        "CUFFT_NVJITLINK_FAILURE",
	FFTNVSHMEMFailure:          "CUFFT_NVSHMEM_FAILURE",
}

// Error returns the code's name from cufft.h, or "cufftResult(N)".
func (r FFTResult) Error() string {
	if n, ok := fftResultNames[r]; ok {
		return n
	}
	return fmt.Sprintf("cufftResult(%d)", int(r))
}

// Is reports whether r stands for target: a failed allocation for driver.ErrOutOfMemory;
// an invalid plan, type, value or size for driver.ErrInvalidArg; a library that could not
// set up, or a missing dependency, for driver.ErrUnavailable; an unimplemented or
// unsupported transform for driver.ErrUnsupported.
func (r FFTResult) Is(target error) bool {
	switch target {
	case driver.ErrOutOfMemory:
		return r == FFTAllocFailed
	case driver.ErrInvalidArg:
		return r == FFTInvalidPlan || r == FFTInvalidType || r == FFTInvalidValue || r == FFTInvalidSize ||
			r == FFTUnalignedData || r == FFTInvalidDevice
	case driver.ErrUnavailable:
		return r == FFTSetupFailed || r == FFTMissingDependency
	case driver.ErrUnsupported:
		return r == FFTNotImplemented || r == FFTNotSupported || r == FFTLicenseError
	}
	return false
}

// checkFFT names the failing cuFFT call: "cuda: cufftExecC2C(c2c float32 [1024] batch 4):
// CUFFT_EXEC_FAILED". Success gives nil.
func checkFFT(call string, r FFTResult) error {
	if r == FFTSuccess {
		return nil
	}
	return &contextError{context: call, err: r}
}
