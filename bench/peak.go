package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/ceiling"
)

// peakMaxElems caps the output elements of one launch of a peak kernel.
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

// rateKernel is a peak kernel as measureRate times it: its launches have n units
// (work-items, or blocks), n a multiple of unit, from first up to most.
type rateKernel struct {
	unit, first, most int
	// alloc readies the output of launches of n units (releasing the previous one); run
	// launches n units on q; check verifies the output of the last launch of n units.
	alloc func(n int) error
	run   func(q *engine.Queue, n int) error
	check func(ctx context.Context, q *engine.Queue, n int) error
	// flops returns the floating-point operations of a launch of n units.
	flops func(n int) float64
}

// peakTarget returns the device time measureRate grows a launch to: long enough for the
// device to be full whatever its size, short enough to keep the ceilings' share of a run
// small.
func peakTarget(cfg Config) time.Duration {
	if cfg.Quick {
		return 10 * time.Millisecond
	}
	return 50 * time.Millisecond
}

// measureRate grows k's launch until one takes about peakTarget (so that the device is
// full, whatever its size), checks the output of the last one, then times Count launches
// and returns the median rate in GFLOP/s and the units launched; or a rate of 0 and why,
// starting with InvalidPrefix, when a device time is not positive or the rate is no
// number.
func measureRate(ctx context.Context, cfg Config, q *engine.Queue, k rateKernel) (gflops float64, n int, invalid string, err error) {
	target := peakTarget(cfg)
	n = min(max(k.first, k.unit), k.most)
	launch := func(_ context.Context, q *engine.Queue) error { return k.run(q, n) }
	for {
		if err := k.alloc(n); err != nil {
			return 0, 0, "", err
		}
		d, err := q.Timed(ctx, func() error { return launch(ctx, q) })
		if err != nil {
			return 0, 0, "", err
		}
		next := n
		switch {
		case d <= 0:
			next = n * 64
		case d < target/2:
			next = n * min(int(math.Ceil(float64(target)/float64(d))), 64)
		}
		next = min(engine.RoundUp(next, k.unit), k.most)
		if next <= n {
			break
		}
		n = next
	}
	// Verify the last launch before timing.
	if err := k.check(ctx, q, n); err != nil {
		return 0, 0, "", err
	}
	samples, _, err := timeRuns(ctx, cfg, q, launch)
	if err != nil {
		return 0, 0, "", err
	}
	if why := timingInvalid(samples); why != "" {
		return 0, n, why, nil
	}
	med := Summarize(samples).Median.Seconds()
	gflops = k.flops(n) / med / 1e9
	if !finite(gflops) {
		return 0, n, fmt.Sprintf("%s%v FLOPs over %v s is no rate", InvalidPrefix, k.flops(n), med), nil
	}
	return gflops, n, "", nil
}

// measurePeakWidth times the FMA peak kernel in T with vec lanes (measureRate: every output
// element checked by ceiling.Peak.Check) and returns its rate; or a Peak of 0 whose How
// says why when a device time is not positive.
func measurePeakWidth[T float32 | float64](ctx context.Context, cfg Config, q *engine.Queue, vec int) (Peak, error) {
	dev := q.Device()
	p, err := ceiling.NewPeak[T](ctx, q, vec)
	if err != nil {
		return Peak{}, err
	}
	defer p.Close()
	wg := min(256, max(p.MaxWorkGroupSize(), 1), max(dev.Info().MaxWorkGroupSize, 1))
	var out *engine.Buffer[T]
	defer func() { out.Close() }()
	k := rateKernel{
		// Start with 4 work-groups per compute unit.
		unit: wg, first: max(dev.Info().ComputeUnits, 1) * 4 * wg, most: max(peakMaxElems/vec/wg*wg, wg),
		alloc: func(n int) (err error) {
			out.Close()
			out, err = engine.NewBuffer[T](dev, n*vec)
			return err
		},
		run: func(q *engine.Queue, n int) error { return p.Run(q, out, n, wg) },
		check: func(ctx context.Context, q *engine.Queue, _ int) error {
			got, err := out.Download(ctx, q)
			if err != nil {
				return err
			}
			return p.Check(got)
		},
		flops: p.Flops,
	}
	gflops, items, invalid, err := measureRate(ctx, cfg, q, k)
	if err != nil || invalid != "" {
		return Peak{How: invalid}, err
	}
	return Peak{
		GFLOPs: gflops,
		How: fmt.Sprintf("%d independent mad chains x %d steps on %d lanes per work-item, %d work-items in groups of %d",
			ceiling.PeakChains, ceiling.PeakSteps, vec, items, wg),
	}, nil
}

// tensorCeiling is one tensor-core peak of Ceilings: its key in TensorAbsent ("fp16"), the
// name of its step in progress and interrupted-run reports, the arithmetic its kernel
// measures, and the result types it is the roof of.
type tensorCeiling struct {
	key, step string
	arith     ceiling.TensorArith
	types     []string
	field     func(c *Ceilings) *float64
}

// tensorCeilings are the tensor peaks startDevice measures, in its order. One float8
// measurement (E4M3) serves both float8 types: E5M2 runs at its rate (ceiling.TensorAriths).
var tensorCeilings = []tensorCeiling{
	{"tf32", "tf32 tensor peak", ceiling.TensorTF32, []string{"tf32", "float32x3tf32"}, func(c *Ceilings) *float64 { return &c.TF32GFLOPs }},
	{"fp16", "float16 tensor peak", ceiling.TensorFloat16, []string{"float16"}, func(c *Ceilings) *float64 { return &c.FP16GFLOPs }},
	{"bf16", "bfloat16 tensor peak", ceiling.TensorBFloat16, []string{"bfloat16"}, func(c *Ceilings) *float64 { return &c.BF16GFLOPs }},
	{"fp8", "float8 tensor peak", ceiling.TensorFloat8E4M3, []string{"float8e4m3", "float8e5m2"}, func(c *Ceilings) *float64 { return &c.FP8GFLOPs }},
	{"fp64_tensor", "fp64 tensor peak", ceiling.TensorFloat64, []string{"float64"}, func(c *Ceilings) *float64 { return &c.FP64TensorGFLOPs }},
}

// tensorTypes are the result types whose arithmetic runs on tensor cores where the suite
// has a tensor-core kernel for them, and in float32 elsewhere (the GEMM family's portable
// kernel converts their inputs to float32; kernels/gemm/precision.go).
var tensorTypes = []string{"tf32", "float32x3tf32", "float16", "bfloat16", "float8e4m3", "float8e5m2"}

// tensorPlan says which tensor peaks dev measures: the ceilings to measure, and the result
// types its suite computes in float32 arithmetic (no tensor-core kernel of the suite runs
// them there), whose roof is the fp32 peak, with why.
func tensorPlan(backend string, info engine.DeviceInfo) (measure []tensorCeiling, inFP32 []string, why string) {
	cc := info.ComputeCapability
	switch {
	case backend == "cuda" && cc >= 89:
		return tensorCeilings, nil, ""
	case backend == "cuda" && cc >= 80:
		return tensorCeilingsBut("fp8"), []string{"float8e4m3", "float8e5m2"},
			fmt.Sprintf("sm_%d has no float8 tensor cores: float8 GEMMs convert their inputs to float32 and multiply in float32, so the fp32 peak is their roof", cc)
	case backend == "opencl" && strings.Contains(info.Platform, "NVIDIA") && (cc == 0 || cc >= 80):
		// The opencl-mma GEMM computes tf32 and the 16-bit precisions on the tensor cores;
		// 3xTF32 and float8 run the portable kernel there.
		return tensorCeilingsOf("tf32", "fp16", "bf16"), []string{"float32x3tf32", "float8e4m3", "float8e5m2"},
			"through NVIDIA's OpenCL, float32x3tf32 and float8 GEMMs convert their inputs to float32 and multiply in float32 (only tf32, float16 and bfloat16 have an OpenCL tensor-core kernel), so the fp32 peak is their roof"
	case backend == "cuda":
		return nil, tensorTypes, fmt.Sprintf("the suite's tensor-core kernels need sm_80 (the device is sm_%d): tf32, float32x3tf32, float16, bfloat16 and float8 compute in float32 after converting their inputs, so the fp32 peak is their roof", cc)
	}
	return nil, tensorTypes, fmt.Sprintf("no tensor-core kernel of the suite runs on this device (%s, %s): tf32, float32x3tf32, float16, bfloat16 and float8 compute in float32 after converting their inputs, so the fp32 peak is their roof",
		backend, info.Kind)
}

// tensorCeilingsBut returns tensorCeilings without the one of key.
func tensorCeilingsBut(key string) []tensorCeiling {
	var out []tensorCeiling
	for _, t := range tensorCeilings {
		if t.key != key {
			out = append(out, t)
		}
	}
	return out
}

// tensorCeilingsOf returns the tensorCeilings of the keys, in their order.
func tensorCeilingsOf(keys ...string) []tensorCeiling {
	var out []tensorCeiling
	for _, t := range tensorCeilings {
		if slices.Contains(keys, t.key) {
			out = append(out, t)
		}
	}
	return out
}

// measureTensor times the tensor peak of arithmetic a (ceiling.Tensor: every thread's sum
// checked) with measureRate, growing the number of blocks from four per multiprocessor,
// and returns its rate; or a Peak of 0 whose How says why when a device time is not
// positive. It returns an error wrapping engine.ErrUnsupported where the device has no
// tensor peak of a.
func measureTensor(ctx context.Context, cfg Config, q *engine.Queue, a ceiling.TensorArith) (Peak, error) {
	dev := q.Device()
	p, err := ceiling.NewTensor(dev, a)
	if err != nil {
		return Peak{}, err
	}
	defer p.Close()
	var out *engine.Buffer[float32]
	defer func() { out.Close() }()
	k := rateKernel{
		unit: 1, first: max(dev.Info().ComputeUnits, 1) * 4, most: max(peakMaxElems/p.Threads(), 1),
		alloc: func(n int) (err error) {
			out.Close()
			out, err = engine.NewBuffer[float32](dev, n*p.Threads())
			return err
		},
		run: func(q *engine.Queue, n int) error { return p.Run(q, out, n) },
		check: func(ctx context.Context, q *engine.Queue, _ int) error {
			got, err := out.Download(ctx, q)
			if err != nil {
				return err
			}
			return p.Check(got)
		},
		flops: p.Flops,
	}
	gflops, blocks, invalid, err := measureRate(ctx, cfg, q, k)
	if err != nil || invalid != "" {
		return Peak{How: invalid}, err
	}
	return Peak{GFLOPs: gflops, How: fmt.Sprintf("%s: %s, %d blocks", a, p.How(), blocks)}, nil
}

// measureTensorPeaks measures the tensor peaks of q's device into c (tensorPlan), calling
// at with each one's step name first. A peak that fails is absent, with why in
// c.TensorAbsent; one whose device times are invalid is noted in c.Invalid.
func measureTensorPeaks(ctx context.Context, cfg Config, q *engine.Queue, c *Ceilings, at func(step string)) {
	measure, inFP32, why := tensorPlan(q.Device().Backend(), q.Device().Info())
	c.FP32Roof = inFP32
	var hows []string
	if why != "" {
		hows = append(hows, why)
	}
	absent := func(key, why string) {
		if c.TensorAbsent == nil {
			c.TensorAbsent = map[string]string{}
		}
		c.TensorAbsent[key] = why
	}
	if len(measure) > 0 && slices.Contains(inFP32, "float8e4m3") {
		absent("fp8", why)
	}
	for _, t := range measure {
		if ctx.Err() != nil {
			return
		}
		at(t.step)
		pk, err := measureTensor(ctx, cfg, q, t.arith)
		switch {
		case err != nil:
			absent(t.key, err.Error())
		case pk.GFLOPs == 0:
			c.noteInvalid(t.step, &pk.How)
			absent(t.key, "its device times are not valid measurements (see invalid)")
		default:
			*t.field(c) = pk.GFLOPs
			hows = append(hows, pk.How)
		}
	}
	c.TensorHow = strings.Join(hows, "; ")
}
