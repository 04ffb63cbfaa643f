package bench

import "strings"

// VendorPrefix starts the ID of a pseudo-device whose results are the vendor library's
// timings of the same cases on the real device whose ID follows: "vendor:cuda:0" holds the
// vendor baselines of "cuda:0".
const VendorPrefix = "vendor:"

// IsVendor reports whether the device report holds vendor baselines (its ID starts with
// VendorPrefix).
func (d *DeviceReport) IsVendor() bool { return strings.HasPrefix(d.Device.ID, VendorPrefix) }

// VendorBaseline returns the vendor's result for the same case and size as res on device
// dev (an index into r.Devices), or nil: the faster of res.Vendor (the same run's
// in-process library, --vendor) and the result of the pseudo-device VendorPrefix + the
// device's ID (or of a pseudo-device of the same device name: scripts/vendor.py) for the
// same variant asked for, else for the same case and size. Only a verified, timed baseline
// counts: an in-process one that was skipped or failed (cuBLASLt refusing a float8 layout)
// gives way to the pseudo-device's. The faster, because a ratio against the slower of two
// vendor routines for the same case would flatter Prism (on an H200, torch._scaled_mm's
// float8 GEMM ran 17% faster than the cuBLASLt call made in process).
func (r *Report) VendorBaseline(dev int, res *Result) *Result {
	if res == nil || dev < 0 || dev >= len(r.Devices) || r.Devices[dev].IsVendor() {
		return nil
	}
	var pseudo *Result
	if j := r.VendorDevice(dev); j >= 0 {
		k := res.Key()
		if pseudo = r.Devices[j].result(k); pseudo == nil {
			pseudo = r.Devices[j].result(CaseKey{k.Case, k.Size, "", k.Dims})
		}
	}
	return FasterBaseline(res.Vendor, pseudo)
}

// FasterBaseline returns the faster of two vendor baselines of one case, counting only a
// verified, timed one; nil when neither is.
func FasterBaseline(a, b *Result) *Result {
	ok := func(v *Result) bool { return v != nil && v.OK() && v.Stats.Median > 0 }
	switch {
	case !ok(a) && !ok(b):
		return nil
	case !ok(a):
		return b
	case !ok(b) || a.Stats.Median <= b.Stats.Median:
		return a
	}
	return b
}

// VendorDevice returns the index of the vendor pseudo-device of device dev: the one whose
// ID is VendorPrefix + the device's ID, else one of the same device name (the same card
// seen through another API); -1 when there is none, or dev is itself a vendor
// pseudo-device found by name only.
func (r *Report) VendorDevice(dev int) int {
	if dev < 0 || dev >= len(r.Devices) {
		return -1
	}
	d := &r.Devices[dev]
	for j := range r.Devices {
		if r.Devices[j].Device.ID == VendorPrefix+d.Device.ID {
			return j
		}
	}
	if d.IsVendor() || d.Device.Name == "" {
		return -1
	}
	for j := range r.Devices {
		if r.Devices[j].IsVendor() && r.Devices[j].Device.Name == d.Device.Name {
			return j
		}
	}
	return -1
}

// result returns the device's first result of case k, or nil.
func (d *DeviceReport) result(k CaseKey) *Result {
	for i := range d.Results {
		if d.Results[i].Key() == k {
			return &d.Results[i]
		}
	}
	return nil
}
