package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
)

// mpirunPath returns the mpirun to start ranks with; without one the test is skipped, or
// fails under PRISM_REQUIRE=mpi.
func mpirunPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("mpirun")
	if err != nil {
		enginetest.RequireOrSkip(t, "mpi", fmt.Errorf("no mpirun on PATH (Debian: apt-get install openmpi-bin): %w", engine.ErrUnavailable))
	}
	return p
}

// readGroupReport reads a report a process wrote and checks that it holds want
// collectives, each verified on ranks ranks through a library named from lib.
func readGroupReport(t *testing.T, path string, want, ranks int, lib string) *bench.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.ReadReport(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rep.Collectives) != want {
		t.Errorf("%s: %d collectives, want %d", path, len(rep.Collectives), want)
	}
	for _, c := range rep.Collectives {
		if !c.Verified || c.Ranks != ranks || c.Stats.Median <= 0 || c.BusBW <= 0 || !strings.HasPrefix(c.Library, lib) {
			t.Errorf("%s, %s of %d: verified %v, ranks %d, median %v, busbw %g, library %q (want %q), error %q", path, c.Case, c.Count, c.Verified, c.Ranks, c.Stats.Median, c.BusBW, c.Library, lib, c.Err)
		}
	}
	return rep
}

// TestBenchCollectivesMPI runs `prism bench --ops collective/...` as two processes under
// mpirun, each with PoCL's device: they meet through MPI (no address, no token), every
// collective runs through Open MPI and verifies, and neither says it fell back to TCP.
func TestBenchCollectivesMPI(t *testing.T) {
	run := mpirunPath(t)
	ids := enginetest.DeviceIDs(t, "opencl")
	dir := t.TempDir()
	args := []string{"bench", "--device", ids[0], "--ops", "collective/all-reduce/float32,collective/all-gather/float64,collective/reduce-scatter,collective/broadcast/float32",
		"--sizes", "1000,4K", "--count", "2", "--warmup", "0", "--json", "-q", "-o", filepath.Join(dir, "rank")}
	// Each rank writes rankR.json: the shell adds its rank to the last argument.
	c := exec.Command(run, "--allow-run-as-root", "--oversubscribe", "-np", "2",
		"/bin/sh", "-c", `PRISM_TEST_RUN_MAIN="$PRISM_TEST_ARGS$OMPI_COMM_WORLD_RANK.json" exec "$0"`, os.Args[0])
	c.Env = append(os.Environ(), "PRISM_TEST_ARGS="+strings.Join(args, "\x1f"))
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "fallback") {
		t.Errorf("a process fell back to TCP under mpirun:\n%s", out)
	}
	for r := range 2 {
		readGroupReport(t, filepath.Join(dir, fmt.Sprint("rank", r, ".json")), 2*5, 2, "host-staged over Open MPI")
	}
}

// TestBenchCollectivesTCPFallback runs two processes that meet at Prism's own TCP
// rendezvous, without an MPI launcher: each says on stderr, even under -q, that it fell
// back to Prism's TCP frames and why, and its report names that transport.
func TestBenchCollectivesTCPFallback(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	addr := freeLoopback(t)
	dir := t.TempDir()
	cmds := make([]*exec.Cmd, 2)
	outs := make([]strings.Builder, 2)
	for r := range cmds {
		args := []string{"bench", "--device", ids[0], "--ops", "collective/all-reduce/float32", "--sizes", "1000", "--count", "2", "--warmup", "0",
			"--json", "-q", "-o", filepath.Join(dir, fmt.Sprint(r, ".json"))}
		c := exec.Command(os.Args[0])
		c.Env = append(withoutMPIEnv(os.Environ()), "PRISM_TEST_RUN_MAIN="+strings.Join(args, "\x1f"),
			"PRISM_RENDEZVOUS=tcp://"+addr, fmt.Sprint("PRISM_RANK=", r), "PRISM_WORLD_SIZE=2")
		c.Stdout, c.Stderr = &outs[r], &outs[r]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[r] = c
	}
	for r, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", r, err, outs[r].String())
		}
		const want = "collectives across processes over Prism's TCP frames, the fallback: not started by an MPI launcher"
		if !strings.Contains(outs[r].String(), want) {
			t.Errorf("process %d does not say %q:\n%s", r, want, outs[r].String())
		}
		readGroupReport(t, filepath.Join(dir, fmt.Sprint(r, ".json")), 1, 2, "host-staged over TCP (fallback: no MPI)")
	}
}

// freeLoopback returns a localhost address no one listens on.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// withoutMPIEnv drops the variables of an MPI launcher, so that a child does not take
// itself for one of this process's ranks.
func withoutMPIEnv(env []string) []string {
	var out []string
	for _, e := range env {
		if strings.HasPrefix(e, "OMPI_") || strings.HasPrefix(e, "PMI_") || strings.HasPrefix(e, "PMIX_") {
			continue
		}
		out = append(out, e)
	}
	return out
}
