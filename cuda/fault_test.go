package cuda

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
)

// fakeBodies are the functions of the fake driver and NVRTC libraries that do more than
// succeed: the FAKE_* environment variables, read at each call, make them misbehave. Device
// memory is host memory (malloc), so that copies, fills and the fake kernel move real data;
// events hold the host time they were recorded at.
var fakeBodies = map[string]string{
	"cuInit":                    `(unsigned f) { return env("FAKE_CUINIT", 0); }`,
	"cuDriverGetVersion":        `(int *v) { *v = 13000; return 0; }`,
	"cuDeviceGetCount":          `(int *n) { *n = env("FAKE_COUNT", 1); return 0; }`,
	"cuDeviceGet":               `(int *d, int i) { *d = i; return 0; }`,
	"cuDeviceGetName":           `(char *b, int len, int d) { memset(b, 'N', len); return 0; }`, // no terminator
	"cuDeviceGetAttribute":      `(int *v, int a, int d) { *v = attribute(a); return 0; }`,
	"cuDeviceTotalMem_v2":       `(size_t *n, int d) { *n = (size_t)1 << 30; return 0; }`,
	"cuDevicePrimaryCtxRetain":  `(void **c, int d) { static int ctx; *c = &ctx; return 0; }`,
	"cuCtxSynchronize":          `(void) { return env("FAKE_SYNC_FAIL", 0); }`,
	"cuMemGetInfo_v2":           `(size_t *f, size_t *t) { *f = *t = (size_t)1 << 30; return 0; }`,
	"cuMemAlloc_v2":             `(unsigned long long *p, size_t n) { return fakeAlloc(p, n); }`,
	"cuMemFree_v2":              `(unsigned long long p) { free((void *)(uintptr_t)p); return 0; }`,
	"cuMemHostAlloc":            `(void **p, size_t n, unsigned f) { *p = malloc(n ? n : 1); return *p ? 0 : 2; }`,
	"cuMemFreeHost":             `(void *p) { free(p); return 0; }`,
	"cuMemcpyHtoDAsync_v2":      `(unsigned long long d, const void *s, size_t n, void *st) { memcpy(at(d), s, n); return 0; }`,
	"cuMemcpyDtoHAsync_v2":      `(void *d, unsigned long long s, size_t n, void *st) { memcpy(d, at(s), n); return 0; }`,
	"cuMemcpyDtoDAsync_v2":      `(unsigned long long d, unsigned long long s, size_t n, void *st) { memmove(at(d), at(s), n); return 0; }`,
	"cuMemsetD8Async":           `(unsigned long long d, unsigned char v, size_t n, void *st) { memset(at(d), v, n); return 0; }`,
	"cuMemsetD16Async":          `(unsigned long long d, unsigned short v, size_t n, void *st) { unsigned short *p = at(d); while (n--) *p++ = v; return 0; }`,
	"cuMemsetD32Async":          `(unsigned long long d, unsigned v, size_t n, void *st) { unsigned *p = at(d); while (n--) *p++ = v; return 0; }`,
	"cuStreamCreate":            `(void **s, unsigned f) { *s = malloc(1); return *s ? 0 : 2; }`,
	"cuStreamDestroy_v2":        `(void *s) { free(s); return 0; }`,
	"cuStreamQuery":             `(void *s) { return query(); }`,
	"cuStreamSynchronize":       `(void *s) { return waitBusy(); }`,
	"cuEventSynchronize":        `(void *e) { return waitBusy(); }`,
	"cuEventCreate":             `(void **e, unsigned f) { *e = calloc(1, sizeof(double)); return *e ? 0 : 2; }`,
	"cuEventDestroy_v2":         `(void *e) { free(e); return 0; }`,
	"cuEventRecord":             `(void *e, void *s) { *(double *)e = now(); return 0; }`,
	"cuEventQuery":              `(void *e) { return query(); }`,
	"cuEventElapsedTime_v2":     `(float *ms, void *a, void *b) { const char *v = getenv("FAKE_EVENT_MS"); *ms = v ? strtof(v, 0) : (float)((*(double *)b - *(double *)a) * 1e3); return 0; }`,
	"cuModuleLoadDataEx":        `(void **m, const char *image, unsigned n, int *o, void **v) { static int mod; if (strncmp(image, fakePTX, 16)) return 200; *m = &mod; return 0; }`,
	"cuModuleUnload":            `(void *m) { return 0; }`,
	"cuModuleGetFunction":       `(void **f, void *m, const char *name) { static int fn; if (strcmp(name, "k")) return 500; *f = &fn; return 0; }`,
	"cuFuncGetAttribute":        `(int *v, int a, void *f) { *v = funcAttribute(a); return 0; }`,
	"cuFuncGetParamCount":       `(void *f, size_t *n) { *n = getenv("FAKE_TMAP") ? 3 : 1; return 0; }`,
	"cuFuncGetParamInfo":        `(void *f, size_t i, size_t *off, size_t *size) { return paramInfo(i, off, size); }`,
	"cuTensorMapEncodeTiled":    `(unsigned char *m, int type, unsigned rank, void *addr, const unsigned long long *dims, const unsigned long long *strides, const unsigned *box, const unsigned *es, int il, int sw, int l2, int oob) { return encodeTensorMap(m, type, rank, addr, dims, strides, box, es, il, sw, l2, oob); }`,
	"cuLaunchKernel":            `(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, void *s, void **p, void **x) { return fakeKernel(p, gx * bx); }`,
	"nvrtcVersion":              `(int *major, int *minor) { *major = 13; *minor = 0; return 0; }`,
	"nvrtcCreateProgram":        `(void **p, const char *src, const char *name, int n, const char **h, const char **hn) { *p = (void *)1; return 0; }`,
	"nvrtcCompileProgram":       `(void *p, int n, const char **o) { return env("FAKE_COMPILE", 0); }`,
	"nvrtcGetProgramLogSize":    `(void *p, size_t *n) { *n = (size_t)strtoull(getenv("FAKE_LOGSIZE") ? getenv("FAKE_LOGSIZE") : "1", 0, 10); return 0; }`,
	"nvrtcGetPTXSize":           `(void *p, size_t *n) { *n = imageSize(); return 0; }`,
	"nvrtcGetPTX":               `(void *p, char *out) { memcpy(out, fakePTX, imageSize() < sizeof fakePTX ? imageSize() : sizeof fakePTX); return 0; }`,
	"nvrtcGetCUBINSize":         `(void *p, size_t *n) { *n = imageSize(); return 0; }`,
	"nvrtcGetCUBIN":             `(void *p, char *out) { memcpy(out, fakePTX, imageSize() < sizeof fakePTX ? imageSize() : sizeof fakePTX); return 0; }`,
	"nvrtcGetNumSupportedArchs": `(int *n) { *n = 0; return 0; }`, // cannot tell
}

// fakeHelpers are the C helpers of fakeBodies, in both libraries.
const fakeHelpers = `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

static int env(const char *n, int d) { const char *v = getenv(n); return v ? atoi(v) : d; }

static void *at(unsigned long long p) { return (void *)(uintptr_t)p; }

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

// attribute answers cuDeviceGetAttribute: FAKE_ATTR_<n> for attribute n, else FAKE_ATTR for
// every attribute, else those of a small sm_80 device with 4 multiprocessors.
static int attribute(int a) {
	char name[32];
	snprintf(name, sizeof name, "FAKE_ATTR_%d", a);
	const char *v = getenv(name);
	if (v == NULL) v = getenv("FAKE_ATTR");
	if (v != NULL) return (int)strtol(v, NULL, 10);
	switch (a) {
	case 1: case 2: case 3: return 1024;         // threads per block, block x and y
	case 4: return 64;                            // block z
	case 5: return 2147483647;                    // grid x
	case 6: case 7: return 65535;                 // grid y, z
	case 8: return 48 << 10;                      // shared memory per block
	case 10: return 32;                           // warp size
	case 12: return 65536;                        // registers per block
	case 13: return 1410000;                      // clock, kHz
	case 16: return 4;                            // multiprocessors
	case 39: return 2048;                         // threads per multiprocessor
	case 75: return 8;                            // compute capability 8.0
	case 76: return 0;
	case 97: return 163 << 10;                    // shared memory per block with opt-in
	}
	return 0;
}

// funcAttribute answers cuFuncGetAttribute: FAKE_FUNC_ATTR_<n> for attribute n, else 1024
// threads per block and 0 for the others.
static int funcAttribute(int a) {
	char name[32];
	snprintf(name, sizeof name, "FAKE_FUNC_ATTR_%d", a);
	const char *v = getenv(name);
	if (v != NULL) return (int)strtol(v, NULL, 10);
	return a == 0 ? 1024 : 0;
}

// fakeAlloc is cuMemAlloc_v2: the first FAKE_ALLOC_OK calls (counted while it is set)
// succeed, the next answer CUDA_ERROR_OUT_OF_MEMORY.
static int fakeAlloc(unsigned long long *p, size_t n) {
	static int calls;
	const char *ok = getenv("FAKE_ALLOC_OK");
	if (ok == NULL) calls = 0;
	else if (calls++ >= atoi(ok)) return 2;
	void *m = malloc(n ? n : 1);
	if (m == NULL) return 2;
	*p = (uintptr_t)m;
	return 0;
}

// query is cuStreamQuery and cuEventQuery: CUDA_ERROR_NOT_READY for the first FAKE_BUSY
// calls (counted while it is set), then FAKE_SYNC_FAIL or success.
static int query(void) {
	static int calls;
	const char *busy = getenv("FAKE_BUSY");
	if (busy == NULL) calls = 0;
	else if (calls++ < atoi(busy)) return 600;
	return env("FAKE_SYNC_FAIL", 0);
}

// waitBusy is cuStreamSynchronize and cuEventSynchronize: it waits while query answers
// CUDA_ERROR_NOT_READY, as the driver blocks while the work runs, then answers as query.
static int waitBusy(void) {
	int r;
	while ((r = query()) == 600) usleep(100);
	return r;
}

// paramInfo is cuFuncGetParamInfo of k: one pointer, or with FAKE_TMAP set an int, a
// tensor map (128 bytes, 64-byte aligned) and a pointer.
static int paramInfo(size_t i, size_t *off, size_t *size) {
	if (getenv("FAKE_TMAP") != NULL) {
		static const size_t offs[3] = {0, 64, 192}, sizes[3] = {4, 128, 8};
		if (i > 2) return 1;
		*off = offs[i];
		*size = sizes[i];
		return 0;
	}
	if (i > 0) return 1;
	*off = 0;
	*size = 8;
	return 0;
}

// encodeTensorMap is cuTensorMapEncodeTiled: it writes its arguments into the map (bytes
// 0-5: type, rank, interleave, swizzle, L2 promotion, OOB fill; 8: the address; 16: dims;
// 56: strides; 88: box sizes, 16 bits each; 98: element strides, a byte each), then
// answers FAKE_TMAP_FAIL or success. A map not 64-byte aligned is CUDA_ERROR_INVALID_VALUE.
static int encodeTensorMap(unsigned char *m, int type, unsigned rank, void *addr, const unsigned long long *dims,
		const unsigned long long *strides, const unsigned *box, const unsigned *es, int il, int sw, int l2, int oob) {
	if ((uintptr_t)m % 64 != 0 || rank < 1 || rank > 5) return 1;
	memset(m, 0, 128);
	m[0] = type; m[1] = rank; m[2] = il; m[3] = sw; m[4] = l2; m[5] = oob;
	memcpy(m + 8, &addr, 8);
	for (unsigned i = 0; i < rank; i++) {
		memcpy(m + 16 + 8 * i, &dims[i], 8);
		if (i + 1 < rank) memcpy(m + 56 + 8 * i, &strides[i], 8);
		unsigned short b = box[i];
		memcpy(m + 88 + 2 * i, &b, 2);
		m[98 + i] = es[i];
	}
	return env("FAKE_TMAP_FAIL", 0);
}

// fakeKernel is the module's only kernel, k(uint *out): out[0] = the number of threads of
// the launch's first dimension. With FAKE_TMAP set it is k(int n, tensor map tm, uchar
// *out), which copies the 128 bytes of tm to out and n to out[128], and fails with
// CUDA_ERROR_MISALIGNED_ADDRESS where tm is not 64-byte aligned.
static int fakeKernel(void **params, unsigned threads) {
	if (params == NULL || params[0] == NULL) return 1;
	if (getenv("FAKE_TMAP") != NULL) {
		if (params[1] == NULL || params[2] == NULL) return 1;
		if ((uintptr_t)params[1] % 64 != 0) return 716;
		unsigned char *out = at(*(unsigned long long *)params[2]);
		memcpy(out, params[1], 128);
		memcpy(out + 128, params[0], 4);
		return 0;
	}
	unsigned *out = at(*(unsigned long long *)params[0]);
	if (out != NULL) *out = threads;
	return 0;
}

// fakePTX is the image the fake NVRTC produces (as PTX and as CUBIN), and the only one the
// fake driver loads.
static const char fakePTX[] = "//\n// fake NVRTC\n//\n.version 9.0\n.target sm_80\n.address_size 64\n\n"
	".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\tret;\n}\n";

// imageSize is the image's size as NVRTC reports it: FAKE_IMAGESIZE, else the PTX's with its
// terminating NUL.
static size_t imageSize(void) {
	const char *v = getenv("FAKE_IMAGESIZE");
	return v ? (size_t)strtoull(v, NULL, 10) : sizeof fakePTX;
}
`

// buildFakeLibraries compiles a libcuda and a libnvrtc in which every function the backend
// requires exists (those of fakeBodies misbehave on demand, the others return success),
// and points the loader at them for the test. It skips where no C compiler is found or a
// real CUDA driver is already loaded in the process.
func buildFakeLibraries(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) to build the fake driver libraries")
	}
	if loader.cudaPath != "" {
		t.Skipf("a CUDA driver is loaded in this process (%s): fault injection runs without one", loader.cudaPath)
	}
	dir := t.TempDir()
	for _, lib := range []struct {
		file string
		syms []symbol
	}{{"libcuda-fake.so", cudaSymbols}, {"libnvrtc-fake.so", nvrtcSymbols}} {
		var src strings.Builder
		src.WriteString(fakeHelpers)
		for _, s := range lib.syms {
			name := s.names[0]
			if body, ok := fakeBodies[name]; ok {
				fmt.Fprintf(&src, "int %s%s\n", name, body)
			} else {
				fmt.Fprintf(&src, "int %s() { return 0; }\n", name)
			}
		}
		c := filepath.Join(dir, lib.file+".c")
		if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-w", "-o", filepath.Join(dir, lib.file), c).CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", lib.file, err, out)
		}
	}
	savedCUDA, savedNVRTC := cudaLibraries, nvrtcLibraries
	cudaLibraries, nvrtcLibraries = []string{filepath.Join(dir, "libcuda-fake.so")}, []string{filepath.Join(dir, "libnvrtc-fake.so")}
	t.Cleanup(func() {
		cudaLibraries, nvrtcLibraries = savedCUDA, savedNVRTC
		loader.mu.Lock()
		loader.cudaPath, loader.cudaHandle, loader.nvrtcPath, loader.lazy = "", nil, "", nil
		loader.mu.Unlock()
	})
}

// TestFaultyDriver runs the backend against fake libraries that fail or lie: each case
// must end in a clear error (or a bounded result), never a panic or a hang.
func TestFaultyDriver(t *testing.T) {
	buildFakeLibraries(t)
	for _, c := range []struct {
		name string
		env  map[string]string
		want string // in the error; "" for success
	}{
		{"cuInit fails", map[string]string{"FAKE_CUINIT": "100"}, "does not initialize"},
		{"a billion devices", map[string]string{"FAKE_COUNT": "1073741824"}, "outside 0 to 1024"},
		{"a negative count", map[string]string{"FAKE_COUNT": "-1"}, "outside 0 to 1024"},
		{"no device", map[string]string{"FAKE_COUNT": "0"}, "no CUDA device"},
		{"an unterminated name", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var infos []string
			err := func() (err error) {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
					}
				}()
				devs, err := (&Driver{}).Devices(context.Background())
				for _, d := range devs {
					infos = append(infos, d.Name)
				}
				return err
			}()
			switch {
			case c.want == "" && err != nil && strings.HasPrefix(err.Error(), "panic"):
				t.Fatal(err)
			case c.want == "":
				for _, n := range infos {
					if len(n) > 256 {
						t.Errorf("a device name of %d bytes: read past the driver's buffer", len(n))
					}
				}
				t.Logf("devices %d, error %v", len(infos), err)
			case err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, engine.ErrUnavailable):
				t.Errorf("got %v; want an error wrapping ErrUnavailable that says %q", err, c.want)
			}
		})
	}
}

// TestFaultyNVRTC compiles through a fake NVRTC that fails with a log it says is huge, or
// claims an absurd image size: the log is named, not allocated; the image is refused.
func TestFaultyNVRTC(t *testing.T) {
	buildFakeLibraries(t)
	if _, _, err := loadLibraries(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_COMPILE", "6") // NVRTC_ERROR_COMPILATION
	t.Setenv("FAKE_LOGSIZE", "1099511627776")
	out, call, r := nvrtcCompile("__global__ void k() {}", "k.cu", nil, nil, false)
	if r != NVRTCCompilation || call != "nvrtcCompileProgram" || !strings.Contains(out.log, "1099511627776 bytes") {
		t.Errorf("a compile failure with a 1 TiB log: %q, %v, log %q", call, r, out.log)
	}
	t.Setenv("FAKE_COMPILE", "0")
	t.Setenv("FAKE_LOGSIZE", "1")
	t.Setenv("FAKE_IMAGESIZE", "1099511627776")
	if _, call, r := nvrtcCompile("__global__ void k() {}", "k.cu", nil, nil, false); r != NVRTCImageRefused || !strings.Contains(call, "outside") ||
		strings.Contains(r.Error(), "NVRTC_ERROR") {
		t.Errorf("an image of 1 TiB: %q, %v; want refused by Prism, under no code NVRTC did not give", call, r)
	}
}

// TestElapsedOf checks the conversion of the driver's event times: NaN, infinities,
// negative and absurd times are no time (ErrUnsupported, so that Timed measures host time),
// ordinary ones convert exactly enough.
func TestElapsedOf(t *testing.T) {
	for _, ms := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -1, 1e30} {
		if d, err := elapsedOf("test", ms); !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("elapsedOf(%v ms) = %v, %v; want ErrUnsupported", ms, d, err)
		}
	}
	for _, c := range []struct {
		ms   float32
		want time.Duration
	}{{0, 0}, {1.5, 1500 * time.Microsecond}, {0.004, 4 * time.Microsecond}} {
		if d, err := elapsedOf("test", c.ms); err != nil || (d-c.want).Abs() > time.Nanosecond {
			t.Errorf("elapsedOf(%v ms) = %v, %v; want %v", c.ms, d, err, c.want)
		}
	}
}

// fakeBackends numbers the backends registered over the fake libraries.
var fakeBackends atomic.Int32

// fakeBackend builds the fake libraries (once per test: a subtest uses its parent's),
// registers a new backend over them,
// whose first Devices or Open probes them afresh, and returns its name; the module cache is
// a temporary directory. A watchdog ends the test binary if the test hangs: a fault must end
// in an error, never a hang.
func fakeBackend(t *testing.T) string {
	t.Helper()
	if !strings.HasSuffix(cudaLibraries[0], "libcuda-fake.so") {
		buildFakeLibraries(t)
		t.Setenv("PRISM_CACHE_DIR", t.TempDir())
		watchdog := time.AfterFunc(2*time.Minute, func() { panic(t.Name() + ": still running after 2 minutes: a fault hangs") })
		t.Cleanup(func() { watchdog.Stop() })
	}
	name := fmt.Sprintf("cuda-fake-%d", fakeBackends.Add(1))
	engine.Register(name, &Driver{})
	return name
}

// fakeSource is the OpenCL C of the fake module's kernel, which the fake driver runs as
// out[0] = the number of threads.
const fakeSource = `__kernel void k(__global uint *out) { if (get_global_id(0) == 0) out[0] = get_global_size(0); }`

// fakeRun is a device of a fake backend opened through engine, with a queue, an output
// buffer of 16 elements and the kernel k.
type fakeRun struct {
	dev  *engine.Device
	q    *engine.Queue
	out  *engine.Buffer[uint32]
	prog *engine.Program
	k    *engine.Kernel
}

func openFakeRun(t *testing.T, backend string) *fakeRun {
	t.Helper()
	dev, err := engine.Open(context.Background(), backend+":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	r := &fakeRun{dev: dev}
	if r.q, err = dev.NewQueue(); err != nil {
		t.Fatal(err)
	}
	if r.out, err = engine.NewBuffer[uint32](dev, 16); err != nil {
		t.Fatal(err)
	}
	if r.prog, err = dev.Build(fakeSource); err != nil {
		t.Fatal(err)
	}
	if r.k, err = r.prog.Kernel("k"); err != nil {
		t.Fatal(err)
	}
	return r
}

// launch launches k over 64 threads in blocks of 32.
func (r *fakeRun) launch() error { return r.q.Launch(r.k, engine.Range1D(64, 32), r.out) }

// closeAll closes everything in order and returns the errors.
func (r *fakeRun) closeAll() error {
	return errors.Join(r.q.Close(), r.k.Close(), r.prog.Close(), r.out.Close(), r.dev.Close())
}

// TestFaultyDriverAlloc runs through engine against a fake driver whose cuMemAlloc_v2
// grants three allocations and then answers CUDA_ERROR_OUT_OF_MEMORY: the fourth buffer is
// refused with an error wrapping ErrOutOfMemory that names the call, and the three hold
// data (written and read back, filled, copied) and close cleanly.
func TestFaultyDriverAlloc(t *testing.T) {
	backend := fakeBackend(t)
	ctx := context.Background()
	dev, err := engine.Open(ctx, backend+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	const n = 1024
	t.Setenv("FAKE_ALLOC_OK", "3")
	a, err := engine.NewBuffer[uint32](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	b, err := engine.NewBuffer[uint32](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.NewBuffer[uint64](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.NewBuffer[uint32](dev, n)
	if !errors.Is(err, engine.ErrOutOfMemory) || !errors.Is(err, OutOfMemory) || !strings.Contains(err.Error(), "cuMemAlloc_v2(4096 bytes)") {
		t.Fatalf("the fourth allocation: %v; want an error wrapping ErrOutOfMemory that names cuMemAlloc_v2", err)
	}
	t.Logf("the fourth allocation: %v", err)
	if got, want := dev.AllocatedBytes(), int64(2*4*n+8*n); got != want {
		t.Errorf("AllocatedBytes after the refusal = %d, want %d (the three live buffers)", got, want)
	}

	src := make([]uint32, n)
	for i := range src {
		src[i] = uint32(i) * 2654435761
	}
	if err := a.Write(ctx, q, 0, src); err != nil {
		t.Fatal(err)
	}
	got, err := a.Download(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, src) {
		t.Errorf("a write read back differs: %v...; want %v...", got[:4], src[:4])
	}
	if err := b.Fill(q, 0, n, 0xdeadbeef); err != nil { // one cuMemsetD32Async
		t.Fatal(err)
	}
	if err := b.CopyFrom(q, 100, a, 10, 20); err != nil {
		t.Fatal(err)
	}
	if got, err = b.Download(ctx, q); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		want := uint32(0xdeadbeef)
		if i >= 100 && i < 120 {
			want = src[i-100+10]
		}
		if v != want {
			t.Fatalf("after a fill and a copy, element %d is %#x, want %#x", i, v, want)
		}
	}
	const pattern = 0x1122334455667788 // 32-bit sets, then copies doubling them
	if err := c.Fill(q, 8, n-8, pattern); err != nil {
		t.Fatal(err)
	}
	if err := c.Fill(q, 0, 8, 0); err != nil {
		t.Fatal(err)
	}
	got64, err := c.Download(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got64 {
		if want := uint64(pattern) * uint64(min(i/8, 1)); v != want {
			t.Fatalf("after two fills, element %d is %#x, want %#x", i, v, want)
		}
	}

	for i, buf := range []interface{ Close() error }{a, b, c} {
		if err := buf.Close(); err != nil {
			t.Errorf("closing buffer %d: %v", i, err)
		}
	}
	if got := dev.AllocatedBytes(); got != 0 {
		t.Errorf("AllocatedBytes after closing = %d", got)
	}
	if err := errors.Join(q.Close(), dev.Close()); err != nil {
		t.Errorf("closing: %v", err)
	}
}

// TestFaultyDriverEventTimes times a launch with Queue.Timed while the fake driver's
// cuEventElapsedTime answers zero, NaN, infinities, negative or absurd times: zero and
// ordinary times are the device time; the others are no time (Event.Elapsed says
// ErrUnsupported) and Timed falls back to the host clock, a finite, positive duration no
// longer than the call.
func TestFaultyDriverEventTimes(t *testing.T) {
	backend := fakeBackend(t)
	ctx := context.Background()
	for _, c := range []struct {
		ms   string
		want time.Duration // the device time; -1 for the host clock
	}{
		{"0", 0}, {"1.5", 1500 * time.Microsecond},
		{"nan", -1}, {"-nan", -1}, {"inf", -1}, {"-inf", -1}, {"-1", -1}, {"-0.001", -1}, {"1e30", -1},
	} {
		t.Run(c.ms, func(t *testing.T) {
			t.Setenv("FAKE_EVENT_MS", c.ms)
			r := openFakeRun(t, backend)
			ev, err := r.q.LaunchEvent(r.k, engine.Range1D(64, 32), r.out)
			if err != nil {
				t.Fatal(err)
			}
			d, err := ev.Elapsed(ctx)
			ev.Close()
			switch {
			case c.want >= 0 && (err != nil || (d-c.want).Abs() > time.Microsecond):
				t.Errorf("Event.Elapsed = %v, %v; want %v", d, err, c.want)
			case c.want < 0 && (!errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "cuEventElapsedTime")):
				t.Errorf("Event.Elapsed = %v, %v; want an error wrapping ErrUnsupported that names cuEventElapsedTime", d, err)
			}

			start := time.Now()
			d, err = r.q.Timed(ctx, r.launch)
			wall := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.want >= 0 && ((d-c.want).Abs() > time.Microsecond || !r.dev.EventTiming()):
				t.Errorf("Timed = %v (event timing %v); want the device's %v", d, r.dev.EventTiming(), c.want)
			case c.want < 0 && (d <= 0 || d > wall || r.dev.EventTiming()):
				t.Errorf("Timed = %v in a call of %v (event timing %v); want the host clock's time, within the call", d, wall, r.dev.EventTiming())
			}
			if got, err := r.out.Download(ctx, r.q); err != nil || got[0] != 64 {
				t.Errorf("the kernel wrote %v, %v; want 64 threads in out[0]", got[:1], err)
			}
			// Once on the host clock, every later Timed stays there.
			if d, err = r.q.Timed(ctx, r.launch); err != nil || d < 0 || (c.want < 0 && r.dev.EventTiming()) {
				t.Errorf("a second Timed = %v, %v", d, err)
			}
			if err := r.closeAll(); err != nil {
				t.Errorf("closing: %v", err)
			}
		})
	}
}

// TestFaultyDriverAsyncFailure: a launch fails after it was enqueued, as a kernel that
// faults does: from then on the fake driver's queries and synchronizations answer
// CUDA_ERROR_LAUNCH_FAILED (after a while of CUDA_ERROR_NOT_READY). Finish, a timed wait and
// a read report it, naming the call; the waits end; closing everything ends too.
func TestFaultyDriverAsyncFailure(t *testing.T) {
	backend := fakeBackend(t)
	ctx := context.Background()
	r := openFakeRun(t, backend)
	if err := r.launch(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_BUSY", "50")
	t.Setenv("FAKE_SYNC_FAIL", "719")
	failed := func(what string, err error, call string) {
		t.Helper()
		if !errors.Is(err, LaunchFailed) || !strings.Contains(err.Error(), "CUDA_ERROR_LAUNCH_FAILED") || !strings.Contains(err.Error(), call) {
			t.Errorf("%s = %v; want CUDA_ERROR_LAUNCH_FAILED from %s", what, err, call)
			return
		}
		t.Logf("%s: %v", what, err)
	}
	failed("Finish", r.q.Finish(ctx), "cuStreamQuery")
	failed("Finish again", r.q.Finish(ctx), "cuStreamQuery")
	_, err := r.q.Timed(ctx, r.launch)
	failed("Timed", err, "cuEventQuery(kernel k)")
	failed("Read", r.out.Read(ctx, r.q, 0, make([]uint32, 1)), "cuStreamQuery")

	// A wait that never ends is ended by its context.
	t.Setenv("FAKE_BUSY", "2000000000")
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := r.q.Finish(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Finish on a stream that stays busy, with a deadline = %v; want DeadlineExceeded", err)
	}
	t.Setenv("FAKE_BUSY", "0")

	err = r.closeAll()
	if !errors.Is(err, LaunchFailed) {
		t.Errorf("closing after the failure = %v; want the failure reported", err)
	}
	t.Logf("closing: %v", err)
	if err := r.dev.Close(); err != nil {
		t.Errorf("closing the device again: %v", err)
	}
}

// TestFaultyDriverAttributes probes fake devices whose cuDeviceGetAttribute answers
// absurd values: a compute capability outside 1.0 to 99.9 makes the device refused, with
// an error that says so; a negative limit, a multiprocessor count of 0 or 2^31-1 or a warp
// size that is not a power of two up to 1024 is left unreported (0), and a run on the
// device (build, launch, read) works.
func TestFaultyDriverAttributes(t *testing.T) {
	fakeBackend(t) // the libraries, once
	for _, c := range []struct {
		name string
		env  map[string]string
		want string // in the error of a refused device; "" for a device that runs
	}{
		{"compute capability -1", map[string]string{"FAKE_ATTR_75": "-1"}, "compute capability -1.0"},
		{"compute capability 0", map[string]string{"FAKE_ATTR_75": "0"}, "compute capability 0.0"},
		{"compute capability 8.10", map[string]string{"FAKE_ATTR_76": "10"}, "compute capability 8.10"},
		{"compute capability 8.-1", map[string]string{"FAKE_ATTR_76": "-1"}, "compute capability 8.-1"},
		{"compute capability 2^31-1", map[string]string{"FAKE_ATTR_75": "2147483647"}, "compute capability 2147483647.0"},
		{"every attribute -1", map[string]string{"FAKE_ATTR": "-1"}, "compute capability -1.-1"},
		{"every attribute 2^31-1", map[string]string{"FAKE_ATTR": "2147483647"}, "outside 1.0 to 99.9"},
		{"no multiprocessor", map[string]string{"FAKE_ATTR_16": "0"}, ""},
		{"2^31-1 multiprocessors", map[string]string{"FAKE_ATTR_16": "2147483647"}, ""},
		{"-1 multiprocessors", map[string]string{"FAKE_ATTR_16": "-1"}, ""},
		{"warp size 0", map[string]string{"FAKE_ATTR_10": "0"}, ""},
		{"warp size 48", map[string]string{"FAKE_ATTR_10": "48"}, ""},
		{"warp size 2^31-1", map[string]string{"FAKE_ATTR_10": "2147483647"}, ""},
		{"negative limits", map[string]string{"FAKE_ATTR_1": "-1", "FAKE_ATTR_2": "-1", "FAKE_ATTR_5": "-1", "FAKE_ATTR_8": "-1", "FAKE_ATTR_97": "-1", "FAKE_ATTR_13": "-1"}, ""},
		{"every attribute 0 but the compute capability", map[string]string{"FAKE_ATTR": "0", "FAKE_ATTR_75": "9"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			backend := fakeBackend(t)
			if c.want != "" {
				_, err := engine.Open(context.Background(), backend+":0")
				if !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not trusted") {
					t.Errorf("engine.Open = %v; want an error wrapping ErrUnavailable that says %q", err, c.want)
				}
				return
			}
			r := openFakeRun(t, backend)
			info, props := r.dev.Info(), r.dev.Driver().(Device).Properties()
			if w := props.WarpSize; w < 0 || w > 1024 || w&(w-1) != 0 || props.Multiprocessors < 0 || props.Multiprocessors > maxMultiprocessors ||
				info.ComputeUnits != props.Multiprocessors || info.MaxWorkGroupSize < 0 || info.LocalMemBytes < 0 || info.ClockMHz < 0 ||
				props.MaxGridDim[0] < 0 || props.SharedMemPerBlockOptin < 0 {
				t.Errorf("unbounded: %+v\n%+v", info, props)
			}
			if a := r.k.Attributes(); a.PreferredMultiple != props.WarpSize {
				t.Errorf("the kernel's preferred multiple is %d, the warp size %d", a.PreferredMultiple, props.WarpSize)
			}
			if err := r.launch(); err != nil {
				t.Fatal(err)
			}
			if got, err := r.out.Download(context.Background(), r.q); err != nil || got[0] != 64 {
				t.Errorf("the kernel wrote %v, %v; want 64", got[:1], err)
			}
			t.Logf("%s, %d SMs, warp %d, %d threads per block", info.LanguageVersion, info.ComputeUnits, props.WarpSize, info.MaxWorkGroupSize)
			if err := r.closeAll(); err != nil {
				t.Errorf("closing: %v", err)
			}
		})
	}
}

// TestFakeDriverTensorMaps runs tensor maps through engine against the fake driver: an
// sm_80 device has none; on an sm_90 device NewTensorMap reaches cuTensorMapEncodeTiled
// with the description as CUDA takes it (the fake driver writes its arguments into the
// map), and a launch passes the map's 128 bytes, 64-byte aligned, as the kernel's second
// parameter, after an int (the fake kernel copies both out), untimed and timed; a failure
// of the call names it.
func TestFakeDriverTensorMaps(t *testing.T) {
	ctx := context.Background()
	fakeBackend(t) // the libraries, once
	t.Setenv("FAKE_ATTR_75", "8")
	old, err := engine.Open(ctx, fakeBackend(t)+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := old.TensorMapSupport(); !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "is sm_80: tensor maps (TMA) need compute capability 9.0") {
		t.Errorf("sm_80: TensorMapSupport() = %v", err)
	}

	t.Setenv("FAKE_ATTR_75", "9")
	t.Setenv("FAKE_TMAP", "1") // k(int n, tensor map tm, uchar *out)
	r := openFakeRun(t, fakeBackend(t))
	if err := r.dev.TensorMapSupport(); err != nil {
		t.Fatalf("sm_90: TensorMapSupport() = %v", err)
	}
	a, err := engine.NewBuffer[engine.Half](r.dev, 96*70)
	if err != nil {
		t.Fatal(err)
	}
	desc := engine.TensorMapDesc{Dims: []int64{96, 70}, Strides: []int64{192}, Box: []int{64, 32}, Swizzle: engine.Swizzle128B, L2Promotion: 256}
	m, err := engine.NewTensorMap(a, desc)
	if err != nil {
		t.Fatal(err)
	}
	// What the fake driver recorded: FLOAT16 (6), rank 2, INTERLEAVE_NONE, SWIZZLE_128B (3),
	// L2_PROMOTION_L2_256B (3), OOB_FILL_NONE; the address; dims, strides, box; element
	// strides 1.
	want := make([]byte, 132)
	copy(want, []byte{6, 2, 0, 3, 3, 0})
	le := binary.LittleEndian
	le.PutUint64(want[16:], 96)
	le.PutUint64(want[24:], 70)
	le.PutUint64(want[56:], 192)
	le.PutUint16(want[88:], 64)
	le.PutUint16(want[90:], 32)
	want[98], want[99] = 1, 1
	copy(want[128:], []byte{0x78, 0x56, 0x34, 0x12}) // n
	out, err := engine.NewBuffer[uint8](r.dev, 132)
	if err != nil {
		t.Fatal(err)
	}
	for _, timed := range []bool{false, true} {
		if err := out.Fill(r.q, 0, 132, 0xee); err != nil {
			t.Fatal(err)
		}
		launch := func() error { return r.q.Launch(r.k, engine.Range1D(64, 32), int32(0x12345678), m, out) }
		if timed {
			_, err = r.q.Timed(ctx, launch)
		} else {
			err = launch()
		}
		if err != nil {
			t.Fatalf("launch (timed %v): %v", timed, err)
		}
		got, err := out.Download(ctx, r.q)
		if err != nil {
			t.Fatal(err)
		}
		addr := le.Uint64(got[8:])
		if addr == 0 || addr%16 != 0 {
			t.Errorf("timed %v: the map's address is %#x", timed, addr)
		}
		copy(got[8:16], make([]byte, 8))
		if !bytes.Equal(got, want) {
			t.Errorf("timed %v: the kernel received\n% x\nwant\n% x", timed, got, want)
		}
	}
	// A map for a parameter of another size is refused by the backend, which knows the
	// kernel's parameter sizes.
	if err := r.q.Launch(r.k, engine.Range1D(64, 32), int32(0), out, out); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "the kernel's parameter is 128") {
		t.Errorf("a pointer for the tensor map parameter: %v", err)
	}

	t.Setenv("FAKE_TMAP_FAIL", "1")
	_, err = engine.NewTensorMap(a, desc)
	if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "cuTensorMapEncodeTiled(float16, dims [96 70], strides [192], box [64 32], swizzle 128B, L2 promotion 256 bytes): CUDA_ERROR_INVALID_VALUE") {
		t.Errorf("a failed encoding: %v", err)
	}
	if p := enginetest.RepeatedPrefix(err); p != "" {
		t.Errorf("%v repeats %q", err, p)
	}
	t.Logf("%v", err)
	if err := errors.Join(out.Close(), a.Close(), r.closeAll()); err != nil {
		t.Errorf("closing: %v", err)
	}
}
