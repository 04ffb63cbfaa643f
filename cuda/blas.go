package cuda

// cuBLAS (libcublas.so.13, .12 or .11), loaded with dlopen on first use: the functions
// below are declared here from cublas_api.h, so that no CUDA toolkit is needed to build.
// Only the _v2 names of the functions that have them are looked up: the legacy names are
// exported too, by the same library, with other signatures (the legacy cublasSgemm takes
// no handle). Mirrors cl/blas.go (CLBlast).

/*
#include <stdint.h>
#include <stdlib.h>

typedef int cublasStatus_t;
typedef void *cublasHandle_t;
typedef void *cudaStream_t; // the driver API's CUstream: the two are interchangeable

enum {
	fn_cublasCreate,
	fn_cublasDestroy,
	fn_cublasSetStream,
	fn_cublasSetPointerMode,
	fn_cublasSetMathMode,
	fn_cublasGetVersion,
	fn_cublasSgemm,
	fn_cublasDgemm,
	fn_cublasSgemmStridedBatched,
	fn_cublasDgemmStridedBatched,
	fn_cublasGetProperty,
	fn_cublasSaxpy,
	fn_cublasDaxpy,
	fn_cublasSdot,
	fn_cublasDdot,
	cublas_count
};

// cublas holds the resolved functions, written under the Go loader's lock before any call
// can be made.
static void *cublas[cublas_count];
static void prism_cublas_set(int i, void *f) { cublas[i] = f; }
static int prism_cublas_have(int i) { return cublas[i] != NULL; }

static cublasStatus_t prism_cublas_get_property(int type, int *v) {
	return ((cublasStatus_t (*)(int, int *))cublas[fn_cublasGetProperty])(type, v);
}

// prism_cublas_create makes a handle with the host pointer mode (CUBLAS_POINTER_MODE_HOST,
// 0: alpha and beta are read from host memory during the call) and the default math mode
// (CUBLAS_DEFAULT_MATH, 0: see blas.go). *step is the index of the call that failed.
static cublasStatus_t prism_cublas_create(cublasHandle_t *h, int *step) {
	cublasStatus_t st;
	*step = fn_cublasCreate;
	st = ((cublasStatus_t (*)(cublasHandle_t *))cublas[fn_cublasCreate])(h);
	if (st != 0) return st;
	*step = fn_cublasSetPointerMode;
	st = ((cublasStatus_t (*)(cublasHandle_t, int))cublas[fn_cublasSetPointerMode])(*h, 0);
	if (st != 0) return st;
	*step = fn_cublasSetMathMode;
	return ((cublasStatus_t (*)(cublasHandle_t, int))cublas[fn_cublasSetMathMode])(*h, 0);
}

static cublasStatus_t prism_cublas_destroy(cublasHandle_t h) {
	return ((cublasStatus_t (*)(cublasHandle_t))cublas[fn_cublasDestroy])(h);
}

static cublasStatus_t prism_cublas_version(cublasHandle_t h, int *v) {
	return ((cublasStatus_t (*)(cublasHandle_t, int *))cublas[fn_cublasGetVersion])(h, v);
}

// prism_cublas_gemm binds the handle to the stream (cublasSetStream_v2), then calls the
// column-major GEMM of the precision (dbl) and form (batch > 1: strided batched) asked,
// with alpha and beta in host memory. Operations: 0 = CUBLAS_OP_N, 1 = CUBLAS_OP_T.
// *step is the index of the call that failed.
static cublasStatus_t prism_cublas_gemm(cublasHandle_t h, void *stream, int dbl, int ta, int tb, int m, int n, int k,
	double alpha, unsigned long long a, int lda, long long sa, unsigned long long b, int ldb, long long sb,
	double beta, unsigned long long c, int ldc, long long sc, int batch, int *step) {
	cublasStatus_t st;
	*step = fn_cublasSetStream;
	st = ((cublasStatus_t (*)(cublasHandle_t, cudaStream_t))cublas[fn_cublasSetStream])(h, (cudaStream_t)stream);
	if (st != 0) return st;
	if (dbl) {
		double al = alpha, be = beta;
		const double *A = (const double *)(uintptr_t)a, *B = (const double *)(uintptr_t)b;
		double *C = (double *)(uintptr_t)c;
		if (batch > 1) {
			*step = fn_cublasDgemmStridedBatched;
			return ((cublasStatus_t (*)(cublasHandle_t, int, int, int, int, int, const double *, const double *, int, long long,
				const double *, int, long long, const double *, double *, int, long long, int))cublas[fn_cublasDgemmStridedBatched])(
				h, ta, tb, m, n, k, &al, A, lda, sa, B, ldb, sb, &be, C, ldc, sc, batch);
		}
		*step = fn_cublasDgemm;
		return ((cublasStatus_t (*)(cublasHandle_t, int, int, int, int, int, const double *, const double *, int,
			const double *, int, const double *, double *, int))cublas[fn_cublasDgemm])(
			h, ta, tb, m, n, k, &al, A, lda, B, ldb, &be, C, ldc);
	}
	float al = (float)alpha, be = (float)beta;
	const float *A = (const float *)(uintptr_t)a, *B = (const float *)(uintptr_t)b;
	float *C = (float *)(uintptr_t)c;
	if (batch > 1) {
		*step = fn_cublasSgemmStridedBatched;
		return ((cublasStatus_t (*)(cublasHandle_t, int, int, int, int, int, const float *, const float *, int, long long,
			const float *, int, long long, const float *, float *, int, long long, int))cublas[fn_cublasSgemmStridedBatched])(
			h, ta, tb, m, n, k, &al, A, lda, sa, B, ldb, sb, &be, C, ldc, sc, batch);
	}
	*step = fn_cublasSgemm;
	return ((cublasStatus_t (*)(cublasHandle_t, int, int, int, int, int, const float *, const float *, int,
		const float *, int, const float *, float *, int))cublas[fn_cublasSgemm])(
		h, ta, tb, m, n, k, &al, A, lda, B, ldb, &be, C, ldc);
}

// prism_cublas_axpy binds the handle to the stream, then calls cublasSaxpy_v2 or
// cublasDaxpy_v2 (y = alpha*x + y, unit strides, alpha in host memory: the handle's
// pointer mode). 15 (CUBLAS_STATUS_NOT_SUPPORTED) where the library lacks the routine.
static cublasStatus_t prism_cublas_axpy(cublasHandle_t h, void *stream, int dbl, int n, double alpha,
	unsigned long long x, unsigned long long y, int *step) {
	cublasStatus_t st;
	*step = fn_cublasSetStream;
	st = ((cublasStatus_t (*)(cublasHandle_t, cudaStream_t))cublas[fn_cublasSetStream])(h, (cudaStream_t)stream);
	if (st != 0) return st;
	if (dbl) {
		double al = alpha;
		*step = fn_cublasDaxpy;
		if (cublas[fn_cublasDaxpy] == NULL) return 15;
		return ((cublasStatus_t (*)(cublasHandle_t, int, const double *, const double *, int, double *, int))cublas[fn_cublasDaxpy])(
			h, n, &al, (const double *)(uintptr_t)x, 1, (double *)(uintptr_t)y, 1);
	}
	float al = (float)alpha;
	*step = fn_cublasSaxpy;
	if (cublas[fn_cublasSaxpy] == NULL) return 15;
	return ((cublasStatus_t (*)(cublasHandle_t, int, const float *, const float *, int, float *, int))cublas[fn_cublasSaxpy])(
		h, n, &al, (const float *)(uintptr_t)x, 1, (float *)(uintptr_t)y, 1);
}

// prism_cublas_dot binds the handle to the stream and calls cublasSdot_v2 or cublasDdot_v2
// with the result in device memory (CUBLAS_POINTER_MODE_DEVICE for the call, so that it
// stays asynchronous), then puts the handle back in host pointer mode.
static cublasStatus_t prism_cublas_dot(cublasHandle_t h, void *stream, int dbl, int n,
	unsigned long long x, unsigned long long y, unsigned long long out, int *step) {
	cublasStatus_t st, st2;
	int fn = dbl ? fn_cublasDdot : fn_cublasSdot;
	*step = fn_cublasSetStream;
	st = ((cublasStatus_t (*)(cublasHandle_t, cudaStream_t))cublas[fn_cublasSetStream])(h, (cudaStream_t)stream);
	if (st != 0) return st;
	*step = fn;
	if (cublas[fn] == NULL) return 15;
	*step = fn_cublasSetPointerMode;
	st = ((cublasStatus_t (*)(cublasHandle_t, int))cublas[fn_cublasSetPointerMode])(h, 1);
	if (st != 0) return st;
	*step = fn;
	if (dbl) {
		st = ((cublasStatus_t (*)(cublasHandle_t, int, const double *, int, const double *, int, double *))cublas[fn])(
			h, n, (const double *)(uintptr_t)x, 1, (const double *)(uintptr_t)y, 1, (double *)(uintptr_t)out);
	} else {
		st = ((cublasStatus_t (*)(cublasHandle_t, int, const float *, int, const float *, int, float *))cublas[fn])(
			h, n, (const float *)(uintptr_t)x, 1, (const float *)(uintptr_t)y, 1, (float *)(uintptr_t)out);
	}
	st2 = ((cublasStatus_t (*)(cublasHandle_t, int))cublas[fn_cublasSetPointerMode])(h, 0);
	if (st == 0 && st2 != 0) {
		*step = fn_cublasSetPointerMode;
		return st2;
	}
	return st;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// cublasLibraries are the file names of cuBLAS, newest first (CUDA 13, 12, 11).
var cublasLibraries = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}

// cublasSymbols are cuBLAS's functions, in the order of the C table.
var cublasSymbols = []vendorSymbol{
	{"cublasCreate_v2", false},
	{"cublasDestroy_v2", false},
	{"cublasSetStream_v2", false},
	{"cublasSetPointerMode_v2", false},
	{"cublasSetMathMode", false},
	{"cublasGetVersion_v2", false},
	{"cublasSgemm_v2", false},
	{"cublasDgemm_v2", false},
	{"cublasSgemmStridedBatched", false},
	{"cublasDgemmStridedBatched", false},
	{"cublasGetProperty", true},
	{"cublasSaxpy_v2", true},
	{"cublasDaxpy_v2", true},
	{"cublasSdot_v2", true},
	{"cublasDdot_v2", true},
}

// cublasDeps names the library a cuBLAS file needs from its own directory: cuBLASLt of
// the same version ("libcublas.so.13" needs "libcublasLt.so.13").
func cublasDeps(base string) []string {
	return []string{strings.Replace(base, "libcublas.", "libcublasLt.", 1)}
}

// cublasState is the process's cuBLAS, loaded once (a failure is tried again).
var cublasState struct {
	mu      sync.Mutex
	lib     *vendorLib
	version string // from cublasGetProperty, "" until a handle gives cublasGetVersion_v2's
}

var _ driver.BLASProvider = (*device)(nil)

// BLAS loads cuBLAS (on the first call in the process) and returns a handle on it for
// the device, with one cuBLAS handle made at once (cublasCreate_v2, on the device's
// thread with its context current), so that a library that cannot run on the device fails
// here. Without the library the error wraps driver.ErrUnavailable and names every file
// tried.
func (d *device) BLAS() (driver.BLAS, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	cublasState.mu.Lock()
	defer cublasState.mu.Unlock()
	if cublasState.lib == nil {
		lib, err := loadVendor("cuBLAS", cublasLibraries, cublasSymbols, cublasDeps)
		if err != nil {
			return nil, err
		}
		for i, f := range lib.fns {
			C.prism_cublas_set(C.int(i), f)
		}
		cublasState.lib = lib
		if C.prism_cublas_have(C.fn_cublasGetProperty) != 0 {
			cublasState.version = propertyVersion(func(p int) (int, bool) {
				var v C.int
				ok := C.prism_cublas_get_property(C.int(p), &v) == 0
				return int(v), ok
			})
		}
	}
	b := &blas{d: d, handles: map[cuStream]C.cublasHandle_t{}}
	err := d.th.Call(func() error {
		h, err := cublasCreate()
		if err != nil {
			return err
		}
		b.spare = h
		if cublasState.version == "" {
			var v C.int
			if st := BLASStatus(C.prism_cublas_version(h, &v)); st == BLASSuccess {
				cublasState.version = cublasVersionString(int(v))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.lib = driver.Library{Name: "cuBLAS", Version: cublasState.version, Path: cublasState.lib.path}
	return b, nil
}

// cublasCreate makes a handle (cublasCreate_v2), with host pointers and the default math
// mode. It runs on the device's thread.
func cublasCreate() (C.cublasHandle_t, error) {
	var (
		h    C.cublasHandle_t
		step C.int
	)
	st := BLASStatus(C.prism_cublas_create(&h, &step))
	if st != BLASSuccess {
		if step != C.fn_cublasCreate {
			C.prism_cublas_destroy(h)
		}
		return nil, checkBLAS(cublasSymbols[int(step)].name, st)
	}
	return h, nil
}

// cublasVersionString formats cublasGetVersion_v2's number: major*10000 + minor*100 +
// patch since cuBLAS 11 (110000 and up), major*1000 + minor*100 + patch before.
func cublasVersionString(v int) string {
	if v >= 100000 {
		return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
	}
	return fmt.Sprintf("%d.%d.%d", v/1000, v%1000/100, v%100)
}

// blas is cuBLAS for one device: one cuBLAS handle per stream it has run on, so that
// kernels on different streams never share a handle's workspace; each call binds its
// handle to the queue's stream (cublasSetStream_v2) again, since a stream destroyed and
// another made at the same address reuse the handle. The handles are touched only on the
// device's thread. Every handle has the host pointer mode and CUBLAS_DEFAULT_MATH, which
// computes a float32 GEMM in float32 (TF32 tensor cores are for CUBLAS_TF32_TENSOR_OP_MATH
// only): the product is the one Prism's GEMM is compared with, not a faster, less precise
// one. It is safe for concurrent use.
type blas struct {
	d       *device
	lib     driver.Library
	spare   C.cublasHandle_t // made by BLAS, given to the first stream
	handles map[cuStream]C.cublasHandle_t
	lt      blasLt // cuBLASLt's handles, workspaces and plans (blaslt.go)
	mu      sync.Mutex
	closed  bool
}

var _ driver.BLAS = (*blas)(nil)

// Library returns cuBLAS's name, version (cublasGetProperty) and path.
func (b *blas) Library() driver.Library { return b.lib }

// handle returns the cuBLAS handle of stream s, making it on first use. It runs on the
// device's thread.
func (b *blas) handle(s cuStream) (C.cublasHandle_t, error) {
	if h, ok := b.handles[s]; ok {
		return h, nil
	}
	h := b.spare
	if h != nil {
		b.spare = nil
	} else {
		var err error
		if h, err = cublasCreate(); err != nil {
			return nil, err
		}
	}
	b.handles[s] = h
	return h, nil
}

// Gemm enqueues the row-major product as cuBLAS's column-major one (see columnMajor):
// cublasSgemm_v2 or cublasDgemm_v2, or their StridedBatched forms, after binding the
// stream's handle to the stream. The event spans the whole call: the queue's timing events
// are recorded on the stream before and after it.
func (b *blas) Gemm(dq driver.Queue, g driver.GemmArgs) (driver.Event, error) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, errClosed("cuBLAS handle")
	}
	q, ok := dq.(*queue)
	if !ok || q == nil {
		return nil, fmt.Errorf("cuda: queue %T is not a CUDA queue: %w", dq, driver.ErrInvalidArg)
	}
	var ptr [3]devptr
	for i, db := range []driver.Buffer{g.A, g.B, g.C} {
		cb, err := asBuffer(db)
		if err != nil {
			return nil, err
		}
		ptr[i] = cb.ptr
	}
	c, err := columnMajor(g, ptr[0], ptr[1], ptr[2])
	if err != nil {
		return nil, err
	}
	name := c.routine()
	return q.command(name, func() error {
		h, err := b.handle(q.stream)
		if err != nil {
			return err
		}
		var step C.int
		st := BLASStatus(C.prism_cublas_gemm(h, unsafe.Pointer(q.stream), cbool(c.double), C.int(c.transA), C.int(c.transB),
			C.int(c.m), C.int(c.n), C.int(c.k), C.double(c.alpha),
			C.ulonglong(c.a), C.int(c.lda), C.longlong(c.strideA),
			C.ulonglong(c.b), C.int(c.ldb), C.longlong(c.strideB),
			C.double(c.beta), C.ulonglong(c.c), C.int(c.ldc), C.longlong(c.strideC), C.int(c.batch), &step))
		if st == BLASSuccess {
			return nil
		}
		call := cublasSymbols[int(step)].name
		if step != C.fn_cublasSetStream {
			call = fmt.Sprintf("%s(m=%d n=%d k=%d)", call, c.m, c.n, c.k)
		}
		return checkBLAS(call, st)
	})
}

var _ driver.BLAS1 = (*blas)(nil)

// Axpy enqueues cublasSaxpy_v2 or cublasDaxpy_v2 on the queue's stream; the event spans the
// call.
func (b *blas) Axpy(dq driver.Queue, a driver.AxpyArgs) (driver.Event, error) {
	q, ptr, err := b.level1(dq, a.Type, a.N, a.X, a.Y)
	if err != nil {
		return nil, err
	}
	name := map[bool]string{false: "cublasSaxpy_v2", true: "cublasDaxpy_v2"}[a.Type == driver.Float64]
	return q.command(name, func() error {
		h, err := b.handle(q.stream)
		if err != nil {
			return err
		}
		var step C.int
		st := BLASStatus(C.prism_cublas_axpy(h, unsafe.Pointer(q.stream), dblOf(a.Type), C.int(a.N), C.double(a.Alpha),
			C.ulonglong(ptr[0]), C.ulonglong(ptr[1]), &step))
		if st == BLASSuccess {
			return nil
		}
		return checkBLAS(fmt.Sprintf("%s(n=%d)", cublasSymbols[int(step)].name, a.N), st)
	})
}

// Dot enqueues cublasSdot_v2 or cublasDdot_v2 on the queue's stream, the result in Out
// (device pointer mode for the call); the event spans the call.
func (b *blas) Dot(dq driver.Queue, a driver.DotArgs) (driver.Event, error) {
	q, ptr, err := b.level1(dq, a.Type, a.N, a.X, a.Y, a.Out)
	if err != nil {
		return nil, err
	}
	name := map[bool]string{false: "cublasSdot_v2", true: "cublasDdot_v2"}[a.Type == driver.Float64]
	return q.command(name, func() error {
		h, err := b.handle(q.stream)
		if err != nil {
			return err
		}
		var step C.int
		st := BLASStatus(C.prism_cublas_dot(h, unsafe.Pointer(q.stream), dblOf(a.Type), C.int(a.N),
			C.ulonglong(ptr[0]), C.ulonglong(ptr[1]), C.ulonglong(ptr[2]), &step))
		if st == BLASSuccess {
			return nil
		}
		return checkBLAS(fmt.Sprintf("%s(n=%d)", cublasSymbols[int(step)].name, a.N), st)
	})
}

// Sum is not offered: cuBLAS has only the sum of absolute values (cublasSasum).
func (b *blas) Sum(dq driver.Queue, a driver.DotArgs) (driver.Event, error) {
	return nil, fmt.Errorf("cuda: cuBLAS has no plain sum (only cublasSasum, of absolute values): %w", driver.ErrUnsupported)
}

// level1 checks the handle, element type and length (cuBLAS takes an int) and returns the
// queue and the buffers' device pointers.
func (b *blas) level1(dq driver.Queue, t driver.ElemType, n int, bufs ...driver.Buffer) (*queue, []devptr, error) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, nil, errClosed("cuBLAS handle")
	}
	if t != driver.Float32 && t != driver.Float64 {
		return nil, nil, fmt.Errorf("cuda: cuBLAS level-1 routine of %v: %w", t, driver.ErrUnsupported)
	}
	if n > math.MaxInt32 {
		return nil, nil, fmt.Errorf("cuda: cuBLAS takes at most 2^31-1 elements, not %d: %w", n, driver.ErrUnsupported)
	}
	q, ok := dq.(*queue)
	if !ok || q == nil {
		return nil, nil, fmt.Errorf("cuda: queue %T is not a CUDA queue: %w", dq, driver.ErrInvalidArg)
	}
	ptr := make([]devptr, len(bufs))
	for i, db := range bufs {
		cb, err := asBuffer(db)
		if err != nil {
			return nil, nil, err
		}
		ptr[i] = cb.ptr
	}
	return q, ptr, nil
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

// Operations of cublasOperation_t.
const (
	cublasOpN = 0
	cublasOpT = 1
)

// cublasGemm is one column-major cuBLAS GEMM: C = alpha*op(A)*op(B) + beta*C with op(A)
// m x k, op(B) k x n, C m x n, each matrix stored by columns with its leading dimension.
type cublasGemm struct {
	double                    bool
	transA, transB            int // cublasOpN or cublasOpT
	m, n, k                   int
	alpha, beta               float64
	a, b, c                   devptr
	lda, ldb, ldc             int
	strideA, strideB, strideC int64
	batch                     int
}

// routine returns the cuBLAS function the GEMM calls.
func (c cublasGemm) routine() string {
	name := "cublasSgemm"
	if c.double {
		name = "cublasDgemm"
	}
	if c.batch > 1 {
		return name + "StridedBatched"
	}
	return name + "_v2"
}

// columnMajor maps a row-major GEMM to cuBLAS's column-major one. A row-major matrix read
// by columns is its transpose, so the row-major C = op(A) op(B) (M x N) is, for cuBLAS,
// C^T = op(B)^T op(A)^T (N x M): the call's first operand is B with TransB, its second A
// with TransA, m = N, n = M, and every leading dimension and stride is the row-major one
// as it is. a, b and c are the buffers' device addresses. cuBLAS takes dimensions, leading
// dimensions and the batch count as 32-bit ints: larger ones give driver.ErrUnsupported.
func columnMajor(g driver.GemmArgs, a, b, c devptr) (cublasGemm, error) {
	for _, v := range []struct {
		name string
		x    int
	}{{"M", g.M}, {"N", g.N}, {"K", g.K}, {"lda", g.LDA}, {"ldb", g.LDB}, {"ldc", g.LDC}, {"batch", g.Batch}} {
		if v.x > math.MaxInt32 {
			return cublasGemm{}, fmt.Errorf("cuda: cuBLAS GEMM: %s = %d exceeds cuBLAS's 32-bit int: %w", v.name, v.x, driver.ErrUnsupported)
		}
	}
	if g.Type != driver.Float32 && g.Type != driver.Float64 {
		return cublasGemm{}, fmt.Errorf("cuda: cuBLAS GEMM of %v: %w", g.Type, driver.ErrUnsupported)
	}
	op := func(t bool) int {
		if t {
			return cublasOpT
		}
		return cublasOpN
	}
	return cublasGemm{
		double: g.Type == driver.Float64,
		transA: op(g.TransB), transB: op(g.TransA),
		m: g.N, n: g.M, k: g.K,
		alpha: g.Alpha, beta: g.Beta,
		a: b, lda: g.LDB, strideA: g.StrideB,
		b: a, ldb: g.LDA, strideB: g.StrideA,
		c: c, ldc: g.LDC, strideC: g.StrideC,
		batch: g.Batch,
	}, nil
}

// Close destroys the handles (cublasDestroy_v2) on the device's thread. engine closes the
// BLAS before the device. Idempotent.
func (b *blas) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var errs []error
	err := b.d.th.Call(func() error {
		hs := make([]C.cublasHandle_t, 0, len(b.handles)+1)
		if b.spare != nil {
			hs = append(hs, b.spare)
		}
		for _, h := range b.handles {
			hs = append(hs, h)
		}
		for _, h := range hs {
			errs = append(errs, checkBLAS("cublasDestroy_v2", BLASStatus(C.prism_cublas_destroy(h))))
		}
		b.spare, b.handles = nil, nil
		errs = append(errs, b.lt.close())
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}

// BLASStatus is a cuBLAS status code (cublasStatus_t). Its Error method gives the name
// from cublas_api.h; errors.Is matches it against the engine sentinels (see Is).
type BLASStatus int

// cuBLAS status codes (cublas_api.h).
const (
	BLASSuccess         BLASStatus = 0
	BLASNotInitialized  BLASStatus = 1
	BLASAllocFailed     BLASStatus = 3
	BLASInvalidValue    BLASStatus = 7
	BLASArchMismatch    BLASStatus = 8
	BLASMappingError    BLASStatus = 11
	BLASExecutionFailed BLASStatus = 13
	BLASInternalError   BLASStatus = 14
	BLASNotSupported    BLASStatus = 15
	BLASLicenseError    BLASStatus = 16
)

var blasStatusNames = map[BLASStatus]string{
	BLASSuccess:         "CUBLAS_STATUS_SUCCESS",
	BLASNotInitialized:  "CUBLAS_STATUS_NOT_INITIALIZED",
	BLASAllocFailed:     "CUBLAS_STATUS_ALLOC_FAILED",
	BLASInvalidValue:    "CUBLAS_STATUS_INVALID_VALUE",
	BLASArchMismatch:    "CUBLAS_STATUS_ARCH_MISMATCH",
	BLASMappingError:    "CUBLAS_STATUS_MAPPING_ERROR",
	BLASExecutionFailed: "CUBLAS_STATUS_EXECUTION_FAILED",
	BLASInternalError:   "CUBLAS_STATUS_INTERNAL_ERROR",
	BLASNotSupported:    "CUBLAS_STATUS_NOT_SUPPORTED",
	BLASLicenseError:    "CUBLAS_STATUS_LICENSE_ERROR",
}

// Error returns the code's name from cublas_api.h, or "cublasStatus_t(N)".
func (s BLASStatus) Error() string {
	if n, ok := blasStatusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("cublasStatus_t(%d)", int(s))
}

// Is reports whether s stands for target: a failed allocation for driver.ErrOutOfMemory;
// an invalid value for driver.ErrInvalidArg; a library that could not initialize the
// device (CUBLAS_STATUS_NOT_INITIALIZED) for driver.ErrUnavailable; an architecture or
// operation it does not support for driver.ErrUnsupported.
func (s BLASStatus) Is(target error) bool {
	switch target {
	case driver.ErrOutOfMemory:
		return s == BLASAllocFailed
	case driver.ErrInvalidArg:
		return s == BLASInvalidValue
	case driver.ErrUnavailable:
		return s == BLASNotInitialized
	case driver.ErrUnsupported:
		return s == BLASArchMismatch || s == BLASNotSupported || s == BLASLicenseError
	}
	return false
}

// checkBLAS names the failing cuBLAS call: "cuda: cublasSgemm_v2(m=1 n=2 k=3):
// CUBLAS_STATUS_INVALID_VALUE". Success gives nil.
func checkBLAS(call string, s BLASStatus) error {
	if s == BLASSuccess {
		return nil
	}
	return &contextError{context: call, err: s}
}
