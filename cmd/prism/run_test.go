package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels/suite"
)

// execute runs the CLI with args and returns stdout and the error.
func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// TestRunJSON runs two stream ops through `prism run` on the first OpenCL device and checks
// that each was verified and timed.
func TestRunJSON(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	out, err := execute(t, "run", "stream/triad", "--device", ids[0], "--size", "10K", "--count", "3", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []runResult
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(got) == 0 {
		t.Fatal("no results")
	}
	for _, r := range got {
		if !strings.HasPrefix(r.Case, "stream/triad/") || r.Device != ids[0] || !r.Verified || r.Size != 10240 ||
			r.Shape != "n=10240" || r.Stats.Runs != 3 || r.Stats.Median <= 0 || r.GBs <= 0 {
			t.Errorf("result %+v", r)
		}
	}
}

func TestRunText(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	out, err := execute(t, "run", "stream/dot/float32", "--device", ids[0], "--size", "1000", "--count", "2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stream/dot/float32 (portable) on " + ids[0], "n=1000", "verified", "GB/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		{"run"},
		{"run", "no-such-op"},
		{"run", "stream/triad/float32", "--size", "0"},
		{"run", "stream/triad/float32", "--size", "12Q"},
		{"run", "stream/triad/float32", "--count", "0"},
		{"kernels", "no-such-family"},
	} {
		if code := run(context.Background(), args); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// TestKernelsList checks that `prism kernels` lists every op of the catalog, and that
// --json and a family's header work.
func TestKernelsList(t *testing.T) {
	out, err := execute(t, "kernels")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range suite.Ops() {
		if !strings.Contains(out, op.Name) {
			t.Errorf("prism kernels lacks %s", op.Name)
		}
	}
	if !strings.Contains(out, "Tunables") {
		t.Errorf("prism kernels shows no tunables:\n%s", out)
	}
	out, err = execute(t, "kernels", "stream", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list []opJSON
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) == 0 {
		t.Fatalf("kernels --json: %v\n%s", err, out)
	}
	out, err = execute(t, "kernels", "stream")
	if err != nil || !strings.Contains(out, "Purpose:") || !strings.Contains(out, "Launch:") {
		t.Errorf("kernels stream: %v\n%s", err, out)
	}
}

// TestKernelsOccupancy checks `prism kernels stream --device ID --occupancy` on the first
// OpenCL device: each operation lists the kernels it launched with their block and what
// OpenCL reports (no registers, no occupancy), in text and in JSON; and that --occupancy
// without --device is a usage error.
func TestKernelsOccupancy(t *testing.T) {
	if code := run(context.Background(), []string{"kernels", "--occupancy"}); code != exitUsage {
		t.Errorf("--occupancy without --device: exit %d, want %d", code, exitUsage)
	}
	ids := enginetest.DeviceIDs(t, "opencl")
	out, err := execute(t, "kernels", "stream", "--device", ids[0], "--occupancy")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kernels launched on " + ids[0] + " at the quick size (no occupancy: the opencl backend does not report it)",
		"operation", "kernel", "block", "max wg", "stream/triad/float32", "stream_triad", "stream_sum"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "occupancy  limiter") || strings.Contains(out, "regs") {
		t.Errorf("OpenCL columns only:\n%s", out)
	}
	out, err = execute(t, "kernels", "stream", "--device", ids[0], "--occupancy", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list []opJSON
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) == 0 {
		t.Fatalf("kernels --occupancy --json: %v\n%s", err, out)
	}
	for _, op := range list {
		if op.LaunchError != "" || op.Shape == "" || len(op.Launches) == 0 {
			t.Errorf("%s: shape %q, launches %+v, error %q", op.Name, op.Shape, op.Launches, op.LaunchError)
			continue
		}
		for _, l := range op.Launches {
			if l.Kernel == "" || len(l.Block) != 1 || l.MaxWorkGroupSize <= 0 || l.Limiter != "" {
				t.Errorf("%s: launch %+v", op.Name, l)
			}
		}
	}
	// Without --occupancy, no launch fields.
	out, err = execute(t, "kernels", "stream", "--device", ids[0], "--json")
	if err != nil || strings.Contains(out, `"launches"`) || strings.Contains(out, `"launch_shape"`) {
		t.Errorf("kernels --json without --occupancy: %v\n%s", err, out)
	}
}
