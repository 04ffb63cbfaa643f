package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// writerEnv, set, makes the test binary a writer process of TestConcurrentWriters: it
// records writerRuns reports into the store the variable names (a file or a PostgreSQL
// DSN), and exits.
const writerEnv = "PRISM_STORE_TEST_WRITER"

const (
	writers    = 8
	writerRuns = 5
)

func TestMain(m *testing.M) {
	if path := os.Getenv(writerEnv); path != "" {
		os.Exit(writerProcess(path))
	}
	code := m.Run()
	if big.path != "" { // the large store of the benchmarks
		os.RemoveAll(filepath.Dir(big.path))
	}
	stopClusters()
	os.Exit(code)
}

// writerProcess records writerRuns reports into the store at path, returning the exit code.
func writerProcess(path string) int {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	for i := range writerRuns {
		r := synthetic(fmt.Sprintf("host-%d", os.Getpid()), "abcd"+strconv.Itoa(i), "cpu", time.Now(), 20, 10)
		if _, err := s.Record(ctx, r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// TestConcurrentWriters starts 8 processes that record into one new store at once (each
// opening it, so that they also race to create its schema): every run of every process is
// there, whole. On PostgreSQL the processes stand for the hosts of a cluster, writing one
// database.
func TestConcurrentWriters(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testConcurrentWriters(t, b.dsn(t)) })
}

func testConcurrentWriters(t *testing.T, path string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, writers)
	outs := make([][]byte, writers)
	errs := make(chan error, writers)
	for i := range cmds {
		cmds[i] = exec.Command(exe, "-test.run=^$")
		cmds[i].Env = append(os.Environ(), writerEnv+"="+path)
	}
	for i, c := range cmds {
		go func() {
			var err error
			outs[i], err = c.CombinedOutput()
			errs <- err
		}()
	}
	for range cmds {
		if err := <-errs; err != nil {
			t.Errorf("a writer failed: %v", err)
		}
	}
	for i, o := range outs {
		if len(o) > 0 {
			t.Logf("writer %d: %s", i, o)
		}
	}
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]int{}
	for _, r := range runs {
		hosts[r.Host]++
		if r.Results != 20 {
			t.Errorf("run %d has %d results, want 20", r.ID, r.Results)
		}
	}
	if len(runs) != writers*writerRuns || len(hosts) != writers {
		t.Errorf("the store holds %d runs of %d processes, want %d of %d", len(runs), len(hosts), writers*writerRuns, writers)
	}
	if want, samples := writers*writerRuns*20*10, countSamples(t, s); samples != want {
		t.Errorf("the store holds %d samples, want %d", samples, want)
	}
	if err := s.Check(ctx); err != nil {
		t.Error(err)
	}
}
