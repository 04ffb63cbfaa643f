package cuda

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/prism-compute/prism/cuda/clc/translate"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
)

// The tests in this file need neither a GPU nor the CUDA libraries.

func TestTranslateOptions(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string
		err  error
	}{
		{nil, nil, nil},
		{[]string{"-DWG=256"}, []string{"-DWG=256"}, nil},
		{[]string{"-DWG=256 -DT=float"}, []string{"-DWG=256", "-DT=float"}, nil},
		{[]string{"-D", "WG=64", "-I", "/inc", "-U", "X"}, []string{"-DWG=64", "-I/inc", "-UX"}, nil},
		{[]string{"-I/usr/include/prism"}, []string{"-I/usr/include/prism"}, nil},
		{[]string{"-cl-std=CL1.2", "-cl-mad-enable"}, nil, nil},
		{[]string{"-cl-fast-relaxed-math"}, []string{"--use_fast_math"}, nil},
		{[]string{"-cl-unsafe-math-optimizations"}, []string{"--use_fast_math"}, nil},
		{[]string{"-cl-finite-math-only -cl-no-signed-zeros"}, nil, nil},
		{[]string{"-cl-denorms-are-zero"}, []string{"--ftz=true"}, nil},
		{[]string{"-cl-single-precision-constant", "-cl-kernel-arg-info"}, nil, nil},
		{[]string{"-cl-opt-disable"}, []string{"-G"}, nil},
		{[]string{"-w", "-Werror", "-g"}, []string{"-w", "-lineinfo"}, nil},
		{[]string{"-DA=1", "-cl-fast-relaxed-math", "-DB=2"}, []string{"-DA=1", "--use_fast_math", "-DB=2"}, nil},
		{[]string{"-cl-no-such-option"}, nil, engine.ErrInvalidArg},
		{[]string{"-D"}, nil, engine.ErrInvalidArg},
		{[]string{"-arch=sm_90"}, nil, engine.ErrInvalidArg},
		{[]string{"--gpu-architecture=compute_90"}, nil, engine.ErrInvalidArg},
		{[]string{"-maxrregcount=32"}, []string{"-maxrregcount=32"}, nil}, // NVRTC's own: passed
		{[]string{"-prism-no-such-option"}, []string{"-prism-no-such-option"}, nil},
	} {
		got, err := translateOptions(c.in)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("translateOptions(%q) = %q, %v; want an error wrapping %v", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("translateOptions(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		for _, o := range got {
			if strings.HasPrefix(o, "-cl-") {
				t.Errorf("translateOptions(%q) passed the OpenCL option %q through", c.in, o)
			}
		}
	}
	// Every OpenCL option of the table is translated or dropped, never passed through.
	for o := range clOptions {
		got, err := translateOptions([]string{o})
		if err != nil || slices.Contains(got, o) && o != "-w" {
			t.Errorf("translateOptions(%q) = %q, %v", o, got, err)
		}
	}
}

func TestChooseArch(t *testing.T) {
	nvrtc13 := []int{75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121}
	ocl, cu := driver.DialectOpenCL, driver.DialectCUDA
	for _, c := range []struct {
		cc        int
		supported []int
		canCUBIN  bool
		dialect   driver.Dialect
		want      string
		cubin     bool
		virtual   string
		err       error
	}{
		{90, nvrtc13, true, ocl, "-arch=sm_90", true, "compute_90", nil},
		{80, nvrtc13, true, ocl, "-arch=sm_80", true, "compute_80", nil},
		{90, nvrtc13, false, ocl, "-arch=compute_90", false, "compute_90", nil},
		{130, nvrtc13, true, ocl, "-arch=compute_121", false, "compute_121", nil}, // newer than NVRTC: PTX, JIT by the driver
		{85, nvrtc13, true, ocl, "-arch=compute_80", false, "compute_80", nil},    // a variant NVRTC lacks
		{70, nvrtc13, true, ocl, "", false, "", engine.ErrUnsupported},            // Volta after CUDA 13 dropped it
		{90, nil, true, ocl, "-arch=sm_90", true, "compute_90", nil},              // NVRTC cannot tell: try
		{61, nil, false, ocl, "-arch=compute_61", false, "compute_61", nil},
		// CUDA C++ gets the architecture-specific target: Hopper's wgmma and setmaxnreg
		// need compute_90a.
		{90, nvrtc13, true, cu, "-arch=sm_90a", true, "compute_90a", nil},
		{90, nvrtc13, false, cu, "-arch=compute_90a", false, "compute_90a", nil},
		{100, nvrtc13, true, cu, "-arch=sm_100a", true, "compute_100a", nil},
		{120, nvrtc13, false, cu, "-arch=compute_120a", false, "compute_120a", nil},
		{89, nvrtc13, true, cu, "-arch=sm_89", true, "compute_89", nil},              // Ada has no "a" target
		{80, nvrtc13, true, cu, "-arch=sm_80", true, "compute_80", nil},              // nor has Ampere
		{130, nvrtc13, true, cu, "-arch=compute_121", false, "compute_121", nil},     // "a" PTX runs on its own architecture only
		{95, []int{90, 100}, true, cu, "-arch=compute_90", false, "compute_90", nil}, // likewise
		{70, nvrtc13, true, cu, "", false, "", engine.ErrUnsupported},
	} {
		got, err := chooseArch(c.cc, c.supported, c.canCUBIN, c.dialect)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("chooseArch(%d, %v, %v, %s) = %+v, %v; want %v", c.cc, c.supported, c.canCUBIN, c.dialect, got, err, c.err)
			}
			continue
		}
		if err != nil || got != (target{option: c.want, cubin: c.cubin, virtual: c.virtual}) {
			t.Errorf("chooseArch(%d, %v, %v, %s) = %+v, %v; want %q, %v, %q", c.cc, c.supported, c.canCUBIN, c.dialect, got, err, c.want, c.cubin, c.virtual)
		}
	}
}

func TestCudaOptions(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string
		err  error
	}{
		{nil, nil, nil},
		{[]string{"-DWG=256 --use_fast_math"}, []string{"-DWG=256", "--use_fast_math"}, nil},
		{[]string{"-D", "WG=64", "-I", "/inc"}, []string{"-DWG=64", "-I/inc"}, nil},
		{[]string{"-maxrregcount=64", "-Xptxas", "-v"}, []string{"-maxrregcount=64", "-Xptxas", "-v"}, nil},
		{[]string{"-cl-fast-relaxed-math"}, []string{"-cl-fast-relaxed-math"}, nil}, // NVRTC's to refuse
		{[]string{"-arch=sm_80"}, nil, engine.ErrInvalidArg},
		{[]string{"--gpu-architecture=compute_90a"}, nil, engine.ErrInvalidArg},
		{[]string{"-D"}, nil, engine.ErrInvalidArg},
	} {
		got, err := cudaOptions(c.in)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("cudaOptions(%q) = %q, %v; want an error wrapping %v", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("cudaOptions(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestCacheKey(t *testing.T) {
	base := cacheInput{
		dialect:       driver.DialectOpenCL,
		text:          "src",
		options:       []string{"-arch=sm_90", "-DWG=256"},
		arch:          "sm_90",
		target:        "compute_90",
		nvrtcVersion:  "13.0",
		driverVersion: 13000,
	}
	key := base.key()
	if len(key) != 64 || key != base.key() {
		t.Fatalf("key is not a stable SHA-256: %q", key)
	}
	with := func(f func(*cacheInput)) string {
		in := base
		in.options = slices.Clone(base.options)
		f(&in)
		return in.key()
	}
	for name, k := range map[string]string{
		"dialect":          with(func(in *cacheInput) { in.dialect = driver.DialectCUDA }),
		"source":           with(func(in *cacheInput) { in.text = "src2" }),
		"option value":     with(func(in *cacheInput) { in.options[1] = "-DWG=128" }),
		"option order":     with(func(in *cacheInput) { in.options = []string{"-DWG=256", "-arch=sm_90"} }),
		"fewer options":    with(func(in *cacheInput) { in.options = in.options[:1] }),
		"architecture":     with(func(in *cacheInput) { in.arch = "sm_80" }),
		"target":           with(func(in *cacheInput) { in.target = "compute_90a" }),
		"arch option":      with(func(in *cacheInput) { in.options[0] = "-arch=sm_90a" }),
		"NVRTC version":    with(func(in *cacheInput) { in.nvrtcVersion = "12.8" }),
		"driver version":   with(func(in *cacheInput) { in.driverVersion = 12080 }),
		"a header":         with(func(in *cacheInput) { in.headers = []header{{"prism_cuda.h", "x"}} }),
		"header text":      with(func(in *cacheInput) { in.headers = []header{{"prism_cuda.h", "y"}} }),
		"header name":      with(func(in *cacheInput) { in.headers = []header{{"other.h", "x"}} }),
		"field boundaries": with(func(in *cacheInput) { in.text = "src-arch=sm_90"; in.options = in.options[1:] }),
		"joined options":   with(func(in *cacheInput) { in.options = []string{"-arch=sm_90-DWG=256"} }),
		"prelude changed":  with(func(in *cacheInput) { tr, _ := translate.OpenCL("src", ""); in.text = tr.Text }),
	} {
		if k == key {
			t.Errorf("changing the %s does not change the key", name)
		}
	}
}

// TestEmbeddedHeaders: prism_cuda.h is embedded and named as CUDA C++ sources include it.
func TestEmbeddedHeaders(t *testing.T) {
	hs := embeddedHeaders()
	var names []string
	for _, h := range hs {
		names = append(names, h.name)
		if strings.Contains(h.name, "/") || h.text == "" {
			t.Errorf("header %q: a path, or empty", h.name)
		}
	}
	if !slices.Contains(names, "prism_cuda.h") || !slices.IsSorted(names) {
		t.Fatalf("embedded headers %v: want prism_cuda.h among them, sorted", names)
	}
	for _, want := range []string{"int64_t", "uint32_t", "prism_half", "prism_bfloat16", "cvt.rn.f16.f32", "cvt.rn.bf16.f32", "cvt.f32.f16"} {
		if !strings.Contains(hs[slices.Index(names, "prism_cuda.h")].text, want) {
			t.Errorf("prism_cuda.h does not declare %s", want)
		}
	}
}

func TestCacheRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cuda") // created by the first store
	key := cacheInput{text: "src", arch: "sm_90", nvrtcVersion: "13.0"}.key()
	if _, _, ok := cacheLoad(dir, key); ok {
		t.Fatal("hit in an empty cache")
	}
	image := []byte("\x7fELF not really a cubin")
	if err := cacheStore(dir, key, kindCUBIN, image); err != nil {
		t.Fatal(err)
	}
	kind, got, ok := cacheLoad(dir, key)
	if !ok || kind != kindCUBIN || !bytes.Equal(got, image) {
		t.Fatalf("cacheLoad = %q, %q, %v; want the stored CUBIN", kind, got, ok)
	}
	// Overwriting is atomic too, and leaves no temporary file behind.
	if err := cacheStore(dir, key, kindPTX, []byte("ptx\x00")); err != nil {
		t.Fatal(err)
	}
	if kind, got, ok := cacheLoad(dir, key); !ok || kind != kindPTX || string(got) != "ptx\x00" {
		t.Errorf("after overwrite: %q, %q, %v", kind, got, ok)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != key+".bin" {
		t.Errorf("cache directory holds %v, want only %s.bin", entries, key)
	}

	// Damaged entries are ignored.
	path := cachePath(dir, key)
	good, _ := os.ReadFile(path)
	for name, bad := range map[string][]byte{
		"truncated":      good[:len(good)-1],
		"header only":    good[:len(cacheMagic)+1],
		"empty":          {},
		"flipped byte":   append(slices.Clone(good[:len(good)-1]), good[len(good)-1]^1),
		"other magic":    append([]byte("PRISMCU0"), good[len(cacheMagic):]...),
		"unknown kind":   append(append([]byte(cacheMagic), 'x'), good[len(cacheMagic)+1:]...),
		"not a cache fi": []byte("hello"),
	} {
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := cacheLoad(dir, key); ok {
			t.Errorf("%s entry was used", name)
		}
	}
	if os.Getuid() != 0 { // root reads anything
		os.WriteFile(path, good, 0o644)
		os.Chmod(path, 0)
		if _, _, ok := cacheLoad(dir, key); ok {
			t.Error("unreadable entry was used")
		}
		os.Chmod(path, 0o644)
	}
	// A rebuild replaces a damaged entry.
	os.WriteFile(path, []byte("garbage"), 0o644)
	if err := cacheStore(dir, key, kindCUBIN, image); err != nil {
		t.Fatal(err)
	}
	if _, got, ok := cacheLoad(dir, key); !ok || !bytes.Equal(got, image) {
		t.Error("a store did not replace a damaged entry")
	}
	if _, _, ok := cacheLoad("", key); ok {
		t.Error("hit without a cache directory")
	}
	if err := cacheStore("", key, kindCUBIN, image); err == nil {
		t.Error("store without a cache directory succeeded")
	}
}

// TestCacheConcurrent has writers of several keys race with readers, as processes sharing
// the cache do: a reader sees no entry or a whole one, never a partial one.
func TestCacheConcurrent(t *testing.T) {
	dir := t.TempDir()
	images := map[string][]byte{}
	for i := range 4 {
		images[cacheInput{text: fmt.Sprint(i), arch: "sm_90", nvrtcVersion: "13.0"}.key()] = bytes.Repeat([]byte{byte(i)}, 1<<16+i)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range 20 {
				for key, image := range images {
					if (w+it)%2 == 0 {
						if err := cacheStore(dir, key, kindCUBIN, image); err != nil {
							t.Error(err)
							return
						}
					} else if _, got, ok := cacheLoad(dir, key); ok && !bytes.Equal(got, image) {
						t.Errorf("reader saw a wrong image for %s", key[:8])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(images) {
		t.Errorf("%d files in the cache, want %d (temporary files left behind?)", len(entries), len(images))
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv("PRISM_CACHE_DIR", "/tmp/prism-cache-test")
	if got := cacheDir(); got != "/tmp/prism-cache-test/cuda" {
		t.Errorf("cacheDir with PRISM_CACHE_DIR = %q", got)
	}
	t.Setenv("PRISM_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg")
	if got := cacheDir(); got != "/tmp/xdg/prism/cuda" {
		t.Errorf("cacheDir with XDG_CACHE_HOME = %q", got)
	}
}

func TestResult(t *testing.T) {
	sentinels := []error{engine.ErrOutOfMemory, engine.ErrInvalidArg, engine.ErrUnavailable, engine.ErrNotFound,
		engine.ErrUnsupported, engine.ErrBuild}
	for _, c := range []struct {
		err  error
		text string
		is   error
	}{
		{check("cuMemAlloc_v2(1024 bytes)", OutOfMemory), "cuda: cuMemAlloc_v2(1024 bytes): CUDA_ERROR_OUT_OF_MEMORY", engine.ErrOutOfMemory},
		{check("x", InvalidValue), "cuda: x: CUDA_ERROR_INVALID_VALUE", engine.ErrInvalidArg},
		{check("x", InvalidHandle), "CUDA_ERROR_INVALID_HANDLE", engine.ErrInvalidArg},
		{check("x", InvalidDevice), "CUDA_ERROR_INVALID_DEVICE", engine.ErrInvalidArg},
		{check("x", LaunchOutOfResources), "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", engine.ErrInvalidArg},
		{check("cuInit(0)", NoDevice), "cuda: cuInit(0): CUDA_ERROR_NO_DEVICE", engine.ErrUnavailable},
		{check("x", NotInitialized), "CUDA_ERROR_NOT_INITIALIZED", engine.ErrUnavailable},
		{check("x", Deinitialized), "CUDA_ERROR_DEINITIALIZED", engine.ErrUnavailable},
		{check("x", StubLibrary), "CUDA_ERROR_STUB_LIBRARY", engine.ErrUnavailable},
		{check("x", SystemDriverMismatch), "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", engine.ErrUnavailable},
		{check(`cuModuleGetFunction("k")`, NotFound), `cuda: cuModuleGetFunction("k"): CUDA_ERROR_NOT_FOUND`, engine.ErrNotFound},
		{check("x", NotSupported), "CUDA_ERROR_NOT_SUPPORTED", engine.ErrUnsupported},
		{check("x", NoBinaryForGPU), "CUDA_ERROR_NO_BINARY_FOR_GPU", engine.ErrUnsupported},
		{check("x", UnsupportedPTXVersion), "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", engine.ErrUnsupported},
		{check("x", IllegalAddress), "CUDA_ERROR_ILLEGAL_ADDRESS", nil},
		{check("x", LaunchFailed), "CUDA_ERROR_LAUNCH_FAILED", nil},
		{check("x", InvalidImage), "CUDA_ERROR_INVALID_IMAGE", nil},
		{check("x", InvalidContext), "CUDA_ERROR_INVALID_CONTEXT", nil},
		{check("x", Result(12345)), "cuda: x: CUresult(12345)", nil},
		{checkNVRTC("nvrtcCompileProgram(-arch=sm_90)", NVRTCCompilation), "cuda: nvrtcCompileProgram(-arch=sm_90): NVRTC_ERROR_COMPILATION", engine.ErrBuild},
		{checkNVRTC("x", NVRTCInvalidOption), "NVRTC_ERROR_INVALID_OPTION", engine.ErrInvalidArg},
		{checkNVRTC("x", NVRTCOutOfMemory), "NVRTC_ERROR_OUT_OF_MEMORY", engine.ErrOutOfMemory},
		{checkNVRTC("x", NVRTCResult(99)), "nvrtcResult(99)", nil},
		{fmt.Errorf("engine: alloc: %w", check("cuMemAlloc_v2(8 bytes)", OutOfMemory)), "CUDA_ERROR_OUT_OF_MEMORY", engine.ErrOutOfMemory},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.text) {
			t.Errorf("%v does not contain %q", c.err, c.text)
			continue
		}
		for _, s := range sentinels {
			if got := errors.Is(c.err, s); got != (s == c.is) {
				t.Errorf("errors.Is(%v, %v) = %v", c.err, s, got)
			}
		}
	}
	var r Result
	if err := check("x", OutOfMemory); !errors.As(err, &r) || r != OutOfMemory {
		t.Errorf("errors.As gives %v", r)
	}
	if err := fmt.Errorf("wrapped: %w", check("x", NotReady)); !errors.As(err, &r) || r != NotReady {
		t.Errorf("errors.As through a wrap gives %v", r)
	}
	if check("x", Success) != nil || checkNVRTC("x", NVRTCSuccess) != nil {
		t.Error("success is an error")
	}
	for code, name := range resultNames {
		if !strings.HasPrefix(name, "CUDA_") || code.Error() != name {
			t.Errorf("Result(%d) is named %q", int(code), name)
		}
	}
}

// TestFillPlan runs the operations of fillPlan on a byte slice and checks the result, for
// every pattern length the SPI allows and regions that straddle the doubling steps.
func TestFillPlan(t *testing.T) {
	run := func(mem []byte, ops []fillOp) {
		for _, op := range ops {
			switch op.kind {
			case opMemset8:
				for i := int64(0); i < op.count; i++ {
					mem[op.dst+i] = byte(op.value)
				}
			case opMemset16:
				for i := int64(0); i < op.count; i++ {
					binary.LittleEndian.PutUint16(mem[op.dst+2*i:], uint16(op.value))
				}
			case opMemset32:
				for i := int64(0); i < op.count; i++ {
					binary.LittleEndian.PutUint32(mem[op.dst+4*i:], op.value)
				}
			case opCopy:
				if op.src+op.count > op.dst && op.dst+op.count > op.src {
					t.Fatalf("copy of %d bytes from %d to %d overlaps", op.count, op.src, op.dst)
				}
				copy(mem[op.dst:op.dst+op.count], mem[op.src:op.src+op.count])
			}
		}
	}
	for _, n := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		pattern := make([]byte, n)
		for i := range pattern {
			pattern[i] = byte(17*i + n)
		}
		for _, count := range []int{1, 2, 3, 7, 8, 9, 100} {
			for _, offCount := range []int{0, 1, 3} {
				offset, size := int64(offCount*n), int64(count*n)
				mem := bytes.Repeat([]byte{0xEE}, int(offset+size)+2*128)
				ops, err := fillPlan(offset, pattern, size)
				if err != nil {
					t.Fatal(err)
				}
				run(mem, ops)
				want := bytes.Repeat([]byte{0xEE}, len(mem))
				copy(want[offset:], bytes.Repeat(pattern, count))
				if !bytes.Equal(mem, want) {
					t.Fatalf("pattern of %d bytes, %d copies at %d: wrong memory", n, count, offset)
				}
				if limit := n/4 + 1 + bitsLen(count); len(ops) > limit {
					t.Errorf("pattern of %d bytes, %d copies: %d operations, want at most %d", n, count, len(ops), limit)
				}
			}
		}
	}
	// A long pattern with a short period is one memset: a float64 zero, an int64 -1.
	for _, c := range []struct {
		pattern []byte
		kind    int
	}{
		{make([]byte, 8), opMemset8},
		{bytes.Repeat([]byte{0xff}, 16), opMemset8},
		{[]byte{1, 2, 1, 2, 1, 2, 1, 2}, opMemset16},
		{[]byte{1, 2, 3, 4, 1, 2, 3, 4}, opMemset32},
	} {
		ops, err := fillPlan(0, c.pattern, 64)
		if err != nil || len(ops) != 1 || ops[0].kind != c.kind {
			t.Errorf("fillPlan(% x) = %+v, %v; want one memset of kind %d", c.pattern, ops, err, c.kind)
		}
	}
	for _, bad := range []struct {
		offset  int64
		pattern []byte
		size    int64
	}{{0, nil, 8}, {0, make([]byte, 3), 9}, {0, make([]byte, 256), 256}, {2, make([]byte, 4), 8}, {0, make([]byte, 4), 6}} {
		if _, err := fillPlan(bad.offset, bad.pattern, bad.size); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("fillPlan(%d, %d-byte pattern, %d) = %v, want ErrInvalidArg", bad.offset, len(bad.pattern), bad.size, err)
		}
	}
}

func bitsLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

func TestPackArgs(t *testing.T) {
	buf := &buffer{ptr: 0x7f00_1234_5678, size: 64}
	args := []driver.Arg{
		{Value: []byte{1, 0, 0, 0}},             // int
		{Buffer: buf},                           // pointer
		{Value: []byte{9}},                      // char
		{Value: []byte{1, 2, 3, 4, 5, 6, 7, 8}}, // double
		{Value: bytes.Repeat([]byte{3}, 12)},    // a 12-byte struct
	}
	p, err := packArgs(args, []int{4, 8, 1, 8, 12})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 8, 16, 24, 32}; !slices.Equal(p.offsets, want) {
		t.Errorf("offsets %v, want %v", p.offsets, want)
	}
	if len(p.data) != 48 {
		t.Errorf("%d bytes, want 48", len(p.data))
	}
	if got := binary.NativeEndian.Uint64(p.data[8:]); got != buf.ptr {
		t.Errorf("buffer argument %#x, want %#x", got, buf.ptr)
	}
	if !bytes.Equal(p.data[0:8], []byte{1, 0, 0, 0, 0, 0, 0, 0}) || p.data[16] != 9 || !bytes.Equal(p.data[32:44], args[4].Value) {
		t.Errorf("packed % x", p.data)
	}
	// The C layout points each kernelParams entry at its slot, after the 5 pointers
	// rounded up to 64 bytes.
	m := p.toC()
	defer m.free()
	if h := p.head(); h != 64 || p.cSize() != 64+48 {
		t.Errorf("slots at %d of %d bytes, want at 64 of %d", h, p.cSize(), 64+48)
	}
	ptrs := (*[5]uintptr)(m.p)
	for i, off := range p.offsets {
		if ptrs[i] != uintptr(m.p)+uintptr(64+off) {
			t.Errorf("kernelParams[%d] does not point at its slot", i)
		}
	}
	if got := m.bytes(64 + 48)[64+24 : 64+32]; !bytes.Equal(got, args[3].Value) {
		t.Errorf("C copy of argument 3 is % x", got)
	}

	// Unknown sizes: packed as given, padded.
	if _, err := packArgs(args, nil); err != nil {
		t.Errorf("without sizes: %v", err)
	}
	for name, c := range map[string]struct {
		args  []driver.Arg
		sizes []int
	}{
		"wrong count":  {args[:2], []int{4}},
		"wrong size":   {args[:1], []int{8}},
		"empty":        {[]driver.Arg{{}}, nil},
		"closed buf":   {[]driver.Arg{{Buffer: closedBuffer()}}, nil},
		"foreign buf":  {[]driver.Arg{{Buffer: foreignBuffer{}}}, nil},
		"pointer size": {args[1:2], []int{4}},
		"local size":   {[]driver.Arg{{Local: 256}}, nil},
	} {
		if _, err := packArgs(c.args, c.sizes); err == nil {
			t.Errorf("%s: packArgs accepted it", name)
		} else if !errors.Is(err, engine.ErrInvalidArg) && !errors.Is(err, engine.ErrClosed) && !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrInvalidArg, ErrClosed or ErrUnsupported", name, err)
		}
	}
}

// TestPackTensorMaps packs two tensor maps (128 bytes each, as the kernels of wgmma.cu
// take them) between scalars: each lands in a 64-byte-aligned slot of the C block, which
// is itself 64-byte aligned, with its bytes intact; a 16-byte structure gets a 16-byte
// slot; a map given to a parameter of another size is refused.
func TestPackTensorMaps(t *testing.T) {
	tm := func(seed byte) []byte {
		b := make([]byte, driver.TensorMapBytes)
		for i := range b {
			b[i] = seed + byte(i)
		}
		return b
	}
	buf := &buffer{ptr: 0x7f00_0000_1000, size: 64}
	args := []driver.Arg{
		{Value: []byte{1, 0, 0, 0}},           // int
		{Value: tm(1)},                        // tensor map A
		{Value: tm(100)},                      // tensor map B
		{Buffer: buf},                         // pointer
		{Value: bytes.Repeat([]byte{7}, 16)},  // a 16-byte structure
		{Value: []byte{2, 0}},                 // short
		{Value: bytes.Repeat([]byte{9}, 128)}, // a third map, after an odd offset
	}
	sizes := []int{4, 128, 128, 8, 16, 2, 128}
	p, err := packArgs(args, sizes)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 64, 192, 320, 336, 352, 384}; !slices.Equal(p.offsets, want) {
		t.Errorf("offsets %v, want %v", p.offsets, want)
	}
	for _, c := range []struct {
		name string
		m    cMemory
	}{{"toC", p.toC()}, {"the queue's scratch", func() cMemory { var s cScratch; m := s.get(p.cSize()); p.writeC(m); return m }()}} {
		if uintptr(c.m.p)%64 != 0 {
			t.Errorf("%s: the block is at %p, not 64-byte aligned", c.name, c.m.p)
		}
		ptrs := unsafe.Slice((*unsafe.Pointer)(c.m.p), len(args))
		for i, a := range args {
			if a.Value == nil {
				continue
			}
			if align := slotAlign(len(a.Value)); uintptr(ptrs[i])%uintptr(align) != 0 {
				t.Errorf("%s: kernelParams[%d] (%d bytes) at %p, not %d-byte aligned", c.name, i, len(a.Value), ptrs[i], align)
			}
			if got := unsafe.Slice((*byte)(ptrs[i]), len(a.Value)); !bytes.Equal(got, a.Value) {
				t.Errorf("%s: kernelParams[%d] points at % x, want % x", c.name, i, got, a.Value)
			}
		}
		c.m.free()
	}
	if _, err := packArgs(args[1:2], []int{64}); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("a tensor map for a 64-byte parameter: %v, want ErrInvalidArg", err)
	}
	for n, want := range map[int]int{1: 8, 8: 8, 12: 16, 16: 16, 17: 32, 64: 64, 128: 64, 4096: 64} {
		if got := slotAlign(n); got != want {
			t.Errorf("slotAlign(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestTensorMapSupport checks the reasons a CUDA device has no tensor maps, without a GPU:
// an architecture before sm_90, and a driver without cuTensorMapEncodeTiled (none is
// loaded here, unless a test loaded one).
func TestTensorMapSupport(t *testing.T) {
	old := &device{info: driver.DeviceInfo{Name: "NVIDIA A100", ComputeCapability: 80}}
	if err := old.TensorMapSupport(); !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "NVIDIA A100 is sm_80") {
		t.Errorf("sm_80: %v, want ErrUnsupported naming the device and sm_80", err)
	}
	if haveTensorMapEncodeTiled() {
		t.Skip("a driver with cuTensorMapEncodeTiled is loaded")
	}
	h100 := &device{info: driver.DeviceInfo{Name: "NVIDIA H100", ComputeCapability: 90}, props: Properties{DriverVersion: 11080}}
	if err := h100.TensorMapSupport(); !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "the driver (CUDA 11.8) has no cuTensorMapEncodeTiled") {
		t.Errorf("a driver without cuTensorMapEncodeTiled: %v", err)
	}
}

func TestCheckOptions(t *testing.T) {
	h100 := Properties{ComputeCapability: [2]int{9, 0}, SharedMemPerBlock: 48 << 10, SharedMemPerBlockOptin: 227 << 10, ClusterLaunch: true}
	a100 := Properties{ComputeCapability: [2]int{8, 0}, SharedMemPerBlock: 48 << 10, SharedMemPerBlockOptin: 163 << 10}
	r1 := driver.Range{Dims: 1, Global: [3]int{64 * 16, 1, 1}, Local: [3]int{64, 1, 1}} // 16 blocks
	r2 := driver.Range{Dims: 2, Global: [3]int{64 * 4, 6, 1}, Local: [3]int{64, 1, 1}}  // 4x6 blocks
	for _, c := range []struct {
		name string
		r    driver.Range
		p    Properties
		want error
	}{
		{"nothing", r1, a100, nil},
		{"shared bytes within the opt-in", r1.WithSharedBytes(227 << 10), h100, nil},
		{"shared bytes above the opt-in", r1.WithSharedBytes(227<<10 + 1), h100, engine.ErrInvalidArg},
		{"shared bytes negative", r1.WithSharedBytes(-1), h100, engine.ErrInvalidArg},
		{"cluster", r1.WithCluster(8, 1, 1), h100, nil},
		{"cluster, unused dimensions 0", r1.WithCluster(4, 0, 0), h100, nil},
		{"2D cluster", r2.WithCluster(2, 3, 1), h100, nil},
		{"cluster on sm_80", r1.WithCluster(2, 1, 1), a100, engine.ErrUnsupported},
		{"cluster of 16", r1.WithCluster(16, 1, 1), h100, engine.ErrInvalidArg},
		{"cluster not dividing the grid", r2.WithCluster(1, 4, 1), h100, engine.ErrInvalidArg},
		{"cluster in an unused dimension", r1.WithCluster(2, 1, 2), h100, engine.ErrInvalidArg},
		{"cluster of 0 in a used dimension", r2.WithCluster(2, 0, 1), h100, engine.ErrInvalidArg},
	} {
		grid, _, err := launchShape(c.r, [3]int{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = checkOptions(c.r, grid, c.p)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: checkOptions = %v, want %v", c.name, err, c.want)
		}
	}
	if got := clusterShape(r1.WithCluster(4, 0, 0)); got != [3]int{4, 1, 1} {
		t.Errorf("clusterShape = %v, want [4 1 1]", got)
	}
}

func TestFuncAttributes(t *testing.T) {
	values := map[int]int{
		funcAttrMaxThreadsPerBlock: 1024, funcAttrSharedSizeBytes: 4096, funcAttrConstSizeBytes: 64,
		funcAttrLocalSizeBytes: 16, funcAttrNumRegs: 40, funcAttrPTXVersion: 88, funcAttrBinaryVersion: 90,
	}
	got := funcAttributes(func(a int) (int, Result) {
		if v, ok := values[a]; ok {
			return v, Success
		}
		return 0, InvalidValue
	}, 32)
	want := driver.KernelAttributes{Registers: 40, LocalBytes: 4096, PrivateBytes: 16, ConstBytes: 64, MaxWorkGroupSize: 1024,
		PreferredMultiple: 32, BinaryVersion: 90, PTXVersion: 88}
	if got != want {
		t.Errorf("funcAttributes = %+v, want %+v", got, want)
	}
	if got := funcAttributes(func(int) (int, Result) { return 0, InvalidValue }, 32); got != (driver.KernelAttributes{PreferredMultiple: 32}) {
		t.Errorf("funcAttributes with no attribute readable = %+v", got)
	}
}

// TestErrorPrefix: the package's errors say "cuda: " once, also when one wraps another.
func TestErrorPrefix(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{check("cuInit(0)", NoDevice), "cuda: cuInit(0): CUDA_ERROR_NO_DEVICE"},
		{wrapf(check("cuInit(0)", NoDevice), "libcuda.so.1 loaded, but the driver does not initialize"),
			"cuda: libcuda.so.1 loaded, but the driver does not initialize: cuInit(0): CUDA_ERROR_NO_DEVICE"},
		{wrapf(wrapf(errClosed("buffer"), "argument %d", 3), "launch %s", "k"), "cuda: launch k: argument 3: buffer is closed: use of closed object"},
		{checkNVRTC("nvrtcCompileProgram(-arch=sm_90a)", NVRTCCompilation), "cuda: nvrtcCompileProgram(-arch=sm_90a): NVRTC_ERROR_COMPILATION"},
	} {
		if c.err.Error() != c.want || enginetest.RepeatedPrefix(c.err) != "" {
			t.Errorf("got %q, want %q", c.err, c.want)
		}
	}
	if err := wrapf(check("cuInit(0)", NoDevice), "x"); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("%v does not wrap ErrUnavailable", err)
	}
}

func closedBuffer() *buffer {
	b := &buffer{size: 4}
	b.closed.Store(true)
	return b
}

type foreignBuffer struct{}

func (foreignBuffer) Size() int64  { return 4 }
func (foreignBuffer) Close() error { return nil }

func TestLaunchShape(t *testing.T) {
	limits := [3]int{2147483647, 65535, 65535}
	for _, c := range []struct {
		r           driver.Range
		grid, block [3]int
		ok          bool
	}{
		{driver.Range{Dims: 1, Global: [3]int{1024, 7, 7}, Local: [3]int{256, 3, 3}}, [3]int{4, 1, 1}, [3]int{256, 1, 1}, true},
		{driver.Range{Dims: 2, Global: [3]int{64, 30, 1}, Local: [3]int{16, 10, 1}}, [3]int{4, 3, 1}, [3]int{16, 10, 1}, true},
		{driver.Range{Dims: 3, Global: [3]int{8, 8, 8}, Local: [3]int{2, 4, 8}}, [3]int{4, 2, 1}, [3]int{2, 4, 8}, true},
		{driver.Range{Dims: 1, Global: [3]int{1 << 20, 1, 1}, Local: [3]int{1, 1, 1}}, [3]int{1 << 20, 1, 1}, [3]int{1, 1, 1}, true},
		{driver.Range{Dims: 2, Global: [3]int{1, 65536, 1}, Local: [3]int{1, 1, 1}}, [3]int{}, [3]int{}, false},
		{driver.Range{Dims: 1, Global: [3]int{100, 1, 1}, Local: [3]int{64, 1, 1}}, [3]int{}, [3]int{}, false},
		{driver.Range{Dims: 0}, [3]int{}, [3]int{}, false},
		{driver.Range{Dims: 4}, [3]int{}, [3]int{}, false},
	} {
		grid, block, err := launchShape(c.r, limits)
		if c.ok != (err == nil) || (c.ok && (grid != c.grid || block != c.block)) {
			t.Errorf("launchShape(%+v) = %v, %v, %v; want %v, %v, ok %v", c.r, grid, block, err, c.grid, c.block, c.ok)
		}
		if err != nil && !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("launchShape(%+v): %v, want ErrInvalidArg", c.r, err)
		}
	}
}

func TestParamSizes(t *testing.T) {
	answers := func(sizes []int, end Result) func(int) (int, Result) {
		return func(i int) (int, Result) {
			if i < len(sizes) {
				return sizes[i], Success
			}
			return 0, end
		}
	}
	// Without cuFuncGetParamCount (n = -1): probe to the end.
	if got, ok := paramSizes(-1, answers([]int{4, 4, 4, 8, 8}, InvalidValue)); !ok || !slices.Equal(got, []int{4, 4, 4, 8, 8}) {
		t.Errorf("paramSizes = %v, %v", got, ok)
	}
	if got, ok := paramSizes(-1, answers(nil, InvalidValue)); !ok || got == nil || len(got) != 0 {
		t.Errorf("no parameters: %v, %v; want an empty, known list", got, ok)
	}
	if got, ok := paramSizes(-1, answers([]int{4}, NotSupported)); ok {
		t.Errorf("a driver that cannot tell gave %v", got)
	}
	if got, ok := paramSizes(-1, func(int) (int, Result) { return 4, Success }); ok {
		t.Errorf("a driver that never ends gave %d parameters", len(got))
	}
	// With the count: exactly n calls, none past the end.
	calls := 0
	counted := func(i int) (int, Result) {
		calls++
		return answers([]int{8, 4}, InvalidValue)(i)
	}
	if got, ok := paramSizes(2, counted); !ok || !slices.Equal(got, []int{8, 4}) || calls != 2 {
		t.Errorf("paramSizes(2) = %v, %v after %d calls; want [8 4], true after 2", got, ok, calls)
	}
	if got, ok := paramSizes(0, counted); !ok || len(got) != 0 {
		t.Errorf("paramSizes(0) = %v, %v", got, ok)
	}
	if _, ok := paramSizes(3, answers([]int{8, 4}, InvalidValue)); ok {
		t.Error("a count above what the driver answers was trusted")
	}
}

func TestDescribe(t *testing.T) {
	h100 := map[int]int{
		attrComputeCapabilityMajor: 9, attrComputeCapabilityMinor: 0, attrMultiprocessorCount: 132,
		attrClockRate: 1980000, attrMemoryClockRate: 2619000, attrGlobalMemoryBusWidth: 5120,
		attrL2CacheSize: 50 << 20, attrMaxSharedMemoryPerBlock: 48 << 10, attrMaxSharedMemoryPerBlockOpt: 227 << 10,
		attrMaxThreadsPerBlock: 1024, attrMaxBlockDimX: 1024, attrMaxBlockDimX + 1: 1024, attrMaxBlockDimX + 2: 64,
		attrMaxGridDimX: 2147483647, attrMaxGridDimX + 1: 65535, attrMaxGridDimX + 2: 65535, attrWarpSize: 32,
		attrPCIDomainID: 0, attrPCIBusID: 0x1b, attrPCIDeviceID: 0, attrClusterLaunch: 1,
	}
	attr := func(m map[int]int) func(int) (int, error) {
		return func(a int) (int, error) {
			if v, ok := m[a]; ok {
				return v, nil
			}
			return 0, check(fmt.Sprintf("cuDeviceGetAttribute(%d)", a), InvalidValue)
		}
	}
	info, props, err := describe(attr(h100), "NVIDIA H100 80GB HBM3", 85<<30, "00000000:1B:00.0")
	if err != nil {
		t.Fatal(err)
	}
	want := driver.DeviceInfo{
		Name: "NVIDIA H100 80GB HBM3", Vendor: "NVIDIA", Platform: "NVIDIA CUDA", Kind: driver.KindGPU,
		LanguageVersion: "sm_90", ComputeUnits: 132, ClockMHz: 1980, GlobalMemBytes: 85 << 30, MaxAllocBytes: 85 << 30,
		LocalMemBytes: 48 << 10, CacheBytes: 50 << 20, LocalMemOptInBytes: 227 << 10, MaxWorkGroupSize: 1024, MaxWorkItemSizes: [3]int{1024, 1024, 64},
		FP64: true, FP16: true, Int64Atomics: true, Subgroups: true, ComputeCapability: 90, PCIBusID: "0000:1b:00.0",
	}
	if info != want {
		t.Errorf("describe:\n got %+v\nwant %+v", info, want)
	}
	if props.L2CacheBytes != 50<<20 || props.MemoryClockMHz != 2619 || props.MaxGridDim != [3]int{2147483647, 65535, 65535} ||
		props.ComputeCapability != [2]int{9, 0} || props.SharedMemPerBlockOptin != 227<<10 || !props.ClusterLaunch {
		t.Errorf("properties %+v", props)
	}
	if f := (&device{props: props}).LaunchFeatures(); f != (driver.LaunchFeatures{LocalArgs: true, SharedBytes: true, MaxClusterSize: 8}) {
		t.Errorf("H100 launch features %+v", f)
	}
	// No PCI string: the attributes give it. Compute capability 5.2: no fp16.
	old := map[int]int{attrComputeCapabilityMajor: 5, attrComputeCapabilityMinor: 2, attrPCIDomainID: 1, attrPCIBusID: 0xa, attrPCIDeviceID: 3}
	info, props, err = describe(attr(old), "old", 1<<30, "")
	if err != nil || info.FP16 || info.PCIBusID != "0001:0a:03.0" || info.LanguageVersion != "sm_52" || info.ComputeUnits != 0 ||
		info.ComputeCapability != 52 || info.LocalMemOptInBytes != 0 {
		t.Errorf("describe(old) = %+v, %v", info, err)
	}
	if f := (&device{props: props}).LaunchFeatures(); f != (driver.LaunchFeatures{LocalArgs: true, SharedBytes: true}) {
		t.Errorf("sm_52 launch features %+v: no clusters", f)
	}
	if info, _, _ := describe(attr(map[int]int{attrComputeCapabilityMajor: 5, attrComputeCapabilityMinor: 3}), "tx1", 1, ""); !info.FP16 {
		t.Error("compute capability 5.3 has fp16")
	}
	if _, _, err := describe(attr(map[int]int{}), "broken", 1, ""); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("describe without a compute capability: %v", err)
	}
}

func TestFormatPCIBusID(t *testing.T) {
	for in, want := range map[string]string{
		"0000:1B:00.0":     "0000:1b:00.0",
		"00000000:65:00.0": "0000:65:00.0",
		"0001:a1:1f.7":     "0001:a1:1f.7",
		" 0000:01:00.1\n":  "0000:01:00.1",
		"":                 "",
		"0000:01:00":       "",
		"0000:1g:00.0":     "",
		"0000:100:00.0":    "",
		"0000:01:20.0":     "",
		"0000:01:00.8":     "",
		"garbage":          "",
	} {
		if got := formatPCIBusID(in); got != want {
			t.Errorf("formatPCIBusID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseModuleVersion(t *testing.T) {
	for in, want := range map[string]string{
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:28 UTC 2025\nGCC version:  gcc version 12.2.0\n":        "580.65.06",
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release Build  (dvs-builder@U16-I3-B03-4-3)  Wed Aug 27 2025\n": "580.82.07",
		"NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104  Sat Aug 19 2023\n":                                                        "535.104",
		"something else\n": "",
		"":                 "",
	} {
		if got := parseModuleVersion(in); got != want {
			t.Errorf("parseModuleVersion(%q) = %q, want %q", in, got, want)
		}
	}
	if got := versionString(13000); got != "13.0" {
		t.Errorf("versionString(13000) = %q", got)
	}
	if got := versionString(12080); got != "12.8" {
		t.Errorf("versionString(12080) = %q", got)
	}
}

func TestPeriod(t *testing.T) {
	for _, c := range []struct {
		p    []byte
		want int64
	}{{[]byte{1}, 1}, {[]byte{1, 1}, 1}, {[]byte{1, 2}, 2}, {[]byte{1, 2, 1, 2}, 2}, {[]byte{1, 2, 1, 3}, 4}, {make([]byte, 128), 1}} {
		if got := period(c.p); got != c.want {
			t.Errorf("period(% x) = %d, want %d", c.p, got, c.want)
		}
	}
}

func TestToolkitCandidates(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "lib64"), 0o755)
	t.Setenv("CUDA_HOME", root)
	t.Setenv("CUDA_PATH", root)
	got := toolkitCandidates([]string{"libnvrtc.so.13", "/abs/libx.so"})
	want := []string{"libnvrtc.so.13", "/abs/libx.so", filepath.Join(root, "lib64", "libnvrtc.so.13")}
	if len(got) < len(want) || !slices.Equal(got[:3], want) {
		t.Errorf("toolkitCandidates = %q, want %q first", got, want)
	}
	t.Setenv("CUDA_HOME", filepath.Join(root, "missing"))
	t.Setenv("CUDA_PATH", "")
	for _, c := range toolkitCandidates([]string{"libnvrtc.so.13"}) {
		if strings.Contains(c, "missing") {
			t.Errorf("a directory that does not exist was tried: %q", c)
		}
	}
}

func TestNodeCounts(t *testing.T) {
	counts := make([]int, len(graphNodeTypes))
	if got := nodeCounts(counts); got != "nodes the driver did not count" {
		t.Errorf("no nodes: %q", got)
	}
	counts[0], counts[7], counts[len(counts)-1] = 3, 2, 1
	if got, want := nodeCounts(counts), "6 nodes: 3 kernel, 2 event record, 1 other"; got != want {
		t.Errorf("nodeCounts = %q, want %q", got, want)
	}
}

// TestWaitSpin checks PRISM_WAIT_SPIN: unset or empty the default, a Go duration from 0
// to maxSpin as given, anything else refused with ErrInvalidArg naming the variable.
func TestWaitSpin(t *testing.T) {
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"", defaultSpin}, {"  ", defaultSpin}, {"0", 0}, {"100us", 100 * time.Microsecond}, {"2ms", 2 * time.Millisecond}, {"1s", time.Second},
	} {
		t.Setenv(waitSpinEnv, c.v)
		if got, err := waitSpin(); err != nil || got != c.want {
			t.Errorf("%s=%q: %v, %v; want %v", waitSpinEnv, c.v, got, err, c.want)
		}
	}
	for _, v := range []string{"-1ms", "2s", "fast", "100"} {
		t.Setenv(waitSpinEnv, v)
		if _, err := waitSpin(); !errors.Is(err, driver.ErrInvalidArg) || !strings.Contains(err.Error(), waitSpinEnv) {
			t.Errorf("%s=%q: %v; want ErrInvalidArg naming the variable", waitSpinEnv, v, err)
		}
	}
}
