package overlap

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed overlap.cl
var source string

// Family returns the overlap family: its OpenCL C source (overlap.cl) and its operations,
// in the order listings show them: the pipeline serialized on one queue, then on 2, 3 and
// 4 queues.
func Family() kernels.Family {
	var ops []kernels.Op
	for k := 1; k <= MaxQueues; k++ {
		ops = append(ops, overlapOp(k))
	}
	return kernels.Family{Name: "overlap", Source: source, Ops: ops}
}

// OpName returns the name within the family of the pipeline on k queues: "serial" for one,
// else "q2", "q3", ...
func OpName(k int) string {
	if k == 1 {
		return "serial"
	}
	return fmt.Sprintf("q%d", k)
}

func overlapOp(k int) kernels.Op {
	name := "overlap/" + OpName(k) + "/float32"
	doc := fmt.Sprintf("%d chunks copied in (pinned), computed (%d multiply-adds an element), copied out, round-robin on %d queues; figures: the copy time hidden", Chunks, Iters, k)
	if k == 1 {
		doc = fmt.Sprintf("%d chunks copied in (pinned), computed (%d multiply-adds an element), copied out, all on one queue: nothing overlaps", Chunks, Iters)
	}
	return kernels.Op{
		Name: name, Family: "overlap", Type: "float32", Doc: doc,
		SizeDoc: fmt.Sprintf("n floats in %d chunks (the last one shorter where %d does not divide n)", Chunks, Chunks),
		// 2^28 floats: a GiB each way. Quick: 64 KiB, which the kernel's 2048 steps an
		// element make about 40 ms a run on PoCL on two cores (Setup times 8 such runs):
		// PoCL runs each element's chain of dependent multiply-adds on a scalar unit.
		DefaultSize: 1 << 28, QuickSize: 1 << 14,
		Variants: kernels.Portable(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			if err := kernels.CheckSize(name, p); err != nil {
				return nil, err
			}
			return newPipeline(ctx, q, name, p.Size, k, Chunks, Iters, p.Seed)
		}),
	}
}

// sentinel is the NaN every output element holds until the pipeline writes it, and the
// guard bands after the data: a payload no computation produces.
var sentinel = math.Float32frombits(0x7fc0dead)

// guard is the number of sentinel floats after the n of the device buffer and of the host
// output, which no copy or kernel may touch.
const guard = 64

// The stages of the pipeline a run enqueues for each chunk.
type stage int

const (
	stageIn stage = 1 << iota
	stageCompute
	stageOut
	stageAll = stageIn | stageCompute | stageOut
)

// stageTimes are the host times of the pipeline on one queue, measured by Setup (the
// median of calibrationRuns each): whole, and each stage alone over every chunk.
type stageTimes struct {
	serial, copyIn, compute, copyOut time.Duration
}

// calibrationRuns is how many times Setup times the serialized pipeline and each stage.
const calibrationRuns = 3

// pipeline streams n floats from pinned host memory through the device and back, in chunks
// of at most chunk elements, chunk c enqueued on queue c mod len(queues): its copy in
// (WriteAsync), the kernel in place, its copy out (ReadAsync), in order on that queue, so
// that queues overlap one chunk's copies with another's computation.
//
// The queues are the instance's own, made in Setup. The queue Run is given (the one
// Queue.Timed times it on) only joins them: it waits on the device for an event recorded
// at the end of each (Queue.Wait, which also submits their commands on OpenCL, where a
// command may not start before its queue is flushed), then Run finishes it. Nothing with
// a device event is enqueued on it, so Queue.Timed measures the host time from the first
// copy enqueued to the last completed: the pipeline's wall time, whatever the queues ran
// in parallel. (A sum of the commands' device times would count overlapped ones twice.)
type pipeline struct {
	o      *Overlap
	what   string // "overlap q2", for errors
	queues []*engine.Queue
	n      int
	chunk  int // elements a chunk, the last one shorter
	chunks int
	iters  int
	seed   uint64
	in     *engine.HostBuffer[float32] // n inputs
	out    *engine.HostBuffer[float32] // n outputs, then guard sentinels
	x      *engine.Buffer[float32]     // n elements computed in place, then guard sentinels
	stages stageTimes
	// hostMemory marks a CPU device: its copies share the cores with the computation, so
	// no share of them can be hidden (Inapplicable).
	hostMemory bool
	recFail    bool // the backend records no events between commands: queues are finished in turn
}

// newPipeline sets a pipeline up on q's device: k queues, n random inputs in [-1, 1) from
// seed in pinned memory, the outputs set to the sentinel; then it times the pipeline on one
// queue, and each stage alone, for Figures.
func newPipeline(ctx context.Context, q *engine.Queue, name string, n, k, chunks, iters int, seed uint64) (_ *pipeline, err error) {
	if n > math.MaxInt32-guard {
		return nil, fmt.Errorf("kernels: %s: size %d exceeds the family's limit of 2^31-1 elements with the guard band: %w", name, n, engine.ErrInvalidArg)
	}
	if k < 1 || chunks < 1 || iters < 0 {
		return nil, fmt.Errorf("kernels: %s: %d queues, %d chunks, %d steps; want at least 1, 1 and 0: %w", name, k, chunks, iters, engine.ErrInvalidArg)
	}
	dev := q.Device()
	chunk := (n + chunks - 1) / chunks
	p := &pipeline{what: "overlap " + OpName(k), n: n, chunk: chunk, chunks: (n + chunk - 1) / chunk, iters: iters, seed: seed,
		hostMemory: dev.Info().Kind == engine.KindCPU}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if p.o, err = NewOverlap(dev); err != nil {
		return nil, err
	}
	for range k {
		pq, err := dev.NewQueue()
		if err != nil {
			return nil, err
		}
		p.queues = append(p.queues, pq)
	}
	if p.in, err = engine.NewHostBuffer[float32](dev, n); err != nil {
		return nil, err
	}
	kernels.FillRand(kernels.NewRand(seed, 0x6f766c70), p.in.Slice(), -1, 1) // "ovlp"
	if p.out, err = engine.NewHostBuffer[float32](dev, n+guard); err != nil {
		return nil, err
	}
	if p.x, err = engine.NewBuffer[float32](dev, n+guard); err != nil {
		return nil, err
	}
	g := make([]float32, guard)
	for i := range g {
		g[i] = sentinel
	}
	if err := p.x.Write(ctx, q, n, g); err != nil { // the guard band, which Verify reads back
		return nil, err
	}
	if err := p.calibrate(ctx, q); err != nil {
		return nil, err
	}
	// The calibration left the results in out: set it back, so that a Run that writes
	// nothing fails Verify.
	out := p.out.Slice()
	for i := range out {
		out[i] = sentinel
	}
	return p, nil
}

// calibrate measures the stage times on the first queue, joined by q.
func (p *pipeline) calibrate(ctx context.Context, q *engine.Queue) error {
	one := p.queues[:1]
	for _, c := range []struct {
		st  stage
		dst *time.Duration
	}{{stageIn, &p.stages.copyIn}, {stageCompute, &p.stages.compute}, {stageOut, &p.stages.copyOut}, {stageAll, &p.stages.serial}} {
		var times []time.Duration
		for range calibrationRuns {
			start := time.Now()
			if err := p.run(ctx, q, one, c.st); err != nil {
				return err
			}
			times = append(times, time.Since(start))
		}
		slices.Sort(times)
		*c.dst = times[len(times)/2]
	}
	return nil
}

// Run streams the n floats through the pipeline once and returns when they are all back
// in host memory (see pipeline).
func (p *pipeline) Run(ctx context.Context, q *engine.Queue) error {
	return p.run(ctx, q, p.queues, stageAll)
}

// run enqueues the stages st of every chunk round-robin on queues, then joins them on q
// and waits for them all.
func (p *pipeline) run(ctx context.Context, q *engine.Queue, queues []*engine.Queue, st stage) error {
	for c := range p.chunks {
		pq := queues[c%len(queues)]
		off := c * p.chunk
		m := min(p.chunk, p.n-off)
		if st&stageIn != 0 {
			ev, err := p.x.WriteAsync(pq, off, p.in, off, m)
			if err != nil {
				return err
			}
			ev.Close() // the host buffer keeps the copy until it completes
		}
		if st&stageCompute != 0 {
			if err := p.o.Compute(pq, p.x, off, m, p.iters, A); err != nil {
				return err
			}
		}
		if st&stageOut != 0 {
			ev, err := p.x.ReadAsync(pq, off, p.out, off, m)
			if err != nil {
				return err
			}
			ev.Close()
		}
	}
	return p.join(ctx, q, queues[:min(len(queues), p.chunks)])
}

// join waits until every command enqueued on queues has completed: on the device, through
// an event recorded at the end of each that q waits for (which submits the queues'
// commands together on OpenCL), then on the host for q; the recorded events, waited for
// once q is done, tell the memory pool that the queues' commands have completed. Where
// the backend records no events, the queues are finished one after the other.
func (p *pipeline) join(ctx context.Context, q *engine.Queue, queues []*engine.Queue) error {
	if !p.recFail {
		var evs []*engine.Event
		defer func() {
			for _, e := range evs {
				e.Close()
			}
		}()
		for _, pq := range queues {
			e, err := pq.Record()
			if errors.Is(err, engine.ErrUnsupported) && len(evs) == 0 {
				p.recFail = true
				break
			}
			if err != nil {
				return err
			}
			evs = append(evs, e)
		}
		if !p.recFail {
			if err := q.Wait(ctx, evs...); err != nil {
				return err
			}
			if err := q.Finish(ctx); err != nil {
				return err
			}
			for _, e := range evs {
				if err := e.Wait(ctx); err != nil {
					return err
				}
			}
			return nil
		}
	}
	for _, pq := range queues {
		if err := pq.Finish(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Verify compares the outputs of the last Run with the float64 reference, within
// Tolerance: every element up to 2^14 of them, else the first and last element of every
// chunk and 4096 more drawn from the seed; and checks the guard bands after the outputs in
// host memory and after the data on the device.
func (p *pipeline) Verify(ctx context.Context, q *engine.Queue) error {
	out, in := p.out.Slice(), p.in.Slice()
	for j, v := range out[p.n:] {
		if math.Float32bits(v) != math.Float32bits(sentinel) {
			return fmt.Errorf("%w: %s: guard element %d after the %d outputs in host memory was overwritten with %v", kernels.ErrVerify, p.what, j, p.n, v)
		}
	}
	g := make([]float32, guard)
	if err := p.x.Read(ctx, q, p.n, g); err != nil {
		return err
	}
	for j, v := range g {
		if math.Float32bits(v) != math.Float32bits(sentinel) {
			return fmt.Errorf("%w: %s: guard element %d after the %d elements on the device was overwritten with %v", kernels.ErrVerify, p.what, j, p.n, v)
		}
	}
	idx := kernels.VerifyIndices(p.n, p.n <= 1<<14, p.seed)
	for c := range p.chunks {
		idx = append(idx, c*p.chunk, min((c+1)*p.chunk, p.n)-1)
	}
	for _, i := range idx {
		v := float64(in[i])
		want, tol := Ref(v, p.iters, A), Tolerance(v, A)
		if d := math.Abs(float64(out[i]) - want); !(d <= tol) {
			return fmt.Errorf("%w: %s: element %d (chunk %d) = %v, want %v (|diff| %.3g > tolerance %.3g)", kernels.ErrVerify, p.what, i, i/p.chunk, out[i], want, d, tol)
		}
	}
	return nil
}

func (p *pipeline) Model() kernels.Model { return OverlapModel(p.n, p.iters) }

func (p *pipeline) Shape() string {
	return fmt.Sprintf("n=%d chunks=%d queues=%d", p.n, p.chunks, len(p.queues))
}

// Figures returns the stage times Setup measured on one queue and, against the median
// time of the runs timed: hidden_fraction, the share of the copy time the pipeline hid,
// (serial - median) / (copy in + copy out) (about 0 for overlap/serial, about 1 when every
// copy runs under another chunk's computation or the other direction's copies), capped at
// 1: a pipeline faster than the serial one by more than its copy time also ran
// computations side by side (a device with room for several at once, such as a CPU's
// cores, at small sizes), which the figure does not count; and speedup, serial / median.
func (p *pipeline) Figures(median time.Duration) map[string]float64 {
	s := p.stages
	f := map[string]float64{
		"serial_ns":   float64(s.serial),
		"copy_in_ns":  float64(s.copyIn),
		"compute_ns":  float64(s.compute),
		"copy_out_ns": float64(s.copyOut),
	}
	if t := s.copyIn + s.copyOut; t > 0 && !p.hostMemory {
		f["hidden_fraction"] = min(float64(s.serial-median)/float64(t), 1)
	}
	if median > 0 {
		f["speedup"] = float64(s.serial) / float64(median)
	}
	return f
}

// Inapplicable says, on a CPU device, that hidden_fraction means nothing there.
func (p *pipeline) Inapplicable() map[string]string {
	if !p.hostMemory {
		return nil
	}
	return map[string]string{"hidden_fraction": "a CPU device's copies are memory copies on the cores that compute: there is no copy engine to hide them under"}
}

// Close closes the queues first, which finishes their commands, then the memory.
func (p *pipeline) Close() error {
	var errs []error
	for _, pq := range p.queues {
		errs = append(errs, pq.Close())
	}
	p.queues = nil
	return errors.Join(append(errs, p.x.Close(), p.out.Close(), p.in.Close(), p.o.Close())...)
}
