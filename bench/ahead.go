package bench

import (
	"context"
	"sync"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Builds ahead. On a device whose compiler is slow (PoCL: 0.2 to 1 s a program, most of it
// at the first launch, and seconds for a vendor library's), a fitted run spends most of
// its time compiling while the machine's other cores wait. While a case is set up and
// verified, which nothing times, buildAhead sets the device's next op up and runs it once
// on a queue of its own, with its vendor routine, so that the driver's program cache holds
// its kernels when its turn comes; before any timed run, the run waits for that work to
// finish (Config.beforeTiming), so that no measurement shares the machine with it.

// slowBuild is the first build time (Overheads.FirstBuild) from which a device's builds are
// done ahead; tests set it to 0.
var slowBuild = 100 * time.Millisecond

// buildAhead runs at most one build ahead at a time.
type buildAhead struct {
	cfg    Config
	runs   []*deviceRun
	fit    *fitted
	queues []*engine.Queue // per run, opened on first use
	wg     sync.WaitGroup
	done   map[[2]string]bool // device ID, op name: built ahead already
}

func newBuildAhead(cfg Config, runs []*deviceRun, fit *fitted) *buildAhead {
	cfg.Progress, cfg.beforeTiming = nil, nil
	return &buildAhead{cfg: cfg, runs: runs, fit: fit, queues: make([]*engine.Queue, len(runs)), done: map[[2]string]bool{}}
}

// start builds op ahead on runs[i]'s device, in the background, when that device compiles
// slowly; it first waits for the build ahead under way.
func (a *buildAhead) start(ctx context.Context, i int, op kernels.Op) {
	r := a.runs[i]
	key := [2]string{r.dev.ID(), op.Name}
	if r.q == nil || r.dr.Overheads.FirstBuild < slowBuild || a.done[key] || a.cfg.caseLeftOut(r.dev.Info().Kind, op) != "" {
		return
	}
	a.wait()
	a.done[key] = true
	if a.queues[i] == nil {
		q, err := r.dev.NewQueue()
		if err != nil {
			return
		}
		a.queues[i] = q
	}
	q := a.queues[i]
	size, _ := a.fit.start(r.dev.ID(), op, StartSize(op, r.dev.Info().Kind, a.cfg.Quick))
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for _, variant := range a.cfg.VariantsFor(op) {
			a.build(ctx, q, op, size, variant)
		}
		if a.cfg.Vendor && a.cfg.vendorLeftOut(q.Device().Info().Kind, op) == "" {
			for _, v := range op.Variants {
				if v.Vendor && v.Fits(q.Device()) == nil {
					a.build(ctx, q, op, size, v.Name)
					break
				}
			}
		}
	}()
}

// build sets op up at size with the variant named and runs it once; errors are left to
// the case itself, which meets them again.
func (a *buildAhead) build(ctx context.Context, q *engine.Queue, op kernels.Op, size int, variant string) {
	if ctx.Err() != nil || checkFootprint(q.Device(), op, size) != nil {
		return
	}
	p := kernels.Params{Size: size, Seed: a.cfg.Seed, Rotate: true, Portable: a.cfg.Portable, Variant: variant, Tunables: a.cfg.Tunables}
	v, err := op.Pick(q.Device(), p)
	if err != nil {
		return
	}
	p.Variant = v.Name
	in, err := v.Setup(ctx, q, p)
	if err != nil {
		return
	}
	defer in.Close()
	if in.Run(ctx, q) == nil {
		_ = q.Finish(ctx)
	}
}

// wait returns when the build ahead under way, if any, has finished.
func (a *buildAhead) wait() { a.wg.Wait() }

// close waits for the build ahead and closes its queues.
func (a *buildAhead) close() {
	a.wait()
	for _, q := range a.queues {
		if q != nil {
			q.Close()
		}
	}
}
