package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

// fakeBodies are the functions of the fake driver and NVRTC libraries that do more than
// succeed: the FAKE_* environment variables, read at each call, make them misbehave.
var fakeBodies = map[string]string{
	"cuInit":                 `(unsigned f) { return env("FAKE_CUINIT", 0); }`,
	"cuDriverGetVersion":     `(int *v) { *v = 13000; return 0; }`,
	"cuDeviceGetCount":       `(int *n) { *n = env("FAKE_COUNT", 1); return 0; }`,
	"cuDeviceGet":            `(int *d, int i) { *d = i; return 0; }`,
	"cuDeviceGetName":        `(char *b, int len, int d) { memset(b, 'N', len); return 0; }`, // no terminator
	"cuDeviceGetAttribute":   `(int *v, int a, int d) { *v = env("FAKE_ATTR", 1); return 0; }`,
	"cuDeviceTotalMem_v2":    `(size_t *n, int d) { *n = (size_t)1 << 30; return 0; }`,
	"nvrtcVersion":           `(int *major, int *minor) { *major = 13; *minor = 0; return 0; }`,
	"nvrtcCreateProgram":     `(void **p, const char *src, const char *name, int n, const char **h, const char **hn) { *p = (void *)1; return 0; }`,
	"nvrtcCompileProgram":    `(void *p, int n, const char **o) { return env("FAKE_COMPILE", 0); }`,
	"nvrtcGetProgramLogSize": `(void *p, size_t *n) { *n = (size_t)strtoull(getenv("FAKE_LOGSIZE") ? getenv("FAKE_LOGSIZE") : "1", 0, 10); return 0; }`,
	"nvrtcGetPTXSize":        `(void *p, size_t *n) { *n = (size_t)strtoull(getenv("FAKE_IMAGESIZE") ? getenv("FAKE_IMAGESIZE") : "16", 0, 10); return 0; }`,
}

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
		src.WriteString("#include <stdlib.h>\n#include <string.h>\nstatic int env(const char *n, int d) { const char *v = getenv(n); return v ? atoi(v) : d; }\n")
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
	if _, call, r := nvrtcCompile("__global__ void k() {}", "k.cu", nil, nil, false); r == NVRTCSuccess || !strings.Contains(call, "outside") {
		t.Errorf("an image of 1 TiB: %q, %v; want refused", call, r)
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
