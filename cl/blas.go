//go:build !noopencl

package cl

// CLBlast (libclblast.so.1), the tuned OpenCL BLAS, loaded with dlopen on first use: its
// C API (clblast_c.h of CLBlast 1.5 and 1.6) is declared here, so that neither the -dev
// package nor the library is needed to build. Mirrors cuda/blas.go (cuBLAS).

/*
#include <stdlib.h>
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

// From clblast_c.h.
typedef int CLBlastStatusCode;
typedef enum CLBlastLayout_ { CLBlastLayoutRowMajor = 101, CLBlastLayoutColMajor = 102 } CLBlastLayout;
typedef enum CLBlastTranspose_ { CLBlastTransposeNo = 111, CLBlastTransposeYes = 112 } CLBlastTranspose;

enum {
	fn_CLBlastSgemm,
	fn_CLBlastDgemm,
	fn_CLBlastSgemmStridedBatched,
	fn_CLBlastDgemmStridedBatched,
	fn_CLBlastClearCache,
	fn_CLBlastSaxpy,
	fn_CLBlastDaxpy,
	fn_CLBlastSdot,
	fn_CLBlastDdot,
	fn_CLBlastSsum,
	fn_CLBlastDsum,
	clblast_count
};

// clblast holds the resolved functions, written under the Go loader's lock before any
// call can be made.
static void *clblast[clblast_count];
static void prism_clblast_set(int i, void *f) { clblast[i] = f; }

typedef CLBlastStatusCode (*sgemm_fn)(CLBlastLayout, CLBlastTranspose, CLBlastTranspose, size_t, size_t, size_t,
	float, cl_mem, size_t, size_t, cl_mem, size_t, size_t, float, cl_mem, size_t, size_t, cl_command_queue *, cl_event *);
typedef CLBlastStatusCode (*dgemm_fn)(CLBlastLayout, CLBlastTranspose, CLBlastTranspose, size_t, size_t, size_t,
	double, cl_mem, size_t, size_t, cl_mem, size_t, size_t, double, cl_mem, size_t, size_t, cl_command_queue *, cl_event *);
typedef CLBlastStatusCode (*sgemm_strided_fn)(CLBlastLayout, CLBlastTranspose, CLBlastTranspose, size_t, size_t, size_t,
	float, cl_mem, size_t, size_t, size_t, cl_mem, size_t, size_t, size_t, float, cl_mem, size_t, size_t, size_t, size_t,
	cl_command_queue *, cl_event *);
typedef CLBlastStatusCode (*dgemm_strided_fn)(CLBlastLayout, CLBlastTranspose, CLBlastTranspose, size_t, size_t, size_t,
	double, cl_mem, size_t, size_t, size_t, cl_mem, size_t, size_t, size_t, double, cl_mem, size_t, size_t, size_t, size_t,
	cl_command_queue *, cl_event *);

// prism_clblast_gemm calls the GEMM of the precision (dbl) and form (batch > 1: strided
// batched) asked, row-major, buffer offsets 0, without an event of its own.
static CLBlastStatusCode prism_clblast_gemm(int dbl, int ta, int tb, size_t m, size_t n, size_t k,
	double alpha, void *a, size_t lda, size_t sa, void *b, size_t ldb, size_t sb,
	double beta, void *c, size_t ldc, size_t sc, size_t batch, void *queue) {
	cl_command_queue q = (cl_command_queue)queue;
	CLBlastTranspose tra = ta ? CLBlastTransposeYes : CLBlastTransposeNo;
	CLBlastTranspose trb = tb ? CLBlastTransposeYes : CLBlastTransposeNo;
	CLBlastLayout l = CLBlastLayoutRowMajor;
	cl_mem am = (cl_mem)a, bm = (cl_mem)b, cm = (cl_mem)c;
	if (batch > 1) {
		if (dbl) {
			return ((dgemm_strided_fn)clblast[fn_CLBlastDgemmStridedBatched])(l, tra, trb, m, n, k,
				alpha, am, 0, lda, sa, bm, 0, ldb, sb, beta, cm, 0, ldc, sc, batch, &q, NULL);
		}
		return ((sgemm_strided_fn)clblast[fn_CLBlastSgemmStridedBatched])(l, tra, trb, m, n, k,
			(float)alpha, am, 0, lda, sa, bm, 0, ldb, sb, (float)beta, cm, 0, ldc, sc, batch, &q, NULL);
	}
	if (dbl) {
		return ((dgemm_fn)clblast[fn_CLBlastDgemm])(l, tra, trb, m, n, k, alpha, am, 0, lda, bm, 0, ldb, beta, cm, 0, ldc, &q, NULL);
	}
	return ((sgemm_fn)clblast[fn_CLBlastSgemm])(l, tra, trb, m, n, k, (float)alpha, am, 0, lda, bm, 0, ldb, (float)beta, cm, 0, ldc, &q, NULL);
}

// prism_clblast_axpy calls CLBlastSaxpy or CLBlastDaxpy: y = alpha*x + y, unit strides,
// offsets 0; -1024 (CLBlastNotImplemented) where the library lacks the routine.
static CLBlastStatusCode prism_clblast_axpy(int dbl, size_t n, double alpha, void *x, void *y, void *queue) {
	cl_command_queue q = (cl_command_queue)queue;
	if (dbl) {
		if (clblast[fn_CLBlastDaxpy] == NULL) return -1024;
		return ((CLBlastStatusCode (*)(size_t, double, cl_mem, size_t, size_t, cl_mem, size_t, size_t, cl_command_queue *, cl_event *))
			clblast[fn_CLBlastDaxpy])(n, alpha, (cl_mem)x, 0, 1, (cl_mem)y, 0, 1, &q, NULL);
	}
	if (clblast[fn_CLBlastSaxpy] == NULL) return -1024;
	return ((CLBlastStatusCode (*)(size_t, float, cl_mem, size_t, size_t, cl_mem, size_t, size_t, cl_command_queue *, cl_event *))
		clblast[fn_CLBlastSaxpy])(n, (float)alpha, (cl_mem)x, 0, 1, (cl_mem)y, 0, 1, &q, NULL);
}

// prism_clblast_dot calls CLBlastSdot or CLBlastDdot: out[0] = x . y, unit strides.
static CLBlastStatusCode prism_clblast_dot(int dbl, size_t n, void *out, void *x, void *y, void *queue) {
	cl_command_queue q = (cl_command_queue)queue;
	int fn = dbl ? fn_CLBlastDdot : fn_CLBlastSdot;
	if (clblast[fn] == NULL) return -1024;
	return ((CLBlastStatusCode (*)(size_t, cl_mem, size_t, cl_mem, size_t, size_t, cl_mem, size_t, size_t, cl_command_queue *, cl_event *))
		clblast[fn])(n, (cl_mem)out, 0, (cl_mem)x, 0, 1, (cl_mem)y, 0, 1, &q, NULL);
}

// prism_clblast_sum calls CLBlastSsum or CLBlastDsum: out[0] = the sum of x (CLBlast's
// non-absolute counterpart of xASUM), unit stride.
static CLBlastStatusCode prism_clblast_sum(int dbl, size_t n, void *out, void *x, void *queue) {
	cl_command_queue q = (cl_command_queue)queue;
	int fn = dbl ? fn_CLBlastDsum : fn_CLBlastSsum;
	if (clblast[fn] == NULL) return -1024;
	return ((CLBlastStatusCode (*)(size_t, cl_mem, size_t, cl_mem, size_t, size_t, cl_command_queue *, cl_event *))
		clblast[fn])(n, (cl_mem)out, 0, (cl_mem)x, 0, 1, &q, NULL);
}

static CLBlastStatusCode prism_clblast_clear_cache(void) {
	if (clblast[fn_CLBlastClearCache] == NULL) {
		return 0;
	}
	return ((CLBlastStatusCode (*)(void))clblast[fn_CLBlastClearCache])();
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// clblastLibraries are the file names of CLBlast, newest ABI first.
var clblastLibraries = []string{"libclblast.so.1", "libclblast.so"}

// clblastSymbols are CLBlast's functions, in the order of the C table.
var clblastSymbols = []vendorSymbol{
	{"CLBlastSgemm", false},
	{"CLBlastDgemm", false},
	{"CLBlastSgemmStridedBatched", false}, // CLBlast 1.3
	{"CLBlastDgemmStridedBatched", false},
	{"CLBlastClearCache", true},
	{"CLBlastSaxpy", true},
	{"CLBlastDaxpy", true},
	{"CLBlastSdot", true},
	{"CLBlastDdot", true},
	{"CLBlastSsum", true},
	{"CLBlastDsum", true},
}

// clblastState is the process's CLBlast: loaded once (a failure is tried again), with
// the number of open handles, so that the last one to close clears CLBlast's cache of
// compiled programs, which holds on to the contexts they were built for.
var clblastState struct {
	mu   sync.Mutex
	lib  *vendorLib
	open int
}

var _ driver.BLASProvider = (*device)(nil)

// BLAS loads CLBlast (on the first call in the process) and returns a handle on it for
// the device. Without the library the error wraps driver.ErrUnavailable and names every
// file tried.
func (d *device) BLAS() (driver.BLAS, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	clblastState.mu.Lock()
	defer clblastState.mu.Unlock()
	if clblastState.lib == nil {
		lib, err := loadVendor("CLBlast", clblastLibraries, clblastSymbols)
		if err != nil {
			return nil, err
		}
		for i, f := range lib.fns {
			C.prism_clblast_set(C.int(i), f)
		}
		clblastState.lib = lib
	}
	clblastState.open++
	p := clblastState.lib.path
	// CLBlast has no version call: the version is the library's file name's.
	return &blas{th: d.c.thread, lib: driver.Library{Name: "CLBlast", Version: driver.LibraryVersion(p), Path: p}}, nil
}

// blas is a handle on CLBlast for one device. CLBlast keeps no per-handle state: a call
// takes the queue and buffers, and compiles its kernels for the queue's context and
// device on first use. It is safe for concurrent use.
type blas struct {
	th       *osThread
	lib      driver.Library
	mu       sync.Mutex
	closed   bool
	compiled map[string]bool // routines called once with success (compiled), by name
}

var _ driver.BLAS = (*blas)(nil)

// Library returns CLBlast's name, version and path.
func (b *blas) Library() driver.Library { return b.lib }

// Gemm enqueues CLBlastSgemm or CLBlastDgemm (Batch 1), or CLBlastSgemmStridedBatched or
// CLBlastDgemmStridedBatched, with CLBlastLayoutRowMajor: CLBlast takes Prism's row-major
// arguments as they are. The event spans the whole call (see queue.span).
func (b *blas) Gemm(dq driver.Queue, g driver.GemmArgs) (driver.Event, error) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, errClosed("CLBlast handle")
	}
	q, err := queueOf(dq)
	if err != nil {
		return nil, err
	}
	var mem [3]unsafe.Pointer
	for i, db := range []driver.Buffer{g.A, g.B, g.C} {
		cb, err := asBuffer(db)
		if err != nil {
			return nil, err
		}
		mem[i] = unsafe.Pointer(rawMem(cb.mem))
	}
	if g.Type != driver.Float32 && g.Type != driver.Float64 {
		return nil, fmt.Errorf("cl: CLBlast GEMM of %v: %w", g.Type, driver.ErrUnsupported)
	}
	name := clblastGemmName(g)
	dbl := C.int(0)
	if g.Type == driver.Float64 {
		dbl = 1
	}
	return b.call(name, func() (driver.Event, error) {
		return q.span(name, func(cq unsafe.Pointer) error {
			st := C.prism_clblast_gemm(dbl, cbool(g.TransA), cbool(g.TransB), C.size_t(g.M), C.size_t(g.N), C.size_t(g.K),
				C.double(g.Alpha), mem[0], C.size_t(g.LDA), C.size_t(g.StrideA),
				mem[1], C.size_t(g.LDB), C.size_t(g.StrideB),
				C.double(g.Beta), mem[2], C.size_t(g.LDC), C.size_t(g.StrideC), C.size_t(g.Batch), cq)
			return checkCLBlast(fmt.Sprintf("%s(M=%d N=%d K=%d)", name, g.M, g.N, g.K), BLASStatus(st))
		})
	})
}

// call runs span, one routine's call (name, as "CLBlastSgemm"). The first call of each
// routine on the handle is the one in which CLBlast compiles the routine's kernels for the
// device: until one has succeeded, the call runs in a window that sends the compiler's own
// output to the trace (captureDriverStderr). The window opens and closes outside the span
// the call is timed by, and later calls open none.
func (b *blas) call(name string, span func() (driver.Event, error)) (driver.Event, error) {
	b.mu.Lock()
	done := b.compiled[name]
	b.mu.Unlock()
	if done {
		return span()
	}
	release := captureDriverStderr()
	ev, err := span()
	release()
	if err == nil {
		b.mu.Lock()
		if b.compiled == nil {
			b.compiled = map[string]bool{}
		}
		b.compiled[name] = true
		b.mu.Unlock()
	}
	return ev, err
}

// clblastGemmName returns the CLBlast routine a GEMM calls.
func clblastGemmName(g driver.GemmArgs) string {
	name := "CLBlastSgemm"
	if g.Type == driver.Float64 {
		name = "CLBlastDgemm"
	}
	if g.Batch > 1 {
		name += "StridedBatched"
	}
	return name
}

var _ driver.BLAS1 = (*blas)(nil)

// Axpy enqueues CLBlastSaxpy or CLBlastDaxpy; the event spans the call.
func (b *blas) Axpy(dq driver.Queue, a driver.AxpyArgs) (driver.Event, error) {
	q, mem, err := b.level1(dq, a.Type, a.X, a.Y)
	if err != nil {
		return nil, err
	}
	name := map[bool]string{false: "CLBlastSaxpy", true: "CLBlastDaxpy"}[a.Type == driver.Float64]
	return b.call(name, func() (driver.Event, error) {
		return q.span(name, func(cq unsafe.Pointer) error {
			st := C.prism_clblast_axpy(dblOf(a.Type), C.size_t(a.N), C.double(a.Alpha), mem[0], mem[1], cq)
			return checkCLBlast(fmt.Sprintf("%s(n=%d)", name, a.N), BLASStatus(st))
		})
	})
}

// Dot enqueues CLBlastSdot or CLBlastDdot, the result in Out; the event spans the call.
func (b *blas) Dot(dq driver.Queue, a driver.DotArgs) (driver.Event, error) {
	q, mem, err := b.level1(dq, a.Type, a.Out, a.X, a.Y)
	if err != nil {
		return nil, err
	}
	name := map[bool]string{false: "CLBlastSdot", true: "CLBlastDdot"}[a.Type == driver.Float64]
	return b.call(name, func() (driver.Event, error) {
		return q.span(name, func(cq unsafe.Pointer) error {
			st := C.prism_clblast_dot(dblOf(a.Type), C.size_t(a.N), mem[0], mem[1], mem[2], cq)
			return checkCLBlast(fmt.Sprintf("%s(n=%d)", name, a.N), BLASStatus(st))
		})
	})
}

// Sum enqueues CLBlastSsum or CLBlastDsum (the plain sum), the result in Out; the event
// spans the call.
func (b *blas) Sum(dq driver.Queue, a driver.DotArgs) (driver.Event, error) {
	q, mem, err := b.level1(dq, a.Type, a.Out, a.X)
	if err != nil {
		return nil, err
	}
	name := map[bool]string{false: "CLBlastSsum", true: "CLBlastDsum"}[a.Type == driver.Float64]
	return b.call(name, func() (driver.Event, error) {
		return q.span(name, func(cq unsafe.Pointer) error {
			st := C.prism_clblast_sum(dblOf(a.Type), C.size_t(a.N), mem[0], mem[1], cq)
			return checkCLBlast(fmt.Sprintf("%s(n=%d)", name, a.N), BLASStatus(st))
		})
	})
}

// level1 checks the handle and element type and returns the queue and the buffers' cl_mem.
func (b *blas) level1(dq driver.Queue, t driver.ElemType, bufs ...driver.Buffer) (*queue, []unsafe.Pointer, error) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, nil, errClosed("CLBlast handle")
	}
	if t != driver.Float32 && t != driver.Float64 {
		return nil, nil, fmt.Errorf("cl: CLBlast level-1 routine of %v: %w", t, driver.ErrUnsupported)
	}
	q, err := queueOf(dq)
	if err != nil {
		return nil, nil, err
	}
	mem := make([]unsafe.Pointer, len(bufs))
	for i, db := range bufs {
		cb, err := asBuffer(db)
		if err != nil {
			return nil, nil, err
		}
		mem[i] = unsafe.Pointer(rawMem(cb.mem))
	}
	return q, mem, nil
}

func dblOf(t driver.ElemType) C.int {
	if t == driver.Float64 {
		return 1
	}
	return 0
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Close releases the handle; the last handle of the process to close clears CLBlast's
// cache of compiled programs (CLBlastClearCache), releasing the contexts they hold.
// Idempotent.
func (b *blas) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	clblastState.mu.Lock()
	defer clblastState.mu.Unlock()
	clblastState.open--
	if clblastState.open > 0 {
		return nil
	}
	var st C.CLBlastStatusCode
	b.th.Do(func() { st = C.prism_clblast_clear_cache() })
	return checkCLBlast("CLBlastClearCache", BLASStatus(st))
}

// BLASStatus is a CLBlast status code (CLBlastStatusCode): an OpenCL status, or one of
// CLBlast's own (from -1024 down). Its Error method gives the name from clblast_c.h;
// errors.Is matches it against the engine sentinels, OpenCL codes as Status does.
type BLASStatus int32

// CLBlast's own status codes (clblast_c.h); the others are OpenCL's (Status).
const (
	BLASNotImplemented          BLASStatus = -1024
	BLASInvalidMatrixA          BLASStatus = -1022
	BLASInvalidMatrixB          BLASStatus = -1021
	BLASInvalidMatrixC          BLASStatus = -1020
	BLASInvalidVectorX          BLASStatus = -1019
	BLASInvalidVectorY          BLASStatus = -1018
	BLASInvalidDimension        BLASStatus = -1017
	BLASInvalidLeadDimA         BLASStatus = -1016
	BLASInvalidLeadDimB         BLASStatus = -1015
	BLASInvalidLeadDimC         BLASStatus = -1014
	BLASInvalidIncrementX       BLASStatus = -1013
	BLASInvalidIncrementY       BLASStatus = -1012
	BLASInsufficientMemoryA     BLASStatus = -1011
	BLASInsufficientMemoryB     BLASStatus = -1010
	BLASInsufficientMemoryC     BLASStatus = -1009
	BLASInsufficientMemoryX     BLASStatus = -1008
	BLASInsufficientMemoryY     BLASStatus = -1007
	BLASInsufficientMemoryTemp  BLASStatus = -2050
	BLASInvalidBatchCount       BLASStatus = -2049
	BLASInvalidOverrideKernel   BLASStatus = -2048
	BLASMissingOverrideParam    BLASStatus = -2047
	BLASInvalidLocalMemUsage    BLASStatus = -2046
	BLASNoHalfPrecision         BLASStatus = -2045
	BLASNoDoublePrecision       BLASStatus = -2044
	BLASInvalidVectorScalar     BLASStatus = -2043
	BLASInsufficientMemoryScale BLASStatus = -2042
	BLASDatabaseError           BLASStatus = -2041
	BLASUnknownError            BLASStatus = -2040
	BLASUnexpectedError         BLASStatus = -2039
)

var blasStatusNames = map[BLASStatus]string{
	BLASNotImplemented:          "CLBlastNotImplemented",
	BLASInvalidMatrixA:          "CLBlastInvalidMatrixA",
	BLASInvalidMatrixB:          "CLBlastInvalidMatrixB",
	BLASInvalidMatrixC:          "CLBlastInvalidMatrixC",
	BLASInvalidVectorX:          "CLBlastInvalidVectorX",
	BLASInvalidVectorY:          "CLBlastInvalidVectorY",
	BLASInvalidDimension:        "CLBlastInvalidDimension",
	BLASInvalidLeadDimA:         "CLBlastInvalidLeadDimA",
	BLASInvalidLeadDimB:         "CLBlastInvalidLeadDimB",
	BLASInvalidLeadDimC:         "CLBlastInvalidLeadDimC",
	BLASInvalidIncrementX:       "CLBlastInvalidIncrementX",
	BLASInvalidIncrementY:       "CLBlastInvalidIncrementY",
	BLASInsufficientMemoryA:     "CLBlastInsufficientMemoryA",
	BLASInsufficientMemoryB:     "CLBlastInsufficientMemoryB",
	BLASInsufficientMemoryC:     "CLBlastInsufficientMemoryC",
	BLASInsufficientMemoryX:     "CLBlastInsufficientMemoryX",
	BLASInsufficientMemoryY:     "CLBlastInsufficientMemoryY",
	BLASInsufficientMemoryTemp:  "CLBlastInsufficientMemoryTemp",
	BLASInvalidBatchCount:       "CLBlastInvalidBatchCount",
	BLASInvalidOverrideKernel:   "CLBlastInvalidOverrideKernel",
	BLASMissingOverrideParam:    "CLBlastMissingOverrideParameter",
	BLASInvalidLocalMemUsage:    "CLBlastInvalidLocalMemUsage",
	BLASNoHalfPrecision:         "CLBlastNoHalfPrecision",
	BLASNoDoublePrecision:       "CLBlastNoDoublePrecision",
	BLASInvalidVectorScalar:     "CLBlastInvalidVectorScalar",
	BLASInsufficientMemoryScale: "CLBlastInsufficientMemoryScalar",
	BLASDatabaseError:           "CLBlastDatabaseError",
	BLASUnknownError:            "CLBlastUnknownError",
	BLASUnexpectedError:         "CLBlastUnexpectedError",
}

// Error returns the code's name and value, "CLBlastInvalidLeadDimA (-1016)"; an OpenCL
// code is named as Status names it.
func (s BLASStatus) Error() string {
	if n, ok := blasStatusNames[s]; ok {
		return fmt.Sprintf("%s (%d)", n, int32(s))
	}
	return Status(s).Error()
}

// Is reports whether s stands for target: invalid dimensions, leading dimensions, batch
// counts and buffers too small for driver.ErrInvalidArg; a temporary buffer that could
// not be allocated for driver.ErrOutOfMemory; an unimplemented routine, a precision the
// device lacks or too little local memory for driver.ErrUnsupported; an OpenCL code as
// Status.Is.
func (s BLASStatus) Is(target error) bool {
	if _, own := blasStatusNames[s]; !own {
		return Status(s).Is(target)
	}
	switch target {
	case driver.ErrInvalidArg:
		switch s {
		case BLASInvalidMatrixA, BLASInvalidMatrixB, BLASInvalidMatrixC, BLASInvalidVectorX, BLASInvalidVectorY,
			BLASInvalidDimension, BLASInvalidLeadDimA, BLASInvalidLeadDimB, BLASInvalidLeadDimC,
			BLASInvalidIncrementX, BLASInvalidIncrementY, BLASInsufficientMemoryA, BLASInsufficientMemoryB,
			BLASInsufficientMemoryC, BLASInsufficientMemoryX, BLASInsufficientMemoryY, BLASInvalidBatchCount,
			BLASInvalidVectorScalar, BLASInsufficientMemoryScale:
			return true
		}
	case driver.ErrOutOfMemory:
		return s == BLASInsufficientMemoryTemp
	case driver.ErrUnsupported:
		return s == BLASNotImplemented || s == BLASNoHalfPrecision || s == BLASNoDoublePrecision || s == BLASInvalidLocalMemUsage
	}
	return false
}

// checkCLBlast names the failing CLBlast call; success (0) gives nil.
func checkCLBlast(call string, s BLASStatus) error {
	if s == 0 {
		return nil
	}
	return fmt.Errorf("cl: %s: %w", call, s)
}
