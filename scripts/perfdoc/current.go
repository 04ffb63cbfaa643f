package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prism-compute/prism/bench"
)

// source is one stored report with results, and the vendor baselines stored beside it.
type source struct {
	file    string          // the file's base name
	rep     *bench.Report   // the report
	vendors []*bench.Report // scripts/vendor.py's reports of the same run
	// vendorFiles are the base names of vendors' files, in the same order.
	vendorFiles []string
}

// loadResults reads every *.json file of dir, in name order: the reports with results
// of a device of their own or with splits, each with the vendor-only reports whose file names share its
// stem. A file that is not a report is an error naming it.
func loadResults(dir string) ([]*source, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("perfdoc: %w", err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("perfdoc: no report (*.json) in %s", dir)
	}
	slices.Sort(names)
	var sources []*source
	vendors := map[string][]*bench.Report{} // stem -> vendor-only reports
	vendorFiles := map[string][]string{}    // stem -> their base names
	for _, name := range names {
		rep, err := bench.ReadReportFile(name)
		if err != nil {
			return nil, fmt.Errorf("perfdoc: %w", err)
		}
		base := filepath.Base(name)
		switch {
		case vendorOnly(rep):
			vendors[stem(base)] = append(vendors[stem(base)], rep)
			vendorFiles[stem(base)] = append(vendorFiles[stem(base)], base)
		case hasResults(rep) || len(rep.Splits) > 0:
			sources = append(sources, &source{file: base, rep: rep})
		}
	}
	for _, s := range sources {
		s.vendors, s.vendorFiles = vendors[stem(s.file)], vendorFiles[stem(s.file)]
	}
	return sources, nil
}

// stem returns a file name without its extension and its last '-' part:
// "2026-11-25-h100-gemm" for "2026-11-25-h100-gemm-bench.json".
func stem(name string) string {
	name = strings.TrimSuffix(name, filepath.Ext(name))
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name
}

// vendorOnly reports whether every device of rep is a vendor pseudo-device.
func vendorOnly(rep *bench.Report) bool {
	for i := range rep.Devices {
		if !rep.Devices[i].IsVendor() {
			return false
		}
	}
	return len(rep.Devices) > 0
}

// hasResults reports whether a device of rep, not a vendor pseudo-device, has results.
func hasResults(rep *bench.Report) bool {
	for i := range rep.Devices {
		if !rep.Devices[i].IsVendor() && len(rep.Devices[i].Results) > 0 {
			return true
		}
	}
	return false
}

// row is one case of a table: the newest verified result of its case, variant and size.
type row struct {
	res    bench.Result
	src    *source
	vendor *bench.Result // the vendor library's time of the same case, or nil
}

// table holds the current results of one device and API.
type table struct {
	name    string             // the device's name
	backend string             // "cuda", "opencl"
	info    bench.DeviceReport // the device as its newest report describes it
	from    *source            // that report
	rows    []row              // by case, size, variant
	sources []*source          // the reports its rows come from, newest first
}

// rowKey identifies a row of a table.
type rowKey struct {
	cas, variant string
	size         int
}

// current picks, for every device name and API of the sources, the newest verified
// result of each case, variant and size, by the date of its report (the file name
// decides between reports of one date).
func current(sources []*source) []*table {
	newer := newerSource
	type tkey struct{ name, backend string }
	tables := map[tkey]*table{}
	rows := map[tkey]map[rowKey]row{}
	for _, s := range sources {
		for di := range s.rep.Devices {
			d := &s.rep.Devices[di]
			if d.IsVendor() || len(d.Results) == 0 {
				continue
			}
			k := tkey{d.Device.Name, d.Backend}
			t := tables[k]
			if t == nil {
				t = &table{name: k.name, backend: k.backend}
				tables[k], rows[k] = t, map[rowKey]row{}
			}
			if t.from == nil || newer(s, t.from) {
				t.info, t.from = *d, s
			}
			for _, res := range d.Results {
				if !res.OK() || res.VendorLibrary {
					continue
				}
				rk := rowKey{res.Case, res.Variant, res.Size}
				if old, ok := rows[k][rk]; ok && !newer(s, old.src) {
					continue
				}
				rows[k][rk] = row{res: res, src: s, vendor: vendorOf(s, d, &res)}
			}
		}
	}
	var out []*table
	for k, t := range tables {
		for rk, r := range rows[k] {
			if rk.variant == "" && supersededUnnamed(rows[k], rk, r, newer) {
				continue
			}
			t.rows = append(t.rows, r)
			if !slices.Contains(t.sources, r.src) {
				t.sources = append(t.sources, r.src)
			}
		}
		if len(t.rows) == 0 {
			continue
		}
		slices.SortFunc(t.rows, func(a, b row) int {
			return cmp.Or(strings.Compare(a.res.Case, b.res.Case), cmp.Compare(a.res.Size, b.res.Size),
				strings.Compare(a.res.Variant, b.res.Variant))
		})
		slices.SortFunc(t.sources, func(a, b *source) int {
			if newer(a, b) {
				return -1
			}
			return 1
		})
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *table) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.backend, b.backend))
	})
	return out
}

// newerSource reports whether report a is newer than b: by date, the file name deciding
// between reports of one date.
func newerSource(a, b *source) bool {
	if c := a.rep.Date.Compare(b.rep.Date); c != 0 {
		return c > 0
	}
	return a.file > b.file
}

// supersededUnnamed reports whether r, a result of a report that did not record its
// variant (from before reports did), has a newer result of the same case and size under a
// variant's name among rows: the same kernel's figure, measured again.
func supersededUnnamed(rows map[rowKey]row, rk rowKey, r row, newer func(a, b *source) bool) bool {
	for k, o := range rows {
		if k.variant != "" && k.cas == rk.cas && k.size == rk.size && newer(o.src, r.src) {
			return true
		}
	}
	return false
}

// vendorOf returns the vendor library's verified time of res's case and size on device
// d of source s, or nil: the fastest of the result's own baseline (prism bench --vendor),
// a vendor library's result on d in the same run (--variant cuBLAS, all), and the results
// of the vendor pseudo-devices of d's ID or name in s's report and in the vendor reports
// beside it (scripts/vendor.py), as bench.Report.VendorBaseline chooses.
func vendorOf(s *source, d *bench.DeviceReport, res *bench.Result) *bench.Result {
	best := bench.FasterBaseline(res.Vendor, nil)
	for i := range d.Results {
		if b := &d.Results[i]; b.VendorLibrary && b.Case == res.Case && b.Size == res.Size {
			best = bench.FasterBaseline(best, b)
		}
	}
	for _, rep := range append([]*bench.Report{s.rep}, s.vendors...) {
		for i := range rep.Devices {
			v := &rep.Devices[i]
			if !v.IsVendor() || (v.Device.ID != bench.VendorPrefix+d.Device.ID && v.Device.Name != d.Device.Name) {
				continue
			}
			for j := range v.Results {
				if b := &v.Results[j]; b.Case == res.Case && b.Size == res.Size {
					best = bench.FasterBaseline(best, b)
				}
			}
		}
	}
	return best
}

// splice returns doc with the text between its begin and end marker lines replaced by
// section. It is an error when a marker is missing, repeated or out of order.
func splice(doc, section string) (string, error) {
	b, e := strings.Count(doc, beginMarker), strings.Count(doc, endMarker)
	if b != 1 || e != 1 {
		return "", fmt.Errorf("perfdoc: the page must hold %s and %s once each (found %d and %d)", beginMarker, endMarker, b, e)
	}
	i, j := strings.Index(doc, beginMarker), strings.Index(doc, endMarker)
	if j < i {
		return "", fmt.Errorf("perfdoc: %s comes before %s", endMarker, beginMarker)
	}
	i += len(beginMarker)
	return doc[:i] + "\n" + section + doc[j:], nil
}

// section returns the text between the markers of doc, as splice writes it.
func section(doc string) (string, error) {
	if _, err := splice(doc, ""); err != nil {
		return "", err
	}
	i := strings.Index(doc, beginMarker) + len(beginMarker)
	return strings.TrimPrefix(doc[i:strings.Index(doc, endMarker)], "\n"), nil
}

// readFile reads a file, the error naming it.
func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("perfdoc: %w", err)
	}
	return string(b), nil
}
