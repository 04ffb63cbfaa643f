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
// dev (an index into r.Devices), or nil: res.Vendor when set, else the result of the
// pseudo-device VendorPrefix + the device's ID (or of a pseudo-device of the same device
// name) for the same variant asked for, else for the same case and size. Only a verified,
// timed baseline counts.
func (r *Report) VendorBaseline(dev int, res *Result) *Result {
	if res == nil || dev < 0 || dev >= len(r.Devices) || r.Devices[dev].IsVendor() {
		return nil
	}
	return r.index().vendorBaseline(dev, res)
}

// hasVendor reports whether device dev has vendor baselines: it is not itself a vendor
// pseudo-device, and it has a pseudo-device or a result with its Vendor set.
func (ix *caseIndex) hasVendor(dev int) bool {
	d := &ix.r.Devices[dev]
	if d.IsVendor() {
		return false
	}
	if ix.vendorDev[dev] >= 0 {
		return true
	}
	for i := range d.Results {
		if d.Results[i].Vendor != nil {
			return true
		}
	}
	return false
}
