package render

import (
	"sync/atomic"

	"github.com/prism-compute/prism/bench"
)

// caseIndex finds a report's results by device and row in constant time, so that the
// renderers, which look up every row on every device, take time linear in the number of
// results. Build one per render with view.index; it does not follow later changes to the
// report, and is not safe for concurrent use.
//
// One map finds a row's number, and a slice per device its result: a map per device
// keyed by case, size and variant made every lookup a hash of strings in a map as large
// as the report, and the table of 200,000 results spent a third of its time there, more
// per result the larger the report (the maps outgrow the caches). The renderers look a
// row up on every device in turn, so the last row found is kept.
type caseIndex struct {
	r *bench.Report
	// rows are the report's rows (view.rows), in order of first appearance; rowOf numbers
	// them.
	rows  []bench.CaseKey
	rowOf map[bench.CaseKey]int32
	// byRow is, per device, the index of the row's first result on it, or -1.
	byRow [][]int32
	// vendorDev is, per device, the index of its vendor pseudo-device
	// (Report.VendorDevice), or -1.
	vendorDev []int
	// lastKey and lastRow are the row found last (lastRow -1: none yet).
	lastKey bench.CaseKey
	lastRow int32
}

// lookups counts the calls of caseIndex.result in this process, and mapLookups the
// lookups of a row in rowOf, for the tests that check that a render's work grows
// linearly with the results.
var lookups, mapLookups atomic.Int64

// index builds the caseIndex of r.
func (r view) index() *caseIndex {
	n := 0
	for i := range r.Devices {
		n += len(r.Devices[i].Results)
	}
	ix := &caseIndex{r: r.Report, rowOf: make(map[bench.CaseKey]int32, n), byRow: make([][]int32, len(r.Devices)),
		vendorDev: make([]int, len(r.Devices)), lastRow: -1}
	rowsOf := make([][]int32, len(r.Devices)) // per device and result, its row
	for i := range r.Devices {
		d := &r.Devices[i]
		rowsOf[i] = make([]int32, len(d.Results))
		for j := range d.Results {
			k := d.Results[j].Key()
			row, ok := ix.rowOf[k]
			if !ok {
				row = int32(len(ix.rows))
				ix.rowOf[k] = row
				ix.rows = append(ix.rows, k)
			}
			rowsOf[i][j] = row
		}
	}
	for i := range r.Devices {
		by := make([]int32, len(ix.rows))
		for j := range by {
			by[j] = -1
		}
		for j := len(rowsOf[i]) - 1; j >= 0; j-- { // the first result of a row wins
			by[rowsOf[i][j]] = int32(j)
		}
		ix.byRow[i] = by
		ix.vendorDev[i] = r.VendorDevice(i)
	}
	return ix
}

// row returns the number of row k, and whether the report has it.
func (ix *caseIndex) row(k bench.CaseKey) (int32, bool) {
	if ix.lastRow >= 0 && k == ix.lastKey {
		return ix.lastRow, true
	}
	mapLookups.Add(1)
	row, ok := ix.rowOf[k]
	if ok {
		ix.lastKey, ix.lastRow = k, row
	}
	return row, ok
}

// result returns device dev's first result of row k, or nil.
func (ix *caseIndex) result(dev int, k bench.CaseKey) *bench.Result {
	lookups.Add(1)
	if dev < 0 || dev >= len(ix.byRow) {
		return nil
	}
	row, ok := ix.row(k)
	if !ok {
		return nil
	}
	return ix.at(dev, row)
}

// at returns device dev's first result of row number row, or nil.
func (ix *caseIndex) at(dev int, row int32) *bench.Result {
	j := ix.byRow[dev][row]
	if j < 0 {
		return nil
	}
	return &ix.r.Devices[dev].Results[j]
}

// vendorBaseline is Report.VendorBaseline through the index.
func (ix *caseIndex) vendorBaseline(dev int, res *bench.Result) *bench.Result {
	if res == nil || dev < 0 || dev >= len(ix.byRow) || ix.r.Devices[dev].IsVendor() {
		return nil
	}
	var pseudo *bench.Result
	if ix.vendorDev[dev] >= 0 {
		pseudo = ix.vendorResult(ix.vendorDev[dev], res.Key())
	}
	return bench.FasterBaseline(res.Vendor, pseudo)
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
