package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

// syntheticReport returns a report of one device with a timed case per name: eight runs
// of about us microseconds each.
func syntheticReport(id string, us float64, cases ...string) *bench.Report {
	d := bench.DeviceReport{Backend: "opencl"}
	d.Device.ID, d.Device.Name = id, "Test CPU"
	for _, c := range cases {
		s := make([]time.Duration, 8)
		for i := range s {
			s[i] = time.Duration((us + float64(i%3)) * float64(time.Microsecond))
		}
		d.Results = append(d.Results, bench.Result{Case: c, Family: "stream", Type: "float32", Size: 4096, Verified: true,
			Stats: bench.Summarize(s), Bytes: 1 << 15, GBs: 10, Bound: bench.BoundMemory, Fraction: 0.1})
	}
	return &bench.Report{Schema: bench.SchemaVersion, Prism: "devel", Host: "test", Config: bench.ConfigInfo{Count: 8}, Devices: []bench.DeviceReport{d}}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadersRejectNonReports: report, compare and plot refuse null, {}, an endless file
// and a file above --max-input, with an error naming the file (exit 1); a bad --max-input
// is a usage error (exit 2).
func TestReadersRejectNonReports(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	saveReport(t, good, syntheticReport("opencl:0:0", 100, "stream/copy/float32"))
	null, empty := writeFile(t, dir, "null.json", "null\n"), writeFile(t, dir, "empty.json", "{}\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"report null", []string{"report", null}, "null.json: bench: not a report: the JSON is null", exitError},
		{"report {}", []string{"report", empty}, `empty.json: bench: not a report: neither "schema" nor "devices"`, exitError},
		{"report /dev/zero", []string{"report", "/dev/zero"}, "/dev/zero is a character device, not a regular file", exitError},
		{"report above --max-input", []string{"report", "--max-input", "64", good}, "larger than 64 B, the most read: report too large (raise the limit with --max-input SIZE)", exitError},
		{"report --max-input raised", []string{"report", "--max-input", "1M", good}, "", exitOK},
		{"report bad --max-input", []string{"report", "--max-input", "lots", good}, "--max-input", exitUsage},
		{"compare null", []string{"compare", good, null}, "null.json", exitError},
		{"compare {}", []string{"compare", empty, good}, "empty.json", exitError},
		{"compare above --max-input", []string{"compare", "--max-input", "64", good, good}, "--max-input", exitError},
		{"plot {}", []string{"plot", empty, "-o", filepath.Join(dir, "x.svg")}, "empty.json", exitError},
		{"plot above --max-input", []string{"plot", "--max-input", "64", good, "-o", filepath.Join(dir, "x.svg")}, "--max-input", exitError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := execPrism(t, tc.args...)
			if tc.want == "" {
				if err != nil {
					t.Errorf("error %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if code := run(context.Background(), tc.args); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestCompareThresholdValidated: a threshold or alpha that makes the verdicts meaningless
// is a usage error (exit 2); --threshold Inf once hid a 10x slowdown.
func TestCompareThresholdValidated(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	saveReport(t, a, syntheticReport("opencl:0:0", 100, "stream/copy/float32"))
	for _, args := range [][]string{
		{"--threshold", "NaN"}, {"--threshold", "Inf"}, {"--threshold", "+Inf"}, {"--threshold", "-0.1"}, {"--threshold", "1"}, {"--threshold", "1e300"},
		{"--alpha", "NaN"}, {"--alpha", "0"}, {"--alpha", "1"}, {"--alpha", "Inf"},
	} {
		if code := run(context.Background(), append(append([]string{"compare"}, args...), a, a)); code != exitUsage {
			t.Errorf("compare %s: exit %d, want %d", strings.Join(args, " "), code, exitUsage)
		}
	}
	if code := run(context.Background(), []string{"compare", "--threshold", "0.5", "--alpha", "0.01", a, a}); code != exitOK {
		t.Errorf("valid flags: exit %d", code)
	}
}

// TestCompareGate: --fail-on-regression fails (exit 1, saying why) when a case of the old
// report is missing from the new one, failed there, differs from the reference, has no
// valid time, or the new report has no results; and passes a clean comparison.
func TestCompareGate(t *testing.T) {
	dir := t.TempDir()
	cases := []string{"stream/copy/float32", "stream/scale/float32", "stream/triad/float32"}
	old := filepath.Join(dir, "old.json")
	saveReport(t, old, syntheticReport("opencl:0:0", 100, cases...))
	doctor := func(name string, f func(r *bench.Report)) string {
		r := syntheticReport("opencl:0:0", 100, cases...)
		f(r)
		p := filepath.Join(dir, name+".json")
		saveReport(t, p, r)
		return p
	}
	res := func(r *bench.Report) []bench.Result { return r.Devices[0].Results }
	for _, tc := range []struct {
		name string
		new  string
		want string
	}{
		{"every case failed", doctor("failed", func(r *bench.Report) {
			for i := range res(r) {
				res(r)[i].Err, res(r)[i].Verified = "setup: out of memory", false
			}
		}), "stream/copy/float32 4K: failed in the new report: setup: out of memory"},
		{"verification failed", doctor("mismatch", func(r *bench.Report) { res(r)[1].Err, res(r)[1].Mismatch = "differs", true }),
			"stream/scale/float32 4K: differs from the reference"},
		{"a case missing", doctor("missing", func(r *bench.Report) { r.Devices[0].Results = res(r)[:2] }),
			"stream/triad/float32 4K: missing from the new report"},
		{"no results", doctor("noresults", func(r *bench.Report) { r.Devices[0].Results = nil }), "the new report has no results"},
		{"invalid time", doctor("invalid", func(r *bench.Report) {
			res(r)[0].Stats = bench.Summarize([]time.Duration{0, 0, 0, 0})
		}), "stream/copy/float32 4K: invalid measurement: 4 of 4 device times are not positive"},
		{"ten times slower", doctor("slow", func(r *bench.Report) {
			for i := range res(r) {
				s := res(r)[i].Stats.Samples
				for j := range s {
					s[j] *= 10
				}
				res(r)[i].Stats = bench.Summarize(s)
			}
		}), "3 cases slower"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := execPrism(t, "compare", old, tc.new); err != nil {
				t.Errorf("without --fail-on-regression: %v", err)
			}
			_, err := execPrism(t, "compare", "--fail-on-regression", old, tc.new)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("--fail-on-regression: %v, want %q", err, tc.want)
			}
			if code := run(context.Background(), []string{"compare", "--fail-on-regression", old, tc.new}); code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
			}
		})
	}
	if _, err := execPrism(t, "compare", "--fail-on-regression", old, old); err != nil {
		t.Errorf("a report against itself: %v", err)
	}
}

// TestReportEscapesControls: escape sequences and bidirectional controls in a report's
// fields (device name, case, error, host) reach no output raw: not the table, Markdown,
// CSV, benchstat, HTML or compare.
func TestReportEscapesControls(t *testing.T) {
	dir := t.TempDir()
	rep := syntheticReport("opencl:0:0\x1b]0;owned\x07", 100, "stream/copy\x1b[2J/float32", "stream/\u202etxt.exe/float32")
	rep.Host = "host\x1b[31m"
	rep.Devices[0].Device.Name = "GPU\u2066\u202e\x9b31m"
	rep.Devices[0].Device.DriverVersion = "1.0\r\nforged line"
	rep.Devices[0].Results[1].Err = "failed\x1b[1A\x1b[2K: ok"
	p := filepath.Join(dir, "evil.json")
	saveReport(t, p, rep)
	for _, args := range [][]string{
		{"report", p}, {"report", "--markdown", p}, {"report", "--csv", p}, {"report", "--benchstat", p},
		{"report", "--html", "-", p}, {"compare", p, p},
	} {
		out, err := execPrism(t, append(args, "--out", filepath.Join(dir, "out"))...)
		if err != nil {
			if args[1] == "--html" { // --html names its own file
				out, err = execPrism(t, args...)
			}
			if err != nil {
				t.Fatalf("%s: %v", strings.Join(args, " "), err)
			}
		} else {
			b, err := os.ReadFile(filepath.Join(dir, "out"))
			if err != nil {
				t.Fatal(err)
			}
			out = string(b)
		}
		for _, r := range []rune{0x1b, 0x07, 0x9b, '\r', 0x202e, 0x2066} {
			if strings.ContainsRune(out, r) {
				t.Errorf("%s: %U reaches the output raw", strings.Join(args, " "), r)
			}
		}
		if !strings.Contains(out, `\x1b`) && !strings.Contains(out, `\u202e`) {
			t.Errorf("%s: the escapes are not shown:\n%s", strings.Join(args, " "), out)
		}
	}
}
