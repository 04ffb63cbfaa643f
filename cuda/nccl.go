package cuda

// NCCL (libnccl.so.2), loaded with dlopen on first use like the vendor libraries (vendor.go):
// the functions below are declared here from nccl.h, so that neither NCCL nor a CUDA
// toolkit is needed to build. Devices implement driver.CollectiveProvider with it, so that
// engine runs all-reduce, all-gather, reduce-scatter and broadcast on the devices' own
// streams and buffers, across the devices of this process and of others. There is no
// OpenCL counterpart: engine stages the collectives of OpenCL devices through host memory.
//
// NCCL manages several devices from one thread only through group calls
// (ncclGroupStart ... ncclGroupEnd): each call below that concerns every device of a
// communicator is one C function that opens a group, makes each device's primary context
// current (the context NCCL's CUDA runtime works in: cudaSetDevice's) and makes that
// device's call, then ends the group. These functions run on the calling goroutine locked
// to its OS thread, never on a device's thread: NCCL makes other devices' contexts current
// on the thread it is called from, and communicator creation blocks until every rank of
// every process has joined.

/*
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int ncclResult_t;
typedef void *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId; // NCCL_UNIQUE_ID_BYTES, passed by value
typedef int CUresult;
typedef void *CUcontext;
typedef void *CUstream; // cudaStream_t: the two are interchangeable

enum {
	fn_ncclGetVersion,
	fn_ncclGetUniqueId,
	fn_ncclCommInitRank,
	fn_ncclGroupStart,
	fn_ncclGroupEnd,
	fn_ncclAllReduce,
	fn_ncclAllGather,
	fn_ncclReduceScatter,
	fn_ncclBroadcast,
	fn_ncclCommDestroy,
	fn_ncclGetErrorString,
	fn_ncclCommFinalize,
	fn_ncclCommAbort,
	fn_ncclCommGetAsyncError,
	fn_ncclCommCuDevice,
	fn_ncclGetLastError,
	nccl_count
};

// step_cuCtxSetCurrent marks a failure of the driver's cuCtxSetCurrent in a status.
enum { step_cuCtxSetCurrent = nccl_count };

// nccl holds the resolved functions, written under the Go loader's lock before any call
// can be made.
static void *nccl[nccl_count];
static void prism_nccl_set(int i, void *f) { nccl[i] = f; }
static int prism_nccl_have(int i) { return nccl[i] != NULL; }

typedef CUresult (*prism_ctx_set)(CUcontext);

static ncclResult_t prism_nccl_version(int *v) { return ((ncclResult_t (*)(int *))nccl[fn_ncclGetVersion])(v); }

static ncclResult_t prism_nccl_unique_id(void *out) {
	ncclUniqueId id;
	memset(&id, 0, sizeof id);
	ncclResult_t st = ((ncclResult_t (*)(ncclUniqueId *))nccl[fn_ncclGetUniqueId])(&id);
	memcpy(out, &id, sizeof id);
	return st;
}

static const char *prism_nccl_error_string(ncclResult_t r) {
	return ((const char *(*)(ncclResult_t))nccl[fn_ncclGetErrorString])(r);
}

// prism_nccl_last_error returns NCCL's last warning (ncclGetLastError, NCCL 2.13), or NULL.
static const char *prism_nccl_last_error(void) {
	if (nccl[fn_ncclGetLastError] == NULL) return NULL;
	return ((const char *(*)(ncclComm_t))nccl[fn_ncclGetLastError])(NULL);
}

static ncclResult_t prism_nccl_group_start(void) { return ((ncclResult_t (*)(void))nccl[fn_ncclGroupStart])(); }
static ncclResult_t prism_nccl_group_end(void) { return ((ncclResult_t (*)(void))nccl[fn_ncclGroupEnd])(); }

static ncclResult_t prism_nccl_init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank) {
	return ((ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int))nccl[fn_ncclCommInitRank])(comm, nranks, *id, rank);
}

// prism_nccl_status is the first failure of a call over several devices: the step (the
// index of the NCCL function, or step_cuCtxSetCurrent), the device's index in the call
// (-1 for the group's own calls), and the result of NCCL or of the driver.
typedef struct {
	int step;
	int at;
	ncclResult_t nccl;
	CUresult cuda;
} prism_nccl_status;

static void prism_nccl_fail(prism_nccl_status *s, int step, int at, ncclResult_t st, CUresult r) {
	if (s->nccl != 0 || s->cuda != 0) return; // the first failure is kept
	s->step = step;
	s->at = at;
	s->nccl = st;
	s->cuda = r;
}

// prism_nccl_contexts makes each context current in turn, before a group is opened: a
// context that cannot be made current fails the call before NCCL has anything to undo.
static int prism_nccl_contexts(prism_ctx_set set, int n, const CUcontext *ctx, prism_nccl_status *s) {
	for (int i = 0; i < n; i++) {
		CUresult r = set(ctx[i]);
		if (r != 0) {
			prism_nccl_fail(s, step_cuCtxSetCurrent, i, 0, r);
			return 0;
		}
	}
	return 1;
}

// prism_nccl_init makes the communicators of n devices in one group: for device i, its
// context ctx[i] current, then ncclCommInitRank(&comms[i], nranks, id, ranks[i]) (NCCL
// binds the communicator to the current device). ncclGroupEnd returns once every rank of
// every process has joined. Should a context fail to be made current inside the group
// (it was made current a moment before), an invalid rank is requested so that NCCL
// records a failure and ncclGroupEnd abandons the group instead of waiting for the rank
// that never joined.
static void prism_nccl_init(void *setp, int n, const CUcontext *ctx, const int *ranks, int nranks, const void *idp,
		ncclComm_t *comms, prism_nccl_status *s) {
	prism_ctx_set set = (prism_ctx_set)setp;
	ncclUniqueId id;
	memcpy(&id, idp, sizeof id);
	if (!prism_nccl_contexts(set, n, ctx, s)) return;
	ncclResult_t st = prism_nccl_group_start();
	if (st != 0) {
		prism_nccl_fail(s, fn_ncclGroupStart, -1, st, 0);
		return;
	}
	for (int i = 0; i < n; i++) {
		CUresult r = set(ctx[i]);
		if (r != 0) {
			ncclComm_t none = NULL;
			prism_nccl_fail(s, step_cuCtxSetCurrent, i, 0, r);
			prism_nccl_init_rank(&none, 1, &id, -1);
			break;
		}
		st = prism_nccl_init_rank(&comms[i], nranks, &id, ranks[i]);
		if (st != 0) {
			prism_nccl_fail(s, fn_ncclCommInitRank, i, st, 0);
			break;
		}
	}
	st = prism_nccl_group_end();
	if (st != 0) prism_nccl_fail(s, fn_ncclGroupEnd, -1, st, 0);
}

// prism_nccl_call is one device's part of a collective: kind is driver.CollectiveKind
// (1 all-reduce, 2 all-gather, 3 reduce-scatter, 4 broadcast), type an ncclDataType_t, op
// an ncclRedOp_t, count as the NCCL function takes it (all-gather's sendcount,
// reduce-scatter's recvcount).
typedef struct {
	CUcontext ctx;
	CUstream stream;
	ncclComm_t comm;
	unsigned long long send, recv;
	size_t count;
	int kind, type, op, root;
} prism_nccl_call;

static ncclResult_t prism_nccl_enqueue(const prism_nccl_call *c, int *fn) {
	const void *s = (const void *)(uintptr_t)c->send;
	void *r = (void *)(uintptr_t)c->recv;
	switch (c->kind) {
	case 1:
		*fn = fn_ncclAllReduce;
		return ((ncclResult_t (*)(const void *, void *, size_t, int, int, ncclComm_t, CUstream))nccl[fn_ncclAllReduce])(
			s, r, c->count, c->type, c->op, c->comm, c->stream);
	case 2:
		*fn = fn_ncclAllGather;
		return ((ncclResult_t (*)(const void *, void *, size_t, int, ncclComm_t, CUstream))nccl[fn_ncclAllGather])(
			s, r, c->count, c->type, c->comm, c->stream);
	case 3:
		*fn = fn_ncclReduceScatter;
		return ((ncclResult_t (*)(const void *, void *, size_t, int, int, ncclComm_t, CUstream))nccl[fn_ncclReduceScatter])(
			s, r, c->count, c->type, c->op, c->comm, c->stream);
	case 4:
		*fn = fn_ncclBroadcast;
		return ((ncclResult_t (*)(const void *, void *, size_t, int, int, ncclComm_t, CUstream))nccl[fn_ncclBroadcast])(
			s, r, c->count, c->type, c->root, c->comm, c->stream);
	}
	*fn = fn_ncclAllReduce;
	return 4; // ncclInvalidArgument
}

// prism_nccl_run enqueues one collective, part i on device i's stream: first each
// communicator's asynchronous error is checked (ncclCommGetAsyncError, where the library
// has it), so that nothing is enqueued on a communicator a failed peer left broken; then,
// in one group, each device's context is made current and its part enqueued. ncclGroupEnd
// returns once every part is on its stream. A part NCCL refuses fails the group, which NCCL
// then abandons; should a context fail to be made current inside the group, a call on no
// communicator (refused by NCCL) fails it the same way, so that no collective is launched
// with a part missing.
static void prism_nccl_run(void *setp, int n, const prism_nccl_call *c, prism_nccl_status *s) {
	prism_ctx_set set = (prism_ctx_set)setp;
	ncclResult_t st;
	if (nccl[fn_ncclCommGetAsyncError] != NULL) {
		for (int i = 0; i < n; i++) {
			ncclResult_t async = 0;
			st = ((ncclResult_t (*)(ncclComm_t, ncclResult_t *))nccl[fn_ncclCommGetAsyncError])(c[i].comm, &async);
			if (st == 0 && async != 0 && async != 7) st = async; // 7: ncclInProgress
			if (st != 0) {
				prism_nccl_fail(s, fn_ncclCommGetAsyncError, i, st, 0);
				return;
			}
		}
	}
	for (int i = 0; i < n; i++) {
		CUresult r = set(c[i].ctx);
		if (r != 0) {
			prism_nccl_fail(s, step_cuCtxSetCurrent, i, 0, r);
			return;
		}
	}
	st = prism_nccl_group_start();
	if (st != 0) {
		prism_nccl_fail(s, fn_ncclGroupStart, -1, st, 0);
		return;
	}
	for (int i = 0; i < n; i++) {
		int fn;
		CUresult r = set(c[i].ctx);
		if (r != 0) {
			prism_nccl_call none;
			memset(&none, 0, sizeof none);
			none.kind = 1;
			none.type = 7;
			prism_nccl_fail(s, step_cuCtxSetCurrent, i, 0, r);
			prism_nccl_enqueue(&none, &fn);
			break;
		}
		st = prism_nccl_enqueue(&c[i], &fn);
		if (st != 0) {
			prism_nccl_fail(s, fn, i, st, 0);
			break;
		}
	}
	st = prism_nccl_group_end();
	if (st != 0) prism_nccl_fail(s, fn_ncclGroupEnd, -1, st, 0);
}

// prism_nccl_close destroys n communicators, setting each to NULL. Where the library has
// ncclCommFinalize (NCCL 2.14), the communicators are first finalized in one group (their
// outstanding work flushed, with every local rank at once), then destroyed, or aborted
// (ncclCommAbort) if finalizing failed. A context that cannot be made current is reported
// but does not stop the others: NCCL sets each communicator's device itself.
static void prism_nccl_close(void *setp, int n, const CUcontext *ctx, ncclComm_t *comms, prism_nccl_status *s) {
	prism_ctx_set set = (prism_ctx_set)setp;
	ncclResult_t st;
	int failed = 0;
	if (nccl[fn_ncclCommFinalize] != NULL) {
		st = prism_nccl_group_start();
		if (st != 0) {
			prism_nccl_fail(s, fn_ncclGroupStart, -1, st, 0);
			failed = 1;
		} else {
			for (int i = 0; i < n; i++) {
				if (comms[i] == NULL) continue;
				CUresult r = set(ctx[i]);
				if (r != 0) prism_nccl_fail(s, step_cuCtxSetCurrent, i, 0, r);
				st = ((ncclResult_t (*)(ncclComm_t))nccl[fn_ncclCommFinalize])(comms[i]);
				if (st != 0) {
					prism_nccl_fail(s, fn_ncclCommFinalize, i, st, 0);
					failed = 1;
				}
			}
			st = prism_nccl_group_end();
			if (st != 0) {
				prism_nccl_fail(s, fn_ncclGroupEnd, -1, st, 0);
				failed = 1;
			}
		}
	}
	int fn = failed && nccl[fn_ncclCommAbort] != NULL ? fn_ncclCommAbort : fn_ncclCommDestroy;
	for (int i = 0; i < n; i++) {
		if (comms[i] == NULL) continue;
		CUresult r = set(ctx[i]);
		if (r != 0) prism_nccl_fail(s, step_cuCtxSetCurrent, i, 0, r);
		st = ((ncclResult_t (*)(ncclComm_t))nccl[fn])(comms[i]);
		if (st != 0) prism_nccl_fail(s, fn, i, st, 0);
		comms[i] = NULL;
	}
}

// prism_nccl_abort aborts the communicators a failed creation left (ncclCommAbort, or
// ncclCommDestroy where the library has no abort), setting each to NULL.
static void prism_nccl_abort(int n, ncclComm_t *comms) {
	int fn = nccl[fn_ncclCommAbort] != NULL ? fn_ncclCommAbort : fn_ncclCommDestroy;
	for (int i = 0; i < n; i++) {
		if (comms[i] == NULL) continue;
		((ncclResult_t (*)(ncclComm_t))nccl[fn])(comms[i]);
		comms[i] = NULL;
	}
}

// prism_nccl_cu_device returns the CUDA device of a communicator (ncclCommCuDevice), or
// -1 where the library cannot tell.
static int prism_nccl_cu_device(ncclComm_t comm) {
	int dev = -1;
	if (nccl[fn_ncclCommCuDevice] == NULL) return -1;
	if (((ncclResult_t (*)(ncclComm_t, int *))nccl[fn_ncclCommCuDevice])(comm, &dev) != 0) return -1;
	return dev;
}
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/internal/dl"
)

// ncclLibraries are the file names of NCCL (2.x), tried in order.
var ncclLibraries = []string{"libnccl.so.2", "libnccl.so"}

// ncclSymbols are NCCL's functions, in the order of the C table. The optional ones are used
// where the library has them: ncclCommFinalize (NCCL 2.14), ncclCommAbort and
// ncclCommGetAsyncError (2.4), ncclCommCuDevice, ncclGetLastError (2.13).
var ncclSymbols = []vendorSymbol{
	{"ncclGetVersion", false},
	{"ncclGetUniqueId", false},
	{"ncclCommInitRank", false},
	{"ncclGroupStart", false},
	{"ncclGroupEnd", false},
	{"ncclAllReduce", false},
	{"ncclAllGather", false},
	{"ncclReduceScatter", false},
	{"ncclBroadcast", false},
	{"ncclCommDestroy", false},
	{"ncclGetErrorString", false},
	{"ncclCommFinalize", true},
	{"ncclCommAbort", true},
	{"ncclCommGetAsyncError", true},
	{"ncclCommCuDevice", true},
	{"ncclGetLastError", true},
}

// ncclUniqueIDBytes is the size of an ncclUniqueId (NCCL_UNIQUE_ID_BYTES): a communicator's
// identity, as CollectiveID returns it.
const ncclUniqueIDBytes = 128

// ncclNVLSEnv is the variable that turns NCCL's NVLink SHARP (NVLS) on or off.
const ncclNVLSEnv = "NCCL_NVLS_ENABLE"

// disableNVLS sets NCCL_NVLS_ENABLE=0 in the process's environment unless it is set
// already (to anything, even empty: the user's choice stands), and reports whether it set
// it. NVLink multicast (NVLS) is left off because on shared machines its multicast objects
// can take GPUs out of service; this backend never makes multicast objects itself
// (cuMulticastCreate). os.Setenv reaches C's environment, which NCCL reads.
func disableNVLS() bool {
	if _, ok := os.LookupEnv(ncclNVLSEnv); ok {
		return false
	}
	os.Setenv(ncclNVLSEnv, "0")
	return true
}

// ncclState is the process's NCCL, loaded once (a failure is tried again).
var ncclState struct {
	mu      sync.Mutex
	lib     *vendorLib
	version string
}

// loadNCCL loads NCCL on first use, after disableNVLS, and returns it with its version
// (ncclGetVersion). Without the library the error wraps driver.ErrUnavailable and names
// every file tried.
func loadNCCL() (*vendorLib, string, error) {
	ncclState.mu.Lock()
	defer ncclState.mu.Unlock()
	if ncclState.lib != nil {
		return ncclState.lib, ncclState.version, nil
	}
	how := "as the environment has it"
	if disableNVLS() {
		how = "set here"
	}
	lib, err := loadVendor("NCCL", ncclLibraries, ncclSymbols, nil)
	if err != nil {
		return nil, "", err
	}
	bindNCCL(lib)
	var v C.int
	if err := checkNCCL("ncclGetVersion", NCCLResult(C.prism_nccl_version(&v))); err != nil {
		return nil, "", err
	}
	ncclState.lib, ncclState.version = lib, ncclVersionString(int(v))
	tracef("loaded NCCL %s from %s (%s=%q, %s)", ncclState.version, lib.path, ncclNVLSEnv, os.Getenv(ncclNVLSEnv), how)
	return ncclState.lib, ncclState.version, nil
}

// bindNCCL writes a loaded library's functions into the C table.
func bindNCCL(lib *vendorLib) {
	for i, f := range lib.fns {
		C.prism_nccl_set(C.int(i), f)
	}
}

// ncclVersionString formats ncclGetVersion's number (NCCL_VERSION_CODE): major*10000 +
// minor*100 + patch since NCCL 2.9 (20900 and up), major*1000 + minor*100 + patch before.
func ncclVersionString(v int) string {
	if v >= 10000 {
		return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
	}
	return fmt.Sprintf("%d.%d.%d", v/1000, v%1000/100, v%100)
}

var _ driver.CollectiveProvider = (*device)(nil)

// CollectiveID loads NCCL (on the first call in the process) and returns a new
// communicator identity (ncclGetUniqueId, with the device's context current): 128 bytes
// that every process joining the communicator passes to NewCommunicator.
func (d *device) CollectiveID() ([]byte, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	if _, _, err := loadNCCL(); err != nil {
		return nil, err
	}
	id := make([]byte, ncclUniqueIDBytes)
	err := d.onCaller(func() error {
		return checkNCCL("ncclGetUniqueId", NCCLResult(C.prism_nccl_unique_id(unsafe.Pointer(&id[0]))))
	})
	if err != nil {
		return nil, err
	}
	return id, nil
}

// NewCommunicator makes the communicator id of nranks ranks in which devs[i] is rank
// ranks[i]: devs are this device first, then other devices of this backend, each a
// distinct CUDA device (NCCL does not support a device twice in one communicator). The
// ranks are made in one group (prism_nccl_init), from the calling goroutine locked to its
// thread, and NewCommunicator returns once every rank of every process has joined, which
// may take as long as the slowest process. Where the library reports the communicators'
// devices (ncclCommCuDevice), each must be its rank's.
func (d *device) NewCommunicator(devs []driver.Device, ranks []int, nranks int, id []byte) (driver.Communicator, error) {
	cdevs, err := communicatorDevices(d, devs, ranks, nranks, id)
	if err != nil {
		return nil, err
	}
	lib, version, err := loadNCCL()
	if err != nil {
		return nil, err
	}
	setCtx, err := driverCtxSetter()
	if err != nil {
		return nil, err
	}
	c := &communicator{
		devs:   cdevs,
		ranks:  append([]int(nil), ranks...),
		nranks: nranks,
		comms:  make([]C.ncclComm_t, len(cdevs)),
		setCtx: setCtx,
		lib:    driver.Library{Name: "NCCL", Version: version, Path: lib.path},
	}
	ctxs := c.contexts()
	cranks := make([]C.int, len(ranks))
	for i, r := range ranks {
		cranks[i] = C.int(r)
	}
	err = d.onCaller(func() error {
		var s C.prism_nccl_status
		C.prism_nccl_init(c.setCtx, C.int(len(cdevs)), &ctxs[0], &cranks[0], C.int(nranks), unsafe.Pointer(&id[0]), &c.comms[0], &s)
		if err := c.statusError(s, "", func(at int) string {
			return fmt.Sprintf("rank %d of %d on device %d", ranks[at], nranks, cdevs[at].ordinal)
		}); err != nil {
			C.prism_nccl_abort(C.int(len(c.comms)), &c.comms[0])
			return wrapf(err, "NCCL communicator of %d ranks", nranks)
		}
		for i, comm := range c.comms {
			if dev := int(C.prism_nccl_cu_device(comm)); dev >= 0 && dev != cdevs[i].ordinal {
				C.prism_nccl_abort(C.int(len(c.comms)), &c.comms[0])
				return fmt.Errorf("cuda: NCCL communicator of %d ranks: rank %d was made on CUDA device %d, not on device %d, whose context was current",
					nranks, ranks[i], dev, cdevs[i].ordinal)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tracef("NCCL %s communicator: ranks %v of %d on devices %v", version, ranks, nranks, c.ordinals())
	return c, nil
}

// communicatorDevices checks NewCommunicator's arguments and returns the devices: this
// device first, every one of this backend, open and distinct; one rank each, distinct and
// below nranks; an identity of ncclUniqueIDBytes bytes.
func communicatorDevices(d *device, devs []driver.Device, ranks []int, nranks int, id []byte) ([]*device, error) {
	switch {
	case len(devs) == 0 || len(ranks) != len(devs):
		return nil, fmt.Errorf("cuda: NCCL communicator of %d devices and %d ranks: want one rank per device, at least one: %w", len(devs), len(ranks), driver.ErrInvalidArg)
	case nranks < len(devs) || nranks > math.MaxInt32:
		return nil, fmt.Errorf("cuda: NCCL communicator of %d ranks for %d devices of this process: %w", nranks, len(devs), driver.ErrInvalidArg)
	case len(id) != ncclUniqueIDBytes:
		return nil, fmt.Errorf("cuda: NCCL communicator identity of %d bytes, not %d: %w", len(id), ncclUniqueIDBytes, driver.ErrInvalidArg)
	}
	out := make([]*device, len(devs))
	seenDev, seenRank := map[int]int{}, map[int]int{}
	for i, dd := range devs {
		cd, ok := dd.(*device)
		if !ok || cd == nil {
			return nil, fmt.Errorf("cuda: NCCL communicator: device %d is %T, not a CUDA device: %w", i, dd, driver.ErrInvalidArg)
		}
		if i == 0 && cd != d {
			return nil, fmt.Errorf("cuda: NCCL communicator: the first device must be the one making it: %w", driver.ErrInvalidArg)
		}
		if cd.closed.Load() {
			return nil, errClosed(fmt.Sprintf("device %d (CUDA device %d)", i, cd.ordinal))
		}
		if j, dup := seenDev[cd.ordinal]; dup {
			return nil, fmt.Errorf("cuda: NCCL communicator: devices %d and %d are both CUDA device %d (NCCL takes a device once per communicator): %w", j, i, cd.ordinal, driver.ErrInvalidArg)
		}
		r := ranks[i]
		if r < 0 || r >= nranks {
			return nil, fmt.Errorf("cuda: NCCL communicator: rank %d of device %d is outside 0 to %d: %w", r, i, nranks-1, driver.ErrInvalidArg)
		}
		if j, dup := seenRank[r]; dup {
			return nil, fmt.Errorf("cuda: NCCL communicator: devices %d and %d are both rank %d: %w", j, i, r, driver.ErrInvalidArg)
		}
		seenDev[cd.ordinal], seenRank[r] = i, i
		out[i] = cd
	}
	return out, nil
}

// driverCtxSetter returns the driver's cuCtxSetCurrent, from the libcuda the backend
// loaded, for the C functions here that make each device's context current in turn.
func driverCtxSetter() (unsafe.Pointer, error) {
	loader.mu.Lock()
	h := loader.cudaHandle
	loader.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("cuda: NCCL: the CUDA driver library is not loaded: %w", driver.ErrUnavailable)
	}
	f := dl.Sym(h, "cuCtxSetCurrent")
	if f == nil {
		return nil, fmt.Errorf("cuda: NCCL: the CUDA driver library has no cuCtxSetCurrent: %w", driver.ErrUnavailable)
	}
	return f, nil
}

// communicator is an NCCL communicator of this process's devices: one ncclComm_t per
// device, rank ranks[i] of nranks. Run and Close are not called concurrently; its mutex
// keeps a misuse from racing.
type communicator struct {
	devs   []*device
	ranks  []int
	nranks int
	comms  []C.ncclComm_t
	setCtx unsafe.Pointer // the driver's cuCtxSetCurrent
	lib    driver.Library
	mu     sync.Mutex
	closed bool
}

var _ driver.Communicator = (*communicator)(nil)

// Library returns NCCL's name, version (ncclGetVersion) and path.
func (c *communicator) Library() driver.Library { return c.lib }

func (c *communicator) contexts() []C.CUcontext {
	ctxs := make([]C.CUcontext, len(c.devs))
	for i, d := range c.devs {
		ctxs[i] = d.ctx
	}
	return ctxs
}

func (c *communicator) ordinals() []int {
	out := make([]int, len(c.devs))
	for i, d := range c.devs {
		out[i] = d.ordinal
	}
	return out
}

// ncclPart is one device's part of a collective, checked and in NCCL's terms.
type ncclPart struct {
	q          *queue
	send, recv devptr
	count      int64 // as the NCCL function takes it
	typ, op    int   // ncclDataType_t, ncclRedOp_t
	root       int
}

// Run enqueues one collective, calls[i] being the part of the communicator's i-th device,
// on its queue's stream: one C call (prism_nccl_run) from the calling goroutine locked to
// its thread, which checks the communicators for asynchronous errors, then enqueues every
// part in one group with its device's context current. The queues' commands complete with
// the collective's, and their Finish waits for it.
func (c *communicator) Run(calls []driver.CollectiveCall) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed("NCCL communicator")
	}
	parts, err := c.prepare(calls)
	if err != nil {
		return err
	}
	cc := make([]C.prism_nccl_call, len(parts))
	for i, p := range parts {
		cc[i] = C.prism_nccl_call{
			ctx: c.devs[i].ctx, stream: p.q.stream, comm: c.comms[i],
			send: C.ulonglong(p.send), recv: C.ulonglong(p.recv), count: C.size_t(p.count),
			kind: C.int(calls[i].Kind), _type: C.int(p.typ), op: C.int(p.op), root: C.int(p.root),
		}
		p.q.pending = true
	}
	return c.devs[0].onCaller(func() error {
		var s C.prism_nccl_status
		C.prism_nccl_run(c.setCtx, C.int(len(cc)), &cc[0], &s)
		k0 := calls[0]
		group := fmt.Sprintf("%v of %d %v on devices %v", k0.Kind, parts[0].count, k0.Type, c.ordinals())
		return c.statusError(s, group, func(at int) string {
			k := calls[at]
			what := fmt.Sprintf("rank %d of %d on device %d: %d %v", c.ranks[at], c.nranks, c.devs[at].ordinal, parts[at].count, k.Type)
			switch k.Kind {
			case driver.AllReduce, driver.ReduceScatter:
				what += ", " + k.Op.String()
			case driver.Broadcast:
				what += fmt.Sprintf(", root %d", k.Root)
			}
			return what
		})
	})
}

// prepare checks a collective's parts against the communicator: one per device, each on
// a queue of its device, with buffers of that device large enough for the collective as
// driver.CollectiveKind defines it, a type and reduction NCCL has, and for a broadcast a
// root among the ranks. A broadcast's Send may be nil on a rank that is not the root, whose
// Send NCCL does not read.
func (c *communicator) prepare(calls []driver.CollectiveCall) ([]ncclPart, error) {
	if len(calls) != len(c.devs) {
		return nil, fmt.Errorf("cuda: NCCL collective of %d parts for a communicator of %d devices in this process: %w", len(calls), len(c.devs), driver.ErrInvalidArg)
	}
	parts := make([]ncclPart, len(calls))
	for i, k := range calls {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("cuda: NCCL %v, part %d (rank %d): %s: %w", k.Kind, i, c.ranks[i], fmt.Sprintf(format, args...), driver.ErrInvalidArg)
		}
		if k.Kind != calls[0].Kind || k.Type != calls[0].Type || k.Count != calls[0].Count || k.Op != calls[0].Op || k.Root != calls[0].Root {
			return nil, fail("its kind, type, count, reduction or root differs from part 0's")
		}
		q, ok := k.Queue.(*queue)
		if !ok || q == nil {
			return nil, fail("queue %T is not a CUDA queue", k.Queue)
		}
		if q.d != c.devs[i] {
			return nil, fail("its queue is not one of its device's (CUDA device %d)", c.devs[i].ordinal)
		}
		if err := q.check(); err != nil {
			return nil, err
		}
		p := ncclPart{q: q, count: k.Count, root: k.Root}
		var ok2 bool
		if p.typ, ok2 = ncclType(k.Type); !ok2 {
			return nil, fail("element type %v", k.Type)
		}
		size := int64(k.Type.Size())
		n := int64(c.nranks)
		if k.Count < 0 || k.Count > math.MaxInt64/size/n {
			return nil, fail("count %d", k.Count)
		}
		sendLen, recvLen := k.Count, k.Count
		switch k.Kind {
		case driver.AllReduce:
		case driver.AllGather:
			recvLen = n * k.Count
		case driver.ReduceScatter:
			sendLen = n * k.Count
		case driver.Broadcast:
			if k.Root < 0 || k.Root >= c.nranks {
				return nil, fail("root %d is outside 0 to %d", k.Root, c.nranks-1)
			}
		default:
			return nil, fail("no such collective")
		}
		if k.Kind == driver.AllReduce || k.Kind == driver.ReduceScatter {
			if p.op, ok2 = ncclOp(k.Op); !ok2 {
				return nil, fail("reduction %v", k.Op)
			}
		}
		recv, err := c.partBuffer(k.Recv, i, recvLen*size, "Recv")
		if err != nil {
			return nil, err
		}
		p.recv = recv
		if k.Kind == driver.Broadcast && k.Send == nil && c.ranks[i] != k.Root {
			p.send = recv
		} else if p.send, err = c.partBuffer(k.Send, i, sendLen*size, "Send"); err != nil {
			return nil, err
		}
		parts[i] = p
	}
	return parts, nil
}

// partBuffer returns the device pointer of part i's buffer, which must be a buffer of the
// part's device holding at least bytes.
func (c *communicator) partBuffer(db driver.Buffer, i int, bytes int64, what string) (devptr, error) {
	b, err := asBuffer(db)
	if err != nil {
		return 0, wrapf(err, "NCCL collective, part %d: %s", i, what)
	}
	if b.d.ordinal != c.devs[i].ordinal {
		return 0, fmt.Errorf("cuda: NCCL collective, part %d: %s is a buffer of CUDA device %d, not of device %d: %w", i, what, b.d.ordinal, c.devs[i].ordinal, driver.ErrInvalidArg)
	}
	if b.size < bytes {
		return 0, fmt.Errorf("cuda: NCCL collective, part %d: %s holds %d bytes, the collective needs %d: %w", i, what, b.size, bytes, driver.ErrInvalidArg)
	}
	return b.ptr, nil
}

// Close destroys the communicators (prism_nccl_close: finalized together, then destroyed),
// from the calling goroutine locked to its thread. The queues that ran its collectives
// are finished, and engine closes the communicator before its devices. Idempotent.
func (c *communicator) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	ctxs := c.contexts()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var s C.prism_nccl_status
	C.prism_nccl_close(c.setCtx, C.int(len(c.comms)), &ctxs[0], &c.comms[0], &s)
	return c.statusError(s, fmt.Sprintf("ranks %v of %d on devices %v", c.ranks, c.nranks, c.ordinals()), func(at int) string {
		return fmt.Sprintf("rank %d of %d on device %d", c.ranks[at], c.nranks, c.devs[at].ordinal)
	})
}

// statusError turns a C function's status into an error naming the failing call: the NCCL
// function or cuCtxSetCurrent, with what part says of the device's part, or with group
// for the group's own calls (ncclGroupStart, ncclGroupEnd). A success gives nil.
func (c *communicator) statusError(s C.prism_nccl_status, group string, part func(at int) string) error {
	if s.nccl == 0 && s.cuda == 0 {
		return nil
	}
	at := int(s.at)
	if s.cuda != 0 {
		return check(fmt.Sprintf("cuCtxSetCurrent(CUDA device %d)", c.devs[at].ordinal), Result(s.cuda))
	}
	call := ncclSymbols[int(s.step)].name
	if at >= 0 {
		call = fmt.Sprintf("%s(%s)", call, part(at))
	} else if group != "" {
		call = fmt.Sprintf("%s(%s)", call, group)
	}
	return checkNCCL(call, NCCLResult(s.nccl))
}

// NCCL data types (ncclDataType_t) and reductions (ncclRedOp_t), as nccl.h numbers them.
const (
	ncclInt32   = 2
	ncclUint32  = 3
	ncclInt64   = 4
	ncclUint64  = 5
	ncclFloat32 = 7
	ncclFloat64 = 8

	ncclSum  = 0
	ncclProd = 1
	ncclMax  = 2
	ncclMin  = 3
)

// ncclType returns the ncclDataType_t of a collective's element type.
func ncclType(t driver.CollectiveType) (int, bool) {
	switch t {
	case driver.CollFloat32:
		return ncclFloat32, true
	case driver.CollFloat64:
		return ncclFloat64, true
	case driver.CollInt32:
		return ncclInt32, true
	case driver.CollUint32:
		return ncclUint32, true
	case driver.CollInt64:
		return ncclInt64, true
	case driver.CollUint64:
		return ncclUint64, true
	}
	return 0, false
}

// ncclOp returns the ncclRedOp_t of a reduction.
func ncclOp(o driver.ReduceOp) (int, bool) {
	switch o {
	case driver.ReduceSum:
		return ncclSum, true
	case driver.ReduceProd:
		return ncclProd, true
	case driver.ReduceMax:
		return ncclMax, true
	case driver.ReduceMin:
		return ncclMin, true
	}
	return 0, false
}

// NCCLResult is an NCCL result code (ncclResult_t). Its Error method gives the name from
// nccl.h; errors.Is matches it against the engine sentinels (see Is).
type NCCLResult int

// NCCL result codes (nccl.h).
const (
	NCCLSuccess            NCCLResult = 0
	NCCLUnhandledCudaError NCCLResult = 1
	NCCLSystemError        NCCLResult = 2
	NCCLInternalError      NCCLResult = 3
	NCCLInvalidArgument    NCCLResult = 4
	NCCLInvalidUsage       NCCLResult = 5
	NCCLRemoteError        NCCLResult = 6
	NCCLInProgress         NCCLResult = 7
	NCCLTimeout            NCCLResult = 8
)

var ncclResultNames = map[NCCLResult]string{
	NCCLSuccess:            "ncclSuccess",
	NCCLUnhandledCudaError: "ncclUnhandledCudaError",
	NCCLSystemError:        "ncclSystemError",
	NCCLInternalError:      "ncclInternalError",
	NCCLInvalidArgument:    "ncclInvalidArgument",
	NCCLInvalidUsage:       "ncclInvalidUsage",
	NCCLRemoteError:        "ncclRemoteError",
	NCCLInProgress:         "ncclInProgress",
	NCCLTimeout:            "ncclTimeout",
}

// Error returns the code's name from nccl.h, or "ncclResult_t(N)".
func (r NCCLResult) Error() string {
	if n, ok := ncclResultNames[r]; ok {
		return n
	}
	return fmt.Sprintf("ncclResult_t(%d)", int(r))
}

// Is reports whether r stands for target: an invalid argument or usage (a device twice in
// a communicator, a call outside a group that needed one) for driver.ErrInvalidArg; a
// failure of the system or of a remote rank (sockets, shared memory, a peer process that
// exited) for driver.ErrUnavailable.
func (r NCCLResult) Is(target error) bool {
	switch target {
	case driver.ErrInvalidArg:
		return r == NCCLInvalidArgument || r == NCCLInvalidUsage
	case driver.ErrUnavailable:
		return r == NCCLSystemError || r == NCCLRemoteError
	}
	return false
}

// ncclError is a failed NCCL call's result with NCCL's words for it: ncclGetErrorString's
// text and ncclGetLastError's last warning, which may concern an earlier call.
type ncclError struct {
	result NCCLResult
	text   string
	last   string
}

func (e *ncclError) Error() string {
	s := e.result.Error()
	if e.text != "" {
		s += ": " + e.text
	}
	if e.last != "" {
		s += "; NCCL's last warning: " + e.last
	}
	return s
}

func (e *ncclError) Unwrap() error { return e.result }

// ncclErrorOf names a failing NCCL call with its result and NCCL's texts: "cuda:
// ncclAllReduce(...): ncclInvalidArgument: invalid argument (run with NCCL_DEBUG=WARN for
// details); NCCL's last warning: ...". Success gives nil.
func ncclErrorOf(call string, r NCCLResult, text, last string) error {
	if r == NCCLSuccess {
		return nil
	}
	return &contextError{context: call, err: &ncclError{result: r, text: strings.TrimSpace(text), last: strings.TrimSpace(last)}}
}

// checkNCCL is ncclErrorOf with the loaded library's ncclGetErrorString and
// ncclGetLastError.
func checkNCCL(call string, r NCCLResult) error {
	if r == NCCLSuccess {
		return nil
	}
	var text, last string
	if C.prism_nccl_have(C.fn_ncclGetErrorString) != 0 {
		if p := C.prism_nccl_error_string(C.ncclResult_t(r)); p != nil {
			text = C.GoString(p)
		}
	}
	if p := C.prism_nccl_last_error(); p != nil {
		last = C.GoString(p)
	}
	return ncclErrorOf(call, r, text, last)
}
