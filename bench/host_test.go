package bench

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestResultEnv(t *testing.T) {
	t.Setenv("POCL_TEST_SETTING", "7")
	t.Setenv("PRISM_STORE", "postgres://u:pw@db/prism")
	t.Setenv("PRISM_DB_PASSWORD", "pw")
	t.Setenv("UNRELATED_SETTING", "x")
	t.Setenv("POCL_CACHE_DIR", "/tmp/a")
	t.Setenv("PRISM_CACHE_DIR", "/tmp/b")
	env := ResultEnv()
	if env["POCL_TEST_SETTING"] != "7" {
		t.Errorf("ResultEnv()[POCL_TEST_SETTING] = %q, want 7", env["POCL_TEST_SETTING"])
	}
	for _, k := range []string{"PRISM_STORE", "PRISM_DB_PASSWORD", "UNRELATED_SETTING", "POCL_CACHE_DIR", "PRISM_CACHE_DIR"} {
		if v, ok := env[k]; ok {
			t.Errorf("ResultEnv() holds %s=%q, which does not change results or may be a secret", k, v)
		}
	}
}

func TestHostCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("HostCPU reads /proc/cpuinfo, on Linux only")
	}
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	got := HostCPU()
	if got == "" && runtime.GOARCH == "amd64" {
		t.Fatalf("HostCPU() is empty on amd64; /proc/cpuinfo starts:\n%.300s", raw)
	}
	t.Logf("HostCPU() = %q", got)
}

// TestReportHostFieldsRoundTrip writes a report with the host's CPU and environment and reads
// it back: both survive, and a report without them (every older one) reads as before.
func TestReportHostFieldsRoundTrip(t *testing.T) {
	in := &Report{Schema: SchemaVersion, Host: "h", HostCPU: "Test CPU 3000", Env: map[string]string{"POCL_X": "1"},
		Devices: []DeviceReport{{Backend: "opencl", Results: []Result{}}}}
	var buf bytes.Buffer
	if err := in.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	out, err := ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if out.HostCPU != in.HostCPU || out.Env["POCL_X"] != "1" || len(out.Env) != 1 {
		t.Errorf("read back host_cpu %q, env %v; want %q, %v", out.HostCPU, out.Env, in.HostCPU, in.Env)
	}
	old, err := ReadReport(strings.NewReader(`{"schema": 1, "host": "h", "devices": [{"device": {"id": "opencl:0:0"}, "results": []}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if old.HostCPU != "" || old.Env != nil {
		t.Errorf("a report without host_cpu and env read as %q, %v", old.HostCPU, old.Env)
	}
}
