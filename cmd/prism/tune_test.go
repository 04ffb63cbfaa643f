package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine/enginetest"
)

// TestTune tunes the portable GEMM's tiles on the first OpenCL device: every candidate is
// verified and timed, the fastest is saved, and a later prism run reports it as tuned.
// --dry-run saves nothing; an op with no tunable variant there is a usage error.
func TestTune(t *testing.T) {
	t.Setenv("PRISM_CACHE_DIR", t.TempDir())
	ids := enginetest.DeviceIDs(t, "opencl")
	out, err := execute(t, "tune", "gemm/nn/float32", "--device", ids[0], "--size", "4K", "--count", "2", "--dry-run", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []tuneResult
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(got) != 1 || got[0].Variant != "portable" || got[0].Winner == "" || got[0].Saved || len(got[0].Candidates) < 2 {
		t.Fatalf("dry run: %+v; want one portable tuning, a winner among several candidates, not saved", got)
	}
	for _, c := range got[0].Candidates {
		if c.Skipped == "" && (!c.Verified || c.Stats.Median <= 0) {
			t.Errorf("candidate %s: verified %v, median %v, error %q", c.Tunables, c.Verified, c.Stats.Median, c.Err)
		}
	}
	run, err := execute(t, "run", "gemm/nn/float32", "--device", ids[0], "--size", "4K", "--count", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(run, "(tuned)") {
		t.Errorf("a dry run saved its winner: %s", run)
	}
	if _, err := execute(t, "tune", "gemm/nn/float32", "--device", ids[0], "--size", "4K", "--count", "2"); err != nil {
		t.Fatal(err)
	}
	run, err = execute(t, "run", "gemm/nn/float32", "--device", ids[0], "--size", "4K", "--count", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run, "(tuned)") {
		t.Errorf("prism run after prism tune does not report tuned tiles:\n%s", run)
	}
	_, err = execute(t, "tune", "stream/triad/float32", "--device", ids[0])
	var u usageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "no") {
		t.Errorf("tuning an op without tunables: %v; want a usage error", err)
	}
}

// TestUnsupportedExitCode checks that a variant the device cannot run exits 5, naming why.
func TestUnsupportedExitCode(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	if got := run(t.Context(), []string{"run", "gemm/nn/bfloat16", "--variant", "cuda-mma", "--device", ids[0], "--size", "1K"}); got != exitUnsupported {
		t.Errorf("prism run --variant cuda-mma on %s: exit %d, want %d", ids[0], got, exitUnsupported)
	}
}
