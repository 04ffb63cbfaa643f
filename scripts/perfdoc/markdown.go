package main

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prism-compute/prism/bench"
)

// The marker lines around the generated section of the page.
const (
	beginMarker = "<!-- current:begin -->"
	endMarker   = "<!-- current:end -->"
)

// render returns the Markdown of the tables; links to report files are made relative to
// the page, through linkDir (the results folder as the page reaches it: "results").
func render(tables []*table, splits []*splitTable, linkDir string) string {
	var b strings.Builder
	b.WriteString("<!-- Written by `go run ./scripts/perfdoc` from the reports in docs/results: edit those, not this. -->\n\n")
	fmt.Fprintf(&b, "The newest verified figure of every case stored for each device and API, from the\n"+
		"reports in [%s/](%s/). **time** is the median device time of one run; **rate** GB/s for a\n"+
		"memory-bound case, GFLOP/s for a compute-bound one; **of roof** the fraction of the device's\n"+
		"roofline measured in the same run (copy bandwidth or FMA peak; `cache-resident` where the\n"+
		"working set fits in the last-level cache); **vs vendor** the vendor library's median time over\n"+
		"Prism's on the same device and case (above 1: Prism is faster); **report** the numbered report\n"+
		"of the list above each table, with its date, commit and command. Cases without a stored run\n"+
		"on a device have no row. Under them, per set of devices, the newest split of each case,\n"+
		"size and placement of the data that the planner planned (`prism bench --split`; runs with\n"+
		"given shares left out): **speedup** the fastest device alone, timed in turn with the split,\n"+
		"over the split, with the 95%% interval of that ratio.\n", linkDir, linkDir)
	for _, t := range tables {
		b.WriteString("\n### " + cell(t.name) + ", " + apiName(t.backend) + "\n\n")
		b.WriteString(describe(t, linkDir) + "\n\n")
		writeSources(&b, t.sources, linkDir, func(s *source) string {
			var beside []string
			for _, v := range s.vendors {
				if used(t, s, v) {
					beside = append(beside, fmt.Sprintf("[%s](%s)", vendorFile(v, s), path.Join(linkDir, vendorFile(v, s))))
				}
			}
			if len(beside) == 0 {
				return ""
			}
			return ", vendor baselines from " + strings.Join(beside, ", ")
		})
		b.WriteString("\n| case | variant | size | time | rate | of roof | vs vendor | report |\n")
		b.WriteString("|---|---|---|--:|--:|--:|--:|--:|\n")
		for _, r := range t.rows {
			size := r.res.Shape
			if size == "" {
				size = formatSize(r.res.Size)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %d |\n", cell(r.res.Case), cell(orDash(r.res.Variant)),
				cell(size), formatTime(r.res.Stats.Median), rate(r.res), roof(r.res), vendorRatio(r), slices.Index(t.sources, r.src)+1)
		}
	}
	renderSplits(&b, splits, linkDir)
	return b.String()
}

// describe says what the newest report tells of the table's device.
func describe(t *table, linkDir string) string {
	d := t.info.Device
	var parts []string
	if d.Platform != "" {
		parts = append(parts, "platform "+cell(d.Platform))
	}
	if d.APIVersion != "" {
		parts = append(parts, cell(d.APIVersion))
	}
	if d.DriverVersion != "" {
		parts = append(parts, "driver "+cell(d.DriverVersion))
	}
	if d.ComputeUnits > 0 {
		parts = append(parts, fmt.Sprintf("%d compute units", d.ComputeUnits))
	}
	if t.info.Ceilings.CopyGBs > 0 {
		parts = append(parts, "copy ceiling "+sig(t.info.Ceilings.CopyGBs)+" GB/s")
	}
	if t.info.Ceilings.FP32GFLOPs > 0 {
		parts = append(parts, "fp32 peak "+sig(t.info.Ceilings.FP32GFLOPs)+" GFLOP/s")
	}
	s := fmt.Sprintf("`%s` in [%s](%s)", cell(d.ID), t.from.file, path.Join(linkDir, t.from.file))
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s + ". Reports, newest first:"
}

// used reports whether a row of t from source s takes its baseline from vendor report v.
func used(t *table, s *source, v *bench.Report) bool {
	for _, r := range t.rows {
		if r.src != s || r.vendor == nil {
			continue
		}
		for i := range v.Devices {
			for j := range v.Devices[i].Results {
				if &v.Devices[i].Results[j] == r.vendor {
					return true
				}
			}
		}
	}
	return false
}

// vendorFile returns the file name of vendor report v of source s.
func vendorFile(v *bench.Report, s *source) string {
	for i, r := range s.vendors {
		if r == v {
			return s.vendorFiles[i]
		}
	}
	return ""
}

// apiName names a backend as its users do.
func apiName(backend string) string {
	switch backend {
	case "cuda":
		return "CUDA"
	case "opencl":
		return "OpenCL"
	}
	return backend
}

// commit returns a report's commit, short, or says it is not recorded.
func commit(c string) string {
	if c == "" {
		return "commit not recorded"
	}
	hash, dirty := strings.CutSuffix(plain(c), "-dirty")
	if len(hash) > 7 {
		hash = hash[:7]
	}
	if dirty {
		return "commit " + hash + " with uncommitted changes"
	}
	return "commit " + hash
}

// command returns a report's command line as inline code, or says it is not recorded.
func command(args []string) string {
	if len(args) == 0 {
		return "command not recorded"
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strings.ReplaceAll(plain(a), "`", "'")
		if strings.ContainsAny(a, " \t*?") {
			q[i] = "'" + q[i] + "'"
		}
	}
	return "`" + strings.Join(q, " ") + "`"
}

// rate returns a result's main rate with its unit, or "-" for a latency.
func rate(r bench.Result) string {
	v, unit := r.Rate()
	if r.Latency() || v <= 0 {
		return "-"
	}
	return sig(v) + " " + unit
}

// roof returns a result's fraction of its roof.
func roof(r bench.Result) string {
	switch {
	case r.CacheResident:
		return "cache-resident"
	case r.Fraction >= 0.005:
		return strconv.FormatFloat(100*r.Fraction, 'f', 0, 64) + "%"
	case r.Fraction > 0:
		return "<1%"
	case r.Link:
		return "host link"
	}
	return "-"
}

// vendorRatio returns the vendor library's time over the result's, with the library.
func vendorRatio(r row) string {
	if r.vendor == nil || r.res.Stats.Median <= 0 {
		return "-"
	}
	ratio := float64(r.vendor.Stats.Median) / float64(r.res.Stats.Median)
	return strconv.FormatFloat(ratio, 'f', 2, 64) + " " + cell(library(r.vendor))
}

// library names the vendor library of a baseline: its variant (cuBLAS, CLBlast, ...), or
// for scripts/vendor.py's the framework it went through ("... via PyTorch 2.11").
func library(v *bench.Result) string {
	if _, after, ok := strings.Cut(v.Library, " via "); ok {
		name, _, _ := strings.Cut(after, " ")
		return name
	}
	if v.Variant != "" && v.Variant != "vendor" {
		return v.Variant
	}
	name, _, _ := strings.Cut(v.Library, " ")
	return name
}

// formatTime writes a duration with four significant digits in ns, µs, ms or s.
func formatTime(d time.Duration) string {
	ns := float64(d)
	switch {
	case ns < 1e3:
		return sig(ns) + " ns"
	case ns < 1e6:
		return sig(ns/1e3) + " µs"
	case ns < 1e9:
		return sig(ns/1e6) + " ms"
	}
	return sig(ns/1e9) + " s"
}

// formatSize writes a size with a K, M or G suffix (powers of 1024) where it divides.
func formatSize(n int) string {
	for _, u := range []struct {
		suffix string
		size   int
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.Itoa(n/u.size) + u.suffix
		}
	}
	return strconv.Itoa(n)
}

// sig writes x with four significant digits, without an exponent.
func sig(x float64) string {
	if x >= 1e4 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	s := strconv.FormatFloat(x, 'g', 4, 64)
	if strings.ContainsAny(s, "e") {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return s
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell makes text from a report safe in a Markdown table cell: plain, and no column
// separators.
func cell(s string) string { return strings.ReplaceAll(plain(s), "|", `\|`) }

// plain makes text from a report one line: control characters become spaces.
func plain(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
