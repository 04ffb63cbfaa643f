package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine/enginetest"
)

// startPrism starts this test binary as the prism command with args (TestMain), its stderr
// collected; the returned channel is closed when a line of stderr contains started.
func startPrism(t *testing.T, started string, args ...string) (*exec.Cmd, *syncBuffer, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PRISM_TEST_RUN_MAIN="+strings.Join(args, "\x1f"))
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errOut, seen := &syncBuffer{}, make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := false
		for sc.Scan() {
			errOut.WriteLine(sc.Text())
			if !once && strings.Contains(sc.Text(), started) {
				once = true
				close(seen)
			}
		}
	}()
	return cmd, errOut, seen
}

// syncBuffer collects lines from one goroutine for another.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) WriteLine(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.WriteString(s + "\n")
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestSignalStopsBench sends SIGINT, then SIGTERM, to a bench stuck in a long warm-up: it
// must exit with 130 or 143 within a few seconds (a fraction of one on an idle machine), and
// write a valid report that says it was interrupted and where. A first short run fills the program cache (a driver's compile
// is not interruptible); the signal goes half a second after the progress line of the copy
// ceiling (whose warm-up, as long as the cases', never ends), however long the machine took
// to get there.
func TestSignalStopsBench(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	// One short run first, so that the timed runs find the case's kernels in the OpenCL
	// implementation's program cache.
	warm, warmOut, _ := startPrism(t, "\x00", "bench", "--device", ids[0], "--ops", "stream/copy/float32", "--sizes", "1K",
		"--warmup", "0", "--count", "1", "-q")
	if err := warm.Wait(); err != nil {
		t.Fatalf("warm-up run: %v; stderr:\n%s", err, warmOut)
	}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitSIGINT}, {syscall.SIGTERM, exitSIGTERM}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run.json")
			cmd, errOut, seen := startPrism(t, "copy ceiling", "bench", "--device", ids[0], "--ops", "stream/copy/float32",
				"--sizes", "1K", "--warmup", "100000000", "--count", "2", "--json", "-o", out)
			// Wait until the run is in a warm-up that never ends, then signal.
			select {
			case <-seen:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatalf("the copy ceiling did not start within 2 minutes; stderr:\n%s", errOut)
			}
			time.Sleep(500 * time.Millisecond)
			sent := time.Now()
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			took := time.Since(sent)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != c.code {
				t.Fatalf("exit %v, want code %d; stderr:\n%s", err, c.code, errOut)
			}
			// Unresponsive would mean never (the warm-up has 10^8 runs); the bound leaves room
			// for a loaded machine, where the exit took up to 3 s.
			t.Logf("exited %v after the signal", took)
			if took > 10*time.Second {
				t.Errorf("exited %v after the signal, want within a few seconds", took)
			}
			rep, err := bench.ReadReportFile(out)
			if err != nil {
				t.Fatalf("no valid partial report: %v", err)
			}
			if !rep.Interrupted || rep.InterruptedAt == "" || !strings.HasPrefix(rep.InterruptedAt, ids[0]) {
				t.Errorf("report interrupted %v at %q, want true and a step of %s", rep.Interrupted, rep.InterruptedAt, ids[0])
			}
		})
	}
}

// TestRunExitCodes checks the exit codes of causes the CLI tells apart: an unknown command
// and missing arguments are usage (2), and an interrupted context exits 130 or 143.
func TestRunExitCodes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"frobnicate"}, exitUsage},
		{[]string{"run"}, exitUsage},
		{[]string{"run", "stream/copy/float32", "--count", "2147483648000"}, exitUsage},
		{[]string{"bench", "--ops", "stream/copy/float32", "--size", "4611686018427387904"}, exitUsage},
	} {
		if got := run(context.Background(), c.args); got != c.want {
			t.Errorf("prism %s: exit %d, want %d", strings.Join(c.args, " "), got, c.want)
		}
	}
	root := newRootCmd()
	root.AddCommand(&cobra.Command{Use: "crash", RunE: func(*cobra.Command, []string) error {
		var m map[string]int
		m["x"]++ // a nil map: the panic a bug would be
		return nil
	}})
	if got := runRoot(context.Background(), root, []string{"crash"}); got != exitInternal {
		t.Errorf("a panicking command: exit %d, want %d", got, exitInternal)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(interrupted{syscall.SIGTERM})
	if got := run(ctx, []string{"devices"}); got != exitSIGTERM && got != exitOK {
		t.Errorf("devices after SIGTERM: exit %d, want %d (or 0 if it finished first)", got, exitSIGTERM)
	}
}
