// Package transfer holds the transfer family of Prism's kernel suite: copies of n bytes
// between host and device memory, host to device and device to host, from and to pinned
// host buffers (engine.NewHostBuffer with Buffer.WriteAsync and ReadAsync, timed by the
// copy's device event) and ordinary Go slices (the blocking Buffer.Write and Read, timed by
// the host clock, which a driver stages through pinned buffers of its own). Small sizes
// measure a copy's latency, large ones the bandwidth of the link (PCIe, NVLink-C2C); the
// ceiling to compare with is what PyTorch's pinned copy_ reaches on the same machine
// (scripts/vendor.py).
//
// No kernel runs while a copy is timed. The family's kernels (transfer.cl) give the copies
// their data, a random byte pattern of the seed (Pattern), and check a host-to-device copy
// on the device (Transfer.Check), so that no copy back through the path measured takes
// part; a device-to-host copy is checked in host memory (CheckPattern). Either destination
// holds a guard band (Guard bytes of Sentinel) that a copy must leave as it is. Family
// lists the ops ("transfer/h2d-pinned/uint8", ...) that the suite runs and benchmarks.
package transfer
