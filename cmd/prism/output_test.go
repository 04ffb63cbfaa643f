package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/spf13/cobra"
)

// TestOutputFlagsExclusive: formats exclude each other, with a usage error that names the
// flags as they were given, before any device is looked at; --markdown and --md are one.
func TestOutputFlagsExclusive(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in the usage error
	}{
		{[]string{"bench", "--json", "--md"}, "--json and --md exclude each other"},
		{[]string{"bench", "--csv", "--benchstat"}, "--csv and --benchstat exclude each other"},
		{[]string{"bench", "--json", "--csv", "--markdown"}, "--json, --csv and --markdown exclude each other"},
		{[]string{"bench", "--device", "cpu", "--all-devices"}, "--device and --all-devices exclude each other"},
		{[]string{"bench", "--portable", "--variant", "portable"}, "--portable and --variant exclude each other"},
		{[]string{"report", "x.json", "--md", "--benchstat"}, "--md and --benchstat exclude each other"},
		{[]string{"report", "x.json", "--json", "--html", "x.html"}, "--json and --html exclude each other"},
		{[]string{"report", "x.json", "--html", "x.html", "-o", "y.md"}, "--html names its own file"},
		{[]string{"bench", "--out", ""}, "--out needs a file name"},
		{[]string{"devices", "-o", ""}, "--out needs a file name"},
		{[]string{"compare", "a.json", "b.json", "--out="}, "--out needs a file name"},
		{[]string{"run", "stream/copy/float32", "--portable", "--variant", "portable"}, "--portable and --variant exclude each other"},
		{[]string{"kernels", "--csv"}, "unknown flag: --csv"},
		{[]string{"devices", "--markdown"}, "unknown flag: --markdown"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, err := execute(t, c.args...)
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want a usage error saying %q", err, c.want)
			}
		})
	}
	// Both spellings of one format are not two formats: the command goes on to read its
	// file, which is missing.
	if _, err := execute(t, "report", filepath.Join(t.TempDir(), "missing.json"), "--markdown", "--md"); err == nil || errors.As(err, new(usageError)) {
		t.Errorf("report --markdown --md: %v, want the error of the missing file", err)
	}
}

// testReport returns a small report of one verified, timed case, written to dir/name.
func testReport(t *testing.T, dir, name string) string {
	t.Helper()
	ms := time.Millisecond
	rep := &bench.Report{
		Schema: bench.SchemaVersion, Prism: "test", Date: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC),
		Config: bench.ConfigInfo{Count: 5, Warmup: 1, Seed: 1},
		Devices: []bench.DeviceReport{{
			Device:  engine.DeviceInfo{ID: "opencl:0:0", Name: "test device", Kind: engine.KindCPU},
			Backend: "opencl",
			Results: []bench.Result{{
				Case: "stream/copy/float32", Family: "stream", Type: "float32", Size: 1024, Shape: "n=1024",
				Variant: "portable", Verified: true, Bytes: 8192, GBs: 4,
				Stats: bench.Summarize([]time.Duration{2 * ms, 2 * ms, 3 * ms, 2 * ms, 2 * ms}),
			}},
		}},
	}
	path := filepath.Join(dir, name)
	saveReport(t, path, rep)
	return path
}

// tempFiles lists the temporary files writeFileAtomic left in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			left = append(left, e.Name())
		}
	}
	return left
}

// TestOut: --out (-o) writes each command's output to the file, the same as it prints
// without it, and nothing on stdout.
func TestOut(t *testing.T) {
	dir := t.TempDir()
	rep := testReport(t, dir, "run.json")
	cases := []struct {
		name   string
		args   []string
		want   string // in the file
		device bool   // needs an OpenCL device
	}{
		{"kernels", []string{"kernels", "stream"}, "stream/triad/float32", false},
		{"kernels json", []string{"kernels", "--json"}, `"name": "gemm/nn/float32"`, false},
		{"report", []string{"report", rep}, "stream/copy/float32", false},
		{"report markdown", []string{"report", rep, "--md"}, "| stream/copy/float32 |", false},
		{"report csv", []string{"report", rep, "--csv"}, "stream/copy/float32,", false},
		{"report benchstat", []string{"report", rep, "--benchstat"}, "/size=1024/", false},
		{"compare json", []string{"compare", rep, rep, "--json"}, `"verdict"`, false},
		{"devices", []string{"devices", "--json"}, `"devices"`, true},
		{"run", []string{"run", "stream/copy/float32", "--size", "1K", "--count", "2", "--json"}, `"case": "stream/copy/float32"`, true},
		{"bench", []string{"bench", "--ops", "stream/copy/float32", "--sizes", "1K", "--quick", "--count", "2", "--csv", "-q"}, "stream/copy/float32,", true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if c.device {
				ids := enginetest.DeviceIDs(t, "opencl")
				if args[0] == "run" || args[0] == "bench" {
					args = append(args, "--device", ids[0])
				}
			}
			flag := []string{"--out", "-o"}[i%2]
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".out")
			stdout, err := execute(t, append(args, flag, path)...)
			if err != nil {
				t.Fatal(err)
			}
			if stdout != "" {
				t.Errorf("%s FILE: stdout got %q, want nothing", flag, stdout)
			}
			raw, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(raw), c.want) {
				t.Errorf("the file lacks %q (%v):\n%s", c.want, err, raw)
			}
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != 0o644 {
				t.Errorf("a new file has mode %v, want 0644", fi.Mode().Perm())
			}
			if !c.device { // the same bytes as on stdout (a device's timings vary)
				if want, _ := execute(t, args...); string(raw) != want {
					t.Errorf("the file differs from stdout:\n%s\nstdout:\n%s", raw, want)
				}
			}
		})
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestOutFailure: a write that fails, or output that fails before it is written, leaves no
// file and no temporary file, and an existing file as it was.
func TestOutFailure(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.txt")
	if err := os.WriteFile(existing, []byte("before\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "a-directory")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	printFails := func(w io.Writer) error {
		io.WriteString(w, "half of it")
		return errors.New("printing failed")
	}
	printOK := func(w io.Writer) error { _, err := io.WriteString(w, "after\n"); return err }
	for _, c := range []struct {
		name  string
		out   string
		print func(io.Writer) error
		check func(t *testing.T)
	}{
		{"missing directory", filepath.Join(dir, "no-such-dir", "out.json"), printOK, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "no-such-dir")); !os.IsNotExist(err) {
				t.Errorf("the missing directory was created: %v", err)
			}
		}},
		{"over a directory", sub, printOK, func(t *testing.T) {
			if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
				t.Errorf("the directory was replaced: %v", err)
			}
		}},
		{"printing fails", filepath.Join(dir, "new.txt"), printFails, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
				t.Errorf("a file was written: %v", err)
			}
		}},
		{"printing fails over a file", existing, printFails, func(t *testing.T) {
			if raw, err := os.ReadFile(existing); err != nil || string(raw) != "before\n" {
				t.Errorf("the existing file changed: %q, %v", raw, err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &outputFlags{out: c.out}
			if err := o.write(&cobra.Command{}, c.print); err == nil {
				t.Error("no error")
			}
			c.check(t)
			if left := tempFiles(t, dir); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
	// A successful write replaces the file whole and keeps its mode.
	o := &outputFlags{out: existing}
	var stdout bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetOut(&stdout)
	if err := o.write(cmd, printOK); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(existing); err != nil || string(raw) != "after\n" || stdout.Len() > 0 {
		t.Errorf("file %q (%v), stdout %q; want the new contents in the file only", raw, err, stdout.String())
	}
	if fi, err := os.Stat(existing); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the replaced file's mode: %v, %v; want 0600 as before", fi.Mode(), err)
	}
	// Through the CLI: a report that cannot be read leaves no file.
	path := filepath.Join(dir, "report.md")
	if _, err := execute(t, "report", filepath.Join(dir, "missing.json"), "--md", "-o", path); err == nil {
		t.Error("report of a missing file: no error")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("report of a missing file wrote %s: %v", path, err)
	}
}
