package telemetry

import (
	"errors"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
)

// TestMissingLibrary checks that without NVML Open fails with ErrUnavailable and the
// process survives (a failed nvmlInit followed by any NVML call would exit with 127).
func TestMissingLibrary(t *testing.T) {
	old := libraryPath
	libraryPath = "libnvidia-ml-does-not-exist.so.1"
	defer func() { libraryPath = old }()
	for range 2 {
		r, err := Open()
		if !errors.Is(err, engine.ErrUnavailable) || r != nil {
			t.Fatalf("Open without NVML: %v, %v; want ErrUnavailable", r, err)
		}
	}
	var r *Reader
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSample reads every NVIDIA GPU that NVML lists through a bus ID given by NVML itself.
func TestSample(t *testing.T) {
	r, err := Open()
	if err != nil {
		if enginetest.Required("nvml") {
			t.Fatal(err)
		}
		t.Skipf("no NVML: %v", err)
	}
	defer r.Close()
	n, ret := r.lib.DeviceGetCount()
	if int(ret) != 0 || n == 0 {
		t.Skipf("NVML lists no GPU (%v)", r.lib.ErrorString(ret))
	}
	dev, _ := r.lib.DeviceGetHandleByIndex(0)
	pci, _ := r.lib.DeviceGetPciInfo(dev)
	bus := pciString(pci.BusIdLegacy[:])
	s, err := r.Sample(bus)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(s)
	if s.MemoryTotal == 0 || s.SMClockMHz == 0 {
		t.Errorf("implausible sample: %+v", s)
	}
	if _, err := r.Sample(""); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Sample(\"\"): %v, want ErrInvalidArg", err)
	}
	r.Close()
	if _, err := r.Sample(bus); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Sample after Close: %v, want ErrClosed", err)
	}
}

func pciString(b []uint8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, c)
	}
	return string(out)
}
