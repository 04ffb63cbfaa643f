package driver

// GraphCapturer is implemented by queues whose API captures the commands enqueued on them
// into a graph that is launched again as one (CUDA's stream capture). Between BeginCapture
// and EndCapture the queue's commands are recorded, not run; engine refuses what the
// capture cannot hold (waits, blocking copies, timing) before it reaches the driver.
// Backends without it are captured by engine itself, which records the commands and
// enqueues them again at each launch.
type GraphCapturer interface {
	// BeginCapture starts recording the queue's commands.
	BeginCapture() error
	// EndCapture stops recording and returns the graph of the commands recorded, ready to
	// launch. It is called to end a capture that failed too; the graph is then closed.
	EndCapture() (Graph, error)
}

// GraphRecorder is implemented by queues whose API builds a graph from commands given to
// it one by one rather than by capturing the queue (OpenCL's cl_khr_command_buffer).
// Engine records a capture's commands itself, as it does for backends without graphs, then
// calls RecordGraph with their number and a function that enqueues them all, in order, on
// the queue it is given: a queue of the backend's that adds each command to the graph
// instead of running it; replay is called during RecordGraph only. An error wrapping
// ErrUnsupported (a command the graph cannot hold, a device without the extension) makes
// engine keep its own recording; any other error fails the capture.
type GraphRecorder interface {
	RecordGraph(commands int, replay func(Queue) error) (Graph, error)
}

// Graph is a captured sequence of commands. Launch enqueues all of it on a queue of the
// same device, ordered after the queue's earlier commands and before its later ones.
type Graph interface {
	Launch(q Queue) error
	Close() error
}

// EventLauncher is implemented by graphs that can be launched bracketed by an event, so
// that engine's Queue.Timed counts the graph's device time.
type EventLauncher interface {
	LaunchEvent(q Queue) (Event, error)
}
