package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prism-compute/prism/engine"
)

// peakSource is the FMA-bound kernel that measures a device's floating-point peak, as
// clpeak does: each work-item runs peakChains independent multiply-add chains (independent,
// so a pipelined FMA unit always has work), 4*PEAK_ITERS steps each, and writes their sum,
// so that no chain is dead code. The chains contract towards b/(1-a) (a in (0,1)), so no
// value overflows or becomes subnormal whatever the length. a and b are arguments: the
// compiler cannot fold the chains. Each work-item's result depends only on gid & 255, which
// lets the host check every item against 256 chains it computes itself.
//
// Tunables (-D): ELEM (float or double, with PRISM_FP64 for double), PEAK_ITERS (default
// 512). Launch: 1D, any work-group size; one output per work-item.
const peakSource = `
#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef PEAK_ITERS
#define PEAK_ITERS 512
#endif
#define MAD8 \
    x0 = mad(x0, a, b); x1 = mad(x1, a, b); x2 = mad(x2, a, b); x3 = mad(x3, a, b); \
    x4 = mad(x4, a, b); x5 = mad(x5, a, b); x6 = mad(x6, a, b); x7 = mad(x7, a, b);

__kernel void prism_peak(__global ELEM *out, ELEM a, ELEM b) {
    int gid = (int)get_global_id(0);
    ELEM x0 = (ELEM)2.0f + (ELEM)(gid & 255) * (ELEM)0.0078125f;
    ELEM x1 = x0 + (ELEM)0.25f, x2 = x0 + (ELEM)0.5f, x3 = x0 + (ELEM)0.75f;
    ELEM x4 = x0 + (ELEM)1.0f, x5 = x0 + (ELEM)1.25f, x6 = x0 + (ELEM)1.5f, x7 = x0 + (ELEM)1.75f;
    for (int i = 0; i < PEAK_ITERS; i++) {
        MAD8 MAD8 MAD8 MAD8
    }
    out[gid] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
`

const (
	peakChains = 8
	peakIters  = 512
	peakA      = 0.99 // contraction factor of every chain
	peakB      = 0.01 // fixed point b/(1-a) = 1
	// peakMaxItems caps the work-items of one launch (and the output buffer).
	peakMaxItems = 1 << 24
)

// peakFlopsPerItem counts a multiply-add as two operations.
const peakFlopsPerItem = 2 * peakChains * 4 * peakIters

// Peak is a measured compute ceiling.
type Peak struct {
	GFLOPs float64
	How    string
}

// peakRef returns the output of a work-item with gid&255 == g, computed in float64 from the
// same a and b (rounded to T): the device rounds each step to T, and with |a| < 1 the
// rounding errors stay below about 1/(1-a) units of T's roundoff per chain.
func peakRef(g int, a, b float64) float64 {
	x0 := 2 + float64(g)*0.0078125
	sum := 0.0
	for c := range peakChains {
		x := x0 + 0.25*float64(c)
		for range 4 * peakIters {
			x = x*a + b
		}
		sum += x
	}
	return sum
}

// measurePeak times the peak kernel in T on q's device: it grows the launch until one run
// takes about the target time (so that the device is full, whatever its size), checks every
// item's output against peakRef, then times Count runs and returns the median rate. It
// returns an error wrapping engine.ErrUnsupported for float64 on a device without fp64.
func measurePeak[T float32 | float64](ctx context.Context, cfg Config, q *engine.Queue) (Peak, error) {
	dev := q.Device()
	var z T
	_, fp64 := any(z).(float64)
	opts := []string{fmt.Sprintf("-DPEAK_ITERS=%d", peakIters)}
	eps := 0x1p-24
	if fp64 {
		if !dev.Info().FP64 {
			return Peak{}, fmt.Errorf("bench: %s has no fp64: %w", dev.ID(), engine.ErrUnsupported)
		}
		opts = append(opts, "-DELEM=double", "-DPRISM_FP64")
		eps = 0x1p-53
	}
	prog, err := dev.Build(peakSource, opts...)
	if err != nil {
		return Peak{}, err
	}
	defer prog.Close()
	k, err := prog.Kernel("prism_peak")
	if err != nil {
		return Peak{}, err
	}
	defer k.Close()
	wg := min(256, max(k.MaxWorkGroupSize(), 1), max(dev.Info().MaxWorkGroupSize, 1))
	a, b := T(peakA), T(peakB)
	target := 50 * time.Millisecond
	if cfg.Quick {
		target = 10 * time.Millisecond
	}
	// Start with 4 work-groups per compute unit; grow to the target time.
	items := max(dev.Info().ComputeUnits, 1) * 4 * wg
	var out *engine.Buffer[T]
	defer func() {
		if out != nil {
			out.Close()
		}
	}()
	launch := func(q *engine.Queue) error { return q.Launch(k, engine.Range1D(items, wg), out, a, b) }
	for {
		if out, err = engine.NewBuffer[T](dev, items); err != nil {
			return Peak{}, err
		}
		d, err := q.Timed(ctx, func() error { return launch(q) })
		if err != nil {
			return Peak{}, err
		}
		if d >= target/2 || items >= peakMaxItems {
			break
		}
		grow := 64
		if d > 0 {
			grow = min(int(math.Ceil(float64(target)/float64(d))), 64)
		}
		next := min(engine.RoundUp(items*max(grow, 2), wg), peakMaxItems/wg*wg)
		if next <= items {
			break
		}
		items = next
		out.Close()
	}
	// Verify the last launch before timing.
	got, err := out.Download(q)
	if err != nil {
		return Peak{}, err
	}
	var want [256]float64
	for g := range want {
		want[g] = peakRef(g, float64(a), float64(b))
	}
	tol := 4 * peakChains * eps / (1 - peakA) * 4 // chains, roundoff amplification, slack
	for i, v := range got {
		if w := want[i&255]; !(math.Abs(float64(v)-w) <= tol*w) {
			return Peak{}, fmt.Errorf("%w: peak kernel item %d = %v, want %v (tolerance %.2g relative)", ErrVerify, i, v, w, tol)
		}
	}
	samples, err := timeRuns(ctx, cfg, q, launch)
	if err != nil {
		return Peak{}, err
	}
	med := Summarize(samples).Median.Seconds()
	if med <= 0 {
		return Peak{}, fmt.Errorf("bench: peak kernel timed at 0 s")
	}
	return Peak{
		GFLOPs: float64(items) * peakFlopsPerItem / med / 1e9,
		How:    fmt.Sprintf("%d independent mad chains x %d steps per work-item, %d work-items in groups of %d", peakChains, 4*peakIters, items, wg),
	}, nil
}
