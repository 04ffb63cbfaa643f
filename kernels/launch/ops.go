package launch

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed launch.cl
var source string

// maxGraph is the most launches a graph op captures (each marks a word of its own).
const maxGraph = 1 << 20

// Mode is the way an op launches the empty kernel.
type Mode string

// The modes: Async enqueues Size launches back to back and waits once, RoundTrip launches
// once and waits, Graph launches a graph of Size launches captured in Setup and waits.
const (
	Async     Mode = "async"
	RoundTrip Mode = "roundtrip"
	Graph     Mode = "graph"
)

// Family returns the launch family: its OpenCL C source (launch.cl, the empty kernel) and
// its operations, in the order listings show them: async, roundtrip, graph.
func Family() kernels.Family {
	return kernels.Family{Name: "launch", Source: source, Ops: []kernels.Op{
		launchOp(Async, "n launches a run, then one wait", 1000, 100),
		launchOp(RoundTrip, "ignored: one launch and its wait a run", 1, 1),
		launchOp(Graph, "n launches in the graph, one graph launch and one wait a run", 100, 20),
	}}
}

// OpName returns the name of the op of mode m ("launch/async/uint32").
func OpName(m Mode) string { return "launch/" + string(m) + "/uint32" }

var launchDocs = map[Mode]string{
	Async:     "n empty-kernel launches enqueued back to back, then one wait: host-timed, the time per launch a figure",
	RoundTrip: "one empty-kernel launch and the wait for it: the round trip, host-timed",
	Graph:     "a captured graph of n launches of a kernel that marks its own word, launched as one, then one wait: host-timed, the time per kernel a figure",
}

func launchOp(m Mode, sizeDoc string, def, quick int) kernels.Op {
	name := OpName(m)
	return kernels.Op{
		Name: name, Family: "launch", Type: "uint32", Doc: launchDocs[m],
		SizeDoc: sizeDoc, DefaultSize: def, QuickSize: quick,
		Variants: []kernels.Variant{{
			Name: kernels.PortableName, Doc: "the OpenCL C empty kernel, on every backend (a CUDA graph on CUDA)",
			Dialect: engine.DialectOpenCL,
			Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupLaunch(ctx, q, name, m, p)
			},
		}},
	}
}

// launchInstance launches the empty kernel n times a Run (once for RoundTrip) on a queue
// of its own, and waits for them: Queue.Timed on the caller's queue, which has nothing to
// time, measures the run with the host clock. launches counts the launches since Setup,
// which count[0] must equal (mod 2^32). A Graph's launches mark a word each (marks), so
// that no launch reads what the one before wrote: Verify clears the marks, launches the
// graph once more and checks that every launch marked its word.
type launchInstance struct {
	l        *Launch
	mode     Mode
	n        int // launches a run
	q        *engine.Queue
	count    *engine.Buffer[uint32]
	marks    *engine.Buffer[uint32]
	g        *engine.Graph
	launches int64
}

func setupLaunch(ctx context.Context, q *engine.Queue, name string, m Mode, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	if p.Size > math.MaxInt32 {
		return nil, fmt.Errorf("kernels: %s: size %d exceeds the family's limit of 2^31-1 launches: %w", name, p.Size, engine.ErrInvalidArg)
	}
	dev := q.Device()
	in := &launchInstance{mode: m, n: p.Size}
	if m == RoundTrip {
		in.n = 1
	}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	if in.l, err = NewLaunch(dev); err != nil {
		return nil, err
	}
	if in.q, err = dev.NewQueue(); err != nil {
		return nil, err
	}
	if in.count, err = engine.NewBuffer[uint32](dev, 1); err != nil {
		return nil, err
	}
	if err := in.count.Write(ctx, q, 0, []uint32{0}); err != nil {
		return nil, err
	}
	if m == Graph {
		if p.Size > maxGraph {
			return nil, fmt.Errorf("kernels: %s: a graph of %d launches exceeds the op's limit of %d: %w", name, p.Size, maxGraph, engine.ErrInvalidArg)
		}
		if in.marks, err = engine.NewBuffer[uint32](dev, in.n); err != nil {
			return nil, err
		}
		in.g, err = in.q.Capture(func() error {
			for i := range in.n {
				if err := in.l.Mark(in.q, in.marks, i); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("kernels: %s: capture of %d launches: %w", name, in.n, err)
		}
		if got := in.g.Len(); got != in.n {
			return nil, fmt.Errorf("kernels: %s: the graph holds %d commands, want the %d launches captured: %w", name, got, in.n, engine.ErrInvalidArg)
		}
	}
	return in, nil
}

// Run launches the empty kernel as the op's mode says, on the instance's queue, and waits
// for the launches. q is not used: a launch inside its Timed would be timed on the device.
func (in *launchInstance) Run(ctx context.Context, q *engine.Queue) error {
	if in.mode == Graph {
		if err := in.g.Launch(in.q); err != nil {
			return err
		}
	} else {
		for range in.n {
			if err := in.l.Empty(in.q, in.count); err != nil {
				return err
			}
		}
	}
	in.launches += int64(in.n)
	return in.q.Finish(ctx)
}

// Verify reads the counter back: launch_empty must have run once for each launch since
// Setup. A Graph's marks are cleared, the graph launched once more, and every mark must
// be set.
func (in *launchInstance) Verify(ctx context.Context, q *engine.Queue) error {
	if in.mode == Graph {
		if err := in.marks.Fill(in.q, 0, in.n, 0); err != nil {
			return err
		}
		if err := in.Run(ctx, q); err != nil {
			return err
		}
		marks, err := in.marks.Download(ctx, in.q)
		if err != nil {
			return err
		}
		for i, v := range marks {
			if v != 1 {
				return fmt.Errorf("%w: %s: launch %d of the graph's %d left its mark %d, want 1",
					kernels.ErrVerify, OpName(in.mode), i, in.n, v)
			}
		}
		return nil
	}
	got := make([]uint32, 1)
	if err := in.count.Read(ctx, q, 0, got); err != nil {
		return err
	}
	if want := uint32(in.launches); got[0] != want {
		return fmt.Errorf("%w: %s: the empty kernel counted %d launches of the %d since setup (%d a run)",
			kernels.ErrVerify, OpName(in.mode), got[0], want, in.n)
	}
	return nil
}

// Model is zero: the op's time, a latency, is its figure.
func (in *launchInstance) Model() kernels.Model { return kernels.Model{} }

// Shape gives the launches a run and the work-group launched.
func (in *launchInstance) Shape() string {
	return fmt.Sprintf("launches=%d wg=%d", in.n, in.l.WorkGroup())
}

// Figures returns the median time of a run divided by its launches: per_launch_ns (the
// round trip itself for RoundTrip), per_kernel_ns for a graph.
func (in *launchInstance) Figures(median time.Duration) map[string]float64 {
	if median <= 0 {
		return nil
	}
	name := "per_launch_ns"
	if in.mode == Graph {
		name = "per_kernel_ns"
	}
	return map[string]float64{name: float64(median) / float64(in.n)}
}

// Close releases the graph before what it uses, and closes the queue, which finishes its
// launches, before the counter.
func (in *launchInstance) Close() error {
	return errors.Join(in.g.Close(), in.q.Close(), in.count.Close(), in.marks.Close(), in.l.Close())
}
