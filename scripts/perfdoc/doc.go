// Perfdoc writes the "Current results" section of docs/PERFORMANCE.md from the report
// files stored in docs/results: one table per device and API, each case's newest verified
// figure (time, rate, fraction of its roof, ratio to the vendor library), then one table of
// splits per set of devices, and for every report a table draws on its date, commit and
// command.
//
// Run it from the repository root after adding a report to docs/results:
//
//	go run ./scripts/perfdoc            # rewrites the section between the markers
//	go run ./scripts/perfdoc -check     # exit status 1 when the section is out of date
//
// The section lies between the lines <!-- current:begin --> and <!-- current:end -->;
// nothing else of the file changes. Its test checks that the committed section is what
// the committed reports make, so the page cannot drift from them.
//
// What it reads: every *.json file of the results folder is read as a bench report
// (bench.ReadReportFile); a file that is not one is an error naming it. Reports without
// results (prism devices --json) are left out. A report whose every device is a vendor
// pseudo-device ("vendor:cuda:0", scripts/vendor.py's) holds the vendor baselines of the
// runs stored beside it: the files whose names are the same up to their last '-'
// (2026-11-25-h100-gemm-vendor.json for 2026-11-25-h100-gemm-bench.json).
//
// What it picks: for each device (by name) and API, and for each case, variant and size,
// the newest verified and validly timed result by the report's date (a result of a report
// from before reports named the variant gives way to a newer one of the same case and
// size). A table therefore draws on several reports, listed above it and numbered; each
// row names its report. Its vendor ratio is the vendor library's median time over
// Prism's, against the fastest vendor figure of the case and size: the result's own
// baseline (prism bench --vendor), the vendor library's result on the same device in the
// same run (--variant cuBLAS), and the vendor pseudo-device's (scripts/vendor.py).
//
// Splits (prism bench --split): per set of devices, named by their names in the split's
// order, the newest verified split of each case, size and placement of the data whose
// shares the planner chose (splits with given shares are experiments, left out), with its
// plan, time, speedup over the fastest device alone and that speedup's 95% interval
// (bench.SplitResult.SpeedupInterval), each row naming its report.
package main
