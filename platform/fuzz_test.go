package platform

import (
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// FuzzSelect feeds device specs (--device, PRISM_DEVICE) to Select over a fixed set of
// devices: it must never panic, and a device it returns must be one of them.
func FuzzSelect(f *testing.F) {
	devs := []Device{
		{DeviceInfo: engine.DeviceInfo{ID: "cuda:0", Name: "NVIDIA H100", Kind: engine.KindGPU, ComputeUnits: 132, ClockMHz: 1980, PCIBusID: "0000:1b:00.0"}, Backend: "cuda"},
		{DeviceInfo: engine.DeviceInfo{ID: "opencl:0:0", Name: "pthread-cpu", Kind: engine.KindCPU, ComputeUnits: 16, ClockMHz: 2100}, Backend: "opencl"},
		{DeviceInfo: engine.DeviceInfo{ID: "opencl:1:0", Name: "NVIDIA H100", Kind: engine.KindGPU, ComputeUnits: 132, ClockMHz: 1980, PCIBusID: "0000:1b:00.0"}, Backend: "opencl"},
	}
	for _, s := range []string{"", "cuda:0", "opencl:1:0", "gpu", "cpu", "accelerator", "opencl", "cuda", "cuda:", ":", "opencl:9:9", "OPENCL:0:0", " gpu ", "cuda:0,opencl", "\x00", "opencl:-1:0", "cuda:99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		d, why, err := Select(devs, spec)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Errorf("Select(%q): empty error", spec)
			}
			return
		}
		found := false
		for _, x := range devs {
			found = found || x.ID == d.ID
		}
		if !found || why == "" {
			t.Errorf("Select(%q) = %q (%q), not one of the devices or without a reason", spec, d.ID, why)
		}
	})
}
