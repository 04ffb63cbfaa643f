package platform

import (
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

func dev(id, backend string, kind engine.Kind, cus, mhz int, bus string) Device {
	return Device{DeviceInfo: engine.DeviceInfo{ID: id, Name: id, Kind: kind, ComputeUnits: cus, ClockMHz: mhz, PCIBusID: bus}, Backend: backend}
}

func TestSelect(t *testing.T) {
	// One H100 seen through CUDA and OpenCL, a PoCL CPU, and a smaller second GPU.
	devs := []Device{
		dev("opencl:0:0", "opencl", engine.KindGPU, 132, 1980, "0000:17:00.0"),
		dev("opencl:1:0", "opencl", engine.KindCPU, 16, 3000, ""),
		dev("cuda:0", "cuda", engine.KindGPU, 132, 1980, "0000:17:00.0"),
		dev("opencl:0:1", "opencl", engine.KindGPU, 20, 1500, "0000:65:00.0"),
	}
	matchCards(devs)
	if got := devs[2].SameCard; len(got) != 1 || got[0] != "opencl:0:0" {
		t.Fatalf("cuda:0 SameCard = %v, want [opencl:0:0]", got)
	}
	for _, tc := range []struct{ spec, want string }{
		{"", "cuda:0"},
		{"gpu", "cuda:0"},
		{"GPU", "cuda:0"},
		{"cpu", "opencl:1:0"},
		{"opencl", "opencl:0:0"},
		{"opencl:0:1", "opencl:0:1"},
		{" cuda:0 ", "cuda:0"},
	} {
		got, why, err := Select(devs, tc.spec)
		if err != nil || got.ID != tc.want {
			t.Errorf("Select(%q) = %s, %v; want %s", tc.spec, got.ID, err, tc.want)
		}
		if err == nil && why == "" {
			t.Errorf("Select(%q) gave no reason", tc.spec)
		}
	}
	for _, spec := range []string{"accelerator", "opencl:9:9", "vulkan"} {
		if _, _, err := Select(devs, spec); !errors.Is(err, ErrNoDevice) || !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("Select(%q) error = %v, want ErrNoDevice", spec, err)
		}
	}
	if _, _, err := Select(nil, ""); !errors.Is(err, ErrNoDevice) {
		t.Errorf("Select on an empty list: %v, want ErrNoDevice", err)
	}
}

// TestSelectNoMatch: a spec that matches nothing says what it was taken for and lists
// the devices by ID, kind and name, and the classes a spec may name.
func TestSelectNoMatch(t *testing.T) {
	devs := []Device{
		dev("opencl:0:0", "opencl", engine.KindCPU, 2, 2000, ""),
		dev("opencl:1:0", "opencl", engine.KindCPU, 8, 300, ""),
	}
	list := "the devices are opencl:0:0 (cpu, opencl:0:0), opencl:1:0 (cpu, opencl:1:0); --device and PRISM_DEVICE also take a backend"
	for _, c := range []struct{ spec, want string }{
		{"nope", `platform: no device matches "nope"; ` + list},
		{"opencl:9:9", `platform: no device matches "opencl:9:9": no device has that ID; ` + list},
		{"gpu", `platform: no device matches "gpu": no device is of class gpu; ` + list},
	} {
		_, _, err := Select(devs, c.spec)
		if !errors.Is(err, ErrNoDevice) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Select(%q) = %v,\nwant it to start %q", c.spec, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "or a class (gpu, accelerator, cpu)") {
			t.Errorf("Select(%q) = %v: the classes are missing", c.spec, err)
		}
	}
}

func TestLessID(t *testing.T) {
	if !lessID("opencl:2:0", "opencl:10:0") || lessID("opencl:10:0", "opencl:2:0") {
		t.Error("numeric parts must compare as numbers")
	}
	if !lessID("opencl:1:0", "opencl:1:1") {
		t.Error("opencl:1:0 < opencl:1:1")
	}
}

func TestRankedCPUOnlyPrefersLargerPeak(t *testing.T) {
	devs := []Device{
		dev("opencl:0:0", "opencl", engine.KindCPU, 2, 2000, ""),
		dev("opencl:1:0", "opencl", engine.KindCPU, 16, 2000, ""),
	}
	if r := Ranked(devs); r[0].ID != "opencl:1:0" {
		t.Errorf("Ranked()[0] = %s, want the 16-unit CPU", r[0].ID)
	}
}
