package userkernel

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	_ "github.com/prism-compute/prism/cl" // registers the "opencl" backend
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
)

// addSrc writes y = a*x + BIAS for the items of a range of any size.
const addSrc = `
#ifndef BIAS
#define BIAS 0
#endif
__kernel void add(const float a, __global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + BIAS;
}
`

// openCL opens the first OpenCL device.
func openCL(t *testing.T) *engine.Device {
	t.Helper()
	dev, err := engine.Open(context.Background(), enginetest.DeviceIDs(t, "opencl")[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dev
}

// TestRun runs a kernel over 1000 items with the work-group size left to the launch:
// the size chosen divides 1000 and is more than the 8 a power of two would allow; the
// output is a*x+b, kept and written as a .npy file, and the runs are timed.
func TestRun(t *testing.T) {
	dev := openCL(t)
	args, err := ParseArgs([]string{"scalar:float32:2", "buf:float32:1000:range", "y=out:float32:1000"}, "add", 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l := &Launch{File: "add.cl", Source: addSrc, Kernel: "add", BuildOptions: []string{"-DBIAS=1"}, Args: args,
		Global: []int{1000}, Count: 2, SaveDir: dir}
	res, err := Run(context.Background(), dev, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Local) != 1 || 1000%res.Local[0] != 0 || res.Local[0] <= 8 {
		t.Errorf("local %v for 1000 items: want a divisor of 1000 above 8", res.Local)
	}
	if res.Stats.Runs != 2 || res.Timing == "" || res.Device != dev.ID() {
		t.Errorf("result %+v", res)
	}
	if len(res.Data) != 1 || len(res.Outputs) != 1 || res.Outputs[0].Name != "y" {
		t.Fatalf("outputs %+v", res.Outputs)
	}
	for i := range 1000 {
		if got := ElemFloat(float32Type, res.Data[0], i); got != float64(2*i+1) {
			t.Fatalf("y[%d] = %v, want %d", i, got, 2*i+1)
		}
	}
	a, err := ReadNPYFile(res.Outputs[0].File)
	if err != nil || filepath.Dir(res.Outputs[0].File) != dir || string(a.Data) != string(res.Data[0]) {
		t.Errorf("file %s: %v", res.Outputs[0].File, err)
	}

	// A work-group size given is kept; one that does not divide the range does not fit.
	if l.Args, err = ParseArgs([]string{"scalar:float32:2", "buf:float32:64:range", "y=out:float32:64"}, "add", 1); err != nil {
		t.Fatal(err)
	}
	l.Global, l.Local, l.SaveDir, l.Count = []int{64}, []int{16}, "", 0
	if res, err := Run(context.Background(), dev, l); err != nil || res.Local[0] != 16 || res.Timing != "" {
		t.Errorf("--local 16: %v, %+v", err, res)
	}
	l.Local = []int{48}
	var fe *FitError
	if _, err := Run(context.Background(), dev, l); !errors.As(err, &fe) || !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("local 48 of 64: error %v, want a *FitError", err)
	}
	l.Local, l.Kernel = nil, "sub"
	if _, err := Run(context.Background(), dev, l); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("kernel sub: error %v, want one wrapping engine.ErrNotFound", err)
	}
}
