package translate

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/cuda/clc/translate/translatetest"
)

// The prelude tests push every kernel of the suite (kernels/*.cl) through the CUDA
// translation with Debian's clang-15, which compiles CUDA device code to PTX without a
// CUDA toolkit (docs/ARCHITECTURE.md, "One kernel source, two compilers"): the text compiled is exactly what Build gives
// NVRTC (OpenCL), and the prelude's part 2, the OpenCL-to-CUDA mapping, is the same for
// both compilers. A kernel that uses a construct the prelude cannot carry fails here, on
// a machine without a GPU, the day it is written.

// clangPath and clangCUDA are translatetest's, for this package's tests.
func clangPath(t *testing.T) string { return translatetest.ClangPath(t) }

func clangCUDA(t *testing.T, clang, name, text string, defines []string) (string, error) {
	return translatetest.ClangCUDA(t, clang, name, text, defines...)
}

var kernelRE = regexp.MustCompile(`(?s)(?:__kernel\b|(?m:^)kernel\s)(.*?)\bvoid\s+(\w+)\s*\(([^)]*)\)`)

// kernelNames returns the names of the __kernel functions of an OpenCL C source, and
// whether each requires a work-group size.
func kernelNames(src string) map[string]bool {
	out := map[string]bool{}
	for _, m := range kernelRE.FindAllStringSubmatch(src, -1) {
		out[m[2]] = strings.Contains(m[1], "reqd_work_group_size")
	}
	return out
}

// kernelParams returns the number of parameters each __kernel of an OpenCL C source
// declares (the suite's parameter lists hold no parentheses).
func kernelParams(src string) map[string]int {
	out := map[string]int{}
	for _, m := range kernelRE.FindAllStringSubmatch(src, -1) {
		list := strings.TrimSpace(m[3])
		if list == "" || list == "void" {
			out[m[2]] = 0
			continue
		}
		out[m[2]] = strings.Count(list, ",") + 1
	}
	return out
}

// variants are the -D sets each suite kernel is compiled with: both element types, and two
// work-group sizes.
var variants = [][]string{
	{"-DWG=256", "-DELEM=float"},
	{"-DWG=256", "-DELEM=double", "-DPRISM_FP64"},
	{"-DWG=64", "-DELEM=float"},
}

// storageVariants are the further -D sets of families built in more shapes than variants
// gives: those whose kernels load or store the storage types through the conversions of
// kernels/convert.cl (as their launchers build them: float arithmetic, IN the stored type,
// CONV and STORE the conversions), the wide build of the row kernels, and stream's vector
// accesses.
var storageVariants = map[string][][]string{
	// The OpenCL tensor-core GEMM's emulation of mma.sync (its helpers take __local
	// pointers), in its three precisions, as CUDA devices build it in TestCLMMAEmulated.
	"gemm_mma": {
		{"-DPRISM_MMA_EMULATE", "-DPREC=1", "-DBM=64", "-DBN=64", "-DWARPS_M=2", "-DWARPS_N=2", "-DGROUP_M=2"},
		{"-DPRISM_MMA_EMULATE", "-DPREC=3", "-DBM=64", "-DBN=64", "-DWARPS_M=2", "-DWARPS_N=2", "-DGROUP_M=2"},
		{"-DPRISM_MMA_EMULATE", "-DPREC=4", "-DBM=128", "-DBN=128", "-DWARPS_M=2", "-DWARPS_N=4", "-DGROUP_M=8"},
	},
	"gemm": {
		{"-DELEM=float", "-DIN=float", "-DCONV=prism_tf32"},
		{"-DELEM=float", "-DIN=ushort", "-DCONV=prism_half"},
		{"-DELEM=float", "-DIN=ushort", "-DCONV=prism_bfloat16"},
		{"-DELEM=float", "-DIN=uchar", "-DCONV=prism_e4m3"},
		{"-DELEM=float", "-DIN=uchar", "-DCONV=prism_e5m2"},
	},
	"fft_reg": { // a build for one pass shape: 256 points of 16 columns, after 2^16
		{"-DWG=256", "-DELEM=float", "-DPASS_LGL=8", "-DPASS_LGC=4", "-DPASS_LGPIN=8", "-DPASS_LGPOUT=16", "-DPASS_LGI=0", "-DPASS_LGNS=16", "-DPASS_INV=0"},
		// a real-input transform of 2048 points in one pass, 4 a work-group
		{"-DWG=256", "-DELEM=float", "-DPASS_LGL=10", "-DPASS_LGC=2", "-DPASS_LGPIN=0", "-DPASS_LGPOUT=0", "-DPASS_LGI=0", "-DPASS_LGNS=0", "-DPASS_INV=0", "-DPASS_R2C"},
	},
	"softmax":   {{"-DWG=512", "-DCACHE=32", "-DELEM=float"}}, // the wide build
	"layernorm": {{"-DWG=512", "-DCACHE=32", "-DELEM=float"}},
	"stream": { // as the launcher builds it: 16-byte vector accesses
		{"-DWG=256", "-DELEM=float", "-DVW=4"},
		{"-DWG=256", "-DELEM=double", "-DPRISM_FP64", "-DVW=2"},
	},
	"attention": {
		{"-DWG=256", "-DELEM=float", "-DIN=ushort", "-DCONV=prism_half", "-DSTORE=prism_to_half"},
		{"-DWG=256", "-DELEM=float", "-DIN=ushort", "-DCONV=prism_bfloat16", "-DSTORE=prism_to_bfloat16"},
	},
}

// familyShared returns the .clh files beside a suite source (what its family prepends to
// each of its sources when it builds them), concatenated in name order.
func familyShared(t *testing.T, file string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(filepath.Dir(file), "*.clh"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, n := range names {
		text, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(text)
	}
	return b.String()
}

// TestPreludeKernels compiles every kernels/*.cl through the prelude to PTX, behind the
// shared conversions (kernels/convert.cl) as the launchers that use them build it, and
// checks that every __kernel is an entry point, with .maxntid where it requires a
// work-group size, and that its parameters are counted from the PTX as the source
// declares them.
func TestPreludeKernels(t *testing.T) {
	clang := clangPath(t)
	files, err := filepath.Glob("../../../kernels/*/*.cl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no kernels found in ../../../kernels/*/ (%v)", err)
	}
	convert, err := os.ReadFile("../../../kernels/convert.cl")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "testdata/dialect.cl")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		names, params := kernelNames(string(src)), kernelParams(string(src))
		if len(names) == 0 {
			t.Errorf("%s: no __kernel found", f)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".cl")
		text := string(src)
		if f != "testdata/dialect.cl" {
			text = string(convert) + familyShared(t, f) + text
		}
		for _, defs := range append(slices.Clone(variants), storageVariants[base]...) {
			t.Run(base+"/"+strings.Join(defs, ","), func(t *testing.T) {
				ptx, err := clangCUDA(t, clang, base, nvrtcText(text, DefaultName), defs)
				if err != nil {
					t.Fatalf("%s does not compile through the CUDA prelude:\n%v", f, err)
				}
				counts := ptxParams(ptx)
				for name, reqd := range names {
					if got, ok := counts[name]; !ok || got != params[name] {
						t.Errorf("the PTX's parameters of %s read as %d (found %v); the source declares %d", name, got, ok, params[name])
					}
					entry := regexp.MustCompile(`\.entry ` + name + `\(` + `[^{]*\{`)
					loc := entry.FindStringIndex(ptx)
					if loc == nil {
						t.Errorf("PTX has no .entry %s", name)
						continue
					}
					// Directives such as .maxntid sit between the parameters and the body.
					head := ptx[loc[0]:loc[1]]
					if reqd && !strings.Contains(head, ".maxntid") {
						t.Errorf("%s requires a work-group size, but its PTX entry has no .maxntid:\n%s", name, head)
					}
				}
			})
		}
	}
}

// TestPreludeDialectIsOpenCL checks that testdata/dialect.cl, which exercises every
// construct the prelude maps, is valid OpenCL C 1.2 too (clang's OpenCL front end), so
// that the dialect the prelude accepts is one an OpenCL compiler accepts.
func TestPreludeDialectIsOpenCL(t *testing.T) {
	clang := clangPath(t)
	for _, defs := range variants {
		args := append([]string{"-x", "cl", "-cl-std=CL1.2", "-Xclang", "-finclude-default-header", "-fsyntax-only",
			"testdata/dialect.cl"}, defs...)
		if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
			t.Errorf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestPreludeRejects shows that the check can fail: kernels that use constructs the
// prelude does not carry (or that are simply wrong) give clang's error, naming the
// construct, with line numbers of the kernel source (the #line after the prelude).
func TestPreludeRejects(t *testing.T) {
	clang := clangPath(t)
	for _, c := range []struct {
		name, src, want string
	}{
		{"undeclared identifier", "__kernel void k(__global float *x) {\n  x[0] = prism_not_declared;\n}\n", "kernel.cl:2:"},
		{"vector literal of a wrong width", "__kernel void k(__global float4 *x) {\n  x[0] = (float4)(1.0f, 2.0f, 3.0f);\n}\n", "kernel.cl:2:"},
		{"get_work_dim", "__kernel void k(__global uint *x) {\n  x[0] = get_work_dim();\n}\n", "get_work_dim"},
		{"pointer to float3", "__kernel void k(__global float *x,\n  __global float3 *v) {\n}\n", "kernel.cl:2:3: a __global pointer to float3"},
		{"swizzle of a wrong width", "__kernel void k(__global float4 *x) {\n  x[0].xy = x[1].zwx;\n}\n", "kernel.cl:2:"},
		{"image", "__kernel void k(__global float4 *x,\n  __read_only image2d_t im) {\n}\n", "kernel.cl:2:15: images have no CUDA counterpart"},
		// Behind the shared conversions, lines count from the family's source (convert.cl
		// ends with #line 1).
		{"after convert.cl", "@convert__kernel void k(__global ushort *x) {\n  x[0] = prism_to_half(prism_not_declared);\n}\n", "kernel.cl:2:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := c.src
			if rest, ok := strings.CutPrefix(src, "@convert"); ok {
				convert, err := os.ReadFile("../../../kernels/convert.cl")
				if err != nil {
					t.Fatal(err)
				}
				src = string(convert) + rest
			}
			_, err := clangCUDA(t, clang, "bad", nvrtcText(src, DefaultName), nil)
			if err == nil {
				t.Fatalf("clang accepted a kernel the prelude cannot carry:\n%s", c.src)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "error") {
				t.Errorf("clang's error does not mention %q:\n%v", c.want, err)
			}
			t.Logf("%v", firstLines(err.Error(), 4))
		})
	}
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// TestPreludeText checks properties of the prelude that NVRTC relies on and clang cannot
// check: it never defines the unprefixed OpenCL keywords (CUDA's own __global__ and
// __shared__ macros expand to the tokens global and shared), and the NVRTC branch only
// adjusts diagnostics.
func TestPreludeText(t *testing.T) {
	prelude := Prelude()
	for _, kw := range []string{"global", "local", "constant", "kernel", "private", "shared"} {
		if regexp.MustCompile(`(?m)^\s*#\s*define\s+` + kw + `\b`).MatchString(prelude) {
			t.Errorf("the prelude defines %q as a macro, which breaks CUDA's own macros under NVRTC", kw)
		}
	}
	i := strings.Index(prelude, "#else // NVRTC")
	j := strings.Index(prelude, "#endif // __CUDACC_RTC__")
	if i < 0 || j < i {
		t.Fatal("the prelude's NVRTC branch is not where the test expects it")
	}
	for _, line := range strings.Split(prelude[i:j], "\n")[1:] {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "//") && !strings.HasPrefix(l, "#pragma") &&
			!nvrtcVectorNames.MatchString(l) {
			t.Errorf("the NVRTC-only branch holds code that no test compiles: %q", l)
		}
	}
	for _, name := range []string{DefaultName, ""} {
		got, err := OpenCL("x", name)
		if err != nil || !strings.HasPrefix(got.Text, prelude) || !strings.HasSuffix(got.Text, "\n#line 1 \"kernel.cl\"\nx") {
			t.Errorf("OpenCL(%q) does not put the prelude and a #line naming kernel.cl before the source (%v)", name, err)
		}
	}
}

// nvrtcVectorNames matches the lines of the NVRTC-only branch that name CUDA 13's vector
// types of stated alignment for long4, ulong4 and double4.
var nvrtcVectorNames = regexp.MustCompile(`^(#if defined\(__CUDACC_VER_MAJOR__\) && __CUDACC_VER_MAJOR__ >= 13|#define (long4 long4|ulong4 ulong4|double4 double4)_32a|#endif)$`)

// ptxEntryRE finds a PTX entry's name and its parameter list.
var ptxEntryRE = regexp.MustCompile(`\.entry\s+([\w$%]+)\s*\(([^)]*)\)`)

// ptxParams returns the number of .param declarations of each .entry of a PTX text.
func ptxParams(ptx string) map[string]int {
	out := map[string]int{}
	for _, m := range ptxEntryRE.FindAllStringSubmatch(ptx, -1) {
		out[m[1]] = strings.Count(m[2], ".param")
	}
	return out
}

// TestPreludeFiles checks that the prelude is the files of prelude/, each once, in the
// order of preludeOrder, and that each part begins where the order says: part 1 in
// environment.cuh, part 2 in types.cuh, the include guard opened first and closed last.
func TestPreludeFiles(t *testing.T) {
	names, err := fs.Glob(preludeFS, "prelude/*.cuh")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, n := range names {
		files = append(files, path.Base(n))
	}
	if got, want := slices.Sorted(slices.Values(preludeOrder)), files; !slices.Equal(got, want) {
		t.Fatalf("preludeOrder lists %v; prelude/ holds %v", got, want)
	}
	var b strings.Builder
	text := map[string]string{}
	for _, n := range preludeOrder {
		s, err := preludeFS.ReadFile("prelude/" + n)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) == 0 || s[len(s)-1] != '\n' {
			t.Errorf("prelude/%s does not end with a newline", n)
		}
		text[n] = string(s)
		b.Write(s)
	}
	if Prelude() != b.String() {
		t.Error("Prelude() is not the concatenation of prelude/ in preludeOrder")
	}
	for _, c := range []struct{ file, want string }{
		{"dialect.cuh", "#ifndef PRISM_PRELUDE_CUH\n#define PRISM_PRELUDE_CUH\n"},
		{"environment.cuh", "// Part 1: what NVRTC provides"},
		{"environment.cuh", "#endif // __CUDACC_RTC__\n"},
		{"types.cuh", "// Part 2: OpenCL C in terms of CUDA"},
		{"names.cuh", "#endif // PRISM_PRELUDE_CUH\n"},
	} {
		if !strings.Contains(text[c.file], c.want) {
			t.Errorf("prelude/%s does not hold %q", c.file, c.want)
		}
	}
	if !strings.HasSuffix(Prelude(), "#endif // PRISM_PRELUDE_CUH\n") {
		t.Error("the prelude does not end with its include guard's #endif")
	}
}

// nvrtcBuiltins are the compiler built-ins that the prelude may call where NVRTC reads it:
// the ones NVRTC has compiled on a GPU (its front end does not know clang's whole list:
// __builtin_huge_valf, which clang-15 accepts, fails there with "identifier is undefined").
var nvrtcBuiltins = map[string]bool{"__builtin_memcpy": true, "__builtin_expect": true}

// nvrtcView returns the lines of text that NVRTC compiles: it drops the branches of
// `#ifndef __CUDACC_RTC__` (the part for clang without the CUDA headers) and keeps their
// `#else` branches, following #if nesting.
func nvrtcView(text string) string {
	type frame struct{ clangOnly, inElse bool }
	var stack []frame
	hidden := func() bool {
		for _, f := range stack {
			if f.clangOnly != f.inElse {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		d := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(d, "#if"):
			stack = append(stack, frame{clangOnly: strings.HasPrefix(d, "#ifndef __CUDACC_RTC__")})
			continue
		case strings.HasPrefix(d, "#else") && len(stack) > 0:
			stack[len(stack)-1].inElse = true
			continue
		case strings.HasPrefix(d, "#endif") && len(stack) > 0:
			stack = stack[:len(stack)-1]
			continue
		}
		if !hidden() {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestPreludeNVRTCBuiltins checks that the prelude NVRTC compiles calls no compiler
// built-in outside nvrtcBuiltins: clang's PTX checks here accept built-ins that NVRTC
// lacks, and one such call fails every translated kernel on a CUDA device.
func TestPreludeNVRTCBuiltins(t *testing.T) {
	view := nvrtcView(Prelude())
	if !strings.Contains(view, "prism_sg_lowest") || strings.Contains(view, "__float_as_uint(float x) { return __builtin_bit_cast") {
		t.Fatal("nvrtcView: the NVRTC view lost the subgroup functions or kept clang's part")
	}
	seen := map[string]int{}
	for _, m := range regexp.MustCompile(`__builtin_[A-Za-z0-9_]+`).FindAllString(view, -1) {
		seen[m]++
	}
	for name, n := range seen {
		if !nvrtcBuiltins[name] {
			t.Errorf("the prelude calls %s (%d times) where NVRTC compiles it, which NVRTC may not know: use CUDA's own functions (PRISM_INFINITY_F, __int_as_float)", name, n)
		}
	}
	// __int128 compiles on NVRTC only with -device-int128, which the backend does not give.
	if n := strings.Count(view, "__int128"); n > 0 {
		t.Errorf("the prelude uses __int128 (%d times) where NVRTC compiles it, which NVRTC refuses without -device-int128", n)
	}
	// The check can fail: a built-in clang has and NVRTC lacks.
	if got := nvrtcView("#ifndef __CUDACC_RTC__\nA\n#else\nB\n#endif\nC __builtin_huge_valf()"); got != "B\nC __builtin_huge_valf()\n" {
		t.Errorf("nvrtcView = %q", got)
	}
}
