package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/userkernel"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
)

// execKernels is the directory of the example kernels of prism exec --help.
const execKernels = "testdata/exec"

// readFloat32s reads a .npy file of float32.
func readFloat32s(t *testing.T, path string) []float32 {
	t.Helper()
	a, err := userkernel.ReadNPYFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Type.Name != "float32" {
		t.Fatalf("%s holds %s", path, a.Type.Name)
	}
	out := make([]float32, a.Len())
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(a.Data[4*i:]))
	}
	return out
}

// writeFloat32s writes v as a .npy file.
func writeFloat32s(t *testing.T, path string, v []float32) {
	t.Helper()
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
	}
	f32, _ := userkernel.LookupType("float32")
	if err := os.WriteFile(path, userkernel.EncodeNPY(f32, data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// inputsOf returns the float32 initial values the --arg specs give, as prism exec makes them.
func inputsOf(t *testing.T, seed uint64, specs ...string) [][]float32 {
	t.Helper()
	args, err := parseExecArgs(specs, "k", seed)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	for _, a := range args {
		v := make([]float32, a.Len)
		for i := range v {
			v[i] = float32(userkernel.ElemFloat(a.Type, a.Init, i))
		}
		out = append(out, v)
	}
	return out
}

// near reports whether got is within a few float32 roundings of want.
func near(got float32, want float64) bool {
	return math.Abs(float64(got)-want) <= 4e-7*math.Abs(want)+1e-6
}

// npyName returns the name of the file of output name of device id.
func npyName(dir, name, id string) string {
	return filepath.Join(dir, name+"."+strings.ReplaceAll(id, ":", "-")+".npy")
}

// TestExecSaxpy runs the saxpy of prism exec --help on the first OpenCL device and checks
// the saved output against z = a*x + y computed here, with x random and y ones; then again
// with x from a .npy file, --json.
func TestExecSaxpy(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	const n = 64 * 1024
	specs := []string{"scalar:float32:2", "buf:float32:64K:random", "buf:float32:64K:ones", "z=out:float32:64K"}
	args := []string{"exec", filepath.Join(execKernels, "saxpy.cl"), "--kernel", "saxpy", "--device", ids[0], "--global", "64K", "--count", "3", "--save-dir", dir}
	for _, s := range specs {
		args = append(args, "--arg", s)
	}
	out, err := execPrism(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	file := npyName(dir, "z", ids[0])
	for _, want := range []string{"saxpy on " + ids[0], "global 65536, local 256", "median", "over 3 runs", "wrote " + file} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	in := inputsOf(t, 1, specs...)
	z := readFloat32s(t, file)
	if len(z) != n {
		t.Fatalf("%d elements saved, want %d", len(z), n)
	}
	for i := range z {
		if want := 2*float64(in[1][i]) + float64(in[2][i]); !near(z[i], want) || in[2][i] != 1 {
			t.Fatalf("z[%d] = %v, want %v", i, z[i], want)
		}
	}
	// x from a file, --json, the output under its default name.
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%1000) / 8
	}
	writeFloat32s(t, filepath.Join(dir, "x.npy"), x)
	out, err = execPrism(t, "exec", filepath.Join(execKernels, "saxpy.cl"), "-k", "saxpy", "--device", ids[0], "--count", "2", "--warmup", "0", "--save-dir", dir,
		"--json", "--arg", "scalar:float32:0.5", "--arg", "buf:float32:64K:"+filepath.Join(dir, "x.npy"), "--arg", "buf:float32:64K:-1", "--arg", "out:float32:64K")
	if err != nil {
		t.Fatal(err)
	}
	var sum execSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(sum.Devices) != 1 || sum.Devices[0].Stats.Runs != 2 || sum.Devices[0].Stats.Median <= 0 || len(sum.Devices[0].Outputs) != 1 ||
		sum.Global[0] != n || len(sum.Compare) != 0 {
		t.Fatalf("summary %+v", sum)
	}
	o := sum.Devices[0].Outputs[0]
	if o.Name != "saxpy.arg3" || o.Arg != 3 || o.Type != "float32" || o.Len != n || o.File != npyName(dir, "saxpy.arg3", ids[0]) {
		t.Errorf("output %+v", o)
	}
	z = readFloat32s(t, o.File)
	for i := range z {
		if want := x[i]/2 - 1; z[i] != want {
			t.Fatalf("z[%d] = %v, want %v", i, z[i], want)
		}
	}
}

// TestExecTranspose runs a 2-D kernel with int32 buffers and scalars, --global 64,32
// --local 8,8.
func TestExecTranspose(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	out, err := execPrism(t, "exec", filepath.Join(execKernels, "transpose.cl"), "--kernel", "transpose", "--device", ids[0], "--global", "64,32", "--local", "8,8",
		"--arg", "buf:int32:2K:range", "--arg", "t=out:int32:2K", "--arg", "scalar:int32:64", "--arg", "scalar:int:32", "--count", "1", "--save-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "global 64x32, local 8x8") {
		t.Errorf("output:\n%s", out)
	}
	a, err := userkernel.ReadNPYFile(npyName(dir, "t", ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	if a.Type.Name != "int32" || a.Len() != 2048 {
		t.Fatalf("saved %s[%d]", a.Type.Name, a.Len())
	}
	for x := range 64 {
		for y := range 32 {
			if got := int32(binary.LittleEndian.Uint32(a.Data[4*(x*32+y):])); got != int32(y*64+x) {
				t.Fatalf("out[%d][%d] = %d, want %d", x, y, got, y*64+x)
			}
		}
	}
}

// TestExecLocalReduce runs a work-group reduction with a __local argument and a macro.
func TestExecLocalReduce(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	_, err := execPrism(t, "exec", filepath.Join(execKernels, "reduce.cl"), "--kernel", "block_sum", "--device", ids[0], "--global", "4096", "--local", "64",
		"-D", "SCALE=2", "--arg", "buf:float32:4K:random", "--arg", "sums=out:float32:64", "--arg", "local:256", "--seed", "7", "--count", "1", "--save-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	x := inputsOf(t, 7, "buf:float32:4K:random")[0]
	sums := readFloat32s(t, npyName(dir, "sums", ids[0]))
	for g := range 64 {
		want := 0.0
		for _, v := range x[g*64 : (g+1)*64] {
			want += float64(v)
		}
		if math.Abs(float64(sums[g])-2*want) > 1e-4 {
			t.Errorf("sums[%d] = %v, want %v", g, sums[g], 2*want)
		}
	}
}

// TestExecUsage checks that bad flags and --arg specs are usage errors that say what is
// wrong, naming the argument's index.
func TestExecUsage(t *testing.T) {
	cl := filepath.Join(execKernels, "saxpy.cl")
	base := func(more ...string) []string {
		return append([]string{"exec", cl, "-k", "saxpy", "--global", "64"}, more...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", cl}, "--kernel NAME is needed"},
		{[]string{"exec", "-k", "saxpy"}, "FILE.cl is needed"},
		{base("--arg", "buf:float33:64"), `--arg 0 "buf:float33:64": unknown element type "float33"`},
		{base("--arg", "scalar:float32:2", "--arg", "buf:float32:12Q"), `--arg 1 "buf:float32:12Q": bench: bad size`},
		{base("--arg", "pointer:float32:64"), `unknown kind "pointer"`},
		{base("--arg", "buf:float32"), "want buf:TYPE:SIZE[:INIT]"},
		{base("--arg", "out:float32:64:ones"), "inout:float32:64:ones gives it initial values"},
		{base("--arg", "buf:float32:64:lots"), `bad INIT: "lots" is not a float32`},
		{base("--arg", "buf:float32:64:no-such.npy"), "no-such.npy"},
		{base("--arg", "scalar:int8:300"), `"300" is not a int8`},
		{base("--arg", "scalar:float16:1e6"), "beyond the range of float16"},
		{base("--arg", "scalar:float32"), "want scalar:TYPE:VALUE"},
		{base("--arg", "local:0"), "must be at least 1"},
		{base("--arg", "z=buf:float32:64"), "only out and inout buffers take a name"},
		{base("--arg", "../z=out:float32:64"), `bad name "../z"`},
		{base("--arg", "z=out:float32:64", "--arg", "z=out:float32:64"), `--arg 1 "z=out:float32:64": the name z is taken by --arg 0`},
		{base("--arg", ""), `--arg 0 "": empty`},
		{base("--local", "48"), "--global 64 is not a multiple of --local 48"},
		{base("--local", "8,8"), "--local 8,8 has 2 dimensions but --global 64 has 1"},
		{[]string{"exec", cl, "-k", "saxpy", "--local", "2,2", "--arg", "scalar:float32:2", "--arg", "buf:float32:16"}, "--local 2,2 has 2 dimensions but --global 16 has 1"},
		{[]string{"exec", cl, "-k", "saxpy", "--global", "8,8,8,8"}, "at most 3 dimensions"},
		{[]string{"exec", cl, "-k", "saxpy", "--arg", "scalar:int32:1"}, "--global is needed"},
		{base("-D", "=1"), `-D "=1": want NAME or NAME=VALUE`},
		{base("--count", "-1"), "--count must be 0"},
		{base("--device", "cpu", "--all-devices"), "exclude each other"},
	} {
		_, err := execute(t, tc.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want a usage error containing %q", tc.args[1:], err, tc.want)
		}
	}
	if code := run(context.Background(), base("--arg", "buf:float33:64")); code != exitUsage {
		t.Errorf("bad --arg: exit %d, want %d", code, exitUsage)
	}
}

// TestExecErrors checks a build error (its compiler log, exit code 1), an unknown kernel
// and arguments that do not fit the kernel.
func TestExecErrors(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.cl")
	if err := os.WriteFile(bad, []byte("__kernel void k(__global float *x) { x[0] = undefined_name; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"exec", bad, "-k", "k", "--device", ids[0], "--arg", "out:float32:1", "--save-dir", dir}
	_, err := execute(t, args...)
	var be *engine.BuildError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "undefined_name") || !strings.Contains(err.Error(), "bad.cl on "+ids[0]) {
		t.Errorf("build error %v", err)
	}
	if code := run(context.Background(), args); code != exitError {
		t.Errorf("build error: exit %d, want %d", code, exitError)
	}
	cl := filepath.Join(execKernels, "saxpy.cl")
	if _, err := execute(t, "exec", cl, "-k", "nope", "--device", ids[0], "--arg", "out:float32:1", "--save-dir", dir); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown kernel: %v", err)
	}
	_, err = execute(t, "exec", cl, "-k", "saxpy", "--device", ids[0], "--arg", "out:float32:64", "--save-dir", dir)
	if ue := (usageError{}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "takes 4 arguments, --arg gives 1: parameter 1 x") {
		t.Errorf("too few arguments: %v", err)
	}
}

// execAlone runs prism with args as a process of its own (TestMain), where
// RUSTICL_ENABLE=llvmpipe gives a second OpenCL device, and returns its stdout, stderr and
// exit code.
func execAlone(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "RUSTICL_ENABLE=llvmpipe", "PRISM_TEST_RUN_MAIN="+strings.Join(args, "\x1f"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// TestExecAllDevices runs saxpy with --all-devices: every output is compared with the
// first device's; with one device, the comparison is skipped with a note. Then a kernel
// whose output differs by device (its work-group size, chosen per device) exits with
// code 4.
func TestExecAllDevices(t *testing.T) {
	enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	out, stderr, code := execAlone(t, "exec", filepath.Join(execKernels, "saxpy.cl"), "-k", "saxpy", "--all-devices", "--count", "2", "--json", "--save-dir", dir,
		"--arg", "scalar:float32:2", "--arg", "buf:float32:16K:random", "--arg", "buf:float32:16K:ones", "--arg", "z=out:float32:16K")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var sum execSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(sum.Devices) < 2 {
		if !strings.Contains(stderr, "no outputs to compare") {
			t.Errorf("one device and no note:\n%s", stderr)
		}
		t.Skipf("one OpenCL device (%s): nothing compared", sum.Devices[0].Device)
	}
	if sum.Baseline != sum.Devices[0].Device || len(sum.Compare) != len(sum.Devices)-1 {
		t.Fatalf("summary %+v", sum)
	}
	for _, c := range sum.Compare {
		if c.Output != "z" || c.Elements != 16*1024 || !c.Within || c.MaxULP > 4 {
			t.Errorf("comparison %+v", c)
		}
		if _, err := os.Stat(npyName(dir, "z", c.Device)); err != nil {
			t.Error(err)
		}
	}
	if sum.Devices[0].Local[0] == sum.Devices[1].Local[0] {
		t.Skipf("the devices chose the same work-group (%v)", sum.Devices[0].Local)
	}
	wg := filepath.Join(dir, "wg.cl")
	if err := os.WriteFile(wg, []byte("__kernel void wg(__global int *x) { x[get_global_id(0)] = get_local_size(0); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = execAlone(t, "exec", wg, "-k", "wg", "--all-devices", "--count", "0", "--no-save", "--arg", "out:int32:1K")
	if code != exitVerify || !strings.Contains(stderr, "wg.arg0 on "+sum.Devices[1].Device+": 1024 of 1024 elements differ from "+sum.Devices[0].Device) ||
		!strings.Contains(out, "1024 of 1024 differ") || !strings.Contains(out, "FAILED") {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitVerify, out, stderr)
	}
}

// TestExecHelpExamples runs every example of prism exec --help in a directory holding the
// example kernels and a small x.npy, and checks that each succeeds.
func TestExecHelpExamples(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	for _, name := range []string{"saxpy.cl", "transpose.cl", "reduce.cl"} {
		src, err := os.ReadFile(filepath.Join(execKernels, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFloat32s(t, filepath.Join(dir, "x.npy"), make([]float32, 4096))
	t.Chdir(dir)
	text := strings.ReplaceAll(newExecCmd().Example, "\\\n", " ")
	n := 0
	for line := range strings.Lines(text) {
		fields := shellFields(line)
		if len(fields) < 2 || fields[0] != "prism" {
			continue
		}
		args := append(fields[1:], "--count", "1", "--warmup", "0")
		if !strings.Contains(line, "--all-devices") {
			args = append(args, "--device", ids[0])
		}
		if _, err := execute(t, args...); err != nil {
			t.Errorf("%s: %v", strings.Join(fields, " "), err)
		}
		n++
	}
	if n != 5 {
		t.Errorf("%d examples run, want 5", n)
	}
	for _, f := range []string{npyName(".", "saxpy.z", ids[0]), npyName("results", "block_sum.arg1", ids[0])} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
}

// shellFields splits a command line at spaces outside single quotes, as a shell does for
// the examples of prism exec --help.
func shellFields(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case !quoted && (r == ' ' || r == '\t' || r == '\n'):
			if any {
				out = append(out, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

// TestExecExpr runs prism exec --expr on the first OpenCL device: y = a*x + exp(-z) with x
// the element indices and z ones, checked here, and the refusals of bad expressions and
// arguments.
func TestExecExpr(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	const n = 1003
	_, err := execPrism(t, "exec", "--expr", "y = a*x + exp(-z); w = x > 500 ? x : -x", "--device", ids[0], "--count", "1",
		"--arg", "z=buf:float32:1003:ones", "--arg", "a=scalar:float32:0.5", "--arg", "x=buf:float32:1003:range",
		"--arg", "y=out:float32:1003", "--arg", "w=out:float32:1003", "--save-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	y, w := readFloat32s(t, npyName(dir, "y", ids[0])), readFloat32s(t, npyName(dir, "w", ids[0]))
	if len(y) != n || len(w) != n {
		t.Fatalf("outputs of %d and %d elements, want %d", len(y), len(w), n)
	}
	for i := range n {
		wantW := float64(-i)
		if i > 500 {
			wantW = float64(i)
		}
		if !near(y[i], 0.5*float64(i)+math.Exp(-1)) || float64(w[i]) != wantW {
			t.Fatalf("element %d: y %v, w %v; want %v, %v", i, y[i], w[i], 0.5*float64(i)+math.Exp(-1), wantW)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--expr", "y = x", "--arg", "buf:float32:8"}, "NAME=SPEC"},
		{[]string{"--expr", "y = x", "--arg", "x=buf:float32:8", "--arg", "y=out:float32:9"}, "one length"},
		{[]string{"--expr", "y = x", "--arg", "x=buf:float32:8", "--arg", "y=out:float32:8", "--arg", "q=scalar:int32:1"}, "does not use it"},
		{[]string{"--expr", "y = x +", "--arg", "x=buf:float32:8", "--arg", "y=out:float32:8"}, "--expr"},
		{[]string{"--expr", "y = x", "--kernel", "k", "--arg", "x=buf:float32:8", "--arg", "y=out:float32:8"}, "--kernel"},
		{[]string{"--expr", "y = x", "file.cl", "--arg", "x=buf:float32:8", "--arg", "y=out:float32:8"}, "no FILE"},
		{[]string{"--expr", "y = x", "--arg", "x=local:64", "--arg", "y=out:float32:8"}, "local"},
		// An input assigned would be written and zeros saved; an output never assigned saved as it started.
		{[]string{"--expr", "x = y", "--arg", "x=buf:float32:8:ones", "--arg", "y=buf:float32:8"}, "buf is an input it would overwrite"},
		{[]string{"--expr", "x = y", "--arg", "x=in:float32:8", "--arg", "y=buf:float32:8"}, "buf is an input it would overwrite"},
		{[]string{"--expr", "x = y + z", "--arg", "x=out:float32:8", "--arg", "y=buf:float32:8", "--arg", "z=out:float32:8"}, "never assigns z"},
	} {
		_, err := execPrism(t, append([]string{"exec", "--device", ids[0], "--save-dir", dir}, c.args...)...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("prism exec %s: %v; want a usage error saying %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}

// TestExecRunLines runs a file's own "// run:" lines: every line, each with its kernel and
// arguments and the command line's other flags; a file without them still needs --kernel.
func TestExecRunLines(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	file := filepath.Join(dir, "two.cl")
	src := "// run: --kernel fill --global 64 --arg out:int32:64 --arg scalar:int32:7\n" +
		"// run: --kernel twice --global 32 --arg out:int32:32 --arg buf:int32:32:range\n" +
		"__kernel void fill(__global int *y, int v) { y[get_global_id(0)] = v; }\n" +
		"__kernel void twice(__global int *y, __global const int *x) { y[get_global_id(0)] = 2 * x[get_global_id(0)]; }\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := execPrism(t, "exec", file, "--device", ids[0], "--count", "0", "--save-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fill on " + ids[0], "twice on " + ids[0]} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	a, err := userkernel.ReadNPYFile(npyName(filepath.Join(dir, "run2"), "twice.arg0", ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 32 {
		if got := int32(binary.LittleEndian.Uint32(a.Data[4*i:])); got != int32(2*i) {
			t.Fatalf("twice.arg0[%d] = %d, want %d", i, got, 2*i)
		}
	}
	plain := filepath.Join(dir, "plain.cl")
	if err := os.WriteFile(plain, []byte(src[strings.Index(src, "__kernel"):]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := execPrism(t, "exec", plain, "--device", ids[0]); err == nil || !strings.Contains(err.Error(), "--kernel NAME is needed") {
		t.Errorf("a file without run lines and no --kernel: %v", err)
	}
}

// TestExecRunLinesConfined checks that a kernel file's run lines cannot do what the user
// did not ask: a line with any flag but the kernel's own is refused before anything runs
// or is written; two lines of one kernel keep both outputs (run1/, run2/); --json of
// several lines is one JSON document; --out gets every run's summary.
func TestExecRunLinesConfined(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	const kernel = "__kernel void fill(__global int *y, int v) { y[get_global_id(0)] = v; }\n"
	for _, c := range []struct{ line, want string }{
		{"--kernel fill --global 8 --arg out:int32:8 --arg scalar:int32:1 -o notes.txt", "takes only the kernel's own flags"},
		{"--kernel fill --global 8 --arg out:int32:8 --arg scalar:int32:1 --save-dir planted", "takes only the kernel's own flags"},
		{"--kernel fill --global 8 --arg out:int32:8 --arg scalar:int32:1 --all-devices", "takes only the kernel's own flags"},
		{"--kernel fill --global 8 --arg out:int32:8 --arg scalar:int32:1 --store=/tmp/x.db", "takes only the kernel's own flags"},
		{"--kernel fill --global 8 stray", `"stray" is not a flag`},
		{"--global 8 --arg out:int32:8", "--kernel NAME is needed"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "k.cl")
		src := "// run: --kernel fill --global 8 --arg out:int32:8 --arg scalar:int32:2\n// run: " + c.line + "\n" + kernel
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		save := filepath.Join(dir, "save")
		_, err := execPrism(t, "exec", file, "--device", ids[0], "--count", "0", "--save-dir", save)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "k.cl:2") {
			t.Errorf("run line %q: %v; want a usage error at k.cl:2 saying %q", c.line, err, c.want)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("run line %q: the directory holds %d entries, want k.cl alone (nothing run or written)", c.line, len(entries))
		}
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "twice.cl")
	src := "// run: --kernel fill --global 8 --arg y=out:int32:8 --arg scalar:int32:3\n" +
		"// run: --kernel fill --global 16 --arg y=out:int32:16 --arg scalar:int32:5\n" + kernel
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "summary.json")
	if _, err := execPrism(t, "exec", file, "--device", ids[0], "--count", "0", "--save-dir", dir, "--json", "-o", out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var sums []execSummary
	if err := json.Unmarshal(b, &sums); err != nil || len(sums) != 2 {
		t.Fatalf("--json of two run lines: %d summaries, %v; want one array of 2:\n%s", len(sums), err, b)
	}
	for i, want := range []struct{ n, v int }{{8, 3}, {16, 5}} {
		if g := sums[i].Global; len(g) != 1 || g[0] != want.n {
			t.Errorf("summary %d: global %v, want [%d]", i, g, want.n)
		}
		a, err := userkernel.ReadNPYFile(npyName(filepath.Join(dir, fmt.Sprintf("run%d", i+1)), "y", ids[0]))
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Data) != 4*want.n || int32(binary.LittleEndian.Uint32(a.Data)) != int32(want.v) {
			t.Errorf("run%d/y: %d bytes starting %v, want %d values of %d", i+1, len(a.Data), a.Data[:4], want.n, want.v)
		}
	}
}

// TestExecDefines checks that -D takes NAME or NAME=VALUE only, so that a value cannot
// carry build options of its own, in prism exec and prism tune.
func TestExecDefines(t *testing.T) {
	for _, d := range []string{"X=1 -cl-fast-relaxed-math", "X=\"a\"", "1X=2", "X-Y=1", "=1", "X=a\tb", "X=\x1b[31m"} {
		var ue usageError
		if err := checkDefine(d); err == nil {
			t.Errorf("-D %q accepted", d)
		} else if !errors.As(err, &ue) {
			t.Errorf("-D %q: %v, not a usage error", d, err)
		}
		if _, _, err := parseTuneDefines([]string{d}); err == nil {
			t.Errorf("prism tune -D %q accepted", d)
		}
	}
	for _, d := range []string{"X", "X=1", "_Y2=0x7f", "SCALE=2.5f", "N=-3", "F=(1+2)"} {
		if err := checkDefine(d); err != nil {
			t.Errorf("-D %q: %v", d, err)
		}
	}
	if _, _, err := parseTuneDefines([]string{"WG=64,128 -O0"}); err == nil {
		t.Error("prism tune -D WG=64,128 -O0 accepted")
	}
}

// TestOutputNotOverInput checks that --out (and report's --html, plot's -o) refuses to write
// over an input of the same command, under its own name or another (a link), that "-o -"
// is stdout, and that -o /dev/null works.
func TestOutputNotOverInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "run.json")
	data, err := os.ReadFile(filepath.Join("..", "..", "bench", "render", "testdata", "single.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "report.svg")
	if err := os.WriteFile(svg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", in, "--csv", "-o", in},
		{"report", in, "--csv", "-o", link},
		{"report", in, "--html", in},
		{"compare", in, in, "-o", in},
		{"plot", svg, "-o", svg}, // a report named .svg: the format is right, the file is the input
	} {
		_, err := execPrism(t, args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "would destroy it") {
			t.Errorf("prism %s: %v; want a usage error saying it would destroy the input", strings.Join(args, " "), err)
		}
		if b, _ := os.ReadFile(in); !bytes.Equal(b, data) {
			t.Fatalf("prism %s changed the input", strings.Join(args, " "))
		}
	}
	out, err := execPrism(t, "report", in, "--csv", "-o", "-")
	if err != nil || !strings.HasPrefix(out, "device") && !strings.Contains(out, ",") {
		t.Errorf("report -o -: %v, stdout %q; want the CSV on stdout", err, out)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`-o - created a file named "-"`)
		os.Remove("-")
	}
	if _, err := execPrism(t, "report", in, "--csv", "-o", os.DevNull); err != nil {
		t.Errorf("report -o %s: %v", os.DevNull, err)
	}
}

// TestExecHostileKernelFile checks that FILE.cl is read only from a regular file: a named
// pipe with no writer or a link to /dev/zero is an error at once, where prism exec used to
// wait or read without end; and that an output the machine cannot hold is out of memory
// (exit code 1), not a usage error.
func TestExecHostileKernelFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.cl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	zero := filepath.Join(dir, "zero.cl")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{fifo, zero} {
		for _, args := range [][]string{
			{"exec", file, "--kernel", "k", "--arg", "out:float32:16"},
			{"exec", file}, // its run lines
			{"tune", file, "--kernel", "k", "--arg", "out:float32:16", "-D", "X=1,2"},
		} {
			done := make(chan error, 1)
			go func() { _, err := execPrism(t, args...); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("prism %s: %v; want an error saying it is not a regular file", strings.Join(args, " "), err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("prism %s: still running after 10 s", strings.Join(args, " "))
			}
		}
	}
	_, err := parseExecArgs([]string{"out:float32:64G"}, "k", 1)
	var ue usageError
	if !errors.Is(err, engine.ErrOutOfMemory) || errors.As(err, &ue) {
		t.Errorf("an output of 64G float32 (512 GiB with its copy): %v; want out of memory, not a usage error", err)
	}
}

func init() {
	// The device child of prism exec is this test binary as prism (TestMain).
	selfCommand = func(args ...string) (*exec.Cmd, error) {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		c := exec.Command(self)
		c.Env = append(os.Environ(), "PRISM_TEST_RUN_MAIN="+strings.Join(args, "\x1f"))
		return c, nil
	}
}

// faults is the kernel file of the faulty kernels.
var faults = filepath.Join(execKernels, "faults.cl")

// TestExecGuardBand runs a kernel that writes 16 elements past its output (global 64,
// buffers of 48) on every OpenCL device (PoCL and Rusticl): exit 4, the argument and the
// elements written past its end named, no output saved. Without the guard bands the run
// passed, exit 0, on both.
func TestExecGuardBand(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			dir := t.TempDir()
			sum := filepath.Join(dir, "sum.json")
			_, stderr, code := execAlone(t, "exec", faults, "-k", "over", "--global", "64", "--device", id, "--count", "1", "--save-dir", dir,
				"--arg", "buf:float32:48:range", "--arg", "y=out:float32:48", "--json", "-o", sum, "--no-store")
			want := "the kernel wrote past the end of argument 1 y (y=out:float32:48) on " + id + ": elements 48 to 63 of a buffer of 48 float32"
			if code != exitVerify || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d, want %d and %q; stderr:\n%s", code, exitVerify, want, stderr)
			}
			s := readExecSummary(t, sum)
			if len(s.Devices) != 1 || !strings.Contains(s.Devices[0].Err, want) {
				t.Errorf("summary devices %+v, want the overrun", s.Devices)
			}
			if _, err := os.Stat(npyName(dir, "y", id)); err == nil {
				t.Errorf("the output of a run that wrote past its buffer was saved")
			}
			// At the buffers' size the same kernel passes.
			_, stderr, code = execAlone(t, "exec", faults, "-k", "over", "--global", "48", "--device", id, "--count", "1", "--save-dir", dir,
				"--arg", "buf:float32:48:range", "--arg", "y=out:float32:48", "--no-store")
			if code != exitOK {
				t.Errorf("global 48: exit %d\n%s", code, stderr)
			}
		})
	}
}

// TestExecContainsCrash runs a kernel that writes 1 GiB past its buffer, which ends the
// driver's process with SIGSEGV on PoCL and Rusticl: prism exec reports the crash (exit 1)
// and writes its summary; with --isolate=false the process itself dies by the signal, as
// every run did before.
func TestExecContainsCrash(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			sum := filepath.Join(t.TempDir(), "sum.json")
			args := []string{"exec", faults, "-k", "wild", "--global", "64", "--device", id, "--no-save", "--arg", "out:float32:64", "--no-store"}
			_, stderr, code := execAlone(t, append(args, "--json", "-o", sum)...)
			// A CPU driver dies by the signal; a GPU's reports the fault at the next wait.
			gpu := deviceKind(t, id) == engine.KindGPU
			want := "the kernel crashed the OpenCL driver (SIGSEGV) on " + id + ": likely an access out of its buffers; run with --check to find it"
			if gpu {
				want = "the kernel's run failed on " + id + " ("
			}
			if code != exitError || !strings.Contains(stderr, want) || !strings.Contains(stderr, "run with --check to find it") {
				t.Fatalf("exit %d, want %d and %q; stderr:\n%s", code, exitError, want, stderr)
			}
			if s := readExecSummary(t, sum); len(s.Devices) != 1 || !strings.Contains(s.Devices[0].Err, want) || s.Devices[0].Device != id {
				t.Errorf("summary devices %+v, want %s with the crash", s.Devices, id)
			}
			_, stderr, code = execAlone(t, append(args, "--isolate=false")...)
			if gpu && (code != exitError || !strings.Contains(stderr, want)) {
				t.Errorf("--isolate=false: exit %d, want %d and %q\n%s", code, exitError, want, stderr)
			}
			if !gpu && code != -1 && code != 2 {
				t.Errorf("--isolate=false: exit %d, want the process killed by its signal (or the Go runtime's exit 2)\n%s", code, stderr)
			}
		})
	}
}

// needOclgrind skips the test when the oclgrind command is missing, or fails it under
// PRISM_REQUIRE=oclgrind.
func needOclgrind(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("oclgrind"); err != nil {
		if enginetest.Required("oclgrind") {
			t.Fatalf("PRISM_REQUIRE=%s requires oclgrind: %v", os.Getenv("PRISM_REQUIRE"), err)
		}
		t.Skipf("no oclgrind command (Debian: apt-get install oclgrind; PRISM_REQUIRE=oclgrind makes this a failure): %v", err)
	}
}

// TestExecCheck runs the faulty kernels under Oclgrind with --check: an access past the
// buffers names the argument, its elements, the first work-item and the line; a race and
// an uninitialized value are found; a correct run finds nothing; each finding exits 4.
func TestExecCheck(t *testing.T) {
	needOclgrind(t)
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"over", []string{"-k", "over", "--global", "64", "--arg", "buf:float32:48:range", "--arg", "y=out:float32:48"}, exitVerify, []string{
			"Invalid write of size 4 on argument 1 y (y=out:float32:48), elements 48 to 63 (past its end: it has 48); 16 reports, first by work-item global (48,0,0) local (48,0,0) group (0,0,0); faults.cl:10: y[i] = 2.0f * x[i];",
			"Invalid read of size 4 on argument 0 x (buf:float32:48:range), elements 48 to 63",
		}},
		{"race", []string{"-k", "race", "--global", "8", "--local", "4", "--arg", "out:int32:1"}, exitVerify, []string{
			"Write-write data race on argument 0 x (out:int32:1), element 0;", ") against global (", "; faults.cl:24: x[0] = (int)get_global_id(0);",
		}},
		{"uninit", []string{"-k", "uninit", "--global", "128", "--local", "64", "--arg", "out:float32:128"}, exitVerify, []string{
			"Uninitialized value written on argument 0 y (out:float32:128), elements 0 to 127; 128 reports", "faults.cl:35:",
		}},
		{"clean", []string{"-k", "over", "--global", "48", "--arg", "buf:float32:48:range", "--arg", "y=out:float32:48"}, exitOK, []string{
			"no out-of-bounds access, data race or uninitialized value",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum := filepath.Join(t.TempDir(), "sum.json")
			out, stderr, code := execAlone(t, append(append([]string{"exec", faults, "--check", "--no-store"}, c.args...), "-o", sum)...)
			text, _ := os.ReadFile(sum)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nsummary:\n%s\nstderr:\n%s", code, c.code, out, text, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(string(text), w) {
					t.Errorf("summary lacks %q:\n%s", w, text)
				}
			}
		})
	}
	// The JSON names the argument and the work-item in fields of their own.
	sum := filepath.Join(t.TempDir(), "sum.json")
	execAlone(t, "exec", faults, "--check", "--no-store", "-k", "over", "--global", "50", "--arg", "buf:float32:48:range", "--arg", "y=out:float32:48", "--json", "-o", sum)
	s := readExecSummary(t, sum)
	found := false
	for _, f := range s.Check.Findings {
		if f.Class == "out-of-bounds" && f.Arg == 1 && f.ArgName == "y" && f.First == 48 && f.Last == 49 && f.WorkItem == "global (48,0,0) local (48,0,0) group (0,0,0)" && f.Line == 10 {
			found = true
		}
	}
	if !found {
		t.Errorf("--json: no out-of-bounds finding on argument 1 y, elements 48 to 49, work-item 48, line 10: %+v", s.Check)
	}
}

// TestExecCheckNoOclgrind runs --check with no oclgrind on PATH: exit 3, naming it.
func TestExecCheckNoOclgrind(t *testing.T) {
	enginetest.DeviceIDs(t, "opencl")
	t.Setenv("PATH", t.TempDir())
	_, err := execute(t, "exec", faults, "--check", "-k", "race", "--global", "8", "--arg", "out:int32:1", "--no-store")
	if err == nil || !strings.Contains(err.Error(), "no oclgrind command was found in PATH") || !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("err %v, want oclgrind named and unavailable (exit 3)", err)
	}
	if _, err := execute(t, "exec", faults, "--check", "--device", "opencl:0:0", "-k", "race", "--global", "8", "--arg", "out:int32:1"); err == nil || !strings.Contains(err.Error(), "--check and --device exclude each other") {
		t.Errorf("--check with --device: %v", err)
	}
}

// TestExecExpect pins saxpy's output: an expected file written by one run, then --expect
// passing (exit 0, within --expect-ulp and --expect-tol), a kernel made wrong (exit 4,
// naming the output, the worst element, both values and the difference), and an expected
// file of another length or type refused before anything runs (exit 2).
func TestExecExpect(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	specs := []string{"--arg", "scalar:float32:2", "--arg", "buf:float32:4K:random", "--arg", "buf:float32:4K:ones", "--arg", "z=out:float32:4K"}
	base := func(file string, more ...string) []string {
		return append(append([]string{"exec", file, "-k", "saxpy", "--device", ids[0], "--count", "1", "--no-store"}, specs...), more...)
	}
	saxpy := filepath.Join(execKernels, "saxpy.cl")
	if _, err := execute(t, base(saxpy, "--save-dir", filepath.Join(dir, "expected"))...); err != nil {
		t.Fatal(err)
	}
	want := npyName(filepath.Join(dir, "expected"), "z", ids[0])
	out, err := execute(t, base(saxpy, "--no-save", "--expect", "z="+want)...)
	if err != nil || !strings.Contains(out, "z on "+ids[0]+" vs "+want+": identical  ok") {
		t.Fatalf("--expect unchanged: %v\n%s", err, out)
	}
	if _, err := execute(t, base(saxpy, "--no-save", "--expect", "z="+want, "--expect-tol", "1e-6,1e-5")...); err != nil {
		t.Errorf("--expect-tol: %v", err)
	}
	wrong := filepath.Join(dir, "wrong.cl")
	src, _ := os.ReadFile(saxpy)
	if err := os.WriteFile(wrong, bytes.Replace(src, []byte("a * x[i] + y[i]"), []byte("a * x[i] + y[i] + (i == 1000 ? 0.5f : 0.0f)"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	args := base(wrong, "--no-save", "--expect", "z="+want)
	_, err = execute(t, args...)
	if !errors.Is(err, bench.ErrVerify) || !strings.Contains(err.Error(), "--expect z="+want+" on "+ids[0]+": worst at element 1000: ") ||
		!strings.Contains(err.Error(), "(difference 0.5, ") || !strings.Contains(err.Error(), "1 of 4096 elements differ, tolerance 4 ulp") {
		t.Errorf("a wrong kernel: %v", err)
	}
	if code := run(context.Background(), args); code != exitVerify {
		t.Errorf("a wrong kernel: exit %d, want %d", code, exitVerify)
	}
	_, err = execute(t, base(wrong, "--no-save", "--expect", "z="+want, "--expect-tol", "0.4,0")...)
	if !errors.Is(err, bench.ErrVerify) || !strings.Contains(err.Error(), "allowed 0.4") {
		t.Errorf("a wrong kernel, --expect-tol 0.4,0: %v", err)
	}
	if _, err = execute(t, base(wrong, "--no-save", "--expect", "z="+want, "--expect-tol", "0.6,0")...); err != nil {
		t.Errorf("a wrong kernel within --expect-tol 0.6,0: %v", err)
	}
	short := filepath.Join(dir, "short.npy")
	writeFloat32s(t, short, make([]float32, 1000))
	i32, _ := userkernel.LookupType("int32")
	ints := filepath.Join(dir, "ints.npy")
	if err := os.WriteFile(ints, userkernel.EncodeNPY(i32, make([]byte, 4*4096)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ flag, want string }{
		{"z=" + short, "short.npy holds 1000 elements (shape [1000]), output z has 4096"},
		{"z=" + ints, "ints.npy holds int32, output z is float32"},
		{"y=" + want, "no output is named y; the outputs are z"},
		{"z", "want NAME=FILE.npy"},
	} {
		_, err := execute(t, base(saxpy, "--no-save", "--expect", c.flag)...)
		if ue := (usageError{}); !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--expect %s: %v, want a usage error saying %q", c.flag, err, c.want)
		}
	}
	// The expected file is never written over by the output it is compared with.
	_, err = execute(t, base(saxpy, "--save-dir", filepath.Join(dir, "expected"), "--expect", "z="+want)...)
	if ue := (usageError{}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "is written to that file") {
		t.Errorf("--expect over its own output: %v", err)
	}
}

// ciBlocks returns the shell blocks of docs/CI.md marked "prism-ci=NAME", by NAME, and
// the YAML blocks.
func ciBlocks(t *testing.T) (map[string]string, []string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "CI.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	var yamls []string
	var name string
	var body strings.Builder
	in := false
	for line := range strings.Lines(string(doc)) {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && strings.HasPrefix(trimmed, "```"):
			in, name = true, strings.TrimPrefix(trimmed, "```")
			body.Reset()
		case in && trimmed == "```":
			in = false
			if mark, ok := strings.CutPrefix(name, "bash prism-ci="); ok {
				blocks[mark] = body.String()
			} else if name == "yaml" {
				yamls = append(yamls, body.String())
			}
		case in:
			body.WriteString(line)
		}
	}
	return blocks, yamls
}

// TestCIRecipe runs the recipe of docs/CI.md as written: its generate block, then its check
// script on the example kernels (exit 0), then the check again with saxpy edited to compute
// something else (exit 4, naming the output) and with transpose's expected file replaced
// by one of another type (exit 2). prism is this test binary; the device is PoCL's opencl:0:0, as on the runners.
// The CI files must run that script, build prism as the Makefile does and install PoCL.
func TestCIRecipe(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	if ids[0] != "opencl:0:0" {
		t.Skipf("the recipe names opencl:0:0; the first OpenCL device is %s", ids[0])
	}
	blocks, yamls := ciBlocks(t)
	if blocks["generate"] == "" || blocks["check"] == "" || len(yamls) != 2 {
		t.Fatalf("docs/CI.md: blocks %v and %d YAML blocks, want generate, check and 2", blocks, len(yamls))
	}
	for _, y := range yamls {
		for _, want := range []string{"bash ci/check-kernels.sh", "pocl-opencl-icd ocl-icd-libopencl1", "CGO_CFLAGS=-DCL_TARGET_OPENCL_VERSION=120 go install -tags=libsqlite3 github.com/prism-compute/prism/cmd/prism@"} {
			if !strings.Contains(y, want) {
				t.Errorf("a CI file of docs/CI.md lacks %q:\n%s", want, y)
			}
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	work := filepath.Join(dir, "project")
	for _, d := range []string{bin, filepath.Join(work, "kernels"), filepath.Join(work, "ci")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prism := "#!/bin/bash\nIFS=$'\\x1f'\nexport PRISM_TEST_RUN_MAIN=\"$*\"\nexec " + self + "\n"
	if err := os.WriteFile(filepath.Join(bin, "prism"), []byte(prism), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"saxpy.cl", "transpose.cl", "reduce.cl"} {
		src, err := os.ReadFile(filepath.Join(execKernels, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, "kernels", name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "ci", "check-kernels.sh"), []byte(blocks["check"]), 0o755); err != nil {
		t.Fatal(err)
	}
	shell := func(script string) (string, int) {
		c := exec.Command("bash", "-euo", "pipefail", "-c", script)
		c.Dir = work
		c.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := c.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return string(out), c.ProcessState.ExitCode()
	}
	if out, code := shell(blocks["generate"]); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, out)
	}
	for _, f := range []string{"saxpy.z", "transpose.out", "reduce.sums"} {
		if _, err := os.Stat(filepath.Join(work, "expected", f+".opencl-0-0.npy")); err != nil {
			t.Error(err)
		}
	}
	if out, code := shell("bash ci/check-kernels.sh"); code != exitOK || strings.Count(out, "  ok\n") != 3 {
		t.Fatalf("check, kernels unchanged: exit %d, want 0 and 3 outputs ok\n%s", code, out)
	}
	saxpy := filepath.Join(work, "kernels", "saxpy.cl")
	src, _ := os.ReadFile(saxpy)
	if err := os.WriteFile(saxpy, bytes.Replace(src, []byte("a * x[i] + y[i]"), []byte("a * x[i] - y[i]"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := shell("bash ci/check-kernels.sh"); code != exitVerify || !strings.Contains(out, "--expect saxpy.z=expected/saxpy.z.opencl-0-0.npy on opencl:0:0: worst at element") {
		t.Errorf("check, saxpy edited: exit %d, want %d naming saxpy.z\n%s", code, exitVerify, out)
	}
	if err := os.WriteFile(saxpy, src, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFloat32s(t, filepath.Join(work, "expected", "transpose.out.opencl-0-0.npy"), make([]float32, 2048))
	if out, code := shell("bash ci/check-kernels.sh"); code != exitUsage || !strings.Contains(out, "holds float32, output transpose.out is int32") {
		t.Errorf("check, transpose's expected file of another type: exit %d, want %d\n%s", code, exitUsage, out)
	}
}

// TestOclgrindLogParse groups Oclgrind 21.10's reports as --check prints them, without
// Oclgrind: global addresses tied to the buffer arguments in order (a scalar between them
// takes no buffer number), elements from the offsets, the two work-items of a race, local
// memory named as such, an unknown report kept whole.
func TestOclgrindLogParse(t *testing.T) {
	args, err := userkernel.ParseArgs([]string{"buf:float32:4", "scalar:int32:3", "y=out:float64:4"}, "k", 1)
	if err != nil {
		t.Fatal(err)
	}
	args[0].Param, args[2].Param = "x", "y"
	const text = `
Invalid write of size 8 at global memory address 0x2000000000020
	Kernel: k
	Entity: Global(4,0,0) Local(4,0,0) Group(0,0,0)
	  store double %mul, double addrspace(1)* %arrayidx1, align 8
	At line 7 (column 10) of input.cl:
	  y[i] = x[i];

Invalid write of size 8 at global memory address 0x2000000000030
	Kernel: k
	Entity: Global(6,0,0) Local(6,0,0) Group(0,0,0)
	  store double %mul, double addrspace(1)* %arrayidx1, align 8
	At line 7 (column 10) of input.cl:
	  y[i] = x[i];

Read-write data race at global memory address 0x1000000000004
	Kernel: k

	First entity:  Global(1,0,0) Local(1,0,0) Group(0,0,0)
	  %0 = load float
	At line 6 (column 3) of input.cl:
	  t = x[1];

	Second entity: Global(0,0,0) Local(0,0,0) Group(0,0,0)
	  store float
	At line 5 (column 3) of input.cl:
	  x[1] = 0;

Uninitialized value read from local memory address 0x10
	Kernel: k
	Entity: Global(2,0,0) Local(2,0,0) Group(0,0,0)
	At line 9 (column 1) of input.cl:
	  s = l[4];

Work-group divergence detected (barrier):
	Kernel: k
	Work-group: Group(0,0,0)
`
	g := newOclgrindLog(args)
	g.file = "k.cl"
	if err := g.read(strings.NewReader(text)); err != nil {
		t.Fatal(err)
	}
	if g.Reports != 5 || len(g.findings) != 4 {
		t.Fatalf("%d reports, %d findings: %+v", g.Reports, len(g.findings), g.findings)
	}
	want := []string{
		"Invalid write of size 8 on argument 2 y (y=out:float64:4), elements 4 to 6 (past its end: it has 4); 2 reports, first by work-item global (4,0,0) local (4,0,0) group (0,0,0); k.cl:7: y[i] = x[i];",
		"Read-write data race on argument 0 x (buf:float32:4), element 1; 1 report, first by work-item global (1,0,0) local (1,0,0) group (0,0,0) against global (0,0,0) local (0,0,0) group (0,0,0); k.cl:6: t = x[1];",
		"Uninitialized value read in local memory; 1 report, first by work-item global (2,0,0) local (2,0,0) group (0,0,0); k.cl:9: s = l[4];",
		"Work-group divergence detected (barrier); 1 report",
	}
	for i, w := range want {
		if got := g.findings[i].String(); got != w {
			t.Errorf("finding %d:\n got %s\nwant %s", i, got, w)
		}
	}
	if f := g.findings[0]; f.Class != "out-of-bounds" || f.Arg != 2 || f.First != 4 || f.Last != 6 || f.Line != 7 || f.Column != 10 {
		t.Errorf("finding 0 %+v", f)
	}
	if g.findings[1].Class != "data-race" || g.findings[2].Class != "uninitialized" || g.findings[3].Class != "other" {
		t.Errorf("classes %s %s %s", g.findings[1].Class, g.findings[2].Class, g.findings[3].Class)
	}
}

// deviceKind opens id and returns its kind (a CPU, a GPU).
func deviceKind(t *testing.T, id string) engine.Kind {
	t.Helper()
	dev, err := engine.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	return dev.Info().Kind
}

// TestChildFaultIdentity: a device fault in a child (the kernel ran, the GPU faulted) keeps
// its identity in the command, which writes the summary of a run that faulted.
func TestChildFaultIdentity(t *testing.T) {
	ferr := &userkernel.FaultError{Device: "opencl:1:0", Err: errors.New("cl: clFinish: CL_INVALID_COMMAND_QUEUE (-36)")}
	err := replyError(&childReply{Err: ferr.Error(), Is: sentinelNames(ferr)})
	if !errors.Is(err, userkernel.ErrFault) || err.Error() != ferr.Error() {
		t.Errorf("replyError = %v (fault %v), want %q wrapping ErrFault", err, errors.Is(err, userkernel.ErrFault), ferr.Error())
	}
	if !strings.Contains(ferr.Error(), "the kernel's run failed on opencl:1:0 (cl: clFinish: CL_INVALID_COMMAND_QUEUE (-36)): a device fault") {
		t.Errorf("FaultError = %q", ferr.Error())
	}
}

// TestExecReportExpect: the store's record of an exec run counts --expect: a device whose
// outputs match the stored ones is verified, one that differs is a mismatch.
func TestExecReportExpect(t *testing.T) {
	sum := &execSummary{File: "k.cl", Kernel: "k", Global: []int{64},
		Devices: []userkernel.Result{{Device: "opencl:0:0"}, {Device: "opencl:1:0"}, {Device: "opencl:2:0"}},
		Expect: []userkernel.Comparison{
			{Output: "y", Device: "opencl:0:0", Baseline: "y.npy", Within: true},
			{Output: "y", Device: "opencl:1:0", Baseline: "y.npy", Within: false},
		}}
	rep := execReport(time.Now(), sum, nil, false, nil)
	for i, want := range []struct{ verified, mismatch bool }{{true, false}, {false, true}, {false, false}} {
		r := rep.Devices[i].Results[0]
		if r.Verified != want.verified || r.Mismatch != want.mismatch {
			t.Errorf("%s: verified %v, mismatch %v; want %v, %v", sum.Devices[i].Device, r.Verified, r.Mismatch, want.verified, want.mismatch)
		}
	}
}
