package main

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/regress"
	"github.com/prism-compute/prism/engine"
)

// checkCase is a case of a synthetic run: its level, or a failure.
type checkCase struct {
	name  string
	level time.Duration
	err   string
}

// syntheticRun returns a report of one PoCL device of driver version driver, on commit,
// with 10 samples of each case around its level (run-to-run spread 1%, within a run 0.5%).
func syntheticRun(rng *rand.Rand, commit, driver string, date time.Time, cases ...checkCase) *bench.Report {
	r := &bench.Report{Schema: 1, Prism: "devel", Commit: commit, Date: date, Host: "ci", GOOS: "linux", GOARCH: "amd64",
		HostCPU: "Example CPU", Env: map[string]string{"POCL_WORK_GROUP_SPECIALIZATION": "0"}}
	d := bench.DeviceReport{Backend: "opencl"}
	d.Device = engine.DeviceInfo{Name: "pthread-example", Vendor: "Example", Platform: "Portable Computing Language", Kind: engine.KindCPU,
		DriverVersion: driver, ComputeUnits: 2, ClockMHz: 2000}
	d.Device.ID = "opencl:0:0"
	for _, c := range cases {
		res := bench.Result{Case: c.name, Size: 1 << 20, Variant: "portable"}
		if c.err != "" {
			res.Err = c.err
		} else {
			run := math.Exp(0.01 * rng.NormFloat64())
			s := make([]time.Duration, 10)
			for i := range s {
				s[i] = time.Duration(float64(c.level) * run * math.Exp(0.005*rng.NormFloat64()))
			}
			res.Verified, res.Stats = true, bench.Summarize(s)
		}
		d.Results = append(d.Results, res)
	}
	r.Devices = []bench.DeviceReport{d}
	return r
}

// checkStore records, in a store of the test's own: runs 1-8 of one build (triad at 1ms,
// scale at 2ms), run 9 of another where triad is 20% slower, scale as before, copy new and
// add failed (present at 1ms in the earlier runs), and run 10 on another driver.
func checkStore(t *testing.T) string {
	t.Helper()
	path := useStore(t)
	s := openTestStore(t, path)
	rng := rand.New(rand.NewPCG(9, 9))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	record := func(r *bench.Report) {
		if _, err := s.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		record(syntheticRun(rng, "aaaa1111", "1.0", start.Add(time.Duration(i)*time.Hour),
			checkCase{name: "stream/triad/float32", level: time.Millisecond}, checkCase{name: "stream/scale/float32", level: 2 * time.Millisecond},
			checkCase{name: "stream/add/float32", level: time.Millisecond}))
	}
	record(syntheticRun(rng, "bbbb2222", "1.0", start.Add(9*time.Hour),
		checkCase{name: "stream/triad/float32", level: 1200 * time.Microsecond}, checkCase{name: "stream/scale/float32", level: 2 * time.Millisecond},
		checkCase{name: "stream/copy/float32", level: time.Millisecond}, checkCase{name: "stream/add/float32", err: "kernels: out of resources"}))
	record(syntheticRun(rng, "bbbb2222", "2.0", start.Add(10*time.Hour),
		checkCase{name: "stream/triad/float32", level: 2 * time.Millisecond}))
	if err := s.SetBaseline(context.Background(), "main", 1); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckVerdicts(t *testing.T) {
	checkStore(t)
	out, errOut, err := prismOutput(t, "check", "--against", "baseline:main", "--run", "9", "--json")
	if err != nil {
		t.Fatalf("check: %v\n%s", err, errOut)
	}
	var rep checkReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Run != "run 9" || rep.Against != "baseline:main (run 1)" || rep.Alpha != 0.05 || rep.NotRun != 0 {
		t.Errorf("header %+v", rep)
	}
	want := map[string]regress.Verdict{"stream/triad/float32": regress.Regression, "stream/scale/float32": regress.NoChange,
		"stream/copy/float32": regress.Missing, "stream/add/float32": regress.Failed}
	if len(rep.Series) != len(want) {
		t.Fatalf("%d series, want %d:\n%s", len(rep.Series), len(want), out)
	}
	for _, r := range rep.Series {
		if r.Verdict != want[r.Case] {
			t.Errorf("%s: %q (%s), want %q", r.Case, r.Verdict, r.Note, want[r.Case])
		}
		if r.Verdict != regress.Regression && r.Verdict != regress.NoChange {
			continue
		}
		// The noise is learnt from the 8 runs of build aaaa1111 (run 9 is the one checked).
		if r.Source != regress.SourceLearnt || r.NoiseRuns != 8 || r.Threshold < regress.MinThreshold || r.Threshold > 0.1 || r.P == nil || r.N1 != 10 {
			t.Errorf("%s: threshold %v (%s, %d runs), p %v, n %d", r.Case, r.Threshold, r.Source, r.NoiseRuns, r.P, r.N1)
		}
		if r.Case == "stream/triad/float32" && (math.Abs(*r.Change-0.2) > 0.06 || *r.P > 0.001) {
			t.Errorf("triad: change %v p %v, want about +20%%, p < 0.001", *r.Change, *r.P)
		}
	}
	if rep.Counts[regress.Regression] != 1 || rep.Counts[regress.NoChange] != 1 {
		t.Errorf("counts %v", rep.Counts)
	}

	// The table: every column, and the summary.
	out, _, err = prismOutput(t, "check", "--against", "main", "--run", "9")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"run 9 against main (run 1)", "BASELINE", "NEW", "CHANGE", "THRESHOLD", "VERDICT", "(8 runs)", "regression",
		"failed (failed: kernels: out of resources)", "missing (not in the reference)", "1 regression, 1 no change, 1 missing, 1 failed"} {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}

	// A fixed threshold above the change: no regression.
	out, _, err = prismOutput(t, "check", "--against", "1", "--run", "9", "--threshold", "0.5", "--json")
	rep = checkReport{}
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("--threshold 0.5: %v\n%s", err, out)
	}
	if rep.Counts[regress.Regression] != 0 || rep.Series[0].Source != regress.SourceFixed || rep.Series[0].Threshold != 0.5 {
		t.Errorf("--threshold 0.5: %+v", rep.Series[0])
	}

	// Runs of one build: no change, and the gate passes.
	out, _, err = prismOutput(t, "check", "--against", "3", "--run", "4", "--fail-on-regression", "--json")
	rep = checkReport{}
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil || rep.Counts[regress.NoChange] != 3 {
		t.Errorf("A/A: %v, counts %v", err, rep.Counts)
	}
}

func TestCheckGate(t *testing.T) {
	checkStore(t)
	// A regression and a failed case: exit code 7, and the message lists them.
	_, _, err := prismOutput(t, "check", "--against", "baseline:main", "--run", "9", "--fail-on-regression")
	var re regressionError
	if !errors.As(err, &re) {
		t.Fatalf("gate: %v, want a regression error", err)
	}
	for _, w := range []string{"run 9 against baseline:main (run 1): 1 regressions, 1 failed", "opencl:0:0 stream/triad/float32 (portable) 1M: +", "stream/add/float32 (portable) 1M: failed: kernels: out of resources"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("gate error lacks %q:\n%v", w, err)
		}
	}
	if code := runRoot(context.Background(), newRootCmd(), []string{"check", "--against", "main", "--run", "9", "--fail-on-regression", "-o", filepath.Join(t.TempDir(), "check.txt")}); code != exitRegression || exitRegression != 7 {
		t.Errorf("exit code %d, want 7", code)
	}

	// Another driver: not comparable, with what differs; as a gate, it checked nothing.
	out, errOut, err := prismOutput(t, "check", "--against", "main", "--fail-on-regression", "--json")
	if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "no series could be compared (1 not comparable, 0 missing)") {
		t.Errorf("gate across drivers: %v", err)
	}
	var rep checkReport
	if json.Unmarshal([]byte(out), &rep) != nil || len(rep.Series) != 1 || rep.Series[0].Verdict != regress.NotComparable ||
		len(rep.Series[0].Differs) != 1 || rep.Series[0].Differs[0] != `driver: "1.0" -> "2.0"` || rep.NotRun != 2 {
		t.Errorf("across drivers: %+v\n%s", rep, out)
	}
	if !strings.Contains(errOut, "note: opencl:0:0 is not like with like") {
		t.Errorf("across drivers: no note on stderr: %q", errOut)
	}
	if code := runRoot(context.Background(), newRootCmd(), []string{"check", "--against", "main", "--fail-on-regression", "-o", filepath.Join(t.TempDir(), "x")}); code != exitError {
		t.Errorf("nothing comparable: exit code %d, want %d", code, exitError)
	}
	// Without --fail-on-regression: exit code 0 whatever was found.
	if _, _, err := prismOutput(t, "check", "--against", "main", "--run", "9"); err != nil {
		t.Errorf("without --fail-on-regression: %v", err)
	}
}

func TestCheckUsage(t *testing.T) {
	checkStore(t)
	for _, args := range [][]string{
		{"check"},
		{"check", "--against", "main", "--threshold", "1"},
		{"check", "--against", "main", "--threshold", "-0.1"},
		{"check", "--against", "main", "--threshold", "NaN"},
		{"check", "--against", "main", "--alpha", "0"},
		{"check", "--against", "main", "extra"},
	} {
		if code := runRoot(context.Background(), newRootCmd(), args); code != exitUsage {
			t.Errorf("%s: exit code %d, want %d", strings.Join(args, " "), code, exitUsage)
		}
	}
	if _, _, err := prismOutput(t, "check", "--against", "1", "--run", "1"); err == nil || !strings.Contains(err.Error(), "name the same run, 1") {
		t.Errorf("the same run twice: %v", err)
	}
	if _, _, err := prismOutput(t, "check", "--against", "nightly"); err == nil || !strings.Contains(err.Error(), "--against: ") {
		t.Errorf("an unknown baseline: %v", err)
	}
	if _, _, err := prismOutput(t, "--no-store", "check", "--against", "main"); err == nil {
		t.Errorf("check without a store: no error")
	}
}

// TestCheckGateNamesShape: a regression of a GEMM shape is named by its shape, not by its
// size, which another shape may share.
func TestCheckGateNamesShape(t *testing.T) {
	change, p := 0.3, 0.001
	c := &checkReport{Series: []checkRow{
		{Device: deviceJSON{ID: "cuda:0"}, Case: "gemm/nn/bfloat16", Size: 8192 * 128, Dims: "8192x128x8192",
			Verdict: regress.Regression, Change: &change, P: &p, Threshold: 0.05},
		{Device: deviceJSON{ID: "cuda:0"}, Case: "gemm/nn/bfloat16", Size: 1 << 20, Verdict: regress.Failed, Note: "not verified"},
	}}
	err := c.gate()
	if err == nil || !strings.Contains(err.Error(), "gemm/nn/bfloat16 8192x128x8192: +30.0% slower") || !strings.Contains(err.Error(), "gemm/nn/bfloat16 1M: not verified") {
		t.Errorf("gate: %v; want the shape of the first and the size of the second", err)
	}
}
