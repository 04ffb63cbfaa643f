package bench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prism-compute/prism/engine"
)

// caseKey identifies a row of the side-by-side table: an op at a size, with the variant the
// run asked for (empty where each device ran the variant its op picks).
type caseKey struct {
	Case    string
	Size    int
	Variant string
}

// key returns the row of the table res belongs to.
func (res *Result) key() caseKey { return caseKey{res.Case, res.Size, res.Requested} }

// rows returns every case and size of the report, in order of first appearance.
func (r *Report) rows() []caseKey {
	var keys []caseKey
	seen := map[caseKey]bool{}
	for _, d := range r.Devices {
		for _, res := range d.Results {
			k := res.key()
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// baselineIndex returns the index of the device the ratios compare with: the one named, or
// the first.
func (r *Report) baselineIndex(id string) (int, error) {
	if id == "" {
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

// grid is the side-by-side table as cells: a header row, then one row per case and size.
// Per device: median time, main rate, percent of the roofline with its bound, and for every
// device but the baseline the ratio baseline time / device time.
func (r *Report) grid(baseline string) (header []string, rows [][]string, err error) {
	base, err := r.baselineIndex(baseline)
	if err != nil {
		return nil, nil, err
	}
	header = []string{"case", "variant", "size"}
	vendorCols := make([]bool, len(r.Devices))
	for i := range r.Devices {
		l := fmt.Sprintf("[%d] ", i+1)
		header = append(header, l+"time", l+"rate", l+"of roof")
		if i != base {
			header = append(header, fmt.Sprintf("%svs [%d]", l, base+1))
		}
		if vendorCols[i] = r.ranVendor(i); vendorCols[i] {
			header = append(header, l+"vs vendor")
		}
	}
	ix := r.index()
	for _, k := range ix.rows {
		row := []string{k.Case, ix.variantCell(k), FormatSize(k.Size)}
		b := ix.result(base, k)
		for i := range r.Devices {
			res := ix.result(i, k)
			switch {
			case res == nil:
				row = append(row, "-", "-", "-")
			case res.Skipped != "":
				row = append(row, "skipped", "-", "-")
			case res.Err != "":
				row = append(row, "FAILED", "-", "-")
			case res.Invalid != "":
				row = append(row, "INVALID", "-", "-") // no valid device time: failures() says why
			default:
				v, unit := res.Rate()
				rate := trimFloat(v) + " " + unit
				roof := fmt.Sprintf("%.0f%% %s", 100*res.Fraction, shortBound(res.Bound))
				switch {
				case res.Latency():
					rate, roof = "-", "latency" // no work in the model: the time is the figure
				case res.Link && res.Bound == BoundMemory:
					roof = "host link" // no ceiling measures the link: see vendor.py's copies
				case res.CacheResident:
					roof = "cache-resident"
				case res.Bound == "":
					roof = "-" // no ceilings measured (a vendor pseudo-device)
				case res.RoofMissing != "":
					roof = "no roof" // its ceiling's measurement failed
				}
				row = append(row, FormatDuration(res.Stats.Median), rate, roof)
			}
			if i != base {
				cell := "-"
				if res != nil && b != nil && res.OK() && b.OK() && res.Stats.Median > 0 {
					cell = fmt.Sprintf("%.2fx", float64(b.Stats.Median)/float64(res.Stats.Median))
				}
				row = append(row, cell)
			}
			if vendorCols[i] {
				row = append(row, vendorCell(res))
			}
		}
		rows = append(rows, termSafeAll(row))
	}
	return header, rows, nil
}

// variantCell names the variant of a row: the one asked for, or the one each device ran,
// once when they agree, else per device in device order ("cuda-shfl | portable").
func (ix *caseIndex) variantCell(k caseKey) string {
	if k.Variant != "" {
		return k.Variant
	}
	var names []string
	same := true
	for i := range ix.r.Devices {
		name := "-"
		if res := ix.result(i, k); res != nil && res.Variant != "" {
			name = res.Variant
		}
		if len(names) > 0 && name != names[0] {
			same = false
		}
		names = append(names, name)
	}
	if same && len(names) > 0 {
		return names[0]
	}
	return strings.Join(names, " | ")
}

// ranVendor reports whether device i ran vendor baselines (--vendor).
func (r *Report) ranVendor(i int) bool {
	for _, res := range r.Devices[i].Results {
		if res.Vendor != nil || res.NoVendor != "" {
			return true
		}
	}
	return false
}

// vendorCell is the "vs vendor" cell of a result: the vendor's time over Prism's (above 1:
// Prism is faster), "none" where no vendor routine computes the op, or what went wrong.
func vendorCell(res *Result) string {
	switch {
	case res == nil || res.VendorLibrary:
		return "-"
	case res.NoVendor != "":
		return "none"
	case res.Vendor == nil:
		return "-"
	case res.Vendor.Skipped != "":
		return "skipped"
	case res.Vendor.Err != "":
		return "FAILED"
	case !res.OK() || res.Stats.Median <= 0:
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(res.Vendor.Stats.Median)/float64(res.Stats.Median))
}

// vendorLibraries lists the vendor libraries device i ran, with their versions.
func (r *Report) vendorLibraries(i int) []string {
	var libs []string
	for _, res := range r.Devices[i].Results {
		if v := res.Vendor; v != nil && v.Library != "" && !slices.Contains(libs, v.Library) {
			libs = append(libs, v.Library)
		}
	}
	return libs
}

// vendorLegend explains the "vs vendor" columns when the report has them.
func (r *Report) vendorLegend() string {
	for i := range r.Devices {
		if r.ranVendor(i) {
			return "; vs vendor: the vendor library's time / Prism's time on the same device (above 1: Prism is faster; none: no vendor routine for the op)"
		}
	}
	return ""
}

func shortBound(b string) string {
	if b == BoundCompute {
		return "compute"
	}
	return "mem"
}

// deviceLines describes each device: identity, ceilings, overheads, telemetry.
func (r *Report) deviceLines() [][]string {
	var out [][]string
	for i, d := range r.Devices {
		di := d.Device
		lines := []string{fmt.Sprintf("[%d] %s  %s (%s, %s, %d CUs, %d MHz, driver %s)", i+1, di.ID, di.Name, di.Kind, d.Backend, di.ComputeUnits, di.ClockMHz, di.DriverVersion)}
		if d.Err != "" {
			lines = append(lines, "error: "+d.Err)
		}
		c := d.Ceilings
		if c.CopyGBs > 0 || c.CopyAbsent != "" || c.FP32Absent != "" {
			lines = append(lines, "ceilings: "+c.describe())
			for _, m := range []struct{ what, why string }{{"copy ceiling", c.CopyAbsent}, {"fp32 peak", c.FP32Absent}} {
				if m.why != "" {
					lines = append(lines, m.what+" missing: "+m.why)
				}
			}
		}
		if c.Invalid != "" {
			lines = append(lines, "ceilings: invalid measurement: "+c.Invalid)
		}
		if o := d.Overheads; o.FirstBuild > 0 {
			lines = append(lines, fmt.Sprintf("overheads: stream build %s first, %s again; empty kernel %s per launch async, %s round trip",
				FormatDuration(o.FirstBuild), FormatDuration(o.SecondBuild), FormatDuration(o.LaunchAsync), FormatDuration(o.LaunchSync)))
		} else if o.Absent != "" {
			lines = append(lines, "overheads missing: "+o.Absent)
		}
		if d.Timing == TimingHost {
			lines = append(lines, "timing: host clock around each run (the device reports no usable event timestamps; launch overheads included)")
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
		out = append(out, termSafeAll(lines))
	}
	return out
}

func (r *Report) titleLine() string {
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
		hostCases := false
		for _, res := range d.Results {
			hostCases = hostCases || res.Timing == TimingHost
		}
		if d.Timing == TimingHost || hostCases {
			timing = "device-event timing where the device and the op allow it, else host clock"
		}
	}
	if r.Interrupted {
		timing += "; INTERRUPTED during " + r.InterruptedAt + ": the report holds what finished before"
	}
	return termSafe(fmt.Sprintf("prism %s %s  %s  host %s (%s/%s)  median of %d runs after %d warm-up%s, %s",
		r.Prism, commit, r.Date.Format(time.RFC3339), r.Host, r.GOOS, r.GOARCH, r.Config.Count, r.Config.Warmup, mode, timing))
}

// failures lists the failed results and those without a valid measurement: device label,
// case, size, error.
func (r *Report) failures() []string {
	var out []string
	for i, d := range r.Devices {
		for _, res := range d.Results {
			switch {
			case res.Err != "":
				out = append(out, termSafe(fmt.Sprintf("FAILED [%d] %s %s: %s", i+1, res.Case, FormatSize(res.Size), res.Err)))
			case res.Skipped == "" && res.Invalid != "":
				out = append(out, termSafe(fmt.Sprintf("INVALID [%d] %s %s: %s", i+1, res.Case, FormatSize(res.Size), res.Invalid)))
			}
		}
	}
	return out
}

// WriteTable writes the devices side by side: one row per case and size, and per device the
// median time, the main rate (GB/s when memory-bound, GFLOP/s when compute-bound), the
// fraction of the roofline, and the ratio to the baseline device (its ID, or "" for the
// first): baseline time over device time, so above 1 is faster.
func (r *Report) WriteTable(w io.Writer, baseline string) error {
	header, rows, err := r.grid(baseline)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, r.titleLine())
	for _, lines := range r.deviceLines() {
		fmt.Fprintln(w, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintln(w, "    "+l)
		}
	}
	fmt.Fprintln(w, "of roof: achieved / min(peak of the type, copy GB/s x FLOP/byte), with the bound (cache-resident: above the DRAM copy roof with a working set that fits in the last-level cache); vs [i]: [i]'s time / this time"+r.vendorLegend())
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if lines := r.figureLines(); len(lines) > 0 {
		fmt.Fprintln(w, "figures (the ops' own, beside their time):")
		for _, l := range lines {
			fmt.Fprintln(w, "    "+l)
		}
	}
	for _, f := range r.failures() {
		fmt.Fprintln(w, f)
	}
	return nil
}

// WriteMarkdown writes the same content as WriteTable as Markdown: the metadata as a list,
// the side-by-side results as a table.
func (r *Report) WriteMarkdown(w io.Writer, baseline string) error {
	header, rows, err := r.grid(baseline)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "**%s**\n\n", mdEscape(r.titleLine()))
	for _, lines := range r.deviceLines() {
		fmt.Fprintf(w, "- %s\n", mdEscape(lines[0]))
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "  - %s\n", mdEscape(l))
		}
	}
	fmt.Fprintf(w, "\n*of roof*: achieved / min(peak of the type, copy GB/s × FLOP/byte), with the bound (*cache-resident*: above the DRAM copy roof with a working set that fits in the last-level cache); *vs [i]*: [i]'s time / this time%s.\n\n", r.vendorLegend())
	fmt.Fprintf(w, "| %s |\n|", strings.Join(header, " | "))
	for i := range header {
		if i < 2 {
			fmt.Fprint(w, "---|")
		} else {
			fmt.Fprint(w, "---:|")
		}
	}
	fmt.Fprintln(w)
	for _, row := range rows {
		for i := range row {
			row[i] = mdEscape(row[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	if lines := r.figureLines(); len(lines) > 0 {
		fmt.Fprintf(w, "\n*figures* (the ops' own, beside their time):\n\n")
		for _, l := range lines {
			fmt.Fprintf(w, "- %s\n", mdEscape(l))
		}
	}
	if f := r.failures(); len(f) > 0 {
		fmt.Fprintln(w)
		for _, l := range f {
			fmt.Fprintf(w, "- %s\n", mdEscape(l))
		}
	}
	return nil
}

// mdEscaper escapes what Markdown would read as markup in a table cell or list item: the
// cell separator, emphasis, code spans and inline HTML.
var mdEscaper = strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", `\<`, "\n", " ")

func mdEscape(s string) string { return mdEscaper.Replace(s) }

// FormatDuration writes d with a unit that keeps three significant digits (1.23ms).
func FormatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	}
}

// trimFloat formats a rate with three significant digits (at least the units).
func trimFloat(v float64) string {
	switch {
	case v >= 100 || v <= -100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10 || v <= -10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
