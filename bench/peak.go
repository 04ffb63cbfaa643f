package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/ceiling"
)

// peakMaxElems caps the output elements of one launch of the peak kernel.
const peakMaxElems = 1 << 24

// Peak is a measured compute ceiling.
type Peak struct {
	GFLOPs float64
	How    string
}

// peakWidths are the vector widths tried on a backend: on OpenCL scalars and 8-lane vectors
// (a CPU reaches its SIMD width only with explicit vectors; GPUs run either at the same
// rate), on CUDA scalars only.
func peakWidths(backend string) []int {
	if backend == "opencl" {
		return []int{1, 8}
	}
	return []int{1}
}

// measurePeak returns the best FMA rate in T of the peak kernel (package kernels/ceiling)
// over the vector widths of q's device's backend. It returns an error wrapping
// engine.ErrUnsupported for float64 on a device without fp64. When no width has valid
// device times, the Peak is 0 and its How is InvalidPrefix followed by why.
func measurePeak[T float32 | float64](ctx context.Context, cfg Config, q *engine.Queue) (Peak, error) {
	var best Peak
	var invalid []string
	for _, vec := range peakWidths(q.Device().Backend()) {
		p, err := measurePeakWidth[T](ctx, cfg, q, vec)
		if err != nil {
			return Peak{}, err
		}
		if p.GFLOPs == 0 && strings.HasPrefix(p.How, InvalidPrefix) {
			invalid = append(invalid, fmt.Sprintf("%d lanes: %s", vec, strings.TrimPrefix(p.How, InvalidPrefix)))
		}
		if p.GFLOPs > best.GFLOPs {
			best = p
		}
	}
	if best.GFLOPs == 0 && len(invalid) > 0 {
		best.How = InvalidPrefix + strings.Join(invalid, "; ")
	}
	return best, nil
}

// measurePeakWidth times the peak kernel in T with vec lanes: it grows the launch until one
// run takes about a target time (so that the device is full, whatever its size), checks
// every output element (ceiling.Peak.Check), then times Count runs and returns the median
// rate; or a Peak of 0 whose How says why when a device time is not positive.
func measurePeakWidth[T float32 | float64](ctx context.Context, cfg Config, q *engine.Queue, vec int) (Peak, error) {
	dev := q.Device()
	p, err := ceiling.NewPeak[T](ctx, q, vec)
	if err != nil {
		return Peak{}, err
	}
	defer p.Close()
	wg := min(256, max(p.MaxWorkGroupSize(), 1), max(dev.Info().MaxWorkGroupSize, 1))
	target := 50 * time.Millisecond
	if cfg.Quick {
		target = 10 * time.Millisecond
	}
	// Start with 4 work-groups per compute unit; grow to the target time.
	maxItems := max(peakMaxElems/vec/wg*wg, wg)
	items := min(max(dev.Info().ComputeUnits, 1)*4*wg, maxItems)
	var out *engine.Buffer[T]
	defer func() {
		if out != nil {
			out.Close()
		}
	}()
	launch := func(_ context.Context, q *engine.Queue) error { return p.Run(q, out, items, wg) }
	for {
		if out, err = engine.NewBuffer[T](dev, items*vec); err != nil {
			return Peak{}, err
		}
		d, err := q.Timed(ctx, func() error { return launch(ctx, q) })
		if err != nil {
			return Peak{}, err
		}
		next := items
		switch {
		case d <= 0:
			next = items * 64
		case d < target/2:
			next = items * min(int(math.Ceil(float64(target)/float64(d))), 64)
		}
		next = min(engine.RoundUp(next, wg), maxItems)
		if next <= items {
			break
		}
		items = next
		out.Close()
	}
	// Verify the last launch before timing.
	got, err := out.Download(ctx, q)
	if err != nil {
		return Peak{}, err
	}
	if err := p.Check(got); err != nil {
		return Peak{}, err
	}
	samples, err := timeRuns(ctx, cfg, q, launch)
	if err != nil {
		return Peak{}, err
	}
	if why := timingInvalid(samples); why != "" {
		return Peak{How: why}, nil
	}
	med := Summarize(samples).Median.Seconds()
	gflops := p.Flops(items) / med / 1e9
	if !finite(gflops) {
		return Peak{How: fmt.Sprintf("%s%v FLOPs over %v s is no rate", InvalidPrefix, p.Flops(items), med)}, nil
	}
	return Peak{
		GFLOPs: gflops,
		How: fmt.Sprintf("%d independent mad chains x %d steps on %d lanes per work-item, %d work-items in groups of %d",
			ceiling.PeakChains, ceiling.PeakSteps, vec, items, wg),
	}, nil
}
