//go:build !noopencl

package cl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	ocl "github.com/jgillich/go-opencl/cl"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
)

// TestConformance runs the backend conformance suite on every OpenCL device.
func TestConformance(t *testing.T) {
	for _, id := range enginetest.DeviceIDs(t, "opencl") {
		t.Run(id, func(t *testing.T) { enginetest.TestDevice(t, id, enginetest.Options{SkipVendor: skipVendor(t)}) })
	}
}

// small reports whether the tests run at small sizes (under Oclgrind, see the Makefile).
func small() bool { return enginetest.Small() }

// testDevices lists the OpenCL devices, skipping the test (or failing it under
// PRISM_REQUIRE=opencl) when there is none.
func testDevices(t *testing.T) []engine.DeviceInfo {
	t.Helper()
	infos, err := engine.Devices(context.Background(), "opencl")
	if err == nil && len(infos) == 0 {
		err = fmt.Errorf("no device listed: %w", engine.ErrUnavailable)
	}
	enginetest.RequireOrSkip(t, "opencl", err)
	return infos
}

// underOclgrind reports whether the process runs under Oclgrind (its only platform).
func underOclgrind(infos []engine.DeviceInfo) bool {
	return len(infos) > 0 && strings.Contains(infos[0].Platform, "Oclgrind")
}

// forEachDevice runs f as a subtest on every OpenCL device, opened through engine.
func forEachDevice(t *testing.T, f func(t *testing.T, dev *engine.Device)) {
	t.Helper()
	enginetest.ForEachDevice(t, "opencl", f)
}

const testSource = `
__kernel void axpy(__global float* y, __global const float* x, const float a, const int n) {
	const int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + y[i];
}

__kernel void add_const(__global int* v, const int c, const int n) {
	const int i = get_global_id(0);
	if (i < n) v[i] += c;
}

__kernel void index2d(__global int* out, const int w, const int h) {
	const int x = get_global_id(0), y = get_global_id(1);
	if (x < w && y < h) out[y * w + x] = y * 1000 + x;
}
`

func mustKernel(t *testing.T, dev *engine.Device, name string) *engine.Kernel {
	t.Helper()
	prog, err := dev.Build(testSource)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestDevices(t *testing.T) {
	infos := testDevices(t)
	idRE := regexp.MustCompile(`^[0-9]+:[0-9]+$`)
	seen := map[string]bool{}
	for _, in := range infos {
		t.Logf("%s: %q vendor %q platform %q kind %v, %s, driver %s, %s, %d CU @ %d MHz, mem %d, max alloc %d, local %d, wg %d %v, fp64 %v fp16 %v, compute capability %d, pci %q",
			in.ID, in.Name, in.Vendor, in.Platform, in.Kind, in.APIVersion, in.DriverVersion, in.LanguageVersion,
			in.ComputeUnits, in.ClockMHz, in.GlobalMemBytes, in.MaxAllocBytes, in.LocalMemBytes,
			in.MaxWorkGroupSize, in.MaxWorkItemSizes, in.FP64, in.FP16, in.ComputeCapability, in.PCIBusID)
		if nvidia := strings.Contains(in.Vendor, "NVIDIA"); nvidia != (in.ComputeCapability > 0) {
			t.Errorf("%s: vendor %q, compute capability %d: NVIDIA devices report one (cl_nv_device_attribute_query), others none", in.ID, in.Vendor, in.ComputeCapability)
		}
		if !idRE.MatchString(in.ID) || seen[in.ID] {
			t.Errorf("ID %q: want a unique platform:device pair", in.ID)
		}
		seen[in.ID] = true
		if in.Name == "" || in.Platform == "" {
			t.Errorf("%s: empty name %q or platform %q", in.ID, in.Name, in.Platform)
		}
		if in.ComputeUnits <= 0 || in.GlobalMemBytes <= 0 || in.MaxAllocBytes <= 0 || in.MaxAllocBytes > in.GlobalMemBytes {
			t.Errorf("%s: implausible compute units %d, memory %d, max alloc %d", in.ID, in.ComputeUnits, in.GlobalMemBytes, in.MaxAllocBytes)
		}
		if in.MaxWorkGroupSize <= 0 || in.MaxWorkItemSizes[0] <= 0 {
			t.Errorf("%s: work-group limits %d %v", in.ID, in.MaxWorkGroupSize, in.MaxWorkItemSizes)
		}
		if !strings.HasPrefix(in.APIVersion, "OpenCL ") {
			t.Errorf("%s: API version %q, want \"OpenCL x.y ...\"", in.ID, in.APIVersion)
		}
		if in.PCIBusID != "" && !regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`).MatchString(in.PCIBusID) {
			t.Errorf("%s: PCI bus ID %q is not domain:bus:device.function", in.ID, in.PCIBusID)
		}
	}
	// A second call returns the probe's cached result.
	again, err := engine.Devices(context.Background(), "opencl")
	if err != nil || len(again) != len(infos) {
		t.Errorf("second Devices: %d devices, %v; first gave %d", len(again), err, len(infos))
	}
}

// TestNoPlatform runs this test binary again with an empty ICD vendor directory, so that
// the loader finds no platform, and checks the error it gets.
func TestNoPlatform(t *testing.T) {
	if os.Getenv("PRISM_CL_NO_PLATFORM_CHILD") == "1" {
		infos, err := (&Driver{}).Devices(context.Background())
		if err == nil {
			fmt.Printf("platforms still visible: %d devices\n", len(infos))
			os.Exit(3)
		}
		if !errors.Is(err, engine.ErrUnavailable) || !errors.Is(err, PlatformNotFoundKHR) {
			t.Fatalf("Devices with no platform: %v; want ErrUnavailable and CL_PLATFORM_NOT_FOUND_KHR", err)
		}
		if !strings.Contains(err.Error(), "no OpenCL platform found by the ICD loader") {
			t.Fatalf("error does not say what was tried: %v", err)
		}
		fmt.Println("child error:", err)
		return
	}
	if infos, err := engine.Devices(context.Background(), "opencl"); err == nil && underOclgrind(infos) {
		t.Skip("under Oclgrind the child process would inherit Oclgrind's platform")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoPlatform$", "-test.v", "-test.count=1")
	// Both loaders (ocl-icd, Khronos) read the vendor directory from these variables, and
	// OCL_ICD_FILENAMES (set in some GPU containers) lists ICDs beside it: drop it.
	empty := t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OCL_ICD_FILENAMES=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PRISM_CL_NO_PLATFORM_CHILD=1", "OCL_ICD_VENDORS="+empty, "OPENCL_VENDOR_PATH="+empty)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("this ICD loader still finds a platform with an empty vendor directory: %s", strings.TrimSpace(string(out)))
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

func TestBuildError(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		const src = `__kernel void broken(__global float* y) { y[0] = prism_undeclared_thing; }`
		_, err := dev.Build(src, "-DWG=64")
		if err == nil {
			t.Fatal("broken kernel built")
		}
		var be *engine.BuildError
		if !errors.As(err, &be) || !errors.Is(err, engine.ErrBuild) {
			t.Fatalf("error %v: want a *BuildError wrapping ErrBuild", err)
		}
		if !strings.Contains(be.Log, "prism_undeclared_thing") {
			t.Errorf("log does not name the bad identifier:\n%s", be.Log)
		}
		var st Status
		if !errors.As(err, &st) || st != BuildProgramFailure {
			t.Errorf("status %v, want CL_BUILD_PROGRAM_FAILURE", st)
		}
		if be.Device != dev.Info().Name || !strings.Contains(err.Error(), "clBuildProgram") {
			t.Errorf("error does not name device and call: %v", err)
		}

		// An option the compiler does not know is also reported, never a panic.
		_, err = dev.Build(`__kernel void k(__global int* p) { p[0] = 1; }`, "-prism-no-such-option")
		t.Logf("unknown option: %v", err)
		if err != nil && !errors.Is(err, engine.ErrBuild) && !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("unknown option: %v, want ErrBuild or ErrInvalidArg", err)
		}
	})
}

func TestKernelLookup(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		prog, err := dev.Build(testSource)
		if err != nil {
			t.Fatal(err)
		}
		_, err = prog.Kernel("no_such_kernel")
		if !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "clCreateKernel") {
			t.Errorf("unknown kernel: %v, want ErrNotFound naming clCreateKernel", err)
		}
		k, err := prog.Kernel("axpy")
		if err != nil {
			t.Fatal(err)
		}
		dp, err := dev.Driver().Build(testSource, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dp.Close()
		dk, err := dp.Kernel("axpy")
		if err != nil {
			t.Fatal(err)
		}
		defer dk.Close()
		if n := dk.(*kernel).NumArgs(); n != 4 {
			t.Errorf("NumArgs = %d, want 4", n)
		}
		if wg := k.MaxWorkGroupSize(); wg <= 0 || wg > dev.Info().MaxWorkGroupSize {
			t.Errorf("kernel work-group limit %d, device's %d", wg, dev.Info().MaxWorkGroupSize)
		}
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		x, err := engine.NewBuffer[float32](dev, 4)
		if err != nil {
			t.Fatal(err)
		}
		// The engine rejects a wrong argument count because the kernel counts its arguments.
		if err := q.Launch(k, engine.Range1D(4, 4), x, float32(1)); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("launch with 2 of 4 arguments: %v, want ErrInvalidArg", err)
		}
	})
}

func TestLaunch(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		ctx := context.Background()
		k := mustKernel(t, dev, "axpy")
		n, wg := 1000, min(64, k.MaxWorkGroupSize())
		if small() {
			n = 100
		}
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		xs := make([]float32, n)
		ys := make([]float32, n)
		for i := range xs {
			xs[i], ys[i] = float32(i), 1
		}
		x, err := engine.Upload(t.Context(), q, xs)
		if err != nil {
			t.Fatal(err)
		}
		y, err := engine.Upload(t.Context(), q, ys)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := q.LaunchEvent(k, engine.Range1D(engine.RoundUp(n, wg), wg), y, x, float32(2), int32(n))
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Close()
		el, err := ev.Elapsed(ctx)
		switch {
		case errors.Is(err, engine.ErrUnsupported):
			t.Logf("no event timestamps on %s: %v", dev.ID(), err) // Rusticl 22.3: checked by the conformance suite
		case err != nil:
			t.Fatal(err)
		case el <= 0 || el > time.Minute:
			t.Errorf("Elapsed = %v, want a positive device time", el)
		}
		got, err := y.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if want := float32(2*i + 1); v != want {
				t.Fatalf("y[%d] = %v, want %v", i, v, want)
			}
		}

		// Fill and copy, with an offset, then a read at an offset.
		z, err := engine.NewBuffer[float32](dev, n)
		if err != nil {
			t.Fatal(err)
		}
		if err := z.Fill(q, 0, n, -7); err != nil {
			t.Fatal(err)
		}
		if err := z.CopyFrom(q, 10, y, 20, 30); err != nil {
			t.Fatal(err)
		}
		part := make([]float32, 50)
		if err := z.Read(ctx, q, 0, part); err != nil {
			t.Fatal(err)
		}
		for i, v := range part {
			want := float32(-7)
			if i >= 10 && i < 40 {
				want = float32(2*(i+10) + 1)
			}
			if v != want {
				t.Fatalf("z[%d] = %v, want %v", i, v, want)
			}
		}
		ctxT, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := q.Finish(ctxT); err != nil {
			t.Fatal(err)
		}
	})
}

func TestLaunch2D(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		w, h := 37, 11
		k := mustKernel(t, dev, "index2d")
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		out, err := engine.NewBuffer[int32](dev, w*h)
		if err != nil {
			t.Fatal(err)
		}
		r := engine.Range2D(engine.RoundUp(w, 8), engine.RoundUp(h, 4), 8, 4)
		if err := q.Launch(k, r, out, int32(w), int32(h)); err != nil {
			t.Fatal(err)
		}
		got, err := out.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if want := int32(i/w*1000 + i%w); v != want {
				t.Fatalf("out[%d] = %d, want %d", i, v, want)
			}
		}
	})
}

// TestConcurrentQueues runs 8 goroutines, each with its own queue and buffer, launching
// one shared kernel on one device. On PoCL this exercises the shared-queue policy; the
// results also catch arguments mixed between concurrent launches of the kernel.
func TestConcurrentQueues(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		const goroutines = 8
		n, iters := 1000, 25
		if small() {
			n, iters = 32, 3
		}
		k := mustKernel(t, dev, "add_const")
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				q, err := dev.NewQueue()
				if err != nil {
					t.Error(err)
					return
				}
				defer q.Close()
				init := make([]int32, n)
				for i := range init {
					init[i] = int32(g * i)
				}
				v, err := engine.Upload(t.Context(), q, init)
				if err != nil {
					t.Error(err)
					return
				}
				defer v.Close()
				for it := 0; it < iters; it++ {
					wg := min(64, k.MaxWorkGroupSize())
					if err := q.Launch(k, engine.Range1D(engine.RoundUp(n, wg), wg), v, int32(g+1), int32(n)); err != nil {
						t.Error(err)
						return
					}
					if it%8 == 7 {
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						err := q.Finish(ctx)
						cancel()
						if err != nil {
							t.Error(err)
							return
						}
					}
				}
				got, err := v.Download(t.Context(), q)
				if err != nil {
					t.Error(err)
					return
				}
				for i, x := range got {
					if want := int32(g*i + iters*(g+1)); x != want {
						t.Errorf("goroutine %d: v[%d] = %d, want %d", g, i, x, want)
						return
					}
				}
			}(g)
		}
		wg.Wait()
	})
}

// TestQueueSharing checks the policy: on PoCL and Oclgrind every queue of a device, and of
// every open handle on that device, is the same cl_command_queue.
func TestQueueSharing(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		d := dev.Driver().(*device)
		want := sharedQueue(dev.Info().Platform)
		if d.c.shared != want {
			t.Fatalf("platform %q: shared = %v, want %v", dev.Info().Platform, d.c.shared, want)
		}
		q1, err := dev.Driver().NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer q1.Close()
		dev2, err := engine.Open(context.Background(), dev.ID())
		if err != nil {
			t.Fatal(err)
		}
		defer dev2.Close()
		q2, err := dev2.Driver().NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		same := q1.(*queue).q == q2.(*queue).q
		if same != want {
			t.Errorf("queues of two handles share one cl_command_queue: %v, want %v", same, want)
		}
		if err := q2.Close(); err != nil {
			t.Error(err)
		}
		if err := dev2.Close(); err != nil {
			t.Error(err)
		}
		// The first handle's queue still works after the second handle closed.
		b, err := d.Alloc(12)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		in, out := []int32{1, 2, 3}, make([]int32, 3)
		if err := q1.Write(b, 0, unsafe.Pointer(&in[0]), 12); err != nil {
			t.Fatal(err)
		}
		if err := q1.Read(b, 0, unsafe.Pointer(&out[0]), 12); err != nil || out[2] != 3 {
			t.Errorf("after the other handle closed: %v, %v", out, err)
		}
	})
}

func TestOversizedAlloc(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		max := dev.Info().MaxAllocBytes
		if _, err := engine.NewBuffer[float32](dev, int(max/4)+1); !errors.Is(err, engine.ErrOutOfMemory) {
			t.Errorf("engine NewBuffer over the max allocation: %v, want ErrOutOfMemory", err)
		}
		// The driver on its own: past what the device accepts. (Oclgrind accepts max+1 and
		// spends seconds shadowing it, so the small run leaves that case out.)
		sizes := []int64{max + 1, 1 << 62}
		if small() {
			sizes = sizes[1:]
		}
		for _, size := range sizes {
			b, err := dev.Driver().Alloc(size)
			if err == nil {
				t.Logf("driver accepted %d bytes (past CL_DEVICE_MAX_MEM_ALLOC_SIZE %d)", size, max)
				b.Close()
				if size == 1<<62 {
					t.Errorf("alloc of 2^62 bytes succeeded")
				}
				continue
			}
			t.Logf("alloc %d: %v", size, err)
			if !errors.Is(err, engine.ErrOutOfMemory) && !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("alloc %d: %v, want ErrOutOfMemory or ErrInvalidArg", size, err)
			}
			if !strings.Contains(err.Error(), "clCreateBuffer") {
				t.Errorf("alloc %d: %v does not name clCreateBuffer", size, err)
			}
		}
	})
}

func TestEventWaitCanceled(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		k := mustKernel(t, dev, "add_const")
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		v, err := engine.Upload(t.Context(), q, make([]int32, 64))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := q.LaunchEvent(k, engine.Range1D(64, min(64, k.MaxWorkGroupSize())), v, int32(1), int32(64))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := ev.Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("wait with a canceled context: %v, want context.Canceled", err)
		}
		if err := q.Finish(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("finish with a canceled context: %v, want context.Canceled", err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := ev.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ev.Close(); err != nil {
			t.Fatal(err)
		}
		if err := ev.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if err := q.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestStatus(t *testing.T) {
	cases := []struct {
		err  error
		text string
		is   error
	}{
		{wrap("clCreateBuffer(8 bytes)", ocl.ErrOutOfResources), "cl: clCreateBuffer(8 bytes): CL_OUT_OF_RESOURCES (-5)", engine.ErrOutOfMemory},
		{wrap("clCreateBuffer(8 bytes)", ocl.ErrMemObjectAllocationFailure), "CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)", engine.ErrOutOfMemory},
		{wrap("x", ocl.ErrOutOfHostMemory), "CL_OUT_OF_HOST_MEMORY (-6)", engine.ErrOutOfMemory},
		{wrap("x", ocl.ErrInvalidWorkGroupSize), "CL_INVALID_WORK_GROUP_SIZE (-54)", engine.ErrInvalidArg},
		{wrap("x", ocl.ErrInvalidBufferSize), "CL_INVALID_BUFFER_SIZE (-61)", engine.ErrInvalidArg},
		{wrap("x", ocl.ErrInvalidArgSize), "CL_INVALID_ARG_SIZE (-51)", engine.ErrInvalidArg},
		{wrap("x", ocl.ErrInvalidKernelName), "CL_INVALID_KERNEL_NAME (-46)", engine.ErrNotFound},
		{wrap("x", ocl.ErrOther(-1001)), "CL_PLATFORM_NOT_FOUND_KHR (-1001)", engine.ErrUnavailable},
		{wrap("x", ocl.ErrCompilerNotAvailable), "CL_COMPILER_NOT_AVAILABLE (-3)", engine.ErrUnsupported},
		{wrap("x", ocl.ErrInvalidCompilerOptions), "CL_INVALID_COMPILER_OPTIONS (-66)", engine.ErrInvalidArg},
		{check("clFinish", OutOfResources), "cl: clFinish: CL_OUT_OF_RESOURCES (-5)", engine.ErrOutOfMemory},
		{wrap("x", ocl.ErrOther(-9999)), "CL_STATUS(-9999)", nil},
	}
	for _, c := range cases {
		if !strings.Contains(c.err.Error(), c.text) {
			t.Errorf("%q does not contain %q", c.err, c.text)
		}
		if c.is != nil && !errors.Is(c.err, c.is) {
			t.Errorf("%v: errors.Is %v is false", c.err, c.is)
		}
		for _, other := range []error{engine.ErrOutOfMemory, engine.ErrInvalidArg, engine.ErrNotFound, engine.ErrUnavailable, engine.ErrUnsupported} {
			if other != c.is && errors.Is(c.err, other) {
				t.Errorf("%v: errors.Is %v is true", c.err, other)
			}
		}
		var st Status
		if !errors.As(c.err, &st) {
			t.Errorf("%v: no Status inside", c.err)
		}
	}
	if wrap("x", nil) != nil || check("x", Success) != nil {
		t.Error("success wrapped as an error")
	}
	if err := wrap("x", ocl.ErrUnknown); !errors.Is(err, ocl.ErrUnknown) {
		t.Errorf("go-opencl's ErrUnknown lost: %v", err)
	}
}

func TestPCIBusID(t *testing.T) {
	le := func(vs ...uint32) []byte {
		var b []byte
		for _, v := range vs {
			b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
		return b
	}
	amd := make([]byte, 24)
	copy(amd, le(1))
	amd[21], amd[22], amd[23] = 0x43, 0x00, 0x01
	amdNotPCIe := make([]byte, 24)
	cases := []struct {
		name    string
		exts    string
		answers map[uint32][]byte
		want    string
	}{
		{"khr", "cl_khr_pci_bus_info", map[uint32][]byte{paramPCIBusInfoKHR: le(1, 0x17, 3, 1)}, "0001:17:03.1"},
		{"nv", "cl_nv_device_attribute_query", map[uint32][]byte{paramPCIBusIDNV: le(0xb3), paramPCISlotIDNV: le(2<<3 | 1)}, "0000:b3:02.1"},
		{"nv-domain", "cl_nv_device_attribute_query", map[uint32][]byte{paramPCIBusIDNV: le(0x01), paramPCISlotIDNV: le(0), paramPCIDomainIDNV: le(2)}, "0002:01:00.0"},
		{"khr-first", "cl_khr_pci_bus_info cl_nv_device_attribute_query", map[uint32][]byte{paramPCIBusInfoKHR: le(0, 0x65, 0, 0), paramPCIBusIDNV: le(1), paramPCISlotIDNV: le(0)}, "0000:65:00.0"},
		{"amd", "cl_amd_device_attribute_query", map[uint32][]byte{paramTopologyAMD: amd}, "0000:43:00.1"},
		{"amd-not-pcie", "cl_amd_device_attribute_query", map[uint32][]byte{paramTopologyAMD: amdNotPCIe}, ""},
		{"nv-query-fails", "cl_nv_device_attribute_query", map[uint32][]byte{}, ""},
		{"none", "cl_khr_fp64", map[uint32][]byte{paramPCIBusInfoKHR: le(0, 1, 2, 3)}, ""},
		{"short-answer", "cl_khr_pci_bus_info", map[uint32][]byte{paramPCIBusInfoKHR: le(0, 1)}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := func(param uint32) ([]byte, error) {
				if b, ok := c.answers[param]; ok {
					return b, nil
				}
				return nil, check("clGetDeviceInfo", InvalidValue)
			}
			exts := map[string]bool{}
			for _, e := range strings.Fields(c.exts) {
				exts[e] = true
			}
			if got := pciBusID(q, exts); got != c.want {
				t.Errorf("pciBusID = %q, want %q", got, c.want)
			}
		})
	}
}

func TestDriverClose(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		d := dev.Driver()
		b, err := d.Alloc(16)
		if err != nil {
			t.Fatal(err)
		}
		if b.Size() != 16 {
			t.Errorf("Size = %d", b.Size())
		}
		for i := 0; i < 2; i++ {
			if err := b.Close(); err != nil {
				t.Errorf("buffer Close %d: %v", i, err)
			}
		}
		p, err := d.Build(testSource, nil)
		if err != nil {
			t.Fatal(err)
		}
		k, err := p.Kernel("axpy")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := p.Close(); err != nil {
				t.Errorf("program Close %d: %v", i, err)
			}
		}
		if _, err := p.Kernel("axpy"); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("Kernel on a closed program: %v, want ErrClosed", err)
		}
		for i := 0; i < 2; i++ {
			if err := k.Close(); err != nil {
				t.Errorf("kernel Close %d: %v", i, err)
			}
		}
	})
}

// TestEventOutlivesDevice closes an event after its device, which the engine allows: the
// release must neither crash nor block (on Oclgrind it comes after the context's thread
// stopped).
func TestEventOutlivesDevice(t *testing.T) {
	infos := testDevices(t)
	dev, err := engine.Open(context.Background(), "opencl:"+infos[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	k := mustKernel(t, dev, "add_const")
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	v, err := engine.Upload(t.Context(), q, make([]int32, 64))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := q.LaunchEvent(k, engine.Range1D(64, 64), v, int32(1), int32(64))
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ev.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestKernelAttributes reads clGetKernelWorkGroupInfo for a kernel with a __local array of
// 256 floats: a driver that reports its local memory reports at least those 1024 bytes
// (PoCL 3.1 1024, NVIDIA 580 1028; PoCL 5.0 reports 0, "not reported", seen 2026-11-23).
func TestKernelAttributes(t *testing.T) {
	const src = `__kernel void tile(__global float *x) {
	__local float t[256];
	const int l = (int)get_local_id(0);
	t[l] = x[get_global_id(0)];
	barrier(CLK_LOCAL_MEM_FENCE);
	x[get_global_id(0)] = t[(int)get_local_size(0) - 1 - l];
}`
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		prog, err := dev.Build(src)
		if err != nil {
			t.Fatal(err)
		}
		k, err := prog.Kernel("tile")
		if err != nil {
			t.Fatal(err)
		}
		a := k.Attributes()
		t.Logf("%+v", a)
		if a.MaxWorkGroupSize <= 0 || a.MaxWorkGroupSize > dev.Info().MaxWorkGroupSize || a.PreferredMultiple <= 0 {
			t.Errorf("work-group limit %d (device %d), preferred multiple %d", a.MaxWorkGroupSize, dev.Info().MaxWorkGroupSize, a.PreferredMultiple)
		}
		if a.LocalBytes != 0 && a.LocalBytes < 1024 {
			t.Errorf("LocalBytes = %d, want at least the 1024 bytes of the __local array (or 0, not reported)", a.LocalBytes)
		}
	})
}

func TestKernelAttributesDecode(t *testing.T) {
	size := func(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }
	for _, c := range []struct {
		name    string
		answers map[uint32][]byte
		want    driver.KernelAttributes
	}{
		{"all", map[uint32][]byte{kernelWorkGroupSize: size(256), kernelLocalMemSize: size(1024), kernelPrivateMemSize: size(16), kernelPreferredWGMultiple: size(32)},
			driver.KernelAttributes{MaxWorkGroupSize: 256, LocalBytes: 1024, PrivateBytes: 16, PreferredMultiple: 32}},
		{"none", map[uint32][]byte{}, driver.KernelAttributes{}},
		{"short answer", map[uint32][]byte{kernelWorkGroupSize: size(64), kernelLocalMemSize: {1, 2}}, driver.KernelAttributes{MaxWorkGroupSize: 64}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := func(param uint32) ([]byte, error) {
				if b, ok := c.answers[param]; ok {
					return b, nil
				}
				return nil, check("clGetKernelWorkGroupInfo", InvalidValue)
			}
			if got := kernelAttributes(q); got != c.want {
				t.Errorf("kernelAttributes = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestCheckLaunch(t *testing.T) {
	r := driver.Range{Dims: 1, Global: [3]int{64, 1, 1}, Local: [3]int{64, 1, 1}}
	for _, c := range []struct {
		name string
		r    driver.Range
		want error
	}{
		{"plain", r, nil},
		{"4 dimensions", driver.Range{Dims: 4}, engine.ErrInvalidArg},
		{"shared bytes", r.WithSharedBytes(1024), engine.ErrUnsupported},
		{"cluster", r.WithCluster(2, 1, 1), engine.ErrUnsupported},
	} {
		err := checkLaunch(c.r)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: checkLaunch = %v, want %v", c.name, err, c.want)
		}
	}
}

// TestErrorPrefix: the package's errors say "cl: " once, also when one wraps another.
func TestErrorPrefix(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{wrap("clFinish", errClosed("device")), "cl: clFinish: device is closed: use of closed object"},
		{wrapf(errClosed("buffer"), "launch k: argument %d", 3), "cl: launch k: argument 3: buffer is closed: use of closed object"},
		{check("clFinish", OutOfResources), "cl: clFinish: CL_OUT_OF_RESOURCES (-5)"},
		{wrapf(check("clSetKernelArg(k, 1)", InvalidArgSize), "launch k"), "cl: launch k: clSetKernelArg(k, 1): CL_INVALID_ARG_SIZE (-51)"},
	} {
		if c.err.Error() != c.want || enginetest.RepeatedPrefix(c.err) != "" {
			t.Errorf("got %q, want %q", c.err, c.want)
		}
	}
	if err := wrap("clFinish", errClosed("device")); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("%v does not wrap ErrClosed", err)
	}
}

// TestTrace probes, opens and builds with PRISM_TRACE=1 and checks what the trace says:
// the library loaded, the platforms, the queue and thread policy, the builds.
func TestTrace(t *testing.T) {
	infos := testDevices(t)
	t.Setenv("PRISM_TRACE", "1")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	func() {
		defer func() { os.Stderr = stderr }()
		d := &Driver{}
		if _, err := d.Devices(context.Background()); err != nil {
			t.Error(err)
			return
		}
		dev, err := d.Open(context.Background(), infos[0].ID)
		if err != nil {
			t.Error(err)
			return
		}
		defer dev.Close()
		p, err := dev.Build(testSource, []string{"-DWG=64"})
		if err != nil {
			t.Error(err)
			return
		}
		p.Close()
	}()
	w.Close()
	out := <-done
	t.Logf("trace:\n%s", out)
	for _, want := range []string{"prism: cl: loaded ", "libOpenCL.so", "platform 0: ", "opened " + infos[0].ID, `with options "-DWG=64"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the trace does not say %q", want)
		}
	}
}
