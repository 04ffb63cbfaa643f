package suitekernels

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// clangShim gives clang, compiling CUDA C++ without the CUDA headers (-nocudainc), what
// NVRTC predefines and the suite's CUDA sources use. clang 15 has no __grid_constant__
// attribute: the shim drops it, so the PTX copies the tensor map parameter to local memory
// where NVRTC keeps it in parameter space; what the test checks (the source compiles, its
// parameters are what the backend's launches pass) is the same.
const clangShim = `#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __grid_constant__
#include <__clang_cuda_builtin_vars.h>
`

// TestCUDASourcesCompile compiles the suite's CUDA C++ sources to PTX with Debian's
// clang-15 for sm_80 (clang 15 knows no sm_90; inline PTX is not checked by clang, only
// passed through), with the embedded headers of the CUDA backend, and checks each kernel's
// entry and parameters: TMABox takes its tensor map as a 64-byte-aligned parameter of 128
// bytes, the Arg that engine passes for a *TensorMap.
func TestCUDASourcesCompile(t *testing.T) {
	clang, err := exec.LookPath("clang-15")
	if err != nil {
		t.Skip("clang-15 is not installed (apt-get install -y clang-15): the suite's CUDA C++ is not compiled")
	}
	inc, err := filepath.Abs("../../../cuda/include")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, src, kernel string
		params            []string // the PTX's parameter declarations, in order
		ptx               []string // instructions the PTX must hold
	}{
		{"CUDASource", CUDASource, GroupReverseShared, []string{".param .u32", ".param .u32", ".param .u64", ".param .u64"}, []string{"bar.sync"}},
		{"ClusterSource", ClusterSource, ClusterRank, []string{".param .u64"}, []string{"%cluster_ctarank", "%cluster_nctarank"}},
		{"TensorMapSource", TensorMapSource, TMABox, []string{".param .align 64 .b8", ".param .u32", ".param .u32", ".param .u32", ".param .u64"},
			[]string{"mbarrier.init.shared::cta.b64", "fence.proxy.async.shared::cta", "mbarrier.arrive.expect_tx.shared::cta.b64",
				"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes", "mbarrier.try_wait.parity.shared::cta.b64",
				".shared .align 128 .b8"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, ptxFile := filepath.Join(dir, "k.cu"), filepath.Join(dir, "k.ptx")
			if err := os.WriteFile(src, []byte(clangShim+"#line 1 \""+c.name+".cu\"\n"+c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"-x", "cuda", "-std=c++17", "--cuda-gpu-arch=sm_80", "--cuda-device-only", "-nocudainc", "-nocudalib",
				"-O2", "-I", inc, "-S", "-o", ptxFile, src}
			if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
				t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			b, err := os.ReadFile(ptxFile)
			if err != nil {
				t.Fatal(err)
			}
			ptx := string(b)
			entry := regexp.MustCompile(`\.entry ` + c.kernel + `\(([^)]*)\)`).FindStringSubmatch(ptx)
			if entry == nil {
				t.Fatalf("the PTX has no .entry %s:\n%s", c.kernel, ptx)
			}
			var params []string
			for _, line := range strings.Split(entry[1], "\n") {
				if line = strings.TrimSpace(line); line != "" {
					params = append(params, line)
				}
			}
			if len(params) != len(c.params) {
				t.Fatalf("%s has %d parameters, want %d: %q", c.kernel, len(params), len(c.params), params)
			}
			for i, p := range params {
				if !strings.HasPrefix(p, c.params[i]) {
					t.Errorf("parameter %d is %q, want %s", i, p, c.params[i])
				}
			}
			if c.kernel == TMABox && !strings.HasSuffix(strings.TrimSuffix(params[0], ","), "[128]") {
				t.Errorf("the tensor map parameter is %q, want 128 bytes", params[0])
			}
			for _, w := range c.ptx {
				if !strings.Contains(ptx, w) {
					t.Errorf("the PTX has no %s", w)
				}
			}
		})
	}
}
