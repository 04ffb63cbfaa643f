package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/engine/internal/fake"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

func TestMain(m *testing.M) {
	fake.Register()
	os.Exit(m.Run())
}

// fakeCalls counts the driver calls made on a fake device, for enginetest.Options.
func fakeCalls(d *engine.Device) int64 { return fake.DeviceCalls(d.Driver(), "") }

// TestConformance runs the backend conformance suite on the fake backend, checking that
// refused calls never reach the driver and that engine keeps every promise the driver SPI
// makes to backends.
func TestConformance(t *testing.T) {
	before := fake.Violations()
	for _, id := range enginetest.DeviceIDs(t, fake.Name) {
		t.Run(id, func(t *testing.T) {
			enginetest.TestDevice(t, id, enginetest.Options{DriverCalls: fakeCalls, LaunchAllocates: "the fake backend runs kernels in Go"})
		})
	}
	if v := fake.Violations() - before; v != 0 {
		t.Errorf("engine broke the driver SPI's contract %d times (see the errors wrapping fake.ErrContract)", v)
	}
}

func TestRegisterPanics(t *testing.T) {
	for _, c := range []struct {
		name    string
		backend string
		drv     driver.Driver
	}{
		{"nil driver", "enginetest-nil", nil},
		{"empty name", "", fake.New()},
		{"name with a colon", "a:b", fake.New()},
		{"duplicate", fake.Name, fake.New()},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q, %v) did not panic", c.backend, c.drv)
				}
			}()
			engine.Register(c.backend, c.drv)
		})
	}
	if slices.Contains(engine.Backends(), "enginetest-nil") {
		t.Error("a nil driver was registered")
	}
}

func TestBackendsAndDevices(t *testing.T) {
	if !slices.Contains(engine.Backends(), fake.Name) {
		t.Fatalf("Backends() = %v, want it to hold %q", engine.Backends(), fake.Name)
	}
	if b := engine.Backends(); !slices.IsSorted(b) {
		t.Errorf("Backends() = %v, not sorted", b)
	}
	infos, err := engine.Devices(context.Background(), fake.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].ID != "0" || infos[1].ID != "1" {
		t.Errorf("Devices = %+v, want local IDs 0 and 1", infos)
	}
	if _, err := engine.Devices(context.Background(), "nosuch"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Devices(nosuch) = %v, want ErrNotFound", err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		id       string
		want     error
		contains string
	}{
		{"nosuch:0", engine.ErrNotFound, "forgotten import"},
		{"fake:7", engine.ErrNotFound, "fake:0, fake:1"},
		{"opencl", engine.ErrInvalidArg, "backend:id"},
		{"fake:", engine.ErrInvalidArg, "backend:id"},
		{":0", engine.ErrInvalidArg, "backend:id"},
	} {
		dev, err := engine.Open(ctx, c.id)
		if err == nil {
			dev.Close()
		}
		if !errors.Is(err, c.want) || err == nil || !strings.Contains(err.Error(), c.contains) {
			t.Errorf("Open(%q) = %v, want an error wrapping %q that mentions %q", c.id, err, c.want, c.contains)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := engine.Open(ctx, "fake:0"); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a canceled context = %v, want context.Canceled", err)
	}
}

func TestSplitID(t *testing.T) {
	for _, c := range []struct{ id, backend, local string }{
		{"opencl:1:0", "opencl", "1:0"},
		{"cuda:0", "cuda", "0"},
		{"fake:1", "fake", "1"},
		{"opencl", "", ""},
		{"opencl:", "", ""},
		{":0", "", ""},
		{"", "", ""},
	} {
		b, l, err := engine.SplitID(c.id)
		if wantErr := c.backend == ""; wantErr != (err != nil) || b != c.backend || l != c.local {
			t.Errorf("SplitID(%q) = %q, %q, %v; want %q, %q (error: %v)", c.id, b, l, err, c.backend, c.local, wantErr)
		}
		if err != nil && !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("SplitID(%q) error %v does not wrap ErrInvalidArg", c.id, err)
		}
	}
}

// open opens a fresh fake device, closed when t ends.
func open(t *testing.T, id string) (*engine.Device, *engine.Queue) {
	t.Helper()
	dev, err := engine.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	return dev, q
}

// TestRefusedCallsNeverReachDriver checks, method by method, that calls engine refuses do
// not call the corresponding driver method (the conformance suite checks the total).
func TestRefusedCallsNeverReachDriver(t *testing.T) {
	dev, q := open(t, "fake:0")
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.Axpy)
	if err != nil {
		t.Fatal(err)
	}
	x, err := engine.Upload(t.Context(), q, make([]float32, 100))
	if err != nil {
		t.Fatal(err)
	}
	closedK, err := prog.Kernel(suitekernels.Axpy)
	if err != nil {
		t.Fatal(err)
	}
	closedK.Close()
	args := []any{int32(100), int32(0), float32(1), x, x}
	for _, c := range []struct {
		name   string
		method string
		want   error
		call   func() error
	}{
		{"global not a multiple of local", "Queue.Launch", engine.ErrInvalidArg, func() error { return q.Launch(k, engine.Range1D(100, 64), args...) }},
		{"local above the limit", "Queue.Launch", engine.ErrInvalidArg, func() error { return q.Launch(k, engine.Range1D(512, 512), args...) }},
		{"wrong argument count", "Queue.Launch", engine.ErrInvalidArg, func() error { return q.Launch(k, engine.Range1D(128, 64), args[:4]...) }},
		{"int argument", "Queue.Launch", engine.ErrInvalidArg, func() error { return q.Launch(k, engine.Range1D(128, 64), 100, int32(0), float32(1), x, x) }},
		{"closed kernel", "Queue.Launch", engine.ErrClosed, func() error { return q.Launch(closedK, engine.Range1D(128, 64), args...) }},
		{"write out of range", "Queue.Write", engine.ErrInvalidArg, func() error { return x.Write(t.Context(), q, 99, make([]float32, 2)) }},
		{"read out of range", "Queue.Read", engine.ErrInvalidArg, func() error { return x.Read(t.Context(), q, 101, nil) }},
		{"fill out of range", "Queue.Fill", engine.ErrInvalidArg, func() error { return x.Fill(q, 50, 51, 0) }},
		{"overlapping copy", "Queue.Copy", engine.ErrInvalidArg, func() error { return x.CopyFrom(q, 10, x, 0, 20) }},
		{"zero-length buffer", "Device.Alloc", engine.ErrInvalidArg, func() error { _, err := engine.NewBuffer[int32](dev, 0); return err }},
		{"buffer above MaxAllocBytes", "Device.Alloc", engine.ErrOutOfMemory, func() error { _, err := engine.NewBuffer[float64](dev, 1<<30); return err }},
		{"empty source", "Device.Build", engine.ErrInvalidArg, func() error { _, err := dev.Build(""); return err }},
	} {
		before := fake.DeviceCalls(dev.Driver(), c.method)
		if err := c.call(); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want an error wrapping %q", c.name, err, c.want)
		}
		if after := fake.DeviceCalls(dev.Driver(), c.method); after != before {
			t.Errorf("%s: %s called %d times", c.name, c.method, after-before)
		}
	}
	// And a valid launch does reach it, exactly once.
	before := fake.DeviceCalls(dev.Driver(), "Queue.Launch")
	if err := q.Launch(k, engine.Range1D(128, 64), args...); err != nil {
		t.Fatal(err)
	}
	if n := fake.DeviceCalls(dev.Driver(), "Queue.Launch") - before; n != 1 {
		t.Errorf("valid launch: Queue.Launch called %d times, want 1", n)
	}
}

// TestDeviceCloseReleasesChildren checks that Device.Close closes every open object, each
// once and before the device itself (the fake reports anything else as a violation).
func TestDeviceCloseReleasesChildren(t *testing.T) {
	before := fake.Violations()
	dev, err := engine.Open(context.Background(), "fake:1")
	if err != nil {
		t.Fatal(err)
	}
	q, _ := dev.NewQueue()
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := prog.Kernel(suitekernels.Iota)
	b, _ := engine.NewBuffer[uint32](dev, 10)
	b2, _ := engine.NewBuffer[uint32](dev, 10)
	b2.Close()
	if err := dev.Close(); err != nil {
		t.Fatalf("Device.Close: %v", err)
	}
	for _, c := range []struct {
		method string
		want   int64
	}{{"Queue.Close", 1}, {"Kernel.Close", 1}, {"Program.Close", 1}, {"Buffer.Close", 2}, {"Device.Close", 1}} {
		if n := fake.DeviceCalls(dev.Driver(), c.method); n != c.want {
			t.Errorf("%s called %d times, want %d", c.method, n, c.want)
		}
	}
	for _, c := range []interface{ Close() error }{q, k, prog, b, dev} {
		if err := c.Close(); err != nil {
			t.Errorf("%T.Close after Device.Close: %v", c, err)
		}
	}
	if v := fake.Violations() - before; v != 0 {
		t.Errorf("%d driver contract violations", v)
	}
}

// TestDriverErrorsWrapped checks that a driver's error reaches the caller wrapped, sentinel
// and all.
func TestDriverErrorsWrapped(t *testing.T) {
	dev, _ := open(t, "fake:0")
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	_, err = prog.Kernel("nosuch")
	if !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("Kernel(nosuch) = %v, want ErrNotFound naming the kernel", err)
	}
}

// TestKernelInfo checks what engine takes from the driver's optional interfaces.
func TestKernelInfo(t *testing.T) {
	dev, _ := open(t, "fake:0")
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.Index2D)
	if err != nil {
		t.Fatal(err)
	}
	if k.Name() != suitekernels.Index2D || k.MaxWorkGroupSize() != 256 {
		t.Errorf("Name() = %q, MaxWorkGroupSize() = %d", k.Name(), k.MaxWorkGroupSize())
	}
}

// recorder is a testing.TB that records Skipf and Fatalf, each of which ends the
// goroutine that calls it, as the real ones do.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// record runs f with a recorder in its own goroutine.
func record(f func(tb testing.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

// staticDriver is a backend that reports a fixed device list or error.
type staticDriver struct {
	infos []driver.DeviceInfo
	err   error
}

func (d staticDriver) Devices(context.Context) ([]driver.DeviceInfo, error) { return d.infos, d.err }
func (d staticDriver) Open(context.Context, string) (driver.Device, error) {
	return nil, errors.New("static: no devices")
}

func TestRequireOrSkip(t *testing.T) {
	engine.Register("enginetest-missing", staticDriver{err: fmt.Errorf("libmissing.so.1 not found: %w", engine.ErrUnavailable)})
	engine.Register("enginetest-empty", staticDriver{})
	engine.Register("enginetest-broken", staticDriver{err: errors.New("platform query failed")})

	for _, c := range []struct {
		name    string
		require string
		run     func(tb testing.TB)
		skip    bool
		fail    bool
		msg     string
	}{
		{"nil error", "", func(tb testing.TB) { enginetest.RequireOrSkip(tb, "x", nil) }, false, false, ""},
		{"unavailable", "", func(tb testing.TB) { enginetest.DeviceIDs(tb, "enginetest-missing") }, true, false, "libmissing.so.1"},
		{"unavailable, required", "cuda, enginetest-missing", func(tb testing.TB) { enginetest.DeviceIDs(tb, "enginetest-missing") }, false, true, "PRISM_REQUIRE"},
		{"unavailable, others required", "cuda,opencl", func(tb testing.TB) { enginetest.DeviceIDs(tb, "enginetest-missing") }, true, false, "unavailable"},
		{"no devices", "", func(tb testing.TB) { enginetest.DeviceIDs(tb, "enginetest-empty") }, true, false, "no device"},
		{"no devices, required", "enginetest-empty", func(tb testing.TB) { enginetest.DeviceIDs(tb, "enginetest-empty") }, false, true, "no device"},
		{"other error", "", func(tb testing.TB) { enginetest.DeviceIDs(tb, "enginetest-broken") }, false, true, "platform query failed"},
		{"not registered", "", func(tb testing.TB) { enginetest.DeviceIDs(tb, "enginetest-unregistered") }, false, true, "forgotten import"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PRISM_REQUIRE", c.require)
			r := record(c.run)
			if r.skipped != c.skip || r.failed != c.fail || !strings.Contains(r.msg, c.msg) {
				t.Errorf("skipped %v, failed %v, message %q; want %v, %v, one holding %q", r.skipped, r.failed, r.msg, c.skip, c.fail, c.msg)
			}
		})
	}
	if ids := enginetest.DeviceIDs(t, fake.Name); !slices.Equal(ids, []string{"fake:0", "fake:1"}) {
		t.Errorf("DeviceIDs(fake) = %v", ids)
	}
}

func TestSmall(t *testing.T) {
	t.Setenv("PRISM_TEST_SIZE", "small")
	if !enginetest.Small() {
		t.Error("Small() = false with PRISM_TEST_SIZE=small")
	}
	t.Setenv("PRISM_TEST_SIZE", "")
	if enginetest.Small() {
		t.Error("Small() = true with PRISM_TEST_SIZE unset")
	}
}

// cancelAfter is a context that reports itself cancelled from its (checks+1)-th call to
// Err on, so that a test can cancel a transfer between two of its chunks.
type cancelAfter struct {
	context.Context
	checks int
}

func (c *cancelAfter) Err() error {
	if c.checks <= 0 {
		return context.Canceled
	}
	c.checks--
	return nil
}

// TestTransferContext: Read, Write, Upload and Download move data in chunks of the
// transfer size, one driver call each, look at their context before each chunk, and stop
// at a done one with an error wrapping its cause.
func TestTransferContext(t *testing.T) {
	defer engine.SetTransferChunk(1 << 20)()
	dev, err := engine.Open(context.Background(), "fake:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	const n = 3<<18 + 5 // 3 MiB and 20 bytes of float32: four chunks of at most 1 MiB
	b, err := engine.NewBuffer[float32](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i % 1000)
	}
	dst := make([]float32, n)
	write := func(ctx context.Context) error { return b.Write(ctx, q, 0, src) }
	read := func(ctx context.Context) error { return b.Read(ctx, q, 0, dst) }
	upload := func(ctx context.Context) error { _, err := engine.Upload(ctx, q, src); return err }
	download := func(ctx context.Context) error { _, err := b.Download(ctx, q); return err }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name   string
		method string // the driver call counted
		call   func(context.Context) error
		ctx    context.Context
		calls  int64 // driver calls made
		want   error
	}{
		{"Write", "Queue.Write", write, context.Background(), 4, nil},
		{"Read", "Queue.Read", read, context.Background(), 4, nil},
		{"Upload", "Queue.Write", upload, context.Background(), 4, nil},
		{"Download", "Queue.Read", download, context.Background(), 4, nil},
		{"Write/cancelled before", "Queue.Write", write, cancelled, 0, context.Canceled},
		{"Read/cancelled before", "Queue.Read", read, cancelled, 0, context.Canceled},
		{"Upload/cancelled before", "Device.Alloc", upload, cancelled, 0, context.Canceled},
		{"Download/cancelled before", "Queue.Read", download, cancelled, 0, context.Canceled},
		{"Write/cancelled after one chunk", "Queue.Write", write, &cancelAfter{context.Background(), 1}, 1, context.Canceled},
		{"Read/cancelled after two chunks", "Queue.Read", read, &cancelAfter{context.Background(), 2}, 2, context.Canceled},
		{"Write/nil context", "Queue.Write", write, nil, 0, engine.ErrInvalidArg},
		{"Upload/nil context", "Device.Alloc", upload, nil, 0, engine.ErrInvalidArg},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := fake.DeviceCalls(dev.Driver(), c.method)
			err := c.call(c.ctx)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Errorf("error %v, want %v", err, c.want)
			}
			if got := fake.DeviceCalls(dev.Driver(), c.method) - before; got != c.calls {
				t.Errorf("%d calls of %s, want %d", got, c.method, c.calls)
			}
		})
	}
	if err := b.Write(context.Background(), q, 0, src); err != nil {
		t.Fatal(err)
	}
	got, err := b.Download(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1<<18 - 1, 1 << 18, n - 1} { // both sides of a chunk's edge
		if got[i] != src[i] {
			t.Fatalf("element %d = %v, want %v", i, got[i], src[i])
		}
	}
}
