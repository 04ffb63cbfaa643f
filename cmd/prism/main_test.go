package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/prism-compute/prism/engine/enginetest"
)

func TestUsageExitCode(t *testing.T) {
	if code := run(context.Background(), []string{"devices", "--no-such-flag"}); code != exitUsage {
		t.Errorf("unknown flag: exit %d, want %d", code, exitUsage)
	}
	if code := run(context.Background(), []string{"bench", "--count", "0"}); code != exitUsage {
		t.Errorf("--count 0: exit %d, want %d", code, exitUsage)
	}
	if code := run(context.Background(), []string{"bench", "--device", "vulkan:9"}); code != exitUnavailable {
		t.Errorf("unknown device: exit %d, want %d", code, exitUnavailable)
	}
}

// TestDevicesJSON checks that `prism devices --json` is valid JSON listing the OpenCL
// devices with their facts.
func TestDevicesJSON(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"devices", "--json"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Devices []struct {
			ID           string `json:"id"`
			Name         string `json:"name"`
			Kind         string `json:"kind"`
			Backend      string `json:"backend"`
			ComputeUnits int    `json:"compute_units"`
			GlobalMem    int64  `json:"global_mem_bytes"`
		} `json:"devices"`
		Backends []struct {
			Name string `json:"name"`
		} `json:"backends"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	seen := map[string]bool{}
	for _, d := range got.Devices {
		seen[d.ID] = true
		if d.Name == "" || d.Kind == "" || d.Backend == "" || d.ComputeUnits <= 0 || d.GlobalMem <= 0 {
			t.Errorf("device %s lacks facts: %+v", d.ID, d)
		}
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("%s missing from devices --json", id)
		}
	}
}
