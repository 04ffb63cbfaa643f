package mpi

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

// Handles travel from Go as uintptr_t: an address on Open MPI's ABI (abi 0), an int on
// MPICH's (abi 1). Each call casts them to the types its ABI's functions take.
typedef uintptr_t H;

// The sentinel send buffer MPI_IN_PLACE: (void *) 1 on Open MPI, (void *) -1 on MPICH.
static const void *prism_mpi_in_place(int abi) { return abi ? (const void *)-1 : (const void *)1; }

static int prism_mpi_int_out(void *fn, int *v) { return ((int (*)(int *))fn)(v); }
static int prism_mpi_void(void *fn) { return ((int (*)(void))fn)(); }
static int prism_mpi_init_thread(void *fn, int required, int *provided) {
	return ((int (*)(int *, char ***, int, int *))fn)(NULL, NULL, required, provided);
}
static int prism_mpi_string(void *fn, char *s, int *len) { return ((int (*)(char *, int *))fn)(s, len); }
static int prism_mpi_error_string(void *fn, int code, char *s, int *len) {
	return ((int (*)(int, char *, int *))fn)(code, s, len);
}

static int prism_mpi_comm_int(void *fn, int abi, H comm, int *v) {
	if (abi) return ((int (*)(int, int *))fn)((int)comm, v);
	return ((int (*)(void *, int *))fn)((void *)comm, v);
}
static int prism_mpi_set_errhandler(void *fn, int abi, H comm, H eh) {
	if (abi) return ((int (*)(int, int))fn)((int)comm, (int)eh);
	return ((int (*)(void *, void *))fn)((void *)comm, (void *)eh);
}
static int prism_mpi_barrier(void *fn, int abi, H comm) {
	if (abi) return ((int (*)(int))fn)((int)comm);
	return ((int (*)(void *))fn)((void *)comm);
}
static int prism_mpi_allreduce(void *fn, int abi, int inplace, const void *s, void *r, int n, H t, H op, H comm) {
	if (inplace) s = prism_mpi_in_place(abi);
	if (abi) return ((int (*)(const void *, void *, int, int, int, int))fn)(s, r, n, (int)t, (int)op, (int)comm);
	return ((int (*)(const void *, void *, int, void *, void *, void *))fn)(s, r, n, (void *)t, (void *)op, (void *)comm);
}
static int prism_mpi_bcast(void *fn, int abi, void *b, int n, H t, int root, H comm) {
	if (abi) return ((int (*)(void *, int, int, int, int))fn)(b, n, (int)t, root, (int)comm);
	return ((int (*)(void *, int, void *, int, void *))fn)(b, n, (void *)t, root, (void *)comm);
}
static int prism_mpi_allgatherv(void *fn, int abi, const void *s, int n, void *r, const int *counts, const int *displs, H t, H comm) {
	if (abi) return ((int (*)(const void *, int, int, void *, const int *, const int *, int, int))fn)(s, n, (int)t, r, counts, displs, (int)t, (int)comm);
	return ((int (*)(const void *, int, void *, void *, const int *, const int *, void *, void *))fn)(s, n, (void *)t, r, counts, displs, (void *)t, (void *)comm);
}
static int prism_mpi_reduce_scatter(void *fn, int abi, const void *s, void *r, const int *counts, H t, H op, H comm) {
	if (abi) return ((int (*)(const void *, void *, const int *, int, int, int))fn)(s, r, counts, (int)t, (int)op, (int)comm);
	return ((int (*)(const void *, void *, const int *, void *, void *, void *))fn)(s, r, counts, (void *)t, (void *)op, (void *)comm);
}

// prism_mpi_global makes a library opened RTLD_LOCAL global: Open MPI's components
// (dlopened by libmpi itself) resolve symbols of libmpi and its libraries by name.
static int prism_mpi_global(const char *path) {
	return dlopen(path, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) != NULL;
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

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/internal/dl"
	"github.com/prism-compute/prism/internal/osthread"
)

// ABI is the binary interface of an MPI library: how its handles are represented.
type ABI int

// The two MPI ABIs in use.
const (
	// OpenMPI: handles are pointers to global structures the library exports
	// (libmpi.so.40).
	OpenMPI ABI = iota
	// MPICH: handles are integers fixed by mpi.h (libmpi.so.12: MPICH, Intel MPI,
	// MVAPICH, Cray MPICH).
	MPICH
)

func (a ABI) String() string {
	if a == MPICH {
		return "MPICH"
	}
	return "Open MPI"
}

// Candidates are the library files tried, in order (each also in the directories of
// PRISM_VENDOR_PATH first): Open MPI's, then the MPICH family's (libmpi.so.12 of MPICH,
// Intel MPI and MVAPICH; libmpich.so.12 as Debian and Ubuntu name MPICH's).
var Candidates = []string{"libmpi.so.40", "libmpi.so.12", "libmpich.so.12"}

// The functions loaded, in the order of fns.
const (
	fnInitialized = iota
	fnFinalized
	fnInitThread
	fnFinalize
	fnCommRank
	fnCommSize
	fnAllreduce
	fnAllgatherv
	fnReduceScatter
	fnBcast
	fnBarrier
	fnVersion
	fnSetErrhandler
	fnErrorString
)

var symbols = []dl.Symbol{
	{Names: []string{"MPI_Initialized"}},
	{Names: []string{"MPI_Finalized"}},
	{Names: []string{"MPI_Init_thread"}},
	{Names: []string{"MPI_Finalize"}},
	{Names: []string{"MPI_Comm_rank"}},
	{Names: []string{"MPI_Comm_size"}},
	{Names: []string{"MPI_Allreduce"}},
	{Names: []string{"MPI_Allgatherv"}},
	{Names: []string{"MPI_Reduce_scatter"}},
	{Names: []string{"MPI_Bcast"}},
	{Names: []string{"MPI_Barrier"}},
	{Names: []string{"MPI_Get_library_version"}},
	{Names: []string{"MPI_Comm_set_errhandler"}},
	{Names: []string{"MPI_Error_string"}},
}

// handles are an ABI's predefined handles Prism uses.
type handles struct {
	world, errorsReturn uintptr
	types               map[driver.CollectiveType]uintptr
	ops                 map[driver.ReduceOp]uintptr
}

// mpichHandles are MPICH's, as its mpi.h defines them.
var mpichHandles = handles{
	world:        0x44000000,
	errorsReturn: 0x54000001,
	types: map[driver.CollectiveType]uintptr{
		driver.CollFloat32: 0x4c00040a, // MPI_FLOAT
		driver.CollFloat64: 0x4c00080b, // MPI_DOUBLE
		driver.CollInt32:   0x4c000439, // MPI_INT32_T
		driver.CollUint32:  0x4c00043d, // MPI_UINT32_T
		driver.CollInt64:   0x4c00083a, // MPI_INT64_T
		driver.CollUint64:  0x4c00083e, // MPI_UINT64_T
	},
	ops: map[driver.ReduceOp]uintptr{
		driver.ReduceMax:  0x58000001,
		driver.ReduceMin:  0x58000002,
		driver.ReduceSum:  0x58000003,
		driver.ReduceProd: 0x58000004,
	},
}

// openMPIGlobals names the global structures behind Open MPI's handles.
var openMPIGlobals = struct {
	world, errorsReturn string
	types               map[driver.CollectiveType]string
	ops                 map[driver.ReduceOp]string
}{
	world:        "ompi_mpi_comm_world",
	errorsReturn: "ompi_mpi_errors_return",
	types: map[driver.CollectiveType]string{
		driver.CollFloat32: "ompi_mpi_float",
		driver.CollFloat64: "ompi_mpi_double",
		driver.CollInt32:   "ompi_mpi_int32_t",
		driver.CollUint32:  "ompi_mpi_uint32_t",
		driver.CollInt64:   "ompi_mpi_int64_t",
		driver.CollUint64:  "ompi_mpi_uint64_t",
	},
	ops: map[driver.ReduceOp]string{
		driver.ReduceSum:  "ompi_mpi_op_sum",
		driver.ReduceProd: "ompi_mpi_op_prod",
		driver.ReduceMax:  "ompi_mpi_op_max",
		driver.ReduceMin:  "ompi_mpi_op_min",
	},
}

// openMPIHandles finds Open MPI's handles in the library h, or names the first missing.
func openMPIHandles(h unsafe.Pointer) (handles, error) {
	g := openMPIGlobals
	var missing []string
	sym := func(name string) uintptr {
		p := dl.Sym(h, name)
		if p == nil {
			missing = append(missing, name)
		}
		return uintptr(p)
	}
	hs := handles{world: sym(g.world), errorsReturn: sym(g.errorsReturn),
		types: map[driver.CollectiveType]uintptr{}, ops: map[driver.ReduceOp]uintptr{}}
	for t, n := range g.types {
		hs.types[t] = sym(n)
	}
	for o, n := range g.ops {
		hs.ops[o] = sym(n)
	}
	if len(missing) > 0 {
		return handles{}, fmt.Errorf("no %s", strings.Join(missing, ", "))
	}
	return hs, nil
}

// World is MPI_COMM_WORLD of the library this process was launched with, initialized
// (MPI_Init_thread) on a thread of its own. Its methods are collectives: every process
// calls them in the same order with matching arguments. It is safe for concurrent use:
// calls are serialized.
type World struct {
	lib    *dl.Library
	abi    ABI
	h      handles
	thread *osthread.Thread
	rank   int
	size   int
	name   string // "Open MPI v4.1.4", from MPI_Get_library_version's first line
	owns   bool   // this package initialized MPI (and finalizes it)

	mu     sync.Mutex
	closed bool
}

// maxCount is the most elements one MPI call moves (its counts are C ints); larger
// all-reduces and broadcasts run in pieces of this many. A variable for the tests.
var maxCount = math.MaxInt32

// pieceBytes is the most bytes one all-reduce or broadcast call moves: larger ones run in
// pieces. One call on 1 GiB costs Open MPI 4.1 a temporary buffer as large, mapped afresh
// (and faulted in page by page) each time: two processes on one 2-core host all-reduced
// 1 GiB of float32 at 0.8-1.7 GB/s in one call, 1.5-3.1 GB/s in pieces of 16 MiB
// (BenchmarkAllReduce, three runs each, alternated).
const pieceBytes = 16 << 20

// load opens the first MPI library of candidates that loads and says which ABI it has.
func load(candidates []string) (*dl.Library, ABI, handles, error) {
	lib, tried := dl.Load(candidates, symbols, nil)
	if lib == nil {
		return nil, 0, handles{}, fmt.Errorf("mpi: no MPI library loads (tried %s): %w", strings.Join(tried, "; "), engine.ErrUnavailable)
	}
	if dl.Sym(lib.Handle, "ompi_mpi_comm_world") != nil {
		hs, err := openMPIHandles(lib.Handle)
		if err != nil {
			return nil, 0, handles{}, fmt.Errorf("mpi: %s exports ompi_mpi_comm_world but %v: not an Open MPI this package knows: %w", lib.Path, err, engine.ErrUnavailable)
		}
		return lib, OpenMPI, hs, nil
	}
	return lib, MPICH, mpichHandles, nil
}

// Open loads the first MPI library of Candidates that loads and initializes MPI on a
// thread of its own (unless the program already did: then Close leaves it initialized).
// A library missing gives an error wrapping engine.ErrUnavailable that names every file
// tried. MPI starts once per process: after Close, Open fails.
func Open() (*World, error) {
	return open(driver.LibraryCandidates(Candidates))
}

// open is Open with the candidates given.
func open(candidates []string) (*World, error) {
	lib, abi, hs, err := load(candidates)
	if err != nil {
		return nil, err
	}
	if lib.Path != lib.Name {
		cpath := C.CString(lib.Path)
		C.prism_mpi_global(cpath)
		C.free(unsafe.Pointer(cpath))
	}
	w := &World{lib: lib, abi: abi, h: hs}
	w.thread, err = osthread.Start(w.init, fmt.Errorf("mpi: %s is finalized: %w", lib.Path, engine.ErrClosed))
	if err != nil {
		return nil, err
	}
	return w, nil
}

// init runs on the World's thread: MPI_Init_thread (FUNNELED: every call from this
// thread), errors returned rather than fatal, this process's rank and the size.
func (w *World) init() error {
	var flag C.int
	if err := w.check("MPI_Finalized", C.prism_mpi_int_out(w.fn(fnFinalized), &flag)); err != nil {
		return err
	}
	if flag != 0 {
		return fmt.Errorf("mpi: MPI is finalized in this process (%s); it starts once per process: %w", w.lib.Path, engine.ErrUnavailable)
	}
	if err := w.check("MPI_Initialized", C.prism_mpi_int_out(w.fn(fnInitialized), &flag)); err != nil {
		return err
	}
	if flag == 0 {
		var provided C.int
		if err := w.check("MPI_Init_thread", C.prism_mpi_init_thread(w.fn(fnInitThread), 1, &provided)); err != nil {
			return err
		}
		w.owns = true
	}
	if err := w.check("MPI_Comm_set_errhandler", C.prism_mpi_set_errhandler(w.fn(fnSetErrhandler), C.int(w.abi), C.H(w.h.world), C.H(w.h.errorsReturn))); err != nil {
		return err
	}
	var rank, size C.int
	if err := w.check("MPI_Comm_rank", C.prism_mpi_comm_int(w.fn(fnCommRank), C.int(w.abi), C.H(w.h.world), &rank)); err != nil {
		return err
	}
	if err := w.check("MPI_Comm_size", C.prism_mpi_comm_int(w.fn(fnCommSize), C.int(w.abi), C.H(w.h.world), &size)); err != nil {
		return err
	}
	w.rank, w.size = int(rank), int(size)
	w.name = w.version()
	return nil
}

// version returns the first line of MPI_Get_library_version, or the ABI's name.
func (w *World) version() string {
	buf := (*C.char)(C.calloc(8192, 1)) // MPI_MAX_LIBRARY_VERSION_STRING: 256 (Open MPI), 8192 (MPICH)
	defer C.free(unsafe.Pointer(buf))
	var n C.int
	if C.prism_mpi_string(w.fn(fnVersion), buf, &n) != 0 {
		return w.abi.String()
	}
	s := strings.TrimSpace(C.GoStringN(buf, min(n, 8191)))
	if i := strings.IndexAny(s, ",\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ") // MPICH's "MPICH Version:\t4.0.2"
	if s == "" {
		return w.abi.String()
	}
	return s
}

func (w *World) fn(i int) unsafe.Pointer { return w.lib.Fns[i] }

// check turns an MPI return code into an error that names the call and MPI's message.
func (w *World) check(call string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	buf := (*C.char)(C.calloc(1024, 1))
	defer C.free(unsafe.Pointer(buf))
	var n C.int
	msg := fmt.Sprintf("error %d", int(rc))
	if C.prism_mpi_error_string(w.fn(fnErrorString), rc, buf, &n) == 0 && n > 0 {
		msg = fmt.Sprintf("%s (error %d)", C.GoStringN(buf, min(n, 1023)), int(rc))
	}
	return fmt.Errorf("mpi: %s: %s", call, msg)
}

// ABI returns the library's binary interface.
func (w *World) ABI() ABI { return w.abi }

// Library names the MPI library: "Open MPI v4.1.4" and the file it was loaded from.
func (w *World) Library() engine.Library {
	return engine.Library{Name: w.name, Path: w.lib.Path}
}

// Rank returns this process's rank in MPI_COMM_WORLD.
func (w *World) Rank() int { return w.rank }

// Size returns the number of processes in MPI_COMM_WORLD.
func (w *World) Size() int { return w.size }

// do runs f on the MPI thread, unless the World is closed.
func (w *World) do(what string, f func() error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("mpi: %s: %s is finalized: %w", what, w.lib.Path, engine.ErrClosed)
	}
	return w.thread.Call(f)
}

// typeOf returns the MPI datatype of t and its size in bytes.
func (w *World) typeOf(t driver.CollectiveType) (C.H, int, error) {
	h, ok := w.h.types[t]
	if !ok || t.Size() == 0 {
		return 0, 0, fmt.Errorf("mpi: element type %v: %w", t, engine.ErrUnsupported)
	}
	return C.H(h), t.Size(), nil
}

// ptr is the address of b's first byte (nil for an empty b).
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

// AllReduce reduces buf, elements of type t, element-wise across every process, in place,
// in pieces of at most 16 MiB (every process gives the same length).
func (w *World) AllReduce(buf []byte, t driver.CollectiveType, op driver.ReduceOp) error {
	dt, es, err := w.typeOf(t)
	if err != nil {
		return err
	}
	o, ok := w.h.ops[op]
	if !ok {
		return fmt.Errorf("mpi: reduction %v: %w", op, engine.ErrUnsupported)
	}
	n, step := len(buf)/es, min(maxCount, pieceBytes/es)
	return w.do("MPI_Allreduce", func() error {
		for lo := 0; lo < n; lo += step {
			c := min(n-lo, step)
			p := ptr(buf[lo*es:])
			if err := w.check("MPI_Allreduce", C.prism_mpi_allreduce(w.fn(fnAllreduce), C.int(w.abi), 1, nil, p, C.int(c), dt, C.H(o), C.H(w.h.world))); err != nil {
				return err
			}
		}
		return nil
	})
}

// Broadcast copies root's buf, elements of type t, into every other process's, in pieces
// of at most 16 MiB.
func (w *World) Broadcast(buf []byte, t driver.CollectiveType, root int) error {
	dt, es, err := w.typeOf(t)
	if err != nil {
		return err
	}
	n, step := len(buf)/es, min(maxCount, pieceBytes/es)
	return w.do("MPI_Bcast", func() error {
		for lo := 0; lo < n; lo += step {
			c := min(n-lo, step)
			if err := w.check("MPI_Bcast", C.prism_mpi_bcast(w.fn(fnBcast), C.int(w.abi), ptr(buf[lo*es:]), C.int(c), dt, C.int(root), C.H(w.h.world))); err != nil {
				return err
			}
		}
		return nil
	})
}

// cints returns counts (elements) and their displacements as C ints, or an error where
// one does not fit.
func cints(what string, counts []int64) ([]C.int, []C.int, error) {
	cs, ds := make([]C.int, len(counts)), make([]C.int, len(counts))
	var at int64
	for i, c := range counts {
		if c < 0 || c > int64(maxCount) || at > int64(maxCount) {
			return nil, nil, fmt.Errorf("mpi: %s of %d elements from process %d at element %d: MPI counts and offsets end at %d: %w", what, c, i, at, maxCount, engine.ErrUnsupported)
		}
		cs[i], ds[i] = C.int(c), C.int(at)
		at += c
	}
	return cs, ds, nil
}

// AllGather leaves in recv every process's send, elements of type t, one after the other
// in rank order: process p gives counts[p] elements. Counts and offsets are below 2^31.
func (w *World) AllGather(send, recv []byte, counts []int64, t driver.CollectiveType) error {
	dt, es, err := w.typeOf(t)
	if err != nil {
		return err
	}
	cs, ds, err := cints("MPI_Allgatherv", counts)
	if err != nil {
		return err
	}
	if len(counts) != w.size || int64(len(send)) != counts[w.rank]*int64(es) {
		return fmt.Errorf("mpi: MPI_Allgatherv: %d counts for %d processes, %d bytes sent for %d elements: %w", len(counts), w.size, len(send), counts[min(w.rank, len(counts)-1)], engine.ErrInvalidArg)
	}
	return w.do("MPI_Allgatherv", func() error {
		return w.check("MPI_Allgatherv", C.prism_mpi_allgatherv(w.fn(fnAllgatherv), C.int(w.abi), ptr(send), C.int(len(send)/es), ptr(recv),
			unsafe.SliceData(cs), unsafe.SliceData(ds), dt, C.H(w.h.world)))
	})
}

// ReduceScatter reduces send, elements of type t, element-wise across every process and
// leaves in process p's recv its block of counts[p] elements, in rank order. Counts and
// offsets are below 2^31.
func (w *World) ReduceScatter(send, recv []byte, counts []int64, t driver.CollectiveType, op driver.ReduceOp) error {
	dt, es, err := w.typeOf(t)
	if err != nil {
		return err
	}
	o, ok := w.h.ops[op]
	if !ok {
		return fmt.Errorf("mpi: reduction %v: %w", op, engine.ErrUnsupported)
	}
	cs, _, err := cints("MPI_Reduce_scatter", counts)
	if err != nil {
		return err
	}
	var total int64
	for _, c := range counts {
		total += c
	}
	if len(counts) != w.size || int64(len(send)) != total*int64(es) || int64(len(recv)) != counts[w.rank]*int64(es) {
		return fmt.Errorf("mpi: MPI_Reduce_scatter: %d counts for %d processes, %d bytes sent, %d received: %w", len(counts), w.size, len(send), len(recv), engine.ErrInvalidArg)
	}
	return w.do("MPI_Reduce_scatter", func() error {
		return w.check("MPI_Reduce_scatter", C.prism_mpi_reduce_scatter(w.fn(fnReduceScatter), C.int(w.abi), ptr(send), ptr(recv),
			unsafe.SliceData(cs), dt, C.H(o), C.H(w.h.world)))
	})
}

// Barrier returns once every process has called it.
func (w *World) Barrier() error {
	return w.do("MPI_Barrier", func() error {
		return w.check("MPI_Barrier", C.prism_mpi_barrier(w.fn(fnBarrier), C.int(w.abi), C.H(w.h.world)))
	})
}

// Close finalizes MPI (MPI_Finalize) where Open initialized it, and stops its thread.
// MPI cannot start again in this process. Idempotent.
func (w *World) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if w.owns {
		err = w.thread.Call(func() error { return w.check("MPI_Finalize", C.prism_mpi_void(w.fn(fnFinalize))) })
	}
	w.thread.Stop()
	return errors.Join(err)
}
