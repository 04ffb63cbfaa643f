package telemetry

import (
	"errors"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

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

// lyingNVML answers every query of Sample with a value no GPU has.
type lyingNVML struct{ nvml.Interface }

func (lyingNVML) DeviceGetHandleByPciBusId(string) (nvml.Device, nvml.Return) {
	return nil, nvml.SUCCESS
}
func (lyingNVML) DeviceGetUtilizationRates(nvml.Device) (nvml.Utilization, nvml.Return) {
	return nvml.Utilization{Gpu: 4000}, nvml.SUCCESS
}
func (lyingNVML) DeviceGetMemoryInfo(nvml.Device) (nvml.Memory, nvml.Return) {
	return nvml.Memory{Total: 1 << 30, Used: 1 << 40}, nvml.SUCCESS
}
func (lyingNVML) DeviceGetTemperature(nvml.Device, nvml.TemperatureSensors) (uint32, nvml.Return) {
	return 1 << 31, nvml.SUCCESS
}
func (lyingNVML) DeviceGetPowerUsage(nvml.Device) (uint32, nvml.Return) {
	return 1<<32 - 1, nvml.SUCCESS // milliwatts: 4.3 MW
}
func (lyingNVML) DeviceGetClockInfo(_ nvml.Device, c nvml.ClockType) (uint32, nvml.Return) {
	if c == nvml.CLOCK_SM {
		return 1<<32 - 1, nvml.SUCCESS
	}
	return 1593, nvml.SUCCESS
}

// TestSampleBounded samples through an NVML that reports impossible figures: each is
// cleared and named in Missing, the plausible one kept.
func TestSampleBounded(t *testing.T) {
	r := &Reader{lib: lyingNVML{}}
	s, err := r.Sample("0000:17:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if s.UtilizationPct != 0 || s.MemoryUsed != 0 || s.MemoryTotal != 0 || s.TemperatureC != 0 || s.PowerW != 0 || s.SMClockMHz != 0 {
		t.Errorf("implausible figures kept: %+v", s)
	}
	if s.MemClockMHz != 1593 {
		t.Errorf("a plausible memory clock was dropped: %+v", s)
	}
	if len(s.Missing) != 5 {
		t.Errorf("Missing = %q; want utilization, memory, temperature, power and sm clock named", s.Missing)
	}
	t.Log(s)
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
