package translate

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// subgroupKernel calls every supported subgroup row of builtins.tsv at every type it
// lists, and uses a program-scope global variable and generic pointers.
func subgroupKernel(t *testing.T) string {
	t.Helper()
	var body strings.Builder
	n := 0
	for _, b := range builtins() {
		if b.group != "subgroup" || b.state != "supported" {
			continue
		}
		switch {
		case b.name == "sub_group_barrier":
			fmt.Fprintf(&body, "  sub_group_barrier(CLK_LOCAL_MEM_FENCE);\n")
		case b.name == "sub_group_all" || b.name == "sub_group_any":
			fmt.Fprintf(&body, "  oi[%d] = %s((int)i & 1);\n", n, b.name)
			n++
		case len(b.types) == 0:
			fmt.Fprintf(&body, "  ou[%d] = %s();\n", n, b.name)
			n++
		default:
			for _, typ := range b.types {
				arg := fmt.Sprintf("(%s)i", typ)
				if b.name == "sub_group_broadcast" {
					arg += ", 3u"
				}
				fmt.Fprintf(&body, "  o_%s[%d] = %s(%s);\n", typ, n, b.name, arg)
				n++
			}
		}
	}
	return `__global int calls = 0;          // a program-scope variable
__global float table[2] = {1.5f, 2.5f};
int twice(int* p) { return 2 * *p; }  // a generic pointer, given global and local ones
__kernel void sg(__global int* oi, __global uint* ou, __global int* o_int, __global uint* o_uint,
                 __global long* o_long, __global ulong* o_ulong, __global float* o_float, __global double* o_double) {
  __local int l[64];
  size_t i = get_global_id(0);
  l[get_local_id(0)] = (int)i;
  oi[0] = twice(&oi[1]) + twice(&l[0]) + calls + (int)table[1];
` + body.String() + "}\n"
}

// TestSubgroupsPTX compiles, through the translation and clang-15 to PTX (sm_80, as the
// other translation tests do: there is no GPU here), a kernel calling every supported
// subgroup function of builtins.tsv at every type, with program-scope variables and
// generic pointers; the PTX must hold the warp instructions they map to and the globals
// as .global variables.
func TestSubgroupsPTX(t *testing.T) {
	clang := clangPath(t)
	src := subgroupKernel(t)
	text, err := Source(src, "sg.cl")
	if err != nil {
		t.Fatal(err)
	}
	ptx, err := clangCUDA(t, clang, "sg", Prelude()+"#line 1 \"sg.cl\"\n"+text, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shfl.sync.up.b32", "shfl.sync.idx.b32", "vote.sync.all.pred", "vote.sync.any.pred",
		"bar.warp.sync", ".global .align 4 .u32 calls", ".global .align 4 .b8 table[8]"} {
		if !strings.Contains(ptx, want) {
			t.Errorf("the PTX has no %q", want)
		}
	}
}

// TestSubgroupsOneLane runs the subgroup functions of the prelude on the CPU as one
// work-item, a subgroup of one lane, with the warp primitives a one-lane warp has: the
// reductions and inclusive scans give the value, the exclusive scans the operation's
// identity (0, the type's largest and smallest values), the votes the predicate. (A
// whole warp's shuffles need a GPU; TestSubgroupsPTX compiles them.)
func TestSubgroupsOneLane(t *testing.T) {
	clang := clangPath(t)
	sg, err := preludeFS.ReadFile("prelude/subgroups.cuh")
	if err != nil {
		t.Fatal(err)
	}
	const shim = `#include <stdio.h>
#define __CUDACC_RTC__ 1
#define __device__
#define __forceinline__ inline
struct prism_dim { unsigned int x, y, z; };
static prism_dim threadIdx = {0, 0, 0}, blockDim = {1, 1, 1};
typedef unsigned int cl_mem_fence_flags;
#define CLK_LOCAL_MEM_FENCE 1u
#define CLK_GLOBAL_MEM_FENCE 2u
static void __threadfence() {}
static void __threadfence_block() {}
template <class T> T __shfl_sync(unsigned int, T v, int) { return v; }
template <class T> T __shfl_up_sync(unsigned int, T v, unsigned int) { return v; }
static int __any_sync(unsigned int, int p) { return p; }
static int __all_sync(unsigned int, int p) { return p; }
static void __syncwarp(unsigned int) {}
#define PRISM_INFINITY_F __builtin_huge_valf() // types.cuh's, which this program leaves out
`
	const main = `
int main() {
  printf("%u %u %u %u %u %u\n", get_sub_group_size(), get_max_sub_group_size(), get_num_sub_groups(),
         get_sub_group_id(), get_sub_group_local_id(), prism_sg_mask());
  sub_group_barrier(CLK_LOCAL_MEM_FENCE);
  printf("%d %d %d %d\n", sub_group_all(5), sub_group_all(0), sub_group_any(1), sub_group_any(0));
  printf("%d %d %d %d\n", sub_group_reduce_add(7), sub_group_reduce_min(-7), sub_group_reduce_max(9), sub_group_broadcast(11, 0u));
  printf("%d %d %d\n", sub_group_scan_inclusive_add(4), sub_group_scan_inclusive_min(-4), sub_group_scan_inclusive_max(6));
  printf("%d %d %d\n", sub_group_scan_exclusive_add(4), sub_group_scan_exclusive_min(4), sub_group_scan_exclusive_max(4));
  printf("%u %u %ld %ld %lu\n", sub_group_scan_exclusive_min(4u), sub_group_scan_exclusive_max(4u),
         sub_group_scan_exclusive_min(4l), sub_group_scan_exclusive_max(4l), sub_group_scan_exclusive_min(4ul));
  printf("%g %g %g %g\n", sub_group_scan_exclusive_min(1.5f), sub_group_scan_exclusive_max(1.5), sub_group_reduce_add(2.25), sub_group_broadcast(-3.5f, 0u));
  printf("%ld %lu\n", sub_group_reduce_add(-(1l << 40)), sub_group_broadcast(~0ul, 0u));
  return 0;
}
`
	dir := t.TempDir()
	file, exe := filepath.Join(dir, "sg.cc"), filepath.Join(dir, "sg")
	if err := os.WriteFile(file, []byte(shim+string(sg)+main), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(clang, "-x", "c++", "-std=c++17", "-O0", "-w", "-o", exe, file).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := `1 1 1 0 0 1
1 0 1 0
7 -7 9 11
4 -4 6
0 2147483647 -2147483648
4294967295 0 9223372036854775807 -9223372036854775808 18446744073709551615
inf -inf 2.25 -3.5
-1099511627776 18446744073709551615
`
	if string(out) != want {
		t.Errorf("one lane:\n%s\nwant\n%s", out, want)
	}
}

// TestRefused20 checks that the OpenCL C 2.0 and later constructs the translation does
// not carry are refused by name and line, before NVRTC: pipes, device-side enqueue, the
// work-group collectives, the C11 atomics and the address-space queries; and that a
// variable named pipe (valid OpenCL C 1.2) is not.
func TestRefused20(t *testing.T) {
	for _, c := range []struct {
		src, msg string
		line     int
	}{
		{"__kernel void k(__global int* o) {\n  o[0] = work_group_reduce_add(1);\n}", "work_group collective functions are not translated (write them with __local memory and barrier) (work_group_reduce_add)", 2},
		{"__kernel void k(__global int* o,\n  pipe int p) {\n  read_pipe(p, o);\n}", "pipes have no CUDA counterpart (pipe)", 2},
		{"__kernel void k(__global int* o) {\n\n  o[0] = get_pipe_num_packets(0);\n}", "pipes have no CUDA counterpart (get_pipe_num_packets)", 3},
		{"void f(void) {}\n__kernel void k(__global int* o) {\n  enqueue_kernel(get_default_queue(), 0, ndrange_1D(1), ^{ f(); });\n}", "device-side enqueue has no CUDA counterpart in the translation (enqueue_kernel)", 3},
		{"__kernel void k(__global atomic_int* a) {\n  atomic_fetch_add(a, 1);\n}", "C11 atomics (memory orders and scopes, SVM) are not translated: use the 1.2 atomic_* functions (atomic_int)", 1},
		{"__kernel void k(__global int* o) {\n  int* p = o;\n  __global int* g = to_global(p);\n}", "the generic address space's queries are not translated (a generic pointer itself needs nothing) (to_global)", 3},
		{"__kernel void k(__global int* o) {\n  o[0] = sub_group_reserve_read_pipe(0, 1);\n}", "pipes and device-side enqueue have no CUDA counterpart in the translation (sub_group_reserve_read_pipe)", 2},
	} {
		_, err := Source(c.src, "k.cl")
		var te *Error
		if !errors.As(err, &te) || !errors.Is(err, engine.ErrUnsupported) || te.Line != c.line || !strings.Contains(te.Msg, c.msg) {
			t.Errorf("%q: %v, want an *Error at line %d wrapping ErrUnsupported containing %q", c.src, err, c.line, c.msg)
		}
	}
	if _, err := Source("__kernel void k(__global int* o) { int pipe = 2; o[0] = pipe; }", "k.cl"); err != nil {
		t.Errorf("a variable named pipe: %v", err)
	}
}

// TestProgramScopeGlobals checks the rewrite of program-scope variables: a __global (or
// global) outside functions becomes __device__; inside a function, a struct, a parameter
// list or an initializer it is left to the prelude.
func TestProgramScopeGlobals(t *testing.T) {
	src := "__global int a = 1;\nglobal float b[2] = {1, 2};\nstruct s { __global int* p; };\nvoid f(__global int* q) { __global int* r = q; }\n"
	got, err := Source(src, "g.cl")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"__device__ int a = 1;", "__device__ float b[2]", "struct s { __global int* p; }", "void f(__global int* q) { __global int* r = q; }"} {
		if !strings.Contains(got, want) {
			t.Errorf("translation\n%s\nhas no %q", got, want)
		}
	}
}
