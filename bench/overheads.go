package bench

import (
	"context"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/ceiling"
	"github.com/prism-compute/prism/kernels/suite"
)

// Overheads are the fixed costs of a device: compiling the stream family, and launching an
// empty kernel.
type Overheads struct {
	// FirstBuild is the host time of the first compile of the stream family's source (with
	// its default tunables) in this process (cold, unless the backend's or driver's on-disk
	// cache already holds it); SecondBuild the same compile again (cached where the backend
	// caches).
	FirstBuild  time.Duration `json:"first_build_ns"`
	SecondBuild time.Duration `json:"second_build_ns"`
	// LaunchAsync is the host time per launch of an empty kernel when 1000 are enqueued back to
	// back (then one Finish); LaunchSync the median host time of one launch followed by Finish.
	LaunchAsync time.Duration `json:"launch_async_ns"`
	LaunchSync  time.Duration `json:"launch_sync_ns"`
	// Absent says why the overheads are missing (their measurement failed).
	Absent string `json:"absent,omitempty"`
}

// buildFamily is the family whose compile Overheads times.
const buildFamily = "stream"

func measureOverheads(ctx context.Context, q *engine.Queue) (Overheads, error) {
	var o Overheads
	dev := q.Device()
	f, err := suite.Family(buildFamily)
	if err != nil {
		return o, err
	}
	for _, d := range []*time.Duration{&o.FirstBuild, &o.SecondBuild} {
		t0 := time.Now()
		prog, err := dev.Build(f.Source)
		if err != nil {
			return o, err
		}
		*d = time.Since(t0)
		prog.Close()
	}
	e, err := ceiling.NewEmpty(dev)
	if err != nil {
		return o, err
	}
	defer e.Close()
	launch := func() error { return e.Launch(q) }
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
