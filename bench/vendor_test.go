package bench

import (
	"github.com/prism-compute/prism/engine"
	"testing"
	"time"
)

// TestVendorBaselineFallsBack: an in-process baseline that was skipped (cuBLASLt refusing
// a float8 layout) gives way to the vendor pseudo-device's (scripts/vendor.py's); where
// both are verified, the faster is the baseline.
func TestVendorBaselineFallsBack(t *testing.T) {
	timed := func(variant string, d time.Duration) Result {
		return Result{Case: "gemm/nn/float8e4m3", Size: 64 << 20, Variant: variant, Verified: true,
			Stats: Stats{Runs: 10, Median: d}}
	}
	prism := timed("cuda-mma", 7*time.Millisecond)
	prism.Vendor = &Result{Case: prism.Case, Size: prism.Size, Variant: "cuBLASLt", Skipped: "takes float8 only in the TN form"}
	rep := &Report{Devices: []DeviceReport{
		{Device: engine.DeviceInfo{ID: "cuda:0", Name: "H200"}, Results: []Result{prism}},
		{Device: engine.DeviceInfo{ID: VendorPrefix + "cuda:0", Name: "H200"}, Results: []Result{timed("torch._scaled_mm", time.Millisecond)}},
	}}
	if v := rep.VendorBaseline(0, &rep.Devices[0].Results[0]); v == nil || v.Variant != "torch._scaled_mm" {
		t.Errorf("baseline %+v; want the pseudo-device's, the in-process one being skipped", v)
	}
	// Both verified: the faster, whichever it is.
	slow := timed("cuBLASLt", 2*time.Millisecond)
	rep.Devices[0].Results[0].Vendor = &slow
	if v := rep.VendorBaseline(0, &rep.Devices[0].Results[0]); v == nil || v.Variant != "torch._scaled_mm" {
		t.Errorf("baseline %+v; want the pseudo-device's, which is faster", v)
	}
	fast := timed("cuBLASLt", time.Millisecond/2)
	rep.Devices[0].Results[0].Vendor = &fast
	if v := rep.VendorBaseline(0, &rep.Devices[0].Results[0]); v == nil || v.Variant != "cuBLASLt" {
		t.Errorf("baseline %+v; want the in-process one, which is faster", v)
	}
	// The pseudo-device failed: the in-process one, slower or not.
	rep.Devices[0].Results[0].Vendor = &slow
	rep.Devices[1].Results[0].Err = "out of memory"
	if v := rep.VendorBaseline(0, &rep.Devices[0].Results[0]); v == nil || v.Variant != "cuBLASLt" {
		t.Errorf("baseline %+v; want the in-process one, the pseudo-device's having failed", v)
	}
	if v := FasterBaseline(nil, nil); v != nil {
		t.Errorf("FasterBaseline(nil, nil) = %+v", v)
	}
}
