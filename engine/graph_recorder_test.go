package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/internal/fake"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// recorderDriver is the fake backend whose queues are driver.GraphRecorders answering as
// *mode says: "record" records the commands into a graph of its own, "unsupported" and
// "fail" refuse.
type recorderDriver struct {
	driver.Driver
	mode *string
}

func (d recorderDriver) Open(ctx context.Context, id string) (driver.Device, error) {
	dev, err := d.Driver.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return recorderDevice{Device: dev, mode: d.mode}, nil
}

type recorderDevice struct {
	driver.Device
	mode *string
}

func (d recorderDevice) NewQueue() (driver.Queue, error) {
	q, err := d.Device.NewQueue()
	if err != nil {
		return nil, err
	}
	return &recorderQueue{Queue: q, mode: d.mode}, nil
}

type recorderQueue struct {
	driver.Queue
	mode     *string
	commands []int          // the count of each RecordGraph call
	last     *recordedGraph // the last graph recorded
}

func (q *recorderQueue) RecordGraph(commands int, replay func(driver.Queue) error) (driver.Graph, error) {
	q.commands = append(q.commands, commands)
	switch *q.mode {
	case "unsupported":
		return nil, fmt.Errorf("recorder: no graphs here: %w", driver.ErrUnsupported)
	case "fail":
		return nil, errors.New("recorder: out of graph memory")
	}
	g := &recordedGraph{}
	if err := replay(recordingQueue{g: g}); err != nil {
		return nil, err
	}
	if len(g.cmds) != commands {
		return nil, fmt.Errorf("recorder: replay gave %d commands, RecordGraph was told %d", len(g.cmds), commands)
	}
	q.last = g
	return g, nil
}

// recordingQueue adds the launches, fills and copies enqueued on it to a recordedGraph.
type recordingQueue struct {
	driver.Queue // nil: nothing else may be called
	g            *recordedGraph
}

func (r recordingQueue) Launch(k driver.Kernel, rg driver.Range, args []driver.Arg) (driver.Event, error) {
	args = slices.Clone(args)
	r.g.cmds = append(r.g.cmds, func(q driver.Queue) (driver.Event, error) { return q.Launch(k, rg, args) })
	return nil, nil
}

func (r recordingQueue) Fill(dst driver.Buffer, offset int64, pattern []byte, size int64) (driver.Event, error) {
	pattern = slices.Clone(pattern)
	r.g.cmds = append(r.g.cmds, func(q driver.Queue) (driver.Event, error) { return q.Fill(dst, offset, pattern, size) })
	return nil, nil
}

func (r recordingQueue) Copy(dst driver.Buffer, dstOffset int64, src driver.Buffer, srcOffset, size int64) (driver.Event, error) {
	r.g.cmds = append(r.g.cmds, func(q driver.Queue) (driver.Event, error) { return q.Copy(dst, dstOffset, src, srcOffset, size) })
	return nil, nil
}

// recordedGraph runs its commands on the queue it is launched on.
type recordedGraph struct {
	cmds     []func(driver.Queue) (driver.Event, error)
	launches int
}

func (g *recordedGraph) Launch(q driver.Queue) error {
	g.launches++
	for _, cmd := range g.cmds {
		ev, err := cmd(q)
		if err != nil {
			return err
		}
		if ev != nil {
			ev.Close()
		}
	}
	return nil
}

func (g *recordedGraph) Close() error { return nil }

// TestGraphRecorder checks that Capture hands a backend that is a driver.GraphRecorder
// the commands it recorded, launches the backend's graph, keeps its own recording when
// the backend answers ErrUnsupported and fails on any other error.
func TestGraphRecorder(t *testing.T) {
	mode := "record"
	engine.Register("recorder", recorderDriver{Driver: fake.New(), mode: &mode})
	dev, err := engine.Open(t.Context(), "recorder:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.Axpy)
	if err != nil {
		t.Fatal(err)
	}
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	dq, err := q.DriverQueue("a test's query")
	if err != nil {
		t.Fatal(err)
	}
	rq := dq.(*recorderQueue)
	const n = 64
	var bufs [3]*engine.Buffer[float32]
	for i := range bufs {
		if bufs[i], err = engine.NewBuffer[float32](dev, n); err != nil {
			t.Fatal(err)
		}
		defer bufs[i].Close()
	}
	x, y, z := bufs[0], bufs[1], bufs[2]
	if err := x.Fill(q, 0, n, 1); err != nil {
		t.Fatal(err)
	}
	capture := func() (*engine.Graph, error) {
		// y = 0, then y += a*x for a = 1, 2, 3; z = y.
		return q.Capture(func() error {
			if err := y.Fill(q, 0, n, 0); err != nil {
				return err
			}
			for a := float32(1); a <= 3; a++ {
				if err := q.Launch(k, engine.Range1D(n, 64), int32(n), int32(0), a, x, y); err != nil {
					return err
				}
			}
			return z.CopyFrom(q, 0, y, 0, n)
		})
	}
	for _, mode = range []string{"record", "unsupported", "fail"} {
		calls := len(rq.commands)
		rq.last = nil
		g, err := capture()
		if len(rq.commands) != calls+1 || rq.commands[calls] != 5 {
			t.Errorf("%s: RecordGraph calls with their counts: %v, want one more of 5", mode, rq.commands)
		}
		if mode == "fail" {
			if err == nil || g != nil {
				t.Errorf("%s: Capture gave %v, %v; want the backend's error", mode, g, err)
			}
			if err != nil && err.Error() != "engine: record a graph of 5 commands on recorder:0: recorder: out of graph memory" {
				t.Errorf("%s: %v", mode, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if g.Len() != 5 {
			t.Errorf("%s: Len() = %d, want 5", mode, g.Len())
		}
		if err := z.Fill(q, 0, n, -1); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := g.Launch(q); err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
		}
		got := make([]float32, n)
		if err := z.Read(t.Context(), q, 0, got); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != 6 {
				t.Fatalf("%s: z[%d] = %v, want 6", mode, i, v)
			}
		}
		if launched := rq.last != nil && rq.last.launches == 2; launched != (mode == "record") {
			t.Errorf("%s: the backend's graph launched: %t", mode, launched)
		}
		g.Close()
	}
}
