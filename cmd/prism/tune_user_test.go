package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench/userkernel"
	"github.com/prism-compute/prism/engine/enginetest"
)

// TestTuneGrid checks the combinations of -D lists: the product, the last varying fastest,
// single values and bare names defined in every build.
func TestTuneGrid(t *testing.T) {
	vary, fixed, err := parseTuneDefines([]string{"WG=64,128", "FAST", "VEC=1,2,4", "N=3"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"-DFAST", "-DN=3"}; !reflect.DeepEqual(fixed, want) {
		t.Errorf("fixed %q, want %q", fixed, want)
	}
	got := userkernel.Grid(vary)
	want := [][]string{
		{"WG=64", "VEC=1"}, {"WG=64", "VEC=2"}, {"WG=64", "VEC=4"},
		{"WG=128", "VEC=1"}, {"WG=128", "VEC=2"}, {"WG=128", "VEC=4"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("grid %q, want %q", got, want)
	}
	if g := userkernel.Grid(nil); len(g) != 1 || len(g[0]) != 0 {
		t.Errorf("grid of nothing %q, want one empty combination", g)
	}
	if l := userkernel.Label(want[5]); l != "-D WG=128 -D VEC=4" {
		t.Errorf("label %q", l)
	}
}

// tuneArgs is a small run of the kernel of prism tune --help: 4K floats, 1K work-items.
func tuneArgs(dev string, more ...string) []string {
	args := []string{"tune", filepath.Join(execKernels, "tune.cl"), "--kernel", "scale", "--global", "1K", "--local", "64",
		"--device", dev, "--count", "2", "--warmup", "0",
		"--arg", "scalar:float32:2", "--arg", "buf:float32:4K:random", "--arg", "out:float32:4K"}
	return append(args, more...)
}

// TestTuneUserJSON tunes VEC and a macro the kernel ignores on the first OpenCL device:
// every combination of the two lists runs, VEC=3 fails to build and is skipped, and the
// fastest is one that ran.
func TestTuneUserJSON(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	out, err := execute(t, tuneArgs(ids[0], "-D", "VEC=1,3,4", "-D", "UNROLL=1,2", "-D", "BIAS=0", "--json")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var sum tuneUserSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(sum.Devices) != 1 {
		t.Fatalf("%d devices, want 1", len(sum.Devices))
	}
	d := sum.Devices[0]
	if len(d.Combinations) != 6 {
		t.Fatalf("%d combinations, want 6:\n%s", len(d.Combinations), out)
	}
	if !reflect.DeepEqual(sum.Fixed, []string{"-DBIAS=0"}) {
		t.Errorf("fixed %q", sum.Fixed)
	}
	if d.Baseline != "-D VEC=1 -D UNROLL=1" {
		t.Errorf("baseline %q", d.Baseline)
	}
	status := map[string]int{}
	for i, c := range d.Combinations {
		status[c.Status]++
		if c.Status == "build failed" && !strings.Contains(c.Label, "VEC=3") || c.Status == "ok" && strings.Contains(c.Label, "VEC=3") {
			t.Errorf("%s: %s", c.Label, c.Status)
		}
		if c.Fastest != (i == 0) {
			t.Errorf("%s: fastest %v at %d", c.Label, c.Fastest, i)
		}
		if i > 0 && c.Status == "ok" && c.Stats.Median < d.Combinations[i-1].Stats.Median {
			t.Errorf("%s out of order", c.Label)
		}
	}
	if status["ok"] != 4 || status["build failed"] != 2 {
		t.Errorf("statuses %v, want 4 ok and 2 build failed", status)
	}
	if d.Fastest != d.Combinations[0].Label || d.Speedup < 1 {
		t.Errorf("fastest %q, %.2fx", d.Fastest, d.Speedup)
	}
}

// TestTuneUserDisagree checks that a combination whose outputs differ from the first one's
// is reported and never the fastest, and the text output.
func TestTuneUserDisagree(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	out, err := execute(t, tuneArgs(ids[0], "-D", "BIAS=0,1", "-D", "VEC=2,4")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"scale on " + ids[0], "outputs compared with -D BIAS=0 -D VEC=2",
		"-D BIAS=1 -D VEC=2  DIFFERS: scale.arg2: differs from -D BIAS=0 -D VEC=2", "-D BIAS=1 -D VEC=4  DIFFERS:", "fastest: -D BIAS=0 -D VEC=", "x the slowest)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "  fastest\n"); n != 1 {
		t.Errorf("%d combinations marked fastest:\n%s", n, out)
	}
	// No combination runs: an error, and the table still says why.
	out, err = execute(t, tuneArgs(ids[0], "-D", "VEC=3,5")...)
	if err == nil || !strings.Contains(err.Error(), "no combination built, ran and agreed") || !strings.Contains(out, "BUILD FAILED") {
		t.Errorf("every combination failing: error %v\n%s", err, out)
	}
}

// TestTuneUserUsage checks the usage errors of tuning FILE.cl.
func TestTuneUserUsage(t *testing.T) {
	cl := filepath.Join(execKernels, "tune.cl")
	base := func(more ...string) []string {
		return append([]string{"tune", cl, "-k", "scale", "--global", "64", "--arg", "scalar:float32:2",
			"--arg", "buf:float32:256", "--arg", "out:float32:256"}, more...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{base("-D", "VEC=1,,4"), `-D "VEC=1,,4": empty value in the list`},
		{base("-D", "=1,2"), `-D "=1,2": want NAME, NAME=VALUE or NAME=V1,V2,...`},
		{base("-D", "VEC=1,2", "-D", "VEC=4"), "VEC is defined twice"},
		{base("--expr", "y = 2*x"), "prism tune does not take --expr"},
		{[]string{"tune", "gemm/nn/float32", "--expr", "y = 2*x"}, "prism tune does not take --expr"},
		{[]string{"tune", "gemm/nn/float32", "--kernel", "scale"}, "--kernel is for tuning FILE.cl"},
		{[]string{"tune", "gemm/nn/float32", "-D", "VEC=1,2"}, "--define is for tuning FILE.cl"},
		{[]string{"tune", cl, "-D", "VEC=1,2"}, "--kernel NAME is needed"},
		{base("--size", "4K"), "--size is for tuning the suite's ops"},
		{base("--count", "0"), "--count must be 1"},
		{append(base(), cl), "prism tune takes one FILE.cl"},
		{base("--device", "cpu", "--all-devices"), "exclude each other"},
		{base("--arg", "buf:float33:1"), `unknown element type "float33"`},
	} {
		_, err := execute(t, tc.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want a usage error containing %q", tc.args[1:], err, tc.want)
		}
	}
}

// TestTuneHelpExample runs the FILE.cl example of prism tune --help.
func TestTuneHelpExample(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(execKernels, "tune.cl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tune.cl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	text := strings.ReplaceAll(tuneUserExample, "\\\n", " ")
	n := 0
	for line := range strings.Lines(text) {
		fields := shellFields(line)
		if len(fields) < 2 || fields[0] != "prism" {
			continue
		}
		args := append(fields[1:], "--count", "1", "--warmup", "0", "--device", ids[0])
		out, err := execute(t, args...)
		if err != nil {
			t.Errorf("%s: %v", strings.Join(fields, " "), err)
		}
		if !strings.Contains(out, "fastest: -D VEC=") || strings.Count(out, "BUILD FAILED") != 2 {
			t.Errorf("%s:\n%s", strings.Join(fields, " "), out)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d examples run, want 1", n)
	}
}
