package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prism-compute/prism/engine"
)

// peakSource is the FMA-bound kernel that measures a device's floating-point peak, as
// clpeak does: each work-item runs 8 independent multiply-add chains (independent, so that
// a pipelined FMA unit always has work), 4*PEAK_ITERS steps each, on scalars or on vectors
// of PEAK_VEC lanes (CPUs reach their SIMD width only with explicit vectors), and writes
// their sum, so that no chain is dead code. The chains contract towards b/(1-a) (a in
// (0,1)), so no value overflows or becomes subnormal whatever the length; a, b and the lane
// offsets are arguments, so the compiler cannot fold the chains. Each output element depends
// only on gid & 255 and its lane, which lets the host check every element against the
// 256*PEAK_VEC chains it computes itself.
//
// Arguments: out (PEAK_VEC elements per work-item), lanes (PEAK_VEC start offsets), a, b.
// Tunables (-D): ELEM (float; double with PRISM_FP64), PEAK_ITERS (default 512), PEAK_VEC
// (1, 2, 4, 8 or 16; default 1; above 1 only on OpenCL: CUDA's vector types have no
// operators). Launch: 1D, any work-group size.
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
#ifndef PEAK_VEC
#define PEAK_VEC 1
#endif
#if PEAK_VEC > 1
#define PEAK_CAT_(t, n) t##n
#define PEAK_CAT(t, n) PEAK_CAT_(t, n)
#define VT PEAK_CAT(ELEM, PEAK_VEC)
#else
#define VT ELEM
#endif
#define MAD8 \
    x0 = mad(x0, a, b); x1 = mad(x1, a, b); x2 = mad(x2, a, b); x3 = mad(x3, a, b); \
    x4 = mad(x4, a, b); x5 = mad(x5, a, b); x6 = mad(x6, a, b); x7 = mad(x7, a, b);

__kernel void prism_peak(__global ELEM *out, __global const ELEM *lanes, ELEM a_, ELEM b_) {
    int gid = (int)get_global_id(0);
    ELEM start = (ELEM)2.0f + (ELEM)(gid & 255) * (ELEM)0.0078125f;
#if PEAK_VEC > 1
    VT a = (VT)(a_), b = (VT)(b_);
    VT x0 = PEAK_CAT(vload, PEAK_VEC)(0, lanes) + (VT)(start);
#else
    VT a = a_, b = b_;
    VT x0 = lanes[0] + start;
#endif
    VT x1 = x0 + (ELEM)0.25f, x2 = x0 + (ELEM)0.5f, x3 = x0 + (ELEM)0.75f;
    VT x4 = x0 + (ELEM)1.0f, x5 = x0 + (ELEM)1.25f, x6 = x0 + (ELEM)1.5f, x7 = x0 + (ELEM)1.75f;
    for (int i = 0; i < PEAK_ITERS; i++) {
        MAD8 MAD8 MAD8 MAD8
    }
    VT s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
#if PEAK_VEC > 1
    PEAK_CAT(vstore, PEAK_VEC)(s, gid, out);
#else
    out[gid] = s;
#endif
}
`

const (
	peakChains = 8
	peakIters  = 512
	peakSteps  = 4 * peakIters // multiply-adds per chain
	peakA      = 0.99          // contraction factor of every chain
	peakB      = 0.01          // fixed point b/(1-a) = 1
	peakLane   = 0.015625      // start offset between lanes
	// peakMaxElems caps the output elements of one launch.
	peakMaxElems = 1 << 24
)

// Peak is a measured compute ceiling.
type Peak struct {
	GFLOPs float64
	How    string
}

// peakRef returns the output element of lane l of a work-item with gid&255 == g, computed
// in float64 from the same a and b (rounded to the device's type): the device rounds each
// step, and with |a| < 1 the rounding errors stay below about 1/(1-a) units of roundoff per
// chain.
func peakRef(g, l int, a, b float64) float64 {
	x0 := 2 + float64(g)*0.0078125 + float64(l)*peakLane
	sum := 0.0
	for c := range peakChains {
		x := x0 + 0.25*float64(c)
		for range peakSteps {
			x = x*a + b
		}
		sum += x
	}
	return sum
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

// measurePeak returns the best FMA rate in T over the vector widths of q's device's
// backend. It returns an error wrapping engine.ErrUnsupported for float64 on a device
// without fp64.
func measurePeak[T float32 | float64](ctx context.Context, cfg Config, q *engine.Queue) (Peak, error) {
	var best Peak
	for _, vec := range peakWidths(q.Device().Backend()) {
		p, err := measurePeakWidth[T](ctx, cfg, q, vec)
		if err != nil {
			return Peak{}, err
		}
		if p.GFLOPs > best.GFLOPs {
			best = p
		}
	}
	return best, nil
}

// measurePeakWidth times the peak kernel in T with vec lanes: it grows the launch until one
// run takes about a target time (so that the device is full, whatever its size), checks
// every output element against peakRef, then times Count runs and returns the median rate.
func measurePeakWidth[T float32 | float64](ctx context.Context, cfg Config, q *engine.Queue, vec int) (Peak, error) {
	dev := q.Device()
	var z T
	_, fp64 := any(z).(float64)
	opts := []string{fmt.Sprintf("-DPEAK_ITERS=%d", peakIters), fmt.Sprintf("-DPEAK_VEC=%d", vec)}
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
	laneInit := make([]T, vec)
	for l := range laneInit {
		laneInit[l] = T(float64(l) * peakLane)
	}
	lanes, err := engine.Upload(q, laneInit)
	if err != nil {
		return Peak{}, err
	}
	defer lanes.Close()
	wg := min(256, max(k.MaxWorkGroupSize(), 1), max(dev.Info().MaxWorkGroupSize, 1))
	a, b := T(peakA), T(peakB)
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
	launch := func(q *engine.Queue) error { return q.Launch(k, engine.Range1D(items, wg), out, lanes, a, b) }
	for {
		if out, err = engine.NewBuffer[T](dev, items*vec); err != nil {
			return Peak{}, err
		}
		d, err := q.Timed(ctx, func() error { return launch(q) })
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
	got, err := out.Download(q)
	if err != nil {
		return Peak{}, err
	}
	want := make([]float64, 256*vec)
	for g := range 256 {
		for l := range vec {
			want[g*vec+l] = peakRef(g, l, float64(a), float64(b))
		}
	}
	tol := 16 * peakChains * eps / (1 - peakA) // chains, roundoff amplification, slack
	for i, v := range got {
		if w := want[((i/vec)&255)*vec+i%vec]; !(math.Abs(float64(v)-w) <= tol*w) {
			return Peak{}, fmt.Errorf("%w: peak kernel element %d = %v, want %v (tolerance %.2g relative)", ErrVerify, i, v, w, tol)
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
	flops := float64(items) * float64(vec) * 2 * peakChains * peakSteps
	return Peak{
		GFLOPs: flops / med / 1e9,
		How: fmt.Sprintf("%d independent mad chains x %d steps on %d lanes per work-item, %d work-items in groups of %d",
			peakChains, peakSteps, vec, items, wg),
	}, nil
}
