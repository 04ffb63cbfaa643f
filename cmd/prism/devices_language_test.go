package main

import (
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestLanguageLine: prism devices says which OpenCL C versions, features and ILs a device
// has, as PoCL 3.1 reports them here and as a device with SPIR-V would.
func TestLanguageLine(t *testing.T) {
	cases := []struct {
		in   engine.DeviceInfo
		want string
	}{
		{engine.DeviceInfo{OpenCLCVersions: "1.0 1.1 1.2 3.0", OpenCLCFeatures: "__opencl_c_int64 __opencl_c_fp64"},
			"OpenCL C 1.0 1.1 1.2 3.0; features __opencl_c_int64 __opencl_c_fp64; IL none"},
		{engine.DeviceInfo{OpenCLCVersions: "1.2 3.0", OpenCLCFeatures: "__opencl_c_subgroups", ILVersions: "SPIR-V_1.0 SPIR-V_1.2"},
			"OpenCL C 1.2 3.0; features __opencl_c_subgroups; IL SPIR-V_1.0 SPIR-V_1.2"},
		{engine.DeviceInfo{OpenCLCVersions: "1.0 1.1 1.2"}, "OpenCL C 1.0 1.1 1.2; IL none"},
		{engine.DeviceInfo{ILVersions: "SPIR-V_1.0"}, "OpenCL C (not reported); IL SPIR-V_1.0"},
		{engine.DeviceInfo{Name: "a CUDA device", LanguageVersion: "sm_90"}, ""},
	}
	for _, c := range cases {
		if got := languageLine(c.in); got != c.want {
			t.Errorf("languageLine(%+v) = %q, want %q", c.in, got, c.want)
		}
	}
}
