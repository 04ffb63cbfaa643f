package bench

import (
	"context"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
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
	// back (then one Finish); LaunchSync the median host time of one launch followed by Finish
	// (of 200). They are runs of the launch family's ops, launch/async/uint32 and
	// launch/roundtrip/uint32 (kernels/launch).
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
		prog, err := dev.BuildUncached(engine.Source{Text: f.Source})
		if err != nil {
			return o, err
		}
		*d = time.Since(t0)
		prog.Close()
	}
	// The launch family's ops, run as RunCase would run them: the header's figures are
	// theirs. A run launches on a queue of the instance's own and waits for its launches.
	async, err := launchRuns(ctx, q, "launch/async/uint32", launchBatch, 1)
	if err != nil {
		return o, err
	}
	o.LaunchAsync = async[0] / launchBatch
	sync, err := launchRuns(ctx, q, "launch/roundtrip/uint32", 1, 200)
	if err != nil {
		return o, err
	}
	o.LaunchSync = Summarize(sync).Median
	return o, nil
}

// launchBatch is the number of launches back to back that Overheads.LaunchAsync divides.
const launchBatch = 1000

// launchRuns sets up the launch family's op name at size on q's device, runs it untimed
// (20 launches or one run, whichever is more) and verifies the launches, then returns the
// host time of each of runs more.
func launchRuns(ctx context.Context, q *engine.Queue, name string, size, runs int) ([]time.Duration, error) {
	op, err := suite.Lookup(name)
	if err != nil {
		return nil, err
	}
	in, err := op.Setup(ctx, q, kernels.Params{Size: size})
	if err != nil {
		return nil, err
	}
	defer in.Close()
	for range max(1, 20/size) { // warm-up
		if err := in.Run(ctx, q); err != nil {
			return nil, err
		}
	}
	if err := in.Verify(ctx, q); err != nil {
		return nil, err
	}
	out := make([]time.Duration, 0, runs)
	for range runs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		if err := in.Run(ctx, q); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}
