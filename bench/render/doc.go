// Package render shows a bench.Report to people and to other tools: a side-by-side
// terminal table that fits TableWidth columns (Table), Markdown, CSV (CSVHeader, one row per
// result, split and collective), benchstat input (Benchstat), bar charts per case and
// device (Plot, SavePlot, one of PlotMetrics), a roofline per device (Roofline,
// SaveRoofline) and cases over runs (SaveHistory) in SVG, PNG or PDF, one self-contained HTML page with the tables and both
// charts (HTML), and the table of a bench.Comparison (Comparison).
//
// Every string of a report (names, IDs, errors, versions) passes through the terminal-safe
// escaping of bench/internal/term before it is written: reports come from other machines.
// A render reads its report and never changes it; render one report from one goroutine at a
// time, or several reports at once.
//
// The measurement, the report types, JSON, statistics and comparisons are package bench's;
// this package imports bench, never the reverse.
package render
