//go:build !noopencl

package cl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

// envHelper, set in a child's environment, makes TestEnvHelper the child's whole work:
// probe, build a kernel on every device, and print what it saw as JSON.
const envHelper = "PRISM_CL_TEST_ENV_HELPER"

// envReport is what TestEnvHelper prints.
type envReport struct {
	Platforms []string          `json:"platforms"` // one per device
	Env       map[string]string `json:"env"`       // after the probe; absent: unset
	Err       string            `json:"err,omitempty"`
}

// driverVars are the variables the defaults set, and the opt-out.
var driverVars = []string{"POCL_WORK_GROUP_SPECIALIZATION", "POCL_CACHE_DIR", "RUSTICL_ENABLE", EnvNoDefaults}

// TestEnvHelper is the child of TestEnvDefaults; it does nothing in an ordinary run.
func TestEnvHelper(t *testing.T) {
	if os.Getenv(envHelper) == "" {
		t.Skip("run as a child of TestEnvDefaults")
	}
	var r envReport
	infos, err := (&Driver{}).Devices(context.Background())
	if err != nil {
		r.Err = err.Error()
	}
	for _, in := range infos {
		r.Platforms = append(r.Platforms, in.Platform)
		dev, err := (&Driver{}).Open(context.Background(), in.ID)
		if err != nil {
			t.Fatal(err)
		}
		p, err := dev.Build(testSource, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		dev.Close()
	}
	r.Env = map[string]string{}
	for _, name := range driverVars {
		if v, ok := os.LookupEnv(name); ok {
			r.Env[name] = v
		}
	}
	json.NewEncoder(os.Stdout).Encode(r)
}

// runEnvChild runs TestEnvHelper in a new process whose environment is this one's without
// the driver variables, plus set; it returns the report and the child's stderr.
func runEnvChild(t *testing.T, set map[string]string) (envReport, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestEnvHelper$", "-test.count=1")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(driverVars, name) && name != "PRISM_CACHE_DIR" && name != "PRISM_TRACE" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, envHelper+"=1")
	for k, v := range set {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, out, stderr.String())
	}
	var r envReport
	line := ""
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "{") {
			line = l
		}
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("child printed no report: %v\n%s", err, out)
	}
	return r, stderr.String()
}

// installedICD reports whether an ICD file of the loader's directory names lib.
func installedICD(lib string) bool {
	files, _ := filepath.Glob("/etc/OpenCL/vendors/*.icd")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), lib) {
			return true
		}
	}
	return false
}

func hasPlatform(r envReport, name string) bool {
	for _, p := range r.Platforms {
		if p == name {
			return true
		}
	}
	return false
}

// TestEnvDefaults runs the probe in child processes whose environment lacks the drivers'
// variables: the defaults are set (PoCL's cache under PRISM_CACHE_DIR, where PoCL then
// keeps the programs it built, and Rusticl's CPU listed), a value the user set (even
// empty) is kept, and PRISM_OPENCL_DEFAULTS=0 sets nothing.
func TestEnvDefaults(t *testing.T) {
	if underOclgrind(testDevices(t)) {
		t.Skip("under Oclgrind, the only platform of a child is Oclgrind's")
	}
	rusticl := installedICD("libRusticlOpenCL")
	pocl := installedICD("libpocl")

	t.Run("unset", func(t *testing.T) {
		cache := t.TempDir()
		r, stderr := runEnvChild(t, map[string]string{"PRISM_CACHE_DIR": cache, "PRISM_TRACE": "1"})
		want := map[string]string{
			"POCL_WORK_GROUP_SPECIALIZATION": "0",
			"POCL_CACHE_DIR":                 filepath.Join(cache, "pocl"),
			"RUSTICL_ENABLE":                 "llvmpipe",
		}
		for k, v := range want {
			if r.Env[k] != v {
				t.Errorf("%s = %q after the probe, want %q", k, r.Env[k], v)
			}
		}
		if !strings.Contains(stderr, "set RUSTICL_ENABLE=llvmpipe (") {
			t.Errorf("the trace does not say RUSTICL_ENABLE was set:\n%s", stderr)
		}
		if rusticl && !hasPlatform(r, "rusticl") {
			t.Errorf("RUSTICL_ENABLE unset: no Rusticl device listed (platforms of the devices: %q; %s)", r.Platforms, r.Err)
		} else if !rusticl {
			t.Log("Mesa's Rusticl is not installed: its device is not checked")
		}
		if pocl {
			if !hasPlatform(r, "Portable Computing Language") {
				t.Errorf("no PoCL device listed: %q %s", r.Platforms, r.Err)
			}
			entries, err := os.ReadDir(filepath.Join(cache, "pocl"))
			if err != nil || len(entries) == 0 {
				t.Errorf("PoCL kept nothing in %s after a build: %v", filepath.Join(cache, "pocl"), err)
			}
		}
	})

	t.Run("user", func(t *testing.T) {
		set := map[string]string{"RUSTICL_ENABLE": "", "POCL_CACHE_DIR": filepath.Join(t.TempDir(), "mine"),
			"POCL_WORK_GROUP_SPECIALIZATION": "1", "PRISM_TRACE": "1"}
		r, stderr := runEnvChild(t, set)
		for k, v := range set {
			if k != "PRISM_TRACE" && r.Env[k] != v {
				t.Errorf("%s = %q after the probe, want the user's %q", k, r.Env[k], v)
			}
		}
		if hasPlatform(r, "rusticl") {
			t.Errorf("RUSTICL_ENABLE set empty, yet Rusticl listed a device")
		}
		if rusticl && !strings.Contains(stderr, `"rusticl"`) || rusticl && !strings.Contains(stderr, "RUSTICL_ENABLE=llvmpipe lists the CPU") {
			t.Errorf("the trace gives no hint for Rusticl's empty platform:\n%s", stderr)
		}
	})

	t.Run("opt-out", func(t *testing.T) {
		r, _ := runEnvChild(t, map[string]string{EnvNoDefaults: "0"})
		for _, k := range driverVars[:3] {
			if v, ok := r.Env[k]; ok {
				t.Errorf("%s=0, yet %s = %q after the probe", EnvNoDefaults, k, v)
			}
		}
		if hasPlatform(r, "rusticl") {
			t.Errorf("%s=0 and RUSTICL_ENABLE unset, yet Rusticl listed a device", EnvNoDefaults)
		}
	})
}

// TestNoDeviceHint checks the hint for Mesa's platforms, which depends on RUSTICL_ENABLE.
func TestNoDeviceHint(t *testing.T) {
	t.Setenv("RUSTICL_ENABLE", "radeonsi")
	if h := noDeviceHint("rusticl"); !strings.Contains(h, "RUSTICL_ENABLE=radeonsi enables none") {
		t.Errorf("rusticl with RUSTICL_ENABLE=radeonsi: %q", h)
	}
	os.Unsetenv("RUSTICL_ENABLE")
	if h := noDeviceHint("rusticl"); h != "set RUSTICL_ENABLE=llvmpipe to list the CPU through it" {
		t.Errorf("rusticl, RUSTICL_ENABLE unset: %q", h)
	}
	if h := noDeviceHint("Clover"); !strings.Contains(h, "RUSTICL_ENABLE=llvmpipe") {
		t.Errorf("Clover: %q", h)
	}
	if h := noDeviceHint("Portable Computing Language"); h != "" {
		t.Errorf("PoCL: %q, want no hint", h)
	}
}

// TestBuildLogTrace checks that the log of a program that compiles with a warning goes to
// the trace, and nowhere without it. PoCL keeps the warning in the log; Rusticl 22.3 keeps
// none.
func TestBuildLogTrace(t *testing.T) {
	// A comment unique to the run keeps the drivers' caches from answering without a log.
	src := fmt.Sprintf("// %d\n#warning prism-build-log-check\n%s", time.Now().UnixNano(), testSource)
	for _, trace := range []string{"1", "0"} {
		forEachDevice(t, func(t *testing.T, dev *engine.Device) {
			t.Setenv("PRISM_TRACE", trace)
			got := captureStderr(t, func() {
				p, err := dev.Build(src + "// " + trace + "\n")
				if err != nil {
					t.Fatal(err)
				}
				p.Close()
			})
			has := strings.Contains(got, "prism-build-log-check")
			switch {
			case trace == "1" && !has && dev.Info().Platform == "Portable Computing Language":
				t.Errorf("PRISM_TRACE=1: the warning is not in the trace:\n%s", got)
			case trace == "1" && !has:
				t.Logf("%s keeps no warning in the log of a program that compiled", dev.Info().Platform) // Rusticl 22.3
			case trace == "0" && got != "":
				t.Errorf("PRISM_TRACE=0: the build printed %q", got)
			}
		})
	}
}

// captureStderr returns what f writes to os.Stderr (the variable: the trace's writer).
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	func() {
		defer func() { os.Stderr = saved; w.Close() }()
		f()
	}()
	return <-done
}
