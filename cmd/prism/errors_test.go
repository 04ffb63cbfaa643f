package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/platform"
)

// sentinels are the texts of the errors that messages end with.
var sentinels = []error{engine.ErrUnavailable, engine.ErrNotFound, engine.ErrClosed, engine.ErrInvalidArg,
	engine.ErrOutOfMemory, engine.ErrUnsupported, engine.ErrBuild, bench.ErrVerify, platform.ErrNoDevice}

// repeats returns the layers an error message ("a: b: c") names more than once: a package
// prefix ("bench", "kernels": a part that is a lowercase identifier) or a sentinel's text
// that two layers both added.
func repeats(msg string) []string {
	seen := map[string]int{}
	var twice []string
	for _, part := range strings.Split(msg, ": ") {
		layer := isIdentifier(part)
		for _, s := range sentinels {
			layer = layer || part == s.Error()
		}
		if seen[part]++; layer && seen[part] == 2 {
			twice = append(twice, part)
		}
	}
	return twice
}

// TestErrorsSayEachPartOnce: the errors prism prints name each layer and each sentinel
// once ("prism: bench: bench: ...", "...: unsupported: unsupported" are bugs).
func TestErrorsSayEachPartOnce(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "not.json")
	if err := os.WriteFile(notJSON, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	cases := []struct {
		args   []string
		device bool // run on the first OpenCL device
	}{
		{[]string{"run", "no-such-op"}, false},
		{[]string{"run", "stream/copy/float32", "--size", "1.5M"}, false},
		{[]string{"run", "stream/copy/float32", "--variant", "no-such-variant"}, false},
		{[]string{"run", "stream/copy/float32", "--device", "no-such-device"}, false},
		{[]string{"bench", "--ops", "no-such-op"}, false},
		{[]string{"bench", "--sizes", "0"}, false},
		{[]string{"kernels", "no-such-family"}, false},
		{[]string{"kernels", "--device", "cuda:9"}, false},
		{[]string{"report", missing}, false},
		{[]string{"report", notJSON}, false},
		{[]string{"compare", notJSON, notJSON}, false},
		{[]string{"plot", notJSON, "-o", filepath.Join(dir, "x.svg")}, false},
		{[]string{"run", "reduce/sum/float32", "--size", "1K", "--variant", "cuda-shfl"}, true},
	}
	if twice := repeats("prism: bench: bench: x: unsupported: unsupported"); len(twice) != 2 {
		t.Fatalf("repeats finds %q in a message that says bench and unsupported twice", twice)
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := c.args
			if c.device {
				args = append(args, "--device", enginetest.DeviceIDs(t, "opencl")[0])
			}
			_, err := execPrism(t, args...)
			if err == nil {
				t.Fatal("no error")
			}
			msg := "prism: " + err.Error() // as main prints it
			if twice := repeats(msg); len(twice) > 0 {
				t.Errorf("%q says %q twice", msg, twice)
			}
		})
	}
}

// TestCaseError: a failed case's error appends its sentinel only where the reason does not
// say it already, and matches it either way.
func TestCaseError(t *testing.T) {
	for _, c := range []struct {
		reason   string
		sentinel error
		want     string
	}{
		{"kernels: variant x runs on the cuda backend: unsupported", engine.ErrUnsupported,
			"op on dev: kernels: variant x runs on the cuda backend: unsupported"},
		{"needs fp64", engine.ErrUnsupported, "op on dev: needs fp64: unsupported"},
		{"verification failed: op: element 3 = 1, want 2", bench.ErrVerify,
			"op on dev: verification failed: op: element 3 = 1, want 2"},
		{"setup: out of memory", nil, "op on dev: setup: out of memory"},
	} {
		err := caseError("op", "dev", c.reason, c.sentinel)
		if err.Error() != c.want {
			t.Errorf("caseError(%q) = %q, want %q", c.reason, err, c.want)
		}
		if c.sentinel != nil && !errors.Is(err, c.sentinel) {
			t.Errorf("caseError(%q) does not match %v", c.reason, c.sentinel)
		}
	}
}

// TestBackendError: an unavailable backend's line (prism devices) is its error alone when
// the error names its package, else the backend's name and the error.
func TestBackendError(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"cuda", errors.New("cuda: cannot load libcuda.so.1: unavailable"), "cuda: cannot load libcuda.so.1: unavailable"},
		{"opencl", errors.New("cl: no OpenCL platform found by the ICD loader: unavailable"), "cl: no OpenCL platform found by the ICD loader: unavailable"},
		{"opencl", errors.New("no platform: unavailable"), "opencl: no platform: unavailable"},
		{"opencl", errors.New("unavailable"), "opencl: unavailable"},
		{"hip", errors.New("HIP: driver missing"), "hip: HIP: driver missing"},
	} {
		if got := backendError(c.name, c.err); got != c.want {
			t.Errorf("backendError(%s, %v) = %q, want %q", c.name, c.err, got, c.want)
		}
	}
}

// prismOutput runs prism with args and returns what it wrote to stdout and stderr, and its
// error (which main prints on stderr, after "prism: ").
func prismOutput(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// saxpyArgs are the --arg specs of testdata/exec/saxpy.cl's saxpy on n elements, with
// spec i replaced where replace says.
func saxpyArgs(n string, replace map[int]string) []string {
	specs := []string{"scalar:float32:2", "buf:float32:" + n + ":random", "buf:float32:" + n + ":ones", "out:float32:" + n}
	var args []string
	for i, s := range specs {
		if r, ok := replace[i]; ok {
			s = r
		}
		if s != "" {
			args = append(args, "--arg", s)
		}
	}
	return args
}

// TestFirstHourErrors: the mistakes of a first session with prism exec and prism run end
// in errors that say, in the words of the command line, what was wrong and what would do.
// These checks happen before any device is opened (the kernel's signature is read from
// FILE.cl), so they say the same on every backend.
func TestFirstHourErrors(t *testing.T) {
	saxpy := filepath.Join(execKernels, "saxpy.cl")
	exec := func(kernel string, replace map[int]string) []string {
		return append([]string{"exec", saxpy, "--kernel", kernel, "--global", "16", "--no-save", "--count", "0"}, saxpyArgs("16", replace)...)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown kernel", exec("saxpi", nil),
			"--kernel saxpi: " + saxpy + " defines no kernel of that name; its kernel is saxpy"},
		{"too few arguments", exec("saxpy", map[int]string{3: ""}),
			"kernel saxpy (" + saxpy + ", line 2) takes 4 arguments, --arg gives 3: parameter 3 z (__global float *z) has none (the parameters: 0 a (const float a); 1 x (__global const float *x); 2 y (__global const float *y); 3 z (__global float *z))"},
		{"too many arguments", append(exec("saxpy", nil), "--arg", "scalar:int32:16"),
			`kernel saxpy (` + saxpy + `, line 2) takes 4 arguments, --arg gives 5: --arg 4 "scalar:int32:16" has no parameter (the parameters: 0 a (const float a); 1 x (__global const float *x); 2 y (__global const float *y); 3 z (__global float *z))`},
		{"scalar of another type", exec("saxpy", map[int]string{0: "scalar:float64:2"}),
			`--arg 0 "scalar:float64:2": parameter 0 a (const float a) of saxpy: the kernel takes a float, --arg passes a float64: want scalar:float32:2`},
		{"buffer of another type", exec("saxpy", map[int]string{1: "buf:float16:16:random"}),
			`--arg 1 "buf:float16:16:random": parameter 1 x (__global const float *x) of saxpy: the kernel reads float elements, the buffer holds float16: want buf:float32:16`},
		{"scalar for a pointer", exec("saxpy", map[int]string{2: "scalar:float32:1"}),
			`--arg 2 "scalar:float32:1": parameter 2 y (__global const float *y) of saxpy: a pointer wants a buffer (buf:float32:SIZE, out:float32:SIZE or inout:float32:SIZE), not a scalar (float32)`},
		{"buffer for a value", exec("saxpy", map[int]string{0: "buf:float32:16"}),
			`--arg 0 "buf:float32:16": parameter 0 a (const float a) of saxpy: a value (scalar:float32:VALUE) is passed here, not a buf buffer of float32`},
		{"expression name", []string{"exec", "--expr", "t = 2*x; y = t + w", "--arg", "x=buf:float32:16", "--arg", "y=out:float32:16", "--no-save"},
			`--expr "t = 2*x; y = t + w" uses w (column 18), which is neither an argument given with --arg w=SPEC nor assigned earlier in the expression (the --arg names are x, y; assigned before it: t)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := prismOutput(t, c.args...)
			if err == nil || err.Error() != c.want {
				t.Errorf("error:\n%v\nwant:\n%s", err, c.want)
			}
			var usage usageError
			if !errors.As(err, &usage) {
				t.Errorf("%v is no usage error (exit code 2)", err)
			}
		})
	}
}

// TestFirstHourDevice: a --device that matches nothing names the value and lists the
// device IDs there are, with the backends and classes a --device may name.
func TestFirstHourDevice(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	saxpy := filepath.Join(execKernels, "saxpy.cl")
	for _, args := range [][]string{
		append([]string{"exec", saxpy, "--kernel", "saxpy", "--no-save", "--device", "nope"}, saxpyArgs("16", nil)...),
		{"run", "stream/copy/float32", "--size", "1K", "--device", "nope"},
		{"run", "stream/copy/float32", "--size", "1K", "--device", "opencl:99:0"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			_, _, err := prismOutput(t, args...)
			if !errors.Is(err, platform.ErrNoDevice) {
				t.Fatalf("error %v, want ErrNoDevice", err)
			}
			msg := err.Error()
			spec := args[slices.Index(args, "--device")+1]
			for _, want := range append([]string{`no device matches "` + spec + `"`, "--device and PRISM_DEVICE also take a backend (",
				"opencl", "or a class (gpu, accelerator, cpu)"}, ids...) {
				if !strings.Contains(msg, want) {
					t.Errorf("%q does not say %q", msg, want)
				}
			}
		})
	}
}

// TestNotRunSaidOnce: a case the device cannot run is said once, on stderr (by its error),
// not again as a "not run" line on stdout, and no line ends in a stray separator.
func TestNotRunSaidOnce(t *testing.T) {
	id := enginetest.DeviceIDs(t, "opencl")[0]
	stdout, stderr, err := prismOutput(t, "run", "reduce/sum/float32", "--size", "1K", "--variant", "cuda-shfl", "--device", id)
	if !errors.Is(err, engine.ErrUnsupported) {
		t.Fatalf("error %v, want ErrUnsupported", err)
	}
	all := stdout + stderr + "prism: " + err.Error() + "\n"
	if n := strings.Count(all, "variant cuda-shfl runs on the cuda backend"); n != 1 {
		t.Errorf("the reason is said %d times, want once:\nstdout:\n%s\nstderr:\n%s\nerror: %v", n, stdout, stderr, err)
	}
	if strings.Contains(stdout, "not run") {
		t.Errorf("stdout says not run:\n%s", stdout)
	}
	for _, line := range strings.Split(all, "\n") {
		if strings.HasSuffix(line, ", ") || strings.HasSuffix(line, ",") {
			t.Errorf("line %q ends in a separator", line)
		}
	}
}

// TestExecNotAKernel: a --kernel that the file names but not as a kernel (a helper
// function) gets past the source check; the program built on the device then says the
// kernel is not in the file and lists those it defines, not the driver's status code.
func TestExecNotAKernel(t *testing.T) {
	id := enginetest.DeviceIDs(t, "opencl")[0]
	file := filepath.Join(t.TempDir(), "two.cl")
	src := "float twice(float x) { return 2 * x; }\n__kernel void scale(__global float *x) { x[get_global_id(0)] = twice(x[get_global_id(0)]); }\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := prismOutput(t, "exec", file, "--kernel", "twice", "--arg", "inout:float32:16:ones", "--no-save", "--count", "0", "--device", id)
	want := id + ": --kernel twice: " + file + " defines no kernel of that name; its kernel is scale"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}
