package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine/enginetest"
)

// TestBenchFractionsUsage: --fractions that cannot split the work (all zero, NaN, not
// summing to 1, negative, above 1, empty) are a usage error (exit 2) before any device is
// looked for: the devices named do not exist, and the fractions are the error, no report
// is written. A count that is not the number of devices is a usage error once the
// devices are known, before any of them is opened.
func TestBenchFractionsUsage(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "split.json")
	for _, tc := range []struct{ fractions, want string }{
		{"0,0", "--fractions: bench: fractions 0,0 sum to 0, not 1"},
		{"NaN,NaN", "--fractions: bench: fraction NaN (share 1 of 2) is not a share of the work, from 0 to 1"},
		{"0.3,0.3", "--fractions: bench: fractions 0.3,0.3 sum to 0.6, not 1"},
		{"-0.5,1.5", "fraction -0.5 (share 1 of 2)"},
		{"Inf,0", "fraction +Inf (share 1 of 2)"},
		{"", `invalid argument "" for "--fractions" flag`},
	} {
		args := []string{"bench", "-q", "--split", "--ops", "reduce/sum/float32", "--device", "nosuch:0,nosuch:1", "--fractions", tc.fractions, "--json", "-o", out}
		_, err := execPrism(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--fractions %q: %v; want %q", tc.fractions, err, tc.want)
		}
		if code := run(context.Background(), args); code != exitUsage {
			t.Errorf("--fractions %q: exit %d, want %d", tc.fractions, code, exitUsage)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--fractions %q: a report was written", tc.fractions)
		}
	}

	ids := enginetest.DeviceIDs(t, "opencl")
	if len(ids) < 2 {
		t.Skipf("the count of fractions needs two OpenCL devices; %d here", len(ids))
	}
	args := []string{"bench", "-q", "--split", "--ops", "reduce/sum/float32", "--device", ids[0] + "," + ids[1], "--fractions", "1", "--json", "-o", out}
	want := "--fractions for " + ids[0] + ", " + ids[1] + ": bench: 1 fractions (1) for 2 devices"
	if _, err := execPrism(t, args...); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("one fraction for two devices: %v; want %q", err, want)
	}
	if code := run(context.Background(), args); code != exitUsage {
		t.Errorf("one fraction for two devices: exit %d, want %d", code, exitUsage)
	}
}

// TestBenchPlacementFlag: --placement takes host or sharded, with --split only, and says
// what it wants otherwise, before any device is opened.
func TestBenchPlacementFlag(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--split --placement nowhere", `--placement "nowhere": want host or sharded`},
		{"--placement sharded", "--placement applies to --split"},
	} {
		args := append([]string{"bench", "-q", "--ops", "map/axpy/float32", "--device", "nosuch:0,nosuch:1"}, strings.Fields(c.args)...)
		_, err := execPrism(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("prism %s: %v; want an error saying %q", strings.Join(args, " "), err, c.want)
		}
		if code := run(context.Background(), args); code != exitUsage {
			t.Errorf("prism %s: exit %d, want %d", strings.Join(args, " "), code, exitUsage)
		}
	}
}
