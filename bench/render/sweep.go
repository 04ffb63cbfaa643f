package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/internal/term"
)

// The summary of a report against the vendor library (bench.VendorSummaries): per device,
// family, precision and variant of Prism's, the geometric mean and the worst of the "vs
// vendor" ratios over the GEMM and attention cases (a sweep of shapes, several sizes),
// naming the worst case.

// vendorSummaryTitle heads the summary in every format.
const vendorSummaryTitle = "Against the vendor library over the GEMM and attention cases"

// vendorSummaryLegend says what the summary's figures are.
var vendorSummaryLegend = []string{
	"ratio: the vendor library's time / Prism's time for the same case (the vs vendor column; above 1: Prism is faster)",
	"geomean: the geometric mean of the ratios of the cases with a vendor baseline; worst: the smallest ratio, and its case",
	"best of ...: in each case the fastest of Prism's variants that ran it",
}

// labelGrid returns a summary's empty grid: a text column per name in heads, and legend.
func labelGrid(legend []string, heads ...string) *resultGrid {
	g := &resultGrid{legend: legend}
	for _, h := range heads {
		g.cols = append(g.cols, tableCol{h, -1, colLabel})
	}
	return g
}

// vendorSummaryGrid is the summary as a table: a row per device, family, precision and
// variant.
func (r view) vendorSummaryGrid() *resultGrid {
	sums := r.VendorSummaries()
	if len(sums) == 0 {
		return nil
	}
	g := labelGrid(vendorSummaryLegend, "device", "family", "precision", "variant", "cases", "geomean", "worst", "worst case", "vendor")
	for _, s := range sums {
		g.rows = append(g.rows, term.SafeAll([]string{r.deviceLabel(s.Device) + " " + s.Device, s.Family, s.Type, summaryVariant(s), strconv.Itoa(s.Cases),
			ratioText(s.GeoMean), ratioText(s.Worst), s.WorstCase + " " + worstShape(s), s.Library}))
	}
	return g
}

// vendorSummaryLines are the summary as lines for the terminal table, one per row:
// "[1] gemm float32 portable: 23 cases, geomean 0.93x, worst 0.61x (gemm/nn/float32 8192x64x8192) vs cuBLAS 13.0.2".
func (r view) vendorSummaryLines() []string {
	var out []string
	for _, s := range r.VendorSummaries() {
		line := fmt.Sprintf("%s %s %s %s: %d cases, geomean %s, worst %s (%s %s)", r.deviceLabel(s.Device), s.Family, s.Type, summaryVariant(s), s.Cases,
			ratioText(s.GeoMean), ratioText(s.Worst), s.WorstCase, worstShape(s))
		if s.Library != "" {
			line += " vs " + s.Library
		}
		out = append(out, term.Safe(line))
	}
	return out
}

// summaryVariant names a summary's variant: "best of a, b" for bench.BestVariant.
func summaryVariant(s bench.VendorSummary) string {
	if s.Variant == bench.BestVariant && len(s.Variants) > 0 {
		v := "best of "
		for i, name := range s.Variants {
			if i > 0 {
				v += ", "
			}
			v += name
		}
		return v
	}
	return s.Variant
}

// worstShape writes the worst case's shape: the MxNxK asked for, else the shape set up
// ("M=N=K=4096"), else its size.
func worstShape(s bench.VendorSummary) string {
	switch {
	case s.WorstDims != "":
		return s.WorstDims
	case s.WorstShape != "":
		return s.WorstShape
	}
	return bench.FormatSize(s.WorstSize)
}

// ratioText writes a ratio as the vs vendor column does: "0.93x".
func ratioText(x float64) string {
	if !finite(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64) + "x"
}

// The summary of a report's splits (bench.SplitSummaries): per set of devices and
// placement of the data, the geometric mean and the worst of the speedups.

// splitSummaryTitle heads the splits' summary in every format.
const splitSummaryTitle = "Splits against the fastest device alone"

// splitSummaryLegend says what the splits' summary's figures are.
var splitSummaryLegend = []string{
	"speedup: the fastest device alone, through the same placement of the data, timed in turn with the split / the split (the splits table's speedup; above 1: the split is faster)",
	"cases: the splits with a speedup; split: those the planner gave to more than one device (the others ran on the one device it predicted fastest)",
	"geomean: the geometric mean of the speedups; worst: the smallest, its case, and in brackets the 95% interval of its ratio (Moses' interval of the two timings' samples; an interval holding 1: the runs cannot tell the two apart)",
}

// splitSummaryGrid is the splits' summary as a table, a row per set of devices and
// placement; nil where the report has no split with a speedup.
func (r view) splitSummaryGrid() *resultGrid {
	sums := r.SplitSummaries()
	if len(sums) == 0 {
		return nil
	}
	g := labelGrid(splitSummaryLegend, "devices", "data", "cases", "split", "geomean", "worst", "worst case")
	for _, s := range sums {
		worst := ratioText(s.Worst)
		if s.WorstLow > 0 && s.WorstHigh > 0 {
			worst += fmt.Sprintf(" (%.2f-%.2f)", s.WorstLow, s.WorstHigh)
		}
		g.rows = append(g.rows, term.SafeAll([]string{r.deviceLabels(strings.Split(s.Devices, "+")), s.Placement, strconv.Itoa(s.Cases), strconv.Itoa(s.Split),
			ratioText(s.GeoMean), worst, s.WorstCase + " " + bench.FormatSize(s.WorstSize)}))
	}
	return g
}
