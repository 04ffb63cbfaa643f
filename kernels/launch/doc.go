// Package launch holds the launch family of Prism's kernel suite: the fixed cost of
// launching a kernel, measured with an empty one (launch_empty, launch.cl, one work-group
// whose first item counts the launch). launch/async/uint32 enqueues Size launches back to
// back and waits once (the time per launch while the device keeps up with the host),
// launch/roundtrip/uint32 launches once and waits (the latency of a launch that the host
// needs back), and launch/graph/uint32 replays a graph of Size launches captured once
// (Queue.Capture: a CUDA graph on CUDA, engine's replay of the recorded launches
// elsewhere) and waits.
//
// A run launches on a queue of the instance's own and returns when its launches are done,
// so that Queue.Timed, given nothing to time on its queue, measures the run with the host
// clock, as for the alloc family: a launch inside Timed would carry events that time the
// kernel on the device, not its launch. The model is zero, a latency; each instance reports
// its time per launch (kernels.FigureReporter: per_launch_ns, per_kernel_ns for a graph),
// which `prism bench` records in each result's "figures". The report header's launch
// overheads (bench.Overheads) are these ops' runs.
//
// Verify reads the counter back: it must have counted every launch since Setup, once.
// Family lists the ops that the suite runs and benchmarks.
package launch
