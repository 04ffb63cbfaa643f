package engine

import (
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine/driver"
)

// Graph is a sequence of commands captured from a queue once (Queue.Capture) and launched
// again as one: a CUDA graph (stream capture, cuGraphLaunch: one call for the whole
// sequence), an OpenCL command buffer where the device has cl_khr_command_buffer and
// PRISM_OPENCL_COMMAND_BUFFER=1 asks for one (one clEnqueueCommandBufferKHR), elsewhere the commands as engine recorded them, enqueued
// again without checking or converting their arguments. A graph refers to the buffers and
// kernels it captured, with the argument values they had: they must stay open while it is
// launched (Launch refuses a graph whose buffers or kernels were closed). A Graph is safe
// for concurrent use; each Launch is on one queue.
type Graph struct {
	handle
	drv  driver.Graph // the backend's graph, or nil
	cmds []command    // engine's recording, where drv is nil
	uses []*handle    // the buffers and kernels the commands use
	n    int          // commands captured
}

// command is a command engine recorded: it enqueues it again on dq, with an event when
// timed (a fill or a copy has one either way; the caller closes it).
type command func(dq driver.Queue, timed bool) (driver.Event, error)

// capture is a Queue's capture in progress.
type capture struct {
	native bool // the backend records (driver.GraphCapturer); else cmds does
	cmds   []command
	uses   []*handle
	n      int
	err    error // the first command that could not be captured
}

// uses notes a handle a captured command depends on.
func (c *capture) use(h *handle) {
	for _, u := range c.uses {
		if u == h {
			return
		}
	}
	c.uses = append(c.uses, h)
}

// Capture runs f, which enqueues commands on q, and returns them as a Graph instead of
// running them: launches (Launch), fills and copies (Buffer.Fill, CopyFrom), and on CUDA
// asynchronous copies and vendor library calls too. What needs the host while the device
// runs cannot be captured: inside f, Finish, Timed, LaunchEvent, Wait, Record and the
// blocking Buffer.Read and Write fail with ErrInvalidArg. If f or a command fails, the
// capture is dropped and the error returned; q is usable again either way. Captures do not
// nest.
//
//	g, err := q.Capture(func() error {
//		for _, pass := range passes {
//			if err := q.Launch(k, pass.r, pass.args...); err != nil {
//				return err
//			}
//		}
//		return nil
//	})
//	defer g.Close()
//	for range 1000 {
//		g.Launch(q) // one call per replay
//	}
func (q *Queue) Capture(f func() error) (*Graph, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if f == nil {
		return nil, fmt.Errorf("engine: capture: nil function: %w", ErrInvalidArg)
	}
	if q.cap != nil {
		return nil, fmt.Errorf("engine: captures do not nest: %w", ErrInvalidArg)
	}
	if q.rec != nil {
		return nil, fmt.Errorf("engine: capture inside Timed: %w", ErrInvalidArg)
	}
	gc, native := q.drv.(driver.GraphCapturer)
	c := &capture{native: native}
	if native {
		if err := gc.BeginCapture(); errors.Is(err, ErrUnsupported) {
			c.native = false // this driver has no graphs: engine records
		} else if err != nil {
			return nil, fmt.Errorf("engine: begin capture on %s: %w", q.dev.id, err)
		}
	}
	q.cap = c
	err := func() error {
		defer func() { q.cap = nil }() // also when f panics
		return f()
	}()
	if err == nil {
		err = c.err
	}
	var dg driver.Graph
	if c.native {
		g, eerr := gc.EndCapture()
		if err == nil && eerr != nil {
			err = fmt.Errorf("engine: end capture on %s: %w", q.dev.id, eerr)
		}
		if err != nil && g != nil {
			g.Close()
		}
		dg = g
	}
	if err != nil {
		return nil, err
	}
	if gr, ok := q.drv.(driver.GraphRecorder); ok && !c.native && len(c.cmds) > 0 {
		cmds := c.cmds
		g, rerr := gr.RecordGraph(len(cmds), func(rq driver.Queue) error {
			for i, cmd := range cmds {
				if err := closeEvent(cmd(rq, false)); err != nil {
					return fmt.Errorf("command %d of %d: %w", i, len(cmds), err)
				}
			}
			return nil
		})
		switch {
		case rerr == nil:
			dg, c.cmds = g, nil
		case !errors.Is(rerr, ErrUnsupported): // else engine's recording stays
			return nil, fmt.Errorf("engine: record a graph of %d commands on %s: %w", len(c.cmds), q.dev.id, rerr)
		}
	}
	g := &Graph{handle: handle{dev: q.dev, what: "graph"}, drv: dg, cmds: c.cmds, uses: c.uses, n: c.n}
	if err := q.dev.adopt(g); err != nil {
		if dg != nil {
			dg.Close()
		}
		return nil, err
	}
	return g, nil
}

// CanCapture reports whether Capture may begin on q now: q is open, and neither inside a
// Capture nor inside Timed. Code that runs its commands as a graph where it can (a
// multi-pass sort) enqueues them directly otherwise.
func (q *Queue) CanCapture() bool { return q.check() == nil && q.cap == nil && q.rec == nil }

// capturing returns an error wrapping ErrInvalidArg if q is capturing: what cannot be
// captured calls it first.
func (q *Queue) capturing(what string) error {
	if q != nil && q.cap != nil {
		return fmt.Errorf("engine: %s inside Queue.Capture: a graph cannot hold it: %w", what, ErrInvalidArg)
	}
	return nil
}

// record adds a command to an engine-recorded capture, or notes it in a native one (the
// backend records it when run). It returns true when the command must not run now.
func (q *Queue) record(cmd command, uses ...*handle) bool {
	c := q.cap
	if c == nil {
		return false
	}
	c.n++
	for _, h := range uses {
		c.use(h)
	}
	if c.native {
		return false
	}
	c.cmds = append(c.cmds, cmd)
	return true
}

// refuse notes a command an engine-recorded capture cannot hold; Capture then fails.
func (q *Queue) refuse(what string) error {
	err := fmt.Errorf("engine: %s inside Queue.Capture on %s: only CUDA graphs can hold it: %w", what, q.dev.id, ErrUnsupported)
	if q.cap.err == nil {
		q.cap.err = err
	}
	return err
}

// Len returns the number of commands captured.
func (g *Graph) Len() int {
	if g == nil {
		return 0
	}
	return g.n
}

// Launch enqueues the graph's commands on q, a queue of the graph's device, after q's
// earlier commands. It returns once they are enqueued; Finish waits for them.
func (g *Graph) Launch(q *Queue) error {
	if g == nil {
		return fmt.Errorf("engine: launch of a nil graph: %w", ErrInvalidArg)
	}
	if err := g.check(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	if err := g.sameDevice(q.dev); err != nil {
		return err
	}
	if err := q.capturing("Graph.Launch"); err != nil {
		return err
	}
	for _, h := range g.uses {
		if h.closed.Load() {
			return fmt.Errorf("engine: launch of a graph: its %s was closed after the capture: %w", h.what, ErrClosed)
		}
	}
	timed := q.rec != nil
	if g.drv != nil {
		if el, ok := g.drv.(driver.EventLauncher); ok && timed {
			ev, err := el.LaunchEvent(q.drv)
			if err != nil {
				return fmt.Errorf("engine: launch of a graph of %d commands on %s: %w", g.n, q.dev.id, err)
			}
			return q.keep(ev).Close()
		}
		q.enqueued()
		if err := g.drv.Launch(q.drv); err != nil {
			return fmt.Errorf("engine: launch of a graph of %d commands on %s: %w", g.n, q.dev.id, err)
		}
		return nil
	}
	q.enqueued()
	for i, cmd := range g.cmds {
		ev, err := cmd(q.drv, timed)
		if err == nil && ev != nil {
			err = q.keep(ev).Close() // Timed counts it
		}
		if err != nil {
			return fmt.Errorf("engine: launch of a graph: command %d of %d on %s: %w", i, len(g.cmds), q.dev.id, err)
		}
	}
	return nil
}

// Close releases the graph. Idempotent.
func (g *Graph) Close() error {
	if g == nil || !g.closed.CompareAndSwap(false, true) {
		return nil
	}
	g.dev.release(g)
	return g.free()
}

func (g *Graph) closeResource() error {
	if !g.closed.CompareAndSwap(false, true) {
		return nil
	}
	return g.free()
}

func (g *Graph) free() error {
	g.cmds, g.uses = nil, nil
	if g.drv == nil {
		return nil
	}
	return g.drv.Close()
}

// After the queues, with the kernels: before the buffers it uses.
func (g *Graph) order() int { return 1 }

// closeEvent closes the event of a command enqueued again by a graph, if it has one.
func closeEvent(ev driver.Event, err error) error {
	if err != nil || ev == nil {
		return err
	}
	return ev.Close()
}

// vendorCall refuses a vendor library call in a capture engine records (a CUDA graph
// holds one).
func (q *Queue) vendorCall() error {
	if q.cap != nil && !q.cap.native {
		return q.refuse("a vendor library call")
	}
	return nil
}

// captureLaunch is Launch inside Capture: checked and converted as any launch, then run
// into the backend's capture, or recorded with a copy of its arguments.
func (q *Queue) captureLaunch(k *Kernel, r Range, args []any) error {
	r, dargs, err := q.prepare(k, r, args)
	if err != nil {
		return err
	}
	uses := []*handle{&k.handle}
	for _, a := range args {
		switch v := a.(type) {
		case bufferArg:
			h, _ := v.kernelArg()
			uses = append(uses, h)
		case *TensorMap:
			uses = append(uses, v.buf)
		case Remote:
			uses = append(uses, v.h)
		}
	}
	dk := k.drv
	launch := func(args []driver.Arg) command {
		return func(dq driver.Queue, timed bool) (driver.Event, error) {
			if ul, ok := dq.(driver.UntimedLauncher); ok && !timed {
				return nil, ul.LaunchUntimed(dk, r, args)
			}
			return dq.Launch(dk, r, args)
		}
	}
	if !q.cap.native {
		// The queue's scratch memory is reused by the next launch: keep a copy, each
		// value aligned as a tensor map's must be.
		saved := make([]driver.Arg, len(dargs))
		for i, a := range dargs {
			saved[i] = driver.Arg{Buffer: a.Buffer, Local: a.Local}
			if len(a.Value) > 0 {
				saved[i].Value = alignedBytes(len(a.Value), driver.TensorMapAlign)
				copy(saved[i].Value, a.Value)
			}
		}
		q.record(launch(saved), uses...)
		return nil
	}
	q.record(nil, uses...)
	q.enqueued()
	if err := closeEvent(launch(dargs)(q.drv, false)); err != nil {
		return fmt.Errorf("engine: launch %s on %s: %w", k.name, q.dev.id, err)
	}
	return nil
}
