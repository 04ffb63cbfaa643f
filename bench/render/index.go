package render

import (
	"sync/atomic"

	"github.com/prism-compute/prism/bench"
)

// caseIndex finds a report's results by device and row in constant time, so that the
// renderers, which look up every row on every device, take time linear in the number of
// results. Build one per render with view.index; it does not follow later changes to the
// report.
type caseIndex struct {
	r *bench.Report
	// rows are the report's rows (view.rows), in order of first appearance.
	rows []bench.CaseKey
	// byDev maps, per device, a row to the index of its first result.
	byDev []map[bench.CaseKey]int
	// vendorDev is, per device, the index of its vendor pseudo-device
	// (Report.VendorDevice), or -1.
	vendorDev []int
}

// lookups counts the calls of caseIndex.result in this process, for the tests that check
// that a render's work grows linearly with the results.
var lookups atomic.Int64

// index builds the caseIndex of r.
func (r view) index() *caseIndex {
	ix := &caseIndex{r: r.Report, byDev: make([]map[bench.CaseKey]int, len(r.Devices)), vendorDev: make([]int, len(r.Devices))}
	seen := map[bench.CaseKey]bool{}
	for i := range r.Devices {
		d := &r.Devices[i]
		m := make(map[bench.CaseKey]int, len(d.Results))
		for j := range d.Results {
			k := d.Results[j].Key()
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
		ix.vendorDev[i] = r.VendorDevice(i)
	}
	return ix
}

// result returns device dev's first result of row k, or nil.
func (ix *caseIndex) result(dev int, k bench.CaseKey) *bench.Result {
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
func (ix *caseIndex) vendorBaseline(dev int, res *bench.Result) *bench.Result {
	if res == nil || dev < 0 || dev >= len(ix.byDev) || ix.r.Devices[dev].IsVendor() {
		return nil
	}
	v := res.Vendor
	if v == nil && ix.vendorDev[dev] >= 0 {
		v = ix.vendorResult(ix.vendorDev[dev], res.Key())
	}
	if v == nil || !v.OK() || v.Stats.Median <= 0 {
		return nil
	}
	return v
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
