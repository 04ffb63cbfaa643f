// Package kerneltest holds what every kernel family's tests share: a loop over every device
// of every backend (ForEachDevice), sizes that straddle work-group edges (EdgeSizes), and
// device buffers with guard bands of sentinels after every output (Guarded, Download), the
// checks docs/ARCHITECTURE.md asks of every operation. Small says when the tests run at small sizes
// (under Oclgrind). It imports the backends, so a family's tests need no other import to
// run on every device.
package kerneltest
