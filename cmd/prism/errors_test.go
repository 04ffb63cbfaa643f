package main

import (
	"errors"
	"os"
	"path/filepath"
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
