package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/platform"
)

// complete runs cobra's hidden __complete command, as a shell's completion script does,
// and returns the candidates (without descriptions) and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"__complete"}, args...))
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("__complete %q: %v\n%s", args, err, errOut.String())
	}
	var names []string
	directive := ""
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(line, ":") {
			directive = line
			continue
		}
		name, _, _ := strings.Cut(line, "\t")
		names = append(names, name)
	}
	return names, directive
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCompleteOps checks the completion of operation names: run's and tune's arguments
// (an operation given is not offered again), bench's comma-separated --ops (the last item
// completed behind the others), and kernels' family argument.
func TestCompleteOps(t *testing.T) {
	got, dir := complete(t, "run", "gemm/nn/float")
	if !contains(got, "gemm/nn/float32") || !contains(got, "gemm/nn/float64") || dir != ":4" {
		t.Errorf("run gemm/nn/float: %q %s, want gemm/nn/float32 and float64, no files (:4)", got, dir)
	}
	for _, c := range got {
		if !strings.HasPrefix(c, "gemm/nn/float") {
			t.Errorf("run gemm/nn/float offers %q", c)
		}
	}
	if got, _ := complete(t, "run", "stream/copy/float32", "stream/copy/float"); contains(got, "stream/copy/float32") || !contains(got, "stream/copy/float64") {
		t.Errorf("run stream/copy/float32 stream/copy/float: %q", got)
	}
	if got, _ := complete(t, "tune", "sca"); !contains(got, "scan") || !contains(got, "scan/inclusive/float32") {
		t.Errorf("tune sca: %q, want the family scan and its operations", got)
	}
	if _, dir := complete(t, "tune", "my"); dir != ":0" {
		t.Errorf("tune my: directive %s, want files (:0) where no operation matches", dir)
	}
	got, _ = complete(t, "bench", "--ops", "stream/copy/float32,stream/dot/f")
	if !contains(got, "stream/copy/float32,stream/dot/float32") || len(got) != 2 {
		t.Errorf("bench --ops stream/copy/float32,stream/dot/f: %q", got)
	}
	if got, _ := complete(t, "kernels", "ge"); len(got) != 1 || got[0] != "gemm" {
		t.Errorf("kernels ge: %q, want gemm", got)
	}
	if got, _ := complete(t, "kernels", "gemm", ""); len(got) != 0 {
		t.Errorf("kernels gemm <TAB>: %q, want nothing (one family at most)", got)
	}
}

// TestCompleteDevices checks --device: the IDs of the devices found, backends and classes,
// for every command that has the flag.
func TestCompleteDevices(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	for _, cmd := range []string{"run", "bench", "kernels", "exec", "tune"} {
		got, dir := complete(t, cmd, "--device", "")
		for _, want := range append([]string{"opencl", "gpu", "cpu", "accelerator"}, ids...) {
			if !contains(got, want) {
				t.Errorf("%s --device: %q lacks %s", cmd, got, want)
			}
		}
		if dir != ":4" {
			t.Errorf("%s --device: directive %s, want :4", cmd, dir)
		}
	}
	got, _ := complete(t, "bench", "--device", ids[0]+",op")
	if contains(got, ids[0]+","+ids[0]) || !contains(got, ids[0]+",opencl") {
		t.Errorf("bench --device %s,op: %q", ids[0], got)
	}
}

// TestCompleteDevicesTimeout checks that a discovery that hangs costs the completion its
// time limit, and that backends and classes are still offered.
func TestCompleteDevicesTimeout(t *testing.T) {
	saved, savedTimeout := discoverForCompletion, completionTimeout
	defer func() { discoverForCompletion, completionTimeout = saved, savedTimeout }()
	block := make(chan struct{})
	defer close(block)
	discoverForCompletion = func(ctx context.Context) (*platform.Discovery, error) {
		<-block // a driver call that does not return, whatever the context says
		return nil, nil
	}
	completionTimeout = 100 * time.Millisecond
	start := time.Now()
	got, _ := complete(t, "run", "--device", "")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("completion took %v with a discovery that hangs", d)
	}
	if !contains(got, "cpu") || !contains(got, "gpu") || contains(got, "opencl:0:0") {
		t.Errorf("completion with a discovery that hangs: %q, want the classes and no ID", got)
	}
}

// TestCompletionShells: 'prism completion tcsh' (a shell without a script) is a usage
// error, exit code 2, that lists the shells; each listed shell writes its script, and
// 'prism completion' alone prints the help.
func TestCompletionShells(t *testing.T) {
	_, err := execPrism(t, "completion", "tcsh")
	if err == nil || !strings.Contains(err.Error(), `no script for the shell "tcsh": prism completion takes bash, zsh, fish, powershell`) {
		t.Errorf("completion tcsh: %v", err)
	}
	if code := run(context.Background(), []string{"completion", "tcsh"}); code != exitUsage {
		t.Errorf("completion tcsh: exit %d, want %d", code, exitUsage)
	}
	for _, sh := range completionShells {
		for _, args := range [][]string{{"completion", sh}, {"completion", sh, "--no-descriptions"}} {
			out, err := execPrism(t, args...)
			if err != nil || !strings.Contains(out, "prism") || len(out) < 500 {
				t.Errorf("%s: %v, %d bytes", strings.Join(args, " "), err, len(out))
			}
		}
	}
	out, err := execPrism(t, "completion")
	if err != nil || !strings.Contains(out, "Usage:") {
		t.Errorf("completion alone: %v\n%s", err, out)
	}
}
