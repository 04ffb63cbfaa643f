package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine/enginetest"
)

// TestBenchCollectivesProcesses runs `prism bench --ops collective/...` as two processes
// meeting at a rendezvous on localhost, each with one device, and checks that both report
// every collective on two ranks, verified.
func TestBenchCollectivesProcesses(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cmds := make([]*exec.Cmd, 2)
	outs := make([]strings.Builder, 2)
	for r := range cmds {
		args := []string{"bench", "--device", ids[0], "--ops", "collective/all-reduce/float32,collective/all-gather/float64,collective/reduce-scatter,collective/broadcast/float32",
			"--sizes", "1000,4K", "--count", "2", "--warmup", "0", "--json", "-q", "-o", filepath.Join(dir, fmt.Sprint(r, ".json"))}
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), "PRISM_TEST_RUN_MAIN="+strings.Join(args, "\x1f"),
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
	}
	for r := range cmds {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(r, ".json")))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := bench.ReadReport(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Collectives) != 2*5 {
			t.Errorf("process %d reported %d collectives, want 10", r, len(rep.Collectives))
		}
		for _, c := range rep.Collectives {
			if !c.Verified || c.Ranks != 2 || c.Stats.Median <= 0 || c.BusBW <= 0 {
				t.Errorf("process %d, %s of %d: verified %v, ranks %d, median %v, busbw %g, error %q", r, c.Case, c.Count, c.Verified, c.Ranks, c.Stats.Median, c.BusBW, c.Err)
			}
		}
	}
}

// TestBenchCollectivesInProcess runs the collectives across two handles on one device in
// one process, as a table.
func TestBenchCollectivesInProcess(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	out, err := execPrism(t, "bench", "--all-devices", "--ops", "collective/*/float32", "--sizes", "777", "--count", "2", "-q")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"all-reduce", "all-gather", "reduce-scatter", "broadcast"} {
		if !strings.Contains(out, "collective/"+k+"/float32") {
			t.Errorf("no %s in the table:\n%s", k, out)
		}
	}
	if strings.Contains(out, "NO:") {
		t.Errorf("a collective failed:\n%s", out)
	}
	_ = ids
}

// TestBenchGroupUsage checks the refusals of the group flags.
func TestBenchGroupUsage(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	for _, args := range [][]string{
		{"--ops", "collective,stream"},
		{"--ops", "collective", "--split"},
		{"--ops", "stream", "--host-staged"},
		{"--ops", "stream", "--in-place"},
		{"--ops", "stream", "--fractions", "0.5,0.5"},
		{"--ops", "reduce/sum/float32", "--split", "--device", ids[0]},
		{"--ops", "reduce/sum/float32", "--split", "--device", ids[0] + "," + ids[0], "--fractions", "0.5,0.5"},
	} {
		_, err := execPrism(t, append([]string{"bench", "-q"}, args...)...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("prism bench %s: %v; want a usage error", strings.Join(args, " "), err)
		}
	}
}
