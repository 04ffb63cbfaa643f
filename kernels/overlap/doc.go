// Package overlap holds the overlap family of Prism's kernel suite: a pipeline that streams
// n floats through the device in chunks, each copied in from pinned host memory
// (Buffer.WriteAsync), computed in place by a chain of multiply-adds (overlap.cl), and
// copied out (Buffer.ReadAsync), on one queue (overlap/serial/float32: nothing overlaps)
// and on 2, 3 and 4 queues, the chunks dealt round-robin, each queue in order. It measures
// how much of the copy time such a pipeline hides behind the computation and the other
// direction's copies.
//
// A run returns when the last chunk is back in host memory, so that Queue.Timed measures
// the pipeline's wall time (no command with a device event is enqueued on the queue it is
// given). Setup times the pipeline on one queue and each stage alone; the instance reports
// them, and against the median time of the timed runs the fraction of the copy time hidden,
// (serial - median) / (copy in + copy out), through kernels.FigureReporter, which `prism
// bench` records in each result's "figures". Ref is the float64 reference and Tolerance
// its bound; Family lists the ops ("overlap/q2/float32", ...) that the suite runs and
// benchmarks.
package overlap
