// Package scan holds the scan family of Prism's kernel suite: inclusive and exclusive prefix
// sums by reduce-then-scan (scan.cl), in int32, uint32 and float32.
//
// NewScan compiles the family for a device; ScanRef is the reference and ScanTolerance the
// per-element error bound; Family lists the ops the suite runs.
package scan
