package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/store"
	"github.com/prism-compute/prism/engine/enginetest"
)

// isolateStore points the results store of every command the tests run at a file of
// their own (PRISM_STORE, and XDG_DATA_HOME for the default store), never the user's, and
// PoCL's cache at the CLI's default; it returns the function that removes the store. The
// processes the tests start inherit both.
func isolateStore() func() {
	dir, err := os.MkdirTemp("", "prism-store-test")
	if err != nil {
		panic(err)
	}
	os.Setenv(envStore, filepath.Join(dir, "results.db"))
	os.Setenv("XDG_DATA_HOME", dir)
	// PoCL's cache where the CLI puts it without PRISM_CACHE_DIR, for the whole run: the
	// OpenCL backend fixes POCL_CACHE_DIR once per process, at its first probe, and a test
	// that sets PRISM_CACHE_DIR to its own temporary directory (TestTune) would otherwise
	// leave PoCL a cache that is removed under it, failing every later build (go test -run
	// TestTune failed TestTuneUserJSON so).
	if _, set := os.LookupEnv("POCL_CACHE_DIR"); !set {
		if cache, err := os.UserCacheDir(); err == nil {
			os.Setenv("POCL_CACHE_DIR", filepath.Join(cache, "prism", "pocl"))
		}
	}
	return func() { os.RemoveAll(dir) }
}

// useStore gives the test a store of its own, empty, through PRISM_STORE.
func useStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	t.Setenv(envStore, path)
	return path
}

// benchTriad benches stream/triad/float32 at 4K on device, quickly, with extra flags, and
// returns stdout and stderr.
func benchTriad(t *testing.T, device string, extra ...string) (string, string) {
	t.Helper()
	args := append([]string{"bench", "--device", device, "--ops", "stream/triad/float32", "--sizes", "4K", "--quick", "--count", "4", "-q"}, extra...)
	out, errOut, err := prismOutput(t, args...)
	if err != nil {
		t.Fatalf("prism %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out, errOut
}

// openTestStore opens the store at path for the test's own checks.
func openTestStore(t *testing.T, path string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestStoreIsolated checks that the tests' store is not the user's.
func TestStoreIsolated(t *testing.T) {
	p := os.Getenv(envStore)
	if p == "" || !strings.HasPrefix(p, os.TempDir()) {
		t.Fatalf("PRISM_STORE=%q: the tests must record in a temporary store", p)
	}
	if d := os.Getenv("XDG_DATA_HOME"); !strings.HasPrefix(d, os.TempDir()) {
		t.Fatalf("XDG_DATA_HOME=%q: the default store of the tests must be temporary", d)
	}
}

// TestStoreBenchHistory benches a tiny op twice with recording on: each run says where it
// was saved; runs lists both, newest first, and filters; history shows both with the
// change; compare @previous @last renders; export gives back what bench printed with
// --json; report and plot read run references; baselines name runs; the store checks.
func TestStoreBenchHistory(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	path := useStore(t)
	var jsons [2]string
	for i := range jsons {
		out, errOut := benchTriad(t, ids[0], "--json")
		jsons[i] = out
		if want := "run " + strconv.Itoa(i+1) + " in " + path; !strings.Contains(errOut, want) {
			t.Errorf("bench %d: stderr lacks %q:\n%s", i+1, want, errOut)
		}
	}

	t.Run("runs", func(t *testing.T) {
		out, _, err := prismOutput(t, "runs")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[1], "2 ") || !strings.HasPrefix(lines[2], "1 ") || !strings.Contains(lines[1], ids[0]) {
			t.Errorf("runs: want a header, then runs 2 and 1 on %s:\n%s", ids[0], out)
		}
		out, _, err = prismOutput(t, "runs", "--json", "--op", "triad", "--device", ids[0], "--since", "2000-01-01")
		if err != nil {
			t.Fatal(err)
		}
		var runs []runJSON
		if err := json.Unmarshal([]byte(out), &runs); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if len(runs) != 2 || runs[0].ID != 2 || runs[1].ID != 1 || runs[0].Cases != 1 || len(runs[0].Devices) != 1 ||
			runs[0].Devices[0].ID != ids[0] || runs[0].Devices[0].Fingerprint == "" || runs[0].Interrupted {
			t.Errorf("runs --json: %+v", runs)
		}
		for _, c := range []struct {
			args []string
			want int
		}{
			{[]string{"--limit", "1"}, 1},
			{[]string{"--until", "2000-01-01"}, 0},
			{[]string{"--since", time.Now().Add(time.Hour).Format(time.RFC3339)}, 0},
			{[]string{"--op", "gemm"}, 0},
			{[]string{"--host", "no-such-host"}, 0},
		} {
			out, _, err := prismOutput(t, append([]string{"runs", "--json"}, c.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var got []runJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != c.want {
				t.Errorf("runs %s: %d runs (%v), want %d", strings.Join(c.args, " "), len(got), err, c.want)
			}
		}
		if _, _, err := prismOutput(t, "runs", "--since", "yesterday"); !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), "RFC 3339") {
			t.Errorf("runs --since yesterday: %v, want a usage error that names the forms", err)
		}
	})

	t.Run("history", func(t *testing.T) {
		out, _, err := prismOutput(t, "history", "triad/float32", "--device", ids[0])
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.Contains(lines[0], "MEDIAN") || !strings.Contains(lines[2], "%") {
			t.Errorf("history: want a header and two runs, the second with its change:\n%s", out)
		}
		out, _, err = prismOutput(t, "history", "stream/triad/float32", "--size", "4K", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var hs []caseHistory
		if err := json.Unmarshal([]byte(out), &hs); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if len(hs) != 1 || len(hs[0].Points) != 2 || hs[0].Points[0].Run != 1 || hs[0].Points[1].Run != 2 ||
			hs[0].Points[1].Change == nil || hs[0].Points[0].Change != nil || hs[0].Points[1].Median <= 0 {
			t.Errorf("history --json: %s", out)
		}
		chart := filepath.Join(t.TempDir(), "triad.svg")
		if _, _, err := prismOutput(t, "history", "triad/float32", "--plot", chart); err != nil {
			t.Fatal(err)
		}
		if svg, err := os.ReadFile(chart); err != nil || !bytes.Contains(svg, []byte("stream/triad/float32 on "+ids[0])) {
			t.Errorf("history --plot: %v; the chart lacks its series", err)
		}
		if _, _, err := prismOutput(t, "history", "no-such-op"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("history of an op never run: %v, want not found", err)
		}
		if _, _, err := prismOutput(t, "history", "triad", "--size", "8K"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("history at a size never run: %v, want not found", err)
		}
	})

	t.Run("compare", func(t *testing.T) {
		out, errOut, err := prismOutput(t, "compare", "@previous", "@last")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "stream/triad/float32") || !strings.Contains(out, "of 1 cases") {
			t.Errorf("compare @previous @last:\n%s", out)
		}
		if strings.Contains(errOut, "note:") {
			t.Errorf("two runs of one device noted as unlike:\n%s", errOut)
		}
		if _, _, err := prismOutput(t, "compare", "1", "@last~0"); err != nil {
			t.Errorf("compare 1 @last~0: %v", err)
		}
	})

	t.Run("export", func(t *testing.T) {
		for i, ref := range []string{"1", "@last"} {
			out, _, err := prismOutput(t, "export", ref)
			if err != nil {
				t.Fatal(err)
			}
			if out != jsons[i] {
				t.Errorf("export %s differs from what bench --json printed", ref)
			}
		}
		dir := filepath.Join(t.TempDir(), "out")
		if _, _, err := prismOutput(t, "export", "@previous", "@last", "-o", dir); err != nil {
			t.Fatal(err)
		}
		for i := range jsons {
			data, err := os.ReadFile(filepath.Join(dir, "run-"+strconv.Itoa(i+1)+".json"))
			if err != nil || string(data) != jsons[i] {
				t.Errorf("export -o: run %d: %v", i+1, err)
			}
		}
		if _, _, err := prismOutput(t, "export", "1", "2"); !errors.As(err, new(usageError)) {
			t.Errorf("export of two runs to stdout: %v, want a usage error", err)
		}
	})

	t.Run("report and plot", func(t *testing.T) {
		out, _, err := prismOutput(t, "report", "@last", "--markdown")
		if err != nil || !strings.Contains(out, "stream/triad/float32") {
			t.Errorf("report @last --markdown: %v\n%s", err, out)
		}
		chart := filepath.Join(t.TempDir(), "last.svg")
		if _, _, err := prismOutput(t, "plot", "@last", "-o", chart); err != nil {
			t.Errorf("plot @last: %v", err)
		}
		// Two runs of one device are compared, not merged: the error names both runs.
		if _, _, err := prismOutput(t, "report", "@previous", "@last"); err == nil || !strings.Contains(err.Error(), "@previous (run 1)") {
			t.Errorf("report of two runs of one device: %v, want the merge's error naming the runs", err)
		}
	})

	t.Run("unknown refs", func(t *testing.T) {
		for _, ref := range []string{"@last~9", "99", "nightly", "baseline:nightly"} {
			_, _, err := prismOutput(t, "compare", ref, "@last")
			if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "@last, @previous, @last~N") {
				t.Errorf("compare %s @last: %v, want not found with the forms accepted", ref, err)
			}
		}
		_, _, err := prismOutput(t, "report", "missing.json")
		if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "@last, @previous") {
			t.Errorf("report missing.json: %v, want no such file, with the run references", err)
		}
		if _, _, err := prismOutput(t, "compare", "@last~x", "@last"); !errors.As(err, new(usageError)) {
			t.Errorf("compare @last~x: %v, want a usage error", err)
		}
	})

	t.Run("baselines", func(t *testing.T) {
		out, _, err := prismOutput(t, "baseline", "set", "main", "@previous")
		if err != nil || !strings.Contains(out, "baseline main is run 1") {
			t.Fatalf("baseline set: %v\n%s", err, out)
		}
		out, _, err = prismOutput(t, "baseline", "list", "--json")
		var bs []baselineJSON
		if err != nil || json.Unmarshal([]byte(out), &bs) != nil || len(bs) != 1 || bs[0].Name != "main" || bs[0].Run != 1 {
			t.Errorf("baseline list --json: %v\n%s", err, out)
		}
		for _, ref := range []string{"main", "baseline:main", "@main"} {
			out, _, err := prismOutput(t, "compare", ref, "@last")
			if err != nil || !strings.Contains(out, "stream/triad/float32") {
				t.Errorf("compare %s @last: %v\n%s", ref, err, out)
			}
		}
		if _, _, err := prismOutput(t, "baseline", "set", "42", "1"); !errors.As(err, new(usageError)) {
			t.Errorf("a baseline named by digits: %v, want a usage error", err)
		}
		if _, _, err := prismOutput(t, "baseline", "set", "old", "7"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a baseline of a run not recorded: %v, want not found", err)
		}
	})

	t.Run("completion", func(t *testing.T) {
		got, _ := complete(t, "compare", "@last", "")
		for _, w := range []string{"@last", "@previous", "@main", "1", "2"} {
			if !contains(got, w) {
				t.Errorf("compare's completion lacks %s: %q", w, got)
			}
		}
		if got, _ := complete(t, "export", "@p"); len(got) != 1 || got[0] != "@previous" {
			t.Errorf("export @p completes to %q, want @previous", got)
		}
		if got, _ := complete(t, "baseline", "set", ""); len(got) != 0 {
			t.Errorf("baseline set NAME completes to %q, want nothing (a new name)", got)
		}
		if got, _ := complete(t, "baseline", "set", "main", "@l"); len(got) != 1 || got[0] != "@last" {
			t.Errorf("baseline set main @l completes to %q", got)
		}
	})

	t.Run("store", func(t *testing.T) {
		out, _, err := prismOutput(t, "store", "check")
		if err != nil || !strings.Contains(out, "ok, 2 runs") {
			t.Errorf("store check: %v\n%s", err, out)
		}
		out, _, err = prismOutput(t, "store", "path")
		if err != nil || strings.TrimSpace(out) != path {
			t.Errorf("store path: %v: %q, want %s", err, out, path)
		}
		out, _, err = prismOutput(t, "store", "path", "--store", "off")
		if err != nil || !strings.HasPrefix(out, "off") {
			t.Errorf("store path --store off: %v: %q", err, out)
		}
	})
}

// TestStoreImport imports a saved report of another host, commit and driver: its run ID is
// printed, runs finds it by host and commit, export gives the report back, and a
// comparison with a run here says what differs between the devices before the table.
func TestStoreImport(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	path := useStore(t)
	file := filepath.Join("testdata", "store", "imported.json")
	out, _, err := prismOutput(t, "import", file)
	if err != nil || strings.TrimSpace(out) != file+": run 1" {
		t.Fatalf("import: %v: %q", err, out)
	}
	out, _, err = prismOutput(t, "runs", "--host", "buildhost", "--commit", "01234567", "--json")
	var runs []runJSON
	if err != nil || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 1 || runs[0].ID != 1 ||
		!runs[0].Date.Equal(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("runs of the imported report: %v\n%s", err, out)
	}
	want := readReport(t, file)
	var buf bytes.Buffer
	if err := want.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	out, _, err = prismOutput(t, "export", "0123456")
	if err != nil || out != buf.String() {
		t.Errorf("export of the imported run by its commit: %v; differs from the file read", err)
	}
	if _, _, err := prismOutput(t, "import", file, filepath.Join("testdata", "exec", "saxpy.cl")); err == nil {
		t.Errorf("import of a kernel source: no error")
	}
	if n := len(mustRuns(t, path)); n != 2 {
		t.Errorf("%d runs after importing a report and a file that is none, want 2", n)
	}

	if ids[0] != "opencl:0:0" {
		t.Skipf("the imported report's device is opencl:0:0; this machine's first OpenCL device is %s", ids[0])
	}
	benchTriad(t, ids[0])
	out, errOut, err := prismOutput(t, "compare", "baseline-less", "@last")
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("compare with an unknown baseline: %v", err)
	}
	out, errOut, err = prismOutput(t, "compare", file, "@last")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"note: opencl:0:0 is not like with like in " + file + " and @last", `driver: "1.0-example" -> `, `host CPU: "Example CPU 9000" -> `, `POCL_DEBUG: "0" -> (unset)`} {
		if !strings.Contains(errOut, w) {
			t.Errorf("compare across fingerprints: stderr lacks %q:\n%s", w, errOut)
		}
	}
	if !strings.Contains(out, "stream/triad/float32") {
		t.Errorf("compare across fingerprints: no table:\n%s", out)
	}
}

// mustRuns lists the runs of the store at path.
func mustRuns(t *testing.T, path string) []store.RunSummary {
	t.Helper()
	runs, err := openTestStore(t, path).Runs(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestStoreOff checks that --no-store and PRISM_STORE=off record nothing and create no
// store, and that the commands that need the store say how it was turned off.
func TestStoreOff(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	path := useStore(t)
	if _, errOut := benchTriad(t, ids[0], "--no-store"); strings.Contains(errOut, "run ") {
		t.Errorf("--no-store: %s", errOut)
	}
	t.Setenv(envStore, "off")
	if _, errOut := benchTriad(t, ids[0]); strings.Contains(errOut, "run ") {
		t.Errorf("PRISM_STORE=off: %s", errOut)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the store was created with recording off: %v", err)
	}
	for _, args := range [][]string{{"runs"}, {"compare", "@previous", "@last"}, {"history", "triad"}} {
		_, _, err := prismOutput(t, args...)
		if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), "PRISM_STORE=off") {
			t.Errorf("prism %s with the store off: %v", strings.Join(args, " "), err)
		}
	}
	if _, _, err := prismOutput(t, "runs", "--store", path, "--no-store"); !errors.As(err, new(usageError)) {
		t.Errorf("--store with --no-store: %v, want a usage error", err)
	}
	// --store names a store where PRISM_STORE is off.
	if _, errOut := benchTriad(t, ids[0], "--store", path); !strings.Contains(errOut, "run 1 in "+path) {
		t.Errorf("--store %s: %s", path, errOut)
	}
}

// TestStoreUnwritable benches with a store that is not a database: the report is printed
// whole all the same, the error names the store and the cause, and the exit code is 6.
func TestStoreUnwritable(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	path := useStore(t)
	if err := os.WriteFile(path, bytes.Repeat([]byte("not a database\n"), 512), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := execAlone(t, "bench", "--device", ids[0], "--ops", "stream/triad/float32", "--sizes", "4K", "--quick", "--count", "3", "-q", "--json")
	if code != exitStore {
		t.Errorf("exit %d, want %d\n%s", code, exitStore, errOut)
	}
	rep, err := bench.ReadReport(strings.NewReader(out))
	if err != nil || len(rep.Devices) != 1 || len(rep.Devices[0].Results) != 1 {
		t.Errorf("the report was not printed whole: %v", err)
	}
	if !strings.Contains(errOut, "the run was not recorded") || !strings.Contains(errOut, path) || !strings.Contains(errOut, "not a database") {
		t.Errorf("stderr does not name the store and the cause:\n%s", errOut)
	}
	// Every command that reads the store says the same, with the same exit code.
	for _, args := range [][]string{{"store", "check"}, {"runs"}, {"compare", "@previous", "@last"}} {
		if _, _, err := prismOutput(t, args...); !errors.As(err, new(storeError)) || !strings.Contains(err.Error(), path) {
			t.Errorf("prism %s on a file that is not a store: %v, want a store error naming it", strings.Join(args, " "), err)
		}
	}
	// A table, too, comes before the error.
	out, _, code = execAlone(t, "bench", "--device", ids[0], "--ops", "stream/triad/float32", "--sizes", "4K", "--quick", "--count", "3", "-q")
	if code != exitStore || !strings.Contains(out, "stream/triad/float32") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

// TestStoreRunAndExec checks that prism run and prism exec record their runs too: run's
// cases as bench's, exec's kernel as the case exec/KERNEL.
func TestStoreRunAndExec(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	path := useStore(t)
	_, errOut, err := prismOutput(t, "run", "stream/triad/float32", "--device", ids[0], "--size", "4K", "--count", "3")
	if err != nil || !strings.Contains(errOut, "run 1 in "+path) {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	exec := []string{"exec", filepath.Join(execKernels, "saxpy.cl"), "-k", "saxpy", "--device", ids[0], "--count", "3", "--no-save",
		"--arg", "scalar:float32:2", "--arg", "buf:float32:4K:random", "--arg", "buf:float32:4K:ones", "--arg", "out:float32:4K"}
	_, errOut, err = prismOutput(t, exec...)
	if err != nil || !strings.Contains(errOut, "run 2 in "+path) {
		t.Fatalf("exec: %v\n%s", err, errOut)
	}
	s := openTestStore(t, path)
	ctx := context.Background()
	for _, c := range []struct {
		run     store.RunID
		cas     string
		variant string
	}{{1, "stream/triad/float32", "portable"}, {2, "exec/saxpy", "saxpy.cl"}} {
		rep, err := s.Export(ctx, c.run)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Devices) != 1 || rep.Devices[0].Device.ID != ids[0] || len(rep.Devices[0].Results) != 1 || rep.HostCPU == "" && rep.Host == "" {
			t.Fatalf("run %d: %+v", c.run, rep)
		}
		r := rep.Devices[0].Results[0]
		if r.Case != c.cas || r.Variant != c.variant || r.Stats.Runs != 3 || r.Stats.Median <= 0 {
			t.Errorf("run %d: case %s variant %s, %d runs, median %v", c.run, r.Case, r.Variant, r.Stats.Runs, r.Stats.Median)
		}
	}
	pts, err := s.History(ctx, store.Series{Case: "exec/saxpy"})
	if err != nil || len(pts) != 1 || pts[0].Size != 4096 {
		t.Errorf("history of exec/saxpy: %v %+v", err, pts)
	}
	// A kernel run on one device is checked against nothing: its history says so, and
	// shows its times and their change all the same.
	if _, errOut, err := prismOutput(t, exec...); err != nil {
		t.Fatalf("exec: %v\n%s", err, errOut)
	}
	out, _, err := prismOutput(t, "history", "exec/saxpy")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 3 || !strings.Contains(lines[1], "not verified") || !strings.Contains(lines[2], "%") || strings.Contains(out, "failed") {
		t.Errorf("history exec/saxpy: %v\n%s", err, out)
	}
}

// TestStoreInterrupted interrupts a bench in a warm-up that never ends: the partial report
// is recorded, marked interrupted at the step that was running.
func TestStoreInterrupted(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	path := useStore(t)
	cmd, errOut, seen := startPrism(t, "copy ceiling", "bench", "--device", ids[0], "--ops", "stream/copy/float32",
		"--sizes", "1K", "--warmup", "100000000", "--count", "2", "--json", "-o", filepath.Join(t.TempDir(), "run.json"))
	select {
	case <-seen:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the copy ceiling did not start within 2 minutes; stderr:\n%s", errOut)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitSIGINT {
		t.Errorf("exit %d, want %d", code, exitSIGINT)
	}
	if !strings.Contains(errOut.String(), "run 1 in "+path) {
		t.Errorf("the interrupted run was not recorded:\n%s", errOut)
	}
	runs := mustRuns(t, path)
	if len(runs) != 1 || !runs[0].Interrupted || !strings.HasPrefix(runs[0].InterruptedAt, ids[0]) {
		t.Errorf("runs: %+v, want one, interrupted at a step of %s", runs, ids[0])
	}
	out, _, err := prismOutput(t, "runs")
	if err != nil || !strings.Contains(out, "interrupted at "+ids[0]) {
		t.Errorf("runs does not mark it: %v\n%s", err, out)
	}
}

// TestStoreGroupRuns checks that collectives and splits are recorded: a collective on one
// device, and a split across two where there are two OpenCL devices.
func TestStoreGroupRuns(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	path := useStore(t)
	_, errOut, err := prismOutput(t, "bench", "--device", ids[0], "--ops", "collective/all-reduce/float32", "--sizes", "1000", "--count", "2", "--warmup", "0", "-q")
	if err != nil || !strings.Contains(errOut, "run 1 in "+path) {
		t.Fatalf("collective: %v\n%s", err, errOut)
	}
	s := openTestStore(t, path)
	rep, err := s.Export(context.Background(), 1)
	if err != nil || len(rep.Collectives) != 1 || rep.Collectives[0].Case != "collective/all-reduce/float32" {
		t.Fatalf("the collective's run: %v %+v", err, rep)
	}
	if len(ids) < 2 {
		t.Skipf("one OpenCL device (%s): no split", ids[0])
	}
	_, errOut, err = prismOutput(t, "bench", "--device", ids[0]+","+ids[1], "--split", "--ops", "reduce/sum/float32", "--sizes", "4K", "--count", "2", "--warmup", "0", "-q")
	if err != nil || !strings.Contains(errOut, "run 2 in "+path) {
		t.Fatalf("split: %v\n%s", err, errOut)
	}
	// reduce/sum splits on host data, then on sharded data: two cases.
	if rep, err = s.Export(context.Background(), 2); err != nil || len(rep.Splits) != 2 || rep.Splits[0].Placement != "host" || rep.Splits[1].Placement != "sharded" {
		t.Errorf("the split's run: %v %+v", err, rep)
	}
	if runs := mustRuns(t, path); len(runs) != 2 || len(runs[0].Devices) != 2 {
		t.Errorf("runs: %+v, want the split's on two devices first", runs)
	}
}
