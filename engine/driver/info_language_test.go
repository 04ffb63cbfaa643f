package driver

import "testing"

func TestInfoLanguage(t *testing.T) {
	pocl := DeviceInfo{OpenCLCVersions: "1.0 1.1 1.2 3.0", OpenCLCFeatures: "__opencl_c_int64 __opencl_c_images"}
	for _, c := range []struct {
		in      DeviceInfo
		version string
		want    bool
	}{
		{pocl, "1.2", true}, {pocl, "3.0", true}, {pocl, "2.0", false}, {pocl, "3", false}, {pocl, "", false},
		{DeviceInfo{}, "2.0", true}, // not reported: not checked
	} {
		if got := c.in.CompilesOpenCLC(c.version); got != c.want {
			t.Errorf("%q CompilesOpenCLC(%q) = %v, want %v", c.in.OpenCLCVersions, c.version, got, c.want)
		}
	}
	if !pocl.HasOpenCLCFeature("__opencl_c_images") || pocl.HasOpenCLCFeature("__opencl_c_subgroups") || pocl.HasOpenCLCFeature("__opencl_c_int") {
		t.Errorf("HasOpenCLCFeature on %q", pocl.OpenCLCFeatures)
	}
	for il, want := range map[string]bool{"": false, "SPIR-V_1.0": true, "SPIR-V_1.0 SPIR-V_1.2": true, "SPIR_1.2": false} {
		if got := (DeviceInfo{ILVersions: il}).TakesSPIRV(); got != want {
			t.Errorf("TakesSPIRV of %q = %v, want %v", il, got, want)
		}
	}
}
