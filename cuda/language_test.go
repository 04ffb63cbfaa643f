package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine/driver"
)

// TestSPIRVRefused: the CUDA backend does not list SPIR-V among its dialects, and a
// SPIR-V module that reaches it is refused by name, before NVRTC or the device is used.
func TestSPIRVRefused(t *testing.T) {
	d := &device{info: driver.DeviceInfo{Name: "NVIDIA H200"}}
	for _, dl := range d.Dialects() {
		if dl == driver.DialectSPIRV {
			t.Errorf("Dialects() = %v lists SPIR-V", d.Dialects())
		}
	}
	module := []byte{0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}
	_, err := d.BuildSource(driver.Source{Dialect: driver.DialectSPIRV, Binary: module}, nil)
	want := "cuda: build SPIR-V on NVIDIA H200: the CUDA backend takes no SPIR-V"
	if !errors.Is(err, driver.ErrUnsupported) || !strings.Contains(err.Error(), want) {
		t.Errorf("BuildSource(SPIR-V) = %v, want ErrUnsupported containing %q", err, want)
	}
}

// TestStdOptionDropped: -cl-std reaches the translation's options and is dropped there
// (the translation's dialect is fixed), with every other option kept.
func TestStdOptionDropped(t *testing.T) {
	got, err := translateOptions([]string{"-DN=4 -cl-std=CL3.0", "-cl-std=CL1.2"})
	if err != nil || strings.Join(got, " ") != "-DN=4" {
		t.Errorf("translateOptions = %q, %v; want [-DN=4]", got, err)
	}
}
