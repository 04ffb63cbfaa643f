package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/internal/term"
	"github.com/prism-compute/prism/engine"
)

// rows returns every case and size of the report, in order of first appearance.
func (r view) rows() []bench.CaseKey {
	var keys []bench.CaseKey
	seen := map[bench.CaseKey]bool{}
	for _, d := range r.Devices {
		for _, res := range d.Results {
			k := res.Key()
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// baselineIndex returns the index of the device the ratios compare with: the one named,
// or the first that is not a vendor pseudo-device.
func (r view) baselineIndex(id string) (int, error) {
	if id == "" {
		for i := range r.Devices {
			if !r.Devices[i].IsVendor() {
				return i, nil
			}
		}
		return 0, nil
	}
	var ids []string
	for i, d := range r.Devices {
		if d.Device.ID == id {
			return i, nil
		}
		ids = append(ids, d.Device.ID)
	}
	return 0, fmt.Errorf("bench: baseline %q is not in the report (devices: %s): %w", id, strings.Join(ids, ", "), engine.ErrInvalidArg)
}

// Kinds of the columns of a table, by which a narrow table chooses what to leave out.
const (
	colLabel    = "label"    // case, variant, size: repeated in every block of a narrow table
	colTime     = "time"     // a median time
	colRate     = "rate"     // a rate: left out first where the table is too wide
	colRoof     = "roof"     // the fraction of the roofline
	colRatio    = "ratio"    // a device's time against the baseline's
	colVendor   = "vendor"   // Prism's time against the vendor library's
	colResident = "resident" // a split's one-device op with its result left on the device
	colLibrary  = "library"  // a collective's library
	colVerdict  = "verdict"  // what limits the case (Markdown and HTML; the terminal lists them under the table)
)

// tableCol is a column of a table: its heading, the device whose column group it belongs
// to (-1: a label column), and its kind.
type tableCol struct {
	head string
	dev  int
	kind string
}

// resultGrid is the side-by-side table of a report's results as cells: one row per case
// and size (keys), and the legend of what its cells say.
type resultGrid struct {
	cols   []tableCol
	rows   [][]string
	keys   []bench.CaseKey
	legend []string
}

func (g *resultGrid) header() []string {
	h := make([]string, len(g.cols))
	for i, c := range g.cols {
		h[i] = c.head
	}
	return h
}

// grid is the side-by-side table of Markdown and HTML as cells: a header row, then one row
// per case and size.
func (r view) grid(baseline string) (header []string, rows [][]string, err error) {
	g, err := r.resultGrid(baseline, true)
	if err != nil {
		return nil, nil, err
	}
	return g.header(), g.rows, nil
}

// gridRows returns the rows of the table: every case and size some device ran, with the
// rows of vendor pseudo-devices put on Prism's rows of the same case and size (whatever
// variant those asked for) and kept apart only where no device of Prism's ran the case.
func (ix *caseIndex) gridRows() []bench.CaseKey {
	if !slices.ContainsFunc(ix.r.Devices, func(d bench.DeviceReport) bool { return d.IsVendor() }) {
		return slices.Clone(ix.rows) // every row is one of Prism's devices'
	}
	prism := map[bench.CaseKey]bool{} // case and size, variant empty, that a device of Prism's ran
	own := make([]bool, len(ix.rows))
	for i := range ix.r.Devices {
		if ix.r.Devices[i].IsVendor() {
			continue
		}
		for row, j := range ix.byRow[i] {
			if j >= 0 {
				own[row] = true
				prism[bench.CaseKey{Case: ix.rows[row].Case, Size: ix.rows[row].Size, Dims: ix.rows[row].Dims}] = true
			}
		}
	}
	var rows []bench.CaseKey
	for row, k := range ix.rows {
		if own[row] || !prism[bench.CaseKey{Case: k.Case, Size: k.Size, Dims: k.Dims}] {
			rows = append(rows, k)
		}
	}
	return rows
}

// vendorResult returns the result of vendor pseudo-device v for row k: the one of the
// same variant asked for, else the one of the same case and size.
func (ix *caseIndex) vendorResult(v int, k bench.CaseKey) *bench.Result {
	if res := ix.result(v, k); res != nil {
		return res
	}
	return ix.result(v, bench.CaseKey{Case: k.Case, Size: k.Size, Dims: k.Dims})
}

// legendSet gathers the legend entries a table needs, each once, in the order added.
type legendSet struct {
	entries []string
	seen    map[string]bool
}

func (l *legendSet) add(key, text string) {
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	if !l.seen[key] {
		l.seen[key] = true
		l.entries = append(l.entries, text)
	}
}

// resultGrid builds the side-by-side table: per device the median time, main rate,
// percent of the roofline with its bound, for every device but the baseline the ratio
// baseline time / device time, where the device has vendor baselines the ratio vendor
// time / device time, and with verdicts the case's verdict (bench.Result.Verdict); per
// vendor pseudo-device its time. The legend explains what the cells show, those that
// appear only when they do.
func (r view) resultGrid(baseline string, verdicts bool) (*resultGrid, error) {
	base, err := r.baselineIndex(baseline)
	if err != nil {
		return nil, err
	}
	ix := r.index()
	g := &resultGrid{cols: []tableCol{{"case", -1, colLabel}, {"variant", -1, colLabel}, {"size", -1, colLabel}}}
	var lg legendSet
	vendorCols := make([]bool, len(r.Devices))
	shown := make([]bool, len(r.Devices)) // the devices with a column group: those with results of their own
	real := 0
	for i := range r.Devices {
		if r.Devices[i].IsVendor() {
			// A vendor pseudo-device's time stands beside the labels, in every block.
			g.cols = append(g.cols, tableCol{fmt.Sprintf("[%d] vendor", i+1), -1, colTime})
		}
	}
	for i := range r.Devices {
		l := fmt.Sprintf("[%d] ", i+1)
		if r.Devices[i].IsVendor() || (len(r.Devices[i].Results) == 0 && i != base) {
			continue
		}
		shown[i] = true
		real++
		g.cols = append(g.cols, tableCol{l + "time", i, colTime}, tableCol{l + "rate", i, colRate}, tableCol{l + "of roof", i, colRoof})
		if i != base {
			g.cols = append(g.cols, tableCol{fmt.Sprintf("%svs [%d]", l, base+1), i, colRatio})
		}
		if vendorCols[i] = r.ranVendor(i) || ix.hasVendor(i); vendorCols[i] {
			g.cols = append(g.cols, tableCol{l + "vs vendor", i, colVendor})
		}
		if verdicts {
			g.cols = append(g.cols, tableCol{l + "verdict", i, colVerdict})
		}
	}
	if real > 0 {
		lg.add("time", "time: the median of the timed runs; rate: GB/s when memory-bound, GFLOP/s when compute-bound")
		lg.add("roof", "of roof: achieved / min(peak of the type, copy GB/s x FLOP/byte), with the bound (mem or compute)")
	}
	if real > 0 && verdicts {
		lg.add("verdict", "verdict: what limits the case, from the device's measured roofs and launch cost (memory, compute, launch, cache, host link, latency)")
	}
	if real > 1 {
		lg.add("vs", fmt.Sprintf("vs [%d]: [%d]'s time / this device's time (above 1: this device is faster)", base+1, base+1))
	}
	var noCeilingTypes []string
	g.keys = ix.gridRows()
	for _, k := range g.keys {
		variant, split := ix.variantCell(k)
		if split {
			lg.add("variant", "a | b in the variant column: the variants that ran on [1] | [2] ..., in device order, where they differ; a ratio on such a row compares two implementations, not two devices running one")
		}
		row := []string{k.Case, variant, bench.SizeText(k.Size, k.Dims)}
		b := ix.result(base, k)
		if r.Devices[base].IsVendor() {
			b = ix.vendorResult(base, k)
		}
		for i := range r.Devices {
			if r.Devices[i].IsVendor() {
				row = append(row, vendorTimeCell(ix.vendorResult(i, k), &lg))
			}
		}
		for i := range r.Devices {
			if !shown[i] {
				continue
			}
			res := ix.result(i, k)
			switch {
			case res == nil:
				row = append(row, "-", "-", "-")
				lg.add("none", "-: the device did not run the case, or the figure does not apply")
			case res.Skipped != "":
				row = append(row, "skipped", "-", "-")
				lg.add("skipped", "skipped: the device cannot run the case (no fp64, a variant it lacks ...)")
			case res.Err != "":
				row = append(row, "FAILED", "-", "-")
				lg.add("failed", "FAILED, INVALID: listed below the table with the reason")
			case res.Invalid != "":
				row = append(row, "INVALID", "-", "-") // no valid device time: failures() says why
				lg.add("failed", "FAILED, INVALID: listed below the table with the reason")
			default:
				v, unit := res.Rate()
				rate := term.Float(v) + " " + unit
				roof := fmt.Sprintf("%.0f%% %s", 100*res.Fraction, shortBound(res.Bound))
				switch {
				case res.Latency():
					rate, roof = "-", "latency" // no work in the model: the time is the figure
					lg.add("latency", "latency: the op's model does no work, so its time is its figure (no rate, no roof)")
				case res.Link && res.Bound == bench.BoundMemory:
					roof = "host link" // no ceiling measures the link: see vendor.py's copies
					lg.add("link", "host link: bytes across the host-device link, which no ceiling here measures")
				case res.CacheResident:
					roof = "cache-resident"
					lg.add("cache", "cache-resident: above the DRAM copy roof with a working set that fits in the last-level cache")
				case res.Bound == "":
					roof = "-"
					if t := res.Type; res.RoofMissing != "" && t != "" && !slices.Contains(noCeilingTypes, t) {
						noCeilingTypes = append(noCeilingTypes, t)
					} else if res.RoofMissing == "" {
						lg.add("noceil", "of roof -: the device has no measured ceilings")
					}
				case res.RoofMissing != "":
					roof = "no roof" // its ceiling's measurement failed
					lg.add("noroof", "no roof: the ceiling of the case's bound failed to measure on the device (see the device's lines)")
				}
				row = append(row, bench.FormatDuration(res.Stats.Median), rate, roof)
			}
			if i != base {
				cell := "-"
				if res != nil && b != nil && res.OK() && b.OK() && res.Stats.Median > 0 {
					cell = fmt.Sprintf("%.2fx", float64(b.Stats.Median)/float64(res.Stats.Median))
				}
				row = append(row, cell)
			}
			if vendorCols[i] {
				row = append(row, ix.vendorCell(i, res, &lg))
			}
			if verdicts {
				cell := "-"
				if res != nil && res.Verdict.Text != "" {
					cell = res.Verdict.Text
				}
				row = append(row, cell)
			}
		}
		g.rows = append(g.rows, term.SafeAll(row))
	}
	if len(noCeilingTypes) > 0 {
		lg.add("noceil-type", "of roof -: no ceiling measures "+strings.Join(noCeilingTypes, ", ")+" arithmetic (the peaks measured are fp32 and fp64), so the case has no fraction of a roof")
	}
	g.legend = term.SafeAll(lg.entries)
	return g, nil
}

// variantCell names the variant of a row: the one asked for, or the one each of Prism's
// devices ran, once when they agree, else per device in device order ("cuda-shfl |
// portable"), which split reports. A row that only vendor pseudo-devices ran names their
// variant.
func (ix *caseIndex) variantCell(k bench.CaseKey) (cell string, split bool) {
	if k.Variant != "" {
		return k.Variant, false
	}
	var names []string
	for _, vendor := range []bool{false, true} {
		ran := false
		names = names[:0]
		for i := range ix.r.Devices {
			if ix.r.Devices[i].IsVendor() != vendor || len(ix.r.Devices[i].Results) == 0 {
				continue
			}
			name := "-"
			if res := ix.result(i, k); res != nil && res.Variant != "" {
				name, ran = res.Variant, true
			} else if res != nil {
				ran = true
			}
			names = append(names, name)
		}
		if ran {
			break
		}
	}
	if len(names) == 0 {
		return "-", false
	}
	for _, n := range names[1:] {
		if n != names[0] {
			return strings.Join(names, " | "), true
		}
	}
	return names[0], false
}

// vendorTimeCell is the cell of a vendor pseudo-device: its time for the row.
func vendorTimeCell(res *bench.Result, lg *legendSet) string {
	lg.add("vendor-time", "[i] vendor: the median time of the vendor library's routine for the case and size, from the vendor: pseudo-device [i] (scripts/vendor.py)")
	switch {
	case res == nil:
		return "-"
	case res.Skipped != "":
		return "skipped"
	case res.Err != "":
		return "FAILED"
	case !res.OK():
		return "INVALID"
	}
	return bench.FormatDuration(res.Stats.Median)
}

// ranVendor reports whether device i ran vendor baselines (--vendor).
func (r view) ranVendor(i int) bool {
	for _, res := range r.Devices[i].Results {
		if res.Vendor != nil || res.NoVendor != "" {
			return true
		}
	}
	return false
}

// vendorCell is the "vs vendor" cell of device dev's result: the vendor's time over
// Prism's (above 1: Prism is faster), from the result's own baseline (--vendor) or a
// vendor pseudo-device's; "none" where no vendor routine computes the op, or what went
// wrong.
func (ix *caseIndex) vendorCell(dev int, res *bench.Result, lg *legendSet) string {
	lg.add("vs-vendor", "vs vendor: the vendor library's time / Prism's time for the same case and size on the same device, against the variant of the row (above 1: Prism is faster); where the run's own library (--vendor) and vendor.py both timed the case, the faster of the two")
	if res == nil || res.VendorLibrary {
		return "-"
	}
	b := ix.vendorBaseline(dev, res)
	switch {
	case b == nil && res.NoVendor != "":
		lg.add("vendor-none", "none: no vendor routine computes the op")
		return "none"
	case b == nil && res.Vendor != nil && res.Vendor.Skipped != "":
		return "skipped"
	case b == nil && res.Vendor != nil && res.Vendor.Err != "":
		return "FAILED"
	case b == nil || !res.OK() || res.Stats.Median <= 0:
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(b.Stats.Median)/float64(res.Stats.Median))
}

// vendorLibraries lists the vendor libraries device i ran, with their versions.
func (r view) vendorLibraries(i int) []string {
	var libs []string
	for _, res := range r.Devices[i].Results {
		if v := res.Vendor; v != nil && v.Library != "" && !slices.Contains(libs, v.Library) {
			libs = append(libs, v.Library)
		}
	}
	return libs
}

func shortBound(b string) string {
	if b == bench.BoundCompute {
		return "compute"
	}
	return "mem"
}

// deviceLines describes each device: identity, ceilings, overheads, telemetry.
func (r view) deviceLines() [][]string {
	var out [][]string
	for i, d := range r.Devices {
		di := d.Device
		lines := []string{fmt.Sprintf("[%d] %s  %s (%s, %s, %d CUs, %d MHz, driver %s)", i+1, di.ID, di.Name, di.Kind, d.Backend, di.ComputeUnits, di.ClockMHz, di.DriverVersion)}
		if d.Err != "" {
			lines = append(lines, "error: "+d.Err)
		}
		c := d.Ceilings
		if c.CopyGBs > 0 || c.CopyAbsent != "" || c.FP32Absent != "" {
			lines = append(lines, "ceilings: "+describeCeilings(c))
			for _, m := range []struct{ what, why string }{{"copy ceiling", c.CopyAbsent}, {"fp32 peak", c.FP32Absent}} {
				if m.why != "" {
					lines = append(lines, m.what+" missing: "+m.why)
				}
			}
		}
		lines = append(lines, describeTensor(c)...)
		if c.Invalid != "" {
			lines = append(lines, "ceilings: invalid measurement: "+c.Invalid)
		}
		if o := d.Overheads; o.FirstBuild > 0 {
			lines = append(lines, fmt.Sprintf("overheads: stream build %s first, %s again; empty kernel %s per launch async, %s round trip",
				bench.FormatDuration(o.FirstBuild), bench.FormatDuration(o.SecondBuild), bench.FormatDuration(o.LaunchAsync), bench.FormatDuration(o.LaunchSync)))
		} else if o.Absent != "" {
			lines = append(lines, "overheads missing: "+o.Absent)
		}
		if d.Timing == bench.TimingHost {
			lines = append(lines, "timing: host clock around each run (the device reports no usable event timestamps; launch overheads included)")
		}
		if b := d.Budget; b != nil {
			reduced := 0
			for _, res := range d.Results {
				if res.SizeNote != "" {
					reduced++
				}
			}
			lines = append(lines, fmt.Sprintf("sizes: chosen for the device, each case within %s a run and %s of timed runs (at least 3); %d of %d cases at a reduced size",
				b.MaxRun, b.CaseTime, reduced, len(d.Results)))
		}
		if r.ranVendor(i) {
			if libs := r.vendorLibraries(i); len(libs) > 0 {
				lines = append(lines, "vendor libraries: "+strings.Join(libs, ", "))
			} else {
				lines = append(lines, "vendor libraries: none ran")
			}
		}
		t := d.Telemetry
		if t.Available {
			lines = append(lines, fmt.Sprintf("telemetry (min/median/max of %d samples): SM clock %s MHz, power %s W, temperature %s C",
				t.Samples, t.SMClockMHz, t.PowerW, t.TemperatureC))
		} else if t.Reason != "" {
			lines = append(lines, "telemetry: none: "+t.Reason)
		}
		out = append(out, term.SafeAll(lines))
	}
	return out
}

func (r view) titleLine() string {
	commit := r.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if commit == "" {
		commit = "(no commit)"
	}
	mode := ""
	if r.Config.Quick {
		mode = ", quick"
	}
	if r.Config.Portable {
		mode += ", portable kernels"
	}
	timing := "device-event timing"
	for _, d := range r.Devices {
		if d.Timing == bench.TimingHeld {
			timing += ", queues held while each run is enqueued"
			break
		}
	}
	results := false
	for _, d := range r.Devices {
		hostCases := false
		for _, res := range d.Results {
			hostCases = hostCases || res.Timing == bench.TimingHost
		}
		results = results || len(d.Results) > 0
		if d.Timing == bench.TimingHost || hostCases {
			timing = "device-event timing where the device and the op allow it, else host clock"
		}
	}
	if !results && (len(r.Splits) > 0 || len(r.Collectives) > 0) {
		timing = "host clock"
	} else if len(r.Splits) > 0 || len(r.Collectives) > 0 {
		timing += "; splits and collectives by the host clock"
	}
	if r.Interrupted {
		timing += "; INTERRUPTED during " + r.InterruptedAt + ": the report holds what finished before"
	}
	runs := ""
	if r.Config.Count > 0 {
		runs = fmt.Sprintf("  median of %d runs after %d warm-up%s,", r.Config.Count, r.Config.Warmup, mode)
	}
	platform := ""
	if r.GOOS != "" || r.GOARCH != "" {
		platform = fmt.Sprintf(" (%s/%s)", r.GOOS, r.GOARCH)
	}
	return term.Safe(fmt.Sprintf("prism %s %s  %s  host %s%s%s %s",
		r.Prism, commit, r.Date.Format(time.RFC3339), r.Host, platform, runs, timing))

}

// failures lists the failed results and those without a valid measurement: device label,
// case, size, error; then the splits and collectives that failed.
func (r view) failures() []string {
	var out []string
	for i, d := range r.Devices {
		for _, res := range d.Results {
			switch {
			case res.Err != "":
				out = append(out, term.Safe(fmt.Sprintf("FAILED [%d] %s %s: %s", i+1, res.Case, bench.SizeText(res.Size, res.Dims), res.Err)))
			case res.Skipped == "" && res.Invalid != "":
				out = append(out, term.Safe(fmt.Sprintf("INVALID [%d] %s %s: %s", i+1, res.Case, bench.SizeText(res.Size, res.Dims), res.Invalid)))
			}
		}
	}
	for _, s := range r.Splits {
		if !s.Verified {
			out = append(out, term.Safe(fmt.Sprintf("FAILED split %s %s across %s: %s", s.Case, bench.FormatSize(s.Size), r.deviceLabels(s.Devices), s.Err)))
		}
		for _, sd := range s.Single {
			if sd.Err != "" {
				out = append(out, term.Safe(fmt.Sprintf("FAILED %s %s alone on %s: %s", s.Case, bench.FormatSize(s.Size), r.deviceLabels([]string{sd.Device}), sd.Err)))
			}
		}
	}
	for _, c := range r.Collectives {
		if !c.Verified {
			out = append(out, term.Safe(fmt.Sprintf("FAILED %s %s on %s: %s", c.Case, bench.FormatSize(c.Count), r.deviceLabels(c.Devices), c.Err)))
		}
	}
	return out
}

// deviceLabels names devices by their labels in the report ("[1]+[2]"), or by their IDs
// where the report does not list them.
func (r view) deviceLabels(ids []string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id
		for j := range r.Devices {
			if r.Devices[j].Device.ID == id {
				parts[i] = fmt.Sprintf("[%d]", j+1)
				break
			}
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "+")
}

// deviceLabel returns the label of the device with the given ID ("[2]"), or the ID.
func (r view) deviceLabel(id string) string { return r.deviceLabels([]string{id}) }

// splitGrid is the table of the report's splits: per split its devices, its time and
// speedup, and per device its share and its time alone (the fastest device's as timed in
// turn with the split, where it was: the time the speedup divides) and, in a wide table,
// the one-device op's time with its result left on the device.
func (r view) splitGrid() *resultGrid {
	g := &resultGrid{cols: []tableCol{{"split", -1, colLabel}, {"size", -1, colLabel}, {"devices", -1, colLabel}, {"data", -1, colLabel}, {"plan", -1, colLabel},
		{"time", -1, colLabel}, {"speedup", -1, colLabel}}}
	var devs []string // the devices of any split, in the report's order
	for _, d := range r.Devices {
		for _, s := range r.Splits {
			if slices.Contains(s.Devices, d.Device.ID) {
				devs = append(devs, d.Device.ID)
				break
			}
		}
	}
	for _, s := range r.Splits {
		for _, id := range s.Devices {
			if !slices.Contains(devs, id) {
				devs = append(devs, id)
			}
		}
	}
	for i, id := range devs {
		l := r.deviceLabel(id) + " "
		g.cols = append(g.cols, tableCol{l + "share", i, colLabel + "-dev"}, tableCol{l + "alone", i, colTime}, tableCol{l + "resident", i, colResident})
	}
	for _, s := range r.Splits {
		time, speedup := "FAILED", "-"
		if s.Verified {
			time = bench.FormatDuration(s.Stats.Median)
			if s.Speedup > 0 {
				speedup = fmt.Sprintf("%.2fx", s.Speedup)
				if lo, hi, ok := s.SpeedupInterval(0); ok && lo <= 1 && 1 <= hi {
					speedup += " ~"
				}
				if s.SpeedupResident > 0 && s.SpeedupResident != s.Speedup {
					speedup += fmt.Sprintf(" (%.2fx)", s.SpeedupResident)
				}
			}
		}
		data := s.Placement
		if data == "" {
			data = "-"
		}
		row := []string{s.Case, bench.FormatSize(s.Size), r.deviceLabels(s.Devices), data, r.planShort(s.Plan, s.Checked()), time, speedup}
		for _, id := range devs {
			share, alone, resident := "-", "-", "-"
			for _, sh := range s.Shares {
				if sh.Device == id {
					share = fmt.Sprintf("%.0f%%", 100*sh.Fraction)
				}
			}
			if slices.Contains(s.Devices, id) && share == "-" && len(s.Shares) > 0 {
				share = "0%"
			}
			for _, sd := range s.Single {
				switch {
				case sd.Device != id:
				case sd.Err != "":
					alone = "FAILED"
				default:
					alone, resident = bench.FormatDuration(sd.Stats.Median), bench.FormatDuration(sd.Resident.Median)
					if sd.Stats.Median == 0 { // timed resident only (--placement sharded)
						alone = "-"
					}
					if s.Paired != nil && id == s.Fastest {
						// the time the speedup divides: timed in turn with the split
						alone = bench.FormatDuration(s.Paired.Median)
					}
				}
			}
			row = append(row, share, alone, resident)
		}
		g.rows = append(g.rows, term.SafeAll(row))
	}
	g.legend = []string{
		"split: the op across the devices listed, each its share of the work; time: its median (host clock)",
		"data: host (inputs from the host, the result combined on the host each run) or sharded (the data on the devices before the timing, the result left there); -: not recorded",
		"plan: the planner's choice: one device [i] (a split was predicted slower), or split over n devices; (given): the shares were given; (checked): the split's second run was timed against the fastest device alone, and the split kept only where it ran at least 1.03 times as fast (the JSON's plan says both times)",
		"[i] alone: device [i] with the whole op, its result combined on the host as the split's (the fastest device: timed in turn with the split, run for run, where it was); [i] resident: the one-device op with its result left on the device",
		"speedup: the fastest device alone through the split, its data placed as the split's (sharded: all of it on the device fastest resident) / the split, their medians timed in turn (in brackets: the fastest one-device op on resident data / the split); above 1: the split is faster; ~: the 95% interval of the ratio holds 1, the runs cannot tell the two apart",
		"-: the device had no share, or the figure is missing",
	}
	return g
}

// planShort is the planner's choice (kernels.PlanSummary's words) in a cell: "one device
// [i]", "split over n", with " (given)" where the shares were given and " (checked)" where
// the split's second run checked the plan (both: " (given, checked)"); "-" where none was
// recorded, and the words themselves where they are not the planner's.

func (r view) planShort(plan string, checked bool) string {
	var notes []string
	if strings.Contains(plan, "(shares given") {
		notes = append(notes, "given")
	}
	if checked {
		notes = append(notes, "checked")
	}
	given := ""
	if len(notes) > 0 {
		given = " (" + strings.Join(notes, ", ") + ")"
	}
	switch {
	case plan == "":
		return "-"
	case strings.HasPrefix(plan, "one device: "):
		id, _, _ := strings.Cut(strings.TrimPrefix(plan, "one device: "), " (")
		return "one device " + r.deviceLabel(id) + given
	case strings.HasPrefix(plan, "split over "):
		n, _, _ := strings.Cut(strings.TrimPrefix(plan, "split over "), " ")
		return "split over " + n + given
	}
	return plan
}

// collectiveGrid is the table of the report's collectives.
func (r view) collectiveGrid() *resultGrid {
	g := &resultGrid{cols: []tableCol{{"collective", -1, colLabel}, {"count", -1, colLabel}, {"bytes", -1, colLabel}, {"ranks", -1, colLabel},
		{"devices", -1, colLabel}, {"library", -1, colLibrary}, {"time", -1, colLabel}, {"algbw GB/s", -1, colLabel}, {"busbw GB/s", -1, colLabel}}}
	for _, c := range r.Collectives {
		time, alg, bus := "FAILED", "-", "-"
		if c.Verified {
			time, alg, bus = bench.FormatDuration(c.Stats.Median), term.Float(c.AlgBW), term.Float(c.BusBW)
		}
		g.rows = append(g.rows, term.SafeAll([]string{c.Case, bench.FormatSize(c.Count), bench.FormatBytes(c.Bytes), strconv.Itoa(c.Ranks),
			r.deviceLabels(c.Devices), c.Library, time, alg, bus}))
	}
	g.legend = []string{
		"time: the median of the timed runs, each the collective and the finish of every local queue (host clock); devices: this process's ranks",
		"algbw: bytes / time; busbw: algbw x 2(n-1)/n (all-reduce), (n-1)/n (all-gather, reduce-scatter), 1 (broadcast), as nccl-tests",
	}
	return g
}

// libraries returns the distinct libraries of the collectives.
func (r view) libraries() []string {
	var libs []string
	for _, c := range r.Collectives {
		if !slices.Contains(libs, c.Library) {
			libs = append(libs, c.Library)
		}
	}
	return term.SafeAll(libs)
}

// TableWidth is the most columns a table of Table takes unless told to be wide.
const TableWidth = 120

// TableOptions choose what Table shows.
type TableOptions struct {
	// Baseline is the ID of the device the ratios compare with; "" the first device.
	Baseline string
	// Wide shows every column, however wide the table. Otherwise the rate columns are left
	// out of a table wider than TableWidth (the time and the fraction of the roof stay),
	// then its devices are shown in blocks one below the other, each no wider than
	// TableWidth, and a line under the table says what was left out.
	Wide bool
}

// Table writes the report for a terminal: the run and its devices, then the
// devices side by side, one row per case and size, and per device the median time, the
// main rate (GB/s when memory-bound, GFLOP/s when compute-bound), the fraction of the
// roofline, the ratio to the baseline device (baseline time over device time, so above 1
// is faster) and to the vendor library where the report has its baselines; under it the
// ops' figures and each case's verdict, a line each; then the splits and the collectives. Each table is preceded by the legend of what its cells
// show, wrapped, as every line of prose, at TableWidth columns.
func Table(w io.Writer, rep *bench.Report, opt TableOptions) error {
	r := view{rep}
	g, err := r.resultGrid(opt.Baseline, false)
	if err != nil {
		return err
	}
	width := TableWidth
	if opt.Wide {
		width = 0
	}
	ew := &errWriter{w: w}
	wrapLine(ew, r.titleLine(), "", "    ")
	for _, lines := range r.deviceLines() {
		wrapLine(ew, lines[0], "", "        ")
		for _, l := range lines[1:] {
			wrapLine(ew, l, "    ", "        ")
		}
	}
	writeGrid := func(g *resultGrid, drop []string, more func(left []string)) {
		ew.printf("\n")
		for _, l := range g.legend {
			wrapLine(ew, l, "", "    ")
		}
		ew.printf("\n")
		left := writeColumns(ew, g.cols, g.rows, width, drop)
		if more != nil {
			more(left)
		}
		if len(left) > 0 {
			wrapLine(ew, fmt.Sprintf("(%s left out to fit %d columns: --wide shows them)", strings.Join(left, ", "), TableWidth), "", "    ")
		}
	}
	if len(g.rows) > 0 {
		writeGrid(g, []string{colRate}, func([]string) {
			if lines := r.figureLines(); len(lines) > 0 {
				ew.printf("figures (the ops' own, beside their time):\n")
				for _, l := range lines {
					wrapLine(ew, l, "    ", "        ")
				}
			}
			if lines := r.verdictLines(); len(lines) > 0 {
				ew.printf("verdicts (what limits each case, from the device's measured roofs and launch cost):\n")
				for _, l := range lines {
					wrapLine(ew, l, "    ", "        ")
				}
			}
			if lines := r.vendorSummaryLines(); len(lines) > 0 { // sweep.go
				ew.printf("%s (vendor time / Prism time, above 1: Prism is faster; geometric mean and worst):\n", strings.ToLower(vendorSummaryTitle[:1])+vendorSummaryTitle[1:])
				for _, l := range lines {
					wrapLine(ew, l, "    ", "        ")
				}
			}
		})
	}
	if len(r.Splits) > 0 {
		writeGrid(r.splitGrid(), []string{colResident}, nil)
		if sg := r.splitSummaryGrid(); sg != nil { // sweep.go
			ew.printf("\n%s:\n", splitSummaryTitle)
			writeGrid(sg, nil, nil)
		}
	}
	if len(r.Collectives) > 0 {
		writeGrid(r.collectiveGrid(), []string{colLibrary}, func(left []string) {
			if libs := r.libraries(); len(left) > 0 && len(libs) > 0 {
				wrapLine(ew, "library: "+strings.Join(libs, "; "), "", "    ")
			}
		})
	}
	for _, f := range r.failures() {
		wrapLine(ew, f, "", "    ")
	}
	return ew.err
}

// writeColumns writes the rows under the headings of cols in aligned columns, two spaces
// apart, no space at the end of a line. Where width > 0 and the table is wider, it leaves
// out the columns of the kinds in drop, then puts the column groups of the devices in
// blocks one below the other, the label columns repeated in each, each no wider than
// width where a single group allows. It returns what it left out, in words.
func writeColumns(ew *errWriter, cols []tableCol, rows [][]string, width int, drop []string) (left []string) {
	w := make([]int, len(cols))
	for j, c := range cols {
		w[j] = utf8.RuneCountInString(c.head)
		for _, row := range rows {
			if j < len(row) {
				w[j] = max(w[j], utf8.RuneCountInString(row[j]))
			}
		}
	}
	span := func(idx []int) int {
		n := 0
		for _, j := range idx {
			n += w[j] + 2
		}
		return n - 2
	}
	all := make([]int, len(cols))
	for j := range cols {
		all[j] = j
	}
	blocks := [][]int{all}
	if width > 0 && span(all) > width {
		var kept []int
		for _, j := range all {
			if slices.Contains(drop, cols[j].kind) {
				if what := cols[j].kind + " columns"; !slices.Contains(left, what) {
					left = append(left, what)
				}
				continue
			}
			kept = append(kept, j)
		}
		if span(kept) > width {
			// Devices in blocks: the label columns, then as many device groups as fit.
			var labels []int
			var groups [][]int
			last := -2
			for _, j := range kept {
				switch {
				case cols[j].dev < 0:
					labels = append(labels, j)
				case cols[j].dev != last:
					groups = append(groups, []int{j})
				default:
					groups[len(groups)-1] = append(groups[len(groups)-1], j)
				}
				last = cols[j].dev
			}
			blocks = nil
			cur := slices.Clone(labels)
			n := 0
			for _, grp := range groups {
				next := append(slices.Clone(cur), grp...)
				if n > 0 && span(next) > width {
					blocks = append(blocks, cur)
					cur, n = append(slices.Clone(labels), grp...), 1
					continue
				}
				cur, n = next, n+1
			}
			blocks = append(blocks, cur)
		} else {
			blocks = [][]int{kept}
		}
	}
	for b, idx := range blocks {
		if b > 0 {
			ew.printf("\n")
		}
		line := func(cell func(j int) string) {
			var sb strings.Builder
			for k, j := range idx {
				text := cell(j)
				sb.WriteString(text)
				if k < len(idx)-1 {
					sb.WriteString(strings.Repeat(" ", w[j]-utf8.RuneCountInString(text)+2))
				}
			}
			ew.printf("%s\n", strings.TrimRight(sb.String(), " "))
		}
		line(func(j int) string { return cols[j].head })
		for _, row := range rows {
			line(func(j int) string {
				if j < len(row) {
					return row[j]
				}
				return ""
			})
		}
	}
	return left
}

// wrapLine writes s after first, broken at spaces into lines of at most TableWidth
// columns, the later ones after rest (an indent); a word longer than a line stands alone.
func wrapLine(ew *errWriter, s, first, rest string) {
	for _, l := range wrapWords(s, TableWidth, first, rest) {
		ew.printf("%s\n", l)
	}
}

// wrapWords breaks s at spaces into lines of at most width runes, the first starting with
// first, the others with rest. Runs of spaces inside the text are kept as they are.
func wrapWords(s string, width int, first, rest string) []string {
	var lines []string
	cur, n := first, utf8.RuneCountInString(first)
	empty := true
	for _, word := range strings.SplitAfter(s, " ") {
		wl := utf8.RuneCountInString(strings.TrimRight(word, " "))
		if !empty && n+wl > width && strings.TrimSpace(word) != "" {
			lines = append(lines, strings.TrimRight(cur, " "))
			cur, n = rest, utf8.RuneCountInString(rest)
		}
		cur += word
		n += utf8.RuneCountInString(word)
		empty = empty && strings.TrimSpace(word) == ""
		if strings.TrimSpace(word) != "" {
			empty = false
		}
	}
	return append(lines, strings.TrimRight(cur, " "))
}

// describeCeilings says what the ceilings are, for the table's device lines.
func describeCeilings(c bench.Ceilings) string {
	cp := "missing"
	if c.CopyGBs > 0 {
		cp = fmt.Sprintf("%s GB/s (%s, 2 x %s)", term.Float(c.CopyGBs), c.CopyHow, bench.FormatBytes(c.CopyBytes))
	}
	fp32 := "missing"
	if c.FP32GFLOPs > 0 {
		fp32 = term.Float(c.FP32GFLOPs) + " GFLOP/s"
	}
	fp64 := term.Float(c.FP64GFLOPs) + " GFLOP/s"
	switch {
	case c.FP64Absent != "" && strings.Contains(c.FP64Absent, "fp64"):
		fp64 = "none (no fp64)"
	case c.FP64Absent != "":
		fp64 = "missing"
	case c.FP64GFLOPs <= 0:
		fp64 = "-"
	}
	return fmt.Sprintf("copy %s, fp32 %s, fp64 %s", cp, fp32, fp64)
}

// tensorPeaks are the tensor-core ceilings in the order reports list them: the key of
// Ceilings.TensorAbsent, the name shown, and the value.
func tensorPeaks(c bench.Ceilings) []struct {
	key, name string
	gflops    float64
} {
	return []struct {
		key, name string
		gflops    float64
	}{{"tf32", "tf32", c.TF32GFLOPs}, {"fp16", "fp16", c.FP16GFLOPs}, {"bf16", "bf16", c.BF16GFLOPs},
		{"fp8", "fp8", c.FP8GFLOPs}, {"fp64_tensor", "fp64 DMMA", c.FP64TensorGFLOPs}}
}

// describeTensor says what the tensor-core ceilings are, for the table's device lines:
// the peaks measured ("tensor peaks: tf32 4.9e+05, fp16 ... GFLOP/s"), each one missing
// with why, and the types roofed by the fp32 peak where the device computes them in
// float32. Nothing for a report without tensor ceilings.
func describeTensor(c bench.Ceilings) []string {
	var peaks, lines []string
	for _, p := range tensorPeaks(c) {
		if p.gflops > 0 {
			peaks = append(peaks, p.name+" "+term.Float(p.gflops))
		}
	}
	if len(peaks) > 0 {
		lines = append(lines, "tensor peaks: "+strings.Join(peaks, ", ")+" GFLOP/s")
	}
	for _, p := range tensorPeaks(c) {
		if why := c.TensorAbsent[p.key]; why != "" && (len(c.FP32Roof) == 0 || p.key != "fp8") {
			lines = append(lines, p.name+" tensor peak missing: "+why)
		}
	}
	switch {
	case len(c.FP32Roof) > 0 && len(peaks) == 0:
		lines = append(lines, "tensor peaks: none: "+strings.Join(c.FP32Roof, ", ")+" compute in float32 here, under the fp32 peak")
	case len(c.FP32Roof) > 0:
		lines = append(lines, "fp32 roof: "+strings.Join(c.FP32Roof, ", ")+" compute in float32 here (no tensor cores for them)")
	}
	return lines
}

// verdictLines lists the verdict of every result that has one, one line each: the device's
// label, the case, its size, the variant asked for where there is one, and the verdict
// ("[1] stream/triad/float32 4M: memory-bound at 91% of copy: near the limit"). Vendor
// pseudo-devices, whose reports measure no roofs, have none.
func (r view) verdictLines() []string {
	var out []string
	for i, d := range r.Devices {
		if d.IsVendor() {
			continue
		}
		for _, res := range d.Results {
			if res.Verdict.Text == "" {
				continue
			}
			name := fmt.Sprintf("[%d] %s %s", i+1, res.Case, bench.SizeText(res.Size, res.Dims))
			if res.Requested != "" {
				name += " " + res.Requested
			}
			out = append(out, term.Safe(name+": "+res.Verdict.Text))
		}
	}
	return out
}

// figureLines lists the figures of every result that has some, one line each: the device's
// label, the case, its size and the figures ("[1] overlap/q2/float32 256M: compute ...").
func (r view) figureLines() []string {
	var out []string
	for i, d := range r.Devices {
		for _, res := range d.Results {
			if text := res.FiguresText(); text != "" {
				out = append(out, term.Safe(fmt.Sprintf("[%d] %s %s: %s", i+1, res.Case, bench.SizeText(res.Size, res.Dims), text)))
			}
		}
	}
	return out
}
