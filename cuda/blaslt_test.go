package cuda

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
)

// The tests of cuBLASLt that need no GPU check the pure-Go parts: the column-major layouts
// of every transposition (against a reference of cublasLtMatmul's definition, which reads
// each operand through its layout alone), the refusals by type, layout and architecture,
// the type codes, the operands' alignment and the loader. TestBLASLtHeader and
// TestBLASLtGemm need the GPU machine.

// ltRef is cublasLtMatmul by its definition, column-major, in float64: D = alpha*op(A)*
// op(B) + beta*C in C's place, each operand read through its layout (element (i, j) of
// matrix z at z*stride + i + j*ld). It first checks what cuBLASLt checks of the layouts:
// op(A) m x k, op(B) k x n, C m x n, ld at least the rows.
func ltRef(g ltGemm, alpha, beta float64, a, b, c []float64) error {
	check := func(name string, l ltLayout, trans bool, rows, cols int) error {
		if trans {
			rows, cols = cols, rows
		}
		if l.rows != rows || l.cols != cols {
			return fmt.Errorf("layout of %s is %d x %d, want %d x %d", name, l.rows, l.cols, rows, cols)
		}
		if l.ld < max(1, l.rows) {
			return fmt.Errorf("ld of %s %d < %d rows", name, l.ld, l.rows)
		}
		return nil
	}
	if err := errors.Join(check("A", g.a, g.transA == cublasOpT, g.m, g.k), check("B", g.b, g.transB == cublasOpT, g.k, g.n),
		check("C", g.c, false, g.m, g.n)); err != nil {
		return err
	}
	at := func(x []float64, l ltLayout, z, i, j int) float64 { return x[z*int(l.stride)+i+j*l.ld] }
	for z := range g.batch {
		for j := range g.n {
			for i := range g.m {
				var acc float64
				for l := range g.k {
					var x, y float64
					if g.transA == cublasOpT {
						x = at(a, g.a, z, l, i)
					} else {
						x = at(a, g.a, z, i, l)
					}
					if g.transB == cublasOpT {
						y = at(b, g.b, z, j, l)
					} else {
						y = at(b, g.b, z, l, j)
					}
					acc += x * y
				}
				o := z*int(g.c.stride) + i + j*g.c.ld
				r := alpha * acc
				if beta != 0 {
					r += beta * c[o]
				}
				c[o] = r
			}
		}
	}
	return nil
}

// TestBLASLtMapping maps row-major GEMMs of every transposition, with wide leading
// dimensions, batches with gaps and dimensions of 1, to cuBLASLt's column-major form and
// runs that form through ltRef: the result must be Prism's row-major GEMM, exactly (small
// integers), and the layout of the call's A must be the buffer of B read by columns, its
// B the buffer of A.
func TestBLASLtMapping(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, base := range []engine.GemmSpec{
		{M: 1, N: 1, K: 1},
		{M: 17, N: 5, K: 3},
		{M: 1, N: 9, K: 4},
		{M: 6, N: 1, K: 255},
		{M: 5, N: 7, K: 3, LDA: 11, LDB: 12, LDC: 8},
		{M: 4, N: 6, K: 5, Batch: 3},
		{M: 4, N: 6, K: 5, Batch: 3, LDA: 7, LDB: 9, LDC: 10, StrideA: 50, StrideB: 80, StrideC: 45},
	} {
		for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			s := base
			s.TransA, s.TransB = tr[0], tr[1]
			if s.LDA != 0 {
				s.LDA, s.LDB = max(s.LDA, s.M, s.K), max(s.LDB, s.N, s.K)
			}
			d := s.WithDefaults()
			la, lb, lc := d.Lens()
			ints := func(n int) []float64 {
				v := make([]float64, n)
				for i := range v {
					v[i] = float64(r.IntN(9) - 4)
				}
				return v
			}
			a, b, c := ints(la), ints(lb), ints(lc)
			g := driver.MixedGemmArgs{GemmArgs: driver.GemmArgs{Type: driver.Float32, TransA: d.TransA, TransB: d.TransB,
				M: d.M, N: d.N, K: d.K, Alpha: 2, Beta: -0.5, LDA: d.LDA, LDB: d.LDB, LDC: d.LDC, Batch: d.Batch,
				StrideA: int64(d.StrideA), StrideB: int64(d.StrideB), StrideC: int64(d.StrideC)}, In: driver.BFloat16}
			lg, err := ltColumnMajor(g, 0x1000, 0x2000, 0x3000)
			if err != nil {
				t.Fatalf("%v: %v", s, err)
			}
			rowsA, colsA := d.StoredA()
			rowsB, colsB := d.StoredB()
			if lg.a != (ltLayout{typ: cudaR16BF, rows: colsB, cols: rowsB, ld: d.LDB, stride: int64(d.StrideB)}) ||
				lg.b != (ltLayout{typ: cudaR16BF, rows: colsA, cols: rowsA, ld: d.LDA, stride: int64(d.StrideA)}) ||
				lg.c != (ltLayout{typ: cudaR32F, rows: d.N, cols: d.M, ld: d.LDC, stride: int64(d.StrideC)}) {
				t.Errorf("%v: layouts A %+v, B %+v, C %+v: want B, A and C of the row-major call read by columns", s, lg.a, lg.b, lg.c)
			}
			if lg.compute != cublasCompute32F || lg.batch != d.Batch {
				t.Errorf("%v: compute %d, batch %d", s, lg.compute, lg.batch)
			}
			want, got := slices.Clone(c), slices.Clone(c)
			rowMajorGemm(g.GemmArgs, a, b, want)
			if err := ltRef(lg, g.Alpha, g.Beta, b, a, got); err != nil {
				t.Errorf("%v: cuBLASLt would refuse %v: %v", s, lg, err)
				continue
			}
			if !slices.Equal(got, want) {
				t.Errorf("%v: the column-major call %v computes\n%v\nwant\n%v", s, lg, got, want)
			}
		}
	}
}

// TestBLASLtCodes checks the type and arithmetic codes given to cuBLASLt and the
// alignment it is told of.
func TestBLASLtCodes(t *testing.T) {
	for typ, want := range map[driver.ElemType]int{driver.Float32: 0, driver.Float16: 2, driver.BFloat16: 14, driver.Float8E4M3: 28, driver.Float8E5M2: 29} {
		if got, ok := ltDataType(typ); !ok || got != want {
			t.Errorf("ltDataType(%v) = %d, %v; want %d", typ, got, ok, want)
		}
	}
	if _, ok := ltDataType(driver.Float64); ok {
		t.Error("ltDataType(float64) is offered")
	}
	g := driver.MixedGemmArgs{GemmArgs: driver.GemmArgs{Type: driver.Float32, M: 2, N: 2, K: 2, LDA: 2, LDB: 2, LDC: 2, Batch: 1}, In: driver.Float32, Compute: driver.ComputeTF32}
	if lg, _ := ltColumnMajor(g, 0, 0, 0); lg.compute != cublasCompute32FFastTF32 || lg.a.typ != cudaR32F {
		t.Errorf("tf32: compute %d, A of type %d; want 77 (CUBLAS_COMPUTE_32F_FAST_TF32), 0", lg.compute, lg.a.typ)
	}
	for _, c := range []struct {
		p    devptr
		want int
	}{{0x7f0000000000, 256}, {0x100, 256}, {0x1080, 128}, {0x1002, 2}, {0x1001, 1}} {
		if got := alignOf(c.p); got != c.want {
			t.Errorf("alignOf(%#x) = %d, want %d", c.p, got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		want int
	}{{"CUBLASLT_MATMUL_DESC_TRANSA", 3}, {"CUBLASLT_MATMUL_DESC_TRANSB", 4}, {"CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT", 5},
		{"CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET", 6}, {"CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES", 1},
		{"sizeof(cublasLtMatmulHeuristicResult_t)", 96}, {"offsetof(state)", 72}} {
		if got := blasLtDeclared()[c.name]; got != c.want {
			t.Errorf("%s = %d, want %d (CUDA 13.0's cublasLt.h)", c.name, got, c.want)
		}
	}
}

// TestBLASLtRefuse checks which GEMMs cuBLASLt is asked for and why the others are
// refused: by type, arithmetic, architecture, and float8's "TN" form before Blackwell.
func TestBLASLtRefuse(t *testing.T) {
	args := func(in driver.ElemType, compute driver.GemmCompute, ta, tb bool) driver.MixedGemmArgs {
		return driver.MixedGemmArgs{GemmArgs: driver.GemmArgs{Type: driver.Float32, TransA: ta, TransB: tb, M: 16, N: 16, K: 16}, In: in, Compute: compute}
	}
	f32, tf32 := driver.ComputeFloat32, driver.ComputeTF32
	for _, c := range []struct {
		name string
		g    driver.MixedGemmArgs
		cc   int
		msg  string // "" for none
	}{
		{"tf32 on sm_80", args(driver.Float32, tf32, true, true), 80, ""},
		{"float16 on sm_75", args(driver.Float16, f32, false, false), 75, ""},
		{"bfloat16 on sm_90, tn", args(driver.BFloat16, f32, true, false), 90, ""},
		{"e4m3 nt on sm_90", args(driver.Float8E4M3, f32, false, true), 90, ""},
		{"e4m3 nt on sm_89", args(driver.Float8E4M3, f32, false, true), 89, ""},
		{"e4m3 nn on sm_100", args(driver.Float8E4M3, f32, false, false), 100, ""},
		{"e4m3 nn on sm_90", args(driver.Float8E4M3, f32, false, false), 90,
			`float8e4m3 GEMM on sm_90 takes A as stored (M x K) and B transposed (stored N x K) only, the "TN" form of its column-major API; this GEMM is nn (A stored M x K, B stored K x N)`},
		{"e4m3 tn on sm_90", args(driver.Float8E4M3, f32, true, false), 90, "this GEMM is tn (A stored K x M, B stored K x N)"},
		{"e4m3 tt on sm_89", args(driver.Float8E4M3, f32, true, true), 89, "this GEMM is tt (A stored K x M, B stored N x K)"},
		{"e5m2 nt on sm_90", args(driver.Float8E5M2, f32, false, true), 90, "float8e5m2 times float8e5m2 is not offered"},
		{"e5m2 on sm_100", args(driver.Float8E5M2, f32, false, true), 100, "float8e5m2 times float8e5m2 is not offered"},
		{"e4m3 on sm_86", args(driver.Float8E4M3, f32, false, true), 86, "float8e4m3 GEMM needs compute capability 8.9 or newer; the device is 8.6"},
		{"bfloat16 on sm_75", args(driver.BFloat16, f32, false, false), 75, "bfloat16 GEMM needs compute capability 8.0 or newer; the device is 7.5"},
		{"tf32 on sm_75", args(driver.Float32, tf32, false, false), 75, "tf32 GEMM needs compute capability 8.0"},
		{"float32 arithmetic of float32", args(driver.Float32, f32, false, false), 90, "float32 inputs are multiplied as tf32 only"},
		{"tf32 arithmetic of float16", args(driver.Float16, tf32, false, false), 90, "float16 inputs are multiplied as stored, not as tf32"},
		{"float64 inputs", args(driver.Float64, f32, false, false), 90, "no GEMM of float64 inputs"},
		{"float16 C", driver.MixedGemmArgs{GemmArgs: driver.GemmArgs{Type: driver.Float64}, In: driver.Float16}, 90, "C of float64"},
	} {
		err := ltRefuse(c.g, c.cc)
		switch {
		case c.msg == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.msg != "" && (!errors.Is(err, engine.ErrUnsupported) || !strings.Contains(fmt.Sprint(err), c.msg) || !strings.HasPrefix(fmt.Sprint(err), "cuda: cuBLASLt: ")):
			t.Errorf("%s: %v; want ErrUnsupported saying %q", c.name, err, c.msg)
		}
	}
}

// TestBLASLtLoader checks cuBLASLt's loader: on a machine without the library (this
// repository's CI) the error wraps ErrUnavailable and names every file tried, those of
// PRISM_VENDOR_PATH first, and a later call tries again; where the library is installed
// (the GPU machine), it loads and reports its name, version and file.
func TestBLASLtLoader(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(driver.VendorPathEnv, dir)
	lib, err := loadBLASLt()
	if err == nil {
		t.Logf("cuBLASLt is installed: %v", lib)
		if lib.Name != "cuBLASLt" || !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(lib.Version) || !filepath.IsAbs(lib.Path) ||
			!strings.Contains(filepath.Base(lib.Path), "libcublasLt.so") {
			t.Errorf("Library = %+v: want cuBLASLt, a version major.minor.patch, the absolute path of libcublasLt.so", lib)
		}
		return
	}
	if !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("loadBLASLt = %v, want ErrUnavailable", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"cuda: cannot load cuBLASLt", filepath.Join(dir, "libcublasLt.so.13"), filepath.Join(dir, "libcublasLt.so.11"),
		"libcublasLt.so.13: cannot open shared object file", "libcublasLt.so.12", "libcublasLt.so.11", driver.VendorPathEnv,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not name %q: %v", want, err)
		}
	}
	if strings.Index(msg, filepath.Join(dir, "libcublasLt.so.13")) > strings.Index(msg, "; ") {
		t.Errorf("PRISM_VENDOR_PATH is not tried first: %v", err)
	}
	blasLtState.mu.Lock()
	loaded := blasLtState.lib != nil
	blasLtState.mu.Unlock()
	if loaded {
		t.Error("a failed load is remembered as loaded")
	}
	t.Log(err)
}

// TestBLASLtHeader (GPU machine) compiles a program against the installed cublasLt.h
// with the system's C compiler and compares every number blaslt.go declares by hand with
// the header's, and the prototypes it calls the functions with with the header's (a
// mismatch fails a static assertion: nothing is linked). It skips where no header or no compiler is found, unless PRISM_REQUIRE
// names cublaslt.
func TestBLASLtHeader(t *testing.T) {
	var inc string
	for _, d := range cudaLibDirs() {
		for _, cand := range []string{filepath.Join(filepath.Dir(d), "include"), filepath.Join(filepath.Dir(d), "targets", "x86_64-linux", "include")} {
			if _, err := os.Stat(filepath.Join(cand, "cublasLt.h")); err == nil && inc == "" {
				inc = cand
			}
		}
	}
	cc, ccErr := exec.LookPath("cc")
	if inc == "" || ccErr != nil {
		why := fmt.Sprintf("no cublasLt.h under %q or no C compiler (%v)", cudaLibDirs(), ccErr)
		if enginetest.Required("cublaslt") {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	decl := blasLtDeclared()
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <cublasLt.h>\n")
	// The prototypes blaslt.go casts its functions to, with the header's types: a
	// difference is an error (-Werror).
	src.WriteString(`
#define SAME(f, type) _Static_assert(__builtin_types_compatible_p(__typeof__(&f), type), #f " is not " #type);
SAME(cublasLtCreate, cublasStatus_t (*)(cublasLtHandle_t *))
SAME(cublasLtDestroy, cublasStatus_t (*)(cublasLtHandle_t))
SAME(cublasLtGetVersion, size_t (*)(void))
SAME(cublasLtMatmulDescCreate, cublasStatus_t (*)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t))
SAME(cublasLtMatmulDescSetAttribute, cublasStatus_t (*)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *, size_t))
SAME(cublasLtMatmulDescDestroy, cublasStatus_t (*)(cublasLtMatmulDesc_t))
SAME(cublasLtMatrixLayoutCreate, cublasStatus_t (*)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t, int64_t))
SAME(cublasLtMatrixLayoutSetAttribute, cublasStatus_t (*)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, const void *, size_t))
SAME(cublasLtMatrixLayoutDestroy, cublasStatus_t (*)(cublasLtMatrixLayout_t))
SAME(cublasLtMatmulPreferenceCreate, cublasStatus_t (*)(cublasLtMatmulPreference_t *))
SAME(cublasLtMatmulPreferenceSetAttribute, cublasStatus_t (*)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void *, size_t))
SAME(cublasLtMatmulPreferenceDestroy, cublasStatus_t (*)(cublasLtMatmulPreference_t))
SAME(cublasLtMatmulAlgoGetHeuristic, cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
	cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t *, int *))
SAME(cublasLtMatmul, cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *, cublasLtMatrixLayout_t, const void *,
	cublasLtMatrixLayout_t, const void *, const void *, cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
	const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t))
int main(void) {
`)
	var names []string
	for n := range decl {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		expr := n
		switch {
		case strings.HasPrefix(n, "offsetof("):
			expr = "offsetof(cublasLtMatmulHeuristicResult_t, " + strings.TrimSuffix(strings.TrimPrefix(n, "offsetof("), ")") + ")"
		}
		fmt.Fprintf(&src, "\tprintf(\"%s=%%d\\n\", (int)(%s));\n", n, expr)
	}
	src.WriteString("\treturn 0;\n}\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "probe.c"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(cc, "-std=c11", "-Werror", "-I"+inc, "-o", filepath.Join(dir, "probe"), filepath.Join(dir, "probe.c")).CombinedOutput()
	if err != nil {
		t.Fatalf("the declarations do not match %s/cublasLt.h: %v\n%s", inc, err, out)
	}
	out, err = exec.Command(filepath.Join(dir, "probe")).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		got[k], _ = strconv.Atoi(v)
	}
	for _, n := range names {
		if g, ok := got[n]; !ok || g != decl[n] {
			t.Errorf("%s: blaslt.go declares %d, %s/cublasLt.h says %d", n, decl[n], inc, g)
		}
	}
	t.Logf("%d numbers and 14 prototypes agree with %s", len(names), inc)
}

// ltCase is one GEMM of TestBLASLtGemm.
type ltCase struct {
	spec engine.GemmSpec
}

// TestBLASLtGemm (GPU) runs cuBLASLt's GEMM through engine.GemmMixed for every input type,
// on every transposition, at sizes that are no multiple of a tile (1, 17, 255 beside 128),
// with wide leading dimensions and a batch with gaps, and checks each element against a
// float64 reference: |D - ref| <= (2 u_in + (K+2) u_acc) * sum|alpha a b| + |beta c| +
// 2^-100, u_in = 2^-10 for tf32 (rounded or truncated, whichever cuBLASLt does) and 0 for
// the others (products exact in float32), u_acc = 2^-23, 2^-13 for float8 (Hopper's fp8
// accumulation, see kernels/gemm's precisions). Combinations cuBLASLt refuses must say
// why; with beta 0 a NaN in C must not reach D. PRISM_REQUIRE=cublaslt (or blas, cublas)
// makes a missing library a failure.
func TestBLASLtGemm(t *testing.T) {
	enginetest.ForEachDevice(t, "cuda", func(t *testing.T, dev *engine.Device) {
		b, err := dev.BLAS()
		if err == nil {
			var lib engine.Library
			lib, err = b.MixedLibrary()
			t.Logf("%s: %v", dev.ID(), lib)
		}
		if err != nil && enginetest.Required("cublaslt") {
			t.Fatalf("PRISM_REQUIRE names cublaslt: %v", err)
		}
		enginetest.RequireVendorOrSkip(t, dev, "blas", err)
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		cc := dev.Info().ComputeCapability
		var cases []ltCase
		for _, n := range []int{1, 17, 128, 255} {
			for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
				cases = append(cases, ltCase{spec: engine.GemmSpec{TransA: tr[0], TransB: tr[1], M: n, N: n, K: n}})
			}
		}
		for _, tr := range [][2]bool{{false, false}, {false, true}, {true, true}} {
			cases = append(cases,
				ltCase{spec: engine.GemmSpec{TransA: tr[0], TransB: tr[1], M: 33, N: 130, K: 72, LDA: 144, LDB: 160, LDC: 136}},
				ltCase{spec: engine.GemmSpec{TransA: tr[0], TransB: tr[1], M: 64, N: 48, K: 32, Batch: 3, StrideA: 64*32 + 256, StrideB: 48*32 + 512, StrideC: 64*48 + 128}})
		}
		ran := map[string]int{}
		t.Run("tf32", func(t *testing.T) {
			ran["tf32"] = ltCheck[float32](t, b, q, cases, engine.ComputeTF32, 0x1p-10, 0x1p-23, cc)
		})
		t.Run("float16", func(t *testing.T) {
			ran["float16"] = ltCheck[engine.Half](t, b, q, cases, engine.ComputeFloat32, 0, 0x1p-23, cc)
		})
		t.Run("bfloat16", func(t *testing.T) {
			ran["bfloat16"] = ltCheck[engine.BFloat16](t, b, q, cases, engine.ComputeFloat32, 0, 0x1p-23, cc)
		})
		t.Run("float8e4m3", func(t *testing.T) {
			ran["float8e4m3"] = ltCheck[engine.Float8E4M3](t, b, q, cases, engine.ComputeFloat32, 0, 0x1p-13, cc)
		})
		t.Run("float8e5m2", func(t *testing.T) {
			if n := ltCheck[engine.Float8E5M2](t, b, q, cases[:1], engine.ComputeFloat32, 0, 0x1p-13, cc); n != 0 {
				t.Errorf("float8e5m2 x float8e5m2 ran %d GEMMs; cuBLASLt offers none", n)
			}
		})
		t.Logf("GEMMs verified: %v of %d cases each", ran, len(cases))
		for _, p := range []string{"tf32", "float16", "bfloat16"} {
			if ran[p] != len(cases) {
				t.Errorf("%s: %d of %d cases ran; cuBLASLt refused the others", p, ran[p], len(cases))
			}
		}
		if cc >= 89 && ran["float8e4m3"] == 0 {
			t.Error("float8e4m3: no case ran on a GPU with fp8")
		}
		ltTF32Rounding(t, b, q)
	})
}

// ltCheck runs every case with inputs of type In and returns how many verified; a case
// refused must wrap ErrUnsupported, and is fine only for float8 (its layout and alignment
// rules) and E5M2.
func ltCheck[In engine.GemmInput](t *testing.T, b *engine.BLAS, q *engine.Queue, cases []ltCase, compute engine.GemmCompute, uIn, uAcc float64, cc int) int {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(17, 29))
	ran := 0
	var zero In
	fp8 := engine.SizeOf[In]() == 1
	for _, c := range cases {
		s := c.spec.WithDefaults()
		la, lb, lc := s.Lens()
		a, b64 := ltRandom[In](r, la), ltRandom[In](r, lb)
		cv := make([]float32, lc)
		for i := range cv {
			cv[i] = float32(r.Float64()*2 - 1)
		}
		for _, ab := range [][2]float32{{1.5, -0.75}, {1, 0}} {
			cIn := slices.Clone(cv)
			if ab[1] == 0 {
				for i := range cIn {
					cIn[i] = float32(math.NaN())
				}
			}
			da, _ := engine.Upload(ctx, q, a)
			db, _ := engine.Upload(ctx, q, b64)
			dc, err := engine.Upload(ctx, q, cIn)
			if err != nil {
				t.Fatal(err)
			}
			err = engine.GemmMixed(b, q, s, compute, ab[0], da, db, ab[1], dc)
			if err != nil {
				da.Close()
				db.Close()
				dc.Close()
				if errors.Is(err, engine.ErrUnsupported) && (fp8 || any(zero) == any(engine.Float8E5M2(0))) {
					t.Logf("%v: refused: %v", s, err)
					break
				}
				t.Fatalf("%v: %v", s, err)
			}
			got, err := dc.Download(ctx, q)
			da.Close()
			db.Close()
			dc.Close()
			if err != nil {
				t.Fatal(err)
			}
			fa, fb := ltWiden(a), ltWiden(b64)
			want, mag := make([]float64, lc), make([]float64, lc)
			for i := range want {
				want[i] = float64(cv[i])
			}
			g := driver.GemmArgs{TransA: s.TransA, TransB: s.TransB, M: s.M, N: s.N, K: s.K, Alpha: float64(ab[0]), Beta: float64(ab[1]),
				LDA: s.LDA, LDB: s.LDB, LDC: s.LDC, Batch: s.Batch, StrideA: int64(s.StrideA), StrideB: int64(s.StrideB), StrideC: int64(s.StrideC)}
			rowMajorGemm(g, fa, fb, want)
			abs := func(x []float64) []float64 {
				out := make([]float64, len(x))
				for i, v := range x {
					out[i] = math.Abs(v)
				}
				return out
			}
			for i := range mag {
				mag[i] = math.Abs(float64(cv[i]))
			}
			ga := g
			ga.Alpha, ga.Beta = math.Abs(g.Alpha), math.Abs(g.Beta)
			rowMajorGemm(ga, abs(fa), abs(fb), mag)
			bad := 0
			for z := range s.Batch {
				for i := range s.M {
					for j := range s.N {
						o := z*s.StrideC + i*s.LDC + j
						tol := (2*uIn+float64(s.K+2)*uAcc)*mag[o] + 0x1p-100
						if d := math.Abs(float64(got[o]) - want[o]); !(d <= tol) && bad < 3 {
							bad++
							t.Errorf("%v alpha %v beta %v: D[%d][%d][%d] = %v, want %v (|diff| %.3g > %.3g)", s, ab[0], ab[1], z, i, j, got[o], want[o], d, tol)
						}
					}
				}
			}
			// Between the matrices of C (a batch with gaps) and past each row, C is untouched.
			for o := range got {
				if inC(s, o) {
					continue
				}
				if g := got[o]; g != cIn[o] && !(math.IsNaN(float64(g)) && math.IsNaN(float64(cIn[o]))) {
					t.Errorf("%v: element %d outside C changed from %v to %v", s, o, cIn[o], g)
					break
				}
			}
			if ab[1] != 0 {
				ran++
			}
		}
	}
	return ran
}

// inC reports whether element o of C's buffer belongs to the product.
func inC(s engine.GemmSpec, o int) bool {
	z := o / s.StrideC
	rest := o - z*s.StrideC
	return z < s.Batch && rest/s.LDC < s.M && rest%s.LDC < s.N
}

// ltRandom returns n values of [-1, 1) in In.
func ltRandom[In engine.GemmInput](r *rand.Rand, n int) []In {
	out := make([]In, n)
	for i := range out {
		x := r.Float64()*2 - 1
		switch p := any(&out[i]).(type) {
		case *float32:
			*p = float32(x)
		case *engine.Half:
			*p = engine.HalfFromFloat64(x)
		case *engine.BFloat16:
			*p = engine.BFloat16FromFloat64(x)
		case *engine.Float8E4M3:
			*p = engine.Float8E4M3FromFloat64(x)
		case *engine.Float8E5M2:
			*p = engine.Float8E5M2FromFloat64(x)
		}
	}
	return out
}

// ltWiden returns the values of x in float64, exactly.
func ltWiden[In engine.GemmInput](x []In) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		switch v := any(x[i]).(type) {
		case float32:
			out[i] = float64(v)
		case engine.Half:
			out[i] = v.Float64()
		case engine.BFloat16:
			out[i] = v.Float64()
		case engine.Float8E4M3:
			out[i] = v.Float64()
		case engine.Float8E5M2:
			out[i] = v.Float64()
		}
	}
	return out
}

// ltTF32Rounding logs how cuBLASLt's tf32 GEMM takes a float32 input between two tf32
// values (1 + 3*2^-12: rounded to nearest it is 1 + 2^-10, truncated 1), at 1 x 1 x 1 and
// at 128 x 128 x 128 (A all x, B the identity), the fact the tf32 tolerance of
// kernels/gemm rests on.
func ltTF32Rounding(t *testing.T, b *engine.BLAS, q *engine.Queue) {
	ctx := context.Background()
	x := float32(1 + 3*0x1p-12)
	for _, n := range []int{1, 128} {
		av, bv := make([]float32, n*n), make([]float32, n*n)
		for i := range av {
			av[i] = x
		}
		for i := range n {
			bv[i*n+i] = 1
		}
		a, _ := engine.Upload(ctx, q, av)
		bm, _ := engine.Upload(ctx, q, bv)
		c, _ := engine.NewBuffer[float32](q.Device(), n*n)
		err := engine.GemmMixed(b, q, engine.GemmSpec{M: n, N: n, K: n}, engine.ComputeTF32, 1, a, bm, 0, c)
		var got []float32
		if err == nil {
			got, err = c.Download(ctx, q)
		}
		a.Close()
		bm.Close()
		c.Close()
		if err != nil {
			t.Errorf("tf32 %d x %d x %d: %v", n, n, n, err)
			return
		}
		how := map[float32]string{1 + 0x1p-10: "rounds to nearest", 1: "truncates", x: "keeps float32 (no tf32 rounding)"}[got[n*n-1]]
		t.Logf("cuBLASLt tf32 at %d x %d x %d: (1 + 3*2^-12) * 1 = %v: it %s", n, n, n, got[n*n-1], how)
	}
}
