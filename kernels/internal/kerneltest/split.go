package kerneltest

import (
	"context"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/platform"
)

// SplitDevices returns the devices the split tests run on, closed when the test ends:
// every OpenCL device found, or with twins only those of the first one's name, platform
// and compute units (which compute alike); the first device opened twice where that
// leaves one (two openings are two devices to the engine).
func SplitDevices(t *testing.T, twins bool) []*engine.Device {
	t.Helper()
	dis, err := platform.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var first engine.DeviceInfo
	for _, d := range dis.Devices {
		if d.Backend != "opencl" {
			continue
		}
		if len(ids) == 0 {
			first = d.DeviceInfo
		} else if twins && (d.Name != first.Name || d.Platform != first.Platform || d.ComputeUnits != first.ComputeUnits) {
			continue
		}
		ids = append(ids, d.ID)
	}
	if len(ids) == 0 {
		t.Skipf("no OpenCL device found: %v", dis.Unavailable())
	}
	if len(ids) == 1 {
		ids = append(ids, ids[0])
	}
	devs := make([]*engine.Device, len(ids))
	for i, id := range ids {
		d, err := engine.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		devs[i] = d
	}
	return devs
}

// Evenly returns n equal fractions, the shares of a split evenly divided.
func Evenly(n int) []float64 {
	f := make([]float64, n)
	for i := range f {
		f[i] = 1 / float64(n)
	}
	return f
}
