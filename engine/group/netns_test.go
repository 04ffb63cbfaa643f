package group_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTwoHostsNetns runs a group of two processes on two "hosts": two network namespaces
// this test makes, joined by a veth pair (192.0.2.1 and 192.0.2.2, TEST-NET-1, seen by
// nothing outside them). Process 0 listens in the first at its veth address alone, process
// 1 dials it from the second, both prove the rendezvous token, and every collective of
// TestMPIRank runs on PoCL's device in each and verifies: once through Prism's TCP
// rendezvous (no MPI launcher started them, so they use Prism's TCP frames and say it is
// the fallback), once started by mpirun across the namespaces, through Open MPI's TCP
// transport over the veth pair. Needs root and iproute2's ip.
func TestTwoHostsNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("no ip (iproute2) on PATH")
	}
	ip := func(args ...string) error {
		out, err := exec.Command(ipPath, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	id := os.Getpid() % 1000000
	ns := [2]string{fmt.Sprint("prism-a-", id), fmt.Sprint("prism-b-", id)}
	veth := [2]string{fmt.Sprint("pva", id), fmt.Sprint("pvb", id)}
	addrs := [2]string{"192.0.2.1", "192.0.2.2"}
	if err := ip("netns", "add", ns[0]); err != nil {
		t.Skipf("cannot make a network namespace here: %v", err)
	}
	t.Cleanup(func() { ip("netns", "del", ns[0]) })
	if err := ip("netns", "add", ns[1]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ip("netns", "del", ns[1]) }) // deletes the veth pair with it
	steps := [][]string{{"link", "add", veth[0], "type", "veth", "peer", "name", veth[1]}}
	for i := range 2 {
		steps = append(steps,
			[]string{"link", "set", veth[i], "netns", ns[i]},
			[]string{"-n", ns[i], "addr", "add", addrs[i] + "/24", "dev", veth[i]},
			[]string{"-n", ns[i], "link", "set", veth[i], "up"},
			[]string{"-n", ns[i], "link", "set", "lo", "up"})
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("Prism's TCP rendezvous, the fallback", func(t *testing.T) {
		tok := make([]byte, 16)
		rand.Read(tok)
		token := hex.EncodeToString(tok)
		cmds := make([]*exec.Cmd, 2)
		outs := make([]strings.Builder, 2)
		for r := range 2 {
			c := exec.Command(ipPath, "netns", "exec", ns[r], os.Args[0], "-test.run", "^TestMPIRank$", "-test.v")
			c.Env = append(withoutLauncher(os.Environ()), "PRISM_RENDEZVOUS=tcp://"+addrs[0]+":29500", fmt.Sprint("PRISM_RANK=", r), "PRISM_WORLD_SIZE=2",
				"PRISM_RENDEZVOUS_TOKEN="+token, mpiRankEnv+"=1", mpiFallbackOK+"=1", mpiWantLib+"=host-staged over TCP (fallback: no MPI)")
			c.Stdout, c.Stderr = &outs[r], &outs[r]
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			cmds[r] = c
		}
		for r, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Errorf("process %d in %s: %v\n%s", r, ns[r], err, outs[r].String())
			}
		}
		for r := range cmds {
			if !strings.Contains(outs[r].String(), "--- PASS: TestMPIRank") {
				t.Errorf("process %d did not pass:\n%s", r, outs[r].String())
			}
			t.Logf("%s", grepLines(outs[r].String(), "through"))
		}
	})
	// Open MPI across the namespaces: mpirun runs in the first, and starts its daemon in
	// the second through an "rsh" that is ip netns exec; its daemons (routed direct) and
	// its TCP transport are held to the veth's network.
	t.Run("Open MPI over the veth pair", func(t *testing.T) {
		run := mpirun(t)
		host, err := os.Hostname()
		if err != nil {
			t.Fatal(err)
		}
		agent := filepath.Join(t.TempDir(), "netns-rsh")
		// Each "host" it starts has a /dev/shm of its own, as another machine would: the
		// processes must find that they share no memory and stay on MPI's collectives.
		script := "#!/bin/sh\n# An rsh for mpirun whose hosts are network namespaces: $1 is one, the rest the command.\nh=$1; shift\nexec " + ipPath + " netns exec \"$h\" sh -c \"mount -t tmpfs prism-shm /dev/shm && $*\"\n"
		if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		c := exec.Command(ipPath, "netns", "exec", ns[0], run, "--allow-run-as-root", "--oversubscribe", "--host", host+","+ns[1], "-np", "2",
			"--mca", "routed", "direct", "--mca", "plm_rsh_agent", agent,
			"--mca", "oob_tcp_if_include", "192.0.2.0/24", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "192.0.2.0/24",
			"-x", mpiRankEnv, "-x", mpiWantLib, "-x", mpiShared, os.Args[0], "-test.run", "^TestMPIRank$", "-test.v")
		c.Env = append(withoutLauncher(os.Environ()), mpiRankEnv+"=1", mpiWantLib+"=host-staged over Open MPI", mpiShared+"=apart")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("mpirun across %s and %s: %v\n%s", ns[0], ns[1], err, out)
		}
		if n := strings.Count(string(out), "--- PASS: TestMPIRank"); n != 2 {
			t.Fatalf("%d of 2 ranks passed:\n%s", n, out)
		}
		t.Logf("%s", grepLines(string(out), "through"))
	})
}

// withoutLauncher drops the variables of an MPI launcher or another rendezvous, so that a
// child takes only the rendezvous the test gives it.
func withoutLauncher(env []string) []string {
	var out []string
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		switch {
		case strings.HasPrefix(name, "OMPI_"), strings.HasPrefix(name, "PMI_"), strings.HasPrefix(name, "PMIX_"),
			name == "MASTER_ADDR", name == "MASTER_PORT", name == "RANK", name == "WORLD_SIZE", name == "SLURM_PROCID", name == "SLURM_NTASKS":
			continue
		}
		out = append(out, e)
	}
	return out
}
