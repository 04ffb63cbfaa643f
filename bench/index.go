package bench

import "sync/atomic"

// caseIndex finds a report's results by device and row in constant time, so that the
// renderers, which look up every row on every device, take time linear in the number of
// results. Build one per render with Report.index; it does not follow later changes to the
// report.
type caseIndex struct {
	r *Report
	// rows are the report's rows (Report.rows), in order of first appearance.
	rows []caseKey
	// byDev maps, per device, a row to the index of its first result.
	byDev []map[caseKey]int
	// vendorDev is, per device, the index of its vendor pseudo-device (VendorPrefix + its
	// ID, else one of the same device name: the same card seen through another API), or -1.
	vendorDev []int
}

// lookups counts the calls of caseIndex.result in this process, for the tests that check
// that a render's work grows linearly with the results.
var lookups atomic.Int64

// index builds the caseIndex of r.
func (r *Report) index() *caseIndex {
	ix := &caseIndex{r: r, byDev: make([]map[caseKey]int, len(r.Devices)), vendorDev: make([]int, len(r.Devices))}
	seen := map[caseKey]bool{}
	byID := make(map[string]int, len(r.Devices))
	for i := range r.Devices {
		d := &r.Devices[i]
		if _, ok := byID[d.Device.ID]; !ok {
			byID[d.Device.ID] = i
		}
		m := make(map[caseKey]int, len(d.Results))
		for j := range d.Results {
			k := d.Results[j].key()
			if _, ok := m[k]; !ok {
				m[k] = j
			}
			if !seen[k] {
				seen[k] = true
				ix.rows = append(ix.rows, k)
			}
		}
		ix.byDev[i] = m
	}
	for i := range r.Devices {
		ix.vendorDev[i] = -1
		if j, ok := byID[VendorPrefix+r.Devices[i].Device.ID]; ok {
			ix.vendorDev[i] = j
			continue
		}
		for j := range r.Devices {
			if name := r.Devices[i].Device.Name; !r.Devices[i].IsVendor() && r.Devices[j].IsVendor() && name != "" && r.Devices[j].Device.Name == name {
				ix.vendorDev[i] = j
				break
			}
		}
	}
	return ix
}

// result returns device dev's first result of row k, or nil.
func (ix *caseIndex) result(dev int, k caseKey) *Result {
	lookups.Add(1)
	if dev < 0 || dev >= len(ix.byDev) {
		return nil
	}
	j, ok := ix.byDev[dev][k]
	if !ok {
		return nil
	}
	return &ix.r.Devices[dev].Results[j]
}

// vendorBaseline is Report.VendorBaseline through the index.
func (ix *caseIndex) vendorBaseline(dev int, res *Result) *Result {
	if res == nil || dev < 0 || dev >= len(ix.byDev) || ix.r.Devices[dev].IsVendor() {
		return nil
	}
	v := res.Vendor
	if v == nil && ix.vendorDev[dev] >= 0 {
		v = ix.vendorResult(ix.vendorDev[dev], res.key())
	}
	if v == nil || !v.OK() || v.Stats.Median <= 0 {
		return nil
	}
	return v
}
