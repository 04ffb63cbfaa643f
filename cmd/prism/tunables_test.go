package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine/enginetest"
)

// TestBenchTunables runs one variant with --tunables: the set runs, verified, and the
// report marks it forced; a set the variant refuses fails its case naming the constraint;
// --tunables without --variant naming one variant, or with --split, is a usage error; and
// prism run takes it as bench does.
func TestBenchTunables(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	results := func(out string) []bench.Result {
		t.Helper()
		var rep bench.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("not a report: %v\n%s", err, out)
		}
		var rs []bench.Result
		for _, d := range rep.Devices {
			rs = append(rs, d.Results...)
		}
		return rs
	}
	args := []string{"bench", "--device", ids[0], "--ops", "transpose/2d/float32", "--variant", "tiled", "--sizes", "4K", "--count", "1",
		"--warmup", "0", "--json", "-q"}
	out, err := execute(t, append(args, "--tunables", "TILE=16 WG=64 VEC=1")...)
	if err != nil {
		t.Fatal(err)
	}
	rs := results(out)
	if len(rs) != 1 || !rs[0].Verified || rs[0].Variant != "tiled" || rs[0].Tunables != "TILE=16 WG=64 VEC=1 (forced)" {
		t.Errorf("results %+v; want one verified run of tiled with the set, marked forced", rs)
	}
	out, _ = execute(t, append(args, "--tunables", "TILE=33 WG=64 VEC=1")...)
	if rs := results(out); len(rs) != 1 || rs[0].Verified || !strings.Contains(rs[0].Err, "must be powers of two") {
		t.Errorf("a set the variant refuses: %+v; want the case failed naming the constraint", rs)
	}
	for _, bad := range [][]string{
		{"bench", "--device", ids[0], "--ops", "transpose/2d/float32", "--tunables", "TILE=16 WG=64 VEC=1"},
		{"bench", "--device", ids[0], "--ops", "transpose/2d/float32", "--variant", "all", "--tunables", "TILE=16 WG=64 VEC=1"},
		{"bench", "--device", ids[0], "--ops", "transpose/2d/float32", "--variant", "tiled,portable", "--tunables", "TILE=16 WG=64 VEC=1"},
		{"bench", "--device", ids[0], "--ops", "transpose/2d/float32", "--variant", "tiled", "--split", "--tunables", "TILE=16 WG=64 VEC=1"},
		{"run", "transpose/2d/float32", "--device", ids[0], "--tunables", "TILE=16 WG=64 VEC=1"},
	} {
		_, err := execute(t, bad...)
		var usage usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--tunables") {
			t.Errorf("%v: %v; want a usage error about --tunables", bad, err)
		}
	}
	out, err = execute(t, "run", "transpose/2d/float32", "--device", ids[0], "--variant", "tiled", "--tunables", "TILE=16 WG=64 VEC=1",
		"--size", "4K", "--count", "1", "--warmup", "0", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []runResult
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(got) != 1 || !got[0].Verified || got[0].Tunables != "TILE=16 WG=64 VEC=1 (forced)" {
		t.Errorf("prism run --tunables: %+v; want one verified run marked forced", got)
	}
}
