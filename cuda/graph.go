package cuda

import (
	"fmt"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Graphs by stream capture: engine's Queue.Capture on a CUDA queue records the stream's
// commands (cuStreamBeginCapture_v2 in relaxed mode, since a goroutine's calls may come
// from several threads), instantiates them (cuGraphInstantiateWithFlags), and each
// Graph.Launch is one cuGraphLaunch. (OpenCL 1.2 has no such thing: engine records the
// commands of an OpenCL queue itself.)

var (
	_ driver.GraphCapturer = (*queue)(nil)
	_ driver.EventLauncher = (*graph)(nil)
)

// BeginCapture starts capturing the stream. A driver without graphs gives ErrUnsupported
// (engine then records the commands itself).
func (q *queue) BeginCapture() error {
	if err := q.check(); err != nil {
		return err
	}
	if !haveGraphs() {
		return fmt.Errorf("cuda: the driver has no stream capture and graphs (CUDA 11.4): %w", driver.ErrUnsupported)
	}
	return q.d.onCaller(func() error {
		return check("cuStreamBeginCapture_v2(CU_STREAM_CAPTURE_MODE_RELAXED)", cuStreamBeginCapture(q.stream))
	})
}

// EndCapture ends the capture and returns its instantiated graph.
func (q *queue) EndCapture() (driver.Graph, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	var e cuGraphExec
	var types []int
	err := q.d.onCaller(func() error {
		var r Result
		e, types, r = cuStreamEndCaptureIn(q.d.ctx, q.stream, engine.Tracing())
		return check("cuStreamEndCapture, cuGraphInstantiateWithFlags", r)
	})
	if err != nil {
		return nil, err
	}
	if types != nil {
		tracef("captured a graph of %s", nodeCounts(types))
	}
	return &graph{d: q.d, exec: e}, nil
}

// graph is an instantiated CUDA graph of one device.
type graph struct {
	d    *device
	exec cuGraphExec
}

// Launch enqueues the graph on q's stream (cuGraphLaunch).
func (g *graph) Launch(dq driver.Queue) error {
	q, ok := dq.(*queue)
	if !ok || q == nil {
		return fmt.Errorf("cuda: launch a graph on %T, not a CUDA queue: %w", dq, driver.ErrInvalidArg)
	}
	if err := q.check(); err != nil {
		return err
	}
	if q.d != g.d {
		return fmt.Errorf("cuda: launch a graph on a queue of another device: %w", driver.ErrInvalidArg)
	}
	if g.d.closed.Load() {
		return errClosed("device")
	}
	q.pending = true
	// From the calling goroutine, the context made current in the same C call.
	return check("cuGraphLaunch", cuGraphLaunchIn(g.d.ctx, g.exec, q.stream))
}

// LaunchEvent enqueues the graph bracketed by timing events, like every timed command.
func (g *graph) LaunchEvent(dq driver.Queue) (driver.Event, error) {
	q, ok := dq.(*queue)
	if !ok || q == nil || q.d != g.d {
		return nil, fmt.Errorf("cuda: launch a graph on %T, not a queue of its device: %w", dq, driver.ErrInvalidArg)
	}
	return q.command("graph", func() error {
		return check("cuGraphLaunch", cuGraphLaunchIn(g.d.ctx, g.exec, q.stream))
	})
}

// Close destroys the executable graph (cuGraphExecDestroy).
func (g *graph) Close() error {
	if g.exec == nil {
		return nil
	}
	e := g.exec
	g.exec = nil
	return g.d.onCaller(func() error { return check("cuGraphExecDestroy", cuGraphExecDestroy(e)) })
}

// nodeCounts says how many nodes of each type a graph holds ("5 nodes: 3 kernel, 2 event
// record"), from counts in graphNodeTypes' order.
func nodeCounts(counts []int) string {
	total := 0
	var parts []string
	for i, n := range counts {
		if n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%d %s", n, graphNodeTypes[i]))
		}
	}
	if total == 0 {
		return "nodes the driver did not count"
	}
	return fmt.Sprintf("%d nodes: %s", total, strings.Join(parts, ", "))
}
