package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
)

// NCCL's tests. TestNCCL needs CUDA devices and libnccl: it makes a communicator over every
// device of this process and checks each collective against a reference computed here;
// without a device it is skipped (failed under PRISM_REQUIRE=cuda), without NCCL too
// (failed under PRISM_REQUIRE=nccl). TestNCCLFake runs the same collectives, and NCCL's
// failures, through the C group calls against a fake libnccl over the fake driver
// (fault_test.go), whose device memory is host memory. The others need neither.

// TestNCCL (GPU) opens every CUDA device once and makes a communicator of all of them,
// ranks 0 to n-1 in this process, then one of the first device alone (a communicator of
// one rank), and refuses a device given twice.
func TestNCCL(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "cuda")
	drv := &Driver{}
	devs := make([]*device, len(ids))
	for i, id := range ids {
		dd, err := drv.Open(context.Background(), strings.TrimPrefix(id, "cuda:"))
		if err != nil {
			t.Fatal(err)
		}
		devs[i] = dd.(*device)
		t.Cleanup(func() {
			if err := dd.Close(); err != nil {
				t.Errorf("close %s: %v", id, err)
			}
		})
	}
	if _, err := devs[0].CollectiveID(); err != nil {
		enginetest.RequireOrSkip(t, "nccl", err)
	}
	ranks := make([]int, len(devs))
	for i := range ranks {
		ranks[i] = i
	}
	t.Run(fmt.Sprintf("ranks=%d", len(devs)), func(t *testing.T) { testCommunicator(t, devs, ranks) })
	if len(devs) > 1 {
		t.Run("ranks=1", func(t *testing.T) { testCommunicator(t, devs[:1], []int{0}) })
	}
	t.Run("same device twice", func(t *testing.T) {
		again, err := drv.Open(context.Background(), strings.TrimPrefix(ids[0], "cuda:"))
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		testSameDeviceTwice(t, devs[0], again.(*device))
	})
}

// testSameDeviceTwice checks that a communicator given one CUDA device twice, as the same
// open device or as two, is refused before NCCL is called (NCCL would wait for a rank that
// never joins).
func testSameDeviceTwice(t *testing.T, d, again *device) {
	id, err := d.CollectiveID()
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][]driver.Device{{d, d}, {d, again}} {
		if _, err := d.NewCommunicator(pair, []int{0, 1}, 2, id); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "both CUDA device") {
			t.Errorf("a communicator of one device twice: %v, want ErrInvalidArg naming the device", err)
		}
	}
}

// testCommunicator makes a communicator in which devs[i] is rank ranks[i] of len(devs),
// checks what it reports, runs every collective case on a queue of each device, then closes
// it, twice, and checks that a closed communicator refuses to run.
func testCommunicator(t *testing.T, devs []*device, ranks []int) {
	id, err := devs[0].CollectiveID()
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != ncclUniqueIDBytes {
		t.Fatalf("CollectiveID gave %d bytes, want %d", len(id), ncclUniqueIDBytes)
	}
	dd := make([]driver.Device, len(devs))
	for i, d := range devs {
		dd[i] = d
	}
	c, err := devs[0].NewCommunicator(dd, ranks, len(devs), id)
	if err != nil {
		t.Fatal(err)
	}
	lib := c.Library()
	t.Logf("%v: ranks %v on devices %v", lib, ranks, c.(*communicator).ordinals())
	if lib.Name != "NCCL" || !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(lib.Version) || !filepath.IsAbs(lib.Path) {
		t.Errorf("Library() = %+v: want NCCL, a version major.minor.patch, an absolute path", lib)
	}
	rs := make([]ncclRank, len(devs))
	for i, d := range devs {
		dq, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer dq.Close()
		rs[i] = ncclRank{d: d, q: dq.(*queue), rank: ranks[i]}
	}
	for _, count := range []int{1, 4099} {
		for _, cc := range collectiveCases(len(devs)) {
			t.Run(fmt.Sprintf("%s/count=%d", cc.name, count), func(t *testing.T) { cc.run(t, c, rs, count) })
		}
	}
	for _, r := range rs {
		if err := r.q.Finish(context.Background()); err != nil {
			t.Errorf("Finish: %v", err)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := c.Run(nil); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Run on a closed communicator: %v, want ErrClosed", err)
	}
}

// ncclRank is one device of a communicator under test, with its queue and global rank.
type ncclRank struct {
	d    *device
	q    *queue
	rank int
}

// collCase is one collective of the tests: its name and how to run it with count
// elements.
type collCase struct {
	name string
	run  func(t *testing.T, c driver.Communicator, rs []ncclRank, count int)
}

// collectiveCases are the collectives checked on a communicator of n ranks, all in this
// process: each kind, the types and reductions, in place and not.
func collectiveCases(n int) []collCase {
	return []collCase{
		{"all-reduce/float32/sum", collective[float32](collSpec{kind: driver.AllReduce, op: driver.ReduceSum})},
		{"all-reduce/float32/sum/in-place", collective[float32](collSpec{kind: driver.AllReduce, op: driver.ReduceSum, inPlace: true})},
		{"all-reduce/float64/sum", collective[float64](collSpec{kind: driver.AllReduce, op: driver.ReduceSum})},
		{"all-reduce/int32/max", collective[int32](collSpec{kind: driver.AllReduce, op: driver.ReduceMax})},
		{"all-reduce/int64/min", collective[int64](collSpec{kind: driver.AllReduce, op: driver.ReduceMin})},
		{"all-reduce/uint64/sum", collective[uint64](collSpec{kind: driver.AllReduce, op: driver.ReduceSum})},
		{"all-gather/float32", collective[float32](collSpec{kind: driver.AllGather})},
		{"all-gather/uint32", collective[uint32](collSpec{kind: driver.AllGather})},
		{"reduce-scatter/float32/sum", collective[float32](collSpec{kind: driver.ReduceScatter, op: driver.ReduceSum})},
		{"reduce-scatter/int32/min", collective[int32](collSpec{kind: driver.ReduceScatter, op: driver.ReduceMin})},
		{fmt.Sprintf("broadcast/float32/root=%d", n-1), collective[float32](collSpec{kind: driver.Broadcast, root: n - 1})},
		{"broadcast/int64/root=0/in-place", collective[int64](collSpec{kind: driver.Broadcast, inPlace: true})},
		{"broadcast/float64/root=0/no-send-off-root", collective[float64](collSpec{kind: driver.Broadcast, noSendOffRoot: true})},
	}
}

// collSpec is a collective apart from its type and count.
type collSpec struct {
	kind          driver.CollectiveKind
	op            driver.ReduceOp
	inPlace       bool // Send and Recv the same buffer (all-reduce, broadcast)
	noSendOffRoot bool // broadcast: Send nil on the ranks other than the root
	root          int
}

type collElem interface {
	float32 | float64 | int32 | uint32 | int64 | uint64
}

// collTypeOf returns the collective type of T.
func collTypeOf[T collElem]() driver.CollectiveType {
	var z T
	switch any(z).(type) {
	case float32:
		return driver.CollFloat32
	case float64:
		return driver.CollFloat64
	case int32:
		return driver.CollInt32
	case uint32:
		return driver.CollUint32
	case int64:
		return driver.CollInt64
	}
	return driver.CollUint64
}

// unitRoundoff returns the unit roundoff of a floating-point T, 0 for an integer one.
func unitRoundoff[T collElem]() float64 {
	var z T
	switch any(z).(type) {
	case float32:
		return 0x1p-24
	case float64:
		return 0x1p-53
	}
	return 0
}

// randomColl returns n values of T: floats in [-1, 1), integers small enough that no sum
// of a few thousand ranks overflows.
func randomColl[T collElem](r *rand.Rand, n int) []T {
	out := make([]T, n)
	for i := range out {
		var z T
		switch any(z).(type) {
		case float32, float64:
			out[i] = T(r.Float64()*2 - 1)
		case int32, int64:
			out[i] = T(r.IntN(2000001) - 1000000)
		default:
			out[i] = T(r.Uint32() >> 8)
		}
	}
	return out
}

// fold combines two values by a reduction, in T's arithmetic.
func fold[T collElem](op driver.ReduceOp, a, b T) T {
	switch op {
	case driver.ReduceProd:
		return a * b
	case driver.ReduceMax:
		return max(a, b)
	case driver.ReduceMin:
		return min(a, b)
	}
	return a + b
}

// guardByte fills the elements after every buffer's data, and every Recv before the
// collective: the bytes that must come back as they were.
const (
	guardByte  = 0xA5
	guardElems = 16
)

func asBytes[T collElem](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

func guarded(data []byte, extra int) []byte {
	out := append(slices.Clone(data), make([]byte, extra)...)
	for i := len(data); i < len(out); i++ {
		out[i] = guardByte
	}
	return out
}

// upload allocates a buffer of d holding data.
func upload(t *testing.T, r ncclRank, data []byte) driver.Buffer {
	t.Helper()
	b, err := r.d.Alloc(int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := r.q.Write(b, 0, unsafe.Pointer(&data[0]), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	return b
}

// download reads n bytes of b after the queue's commands.
func download(t *testing.T, r ncclRank, b driver.Buffer, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	if err := r.q.Read(b, 0, unsafe.Pointer(&out[0]), int64(n)); err != nil {
		t.Fatal(err)
	}
	return out
}

// collective returns a case that runs s with count elements of T per block: every rank's
// Send random (Recv, after its data, and every buffer after its data, guard bytes), then
// checks each rank's Recv against the collective computed here from every rank's Send: a
// floating-point sum within the bound of any order of summation of n terms, gamma_{n-1}
// times the sum of their magnitudes (Higham, 3.1), everything else exactly; the guard
// bytes untouched, and an out-of-place Send unchanged.
func collective[T collElem](s collSpec) func(t *testing.T, c driver.Communicator, rs []ncclRank, count int) {
	return func(t *testing.T, c driver.Communicator, rs []ncclRank, count int) {
		n := len(rs)
		esize := int(unsafe.Sizeof(*new(T)))
		sendLen, recvLen := count, count
		switch s.kind {
		case driver.AllGather:
			recvLen = n * count
		case driver.ReduceScatter:
			sendLen = n * count
		}
		rng := rand.New(rand.NewPCG(uint64(s.kind)<<32|uint64(count), uint64(n)))
		sends := make([][]T, n) // by global rank
		for g := range sends {
			sends[g] = randomColl[T](rng, sendLen)
		}
		calls := make([]driver.CollectiveCall, n)
		sendBufs, recvBufs := make([]driver.Buffer, n), make([]driver.Buffer, n)
		for i, r := range rs {
			call := driver.CollectiveCall{Kind: s.kind, Queue: r.q, Count: int64(count), Type: collTypeOf[T](), Op: s.op, Root: s.root}
			if s.inPlace {
				sendBufs[i] = upload(t, r, guarded(asBytes(sends[r.rank]), guardElems*esize))
				recvBufs[i] = sendBufs[i]
			} else {
				recvBufs[i] = upload(t, r, guarded(nil, (recvLen+guardElems)*esize))
				if !s.noSendOffRoot || r.rank == s.root {
					sendBufs[i] = upload(t, r, guarded(asBytes(sends[r.rank]), guardElems*esize))
				}
			}
			call.Send, call.Recv = sendBufs[i], recvBufs[i]
			calls[i] = call
		}
		if err := c.Run(calls); err != nil {
			t.Fatalf("Run: %v", err)
		}
		u := unitRoundoff[T]()
		gamma := float64(n-1) * u / (1 - float64(n-1)*u)
		for i, r := range rs {
			raw := download(t, r, recvBufs[i], (recvLen+guardElems)*esize)
			for k, b := range raw[recvLen*esize:] {
				if b != guardByte {
					t.Errorf("rank %d: guard byte %d after Recv is %#x, want %#x", r.rank, k, b, guardByte)
					break
				}
			}
			got := unsafe.Slice((*T)(unsafe.Pointer(&raw[0])), recvLen)
			for j := range recvLen {
				var want T
				var sum, mag float64
				approx := u != 0 && s.op == driver.ReduceSum && (s.kind == driver.AllReduce || s.kind == driver.ReduceScatter)
				switch s.kind {
				case driver.AllReduce, driver.ReduceScatter:
					at := j
					if s.kind == driver.ReduceScatter {
						at = r.rank*count + j
					}
					want = sends[0][at]
					for g := range n {
						if g > 0 {
							want = fold(s.op, want, sends[g][at])
						}
						sum += float64(sends[g][at])
						mag += math.Abs(float64(sends[g][at]))
					}
				case driver.AllGather:
					want = sends[j/count][j%count]
				case driver.Broadcast:
					want = sends[s.root][j]
				}
				if approx {
					if d := math.Abs(float64(got[j]) - sum); !(d <= gamma*mag) {
						t.Fatalf("rank %d: Recv[%d] = %v, want %v (|diff| %.3g > %.3g)", r.rank, j, got[j], sum, d, gamma*mag)
					}
				} else if got[j] != want {
					t.Fatalf("rank %d: Recv[%d] = %v, want %v", r.rank, j, got[j], want)
				}
			}
			if !s.inPlace && sendBufs[i] != nil {
				want := guarded(asBytes(sends[r.rank]), guardElems*esize)
				if got := download(t, r, sendBufs[i], len(want)); !slices.Equal(got, want) {
					t.Errorf("rank %d: Send, or the guard after it, changed", r.rank)
				}
			}
		}
	}
}

func TestNCCLVersionString(t *testing.T) {
	for _, c := range []struct {
		code int
		want string
	}{
		{22803, "2.28.3"}, {23007, "2.30.7"}, {21903, "2.19.3"}, {20901, "2.9.1"},
		{2806, "2.8.6"}, {2708, "2.7.8"}, {2400, "2.4.0"}, {30001, "3.0.1"},
	} {
		if got := ncclVersionString(c.code); got != c.want {
			t.Errorf("ncclVersionString(%d) = %q, want %q", c.code, got, c.want)
		}
	}
}

// TestNCCLTypesAndOps checks the element types and reductions against nccl.h's numbers.
func TestNCCLTypesAndOps(t *testing.T) {
	for _, c := range []struct {
		t    driver.CollectiveType
		want int
	}{
		{driver.CollInt32, 2}, {driver.CollUint32, 3}, {driver.CollInt64, 4}, {driver.CollUint64, 5},
		{driver.CollFloat32, 7}, {driver.CollFloat64, 8},
	} {
		if got, ok := ncclType(c.t); !ok || got != c.want {
			t.Errorf("ncclType(%v) = %d, %v; want %d", c.t, got, ok, c.want)
		}
	}
	if _, ok := ncclType(driver.CollectiveType(99)); ok {
		t.Error("ncclType of an unknown type succeeds")
	}
	for _, c := range []struct {
		o    driver.ReduceOp
		want int
	}{{driver.ReduceSum, 0}, {driver.ReduceProd, 1}, {driver.ReduceMax, 2}, {driver.ReduceMin, 3}} {
		if got, ok := ncclOp(c.o); !ok || got != c.want {
			t.Errorf("ncclOp(%v) = %d, %v; want %d", c.o, got, ok, c.want)
		}
	}
	if _, ok := ncclOp(driver.ReduceOp(0)); ok {
		t.Error("ncclOp of no reduction succeeds")
	}
	// The C side takes driver.CollectiveKind's numbers as they are.
	for k, want := range map[driver.CollectiveKind]int{driver.AllReduce: 1, driver.AllGather: 2, driver.ReduceScatter: 3, driver.Broadcast: 4} {
		if int(k) != want {
			t.Errorf("%v is %d; prism_nccl_enqueue takes it as %d", k, int(k), want)
		}
	}
}

// unsetNVLS unsets NCCL_NVLS_ENABLE for the test, restoring it afterwards.
func unsetNVLS(t *testing.T) {
	t.Setenv(ncclNVLSEnv, "")
	os.Unsetenv(ncclNVLSEnv)
}

// TestNCCLNVLSDefault: NVLS is turned off unless the user said otherwise, even with an
// empty value.
func TestNCCLNVLSDefault(t *testing.T) {
	t.Setenv(ncclNVLSEnv, "1")
	if disableNVLS() || os.Getenv(ncclNVLSEnv) != "1" {
		t.Errorf("NCCL_NVLS_ENABLE=1 is overridden: %q", os.Getenv(ncclNVLSEnv))
	}
	t.Setenv(ncclNVLSEnv, "")
	if v, ok := os.LookupEnv(ncclNVLSEnv); disableNVLS() || !ok || v != "" {
		t.Errorf("an empty NCCL_NVLS_ENABLE is overridden: %q", v)
	}
	os.Unsetenv(ncclNVLSEnv)
	if !disableNVLS() || os.Getenv(ncclNVLSEnv) != "0" {
		t.Errorf("NCCL_NVLS_ENABLE unset: now %q, want 0", os.Getenv(ncclNVLSEnv))
	}
	if disableNVLS() {
		t.Error("disableNVLS sets the variable a second time")
	}
}

func TestNCCLErrors(t *testing.T) {
	const call = "ncclAllReduce(rank 0 of 2 on device 0: 16 float32, sum)"
	err := ncclErrorOf(call, NCCLInvalidArgument, "invalid argument (run with NCCL_DEBUG=WARN for details)", "")
	want := "cuda: " + call + ": ncclInvalidArgument: invalid argument (run with NCCL_DEBUG=WARN for details)"
	var r NCCLResult
	if err == nil || err.Error() != want || !errors.Is(err, engine.ErrInvalidArg) || !errors.As(err, &r) || r != NCCLInvalidArgument {
		t.Errorf("ncclErrorOf = %v\nwant %s, wrapping ErrInvalidArg and NCCLInvalidArgument", err, want)
	}
	err = ncclErrorOf("ncclCommInitRank(rank 1 of 2 on device 0)", NCCLInvalidUsage, "invalid usage", " Duplicate GPU detected\n")
	if want := "cuda: ncclCommInitRank(rank 1 of 2 on device 0): ncclInvalidUsage: invalid usage; NCCL's last warning: Duplicate GPU detected"; err.Error() != want {
		t.Errorf("with a last warning: %q, want %q", err, want)
	}
	if ncclErrorOf("x", NCCLSuccess, "no error", "") != nil {
		t.Error("success is an error")
	}
	for _, c := range []struct {
		r    NCCLResult
		name string
		is   error
	}{
		{NCCLUnhandledCudaError, "ncclUnhandledCudaError", nil},
		{NCCLSystemError, "ncclSystemError", engine.ErrUnavailable},
		{NCCLInternalError, "ncclInternalError", nil},
		{NCCLInvalidArgument, "ncclInvalidArgument", engine.ErrInvalidArg},
		{NCCLInvalidUsage, "ncclInvalidUsage", engine.ErrInvalidArg},
		{NCCLRemoteError, "ncclRemoteError", engine.ErrUnavailable},
		{NCCLInProgress, "ncclInProgress", nil},
		{NCCLTimeout, "ncclTimeout", nil},
		{NCCLResult(42), "ncclResult_t(42)", nil},
	} {
		if c.r.Error() != c.name {
			t.Errorf("%d: %q, want %q", int(c.r), c.r.Error(), c.name)
		}
		for _, s := range []error{engine.ErrInvalidArg, engine.ErrUnavailable, engine.ErrOutOfMemory, engine.ErrUnsupported} {
			if errors.Is(c.r, s) != (s == c.is) {
				t.Errorf("%v matches %v: %v", c.r, s, errors.Is(c.r, s))
			}
		}
	}
}

// withNCCL makes the loader try names, with nothing loaded, for one test, and puts back
// what was loaded afterwards.
func withNCCL(t *testing.T, names []string) {
	ncclState.mu.Lock()
	oldNames, oldLib, oldVersion := ncclLibraries, ncclState.lib, ncclState.version
	ncclLibraries, ncclState.lib, ncclState.version = names, nil, ""
	ncclState.mu.Unlock()
	t.Cleanup(func() {
		ncclState.mu.Lock()
		defer ncclState.mu.Unlock()
		ncclLibraries, ncclState.lib, ncclState.version = oldNames, oldLib, oldVersion
		if oldLib != nil {
			bindNCCL(oldLib)
		}
	})
}

// TestNCCLMissingLibrary: without NCCL, CollectiveID and NewCommunicator fail with an
// error wrapping ErrUnavailable that names every file tried, PRISM_VENDOR_PATH's first; NVLS
// is turned off before the library is looked for.
func TestNCCLMissingLibrary(t *testing.T) {
	withNCCL(t, []string{"libnccl-does-not-exist.so.2"})
	unsetNVLS(t)
	dir := t.TempDir()
	t.Setenv(driver.VendorPathEnv, dir)
	d := &device{}
	_, err := d.CollectiveID()
	if !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("CollectiveID without NCCL = %v, want ErrUnavailable", err)
	}
	for _, want := range []string{"cannot load NCCL", filepath.Join(dir, "libnccl-does-not-exist.so.2"), driver.VendorPathEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
	t.Log(err)
	if v := os.Getenv(ncclNVLSEnv); v != "0" {
		t.Errorf("NCCL_NVLS_ENABLE = %q after loading, want 0", v)
	}
	if _, err := d.NewCommunicator([]driver.Device{d}, []int{0}, 1, make([]byte, ncclUniqueIDBytes)); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("NewCommunicator without NCCL = %v, want ErrUnavailable", err)
	}
	d.closed.Store(true)
	if _, err := d.CollectiveID(); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("CollectiveID on a closed device = %v, want ErrClosed", err)
	}
}

// otherDevice is a device of another backend.
type otherDevice struct{ driver.Device }

// TestNCCLCommunicatorArgs checks NewCommunicator's refusals, which come before NCCL is
// loaded or called.
func TestNCCLCommunicatorArgs(t *testing.T) {
	d, e := &device{ordinal: 0}, &device{ordinal: 1}
	closed := &device{ordinal: 2}
	closed.closed.Store(true)
	id := make([]byte, ncclUniqueIDBytes)
	got, err := communicatorDevices(d, []driver.Device{d, e}, []int{2, 0}, 3, id)
	if err != nil || len(got) != 2 || got[0] != d || got[1] != e {
		t.Fatalf("communicatorDevices = %v, %v", got, err)
	}
	for _, c := range []struct {
		name   string
		devs   []driver.Device
		ranks  []int
		nranks int
		id     []byte
		want   error
	}{
		{"no device", nil, nil, 1, id, engine.ErrInvalidArg},
		{"ranks and devices differ", []driver.Device{d, e}, []int{0}, 2, id, engine.ErrInvalidArg},
		{"fewer ranks than devices", []driver.Device{d, e}, []int{0, 1}, 1, id, engine.ErrInvalidArg},
		{"a short identity", []driver.Device{d}, []int{0}, 1, id[:127], engine.ErrInvalidArg},
		{"a device of another backend", []driver.Device{d, otherDevice{}}, []int{0, 1}, 2, id, engine.ErrInvalidArg},
		{"another device first", []driver.Device{e, d}, []int{0, 1}, 2, id, engine.ErrInvalidArg},
		{"a closed device", []driver.Device{d, closed}, []int{0, 1}, 2, id, engine.ErrClosed},
		{"a device twice", []driver.Device{d, d}, []int{0, 1}, 2, id, engine.ErrInvalidArg},
		{"a CUDA device opened twice", []driver.Device{d, &device{ordinal: 0}}, []int{0, 1}, 2, id, engine.ErrInvalidArg},
		{"a rank out of range", []driver.Device{d, e}, []int{0, 2}, 2, id, engine.ErrInvalidArg},
		{"a rank twice", []driver.Device{d, e}, []int{1, 1}, 2, id, engine.ErrInvalidArg},
	} {
		if _, err := communicatorDevices(d, c.devs, c.ranks, c.nranks, c.id); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := d.NewCommunicator([]driver.Device{d, d}, []int{0, 1}, 2, id); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("NewCommunicator of a device twice: %v, want ErrInvalidArg", err)
	}
}

// TestNCCLPrepare checks the parts of a collective as NCCL gets them, and each refusal,
// without a device: buffers and queues are values that are never used.
func TestNCCLPrepare(t *testing.T) {
	d0, d1 := &device{ordinal: 0}, &device{ordinal: 1}
	c := &communicator{devs: []*device{d0, d1}, ranks: []int{1, 0}, nranks: 2}
	q0, q1 := &queue{d: d0}, &queue{d: d1}
	buf := func(d *device, ptr devptr, size int64) *buffer { return &buffer{ptr: ptr, size: size, d: d} }
	// An all-gather of 3 float64 per rank: Send 24 bytes, Recv 48.
	base := func() []driver.CollectiveCall {
		return []driver.CollectiveCall{
			{Kind: driver.AllGather, Queue: q0, Send: buf(d0, 0x100, 24), Recv: buf(d0, 0x200, 48), Count: 3, Type: driver.CollFloat64},
			{Kind: driver.AllGather, Queue: q1, Send: buf(d1, 0x300, 24), Recv: buf(d1, 0x400, 48), Count: 3, Type: driver.CollFloat64},
		}
	}
	parts, err := c.prepare(base())
	want := []ncclPart{{q: q0, send: 0x100, recv: 0x200, count: 3, typ: ncclFloat64}, {q: q1, send: 0x300, recv: 0x400, count: 3, typ: ncclFloat64}}
	if err != nil || !slices.Equal(parts, want) {
		t.Fatalf("prepare = %+v, %v; want %+v", parts, err, want)
	}
	// A reduce-scatter reads n*count, writes count.
	rs := base()
	for i := range rs {
		rs[i].Kind, rs[i].Op, rs[i].Type = driver.ReduceScatter, driver.ReduceMax, driver.CollInt32
		rs[i].Send, rs[i].Recv = buf(rs[i].Recv.(*buffer).d, 0x500, 24), buf(rs[i].Recv.(*buffer).d, 0x600, 12)
	}
	if parts, err := c.prepare(rs); err != nil || parts[1].typ != ncclInt32 || parts[1].op != ncclMax || parts[1].count != 3 {
		t.Errorf("reduce-scatter: %+v, %v", parts, err)
	}
	// A broadcast from rank 1 (device 0): device 1's Send may be nil, and is then its Recv.
	bc := base()
	for i := range bc {
		bc[i].Kind, bc[i].Root, bc[i].Recv = driver.Broadcast, 1, buf(bc[i].Recv.(*buffer).d, 0x700+devptr(i), 24)
	}
	bc[1].Send = nil
	if parts, err := c.prepare(bc); err != nil || parts[1].send != parts[1].recv || parts[1].root != 1 {
		t.Errorf("broadcast without Send off the root: %+v, %v", parts, err)
	}
	bc[0].Send = nil
	if _, err := c.prepare(bc); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("broadcast without Send on the root: %v, want ErrInvalidArg", err)
	}
	closedQ := &queue{d: d1}
	closedQ.closed.Store(true)
	for _, r := range []struct {
		name   string
		change func(calls []driver.CollectiveCall) []driver.CollectiveCall
		want   error
	}{
		{"one part", func(k []driver.CollectiveCall) []driver.CollectiveCall { return k[:1] }, engine.ErrInvalidArg},
		{"Recv too small", func(k []driver.CollectiveCall) []driver.CollectiveCall { k[1].Recv = buf(d1, 0x400, 47); return k }, engine.ErrInvalidArg},
		{"Send too small", func(k []driver.CollectiveCall) []driver.CollectiveCall { k[0].Send = buf(d0, 0x100, 23); return k }, engine.ErrInvalidArg},
		{"a buffer of another device", func(k []driver.CollectiveCall) []driver.CollectiveCall { k[0].Recv = buf(d1, 0x400, 48); return k }, engine.ErrInvalidArg},
		{"a queue of another device", func(k []driver.CollectiveCall) []driver.CollectiveCall { k[0].Queue = q1; return k }, engine.ErrInvalidArg},
		{"no queue", func(k []driver.CollectiveCall) []driver.CollectiveCall { k[1].Queue = nil; return k }, engine.ErrInvalidArg},
		{"a closed queue", func(k []driver.CollectiveCall) []driver.CollectiveCall { k[1].Queue = closedQ; return k }, engine.ErrClosed},
		{"parts that differ", func(k []driver.CollectiveCall) []driver.CollectiveCall { k[1].Count = 2; return k }, engine.ErrInvalidArg},
		{"a negative count", func(k []driver.CollectiveCall) []driver.CollectiveCall {
			k[0].Count, k[1].Count = -1, -1
			return k
		}, engine.ErrInvalidArg},
		{"an unknown type", func(k []driver.CollectiveCall) []driver.CollectiveCall {
			k[0].Type, k[1].Type = 99, 99
			return k
		}, engine.ErrInvalidArg},
		{"an unknown collective", func(k []driver.CollectiveCall) []driver.CollectiveCall {
			k[0].Kind, k[1].Kind = 9, 9
			return k
		}, engine.ErrInvalidArg},
		{"an all-reduce without reduction", func(k []driver.CollectiveCall) []driver.CollectiveCall {
			k[0].Kind, k[1].Kind = driver.AllReduce, driver.AllReduce
			return k
		}, engine.ErrInvalidArg},
		{"a broadcast from no rank", func(k []driver.CollectiveCall) []driver.CollectiveCall {
			k[0].Kind, k[1].Kind, k[0].Root, k[1].Root = driver.Broadcast, driver.Broadcast, 2, 2
			return k
		}, engine.ErrInvalidArg},
		{"a closed buffer", func(k []driver.CollectiveCall) []driver.CollectiveCall {
			b := buf(d0, 0x100, 24)
			b.closed.Store(true)
			k[0].Send = b
			return k
		}, engine.ErrClosed},
	} {
		if _, err := c.prepare(r.change(base())); !errors.Is(err, r.want) {
			t.Errorf("%s: %v, want %v", r.name, err, r.want)
		}
	}
}

// fakeNCCL is a libnccl that runs collectives on the host, over the fake driver's device
// memory (host memory): the calls of a group are kept until ncclGroupEnd, which checks that
// every rank of each communicator took part (the library would wait for a missing one) and
// runs them. A call on a communicator of several ranks outside a group is
// ncclInvalidUsage, as is a group end without a start. FAKE_NCCL_FAIL=<function>:<result>
// makes a function fail (ncclCommGetAsyncError reports it as the asynchronous error);
// FAKE_NCCL_LOG names a file to which every call appends a line.
const fakeNCCL = `#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char internal[128]; } ncclUniqueId;
typedef struct { int nranks, rank; char id[128]; } comm_t;
typedef struct { int kind; const void *send; void *recv; size_t count; int type, op, root; comm_t *comm; void *stream; } op_t;

static __thread int depth, groupError;
static op_t ops[256];
static int nops;
static comm_t *inits[64];
static int ninits;

static void logf_(const char *fmt, ...) {
	const char *path = getenv("FAKE_NCCL_LOG");
	if (path == NULL) return;
	FILE *f = fopen(path, "a");
	if (f == NULL) return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static int fail(const char *call) {
	const char *v = getenv("FAKE_NCCL_FAIL");
	size_t n = strlen(call);
	if (v != NULL && strncmp(v, call, n) == 0 && v[n] == ':') return atoi(v + n + 1);
	return 0;
}

static int esize(int t) {
	switch (t) {
	case 2: case 3: case 7: return 4;
	case 4: case 5: case 8: return 8;
	}
	return 0;
}

static void combine(int t, int op, char *acc, const char *x) {
#define COMBINE(T) { T a, b; memcpy(&a, acc, sizeof a); memcpy(&b, x, sizeof b); \
	a = op == 0 ? a + b : op == 1 ? a * b : op == 2 ? (a > b ? a : b) : (a < b ? a : b); memcpy(acc, &a, sizeof a); } break;
	switch (t) {
	case 2: COMBINE(int32_t)
	case 3: COMBINE(uint32_t)
	case 4: COMBINE(int64_t)
	case 5: COMBINE(uint64_t)
	case 7: COMBINE(float)
	case 8: COMBINE(double)
	}
#undef COMBINE
}

static int runOps(void) {
	int done[256] = {0};
	for (int i = 0; i < nops; i++) {
		if (done[i]) continue;
		op_t *by[64] = {0};
		op_t *o0 = &ops[i];
		int n = o0->comm->nranks, got = 0;
		for (int j = i; j < nops; j++) {
			op_t *o = &ops[j];
			if (done[j] || memcmp(o->comm->id, o0->comm->id, 128) != 0) continue;
			if (o->kind != o0->kind || o->count != o0->count || o->type != o0->type || o->op != o0->op || o->root != o0->root) return 4;
			if (by[o->comm->rank] != NULL) return 5;
			by[o->comm->rank] = o;
			done[j] = 1;
			got++;
		}
		if (got != n) return 5;
		int es = esize(o0->type);
		size_t cnt = o0->count, all = (o0->kind == 2 || o0->kind == 3) ? n * cnt : cnt;
		char *tmp = malloc(all * es + 1);
		switch (o0->kind) {
		case 1: case 3:
			memcpy(tmp, by[0]->send, all * es);
			for (int r = 1; r < n; r++)
				for (size_t k = 0; k < all; k++) combine(o0->type, o0->op, tmp + k * es, (const char *)by[r]->send + k * es);
			for (int r = 0; r < n; r++) memcpy(by[r]->recv, tmp + (o0->kind == 3 ? r * cnt * es : 0), cnt * es);
			break;
		case 2:
			for (int r = 0; r < n; r++) memcpy(tmp + r * cnt * es, by[r]->send, cnt * es);
			for (int r = 0; r < n; r++) memcpy(by[r]->recv, tmp, all * es);
			break;
		case 4:
			if (o0->root < 0 || o0->root >= n) { free(tmp); return 4; }
			memcpy(tmp, by[o0->root]->send, cnt * es);
			for (int r = 0; r < n; r++) memcpy(by[r]->recv, tmp, cnt * es);
			break;
		}
		free(tmp);
	}
	return 0;
}

static int checkInits(void) {
	for (int i = 0; i < ninits; i++) {
		int got = 0;
		for (int j = 0; j < ninits; j++) got += memcmp(inits[i]->id, inits[j]->id, 128) == 0;
		if (got != inits[i]->nranks) return 5;
	}
	return 0;
}

int ncclGetVersion(int *v) { *v = 22803; return 0; }

int ncclGetUniqueId(ncclUniqueId *id) {
	static int n;
	memset(id, 0, sizeof *id);
	snprintf(id->internal, sizeof id->internal, "fake-nccl-%d", ++n);
	logf_("unique-id %s", id->internal);
	return fail("ncclGetUniqueId");
}

const char *ncclGetErrorString(int r) {
	switch (r) {
	case 2: return "unhandled system error (fake)";
	case 4: return "invalid argument (fake)";
	case 5: return "invalid usage (fake)";
	case 6: return "remote process exited (fake)";
	}
	return "fake error";
}

const char *ncclGetLastError(void *comm) { return "the fake's last warning"; }

int ncclGroupStart(void) { depth++; logf_("group-start"); return 0; }

int ncclGroupEnd(void) {
	if (depth == 0) return 5;
	if (--depth > 0) return 0;
	int r = groupError;
	groupError = 0;
	if (r == 0) r = checkInits();
	if (r == 0) r = runOps();
	nops = ninits = 0;
	logf_("group-end %d", r);
	return r;
}

int ncclCommInitRank(comm_t **comm, int nranks, ncclUniqueId id, int rank) {
	int r = fail("ncclCommInitRank");
	if (r == 0 && (rank < 0 || rank >= nranks)) r = 4;
	if (r == 0 && depth == 0 && nranks > 1) r = 5;
	if (r != 0) {
		*comm = NULL;
		if (depth > 0) groupError = r;
		return r;
	}
	comm_t *c = calloc(1, sizeof *c);
	c->nranks = nranks;
	c->rank = rank;
	memcpy(c->id, id.internal, 128);
	*comm = c;
	if (depth > 0) inits[ninits++] = c;
	const char *nvls = getenv("NCCL_NVLS_ENABLE");
	logf_("init %s rank %d of %d nvls=%s", c->id, rank, nranks, nvls ? nvls : "(unset)");
	return 0;
}

static int enqueue(const char *name, int kind, const void *s, void *r, size_t count, int type, int op, int root, comm_t *c, void *stream) {
	int e = fail(name);
	if (e == 0 && (c == NULL || stream == NULL || esize(type) == 0 || op < 0 || op > 3)) e = 4;
	if (e == 0 && depth == 0 && c->nranks > 1) e = 5;
	if (e != 0) {
		if (depth > 0) groupError = e;
		return e;
	}
	logf_("%s rank %d count %zu type %d op %d root %d", name, c->rank, count, type, op, root);
	op_t o = {kind, s, r, count, type, op, root, c, stream};
	ops[nops++] = o;
	if (depth == 0) {
		int x = runOps();
		nops = 0;
		return x;
	}
	return 0;
}

int ncclAllReduce(const void *s, void *r, size_t n, int t, int op, comm_t *c, void *st) { return enqueue("ncclAllReduce", 1, s, r, n, t, op, 0, c, st); }
int ncclAllGather(const void *s, void *r, size_t n, int t, comm_t *c, void *st) { return enqueue("ncclAllGather", 2, s, r, n, t, 0, 0, c, st); }
int ncclReduceScatter(const void *s, void *r, size_t n, int t, int op, comm_t *c, void *st) { return enqueue("ncclReduceScatter", 3, s, r, n, t, op, 0, c, st); }
int ncclBroadcast(const void *s, void *r, size_t n, int t, int root, comm_t *c, void *st) { return enqueue("ncclBroadcast", 4, s, r, n, t, 0, root, c, st); }

int ncclCommGetAsyncError(comm_t *c, int *e) { *e = fail("ncclCommGetAsyncError"); return 0; }

int ncclCommFinalize(comm_t *c) {
	logf_("finalize rank %d", c->rank);
	if (depth == 0 && c->nranks > 1) return 5;
	return fail("ncclCommFinalize");
}

int ncclCommDestroy(comm_t *c) { logf_("destroy rank %d", c->rank); free(c); return 0; }
int ncclCommAbort(comm_t *c) { logf_("abort rank %d", c->rank); free(c); return 0; }
`

// TestNCCLFake runs communicators of two fake devices (FAKE_COUNT=2) through a fake NCCL:
// the collectives' results, the calls each C function makes and in which group, the
// failures of NCCL's calls and of a collective's part, and that a failed group leaves the
// thread's group balanced for the next collective.
func TestNCCLFake(t *testing.T) {
	buildFakeLibraries(t)
	cc, _ := exec.LookPath("cc")
	dir := t.TempDir()
	src, lib := filepath.Join(dir, "libnccl-fake.c"), filepath.Join(dir, "libnccl-fake.so")
	if err := os.WriteFile(src, []byte(fakeNCCL), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-w", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("building the fake NCCL: %v\n%s", err, out)
	}
	watchdog := time.AfterFunc(2*time.Minute, func() { panic(t.Name() + ": still running after 2 minutes: a group hangs") })
	defer watchdog.Stop()
	withNCCL(t, []string{lib})
	unsetNVLS(t)
	logPath := filepath.Join(dir, "nccl.log")
	t.Setenv("FAKE_NCCL_LOG", logPath)
	t.Setenv("FAKE_COUNT", "2")
	drv := &Driver{}
	var devs []*device
	for _, id := range []string{"0", "1"} {
		dd, err := drv.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dd.Close() })
		devs = append(devs, dd.(*device))
	}
	readLog := func() []string {
		b, _ := os.ReadFile(logPath)
		os.Remove(logPath)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}

	// Device 0 is rank 1, device 1 rank 0: every reference follows the global ranks.
	t.Run("ranks=2", func(t *testing.T) { testCommunicator(t, devs, []int{1, 0}) })
	log := readLog()
	wantLog := regexp.MustCompile(`(?s)^unique-id (\S+)\ngroup-start\ninit \S+ rank 1 of 2 nvls=0\ninit \S+ rank 0 of 2 nvls=0\ngroup-end 0\n` +
		`group-start\nncclAllReduce rank 1 count 1 type 7 op 0 root 0\nncclAllReduce rank 0 count 1 type 7 op 0 root 0\ngroup-end 0\n.*` +
		`group-start\nfinalize rank 1\nfinalize rank 0\ngroup-end 0\ndestroy rank 1\ndestroy rank 0$`)
	if !wantLog.MatchString(strings.Join(log, "\n")) {
		t.Errorf("the calls do not go in groups as they should (in one group: the ranks' inits, each collective's parts, the finalizations; then the destructions):\n%s",
			strings.Join(log, "\n"))
	}
	t.Run("ranks=1", func(t *testing.T) { testCommunicator(t, devs[1:], []int{0}) })
	readLog()
	t.Run("same device twice", func(t *testing.T) { testSameDeviceTwice(t, devs[0], devs[0]) })

	t.Run("failures", func(t *testing.T) {
		id, err := devs[0].CollectiveID()
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("FAKE_NCCL_FAIL", "ncclCommInitRank:2")
		_, err = devs[0].NewCommunicator([]driver.Device{devs[0], devs[1]}, []int{0, 1}, 2, id)
		var r NCCLResult
		if !errors.Is(err, engine.ErrUnavailable) || !errors.As(err, &r) || r != NCCLSystemError ||
			!strings.Contains(err.Error(), "ncclCommInitRank(rank 0 of 2 on device 0): ncclSystemError: unhandled system error (fake)") {
			t.Errorf("a failed ncclCommInitRank: %v", err)
		}
		t.Log(err)
		t.Setenv("FAKE_NCCL_FAIL", "")
		if id, err = devs[0].CollectiveID(); err != nil {
			t.Fatal(err)
		}
		c, err := devs[0].NewCommunicator([]driver.Device{devs[0], devs[1]}, []int{0, 1}, 2, id)
		if err != nil {
			t.Fatalf("a communicator after a failed one: %v", err)
		}
		defer c.Close()
		rs := make([]ncclRank, 2)
		for i, d := range devs {
			q, err := d.NewQueue()
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			rs[i] = ncclRank{d: d, q: q.(*queue), rank: i}
		}
		allReduce := collective[float32](collSpec{kind: driver.AllReduce, op: driver.ReduceSum})
		for _, f := range []struct {
			fail, call string
			is         error
		}{
			{"ncclAllReduce:4", "ncclAllReduce(rank 0 of 2 on device 0: 16 float32, sum): ncclInvalidArgument: invalid argument (fake); NCCL's last warning: the fake's last warning", engine.ErrInvalidArg},
			{"ncclCommGetAsyncError:6", "ncclCommGetAsyncError(rank 0 of 2 on device 0: 16 float32, sum): ncclRemoteError: remote process exited (fake)", engine.ErrUnavailable},
		} {
			t.Setenv("FAKE_NCCL_FAIL", f.fail)
			b0, b1 := upload(t, rs[0], make([]byte, 64)), upload(t, rs[1], make([]byte, 64))
			err := c.Run([]driver.CollectiveCall{
				{Kind: driver.AllReduce, Queue: rs[0].q, Send: b0, Recv: b0, Count: 16, Type: driver.CollFloat32, Op: driver.ReduceSum},
				{Kind: driver.AllReduce, Queue: rs[1].q, Send: b1, Recv: b1, Count: 16, Type: driver.CollFloat32, Op: driver.ReduceSum},
			})
			if !errors.Is(err, f.is) || !strings.Contains(err.Error(), f.call) {
				t.Errorf("FAKE_NCCL_FAIL=%s: %v\nwant %s, wrapping %v", f.fail, err, f.call, f.is)
			}
			t.Log(err)
			t.Setenv("FAKE_NCCL_FAIL", "")
			// The failed group was ended: the next collective runs whole.
			allReduce(t, c, rs, 33)
		}
	})
}
