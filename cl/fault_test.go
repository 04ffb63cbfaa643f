//go:build !noopencl

package cl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

// faultScenario is one misbehaviour of the fake ICD (testdata/fake_icd.c) and what the
// backend must make of it. run runs in a child process whose only platform is the fake;
// it returns what the backend yielded (logged by the parent), or fails the child's test.
type faultScenario struct {
	name string
	env  map[string]string // the FAKE_* variables
	run  func(t *testing.T) string
}

const tib = "1099511627776"

var faultScenarios = []faultScenario{
	{"sane", nil, runSane},
	{"devices 2^30", map[string]string{"FAKE_DEVICES": "1073741824"}, wantDevicesError("outside 0 to 1024")},
	{"devices 2^32-1", map[string]string{"FAKE_DEVICES": "4294967295"}, wantDevicesError("outside 0 to 1024")},
	{"devices 100", map[string]string{"FAKE_DEVICES": "100"}, wantDevices(100, "0:99")},
	{"platforms 40", map[string]string{"FAKE_PLATFORMS": "40"}, wantDevices(40, "39:0")},
	{"device name 1 TiB", map[string]string{"FAKE_HUGE_PARAM": "0x102B"}, wantDevicesError("clGetDeviceInfo(0x102b): the driver reports " + tib + " bytes")},
	{"device extensions 1 TiB", map[string]string{"FAKE_HUGE_PARAM": "0x1030"}, wantDevices(1, "0:0")},
	{"platform name 1 TiB", map[string]string{"FAKE_HUGE_PARAM": "0x0902"}, runPlatformNameTooLarge},
	{"device name without terminator", map[string]string{"FAKE_NAME_NOTERM": "1"}, runUnterminatedName},
	{"kernel work-group size 1 TiB", map[string]string{"FAKE_HUGE_PARAM": "0x11B0"}, runHugeKernelQuery},
	{"clCreateBuffer fails after 3 (CL_MEM_OBJECT_ALLOCATION_FAILURE)", map[string]string{"FAKE_ALLOC_OK": "3", "FAKE_ALLOC_ERR": "-4"}, runAllocFailure("CL_MEM_OBJECT_ALLOCATION_FAILURE")},
	{"clCreateBuffer fails after 3 (CL_OUT_OF_RESOURCES)", map[string]string{"FAKE_ALLOC_OK": "3", "FAKE_ALLOC_ERR": "-5"}, runAllocFailure("CL_OUT_OF_RESOURCES")},
	{"timestamps zero", map[string]string{"FAKE_TS_START": "0", "FAKE_TS_END": "0"}, runHostTiming},
	{"timestamps equal placeholders", map[string]string{"FAKE_TS_START": "3", "FAKE_TS_END": "3"}, runHostTiming},
	{"timestamps end before start", map[string]string{"FAKE_TS_START": "2000000000", "FAKE_TS_END": "1000000000"}, runHostTiming},
	{"build log 1 TiB", map[string]string{"FAKE_BUILD_ERR": "-11", "FAKE_LOG_SIZE": tib}, runHugeBuildLog},
	{"clCreateContext fails", map[string]string{"FAKE_CONTEXT_ERR": "-6"}, runContextFailure},
	{"clCreateCommandQueue fails", map[string]string{"FAKE_QUEUE_ERR": "-5"}, runQueueFailure},
	{"host buffers", nil, runHostBuffers},
	{"clEnqueueMapBuffer fails", map[string]string{"FAKE_MAP_ERR": "-5"}, runMapFailure},
}

// TestFaultyICD runs the backend against a fake OpenCL driver that fails or lies, loaded
// through the ICD loader: each case must end in a clear error or a bounded, correct result,
// never a panic, a hang or a huge allocation. The loader reads its vendors once per process
// and the backend probes once, so every case runs in a child process of this test binary.
func TestFaultyICD(t *testing.T) {
	if name := os.Getenv("PRISM_CL_FAULT"); name != "" {
		runFaultChild(t, name)
		return
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) to build the fake ICD")
	}
	if infos, err := engine.Devices(context.Background(), "opencl"); err == nil && underOclgrind(infos) {
		t.Skip("under Oclgrind the child processes would inherit Oclgrind's platform")
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libfake-icd.so")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, filepath.Join("testdata", "fake_icd.c")).CombinedOutput()
	switch {
	case err != nil && strings.Contains(string(out), "cl_icd.h"):
		t.Skipf("no CL/cl_icd.h to build the fake ICD against (Debian: opencl-headers): %s", strings.TrimSpace(string(out)))
	case err != nil:
		t.Fatalf("building the fake ICD: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "fake.icd"), []byte(lib+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded := true
	for _, sc := range faultScenarios {
		t.Run(sc.name, func(t *testing.T) {
			if !loaded {
				t.Skip("the ICD loader did not load the fake ICD (see the sane case)")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFaultyICD$", "-test.v", "-test.count=1")
			for _, kv := range os.Environ() {
				// The loader's own variables of the parent (a GPU machine may name its vendor
				// directory in OCL_ICD_VENDORS; the loader reads the first one) and its
				// FAKE_* must not reach a case: the fake is the only ICD there.
				if !strings.HasPrefix(kv, "OCL_ICD_FILENAMES=") && !strings.HasPrefix(kv, "OCL_ICD_VENDORS=") && !strings.HasPrefix(kv, "OPENCL_VENDOR_PATH=") && !strings.HasPrefix(kv, "FAKE_") && !strings.HasPrefix(kv, "PRISM_CL_FAULT=") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.Env = append(cmd.Env, "PRISM_CL_FAULT="+sc.name, "OCL_ICD_VENDORS="+dir, "OPENCL_VENDOR_PATH="+dir)
			for k, v := range sc.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("the case did not end within a minute\n%s", out)
			}
			if sc.name == "sane" && strings.Contains(string(out), "no OpenCL platform found by the ICD loader") {
				// The fixture, not Prism: this machine's ICD loader did not take the fake
				// from OCL_ICD_VENDORS (OCL_ICD_DEBUG=15 shows why).
				loaded = false
				t.Skipf("the ICD loader did not load the fake ICD from %s:\n%s", dir, out)
			}
			if err != nil || !strings.Contains(string(out), "\nPASS") {
				t.Fatalf("child: %v\n%s", err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if r, ok := strings.CutPrefix(line, "fault result: "); ok {
					t.Log(r)
				}
			}
		})
	}
}

// runFaultChild runs the case named in the child process: it checks that the fake is the
// only platform, runs the case, and prints its result for the parent. A panic fails the
// child (and so the parent's case), as does more than 256 MiB of Go allocation.
func runFaultChild(t *testing.T, name string) {
	var sc *faultScenario
	for i := range faultScenarios {
		if faultScenarios[i].name == name {
			sc = &faultScenarios[i]
		}
	}
	if sc == nil {
		t.Fatalf("no fault case %q", name)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	result := sc.run(t)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 256<<20 {
		t.Errorf("the case allocated %d bytes", n)
	}
	fmt.Printf("fault result: %s\n", result)
}

func fakeDevices(t *testing.T) ([]engine.DeviceInfo, error) {
	t.Helper()
	infos, err := engine.Devices(context.Background(), "opencl")
	for _, in := range infos {
		if in.Platform != "Fake ICD" && !strings.HasPrefix(in.Platform, "platform ") {
			t.Fatalf("device %s of platform %q: the fake ICD is not the only platform", in.ID, in.Platform)
		}
	}
	return infos, err
}

// wantDevicesError expects listing the devices to fail with an error wrapping
// ErrUnavailable that says want.
func wantDevicesError(want string) func(t *testing.T) string {
	return func(t *testing.T) string {
		infos, err := fakeDevices(t)
		if err == nil || !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), want) {
			t.Fatalf("Devices: %d devices, %v; want an error wrapping ErrUnavailable that says %q", len(infos), err, want)
		}
		return err.Error()
	}
}

// wantDevices expects n devices, the last with the ID last.
func wantDevices(n int, last string) func(t *testing.T) string {
	return func(t *testing.T) string {
		infos, err := fakeDevices(t)
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != n || infos[n-1].ID != last {
			var ids []string
			for _, in := range infos {
				ids = append(ids, in.ID)
			}
			t.Fatalf("%d devices (%s); want %d, the last %q", len(infos), strings.Join(ids, " "), n, last)
		}
		return fmt.Sprintf("%d devices, %s to %s, the first %q with FP64 %v", len(infos), infos[0].ID, last, infos[0].Name, infos[0].FP64)
	}
}

// openFake opens the fake's device 0:0 and a queue on it.
func openFake(t *testing.T) (*engine.Device, *engine.Queue) {
	t.Helper()
	dev, err := engine.Open(context.Background(), "opencl:0:0")
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

// roundTrip writes, fills, copies and reads back b through q (the fake keeps buffers in
// host memory, so the data must survive).
func roundTrip(t *testing.T, q *engine.Queue, b *engine.Buffer[float32]) {
	t.Helper()
	ctx := context.Background()
	n := b.Len()
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i)
	}
	if err := b.Write(ctx, q, 0, src); err != nil {
		t.Fatal(err)
	}
	if err := b.Fill(q, 0, n/2, 7); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyFrom(q, n-2, b, 0, 2); err != nil {
		t.Fatal(err)
	}
	got, err := b.Download(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		want := src[i]
		if i < n/2 || i >= n-2 {
			want = 7
		}
		if v != want {
			t.Fatalf("element %d: %v, want %v", i, v, want)
		}
	}
}

const faultSource = `__kernel void k(__global float *x) { x[get_global_id(0)] += 1.0f; }`

// runSane checks the fake itself: one device, buffers that keep their data, a build, a
// launch, and event times that Timed uses (1 ms by default).
func runSane(t *testing.T) string {
	infos, err := fakeDevices(t)
	if err != nil || len(infos) != 1 || infos[0].Name != "Fake Device" {
		t.Fatalf("Devices: %v, %v; want the fake's one device", infos, err)
	}
	dev, q := openFake(t)
	b, err := engine.NewBuffer[float32](dev, 1024)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, q, b)
	k := faultKernel(t, dev)
	d, err := q.Timed(context.Background(), func() error {
		return q.Launch(k, engine.Range1D(1024, 64), b)
	})
	if err != nil || d != time.Millisecond || !dev.EventTiming() {
		t.Fatalf("Timed: %v, %v, event timing %v; want the fake's 1 ms from its events", d, err, dev.EventTiming())
	}
	if err := q.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("device %q, buffers keep their data, a launch timed %v by its event", infos[0].Name, d)
}

func faultKernel(t *testing.T, dev *engine.Device) *engine.Kernel {
	t.Helper()
	p, err := dev.Build(faultSource)
	if err != nil {
		t.Fatal(err)
	}
	k, err := p.Kernel("k")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func runPlatformNameTooLarge(t *testing.T) string {
	infos, err := fakeDevices(t)
	if err != nil || len(infos) != 1 || infos[0].Platform != "platform 0" {
		t.Fatalf("Devices: %v, %v; want one device, its platform named by its index", infos, err)
	}
	return fmt.Sprintf("device %s %q on %q", infos[0].ID, infos[0].Name, infos[0].Platform)
}

func runUnterminatedName(t *testing.T) string {
	infos, err := fakeDevices(t)
	if err != nil || len(infos) != 1 {
		t.Fatalf("Devices: %v, %v; want one device", infos, err)
	}
	if name := infos[0].Name; name != strings.Repeat("N", 64) {
		t.Fatalf("name %q (%d bytes); want the 64 bytes the driver gave", name, len(name))
	}
	return fmt.Sprintf("a device name of %d bytes, as many as the driver gave", len(infos[0].Name))
}

func runHugeKernelQuery(t *testing.T) string {
	dev, q := openFake(t)
	k := faultKernel(t, dev)
	// The answer not believed is left unknown, so the device's limit applies; the kernel's
	// other answers are still read.
	if n, a := k.MaxWorkGroupSize(), k.Attributes(); n != dev.Info().MaxWorkGroupSize || a.PreferredMultiple != 32 {
		t.Fatalf("kernel work-group limit %d, preferred multiple %d; want the device's %d and the fake's 32",
			n, a.PreferredMultiple, dev.Info().MaxWorkGroupSize)
	}
	b, err := engine.NewBuffer[float32](dev, 256)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Launch(k, engine.Range1D(256, 64), b); err != nil {
		t.Fatal(err)
	}
	if err := q.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("kernel work-group limit %d (the device's), preferred multiple %d; the kernel launches",
		k.MaxWorkGroupSize(), k.Attributes().PreferredMultiple)
}

func runAllocFailure(status string) func(t *testing.T) string {
	return func(t *testing.T) string {
		dev, q := openFake(t)
		var live []*engine.Buffer[float32]
		var err error
		for i := 0; i < 10; i++ {
			var b *engine.Buffer[float32]
			if b, err = engine.NewBuffer[float32](dev, 4096); err != nil {
				break
			}
			live = append(live, b)
		}
		if len(live) != 3 || err == nil || !errors.Is(err, engine.ErrOutOfMemory) ||
			!strings.Contains(err.Error(), "clCreateBuffer(16384 bytes)") || !strings.Contains(err.Error(), status) {
			t.Fatalf("%d buffers, then %v; want 3, then an error wrapping ErrOutOfMemory that names clCreateBuffer and %s", len(live), err, status)
		}
		if got := dev.AllocatedBytes(); got != 3*16384 {
			t.Errorf("AllocatedBytes %d after the failure; want the 3 live buffers' %d", got, 3*16384)
		}
		for _, b := range live {
			roundTrip(t, q, b)
		}
		for _, b := range live {
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if got := dev.AllocatedBytes(); got != 0 {
			t.Errorf("AllocatedBytes %d after closing every buffer", got)
		}
		if err := dev.Close(); err != nil {
			t.Fatal(err)
		}
		return err.Error() + "; the 3 earlier buffers kept their data and closed"
	}
}

// runHostTiming times a launch followed by a 20 ms sleep: with timestamps no clock gives,
// Timed must measure host time (at least the sleep) and the device turn to host timing.
func runHostTiming(t *testing.T) string {
	dev, q := openFake(t)
	k := faultKernel(t, dev)
	b, err := engine.NewBuffer[float32](dev, 256)
	if err != nil {
		t.Fatal(err)
	}
	const sleep = 20 * time.Millisecond
	d, err := q.Timed(context.Background(), func() error {
		err := q.Launch(k, engine.Range1D(256, 64), b)
		time.Sleep(sleep)
		return err
	})
	if err != nil || d < sleep || dev.EventTiming() {
		t.Fatalf("Timed: %v, %v, event timing %v; want host time of at least %v", d, err, dev.EventTiming(), sleep)
	}
	ev, err := q.LaunchEvent(k, engine.Range1D(256, 64), b)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	_, eerr := ev.Elapsed(context.Background())
	if !errors.Is(eerr, engine.ErrUnsupported) {
		t.Fatalf("Event.Elapsed: %v; want an error wrapping ErrUnsupported", eerr)
	}
	return fmt.Sprintf("Timed measured %v of host time; Event.Elapsed: %v", d.Round(time.Millisecond), eerr)
}

func runHugeBuildLog(t *testing.T) string {
	dev, _ := openFake(t)
	_, err := dev.Build(faultSource)
	var be *engine.BuildError
	if !errors.As(err, &be) || !errors.Is(err, engine.ErrBuild) || !errors.Is(err, BuildProgramFailure) ||
		!strings.Contains(be.Log, tib+" bytes") {
		t.Fatalf("Build: %v; want a BuildError of CL_BUILD_PROGRAM_FAILURE whose log names the %s bytes claimed", err, tib)
	}
	return strings.ReplaceAll(err.Error(), "\n", " | ")
}

func runContextFailure(t *testing.T) string {
	dev, err := engine.Open(context.Background(), "opencl:0:0")
	if err == nil {
		dev.Close()
	}
	if err == nil || !errors.Is(err, engine.ErrOutOfMemory) || !errors.Is(err, OutOfHostMemory) || !strings.Contains(err.Error(), "clCreateContext") {
		t.Fatalf("Open: %v; want an error of clCreateContext wrapping CL_OUT_OF_HOST_MEMORY and ErrOutOfMemory", err)
	}
	return err.Error()
}

func runQueueFailure(t *testing.T) string {
	dev, err := engine.Open(context.Background(), "opencl:0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err == nil {
		q.Close()
	}
	if err == nil || !errors.Is(err, engine.ErrOutOfMemory) || !errors.Is(err, OutOfResources) || !strings.Contains(err.Error(), "clCreateCommandQueue") {
		t.Fatalf("NewQueue: %v; want an error of clCreateCommandQueue wrapping CL_OUT_OF_RESOURCES and ErrOutOfMemory", err)
	}
	return err.Error()
}

// runHostBuffers copies through host buffers on two queues: an asynchronous write on one,
// a cross-queue wait and an asynchronous read on the other, a marker. The fake completes
// every command when it is enqueued, so the data must be there once each event is.
func runHostBuffers(t *testing.T) string {
	dev, a := openFake(t)
	b, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	in, err := engine.NewHostBuffer[float32](dev, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := engine.NewHostBuffer[float32](dev, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if !in.Pinned() {
		t.Error("a host buffer of the fake's GPU is not pinned")
	}
	for i := range in.Slice() {
		in.Slice()[i] = float32(i)
	}
	buf, err := engine.NewBuffer[float32](dev, 256)
	if err != nil {
		t.Fatal(err)
	}
	up, err := buf.WriteAsync(a, 0, in, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	if err := b.Wait(ctx, up); err != nil {
		t.Fatal(err)
	}
	down, err := buf.ReadAsync(b, 16, out, 0, 240)
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	mark, err := b.Record()
	if err != nil {
		t.Fatal(err)
	}
	defer mark.Close()
	if err := mark.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := down.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for i, v := range out.Slice()[:240] {
		if v != float32(i+16) {
			t.Fatalf("element %d: %v, want %d", i, v, i+16)
		}
	}
	d, err := down.Elapsed(ctx)
	if err != nil || d != time.Millisecond {
		t.Fatalf("ReadAsync's Elapsed: %v, %v; want the fake's 1 ms", d, err)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("pinned %v; an asynchronous write, a wait on another queue, a read of %v, a marker", out.Pinned(), d)
}

// runMapFailure allocates a host buffer while clEnqueueMapBuffer fails, then again once it
// works.
func runMapFailure(t *testing.T) string {
	dev, _ := openFake(t)
	_, failed := engine.NewHostBuffer[float32](dev, 256)
	if failed == nil || !errors.Is(failed, engine.ErrOutOfMemory) || !errors.Is(failed, OutOfResources) || !strings.Contains(failed.Error(), "clEnqueueMapBuffer(1024 bytes)") {
		t.Fatalf("NewHostBuffer: %v; want an error of clEnqueueMapBuffer(1024 bytes) wrapping CL_OUT_OF_RESOURCES and ErrOutOfMemory", failed)
	}
	if err := os.Unsetenv("FAKE_MAP_ERR"); err != nil {
		t.Fatal(err)
	}
	h, err := engine.NewHostBuffer[float32](dev, 256)
	if err != nil {
		t.Fatalf("NewHostBuffer once the map works: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	return failed.Error() + "; the next one maps"
}
