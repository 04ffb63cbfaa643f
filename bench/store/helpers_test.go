package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// newStore opens a store in a new file of the test's temporary directory.
func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// synthetic returns a report of one device ("opencl:0:0", name device) with cases results
// of samples samples each, started at date, of commit on host.
func synthetic(host, commit, device string, date time.Time, cases, samples int) *bench.Report {
	r := &bench.Report{Schema: bench.SchemaVersion, Prism: "devel", Commit: commit, Date: date.UTC(), Host: host,
		GoVersion: "go1.26", GOOS: "linux", GOARCH: "amd64", HostCPU: "Test CPU", Env: map[string]string{"POCL_WORK_GROUP_SPECIALIZATION": "0"},
		Command: []string{"prism", "bench", "--quick"}, Config: bench.ConfigInfo{Quick: true, Count: samples, Warmup: 1, Seed: 1}}
	dr := bench.DeviceReport{Device: engine.DeviceInfo{ID: "opencl:0:0", Name: device, Vendor: "Test", Kind: engine.KindCPU,
		DriverVersion: "1.0", APIVersion: "OpenCL 3.0", ClockMHz: 2000, ComputeUnits: 2, GlobalMemBytes: 1 << 30},
		Backend: "opencl", Ceilings: bench.Ceilings{CopyGBs: 10, CopyHow: "kernel", FP32GFLOPs: 50}, Timing: bench.TimingEvents,
		Results: []bench.Result{}}
	families := []string{"stream/triad", "stream/copy", "blas1/axpy", "reduce/sum", "gemm/nn"}
	for c := range cases {
		ss := make([]time.Duration, samples)
		for i := range ss {
			ss[i] = time.Duration(1000*(c+1) + (i*7)%13)
		}
		name := fmt.Sprintf("%s/float32", families[c%len(families)])
		size := 1 << (10 + c/len(families))
		res := bench.Result{Case: name, Family: strings.Split(name, "/")[0], Type: "float32",
			Size: size, Shape: fmt.Sprintf("n=%d", size), Variant: "portable", Stats: bench.Summarize(ss),
			Flops: float64(2 * size), Bytes: float64(12 * size), Verified: true, Bound: bench.BoundMemory}
		res.GBs = res.Bytes / float64(res.Stats.Median)
		dr.Results = append(dr.Results, res)
	}
	r.Devices = []bench.DeviceReport{dr}
	return r
}
