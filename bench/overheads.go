package bench

import (
	"context"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/stream"
)

// Overheads are the fixed costs of a device: compiling the stream family, and launching an
// empty kernel.
type Overheads struct {
	// FirstBuild is the host time of the first compile of the stream family in this process
	// (cold, unless the backend's or driver's on-disk cache already holds it); SecondBuild the
	// same compile again (cached where the backend caches).
	FirstBuild  time.Duration `json:"first_build_ns"`
	SecondBuild time.Duration `json:"second_build_ns"`
	// LaunchAsync is the host time per launch of an empty kernel when 1000 are enqueued back to
	// back (then one Finish); LaunchSync the median host time of one launch followed by Finish.
	LaunchAsync time.Duration `json:"launch_async_ns"`
	LaunchSync  time.Duration `json:"launch_sync_ns"`
}

const emptySource = `__kernel void prism_empty(__global int *x, int n) { if ((int)get_global_id(0) < n) x[0] = n; }`

func measureOverheads(ctx context.Context, q *engine.Queue) (Overheads, error) {
	var o Overheads
	dev := q.Device()
	for _, d := range []*time.Duration{&o.FirstBuild, &o.SecondBuild} {
		t0 := time.Now()
		s, err := stream.NewStream[float32](dev)
		if err != nil {
			return o, err
		}
		*d = time.Since(t0)
		s.Close()
	}
	prog, err := dev.Build(emptySource)
	if err != nil {
		return o, err
	}
	defer prog.Close()
	k, err := prog.Kernel("prism_empty")
	if err != nil {
		return o, err
	}
	defer k.Close()
	x, err := engine.NewBuffer[int32](dev, 1)
	if err != nil {
		return o, err
	}
	defer x.Close()
	launch := func() error { return q.Launch(k, engine.Range1D(32, 32), x, int32(0)) }
	for range 20 { // warm-up
		if err := launch(); err != nil {
			return o, err
		}
	}
	if err := q.Finish(ctx); err != nil {
		return o, err
	}
	const n = 1000
	t0 := time.Now()
	for range n {
		if err := launch(); err != nil {
			return o, err
		}
	}
	if err := q.Finish(ctx); err != nil {
		return o, err
	}
	o.LaunchAsync = time.Since(t0) / n
	sync := make([]time.Duration, 0, 200)
	for range cap(sync) {
		t0 := time.Now()
		if err := launch(); err != nil {
			return o, err
		}
		if err := q.Finish(ctx); err != nil {
			return o, err
		}
		sync = append(sync, time.Since(t0))
	}
	o.LaunchSync = Summarize(sync).Median
	return o, nil
}
