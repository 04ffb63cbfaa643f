package cuda

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
)

// Tests below that need a GPU get their devices from enginetest.DeviceIDs: without
// libcuda, NVRTC or a device they are skipped with the reason, unless PRISM_REQUIRE names
// "cuda" (the GPU machine), where that is a failure.

// TestConformance runs the backend conformance suite on every CUDA device.
func TestConformance(t *testing.T) {
	for _, id := range enginetest.DeviceIDs(t, "cuda") {
		t.Run(id, func(t *testing.T) { enginetest.TestDevice(t, id, enginetest.Options{}) })
	}
}

// TestMissingLibraries points the loader at libraries that do not exist and checks the
// error: it wraps engine.ErrUnavailable and names every library tried, with dlerror's
// message.
func TestMissingLibraries(t *testing.T) {
	withLoader(t, []string{"libcuda-does-not-exist.so.1"}, []string{"libnvrtc-does-not-exist.so.13", "libnvrtc-nor-this.so"})
	d := &Driver{}
	_, err := d.Devices(context.Background())
	if !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("Devices without the libraries = %v, want an error wrapping ErrUnavailable", err)
	}
	for _, want := range []string{"libcuda-does-not-exist.so.1", "libnvrtc-does-not-exist.so.13", "libnvrtc-nor-this.so", "cannot open shared object file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
	if _, err := d.Open(context.Background(), "0"); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Open without the libraries = %v, want ErrUnavailable", err)
	}
	// The failure is not kept: a later call tries again.
	if _, err2 := d.Devices(context.Background()); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second Devices = %v", err2)
	}
	t.Logf("%v", err)

	// Through engine, as `prism devices` sees it, each layer says its prefix once: it
	// once read "engine: cuda: cuda: cannot load ...".
	const name = "cuda-without-libraries"
	engine.Register(name, &Driver{})
	_, err = engine.Devices(context.Background(), name)
	if !strings.HasPrefix(err.Error(), "cuda: cannot load ") || enginetest.RepeatedPrefix(err) != "" {
		t.Errorf("engine.Devices = %v, want the backend's error, starting \"cuda: cannot load \", no prefix repeated", err)
	}
	_, err = engine.Open(context.Background(), name+":0")
	if !strings.HasPrefix(err.Error(), "engine: open "+name+":0: cuda: cannot load ") || enginetest.RepeatedPrefix(err) != "" {
		t.Errorf("engine.Open = %v, want engine's context before the backend's error, no prefix repeated", err)
	}
	t.Logf("%v", err)
}

// TestMissingNVRTC: with the driver library (or not) but no NVRTC, the backend is
// unavailable and says which NVRTC libraries it tried.
func TestMissingNVRTC(t *testing.T) {
	withLoader(t, cudaLibraries, []string{"libnvrtc-does-not-exist.so.13"})
	_, err := (&Driver{}).Devices(context.Background())
	if !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), "libnvrtc-does-not-exist.so.13") {
		t.Errorf("Devices without NVRTC = %v, want ErrUnavailable naming the library", err)
	}
}

// withLoader sets the library names for one test and forgets what was loaded, restoring
// both afterwards. A failed load changes nothing in the function table, so the libraries
// loaded before (on a GPU machine) stay usable.
func withLoader(t *testing.T, cudaNames, nvrtcNames []string) {
	loader.mu.Lock()
	oldCUDA, oldNVRTC := cudaLibraries, nvrtcLibraries
	oldPaths := [2]string{loader.cudaPath, loader.nvrtcPath}
	cudaLibraries, nvrtcLibraries = cudaNames, nvrtcNames
	loader.cudaPath, loader.nvrtcPath = "", ""
	loader.mu.Unlock()
	t.Cleanup(func() {
		loader.mu.Lock()
		defer loader.mu.Unlock()
		cudaLibraries, nvrtcLibraries = oldCUDA, oldNVRTC
		if loader.cudaPath == "" {
			loader.cudaPath = oldPaths[0]
		}
		if loader.nvrtcPath == "" {
			loader.nvrtcPath = oldPaths[1]
		}
	})
}

// TestRegistered: init registers the backend (and does nothing else: the libraries are
// loaded by the first Devices or Open).
func TestRegistered(t *testing.T) {
	found := false
	for _, b := range engine.Backends() {
		found = found || b == "cuda"
	}
	if !found {
		t.Fatal(`backend "cuda" is not registered`)
	}
}

// TestDevices is the real probe: it skips here without libcuda (failing under
// PRISM_REQUIRE=cuda) and checks what the driver reports on the GPU machine.
func TestDevices(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "cuda")
	infos, err := engine.Devices(context.Background(), "cuda")
	if err != nil {
		t.Fatal(err)
	}
	pciRE := regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)
	for i, in := range infos {
		t.Logf("%s: %q %s, %s, driver %s, %s, %d SMs @ %d MHz, mem %d, local %d, wg %d %v, fp64 %v fp16 %v, pci %q",
			ids[i], in.Name, in.Vendor, in.APIVersion, in.DriverVersion, in.LanguageVersion, in.ComputeUnits, in.ClockMHz,
			in.GlobalMemBytes, in.LocalMemBytes, in.MaxWorkGroupSize, in.MaxWorkItemSizes, in.FP64, in.FP16, in.PCIBusID)
		if in.ID != strings.TrimPrefix(ids[i], "cuda:") || in.Vendor != "NVIDIA" || in.Kind != driver.KindGPU || !in.FP64 {
			t.Errorf("%s: %+v", ids[i], in)
		}
		if !regexp.MustCompile(`^CUDA \d+\.\d+$`).MatchString(in.APIVersion) || !regexp.MustCompile(`^sm_\d+$`).MatchString(in.LanguageVersion) {
			t.Errorf("%s: API version %q, language version %q", ids[i], in.APIVersion, in.LanguageVersion)
		}
		if !pciRE.MatchString(in.PCIBusID) {
			t.Errorf("%s: PCI bus ID %q", ids[i], in.PCIBusID)
		}
		if in.ComputeUnits <= 0 || in.GlobalMemBytes <= 0 || in.MaxWorkGroupSize <= 0 || in.MaxWorkItemSizes[2] <= 0 || in.LocalMemBytes <= 0 {
			t.Errorf("%s: implausible limits %+v", ids[i], in)
		}
	}
}

// forEachDevice runs f as a subtest on every CUDA device, opened through engine.
func forEachDevice(t *testing.T, f func(t *testing.T, dev *engine.Device)) {
	t.Helper()
	enginetest.ForEachDevice(t, "cuda", f)
}

const testSource = `
__kernel void axpy(__global float* y, __global const float* x, const float a, const int n) {
	const int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + y[i];
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void block_sum(__global int* out, __global const int* in) {
	__local int s[64];
	const int l = (int)get_local_id(0);
	s[l] = in[get_global_id(0)];
	barrier(CLK_LOCAL_MEM_FENCE);
	if (l == 0) {
		int acc = 0;
		for (int i = 0; i < 64; i++) acc += s[i];
		atomic_add(&out[0], acc);
	}
}
`

func TestKernelInfo(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		dp, err := dev.Driver().Build(testSource, []string{"-cl-std=CL1.2", "-cl-mad-enable", "-cl-fast-relaxed-math"})
		if err != nil {
			t.Fatal(err)
		}
		defer dp.Close()
		dk, err := dp.Kernel("block_sum")
		if err != nil {
			t.Fatal(err)
		}
		defer dk.Close()
		k := dk.(Kernel)
		// The parameters read from the module image agree with the driver's own answer,
		// asked past the last parameter (built twice: compiled, then from the cache).
		for round := range 2 {
			p := dp.(*program)
			if round == 1 {
				again, err := dev.Driver().Build(testSource, []string{"-cl-std=CL1.2", "-cl-mad-enable", "-cl-fast-relaxed-math"})
				if err != nil {
					t.Fatal(err)
				}
				defer again.Close()
				p = again.(*program)
			}
			for name, want := range map[string]int{"axpy": 4, "block_sum": 2} {
				if got, ok := p.params[name]; !ok || got != want {
					t.Errorf("build %d: %s has %d parameters in its image (found %v), want %d", round, name, got, ok, want)
				}
				if !haveFuncGetParamInfo() {
					continue
				}
				fk, err := p.Kernel(name)
				if err != nil {
					t.Fatal(err)
				}
				ck, _ := asKernel(fk)
				var probed []int
				var counted bool
				p.d.th.Call(func() error {
					probed, counted = paramSizes(-1, func(i int) (int, Result) {
						_, size, r := cuFuncGetParamInfo(ck.fn, i)
						return size, r
					})
					return nil
				})
				if !counted || len(probed) != want || !slices.Equal(probed, ck.params) {
					t.Errorf("%s: the driver probed %v (%v), the kernel holds %v", name, probed, counted, ck.params)
				}
				fk.Close()
			}
		}
		if k.MaxWorkGroupSize() != 64 {
			t.Errorf("block_sum requires 64 work-items (launch bounds): MaxWorkGroupSize = %d", k.MaxWorkGroupSize())
		}
		if c, ok := dk.(driver.ArgCounter); ok && c.NumArgs() != 2 {
			t.Errorf("NumArgs = %d, want 2", c.NumArgs())
		} else if !ok {
			t.Logf("the driver has no cuFuncGetParamInfo: argument counts are not checked")
		}
		n, err := k.MaxActiveBlocksPerMultiprocessor(64, 0)
		if err != nil || n <= 0 {
			t.Errorf("occupancy: %d, %v", n, err)
		}
		if _, err := dp.Kernel("no_such_kernel"); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "cuModuleGetFunction") {
			t.Errorf("unknown kernel: %v, want ErrNotFound naming cuModuleGetFunction", err)
		}

		// Through engine: a launch with the required work-group size.
		prog, err := dev.Build(testSource)
		if err != nil {
			t.Fatal(err)
		}
		ek, err := prog.Kernel("block_sum")
		if err != nil {
			t.Fatal(err)
		}
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		in := make([]int32, 64*50)
		sum := int32(0)
		for i := range in {
			in[i] = int32(i%7 - 3)
			sum += in[i]
		}
		inBuf, err := engine.Upload(t.Context(), q, in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := engine.Upload(t.Context(), q, []int32{0})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Launch(ek, engine.Range1D(len(in), 64), out, inBuf); err != nil {
			t.Fatal(err)
		}
		got, err := out.Download(t.Context(), q)
		if err != nil || got[0] != sum {
			t.Errorf("block_sum = %v, %v; want %d", got, err, sum)
		}
	})
}

func TestBuildError(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		src := "__kernel void broken(__global float* y) {\n  y[0] = prism_undeclared_thing;\n}\n"
		_, err := dev.Build(src, "-DWG=64")
		var be *engine.BuildError
		if !errors.As(err, &be) || !errors.Is(err, engine.ErrBuild) {
			t.Fatalf("error %v: want a *BuildError wrapping ErrBuild", err)
		}
		if !strings.Contains(be.Log, "prism_undeclared_thing") || !strings.Contains(be.Log, "kernel.cl(2)") {
			t.Errorf("log does not name the identifier at kernel.cl line 2:\n%s", be.Log)
		}
		var nr NVRTCResult
		if !errors.As(err, &nr) || nr != NVRTCCompilation || !strings.Contains(err.Error(), "nvrtcCompileProgram") {
			t.Errorf("status %v in %v, want NVRTC_ERROR_COMPILATION from nvrtcCompileProgram", nr, err)
		}
		_, err = dev.Build(`__kernel void k(__global int* p) { p[0] = 1; }`, "-prism-no-such-option")
		if !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("unknown option: %v, want ErrInvalidArg", err)
		}
		t.Logf("unknown option: %v", err)
		_, err = dev.Build(`__kernel void k(__global int* p) { p[0] = 1; }`, "-cl-no-such-option")
		if !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("unknown OpenCL option: %v, want ErrInvalidArg", err)
		}
	})
}

// TestCache builds one source twice with a fresh cache directory: the first build stores
// an entry, the second loads it; a damaged entry is rebuilt.
func TestCache(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		t.Setenv("PRISM_CACHE_DIR", t.TempDir())
		src := testSource + "\n// " + t.Name() + "\n"
		build := func() time.Duration {
			start := time.Now()
			p, err := dev.Build(src)
			if err != nil {
				t.Fatal(err)
			}
			d := time.Since(start)
			k, err := p.Kernel("axpy")
			if err != nil {
				t.Fatal(err)
			}
			k.Close()
			p.Close()
			return d
		}
		cold := build()
		files, _ := os.ReadDir(cacheDir())
		if len(files) != 1 {
			t.Fatalf("cache holds %d files after one build, want 1", len(files))
		}
		warm := build()
		t.Logf("build: cold %v, cached %v", cold, warm)
		path := cacheDir() + "/" + files[0].Name()
		if err := os.WriteFile(path, []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
		build()
		if b, _ := os.ReadFile(path); bytes.Equal(b, []byte("garbage")) {
			t.Error("a damaged entry was not replaced")
		}
	})
}

// TestFillPatterns fills with every pattern length the SPI allows, through the driver.
func TestFillPatterns(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		d := dev.Driver()
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		const size = 4096
		b, err := d.Alloc(size)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		for _, n := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
			pattern := make([]byte, n)
			for i := range pattern {
				pattern[i] = byte(31*i + n)
			}
			init := bytes.Repeat([]byte{0xEE}, size)
			if err := q.Write(b, 0, unsafe.Pointer(&init[0]), size); err != nil {
				t.Fatal(err)
			}
			off, count := int64(n*3), int64(n*21)
			ev, err := q.Fill(b, off, pattern, count)
			if err != nil {
				t.Fatalf("Fill with a %d-byte pattern: %v", n, err)
			}
			if err := ev.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			if el, err := ev.Elapsed(); err != nil || el < 0 {
				t.Errorf("Elapsed = %v, %v", el, err)
			}
			ev.Close()
			got := make([]byte, size)
			if err := q.Read(b, 0, unsafe.Pointer(&got[0]), size); err != nil {
				t.Fatal(err)
			}
			want := bytes.Repeat([]byte{0xEE}, size)
			copy(want[off:], bytes.Repeat(pattern, int(count)/n))
			if !bytes.Equal(got, want) {
				t.Errorf("fill with a %d-byte pattern: wrong memory", n)
			}
		}
	})
}

// TestHostBuffer copies through pinned host memory.
func TestHostBuffer(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		cd, ok := dev.Driver().(Device)
		if !ok {
			t.Fatalf("Driver() is %T, not a cuda.Device", dev.Driver())
		}
		p := cd.Properties()
		t.Logf("properties: %+v", p)
		if free, total, err := cd.MemInfo(); err != nil || free <= 0 || total < free {
			t.Errorf("MemInfo = %d, %d, %v", free, total, err)
		}
		h, err := cd.AllocHost(1 << 20)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		xs := HostSlice[float32](h)
		if len(xs) != 1<<18 {
			t.Fatalf("HostSlice has %d elements", len(xs))
		}
		for i := range xs {
			xs[i] = float32(i)
		}
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		buf, err := engine.Upload(t.Context(), q, xs)
		if err != nil {
			t.Fatal(err)
		}
		clear(xs)
		if err := buf.Read(t.Context(), q, 0, xs); err != nil {
			t.Fatal(err)
		}
		for i, v := range xs {
			if v != float32(i) {
				t.Fatalf("xs[%d] = %v after a round trip through pinned memory", i, v)
			}
		}
		if err := h.Close(); err != nil || h.Close() != nil || h.Pointer() != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

// TestEventWaitCanceled: a canceled context ends waits at once; a later wait completes.
func TestEventWaitCanceled(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		prog, err := dev.Build(testSource)
		if err != nil {
			t.Fatal(err)
		}
		k, err := prog.Kernel("axpy")
		if err != nil {
			t.Fatal(err)
		}
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		const n = 1 << 22
		x, _ := engine.NewBuffer[float32](dev, n)
		y, _ := engine.NewBuffer[float32](dev, n)
		ev, err := q.LaunchEvent(k, engine.Range1D(n, 256), y, x, float32(1), int32(n))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := ev.Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("wait with a canceled context: %v", err)
		}
		if err := q.Finish(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("finish with a canceled context: %v", err)
		}
		if d, err := ev.Elapsed(context.Background()); err != nil || d <= 0 {
			t.Errorf("Elapsed = %v, %v", d, err)
		}
		ev.Close()
		if err := q.Finish(context.Background()); err != nil {
			t.Error(err)
		}
	})
}

// TestBuildCUDA compiles NVIDIA-only kernels in CUDA C++, without the prelude, and
// launches them through the driver: a warp shuffle; on sm_90, a kernel that only the
// architecture-specific target compute_90a accepts (setmaxnreg); and one that converts
// through the embedded prism_cuda.h, checked against Go's rounding.
func TestBuildCUDA(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		cd := dev.Driver().(Device)
		const src = `extern "C" __global__ void warp_sum(int *out) {
	int v = threadIdx.x;
	for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
	if (threadIdx.x == 0) out[0] = v;
}`
		cuSrc := func(text string) driver.Source {
			return driver.Source{Dialect: driver.DialectCUDA, Text: text, Name: t.Name() + ".cu"}
		}
		if _, err := cd.BuildSource(cuSrc(src), []string{"-arch=sm_80"}); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("BuildSource with -arch: %v, want ErrInvalidArg", err)
		}
		p, err := cd.BuildSource(cuSrc(src), []string{"-DUNUSED=1"})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		k, err := p.Kernel("warp_sum")
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		t.Logf("warp_sum: %+v", k.(Kernel).Attributes())
		q, err := cd.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		b, err := cd.Alloc(4)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		ev, err := q.Launch(k, driver.Range{Dims: 1, Global: [3]int{32, 1, 1}, Local: [3]int{32, 1, 1}}, []driver.Arg{{Buffer: b}})
		if err != nil {
			t.Fatal(err)
		}
		ev.Close()
		var got int32
		if err := q.Read(b, 0, unsafe.Pointer(&got), 4); err != nil || got != 31*32/2 {
			t.Errorf("warp_sum = %d, %v; want %d", got, err, 31*32/2)
		}

		if cc := cd.Properties().ComputeCapability; cc == [2]int{9, 0} {
			// setmaxnreg is an sm_90a instruction: it compiles only for compute_90a.
			const hopper = `extern "C" __global__ void __launch_bounds__(128) hopper(int *out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
	if (threadIdx.x == 0) out[0] = 90;
#else
	if (threadIdx.x == 0) out[0] = -1;
#endif
}`
			hp, err := cd.BuildSource(cuSrc(hopper), nil)
			if err != nil {
				t.Fatalf("an sm_90a kernel: %v", err)
			}
			defer hp.Close()
			hk, err := hp.Kernel("hopper")
			if err != nil {
				t.Fatal(err)
			}
			defer hk.Close()
			t.Logf("hopper: %+v", hk.(Kernel).Attributes())
			ev, err := q.Launch(hk, driver.Range{Dims: 1, Global: [3]int{128, 1, 1}, Local: [3]int{128, 1, 1}}, []driver.Arg{{Buffer: b}})
			if err != nil {
				t.Fatal(err)
			}
			ev.Close()
			if err := q.Read(b, 0, unsafe.Pointer(&got), 4); err != nil || got != 90 {
				t.Errorf("hopper = %d, %v; want 90 (built for compute_90a)", got, err)
			}
		}
	})
}

// TestHeaderConversions converts floats to half and bfloat16 and back through the embedded
// prism_cuda.h, on the device, and compares with the same rounding done in Go.
func TestHeaderConversions(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		const src = `#include "prism_cuda.h"
extern "C" __global__ void convert(int n, const float *in, uint16_t *h, uint16_t *b, float *hf, float *bf) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		const prism_half x = prism_float_to_half(in[i]);
		const prism_bfloat16 y = prism_float_to_bfloat16(in[i]);
		h[i] = x.bits;
		b[i] = y.bits;
		hf[i] = prism_half_to_float(x);
		bf[i] = prism_bfloat16_to_float(y);
	}
}`
		prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: src, Name: "convert.cu"})
		if err != nil {
			t.Fatal(err)
		}
		k, err := prog.Kernel("convert")
		if err != nil {
			t.Fatal(err)
		}
		in := []float32{0, 1, -1, 0.1, 65504, 65520, 1e-8, 3.14159265, float32(math.Inf(-1)), float32(math.NaN()), 1 + 1.0/1024 + 1.0/4096, 1.00390625}
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		n := len(in)
		inBuf, _ := engine.Upload(t.Context(), q, in)
		h, _ := engine.NewBuffer[uint16](dev, n)
		b, _ := engine.NewBuffer[uint16](dev, n)
		hf, _ := engine.NewBuffer[float32](dev, n)
		bf, _ := engine.NewBuffer[float32](dev, n)
		if err := q.Launch(k, engine.Range1D(32, 32), int32(n), inBuf, h, b, hf, bf); err != nil {
			t.Fatal(err)
		}
		hs, _ := h.Download(t.Context(), q)
		bs, _ := b.Download(t.Context(), q)
		hfs, _ := hf.Download(t.Context(), q)
		bfs, _ := bf.Download(t.Context(), q)
		for i, x := range in {
			if math.IsNaN(float64(x)) {
				if hs[i]&0x7c00 != 0x7c00 || hs[i]&0x3ff == 0 || bs[i]&0x7f80 != 0x7f80 || bs[i]&0x7f == 0 {
					t.Errorf("NaN: half %#04x, bfloat16 %#04x: want NaNs", hs[i], bs[i])
				}
				continue
			}
			wantB := uint16((math.Float32bits(x) + 0x7fff + (math.Float32bits(x)>>16)&1) >> 16)
			if bs[i] != wantB || math.Float32bits(bfs[i]) != uint32(wantB)<<16 {
				t.Errorf("bfloat16(%g) = %#04x -> %g, want %#04x", x, bs[i], bfs[i], wantB)
			}
			if x == 1 && hs[i] != 0x3c00 || x == -1 && hs[i] != 0xbc00 || x == 65520 && hs[i] != 0x7c00 {
				t.Errorf("half(%g) = %#04x", x, hs[i])
			}
			if d := math.Abs(float64(hfs[i]) - float64(x)); !math.IsInf(float64(x), 0) && x <= 65504 && d > math.Abs(float64(x))/2048+1e-7 {
				t.Errorf("half(%g) -> %g: more than half an ulp away", x, hfs[i])
			}
		}
	})
}

// TestLaunchUntimed launches from several goroutines at once, each with its own queue,
// without events (the path of Queue.Launch outside Timed: the context made current on
// whatever thread each goroutine runs on), mixed with timed launches on the same queues:
// every launch must land, in order. (The conformance suite checks that an untimed launch
// allocates nothing.)
func TestLaunchUntimed(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		prog, err := dev.Build(testSource)
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		k, err := prog.Kernel("axpy")
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		const n, launches, workers = 4099, 300, 4
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%5 - 2)
		}
		errs := make(chan error, workers)
		for w := range workers {
			go func() {
				errs <- func() error {
					q, err := dev.NewQueue()
					if err != nil {
						return err
					}
					defer q.Close()
					xb, err := engine.Upload(t.Context(), q, x)
					if err != nil {
						return err
					}
					defer xb.Close()
					yb, err := engine.Upload(t.Context(), q, make([]float32, n))
					if err != nil {
						return err
					}
					defer yb.Close()
					a, m := float32(w+1), int32(n)
					r := engine.Range1D(engine.RoundUp(n, 128), 128)
					for i := range launches {
						if i%50 == 7 { // a timed launch between untimed ones
							if _, err := q.Timed(t.Context(), func() error { return q.Launch(k, r, yb, xb, a, m) }); err != nil {
								return err
							}
							continue
						}
						if err := q.Launch(k, r, yb, xb, a, m); err != nil {
							return err
						}
					}
					y, err := yb.Download(t.Context(), q)
					if err != nil {
						return err
					}
					for i := range y {
						if want := float32(launches) * a * x[i]; y[i] != want {
							return fmt.Errorf("worker %d: y[%d] = %v after %d launches, want %v", w, i, y[i], launches, want)
						}
					}
					return nil
				}()
			}()
		}
		for range workers {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}

	})
}

// TestReachPeer (two GPUs) runs a kernel on one CUDA device that reads a buffer of the
// other through engine's Buffer.Reach (peer access: the kernel loads across NVLink or
// PCIe) and checks every element, and that the Remote is refused on the other device's
// queue. It does so twice, the devices closed and opened again between: an opening
// gets the primary context's handle back, but a new context and pool, which must be
// opened to the peer again. It skips with fewer than two devices.
func TestReachPeer(t *testing.T) { reopened(t, reachPeer) }

// reopened runs round as two subtests on the first two CUDA devices, which round opens
// and closes itself: the second round on devices opened again. It skips with fewer than
// two devices.
func reopened(t *testing.T, round func(t *testing.T, ids []string)) {
	ids := enginetest.DeviceIDs(t, "cuda")
	if len(ids) < 2 {
		t.Skipf("needs two CUDA devices, found %d", len(ids))
	}
	for _, name := range []string{"opened", "opened again"} {
		t.Run(name, func(t *testing.T) { round(t, ids[:2]) })
	}
}

// openTwo opens the devices of ids (two) and a queue on each, closed when the test ends.
func openTwo(t *testing.T, ids []string) (devs [2]*engine.Device, qs [2]*engine.Queue) {
	t.Helper()
	for i, id := range ids[:2] {
		dev, err := engine.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dev.Close() })
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		devs[i], qs[i] = dev, q
	}
	return devs, qs
}

// kernelOf builds source on dev and returns its kernel name, released when the test ends.
func kernelOf(t *testing.T, dev *engine.Device, name, source string) *engine.Kernel {
	t.Helper()
	prog, err := dev.Build(source)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	k, err := prog.Kernel(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// reachPeer is one round of TestReachPeer on two devices it opens, and closes at the end.
func reachPeer(t *testing.T, ids []string) {
	ctx := context.Background()
	devs, qs := openTwo(t, ids)
	k := kernelOf(t, devs[0], "plus_one", `__kernel void plus_one(__global uint *dst, __global const uint *src, uint n) {
	uint i = get_global_id(0);
	if (i < n) dst[i] = src[i] + 1u;
}`)
	const n = 1<<20 + 7
	data := make([]uint32, n)
	for i := range data {
		data[i] = uint32(i*2654435761) ^ 0x5bd1e995
	}
	src, err := engine.Upload(ctx, qs[1], data)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := engine.NewBuffer[uint32](devs[0], n)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := qs[1].Finish(ctx); err != nil {
		t.Fatal(err)
	}
	remote, err := src.Reach(qs[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := remote.(engine.Remote); !ok {
		t.Fatalf("Reach from another GPU gave %T, want an engine.Remote", remote)
	}
	if err := qs[0].Launch(k, engine.Range1D((n+255)/256*256, 256), dst, remote, uint32(n)); err != nil {
		t.Fatal(err)
	}
	got, err := dst.Download(ctx, qs[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != data[i]+1 {
			t.Fatalf("element %d: %d, want %d", i, v, data[i]+1)
		}
	}
	prog1, err := devs[1].Build(`__kernel void plus_one(__global uint *dst, __global const uint *src, uint n) { }`)
	if err != nil {
		t.Fatal(err)
	}
	defer prog1.Close()
	k1, err := prog1.Kernel("plus_one")
	if err != nil {
		t.Fatal(err)
	}
	if err := qs[1].Launch(k1, engine.Range1D(256, 256), src, remote, uint32(n)); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("a Remote reached for %s launched on %s: %v, want ErrInvalidArg", ids[0], ids[1], err)
	}
}

// TestWaitAcross (two GPUs) orders a copy on one CUDA device after kernels of the other
// through engine.Queue.Wait on the device (driver.PeerEventWaiter): forty launches on the
// first device write a buffer, the last one with the round's values, an event is recorded
// after them, the second device's queue waits for it and copies the buffer across. The
// copy must find the last launch's values in every round: a wait that did not hold would
// let it read an earlier launch's. It skips with fewer than two devices.
func TestWaitAcross(t *testing.T) { reopened(t, waitAcross) }

// waitAcross is one round of TestWaitAcross on two devices it opens, and closes at the end.
func waitAcross(t *testing.T, ids []string) {
	ctx := context.Background()
	devs, qs := openTwo(t, ids)
	k := kernelOf(t, devs[0], "fill_from", `__kernel void fill_from(__global uint *dst, uint n, uint off) {
	uint i = get_global_id(0);
	if (i < n) dst[i] = i + off;
}`)
	const n = 1<<24 + 5
	src, err := engine.NewBuffer[uint32](devs[0], n)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := engine.NewBuffer[uint32](devs[1], n)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	r := engine.Range1D((n+255)/256*256, 256)
	for round := range 3 {
		off := uint32(round*1000 + 7)
		for j := range 40 {
			if err := qs[0].Launch(k, r, src, uint32(n), uint32(1<<20*(j+1))); err != nil {
				t.Fatal(err)
			}
		}
		if err := qs[0].Launch(k, r, src, uint32(n), off); err != nil {
			t.Fatal(err)
		}
		ev, err := qs[0].Record()
		if err != nil {
			t.Fatal(err)
		}
		if err := qs[1].Wait(ctx, ev); err != nil {
			t.Fatal(err)
		}
		ev.Close()
		if err := dst.CopyFrom(qs[1], 0, src, 0, n); err != nil {
			t.Fatal(err)
		}
		got, err := dst.Download(ctx, qs[1])
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != uint32(i)+off {
				t.Fatalf("round %d: element %d copied after the wait is %d, want %d", round, i, v, uint32(i)+off)
			}
		}
		if err := qs[0].Finish(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPeerAccess (two GPUs) copies between two CUDA devices of this process and checks the
// bytes and that the first copy enabled peer access both ways (enablePeers), so that the
// copies go over NVLink or PCIe rather than through host memory. It skips with fewer than
// two devices (so it does under PRISM_REQUIRE=cuda on one GPU: the requirement is a device).
// It runs twice, the devices closed and opened again between (see TestReachPeer).
func TestPeerAccess(t *testing.T) { reopened(t, peerAccess) }

// openRank opens the CUDA device id through drv and a queue on it, both closed when tb
// ends.
func openRank(tb testing.TB, drv *Driver, id string) ncclRank {
	tb.Helper()
	dd, err := drv.Open(context.Background(), strings.TrimPrefix(id, "cuda:"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { dd.Close() })
	dq, err := dd.NewQueue()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { dq.Close() })
	return ncclRank{d: dd.(*device), q: dq.(*queue)}
}

// peerAccess is one round of TestPeerAccess on two devices it opens.
func peerAccess(t *testing.T, ids []string) {
	drv := &Driver{}
	rs := make([]ncclRank, 2)
	for i, id := range ids {
		rs[i] = openRank(t, drv, id)
	}
	data := make([]byte, 1<<20+3)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	src := upload(t, rs[1], data)
	dst := upload(t, rs[0], make([]byte, len(data)+16))
	if err := rs[1].q.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev, err := rs[0].q.CopyPeer(dst, 8, src, 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if ev != nil {
		ev.Close()
	}
	got := download(t, rs[0], dst, len(data)+16)
	if !bytes.Equal(got[8:8+len(data)], data) {
		t.Fatal("the peer copy's bytes differ from the source's")
	}
	if !bytes.Equal(got[:8], make([]byte, 8)) || !bytes.Equal(got[8+len(data):], make([]byte, 8)) {
		t.Fatal("the peer copy wrote outside its range")
	}
	// What a large copy moves between the two (logged, not asserted): over NVLink some
	// hundreds of GB/s, through host memory about 55.
	const big = 256 << 20
	for _, dir := range [][2]int{{1, 0}, {0, 1}} {
		from, to := rs[dir[0]], rs[dir[1]]
		t0 := time.Now()
		sb, err := from.d.Alloc(big)
		if err != nil {
			t.Fatal(err)
		}
		db, err := to.d.Alloc(big)
		if err != nil {
			t.Fatal(err)
		}
		alloc := time.Since(t0) / 2
		best := time.Duration(1 << 62)
		for range 5 {
			t0 = time.Now()
			ev, err := to.q.CopyPeer(db, 0, sb, 0, big)
			if err != nil {
				t.Fatal(err)
			}
			if ev != nil {
				ev.Close()
			}
			if err := to.q.Finish(context.Background()); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(t0))
		}
		t.Logf("%s to %s: %d MiB in %v (%.0f GB/s, best of 5); an allocation of that size took %v", from.d.info.ID, to.d.info.ID, big>>20, best, float64(big)/best.Seconds()/1e9, alloc)
		sb.Close()
		db.Close()
	}
	// Both ways at once, each device pulling from the other as the sharded sort exchanges,
	// between buffers of the stream-ordered pools engine allocates from (which peer access
	// alone does not open to the other device: enablePeers grants them), where the devices
	// have pools; the bytes are checked.
	var bufs [2][2]driver.Buffer // [device][source, destination]
	pattern := make([]byte, big)
	for i := range pattern {
		pattern[i] = byte(i*13 + i>>16)
	}
	for i := range rs {
		for k := range 2 {
			alloc := rs[i].d.Alloc
			if rs[i].d.pooled() != nil {
				alloc = rs[i].d.AllocPooled
			}
			b, err := alloc(big)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			bufs[i][k] = b
		}
		if err := rs[i].q.Write(bufs[i][0], 0, unsafe.Pointer(&pattern[0]), big); err != nil {
			t.Fatal(err)
		}
	}
	best := time.Duration(1 << 62)
	for range 5 {
		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range rs {
			wg.Go(func() {
				ev, err := rs[i].q.CopyPeer(bufs[i][1], 0, bufs[1-i][0], 0, big)
				if ev != nil {
					ev.Close()
				}
				if err == nil {
					err = rs[i].q.Finish(context.Background())
				}
				errs[i] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	t.Logf("both ways at once, pool buffers: %d MiB each way in %v (%.0f GB/s each way, best of 5)", big>>20, best, float64(big)/best.Seconds()/1e9)
	for i := range rs {
		got := make([]byte, big)
		if err := rs[i].q.Read(bufs[i][1], 0, unsafe.Pointer(&got[0]), big); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, pattern) {
			t.Errorf("%s: the bytes copied from %s's pool buffer differ", rs[i].d.info.ID, rs[1-i].d.info.ID)
		}
	}
	peers.Lock()
	defer peers.Unlock()
	for _, p := range [][2]*device{{rs[0].d, rs[1].d}, {rs[1].d, rs[0].d}} {
		r, ok := peers.tried[p]
		switch {
		case !ok:
			t.Errorf("no peer access asked for from %s to %s", p[0].info.ID, p[1].info.ID)
		case r != Success:
			t.Logf("%s cannot reach %s: %v (the copies are staged)", p[0].info.ID, p[1].info.ID, r)
		default:
			// The driver must hold what the record says: asked again, it answers that
			// the access is on.
			if again := cuCtxEnablePeerAccessIn(p[0].ctx, p[1].ctx); again != PeerAccessAlreadyEnabled {
				t.Errorf("peer access from %s to %s recorded as enabled, but enabling it again answered %v", p[0].info.ID, p[1].info.ID, again)
			}
		}
	}
}

// spinSource is a kernel that runs for ns nanoseconds of the device's global timer: work
// of a known length, to time what waiting for it costs.
const spinSource = `
extern "C" __global__ void prism_spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
`

// BenchmarkWait (GPU) times a wait for work of a known length: a one-thread kernel that
// runs for work microseconds, launched with an event and waited for, with the wait's spin
// (PRISM_WAIT_SPIN) from 0 to 1 ms. It reports the host's time past the work
// (late-us, the median), and the host CPU time a wait used (cpu-us): the price of a spin
// against the hand-over to the driver's blocking wait. `cuda.test -test.run '^$'
// -test.bench Wait -test.benchtime 200x`.
func BenchmarkWait(b *testing.B) {
	ids := enginetest.DeviceIDs(b, "cuda")
	for _, spin := range []string{"0", "20us", "50us", "100us", "1ms"} {
		b.Run("spin="+spin, func(b *testing.B) {
			b.Setenv(waitSpinEnv, spin)
			dev, err := engine.Open(context.Background(), ids[0])
			if err != nil {
				b.Fatal(err)
			}
			defer dev.Close()
			q, err := dev.NewQueue()
			if err != nil {
				b.Fatal(err)
			}
			prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: spinSource, Name: "spin.cu"})
			if err != nil {
				b.Fatal(err)
			}
			defer prog.Close()
			k, err := prog.Kernel("prism_spin")
			if err != nil {
				b.Fatal(err)
			}
			for _, work := range []int{20, 60, 90, 110, 150, 300, 1000} {
				b.Run(fmt.Sprintf("work=%dus", work), func(b *testing.B) {
					ns := uint64(work) * 1000
					one := engine.Range1D(1, 1)
					if err := q.Launch(k, one, ns); err != nil {
						b.Fatal(err)
					}
					if err := q.Finish(context.Background()); err != nil {
						b.Fatal(err)
					}
					late := make([]float64, 0, b.N)
					var cpu time.Duration
					b.ResetTimer()
					for range b.N {
						c0 := cpuTime()
						t0 := time.Now()
						ev, err := q.LaunchEvent(k, one, ns)
						if err != nil {
							b.Fatal(err)
						}
						if err := ev.Wait(context.Background()); err != nil {
							b.Fatal(err)
						}
						late = append(late, float64(time.Since(t0).Nanoseconds())/1e3-float64(work))
						cpu += cpuTime() - c0
						ev.Close()
					}
					b.StopTimer()
					slices.Sort(late)
					b.ReportMetric(late[len(late)/2], "late-us")
					b.ReportMetric(late[len(late)*9/10], "p90-late-us")
					b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us")
				})
			}
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPairRead (two GPUs) runs a one-thread kernel of 60 us and a read of 64 KiB of
// its queue into pageable host memory, on one device ("one") or on two at once from a
// goroutine each ("two"), as a split's parts do, and times the round from the host. It
// reports the median and the 90th percentile of a round, and the share of rounds longer
// than twice the work (as if the devices ran one after the other): what running parts on
// two devices costs over one. `cuda.test -test.run '^$' -test.bench PairRead
// -test.benchtime 400x`.
func BenchmarkPairRead(b *testing.B) {
	ids := enginetest.DeviceIDs(b, "cuda")
	if len(ids) < 2 {
		b.Skipf("two CUDA devices wanted, %d found", len(ids))
	}
	const work, size = 60 * time.Microsecond, 64 << 10
	drv := &Driver{}
	type side struct {
		q   *queue
		k   driver.Kernel
		buf driver.Buffer
		dst []byte
	}
	var sides [2]side
	for i, id := range ids[:2] {
		r := openRank(b, drv, id)
		prog, err := r.d.BuildSource(driver.Source{Dialect: driver.DialectCUDA, Text: spinSource, Name: "spin.cu"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { prog.Close() })
		k, err := prog.Kernel("prism_spin")
		if err != nil {
			b.Fatal(err)
		}
		buf, err := r.d.Alloc(size)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { buf.Close() })
		sides[i] = side{q: r.q, k: k, buf: buf, dst: make([]byte, size)}
	}
	args := []driver.Arg{{Value: binary.LittleEndian.AppendUint64(nil, uint64(work.Nanoseconds()))}}
	one := driver.Range{Dims: 1, Global: [3]int{1, 1, 1}, Local: [3]int{1, 1, 1}}
	for _, used := range []int{1, 2} {
		b.Run(map[int]string{1: "one", 2: "two"}[used], func(b *testing.B) {
			round := func(s *side) error {
				if err := s.q.LaunchUntimed(s.k, one, args); err != nil {
					return err
				}
				return s.q.Read(s.buf, 0, unsafe.Pointer(&s.dst[0]), size)
			}
			times := make([]time.Duration, 0, b.N)
			for i := -3; i < b.N; i++ {
				t0 := time.Now()
				var errs [2]error
				var wg sync.WaitGroup
				for j := range used {
					wg.Go(func() { errs[j] = round(&sides[j]) })
				}
				wg.Wait()
				if err := errors.Join(errs[:]...); err != nil {
					b.Fatal(err)
				}
				if i >= 0 {
					times = append(times, time.Since(t0))
				}
			}
			slices.Sort(times)
			serial := 0
			for _, t := range times {
				if t > 2*work {
					serial++
				}
			}
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "median-us")
			b.ReportMetric(float64(times[len(times)*9/10].Nanoseconds())/1e3, "p90-us")
			b.ReportMetric(float64(serial)/float64(len(times)), "serial-share")
		})
	}
}
