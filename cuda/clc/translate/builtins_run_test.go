package translate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/prism-compute/prism/cl" // registers the "opencl" backend, for PoCL
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
)

// genHostDefs defines, for the generated test's CPU run, what the CUDA toolkit would: the
// fast intrinsics of native_* (as the full functions: the test checks that native_* calls
// the right function), CUDA's atomics (one work-item: plain read-modify-writes) and
// __isShared (the host shim places __shared__ variables in the section prism_shared). It
// comes after the prelude, whose macros it avoids with parentheses.
const genHostDefs = `
float __expf(float x) throw() { return (expf)(x); }
float __exp10f(float x) throw() { return (exp10f)(x); }
float __logf(float x) throw() { return (logf)(x); }
float __log2f(float x) throw() { return (log2f)(x); }
float __log10f(float x) throw() { return (log10f)(x); }
float __powf(float x, float y) throw() { return (powf)(x, y); }
float __sinf(float x) throw() { return (sinf)(x); }
float __cosf(float x) throw() { return (cosf)(x); }
float __tanf(float x) throw() { return (tanf)(x); }
template <class T> T atomicAdd(T *p, T v) { T o = *p; *p = (T)(o + v); return o; }
template <class T> T atomicSub(T *p, T v) { T o = *p; *p = (T)(o - v); return o; }
template <class T> T atomicExch(T *p, T v) { T o = *p; *p = v; return o; }
template <class T> T atomicCAS(T *p, T c, T v) { T o = *p; if (o == c) *p = v; return o; }
template <class T> T atomicMin(T *p, T v) { T o = *p; if (v < o) *p = v; return o; }
template <class T> T atomicMax(T *p, T v) { T o = *p; if (v > o) *p = v; return o; }
template <class T> T atomicAnd(T *p, T v) { T o = *p; *p = (T)(o & v); return o; }
template <class T> T atomicOr(T *p, T v) { T o = *p; *p = (T)(o | v); return o; }
template <class T> T atomicXor(T *p, T v) { T o = *p; *p = (T)(o ^ v); return o; }
extern "C" char __start_prism_shared[], __stop_prism_shared[];
unsigned int __isShared(const void *p) { return (const char *)p >= __start_prism_shared && (const char *)p < __stop_prism_shared; }
`

// hostRun names the CPU run through the translation.
const hostRun = "the CPU through the translation"

// runGenOnHost translates the generated program and runs its kernel once on the CPU (one
// work-item), returning out's elements and the lines the program printed itself.
func runGenOnHost(t *testing.T, g *genProgram) ([]uint64, []string) {
	t.Helper()
	clang := clangPath(t)
	src, err := Source(g.src, "builtins_gen.cl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file, exe := filepath.Join(dir, "gen.cc"), filepath.Join(dir, "gen")
	var calls strings.Builder
	for _, k := range g.kernels {
		fmt.Fprintf(&calls, "    %s(prism_out, prism_scratch);\n", k)
	}
	main := fmt.Sprintf(`
static ulong prism_out[%d], prism_scratch[1024];
int main() {
%s
    for (int i = 0; i < %d; i++) printf("=%%llx\n", (unsigned long long)prism_out[i]);
    return 0;
}
`, len(g.slots), calls.String(), len(g.slots))
	text := hostPrelude(t) + builtinsHostDefs + genHostDefs + "#line 1 \"builtins_gen.cl\"\n" + src + main
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-x", "c++", "-std=c++17", "-O0", "-w", "-o", exe, file, "-lm"}
	if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, firstLines(string(out), 40))
	}
	out, err := exec.Command(exe).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, firstLines(string(out), 20))
	}
	var vals []uint64
	var printed []string
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if hex, ok := strings.CutPrefix(line, "="); ok {
			v, err := strconv.ParseUint(hex, 16, 64)
			if err != nil {
				t.Fatalf("the host run printed %q", line)
			}
			vals = append(vals, v)
		} else {
			printed = append(printed, line)
		}
	}
	return vals, printed
}

// runGenOnDevice builds the generated program, unchanged, on a device through the engine
// (OpenCL C as it is on an OpenCL device; through the translation and NVRTC on a CUDA
// one) and runs its kernels once each (one work-item).
func runGenOnDevice(t *testing.T, g *genProgram, id string) genRun {
	t.Helper()
	ctx := context.Background()
	dev, err := engine.Open(ctx, id)
	if err != nil {
		backend, _, _ := strings.Cut(id, ":")
		enginetest.RequireOrSkip(t, backend, err)
		if errors.Is(err, engine.ErrNotFound) {
			t.Skipf("no device %s: %v", id, err)
		}
		t.Fatal(err)
	}
	defer dev.Close()
	prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectOpenCL, Text: g.src, Name: "builtins_gen.cl"})
	if err != nil {
		t.Fatalf("the generated program on %s: %v", id, err)
	}
	defer prog.Close()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	out, err := engine.NewBuffer[uint64](dev, len(g.slots))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	scratch, err := engine.NewBuffer[uint64](dev, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer scratch.Close()
	// Each kernel is waited for before the next starts, so that a fault (which ends a CUDA
	// context) is charged to the kernel that made it, with the calls it holds.
	for i, name := range g.kernels {
		k, err := prog.Kernel(name)
		if err == nil {
			err = q.Launch(k, engine.Range1D(1, 1), out, scratch)
		}
		if err == nil {
			err = q.Finish(ctx)
		}
		if err != nil {
			t.Fatalf("%s on %s: %v\n%s", name, id, err, g.kernelCalls(i))
		}
	}
	got, err := out.Download(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	return genRun{name: id, platform: dev.Info().Platform, vals: got}
}

// preludeCallRE finds a call of a prelude function (a C++-mangled prism_ name) in LLVM IR.
var preludeCallRE = regexp.MustCompile(`\bcall [^@\n]*@(_Z\d+prism_[A-Za-z0-9_]+)\(`)

// TestBuiltinsGenerated calls every supported row of builtins.tsv at every type and width it
// lists (genBuiltins) and checks each result component against its Go reference (reference,
// with the tolerances of builtins_ref_test.go): on the CPU through the translation, and
// with the same OpenCL C on PoCL (opencl:0:0) through the engine; where there is no Go
// reference the two runs must agree. The program also compiles through the translation as
// NVRTC gets it, to LLVM IR for the NVPTX target (TestPreludeKernels takes the suite's
// kernels on to PTX; the PTX of this program took 21 s more, and TestBuiltinsGeneratedGPU
// builds it with NVRTC).
func TestBuiltinsGenerated(t *testing.T) {
	clangPath(t) // the CPU run through the translation is its reference: skip without clang
	start := time.Now()
	g, err := genBuiltins(builtins())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range builtins() {
		if b.state == "supported" && b.section != "2.0+" && g.rows[b.name] == 0 {
			t.Errorf("builtins.tsv: %s is supported, and the generated program does not call it", b.name)
		}
	}
	t.Logf("generated %d calls of %d rows, %d output components (%d lines of OpenCL C)", sum(g.rows), len(g.rows), len(g.slots), strings.Count(g.src, "\n"))
	var runs []genRun
	var mu sync.Mutex
	add := func(r genRun) {
		mu.Lock()
		defer mu.Unlock()
		if r.name == hostRun {
			runs = append([]genRun{r}, runs...)
		} else {
			runs = append(runs, r)
		}
	}
	// The three runs, in parallel; a run that fails or skips leaves no result.
	t.Run("runs", func(t *testing.T) {
		t.Run("host", func(t *testing.T) {
			t.Parallel()
			begin := time.Now()
			vals, printed := runGenOnHost(t, g)
			t.Logf("the CPU run through the translation: %v", time.Since(begin).Round(time.Millisecond))
			if want := "builtins printf 7 1.500 text c 1.2e+04 ff"; len(printed) != 1 || printed[0] != want {
				t.Errorf("printf printed %q, want %q", printed, want)
			}
			add(genRun{name: hostRun, vals: vals})
		})
		t.Run("opencl", func(t *testing.T) {
			t.Parallel()
			begin := time.Now()
			r := runGenOnDevice(t, g, "opencl:0:0")
			t.Logf("the run on opencl:0:0: %v", time.Since(begin).Round(time.Millisecond))
			add(r)
		})
		t.Run("ir", func(t *testing.T) {
			t.Parallel()
			begin := time.Now()
			ir, err := clangCUDA(t, clangPath(t), "builtins_gen", nvrtcText(g.src, "builtins_gen.cl"), []string{"-emit-llvm"})
			if err != nil {
				t.Fatalf("the generated program does not compile through the translation:\n%v", firstLines(err.Error(), 40))
			}
			// One pass over the lines (tens of megabytes): the functions defined, and every
			// prelude function inlines: a call left is a recursive one, whose stack NVRTC
			// cannot size (rootn's overflowed it on an H200: CUDA_ERROR_ILLEGAL_ADDRESS).
			defined, called := map[string]bool{}, map[string]int{}
			for line := range strings.Lines(ir) {
				if rest, ok := strings.CutPrefix(line, "define "); ok {
					if _, name, ok := strings.Cut(rest, "@"); ok {
						name, _, _ = strings.Cut(name, "(")
						defined[name] = true
					}
				} else if strings.Contains(line, "prism_") {
					for _, m := range preludeCallRE.FindAllStringSubmatch(line, -1) {
						called[m[1]]++
					}
				}
			}
			for _, k := range g.kernels {
				if !defined[k] {
					t.Errorf("the IR defines no kernel %s", k)
				}
			}
			for name, n := range called {
				t.Errorf("the IR calls the prelude's %s %d times instead of inlining it (a recursive function?)", name, n)
			}
			t.Logf("LLVM IR through the translation: %v", time.Since(begin).Round(time.Millisecond))
		})
	})
	if len(runs) == 0 || runs[0].name != hostRun {
		t.Fatal("the CPU run through the translation gave no result")
	}
	refs, noRef := checkGenRuns(t, g, runs)
	t.Logf("%d output components checked against Go references, %d (no reference) only between the runs; %v in all", refs, noRef, time.Since(start).Round(time.Millisecond))
}

// genRun is one run of the generated program: where it ran, and out's elements.
type genRun struct {
	name     string
	platform string // the OpenCL platform that ran it; "" for the translation
	vals     []uint64
}

// checkGenRuns checks every run's output components against their Go references (with the
// tolerances of builtins_ref_test.go), and where there is none against the first run's. It
// returns how many components had a reference and how many had none.
func checkGenRuns(t *testing.T, g *genProgram, runs []genRun) (refs, noRef int) {
	t.Helper()
	failures, deviations := map[string]int{}, map[string]int{}
	for i, s := range g.slots {
		want, tol, ok := reference(s)
		if ok {
			refs++
		} else {
			noRef++
		}
		var first num
		for j, r := range runs {
			if len(r.vals) != len(g.slots) {
				t.Fatalf("%s gave %d values, want %d", r.name, len(r.vals), len(g.slots))
			}
			got := s.otyp.decode(r.vals[i])
			var why string
			if ok {
				why = check(got, want, tol, s.otyp)
			} else if j == 0 {
				first = got
			} else {
				why = check(got, first, tolerance{ulp: 2, rel: 1e-6}, s.otyp)
				if why != "" {
					why += " (of " + runs[0].name + ")"
				}
			}
			if why != "" && ok {
				if d := driverDeviation(r.platform, s, got, want); d != "" {
					deviations[r.name+": "+d]++
					continue
				}
			}
			if why != "" {
				key := r.name + " " + s.row.name
				if failures[key]++; failures[key] <= 3 {
					t.Errorf("%s: %s lane %d, inputs %s: %s", r.name, s.note, s.lane, fmtArgs(s.args), why)
				}
			}
		}
	}
	for key, n := range failures {
		if n > 3 {
			t.Errorf("%s: %d failures in all", key, n)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(deviations)) {
		t.Logf("%s: %d results differ from the reference, a known defect of that driver (docs/BUILTINS.md); the translation has them right", d, deviations[d])
	}
	return refs, noRef
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func fmtArgs(args []num) string {
	var s []string
	for i, a := range args {
		if i == 8 {
			s = append(s, "...")
			break
		}
		if a.i != nil {
			s = append(s, a.i.String())
		} else {
			s = append(s, strconv.FormatFloat(a.f, 'g', -1, 64))
		}
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// driverDeviations are defects of OpenCL drivers that the generated program meets: results
// the specification fixes and the driver gets wrong, each matched narrowly (the function,
// the output, and the wrong value the defect gives). A result one explains is counted and
// logged, not failed, on that driver's runs alone: the translation is held to the reference
// everywhere. docs/BUILTINS.md lists them.
var driverDeviations = []struct {
	platform string // the OpenCL platform, as its devices report it
	what     string
	explains func(s genSlot, got, want num) bool
}{
	{"Portable Computing Language", "vector abs and abs_diff are wrong (0, or another value) where the result is 2^(bits-1) or more",
		func(s genSlot, got, want num) bool {
			return (s.row.name == "abs" || s.row.name == "abs_diff") && s.width > 1 && want.i != nil &&
				want.i.Cmp(new(big.Int).Lsh(big.NewInt(1), uint(s.typ.bits-1))) >= 0
		}},
	{"NVIDIA CUDA", "lgamma_r's sign (its second result) is not the sign of gamma(x)",
		func(s genSlot, got, want num) bool {
			return s.row.name == "lgamma_r" && s.out == 1 && got.i != nil && got.i.IsInt64() && got.i.Int64() >= -1 && got.i.Int64() <= 1
		}},
	{"NVIDIA CUDA", "mad_hi(a, b, c) drops c where c is the type's minimum",
		func(s genSlot, got, want num) bool {
			if s.row.name != "mad_hi" || got.i == nil || len(s.args) != 3 || s.args[2].i == nil {
				return false
			}
			lo, _ := s.typ.limits()
			return s.args[2].i.Cmp(lo) == 0 && s.typ.wrap(new(big.Int).Sub(want.i, lo)).i.Cmp(got.i) == 0
		}},
	{"NVIDIA CUDA", "smoothstep on double is computed in single precision (off by up to about 1e-7 relative; the reference holds it to 1e-14)",
		func(s genSlot, got, want num) bool {
			return s.row.name == "smoothstep" && s.typ.name == "double" && math.Abs(got.f-want.f) <= 3e-7*math.Abs(want.f)+1e-12
		}},
	{"NVIDIA CUDA", "mad_sat on long wraps where a*b+c is out of range",
		func(s genSlot, got, want num) bool {
			if s.row.name != "mad_sat" || s.typ.bits != 64 || got.i == nil || len(s.args) != 3 {
				return false
			}
			exact := new(big.Int).Add(new(big.Int).Mul(s.args[0].i, s.args[1].i), s.args[2].i)
			return s.typ.sat(exact).i.Cmp(exact) != 0 && s.typ.wrap(exact).i.Cmp(got.i) == 0
		}},
}

// driverDeviation names the known defect of the driver of platform that explains got for
// slot s (wanted want), or "" where none does.
func driverDeviation(platform string, s genSlot, got, want num) string {
	for _, d := range driverDeviations {
		if platform == d.platform && d.explains(s, got, want) {
			return d.platform + ": " + d.what
		}
	}
	return ""
}

// kernelCalls lists the calls of kernel i of g, one line per distinct call, in order.
func (g *genProgram) kernelCalls(i int) string {
	end := len(g.slots)
	if i+1 < len(g.firstSlot) {
		end = g.firstSlot[i+1]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "its calls (slots %d to %d):", g.firstSlot[i], end-1)
	last := ""
	for _, sl := range g.slots[g.firstSlot[i]:end] {
		if sl.note != last {
			b.WriteString("\n  " + sl.note)
			last = sl.note
		}
	}
	return b.String()
}
