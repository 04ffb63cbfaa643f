package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/engine/group"
)

// TestGroupEnvUsage checks that a rendezvous variable out of range is a usage error (exit
// code 2) that names the variable and the range, before any device is opened: a world size
// of 99999999999 was a fatal out of memory, a port of 99999 exit code 1.
func TestGroupEnvUsage(t *testing.T) {
	vars := []string{"PRISM_RENDEZVOUS", "PRISM_RANK", "PRISM_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE",
		"SLURM_PROCID", "SLURM_NTASKS", group.TokenEnv}
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"PRISM_RENDEZVOUS=tcp://127.0.0.1:29500", "PRISM_RANK=0", "PRISM_WORLD_SIZE=99999999999"}, `PRISM_WORLD_SIZE="99999999999": want an integer from 1 to 65536`},
		{[]string{"PRISM_RENDEZVOUS=tcp://127.0.0.1:29500", "PRISM_RANK=0", "PRISM_WORLD_SIZE=1073741824"}, `PRISM_WORLD_SIZE="1073741824"`},
		{[]string{"PRISM_RENDEZVOUS=tcp://127.0.0.1:99999", "PRISM_RANK=0", "PRISM_WORLD_SIZE=2"}, `port "99999": want a port from 1 to 65535`},
		{[]string{"MASTER_ADDR=10.0.0.7", "MASTER_PORT=29500", "RANK=1", "WORLD_SIZE=2"}, "set PRISM_RENDEZVOUS_TOKEN"},
	} {
		t.Run(strings.Join(c.env, " "), func(t *testing.T) {
			for _, v := range vars {
				t.Setenv(v, "")
			}
			for _, kv := range c.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			// No device is given: the environment is refused before any is looked for.
			_, err := execPrism(t, "bench", "--ops", "collective/all-reduce", "--device", "nothing:9", "-q")
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v; want a usage error saying %q", err, c.want)
			}
		})
	}
}

// TestEndOnGroupPanic checks that a panic a group's goroutine handed over ends the command
// with exit code 70 after what it wrote before (the report), and that no other error does.
func TestEndOnGroupPanic(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{fmt.Errorf("bench: all-reduce: %w", &group.PanicError{Where: "reducing the parts", Value: "index out of range"}), exitInternal},
		{errors.New("group: peer gone"), exitError},
		{nil, exitOK},
	} {
		report := filepath.Join(t.TempDir(), "report.json")
		root := &cobra.Command{Use: "prism", SilenceUsage: true, SilenceErrors: true}
		root.AddCommand(&cobra.Command{Use: "collectives", RunE: func(*cobra.Command, []string) error {
			if err := os.WriteFile(report, []byte("{}"), 0o644); err != nil {
				return err
			}
			endOnGroupPanic(c.err)
			return c.err
		}})
		if code := runRoot(context.Background(), root, []string{"collectives"}); code != c.code {
			t.Errorf("%v: exit code %d; want %d", c.err, code, c.code)
		}
		if _, err := os.Stat(report); err != nil {
			t.Errorf("%v: the report was not written: %v", c.err, err)
		}
	}
}

// TestHostileRankZeroProcess runs `prism bench --ops collective/all-reduce` as rank 1 of
// a rendezvous on 127.0.0.1 whose process 0 is played here and answers with a lying plan
// or a refusal holding terminal escapes: the process exits 1 at once with a clear message,
// writes no report, and shows the escapes escaped. Before, a plan of 2^30 ranks hung past
// SIGINT, 0 lost the report (-Inf), -3 was reported verified.
func TestHostileRankZeroProcess(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	for _, c := range []struct {
		name string
		plan map[string]any
		want string
	}{
		{"Ranks 2^30", map[string]any{"First": 1, "Ranks": 1 << 30}, "process 0 sent a plan of 1073741824 ranks for 2 processes: want 2 to 65536"},
		{"Ranks 0", map[string]any{"First": 1, "Ranks": 0}, "a plan of 0 ranks"},
		{"Ranks -3", map[string]any{"First": 1, "Ranks": -3}, "a plan of -3 ranks"},
		{"escapes", map[string]any{"Err": "\x1b[2J\x1b[31mowned\u202e"}, `process 0 refused rank 1: \x1b[2J\x1b[31mowned\u202e`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go playRankZero(t, ln, c.plan)
			out := filepath.Join(t.TempDir(), "1.json")
			args := []string{"bench", "--device", ids[0], "--ops", "collective/all-reduce/float32", "--sizes", "1000", "--count", "1", "--warmup", "0", "--json", "-q", "-o", out}
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "PRISM_TEST_RUN_MAIN="+strings.Join(args, "\x1f"),
				"PRISM_RENDEZVOUS=tcp://"+ln.Addr().String(), "PRISM_RANK=1", "PRISM_WORLD_SIZE=2", group.TokenEnv+"=")
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
			defer timer.Stop()
			err = cmd.Wait()
			took := time.Since(start)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitError {
				t.Errorf("exit %v; want code %d\n%s", err, exitError, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, stderr.String())
			}
			if strings.ContainsAny(stderr.String(), "\x1b\u202e") {
				t.Errorf("stderr holds raw escapes: %q", stderr.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a report was written after a refused rendezvous")
			}
			t.Logf("%s: exit %v after %v", c.name, err, took.Round(time.Millisecond))
		})
	}
}

// playRankZero plays process 0 of a rendezvous without a token on ln: it sends its
// challenge, reads one hello and answers with pl.
func playRankZero(t *testing.T, ln net.Listener, pl map[string]any) {
	c, err := ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	frame := func(v any) {
		js, _ := json.Marshal(v)
		c.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(js))))
		c.Write(js)
	}
	frame(map[string]any{"Challenge": map[string]any{"Nonce": bytes.Repeat([]byte{1}, 32)}})
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		t.Errorf("no hello: %v", err)
		return
	}
	if _, err := io.CopyN(io.Discard, c, int64(binary.LittleEndian.Uint32(n[:]))); err != nil {
		t.Errorf("no hello: %v", err)
		return
	}
	frame(map[string]any{"Plan": pl})
	io.Copy(io.Discard, c) // until rank 1 leaves
}
