// Package bench is Prism's benchmark harness: it runs kernel cases on devices, verifies
// every result against its float64 reference before timing it, times with device events
// after warm-up, and reports time, GB/s and GFLOP/s beside the ceiling measured on the same
// device in the same run.
//
// A Case knows how to set up one operation at one size on one device; Run drives the cases
// over the devices and returns a Report, which prints as a terminal table or JSON.
//
// The harness is not safe for concurrent use: run one Run at a time per device.
package bench
