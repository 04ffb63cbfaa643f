package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/store"
	"github.com/prism-compute/prism/bench/userkernel"
	"github.com/prism-compute/prism/engine/enginetest"
)

// endlessKernel never returns: each work-item writes its global element forever (volatile,
// so that the loop is not optimized away).
const endlessKernel = `__kernel void spin(__global volatile int *out) {
	int i = 0;
	while (1) { out[get_global_id(0)] = i++; }
}
`

// spinKernel returns at once with -D SPIN=0 and never with -D SPIN=1.
const spinKernel = `__kernel void spin(__global volatile int *out) {
	int i = 0;
	do { out[get_global_id(0)] = i++; } while (SPIN);
}
`

// slowBuildKernel takes PoCL 3.1 minutes to compile: 4096 statements, unrolled by the
// preprocessor (A10, 1024 of them, took 11.8 s here; A12 107 s).
func slowBuildKernel() string {
	var b strings.Builder
	b.WriteString("#define A0 acc = acc * 1.0001f + (float)i; i ^= (i << 3) + 7;\n")
	for k := 1; k <= 12; k++ {
		fmt.Fprintf(&b, "#define A%d A%d A%d\n", k, k-1, k-1)
	}
	b.WriteString(`__kernel void slow(__global float *out) {
	float acc = 0.0f; int i = get_global_id(0);
	A12
	out[get_global_id(0)] = acc;
}
`)
	return b.String()
}

// writeKernel writes src to NAME in a directory of the test's and returns its path.
func writeKernel(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// signalPrism starts prism with args, waits for a line of stderr holding started and
// then for pause, sends sig and returns the exit code, the time from the signal to the
// exit, and stderr. The exit must come within hangBound: a first signal ends every long
// path (the 2 s the paths are held to is measured and logged, not asserted: a loaded test
// machine may take longer to start and end a child, and a path that hangs takes minutes).
func signalPrism(t *testing.T, sig syscall.Signal, started string, pause time.Duration, args ...string) (int, string) {
	t.Helper()
	cmd, errOut, seen := startPrism(t, started, args...)
	select {
	case <-seen:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%q did not appear within 2 minutes; stderr:\n%s", started, errOut)
	}
	time.Sleep(pause)
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	code := waitExit(t, cmd, errOut)
	took := time.Since(sent)
	t.Logf("prism %s: exit %d %v after %v", args[0], code, took.Round(time.Millisecond), sig)
	if took > hangBound {
		t.Errorf("exited %v after %v, want well within %v; stderr:\n%s", took, sig, hangBound, errOut)
	}
	return code, errOut.String()
}

// waitExit waits for cmd, killing it after 2 minutes, and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, errOut *syncBuffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running 2 minutes after the signal or the time limit; stderr:\n%s", errOut)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// readExecSummary reads the --json summary of prism exec at path.
func readExecSummary(t *testing.T, path string) execSummary {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no summary: %v", err)
	}
	var s execSummary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("summary: %v\n%s", err, raw)
	}
	return s
}

// lastRun returns the newest run of the store at path.
func lastRun(t *testing.T, path string) store.RunSummary {
	t.Helper()
	runs, err := openTestStore(t, path).Runs(context.Background(), store.Filter{})
	if err != nil || len(runs) == 0 {
		t.Fatalf("no run recorded (%v)", err)
	}
	return runs[0]
}

// TestSignalEndsEndlessKernel sends SIGINT to prism exec while its kernel spins forever:
// the wait is left, the queue and device are closed without waiting for the kernel, and
// the summary of what finished is written, marked interrupted, and recorded.
func TestSignalEndsEndlessKernel(t *testing.T) {
	id := enginetest.DeviceIDs(t, "opencl")[0]
	t.Setenv("PRISM_TRACE", "1") // the "built" line says the kernel is about to launch
	db := useStore(t)
	file := writeKernel(t, "endless.cl", endlessKernel)
	out := filepath.Join(t.TempDir(), "sum.json")
	code, errOut := signalPrism(t, syscall.SIGINT, "built ", 500*time.Millisecond, "exec", file, "--kernel", "spin",
		"--arg", "out:int32:16", "--global", "16", "--device", id, "--no-save", "--json", "-o", out)
	if code != exitSIGINT {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitSIGINT, errOut)
	}
	s := readExecSummary(t, out)
	if !s.Interrupted || !strings.Contains(s.InterruptedAt, id+" exec/spin") || len(s.Devices) != 1 || s.Devices[0].Err == "" {
		t.Errorf("summary interrupted %v at %q, devices %+v: want interrupted at %s exec/spin with the device's error", s.Interrupted, s.InterruptedAt, s.Devices, id)
	}
	if r := lastRun(t, db); !r.Interrupted || !strings.Contains(r.InterruptedAt, "exec/spin") {
		t.Errorf("recorded run interrupted %v at %q, want at exec/spin", r.Interrupted, r.InterruptedAt)
	}
}

// TestSignalEndsSlowBuild sends SIGTERM to prism exec while PoCL compiles a source that
// takes it minutes: the build is abandoned, the device closed when the compile would end
// (never: the process exits), and the summary written and marked.
func TestSignalEndsSlowBuild(t *testing.T) {
	id := enginetest.DeviceIDs(t, "opencl")[0]
	t.Setenv("PRISM_TRACE", "1")
	file := writeKernel(t, "slow.cl", slowBuildKernel())
	out := filepath.Join(t.TempDir(), "sum.json")
	// A define of its own keeps any program cache from answering.
	code, errOut := signalPrism(t, syscall.SIGTERM, "opened "+id, time.Second, "exec", file, "--kernel", "slow",
		"--arg", "out:float32:16", "--global", "16", "--device", id, "--no-save", "--json", "-o", out,
		"-D", fmt.Sprintf("FRESH=%d", time.Now().UnixNano()))
	if code != exitSIGTERM {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitSIGTERM, errOut)
	}
	if !strings.Contains(errOut, "build on "+id+" abandoned") {
		t.Errorf("the build was not the step abandoned; stderr:\n%s", errOut)
	}
	s := readExecSummary(t, out)
	if !s.Interrupted || len(s.Devices) != 1 || !strings.Contains(s.Devices[0].Err, "build") {
		t.Errorf("summary interrupted %v, devices %+v: want interrupted, the build's error", s.Interrupted, s.Devices)
	}
}

// TestSignalStopsTune interrupts prism tune on a built-in op (a candidate in an endless
// warm-up) and on a kernel of one's own (its second combination spins forever): exit 130,
// the candidate cut short shown as cancelled, no winner named and nothing saved.
func TestSignalStopsTune(t *testing.T) {
	id := enginetest.DeviceIDs(t, "opencl")[0]
	t.Run("op", func(t *testing.T) {
		cache := t.TempDir()
		t.Setenv("PRISM_CACHE_DIR", cache)
		out := filepath.Join(t.TempDir(), "tune.txt")
		code, errOut := signalPrism(t, syscall.SIGINT, "does not run on", 2*time.Second, "tune", "gemm/nn/float32",
			"--device", id, "--size", "64K", "--count", "2", "--warmup", "100000000", "-o", out)
		if code != exitSIGINT {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitSIGINT, errOut)
		}
		text, _ := os.ReadFile(out)
		if !strings.Contains(string(text), "cancelled") || !strings.Contains(string(text), "winner: none (interrupted") ||
			strings.Contains(string(text), "FAILED") {
			t.Errorf("output:\n%s\nwant the candidate cancelled and no winner", text)
		}
		if files, _ := filepath.Glob(filepath.Join(cache, "tuning", "*")); len(files) > 0 {
			t.Errorf("an interrupted tuning saved %v", files)
		}
	})
	t.Run("file", func(t *testing.T) {
		file := writeKernel(t, "spin.cl", spinKernel)
		out := filepath.Join(t.TempDir(), "tune.json")
		t.Setenv("PRISM_TRACE", "1")
		// The second build (SPIN=1) is the one whose kernel never returns.
		cmd, errOut, seen := startPrism(t, "built ", "tune", file, "--kernel", "spin", "--arg", "out:int32:16",
			"--global", "16", "--device", id, "-D", "SPIN=0,1", "--count", "2", "--json", "-o", out)
		<-seen
		code, errText := signalAfterSecondBuild(t, cmd, errOut)
		if code != exitSIGINT {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitSIGINT, errText)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var sum tuneUserSummary
		if err := json.Unmarshal(raw, &sum); err != nil || len(sum.Devices) != 1 {
			t.Fatalf("summary %v:\n%s", err, raw)
		}
		d := sum.Devices[0]
		statuses := map[string]string{}
		for _, c := range d.Combinations {
			statuses[c.Label] = c.Status
		}
		if !d.Interrupted || d.Fastest != "" || statuses["-D SPIN=0"] != "ok" || statuses["-D SPIN=1"] != "cancelled" {
			t.Errorf("tuning interrupted %v, fastest %q, statuses %v: want interrupted, none, SPIN=0 ok and SPIN=1 cancelled", d.Interrupted, d.Fastest, statuses)
		}
	})
}

// signalAfterSecondBuild waits for the second "built" trace line of cmd (the first was
// seen), half a second more, then sends SIGINT; it returns the exit code and stderr.
func signalAfterSecondBuild(t *testing.T, cmd *exec.Cmd, errOut *syncBuffer) (int, string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for strings.Count(errOut.String(), "built ") < 2 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no second build within 2 minutes; stderr:\n%s", errOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := waitExit(t, cmd, errOut)
	took := time.Since(sent)
	t.Logf("prism tune FILE.cl: exit %d %v after SIGINT", code, took.Round(time.Millisecond))
	if took > hangBound {
		t.Errorf("exited %v after SIGINT, want well within %v", took, hangBound)
	}
	return code, errOut.String()
}

// hangBound separates work that was left at the first signal or the time limit (well
// under a second on an idle machine, a few seconds on a loaded one) from work that was not
// (a kernel that never returns, a build of minutes).
const hangBound = 15 * time.Second

// TestTimeoutEndsWork gives bench (alone and split), run, exec and tune work that never
// ends and --timeout 4s: each exits with code 124 soon after the limit (within hangBound), its report
// written (or recorded) and marked interrupted at the step that ran, naming the limit.
func TestTimeoutEndsWork(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	const limit = 4 * time.Second
	endless := writeKernel(t, "endless.cl", endlessKernel)
	type check func(t *testing.T, out, db string)
	report := func(t *testing.T, out, _ string) {
		rep, err := bench.ReadReportFile(out)
		if err != nil {
			t.Fatalf("no valid report: %v", err)
		}
		if !rep.Interrupted || !strings.HasSuffix(rep.InterruptedAt, "(--timeout 4s)") {
			t.Errorf("report interrupted %v at %q, want a step and (--timeout 4s)", rep.Interrupted, rep.InterruptedAt)
		}
	}
	recorded := func(t *testing.T, _, db string) {
		if r := lastRun(t, db); !r.Interrupted || !strings.HasSuffix(r.InterruptedAt, "(--timeout 4s)") {
			t.Errorf("recorded run interrupted %v at %q, want a step and (--timeout 4s)", r.Interrupted, r.InterruptedAt)
		}
	}
	cases := []struct {
		name  string
		args  []string
		check check
	}{
		{"bench", []string{"bench", "--device", ids[0], "--ops", "stream/copy/float32", "--sizes", "1K", "--warmup", "100000000", "--count", "2", "--json", "-o"}, report},
		{"run", []string{"run", "stream/copy/float32", "--device", ids[0], "--size", "1K", "--warmup", "100000000", "--count", "2", "--json", "-o"}, recorded},
		{"exec", []string{"exec", endless, "--kernel", "spin", "--arg", "out:int32:16", "--global", "16", "--device", ids[0], "--no-save", "--json", "-o"},
			func(t *testing.T, out, db string) {
				s := readExecSummary(t, out)
				if !s.Interrupted || !strings.HasSuffix(s.InterruptedAt, "(--timeout 4s)") {
					t.Errorf("summary interrupted %v at %q, want (--timeout 4s)", s.Interrupted, s.InterruptedAt)
				}
				recorded(t, out, db)
			}},
		{"tune", []string{"tune", "gemm/nn/float32", "--device", ids[0], "--size", "64K", "--count", "2", "--warmup", "100000000", "-o"},
			func(t *testing.T, out, _ string) {
				text, _ := os.ReadFile(out)
				if !strings.Contains(string(text), "cancelled") || !strings.Contains(string(text), "winner: none (interrupted") {
					t.Errorf("output:\n%s\nwant the candidate cancelled and no winner", text)
				}
			}},
	}
	if len(ids) > 1 {
		cases = append(cases, struct {
			name  string
			args  []string
			check check
		}{"split", []string{"bench", "--split", "--device", ids[0] + "," + ids[1], "--ops", "map/axpy/float32", "--sizes", "1K", "--warmup", "100000000", "--count", "2", "--json", "-o"},
			func(t *testing.T, out, _ string) {
				// The split's report is marked at the step that ran (a device alone, in
				// a warm-up that never ends), with the note of the limit.
				rep, err := bench.ReadReportFile(out)
				if err != nil {
					t.Fatalf("no valid report: %v", err)
				}
				if want := ids[0] + " map/axpy/float32 1K alone (--timeout " + limit.String() + ")"; !rep.Interrupted || rep.InterruptedAt != want {
					t.Errorf("split report interrupted %v at %q, want at %q", rep.Interrupted, rep.InterruptedAt, want)
				}
				// No step starts after the limit: the second device alone and the split
				// never ran, and the first device's interrupted step is kept.
				if len(rep.Splits) != 1 || len(rep.Splits[0].Single) != 1 || rep.Splits[0].Single[0].Device != ids[0] || rep.Splits[0].Err == "" {
					t.Errorf("split report holds %+v, want the one split not run, with %s alone only", rep.Splits, ids[0])
				}
			}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := useStore(t)
			t.Setenv("PRISM_CACHE_DIR", t.TempDir())
			out := filepath.Join(t.TempDir(), "out")
			args := append(c.args, out, "--timeout", limit.String())
			start := time.Now()
			cmd, errOut, _ := startPrism(t, "\x00", args...)
			code := waitExit(t, cmd, errOut)
			over := time.Since(start) - limit
			t.Logf("prism %s: exit %d, %v after the limit", c.name, code, over.Round(time.Millisecond))
			if code != exitTimeout {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitTimeout, errOut)
			}
			if over > hangBound {
				t.Errorf("exited %v after the limit, want well within %v", over, hangBound)
			}
			c.check(t, out, db)
		})
	}
}

// TestTimeoutFlag: --timeout takes a positive duration; anything else is a usage error
// before any device is opened.
func TestTimeoutFlag(t *testing.T) {
	for _, cmd := range []string{"bench", "run", "exec", "tune"} {
		for _, v := range []string{"0s", "-5s", "ten", "5"} {
			args := []string{cmd, "--timeout", v}
			if cmd != "bench" {
				args = append(args, "stream/copy/float32")
			}
			if got := run(context.Background(), args); got != exitUsage {
				t.Errorf("prism %s: exit %d, want %d", strings.Join(args, " "), got, exitUsage)
			}
		}
	}
}

// TestTuneCombinationLimit: a -D sweep of more than maxCombinations combinations is a
// usage error that names the count.
func TestTuneCombinationLimit(t *testing.T) {
	ten := "1,2,3,4,5,6,7,8,9,10"
	for _, c := range []struct {
		defines []string
		want    string
	}{
		{[]string{"A=" + ten, "B=" + ten, "C=" + ten, "D=" + ten, "E=1,2"}, "20000 combinations (10 x 10 x 10 x 10 x 2 values)"},
		{[]string{"A=" + ten, "B=" + ten, "C=" + ten, "D=" + ten, "E=" + ten, "F=" + ten}, "1000000 combinations"},
	} {
		var vary []string
		for _, d := range c.defines {
			vary = append(vary, "-D", d)
		}
		err := checkCombinations(mustDefines(t, c.defines))
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-D %v: %v, want a usage error naming %q", vary, err, c.want)
		}
	}
	if err := checkCombinations(mustDefines(t, []string{"A=" + ten, "B=" + ten, "C=" + ten, "D=" + ten})); err != nil {
		t.Errorf("10^4 combinations: %v, want accepted", err)
	}
}

func mustDefines(t *testing.T, specs []string) []userkernel.Define {
	t.Helper()
	vary, _, err := parseTuneDefines(specs)
	if err != nil {
		t.Fatal(err)
	}
	return vary
}
