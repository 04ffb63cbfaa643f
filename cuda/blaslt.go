package cuda

// cuBLASLt (libcublasLt.so.13, .12 or .11), loaded with dlopen on first use: the
// mixed-precision GEMM of the vendor BLAS (driver.MixedBLAS), for inputs that cuBLAS's
// SGEMM and DGEMM do not take: float32 multiplied as tf32, float16, bfloat16 and float8.
// The functions and constants below are declared here from cublasLt.h, cublas_api.h and
// library_types.h, so that no CUDA toolkit is needed to build. Every value was read from
// the headers of CUDA 13.0 (cuBLAS 13.1.0: targets/x86_64-linux/include, cublasLt.h lines
// 1155, 1171, 1295, 1301, 2088; cublas_api.h 208, 212; library_types.h 59-89), agrees with
// the CUDA 12.6 cublasLt.h, and is checked against the installed headers by
// TestBLASLtHeader on the GPU machine.

/*
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;
typedef void *cublasLtHandle_t;
typedef void *cublasLtMatmulDesc_t;
typedef void *cublasLtMatrixLayout_t;
typedef void *cublasLtMatmulPreference_t;
typedef void *cudaStream_t; // the driver API's CUstream: the two are interchangeable

// cublasLtMatmulAlgo_t: uint64_t data[8], 64 bytes.
typedef struct { uint64_t data[8]; } prism_lt_algo;

// cublasLtMatmulHeuristicResult_t: 96 bytes, workspaceSize at 64, state at 72, wavesCount
// at 76 (measured with the CUDA 13.0 header).
typedef struct {
	prism_lt_algo algo;
	size_t workspaceSize;
	cublasStatus_t state;
	float wavesCount;
	int reserved[4];
} prism_lt_heuristic;

// Attributes (cublasLtMatmulDescAttributes_t, cublasLtMatrixLayoutAttribute_t,
// cublasLtMatmulPreferenceAttributes_t), and the scale type (cudaDataType_t CUDA_R_32F).
enum {
	LT_DESC_TRANSA = 3,               // int32_t, cublasOperation_t
	LT_DESC_TRANSB = 4,               // int32_t
	LT_LAYOUT_BATCH_COUNT = 5,        // int32_t
	LT_LAYOUT_STRIDED_BATCH_OFFSET = 6, // int64_t, in elements
	LT_PREF_MAX_WORKSPACE_BYTES = 1,  // uint64_t
	LT_PREF_MIN_ALIGNMENT_A_BYTES = 5, // uint32_t; B, C and D follow (6, 7, 8)
	LT_SCALE_32F = 0
};

enum {
	fn_cublasLtCreate,
	fn_cublasLtDestroy,
	fn_cublasLtGetVersion,
	fn_cublasLtMatmulDescCreate,
	fn_cublasLtMatmulDescSetAttribute,
	fn_cublasLtMatmulDescDestroy,
	fn_cublasLtMatrixLayoutCreate,
	fn_cublasLtMatrixLayoutSetAttribute,
	fn_cublasLtMatrixLayoutDestroy,
	fn_cublasLtMatmulPreferenceCreate,
	fn_cublasLtMatmulPreferenceSetAttribute,
	fn_cublasLtMatmulPreferenceDestroy,
	fn_cublasLtMatmulAlgoGetHeuristic,
	fn_cublasLtMatmul,
	cublaslt_count
};

// cublaslt holds the resolved functions, written under the Go loader's lock before any
// call can be made.
static void *cublaslt[cublaslt_count];
static void prism_lt_set(int i, void *f) { cublaslt[i] = f; }

static size_t prism_lt_version(void) { return ((size_t (*)(void))cublaslt[fn_cublasLtGetVersion])(); }

static cublasStatus_t prism_lt_create(cublasLtHandle_t *h) {
	return ((cublasStatus_t (*)(cublasLtHandle_t *))cublaslt[fn_cublasLtCreate])(h);
}

static cublasStatus_t prism_lt_destroy(cublasLtHandle_t h) {
	return ((cublasStatus_t (*)(cublasLtHandle_t))cublaslt[fn_cublasLtDestroy])(h);
}

// prism_lt_plan is one column-major GEMM described to cuBLASLt: its operation, the layouts
// of A, B and C (D is C: the product is computed in place) and the algorithm the heuristic
// chose.
typedef struct {
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t a, b, c;
	prism_lt_algo algo;
	size_t workspace;
} prism_lt_plan;

// prism_lt_layout is one matrix, column-major: rows, columns, leading dimension and, for a
// batch, the elements between its matrices.
typedef struct {
	int type;
	uint64_t rows, cols;
	int64_t ld, stride;
} prism_lt_layout;

// prism_lt_plan_free destroys what a plan holds (its NULL members are skipped).
static void prism_lt_plan_free(prism_lt_plan *p) {
	cublasLtMatrixLayout_t *ls[3] = {&p->a, &p->b, &p->c};
	for (int i = 0; i < 3; i++) {
		if (*ls[i] != NULL) ((cublasStatus_t (*)(cublasLtMatrixLayout_t))cublaslt[fn_cublasLtMatrixLayoutDestroy])(*ls[i]);
		*ls[i] = NULL;
	}
	if (p->desc != NULL) ((cublasStatus_t (*)(cublasLtMatmulDesc_t))cublaslt[fn_cublasLtMatmulDescDestroy])(p->desc);
	p->desc = NULL;
}

static cublasStatus_t prism_lt_layout_make(cublasLtMatrixLayout_t *l, prism_lt_layout d, int32_t batch, int *step) {
	cublasStatus_t st;
	*step = fn_cublasLtMatrixLayoutCreate;
	st = ((cublasStatus_t (*)(cublasLtMatrixLayout_t *, int, uint64_t, uint64_t, int64_t))cublaslt[fn_cublasLtMatrixLayoutCreate])(
		l, d.type, d.rows, d.cols, d.ld);
	if (st != 0 || batch <= 1) return st;
	*step = fn_cublasLtMatrixLayoutSetAttribute;
	cublasStatus_t (*set)(cublasLtMatrixLayout_t, int, const void *, size_t) =
		(cublasStatus_t (*)(cublasLtMatrixLayout_t, int, const void *, size_t))cublaslt[fn_cublasLtMatrixLayoutSetAttribute];
	st = set(*l, LT_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
	if (st != 0) return st;
	return set(*l, LT_LAYOUT_STRIDED_BATCH_OFFSET, &d.stride, sizeof d.stride);
}

// prism_lt_plan_make describes D = alpha*op(A)*op(B) + beta*C (D in C's place) to
// cuBLASLt and asks its heuristic for the first algorithm within the workspace, for
// operands whose addresses are multiples of align[0..2] bytes (A, B, C and D). The scale
// type is float32 (alpha and beta in host memory: the default pointer mode). *step is the
// index of the call that failed; *found is 0 when the heuristic answered no algorithm.
// On failure the caller frees the plan.
static cublasStatus_t prism_lt_plan_make(cublasLtHandle_t h, prism_lt_plan *p, int compute, int32_t opA, int32_t opB,
	prism_lt_layout la, prism_lt_layout lb, prism_lt_layout lc, int32_t batch, uint64_t workspace,
	uint32_t alignA, uint32_t alignB, uint32_t alignC, int *step, int *found) {
	cublasStatus_t st;
	*found = 0;
	memset(p, 0, sizeof *p);
	*step = fn_cublasLtMatmulDescCreate;
	st = ((cublasStatus_t (*)(cublasLtMatmulDesc_t *, int, int))cublaslt[fn_cublasLtMatmulDescCreate])(&p->desc, compute, LT_SCALE_32F);
	if (st != 0) return st;
	*step = fn_cublasLtMatmulDescSetAttribute;
	cublasStatus_t (*setd)(cublasLtMatmulDesc_t, int, const void *, size_t) =
		(cublasStatus_t (*)(cublasLtMatmulDesc_t, int, const void *, size_t))cublaslt[fn_cublasLtMatmulDescSetAttribute];
	if ((st = setd(p->desc, LT_DESC_TRANSA, &opA, sizeof opA)) != 0) return st;
	if ((st = setd(p->desc, LT_DESC_TRANSB, &opB, sizeof opB)) != 0) return st;
	if ((st = prism_lt_layout_make(&p->a, la, batch, step)) != 0) return st;
	if ((st = prism_lt_layout_make(&p->b, lb, batch, step)) != 0) return st;
	if ((st = prism_lt_layout_make(&p->c, lc, batch, step)) != 0) return st;

	cublasLtMatmulPreference_t pref = NULL;
	*step = fn_cublasLtMatmulPreferenceCreate;
	st = ((cublasStatus_t (*)(cublasLtMatmulPreference_t *))cublaslt[fn_cublasLtMatmulPreferenceCreate])(&pref);
	if (st != 0) return st;
	*step = fn_cublasLtMatmulPreferenceSetAttribute;
	cublasStatus_t (*setp)(cublasLtMatmulPreference_t, int, const void *, size_t) =
		(cublasStatus_t (*)(cublasLtMatmulPreference_t, int, const void *, size_t))cublaslt[fn_cublasLtMatmulPreferenceSetAttribute];
	uint32_t align[4] = {alignA, alignB, alignC, alignC};
	st = setp(pref, LT_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
	for (int i = 0; i < 4 && st == 0; i++) st = setp(pref, LT_PREF_MIN_ALIGNMENT_A_BYTES + i, &align[i], sizeof align[i]);
	if (st == 0) {
		prism_lt_heuristic r;
		int n = 0;
		memset(&r, 0, sizeof r);
		*step = fn_cublasLtMatmulAlgoGetHeuristic;
		st = ((cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
			cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int, prism_lt_heuristic *, int *))
			cublaslt[fn_cublasLtMatmulAlgoGetHeuristic])(h, p->desc, p->a, p->b, p->c, p->c, pref, 1, &r, &n);
		if (st == 0 && n > 0 && r.state == 0) {
			*found = 1;
			p->algo = r.algo;
			p->workspace = r.workspaceSize;
		} else if (st == 0) {
			st = n > 0 ? r.state : 15; // CUBLAS_STATUS_NOT_SUPPORTED: no algorithm
		}
	}
	((cublasStatus_t (*)(cublasLtMatmulPreference_t))cublaslt[fn_cublasLtMatmulPreferenceDestroy])(pref);
	return st;
}

// prism_lt_matmul enqueues the plan on the stream, in place (D = C), with alpha and beta
// in host memory and the workspace given.
static cublasStatus_t prism_lt_matmul(cublasLtHandle_t h, prism_lt_plan *p, float alpha, float beta,
	unsigned long long a, unsigned long long b, unsigned long long c, unsigned long long ws, size_t wsBytes, void *stream) {
	return ((cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *, cublasLtMatrixLayout_t,
		const void *, cublasLtMatrixLayout_t, const void *, const void *, cublasLtMatrixLayout_t, void *,
		cublasLtMatrixLayout_t, const prism_lt_algo *, void *, size_t, cudaStream_t))cublaslt[fn_cublasLtMatmul])(
		h, p->desc, &alpha, (const void *)(uintptr_t)a, p->a, (const void *)(uintptr_t)b, p->b, &beta,
		(const void *)(uintptr_t)c, p->c, (void *)(uintptr_t)c, p->c, &p->algo, (void *)(uintptr_t)ws, wsBytes,
		(cudaStream_t)stream);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// blasLtLibraries are the file names of cuBLASLt, newest first (CUDA 13, 12, 11).
var blasLtLibraries = []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"}

// blasLtSymbols are cuBLASLt's functions, in the order of the C table.
var blasLtSymbols = []vendorSymbol{
	{"cublasLtCreate", false},
	{"cublasLtDestroy", false},
	{"cublasLtGetVersion", false},
	{"cublasLtMatmulDescCreate", false},
	{"cublasLtMatmulDescSetAttribute", false},
	{"cublasLtMatmulDescDestroy", false},
	{"cublasLtMatrixLayoutCreate", false},
	{"cublasLtMatrixLayoutSetAttribute", false},
	{"cublasLtMatrixLayoutDestroy", false},
	{"cublasLtMatmulPreferenceCreate", false},
	{"cublasLtMatmulPreferenceSetAttribute", false},
	{"cublasLtMatmulPreferenceDestroy", false},
	{"cublasLtMatmulAlgoGetHeuristic", false},
	{"cublasLtMatmul", false},
}

// Constants of cublasLt.h and library_types.h that the Go side chooses between (see the
// file's comment for where they were read).
const (
	// cudaDataType_t
	cudaR32F    = 0  // CUDA_R_32F
	cudaR16F    = 2  // CUDA_R_16F
	cudaR16BF   = 14 // CUDA_R_16BF
	cudaR8FE4M3 = 28 // CUDA_R_8F_E4M3
	cudaR8FE5M2 = 29 // CUDA_R_8F_E5M2
	// cublasComputeType_t
	cublasCompute32F         = 68 // CUBLAS_COMPUTE_32F
	cublasCompute32FFastTF32 = 77 // CUBLAS_COMPUTE_32F_FAST_TF32
)

// blasLtWorkspace is the workspace given to cuBLASLt on each stream, and the most its
// heuristic may choose an algorithm for: 32 MiB, as PyTorch gives it on Hopper.
const blasLtWorkspace = 32 << 20

// blasLtState is the process's cuBLASLt, loaded once (a failure is tried again).
var blasLtState struct {
	mu  sync.Mutex
	lib *driver.Library
}

// loadBLASLt loads cuBLASLt (on the first call in the process) and describes it: the
// version from cublasLtGetVersion, the file the loader opened. Without the library the
// error wraps driver.ErrUnavailable and names every file tried. cuBLASLt needs no other
// CUDA library (cuBLAS needs it, not the reverse).
func loadBLASLt() (driver.Library, error) {
	blasLtState.mu.Lock()
	defer blasLtState.mu.Unlock()
	if blasLtState.lib != nil {
		return *blasLtState.lib, nil
	}
	lib, err := loadVendor("cuBLASLt", blasLtLibraries, blasLtSymbols, nil)
	if err != nil {
		return driver.Library{}, err
	}
	for i, f := range lib.fns {
		C.prism_lt_set(C.int(i), f)
	}
	l := driver.Library{Name: "cuBLASLt", Version: cublasVersionString(int(C.prism_lt_version())), Path: lib.path}
	blasLtState.lib = &l
	return l, nil
}

var _ driver.MixedBLAS = (*blas)(nil)

// MixedLibrary loads cuBLASLt and describes it.
func (b *blas) MixedLibrary() (driver.Library, error) { return loadBLASLt() }

// blasLt is cuBLASLt for one device (the lt field of blas): per stream a cuBLASLt handle, a
// workspace of blasLtWorkspace bytes, so that GEMMs on different streams never share one,
// and the plans made on it. Safe for concurrent use.
type blasLt struct {
	mu      sync.Mutex
	streams map[cuStream]*ltStream
}

// ltStream is cuBLASLt's state on one stream.
type ltStream struct {
	h     C.cublasLtHandle_t
	ws    devptr
	plans map[ltGemm]*C.prism_lt_plan
}

// ltLayout is one operand of a cuBLASLt GEMM as its column-major layout sees it.
type ltLayout struct {
	typ        int // cudaDataType_t
	rows, cols int
	ld         int
	stride     int64
}

// ltGemm is one column-major cuBLASLt GEMM: D = alpha*op(A)*op(B) + beta*C computed in
// C's place, op(A) m x k, op(B) k x n, with the layouts of A, B and C as stored and the
// alignment in bytes of their addresses. Comparable: the key of a stream's plans.
type ltGemm struct {
	compute                int // cublasComputeType_t
	transA, transB         int // cublasOpN or cublasOpT
	m, n, k                int
	a, b, c                ltLayout
	batch                  int
	alignA, alignB, alignC int
}

// ltDataType returns cudaDataType_t of an element type.
func ltDataType(t driver.ElemType) (int, bool) {
	switch t {
	case driver.Float32:
		return cudaR32F, true
	case driver.Float16:
		return cudaR16F, true
	case driver.BFloat16:
		return cudaR16BF, true
	case driver.Float8E4M3:
		return cudaR8FE4M3, true
	case driver.Float8E5M2:
		return cudaR8FE5M2, true
	}
	return 0, false
}

// ltRefuse returns, for the row-major GEMM g on a GPU of compute capability cc (major*10 +
// minor), why cuBLASLt cannot compute it, wrapping driver.ErrUnsupported, or nil. The rules
// are cuBLASLt's (cublasLtMatmul's table of supported types, and its FP8 conditions):
// float32 C and accumulation; float32 inputs as tf32 (CUBLAS_COMPUTE_32F_FAST_TF32) and
// 16- and 8-bit inputs in float32 (CUBLAS_COMPUTE_32F); tf32 and bfloat16 from sm_80,
// float8 from sm_89; E5M2 only with an E4M3 operand (A and B here have one type); and
// before Blackwell (sm_100) float8 in the "TN" form only: column-major A transposed and B
// not, which is row-major A as stored (M x K) and B transposed (stored N x K).
func ltRefuse(g driver.MixedGemmArgs, cc int) error {
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("cuda: cuBLASLt: "+format+": %w", append(args, driver.ErrUnsupported)...)
	}
	if g.Type != driver.Float32 {
		return refuse("C of %v: only float32 C and accumulation are offered", g.Type)
	}
	if _, ok := ltDataType(g.In); !ok {
		return refuse("no GEMM of %v inputs", g.In)
	}
	switch {
	case g.In == driver.Float32 && g.Compute != driver.ComputeTF32:
		return refuse("float32 inputs are multiplied as tf32 only (the float32 GEMM is cuBLAS's SGEMM)")
	case g.In != driver.Float32 && g.Compute != driver.ComputeFloat32:
		return refuse("%v inputs are multiplied as stored, not as %v", g.In, g.Compute)
	}
	name := g.In.String()
	if g.In == driver.Float32 {
		name = "tf32"
	}
	need := 80
	switch g.In {
	case driver.Float16:
		need = 0
	case driver.Float8E4M3, driver.Float8E5M2:
		need = 89
	}
	if cc < need {
		return refuse("%s GEMM needs compute capability %d.%d or newer; the device is %d.%d", name, need/10, need%10, cc/10, cc%10)
	}
	if g.In == driver.Float8E5M2 {
		return refuse("float8e5m2 times float8e5m2 is not offered (E5M2 only with an E4M3 operand)")
	}
	if g.In == driver.Float8E4M3 && cc < 100 && (g.TransA || !g.TransB) {
		return refuse("%s GEMM on sm_%d takes A as stored (M x K) and B transposed (stored N x K) only, the \"TN\" form of its column-major API; this GEMM is %s (%s, %s)",
			name, cc, layoutName(g.TransA, g.TransB), storedName("A", g.TransA, "K x M", "M x K"), storedName("B", g.TransB, "N x K", "K x N"))
	}
	return nil
}

// layoutName returns "nn", "nt", "tn" or "tt".
func layoutName(ta, tb bool) string {
	t := func(b bool) string {
		if b {
			return "t"
		}
		return "n"
	}
	return t(ta) + t(tb)
}

// storedName says how a matrix is stored: "A stored M x K".
func storedName(m string, trans bool, transposed, plain string) string {
	if trans {
		return m + " stored " + transposed
	}
	return m + " stored " + plain
}

// alignOf returns the largest power of two, at most 256, that divides the address p: the
// alignment cuBLASLt's heuristic is told the operand has.
func alignOf(p devptr) int {
	a := 1
	for a < 256 && p%devptr(2*a) == 0 {
		a *= 2
	}
	return a
}

// ltColumnMajor maps the row-major mixed GEMM g to cuBLASLt's column-major one as
// columnMajor maps it for cuBLAS (C^T = op(B)^T op(A)^T: the call's A is the buffer of B,
// its B the buffer of A, m = N, n = M), with each operand's layout: a row-major matrix of
// r rows and c columns with leading dimension ld is, read by columns, a c x r matrix with
// the same ld. a, b and c are the buffers' addresses.
func ltColumnMajor(g driver.MixedGemmArgs, a, b, c devptr) (ltGemm, error) {
	cm, err := columnMajor(g.GemmArgs, a, b, c)
	if err != nil {
		return ltGemm{}, err
	}
	in, _ := ltDataType(g.In)
	compute := cublasCompute32F
	if g.Compute == driver.ComputeTF32 {
		compute = cublasCompute32FFastTF32
	}
	stored := func(trans bool, rows, cols int) (int, int) { // op(X) rows x cols: X as stored, column-major
		if trans {
			return cols, rows
		}
		return rows, cols
	}
	ar, ac := stored(cm.transA == cublasOpT, cm.m, cm.k)
	br, bc := stored(cm.transB == cublasOpT, cm.k, cm.n)
	return ltGemm{
		compute: compute, transA: cm.transA, transB: cm.transB, m: cm.m, n: cm.n, k: cm.k,
		a:     ltLayout{typ: in, rows: ar, cols: ac, ld: cm.lda, stride: cm.strideA},
		b:     ltLayout{typ: in, rows: br, cols: bc, ld: cm.ldb, stride: cm.strideB},
		c:     ltLayout{typ: cudaR32F, rows: cm.m, cols: cm.n, ld: cm.ldc, stride: cm.strideC},
		batch: cm.batch, alignA: alignOf(cm.a), alignB: alignOf(cm.b), alignC: alignOf(cm.c),
	}, nil
}

// String describes the column-major call as cuBLASLt sees it.
func (g ltGemm) String() string {
	op := map[int]string{cublasOpN: "N", cublasOpT: "T"}
	s := fmt.Sprintf("%s%s m=%d n=%d k=%d lda=%d ldb=%d ldc=%d", op[g.transA], op[g.transB], g.m, g.n, g.k, g.a.ld, g.b.ld, g.c.ld)
	if g.batch > 1 {
		s += fmt.Sprintf(" batch=%d", g.batch)
	}
	return s
}

func (l ltLayout) c() C.prism_lt_layout {
	return C.prism_lt_layout{_type: C.int(l.typ), rows: C.uint64_t(l.rows), cols: C.uint64_t(l.cols), ld: C.int64_t(l.ld), stride: C.int64_t(l.stride)}
}

// GemmMixed enqueues the row-major mixed-precision GEMM through cuBLASLt (cublasLtMatmul,
// in place, on the column-major form of ltColumnMajor) after the checks of ltRefuse. The
// first GEMM of a shape on a stream asks cuBLASLt's heuristic for an algorithm within
// blasLtWorkspace bytes and keeps the plan; a shape it has none for gives an error
// wrapping driver.ErrUnsupported that names the shape. The event spans the call.
func (b *blas) GemmMixed(dq driver.Queue, g driver.MixedGemmArgs) (driver.Event, error) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, errClosed("cuBLAS handle")
	}
	if _, err := loadBLASLt(); err != nil {
		return nil, err
	}
	q, ok := dq.(*queue)
	if !ok || q == nil {
		return nil, fmt.Errorf("cuda: queue %T is not a CUDA queue: %w", dq, driver.ErrInvalidArg)
	}
	cc := b.d.info.ComputeCapability
	if err := ltRefuse(g, cc); err != nil {
		return nil, err
	}
	var ptr [3]devptr
	for i, db := range []driver.Buffer{g.A, g.B, g.C} {
		cb, err := asBuffer(db)
		if err != nil {
			return nil, err
		}
		ptr[i] = cb.ptr
	}
	lg, err := ltColumnMajor(g, ptr[0], ptr[1], ptr[2])
	if err != nil {
		return nil, err
	}
	return q.command("cublasLtMatmul", func() error {
		b.lt.mu.Lock()
		defer b.lt.mu.Unlock()
		s, err := b.lt.stream(q.stream)
		if err != nil {
			return err
		}
		p, err := s.plan(lg, g, cc)
		if err != nil {
			return err
		}
		st := BLASStatus(C.prism_lt_matmul(s.h, p, C.float(g.Alpha), C.float(g.Beta), C.ulonglong(ptr[1]), C.ulonglong(ptr[0]),
			C.ulonglong(ptr[2]), C.ulonglong(s.ws), C.size_t(blasLtWorkspace), unsafe.Pointer(q.stream)))
		return checkBLAS(fmt.Sprintf("cublasLtMatmul(%v %s)", g.In, lg), st)
	})
}

// stream returns cuBLASLt's state on stream s, making its handle and workspace on first
// use. It runs with the device's context current and l.mu held.
func (l *blasLt) stream(s cuStream) (*ltStream, error) {
	if st, ok := l.streams[s]; ok {
		return st, nil
	}
	var h C.cublasLtHandle_t
	if err := checkBLAS("cublasLtCreate", BLASStatus(C.prism_lt_create(&h))); err != nil {
		return nil, err
	}
	ws, r := cuMemAlloc(blasLtWorkspace)
	if err := check(fmt.Sprintf("cuMemAlloc_v2(%d bytes: cuBLASLt's workspace)", blasLtWorkspace), r); err != nil {
		C.prism_lt_destroy(h)
		return nil, err
	}
	if l.streams == nil {
		l.streams = map[cuStream]*ltStream{}
	}
	st := &ltStream{h: h, ws: ws, plans: map[ltGemm]*C.prism_lt_plan{}}
	l.streams[s] = st
	return st, nil
}

// plan returns the stream's plan of g, making it on first use. A shape for which the
// heuristic has no algorithm gives an error wrapping driver.ErrUnsupported.
func (s *ltStream) plan(g ltGemm, args driver.MixedGemmArgs, cc int) (*C.prism_lt_plan, error) {
	if p, ok := s.plans[g]; ok {
		return p, nil
	}
	// C memory: the plan outlives this call and holds the library's pointers.
	p := (*C.prism_lt_plan)(C.calloc(1, C.size_t(unsafe.Sizeof(C.prism_lt_plan{}))))
	if p == nil {
		return nil, fmt.Errorf("cuda: cuBLASLt plan: out of host memory: %w", driver.ErrOutOfMemory)
	}
	var step, found C.int
	st := BLASStatus(C.prism_lt_plan_make(s.h, p, C.int(g.compute), C.int32_t(g.transA), C.int32_t(g.transB),
		g.a.c(), g.b.c(), g.c.c(), C.int32_t(g.batch), C.uint64_t(blasLtWorkspace),
		C.uint32_t(g.alignA), C.uint32_t(g.alignB), C.uint32_t(g.alignC), &step, &found))
	if st != BLASSuccess {
		C.prism_lt_plan_free(p)
		C.free(unsafe.Pointer(p))
		if step == C.fn_cublasLtMatmulAlgoGetHeuristic && (found == 0 || errors.Is(st, driver.ErrUnsupported)) {
			return nil, fmt.Errorf("cuda: cublasLtMatmulAlgoGetHeuristic: %v: cuBLASLt has no algorithm for %v inputs and %v C (%s arithmetic) in the column-major form %s on sm_%d (the row-major GEMM is %s M=%d N=%d K=%d): %w",
				st, args.In, args.Type, args.Compute, g, cc, layoutName(args.TransA, args.TransB), args.M, args.N, args.K, driver.ErrUnsupported)
		}
		return nil, checkBLAS(blasLtSymbols[int(step)].name, st)
	}
	s.plans[g] = p
	return p, nil
}

// close destroys the plans and handles and frees the workspaces, on the device's thread
// (blas.Close calls it there), after the queues have finished.
func (l *blasLt) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, s := range l.streams {
		for _, p := range s.plans {
			C.prism_lt_plan_free(p)
			C.free(unsafe.Pointer(p))
		}
		errs = append(errs, checkBLAS("cublasLtDestroy", BLASStatus(C.prism_lt_destroy(s.h))))
		errs = append(errs, check("cuMemFree_v2", cuMemFree(s.ws)))
	}
	l.streams = nil
	return errors.Join(errs...)
}

// blasLtDeclared returns every number this file declares from the cuBLASLt headers, by
// the headers' names, and the sizes and offsets of the structures it lays out itself: what
// TestBLASLtHeader compares with a program compiled against the installed headers.
func blasLtDeclared() map[string]int {
	var h C.prism_lt_heuristic
	return map[string]int{
		"CUDA_R_32F": cudaR32F, "CUDA_R_16F": cudaR16F, "CUDA_R_16BF": cudaR16BF,
		"CUDA_R_8F_E4M3": cudaR8FE4M3, "CUDA_R_8F_E5M2": cudaR8FE5M2,
		"CUBLAS_COMPUTE_32F": cublasCompute32F, "CUBLAS_COMPUTE_32F_FAST_TF32": cublasCompute32FFastTF32,
		"CUBLAS_OP_N": cublasOpN, "CUBLAS_OP_T": cublasOpT,
		"CUBLASLT_MATMUL_DESC_TRANSA":                 int(C.LT_DESC_TRANSA),
		"CUBLASLT_MATMUL_DESC_TRANSB":                 int(C.LT_DESC_TRANSB),
		"CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT":          int(C.LT_LAYOUT_BATCH_COUNT),
		"CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET": int(C.LT_LAYOUT_STRIDED_BATCH_OFFSET),
		"CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES":    int(C.LT_PREF_MAX_WORKSPACE_BYTES),
		"CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES":  int(C.LT_PREF_MIN_ALIGNMENT_A_BYTES),
		"CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES":  int(C.LT_PREF_MIN_ALIGNMENT_A_BYTES) + 1,
		"CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES":  int(C.LT_PREF_MIN_ALIGNMENT_A_BYTES) + 2,
		"CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES":  int(C.LT_PREF_MIN_ALIGNMENT_A_BYTES) + 3,
		"CUBLASLT_POINTER_MODE_HOST":                  0,
		"sizeof(cublasLtMatmulAlgo_t)":                int(unsafe.Sizeof(h.algo)),
		"sizeof(cublasLtMatmulHeuristicResult_t)":     int(unsafe.Sizeof(h)),
		"offsetof(workspaceSize)":                     int(unsafe.Offsetof(h.workspaceSize)),
		"offsetof(state)":                             int(unsafe.Offsetof(h.state)),
		"offsetof(wavesCount)":                        int(unsafe.Offsetof(h.wavesCount)),
	}
}
