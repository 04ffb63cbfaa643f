package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/platform"
)

func TestUsageExitCode(t *testing.T) {
	if code := run(context.Background(), []string{"devices", "--no-such-flag"}); code != exitUsage {
		t.Errorf("unknown flag: exit %d, want %d", code, exitUsage)
	}
	if code := run(context.Background(), []string{"bench", "--count", "0"}); code != exitUsage {
		t.Errorf("--count 0: exit %d, want %d", code, exitUsage)
	}
	if code := run(context.Background(), []string{"bench", "--device", "vulkan:9"}); code != exitUnavailable {
		t.Errorf("unknown device: exit %d, want %d", code, exitUnavailable)
	}
}

// TestDevicesJSON checks that `prism devices --json` is valid JSON listing the OpenCL
// devices with their facts.
func TestDevicesJSON(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"devices", "--json"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Devices []struct {
			ID           string `json:"id"`
			Name         string `json:"name"`
			Kind         string `json:"kind"`
			Backend      string `json:"backend"`
			ComputeUnits int    `json:"compute_units"`
			GlobalMem    int64  `json:"global_mem_bytes"`
		} `json:"devices"`
		Backends []struct {
			Name string `json:"name"`
		} `json:"backends"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	seen := map[string]bool{}
	for _, d := range got.Devices {
		seen[d.ID] = true
		if d.Name == "" || d.Kind == "" || d.Backend == "" || d.ComputeUnits <= 0 || d.GlobalMem <= 0 {
			t.Errorf("device %s lacks facts: %+v", d.ID, d)
		}
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("%s missing from devices --json", id)
		}
	}
}

// TestVersion checks that prism --version prints the module version, the commit line, the
// Go release and the backends compiled in, and that prism version prints the same.
func TestVersion(t *testing.T) {
	out, err := execute(t, "--version")
	if err != nil {
		t.Fatal(err)
	}
	if cmd, err := execute(t, "version"); err != nil || cmd != out {
		t.Errorf("prism version = %q, %v; want what --version prints, %q", cmd, err, out)
	}
	if _, err := execute(t, "version", "extra"); err == nil {
		t.Error("prism version extra: no error, want one for the argument")
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{"prism ", "commit:   ", "go:       go1.", "backends: "}
	if len(lines) != len(want) {
		t.Fatalf("--version printed %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("--version line %d = %q, want it to open with %q", i+1, lines[i], w)
		}
	}
	if !strings.Contains(lines[2], runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("--version: %q lacks the platform", lines[2])
	}
	for _, b := range []string{"opencl", "cuda"} {
		if !strings.Contains(lines[3], b) {
			t.Errorf("--version: %q lacks the %s backend", lines[3], b)
		}
	}
}

// TestDevicesUnavailable checks the line of a backend that found nothing: its name and
// where to learn why, and its whole error with --verbose.
func TestDevicesUnavailable(t *testing.T) {
	long := fmt.Errorf("cuda: cannot load the CUDA driver library (tried libcuda.so.1: %s): %w",
		strings.Repeat("no such file ", 20), engine.ErrUnavailable)
	dis := &platform.Discovery{Backends: []platform.Backend{{Name: "opencl", Devices: 1}, {Name: "cuda", Err: long}}}
	var out, errOut bytes.Buffer
	writeDevicesTable(&out, &errOut, dis, false)
	if got := errOut.String(); got != "cuda: no device (--verbose says why)\n" {
		t.Errorf("without --verbose: %q", got)
	}
	errOut.Reset()
	writeDevicesTable(&out, &errOut, dis, true)
	if got := errOut.String(); got != long.Error()+"\n" {
		t.Errorf("with --verbose: %q, want the error", got)
	}
	// Through the command: --verbose is a flag of every command.
	if _, err := execute(t, "devices", "--verbose", "--json"); err != nil && !errors.Is(err, platform.ErrNoDevice) {
		t.Errorf("devices --verbose: %v", err)
	}
}

// TestKernelsWidth checks that prism kernels fits 120 columns, with the implementation
// notes of the tunables only under --verbose.
func TestKernelsWidth(t *testing.T) {
	const note = `(not "T": NVRTC's built-in headers`
	for _, args := range [][]string{{"kernels"}, {"kernels", "--verbose"}, {"kernels", "histogram"}, {"kernels", "gemm"}} {
		out, err := execute(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > listingWidth {
				t.Errorf("%s: line %d has %d columns: %s", strings.Join(args, " "), i+1, n, line)
			}
		}
		if args[0] == "kernels" && len(args) == 1 {
			if strings.Contains(out, note) {
				t.Errorf("prism kernels prints the implementation note %s...", note)
			}
			if !strings.Contains(out, "Tunables (-D): ELEM WG VW ('prism kernels stream' explains them)") {
				t.Errorf("prism kernels does not name stream's tunables")
			}
			if !strings.Contains(out, "  size: n elements per array\n") {
				t.Errorf("prism kernels does not say once what the size of the stream family means")
			}
		}
		if len(args) == 2 && args[1] == "--verbose" && !strings.Contains(out, note) {
			t.Errorf("prism kernels --verbose lacks the implementation note %s...", note)
		}
	}
}

// TestWrapText checks the wrapping of the listing: lines within the width, words kept
// whole where they fit, a word longer than a line cut.
func TestWrapText(t *testing.T) {
	cases := []struct {
		s, first, next string
		width          int
		want           string
	}{
		{"a bb ccc dddd", "", "  ", 6, "a bb\n  ccc\n  dddd\n"},
		{"short", "> ", "  ", 20, "> short\n"},
		{"abcdefghij", "", "", 4, "abcd\nefgh\nij\n"},
		{"", "  ", "  ", 10, "\n"},
	}
	for _, c := range cases {
		if got := wrapText(c.s, c.first, c.next, c.width); got != c.want {
			t.Errorf("wrapText(%q, %q, %q, %d) = %q, want %q", c.s, c.first, c.next, c.width, got, c.want)
		}
	}
	if got := tunableNames("Tunables (-D):\n  ELEM  element type  default float\n        (not T)\n  WG is not a tunable\n  RADIX_BITS  bits\n  Local memory: 4 bytes"); strings.Join(got, " ") != "ELEM RADIX_BITS" {
		t.Errorf("tunableNames = %q, want ELEM RADIX_BITS", got)
	}
}

// TestVerboseTraces checks that --verbose turns the trace on as PRISM_TRACE=1 does, and
// leaves a PRISM_TRACE the user set as it was.
func TestVerboseTraces(t *testing.T) {
	t.Setenv("PRISM_TRACE", "")
	if _, err := execute(t, "kernels", "stream"); err != nil {
		t.Fatal(err)
	}
	if v := os.Getenv("PRISM_TRACE"); v != "" {
		t.Fatalf("without --verbose PRISM_TRACE is %q", v)
	}
	if _, err := execute(t, "kernels", "stream", "--verbose"); err != nil {
		t.Fatal(err)
	}
	if !engine.Tracing() {
		t.Errorf("--verbose: the trace is off (PRISM_TRACE=%q)", os.Getenv("PRISM_TRACE"))
	}
	t.Setenv("PRISM_TRACE", "0")
	if _, err := execute(t, "kernels", "stream", "--verbose"); err != nil {
		t.Fatal(err)
	}
	if v := os.Getenv("PRISM_TRACE"); v != "0" {
		t.Errorf("--verbose replaced the user's PRISM_TRACE=0 with %q", v)
	}
}
