package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine/enginetest"
)

// The cluster recipes of docs/cluster run here: their commands as they are written, with
// the variables the scheduler sets, each task or pod a process of its own "node" (a UTS
// namespace with the node's host name, so that the reports say which node they come
// from) on PoCL's device. The scheduler's own commands are stand-ins on PATH (srun starts
// every task here, scontrol names the nodes), prism is this test binary, and each run's
// results must land in one merged report.

// recipeFlags are the recipes' BENCH_FLAGS here: one small case, so that the test is quick.
const recipeFlags = "--device opencl:0:0 --ops stream/copy/float32 --sizes 4K --count 2 --warmup 0"

// recipeTools writes the stand-ins into a directory of their own and returns it.
func recipeTools(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("each node's own host name needs a UTS namespace: run as root")
	}
	for _, tool := range []string{"unshare", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH", tool)
		}
	}
	dir := t.TempDir()
	self, err := os.Executable() // the recipes run elsewhere: not os.Args[0], maybe relative
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]string{
		// prism is this test binary, its arguments passed as TestMain reads them.
		"prism": "#!/bin/bash\nIFS=$'\\x1f'\nexport PRISM_TEST_RUN_MAIN=\"$*\"\nexec " + strconv.Quote(self) + "\n",
		// srun starts every task of the job at once, task i as node i.
		"srun": `#!/bin/bash
while [[ $1 == -* ]]; do shift; done
pids=()
for ((i = 0; i < SLURM_NTASKS; i++)); do
	SLURM_PROCID=$i SLURM_NODEID=$i SLURM_LOCALID=0 SLURMD_NODENAME=node$i \
		unshare --uts sh -c 'hostname "$SLURMD_NODENAME" && exec "$@"' sh "$@" &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
exit $rc
`,
		// scontrol show hostnames: the first node is this host, for the rendezvous.
		"scontrol": "#!/bin/sh\necho localhost\nfor i in $(seq 1 $((SLURM_NTASKS - 1))); do echo node$i; done\n",
	}
	for name, text := range tools {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// recipeEnv is the environment of a recipe: this one's without launchers' and stores'
// variables, with the stand-ins first on PATH.
func recipeEnv(tools string, extra ...string) []string {
	var env []string
	for _, e := range withoutMPIEnv(os.Environ()) {
		name, _, _ := strings.Cut(e, "=")
		if strings.HasPrefix(name, "SLURM_") || strings.HasPrefix(name, "PRISM_") || name == "MASTER_ADDR" || name == "MASTER_PORT" || name == "PATH" {
			continue
		}
		env = append(env, e)
	}
	return append(append(env, "PATH="+tools+":"+os.Getenv("PATH")), extra...)
}

// checkMerged reads the merged report and checks that it holds every node's case and the
// collectives of nodes processes, verified.
func checkMerged(t *testing.T, path string, nodes []string, collectives int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.ReadReport(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var ids []string
	cases := 0
	for _, d := range rep.Devices {
		ids = append(ids, d.Device.ID)
		for _, r := range d.Results {
			if r.Case == "stream/copy/float32" && r.OK() {
				cases++
			}
		}
	}
	for _, n := range nodes {
		found := false
		for _, id := range ids {
			found = found || strings.HasPrefix(id, n+"/")
		}
		if !found {
			t.Errorf("%s: no device of %s among %v", path, n, ids)
		}
	}
	if cases < len(nodes) {
		t.Errorf("%s: %d verified stream/copy cases for %d nodes", path, cases, len(nodes))
	}
	if len(rep.Collectives) < collectives {
		t.Errorf("%s: %d collectives, want at least %d", path, len(rep.Collectives), collectives)
	}
	for _, c := range rep.Collectives {
		if !c.Verified || c.Ranks != len(nodes) {
			t.Errorf("%s: %s of %d: verified %v on %d ranks (%q)", path, c.Case, c.Count, c.Verified, c.Ranks, c.Err)
		}
	}
}

// TestSlurmRecipe runs docs/cluster/prism-bench.sbatch as sbatch would on two nodes: its
// three steps, srun's tasks as two nodes here, and checks the merged report.
func TestSlurmRecipe(t *testing.T) {
	tools := recipeTools(t)
	enginetest.DeviceIDs(t, "opencl")
	script, err := filepath.Abs("../../docs/cluster/prism-bench.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	_, port, _ := strings.Cut(freeLoopback(t), ":")
	c := exec.Command("bash", script)
	c.Dir = work
	c.Env = recipeEnv(tools, "SLURM_JOB_ID=4242", "SLURM_NTASKS=2", "SLURM_NNODES=2", "SLURM_JOB_NODELIST=node[0-1]",
		"MASTER_PORT="+port, "BENCH_FLAGS="+recipeFlags, "DEVICES=opencl:0:0", "SIZES=4K")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("bash %s: %v\n%s", script, err, out)
	}
	t.Logf("%s", out)
	res := filepath.Join(work, "results", "4242")
	checkMerged(t, filepath.Join(res, "report.json"), []string{"node0", "node1"}, 2)
	table, err := os.ReadFile(filepath.Join(res, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"node0/opencl:0:0", "node1/opencl:0:0", "collective/all-reduce"} {
		if !strings.Contains(string(table), w) {
			t.Errorf("report.txt lacks %s:\n%s", w, table)
		}
	}
}

// TestKubernetesJob runs the Indexed Job of docs/cluster/prism-bench-job.yaml as the
// kubelet would on two nodes: each pod the container's script with the Job's environment
// and JOB_COMPLETION_INDEX, its host name the pod's. The cluster's own parts are stood in
// for: the headless Service's name of pod 0 is 127.0.0.1 here (no cluster DNS), the
// volume a directory, the secret a fresh token.
func TestKubernetesJob(t *testing.T) {
	tools := recipeTools(t)
	enginetest.DeviceIDs(t, "opencl")
	b, err := os.ReadFile("../../docs/cluster/prism-bench-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yaml := string(b)
	script, env, mount := jobContainer(t, yaml)
	pods := 0
	if m := regexp.MustCompile(`(?m)^\s+completions: (\d+)$`).FindStringSubmatch(yaml); m != nil {
		fmt.Sscan(m[1], &pods)
	}
	if pods < 2 || env["PRISM_WORLD_SIZE"] != fmt.Sprint(pods) {
		t.Fatalf("the Job runs %d pods with PRISM_WORLD_SIZE=%q", pods, env["PRISM_WORLD_SIZE"])
	}
	results := t.TempDir()
	script = strings.ReplaceAll(script, mount, results)
	rendezvous := env["PRISM_RENDEZVOUS"]
	if !strings.HasPrefix(rendezvous, "tcp://prism-bench-0.prism-bench:") {
		t.Fatalf("PRISM_RENDEZVOUS=%q: not pod 0's name behind the Service", rendezvous)
	}
	env["PRISM_RENDEZVOUS"] = "tcp://" + freeLoopback(t)
	tok := make([]byte, 32)
	rand.Read(tok)
	env["PRISM_RENDEZVOUS_TOKEN"] = hex.EncodeToString(tok) // the secret prism-rendezvous
	env["BENCH_FLAGS"], env["DEVICES"], env["SIZES"] = recipeFlags, "opencl:0:0", "4K"
	cmds := make([]*exec.Cmd, pods)
	outs := make([]strings.Builder, pods)
	for i := range cmds {
		var extra []string
		for k, v := range env {
			extra = append(extra, k+"="+v)
		}
		extra = append(extra, fmt.Sprint("JOB_COMPLETION_INDEX=", i), fmt.Sprint("PRISM_TEST_POD=prism-bench-", i))
		// the pod: its host name, then the container's command
		c := exec.Command("unshare", "--uts", "sh", "-c", `hostname "$PRISM_TEST_POD" && exec /bin/sh -c "$0"`, script)
		c.Env = recipeEnv(tools, extra...)
		c.Stdout, c.Stderr = &outs[i], &outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = c
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("pod %d: %v\n%s", i, err, outs[i].String())
		}
		t.Logf("pod %d:\n%s", i, outs[i].String())
	}
	if t.Failed() {
		return
	}
	var nodes []string
	for i := range pods {
		nodes = append(nodes, fmt.Sprint("prism-bench-", i))
	}
	checkMerged(t, filepath.Join(results, "report.json"), nodes, 1)
	table, err := os.ReadFile(filepath.Join(results, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(table), "prism-bench-1/opencl:0:0") {
		t.Errorf("report.txt lacks pod 1's device:\n%s", table)
	}
}

// jobContainer reads the container of the Job's pod template: its script (args' block),
// the env entries with a value, and the mount path of the results volume.
func jobContainer(t *testing.T, yaml string) (script string, env map[string]string, mount string) {
	t.Helper()
	env = map[string]string{}
	for _, m := range regexp.MustCompile(`- name: (\w+)\n\s+value: "?([^"\n]*)"?`).FindAllStringSubmatch(yaml, -1) {
		env[m[1]] = m[2]
	}
	m := regexp.MustCompile(`(?s)\n(\s+)args:\n\s+- \|\n(.*?)\n\s+ports:`).FindStringSubmatch(yaml)
	if m == nil {
		t.Fatal("no args block in the Job's container")
	}
	lines := strings.Split(m[2], "\n")
	indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	for i, l := range lines {
		if len(l) >= indent {
			lines[i] = l[indent:]
		}
	}
	script = strings.Join(lines, "\n") + "\n"
	mm := regexp.MustCompile(`mountPath: (\S+)`).FindStringSubmatch(yaml)
	if mm == nil {
		t.Fatal("no mountPath in the Job")
	}
	return script, env, mm[1]
}
