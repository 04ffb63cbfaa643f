package cuda

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/cuda/clc/translate/translatetest"

	"github.com/prism-compute/prism/cuda/clc/translate"
)

// The clang tests compile what the backend gives NVRTC with Debian's clang-15, which
// compiles CUDA device code to PTX without a CUDA toolkit (docs/ARCHITECTURE.md, "One
// kernel source, two compilers"): the suite's CUDA C++ with the embedded headers, and
// translated OpenCL C, whose PTX the backend reads parameter counts from. The suite's
// OpenCL C kernels are compiled through the translation by the tests of package
// cuda/clc/translate.

// clangPath and clangCUDA are translatetest's, for this package's tests.
func clangPath(t *testing.T) string { return translatetest.ClangPath(t) }

func clangCUDA(t *testing.T, clang, name, text string, defines []string) (string, error) {
	return translatetest.ClangCUDA(t, clang, name, text, defines...)
}

// TestHeadersCompile compiles a CUDA C++ kernel that includes the embedded prism_cuda.h,
// from a directory holding the embedded headers as NVRTC gets them, with clang-15 for
// sm_70 (bfloat16 rounding in integer arithmetic) and sm_80 (cvt.rn.bf16.f32), and checks
// that the conversions reach the PTX.
func TestHeadersCompile(t *testing.T) {
	clang := clangPath(t)
	inc := t.TempDir()
	for _, h := range embeddedHeaders() {
		if err := os.WriteFile(filepath.Join(inc, h.name), []byte(h.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// clang without CUDA's headers lacks the qualifiers NVRTC predefines.
	const shim = `#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __forceinline__ __inline__ __attribute__((always_inline))
`
	const kernel = `#include "prism_cuda.h"
extern "C" __global__ void convert(const float *in, uint16_t *h, uint16_t *b, float *back, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    const prism_half x = prism_float_to_half(in[i]);
    const prism_bfloat16 y = prism_float_to_bfloat16(in[i]);
    h[i] = x.bits;
    b[i] = y.bits;
    back[i] = prism_half_to_float(x) + prism_bfloat16_to_float(y) + (float)prism_pack2(x.bits, y.bits);
  }
}
static_assert(sizeof(int8_t) == 1 && sizeof(int16_t) == 2 && sizeof(int32_t) == 4 && sizeof(int64_t) == 8, "signed");
static_assert(sizeof(uint8_t) == 1 && sizeof(uint16_t) == 2 && sizeof(uint32_t) == 4 && sizeof(uint64_t) == 8, "unsigned");
static_assert(sizeof(prism_half) == 2 && sizeof(prism_bfloat16) == 2, "storage types");
`
	for _, c := range []struct {
		arch string
		want []string
	}{
		{"sm_70", []string{"cvt.rn.f16.f32", "cvt.f32.f16"}},
		{"sm_80", []string{"cvt.rn.f16.f32", "cvt.f32.f16", "cvt.rn.bf16.f32"}},
	} {
		t.Run(c.arch, func(t *testing.T) {
			dir := t.TempDir()
			src, ptx := filepath.Join(dir, "k.cu"), filepath.Join(dir, "k.ptx")
			if err := os.WriteFile(src, []byte(shim+kernel), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"-x", "cuda", "-std=c++17", "--cuda-gpu-arch=" + c.arch, "--cuda-device-only",
				"-nocudainc", "-nocudalib", "-O0", "-I", inc, "-S", "-o", ptx, src}
			if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
				t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			b, err := os.ReadFile(ptx)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("the PTX for %s has no %s", c.arch, w)
				}
			}
			if c.arch == "sm_70" && strings.Contains(string(b), "bf16") {
				t.Errorf("the PTX for sm_70 uses a bf16 instruction")
			}
		})
	}
}

// clangShim returns part 1 of the prelude: the CUDA built-ins NVRTC provides and clang
// without the CUDA headers lacks, for CUDA C++ sources.
func clangShim(t *testing.T) string {
	t.Helper()
	prelude := translate.Prelude()
	start := strings.Index(prelude, "#ifndef __CUDACC_RTC__")
	end := strings.Index(prelude, "#endif // __CUDACC_RTC__")
	if start < 0 || end < start {
		t.Fatal("the prelude's part 1 (#ifndef __CUDACC_RTC__ ... #endif // __CUDACC_RTC__) not found")
	}
	return prelude[start:end+len("#endif // __CUDACC_RTC__")] + "\n"
}

var (
	cudaEntryRE = regexp.MustCompile(`extern "C" __global__ void(?:\s+__launch_bounds__\([^)]*\))?\s+(\w+)\s*\(`)
	cudaBuildRE = regexp.MustCompile(`(?m)^// Builds: (.*)$`)
)

// TestCUDASources compiles every CUDA C++ variant of the suite (kernels/*/*.cu, and
// kernels/internal/*/*.cu of the schemes families share) to PTX with clang-15, with the
// embedded headers (include/) and each -D set its header's "Builds:" line lists, and
// checks that every extern "C" __global__ function is a PTX entry point. With PRISM_PTX_DIR
// set it writes each build's PTX there.
func TestCUDASources(t *testing.T) {
	clang := clangPath(t)
	files, err := filepath.Glob("../kernels/*/*.cu")
	shared, _ := filepath.Glob("../kernels/internal/*/*.cu")
	files = append(files, shared...)
	if err != nil || len(files) == 0 {
		t.Fatalf("no CUDA C++ sources found in ../kernels/*/ (%v)", err)
	}
	shim := clangShim(t)
	inc, err := filepath.Abs("include")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var entries []string
		for _, m := range cudaEntryRE.FindAllStringSubmatch(string(src), -1) {
			entries = append(entries, m[1])
		}
		if len(entries) == 0 {
			t.Errorf(`%s: no extern "C" __global__ function found`, f)
		}
		sets := [][]string{nil}
		if m := cudaBuildRE.FindStringSubmatch(string(src)); m != nil {
			sets = nil
			for _, set := range strings.Split(m[1], "|") {
				sets = append(sets, strings.Fields(set))
			}
		} else {
			t.Errorf(`%s: no "// Builds:" line in its header`, f)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".cu")
		for _, defs := range sets {
			t.Run(base+"/"+strings.Join(defs, ","), func(t *testing.T) {
				text := shim + "#line 1 \"" + base + ".cu\"\n" + string(src)
				ptx, err := clangCUDA(t, clang, base, text, append([]string{"-I", inc}, defs...))
				if err != nil {
					t.Fatalf("%s does not compile:\n%v", f, err)
				}
				// PRISM_PTX_DIR keeps every build's PTX, so that a change meant to leave the
				// code as it was can be checked by a diff of two runs.
				if dir := os.Getenv("PRISM_PTX_DIR"); dir != "" {
					name := filepath.Base(filepath.Dir(f)) + "-" + base + strings.Join(defs, "") + ".ptx"
					if err := os.WriteFile(filepath.Join(dir, name), []byte(ptx), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				for _, name := range entries {
					if !strings.Contains(ptx, ".entry "+name+"(") {
						t.Errorf("PTX has no .entry %s", name)
					}
				}
			})
		}
	}
}

// TestTranslatedPTXParams compiles translated OpenCL C kernels with clang-15 to PTX and
// checks that the backend reads each kernel's parameter count from the PTX as the source
// declares it: a __local pointer parameter, which the translation makes a uint offset,
// counts as one, as do vectors passed by value.
func TestTranslatedPTXParams(t *testing.T) {
	clang := clangPath(t)
	const src = `__kernel void none(void) {}
__kernel void one(__global float *x) { x[get_global_id(0)] = 1.0f; }
__kernel void locals(__global float *x, __local float *a, int n, __local float4 *b) {
    a[get_local_id(0)] = x[0];
    b[0] = (float4)(a[0]);
    barrier(CLK_LOCAL_MEM_FENCE);
    x[n] = b[0].y;
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void vectors(__global float4 *x, float4 v, uint2 w, __constant float *c) {
    x[w.x] = v * c[w.y];
}
`
	tr, err := translate.OpenCL(src, "params.cl")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]int{"locals": {1, 3}}; !maps.EqualFunc(tr.Locals, want, slices.Equal) {
		t.Errorf("the translation's __local parameters are %v, want %v", tr.Locals, want)
	}
	ptx, err := clangCUDA(t, clang, "params", tr.Text, nil)
	if err != nil {
		t.Fatalf("the kernels do not compile through the translation:\n%v", err)
	}
	want := map[string]int{"none": 0, "one": 1, "locals": 4, "vectors": 4}
	if got := imageParams([]byte(ptx)); !maps.Equal(got, want) {
		t.Errorf("imageParams of the PTX = %v, want %v", got, want)
	}
}
