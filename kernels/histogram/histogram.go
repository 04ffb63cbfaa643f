package histogram

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// The histogram family's tunables (histogram.cl): local counters per work-group (32 KB, the
// OpenCL 1.2 minimum of local memory), the most bins counted in local memory, the most
// sub-histograms per group, the words of local counters the host aims for when it picks the
// number of sub-histograms, and work-groups per compute unit.
const (
	histLocalWords    = 8192
	histLocalBins     = 4096
	histMaxCopies     = 8
	histCopyWords     = 2048
	histGroupsPerCU   = 8
	histGlobalPerCU   = 32
	histMinItemInputs = 16
)

// The privatized kernels' shape (hist_*_priv in histogram.cl, the ops' "privatized"
// variant; privUnroll and privGroupsPerCU are the defaults of PrivTunables, which `prism
// tune` may replace per device):
//   - privUnroll 16-byte loads in flight per item and step: with privGroupsPerCU groups of
//     256 items per compute unit that is up to 64 KB in flight per SM, about four times what
//     an H100 needs to cover its memory latency at its bandwidth (3 TB/s * ~0.7 us / 132
//     SMs), so half the items may be counting while the other half wait on memory;
//   - privMaxCopies lane-striped sub-histograms per group (one per lane of a 32-wide warp:
//     32 KB of local memory for 256 bins, which the OpenCL 1.2 minimum of 32 KB and
//     NVIDIA's 48 KB hold), fewer where the local memory or the group is smaller;
//   - privGroupsPerCU groups per compute unit (1024 items, and 4 x 33 KB of shared memory
//     on an SM that holds 228 KB), with a grid-stride loop: few groups, so that the clear and
//     merge of bins*copies local words and the bins global atomics of each group are paid
//     528 times on an H100 (the portable kernels' 8 groups per compute unit pay them 1056
//     times), and at least one input per local word and a full step of loads per item per
//     group at smaller sizes.
const (
	privUnroll      = 4
	privMaxCopies   = 32
	privGroupsPerCU = 4
)

// MaxFloatBins is the most bins of a float32 histogram (so that float32(bins) is exact).
const MaxFloatBins = 1 << 24

// HistogramModel returns the bytes a histogram of n 4-byte inputs must move: every input read
// once (the counts are negligible). It does no floating-point work to speak of.
func HistogramModel(n int) kernels.Model { return kernels.Model{Bytes: 4 * float64(n)} }

// HistogramScale returns the scale of a float32 histogram of bins equal bins over [lo, hi):
// float32(bins) / (hi - lo), each operation rounded to float32. A value x in [lo, hi) goes to
// bin min(uint32((x - lo) * scale), bins - 1), in float32 on the device and in the reference.
func HistogramScale(bins int, lo, hi float32) float32 {
	span := hi - lo
	return float32(bins) / span
}

// Histogram counts uint32 or float32 values into bins on one device (histogram.cl): work-group
// sub-histograms in local memory when bins <= LocalBins(), global atomics above. It is safe for
// concurrent use by goroutines that each use their own Queue.
type Histogram struct {
	dev             *engine.Device
	prog            *engine.Program
	clear, u32, f32 *engine.Kernel // u32 and f32: hist_*_priv when priv
	u32g, f32g      *engine.Kernel
	wg, localWords  int
	localBins, cus  int
	priv            bool
	unroll, perCU   int // the privatized kernels' UNROLL and groups per compute unit
	// groups, when positive, replaces the privatized kernels' number of work-groups (tests:
	// several groups and the unrolled loop at the small sizes Oclgrind runs).
	groups int
	// loops is the device's limit on a work-item's loop iterations (kernels.LoopLimit), 0
	// for none: plan launches enough groups to stay within it.
	loops int
}

// NewHistogram compiles the histogram family for dev: the portable kernels (hist_u32,
// hist_f32), one 4-byte input per item and step.
func NewHistogram(dev *engine.Device) (*Histogram, error) { return newHistogram(dev, nil) }

// NewPrivatized compiles the histogram family for dev with the privatized kernels
// (hist_u32_priv, hist_f32_priv): a few work-groups per compute unit, 16-byte loads, several
// in flight per item, into lane-striped sub-histograms (histogram.cl's header says why). Its
// methods are those of NewHistogram's, with the same results; above LocalBins it uses the
// same global-atomic kernels.
func NewPrivatized(dev *engine.Device) (*Histogram, error) {
	return NewPrivatizedWith(dev, DefaultPrivTunables)
}

// NewPrivatizedWith is NewPrivatized with the tunables t (the work-group size is lowered to
// what dev and the compiled kernels allow).
func NewPrivatizedWith(dev *engine.Device, t PrivTunables) (*Histogram, error) {
	if _, err := ParsePrivTunables(t.String()); err != nil {
		return nil, err
	}
	return newHistogram(dev, &t)
}

// newHistogram builds the portable kernels (priv nil) or the privatized ones with *priv.
func newHistogram(dev *engine.Device, priv *PrivTunables) (*Histogram, error) {
	want := 256
	if priv != nil {
		want = priv.WG
	}
	return kernels.Fit(dev, "histogram", func(lim kernels.Limits) (*Histogram, kernels.Shape, error) {
		wg, words := lim.Group(want), histLocalWords
		for lm := lim.LocalBytes; lm > 0 && int64(4*words) > lm-1024 && words > 256; {
			words /= 2
		}
		if lm := lim.LocalBytes; lm > 0 && int64(4*words) > lm {
			return nil, kernels.Shape{}, kernels.TooSmall("histogram", lim, fmt.Sprintf("%d bytes of local memory", 4*words))
		}
		h := &Histogram{dev: dev, wg: wg, localWords: words, localBins: min(histLocalBins, words), cus: max(dev.Info().ComputeUnits, 1), priv: priv != nil,
			loops: kernels.LoopLimit(dev)}
		opts := []string{fmt.Sprintf("-DWG=%d", wg), fmt.Sprintf("-DLOCAL_WORDS=%d", words), fmt.Sprintf("-DLOCAL_BINS=%d", h.localBins)}
		u32, f32 := "hist_u32", "hist_f32"
		if priv != nil {
			h.unroll, h.perCU = priv.Unroll, priv.Groups
			opts = append(opts, fmt.Sprintf("-DUNROLL=%d", h.unroll))
			u32, f32 = "hist_u32_priv", "hist_f32_priv"
		}
		var err error
		h.prog, err = dev.Build(source, opts...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		ks, err := kernels.LoadKernels(h.prog, kernels.Ref{Dst: &h.clear, Name: "hist_clear"}, kernels.Ref{Dst: &h.u32, Name: u32},
			kernels.Ref{Dst: &h.f32, Name: f32}, kernels.Ref{Dst: &h.u32g, Name: "hist_u32_global"}, kernels.Ref{Dst: &h.f32g, Name: "hist_f32_global"})
		if err != nil {
			h.Close()
			return nil, kernels.Shape{}, err
		}
		return h, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the compiled kernels. Idempotent.
func (h *Histogram) Close() error {
	errs := []error{}
	for _, k := range []*engine.Kernel{h.clear, h.u32, h.f32, h.u32g, h.f32g} {
		errs = append(errs, k.Close())
	}
	return errors.Join(append(errs, h.prog.Close())...)
}

// WorkGroup returns the work-group size the family was compiled with on this device.
func (h *Histogram) WorkGroup() int { return h.wg }

// LocalBins returns the most bins counted in local memory on this device; larger histograms
// use global atomics for every input (slower, and much slower when many values share a bin).
func (h *Histogram) LocalBins() int { return h.localBins }

// Privatized reports whether h runs the privatized kernels (NewPrivatized).
func (h *Histogram) Privatized() bool { return h.priv }

// Tunables describes the shape h was built with, for listings and reports.
func (h *Histogram) Tunables() string {
	if !h.priv {
		return fmt.Sprintf("WG=%d LOCAL_WORDS=%d", h.wg, h.localWords)
	}
	return fmt.Sprintf("WG=%d UNROLL=%d GROUPS=%d (LOCAL_WORDS=%d, copies <= %d)", h.wg, h.unroll, h.perCU, h.localWords, min(privMaxCopies, h.wg))
}

// privCopies returns log2 of the privatized kernels' sub-histograms per group for bins bins:
// the largest power of two at most privMaxCopies, the group size and localWords/bins.
func privCopies(wg, localWords, bins int) int {
	shift := 0
	for c := 2; c <= min(privMaxCopies, wg) && c*bins <= localWords; c *= 2 {
		shift++
	}
	return shift
}

// plan returns the number of sub-histograms per group (for the privatized kernels, its
// log2) and the launch range for n inputs into bins bins: global when bins > LocalBins.
func (h *Histogram) plan(n, bins int) (copies int, r engine.Range, global bool) {
	if bins > h.localBins {
		groups := max(min((n+h.wg-1)/h.wg, h.cus*histGlobalPerCU), h.loopGroups(n, 1, 0))
		return 0, engine.Range1D(max(groups, 1)*h.wg, h.wg), true
	}
	if h.priv {
		shift := privCopies(h.wg, h.localWords, bins)
		// Each group clears and merges bins<<shift words: give it at least as many inputs,
		// and a full step of loads per item.
		per := max(4*h.unroll*h.wg, bins<<shift)
		groups := min((n+per-1)/per, h.cus*h.perCU)
		if h.groups > 0 {
			groups = h.groups
		}
		groups = max(groups, h.loopGroups(n, 4*h.unroll, bins<<shift))
		return shift, engine.Range1D(max(groups, 1)*h.wg, h.wg), false
	}
	copies = max(1, min(histMaxCopies, histCopyWords/bins, h.localWords/bins))
	// Each group clears and merges bins*copies counters: give it enough inputs to pay for them.
	per := max(h.wg*histMinItemInputs, 8*bins*copies)
	groups := max(min((n+per-1)/per, h.cus*histGroupsPerCU), h.loopGroups(n, 1, bins*copies))
	return copies, engine.Range1D(max(groups, 1)*h.wg, h.wg), false
}

// loopGroups returns the fewest work-groups that keep a work-item within the device's loop
// limit (kernels.GroupsWithin; 0 without one) over n inputs, step inputs an item a step of
// its grid-stride loop, with counters local counters to clear and merge (its fixed loops:
// about twice counters/wg, with 64 to spare). At the eight groups a compute unit of the
// portable kernels, llvmpipe's limit was passed from about 134M inputs (34M at two compute
// units).
func (h *Histogram) loopGroups(n, step, counters int) int {
	return kernels.GroupsWithin(h.loops, (n+h.wg*step-1)/(h.wg*step), 1, 2*counters/h.wg+64)
}

// zero clears counts[0..bins) with a kernel (Oclgrind 21.10 does not count a fill as
// initializing memory; a kernel costs the same).
func (h *Histogram) zero(q *engine.Queue, counts *engine.Buffer[uint32], bins int) error {
	groups := min((bins+h.wg-1)/h.wg, h.cus*histGlobalPerCU)
	return q.Launch(h.clear, engine.Range1D(groups*h.wg, h.wg), counts, int32(bins))
}

func (h *Histogram) check(what string, counts *engine.Buffer[uint32], xLen, n, bins, maxBins int) error {
	switch {
	case counts == nil:
		return fmt.Errorf("kernels: %s: nil buffer: %w", what, engine.ErrInvalidArg)
	case n < 0 || n > math.MaxInt32:
		return fmt.Errorf("kernels: %s: %d inputs; must be in 0..2^31-1: %w", what, n, engine.ErrInvalidArg)
	case xLen < n:
		return fmt.Errorf("kernels: %s: %d inputs, but the input buffer holds %d: %w", what, n, xLen, engine.ErrInvalidArg)
	case bins < 1 || bins > maxBins:
		return fmt.Errorf("kernels: %s: %d bins; must be in 1..%d: %w", what, bins, maxBins, engine.ErrInvalidArg)
	case counts.Len() < bins:
		return fmt.Errorf("kernels: %s: %d bins, but the counts buffer holds %d: %w", what, bins, counts.Len(), engine.ErrInvalidArg)
	}
	return nil
}

// Uint32 sets counts[0..bins) to the histogram of x[0..n): value v counts in bin
// min(v / width, bins-1), so values past bins*width land in the last bin (width = 2^k is
// computed with a shift). counts is overwritten; elements past bins are untouched.
func (h *Histogram) Uint32(q *engine.Queue, counts, x *engine.Buffer[uint32], n, bins int, width uint32) error {
	if x == nil {
		return fmt.Errorf("kernels: histogram uint32: nil input buffer: %w", engine.ErrInvalidArg)
	}
	if err := h.check("histogram uint32", counts, x.Len(), n, bins, math.MaxInt32); err != nil {
		return err
	}
	if width == 0 {
		return fmt.Errorf("kernels: histogram uint32: bin width 0: %w", engine.ErrInvalidArg)
	}
	shift := int32(-1)
	if width&(width-1) == 0 {
		shift = int32(bits.TrailingZeros32(width))
	}
	if err := h.zero(q, counts, bins); err != nil || n == 0 {
		return err
	}
	copies, r, global := h.plan(n, bins)
	if global {
		return q.Launch(h.u32g, r, counts, x, int32(n), int32(bins), width, shift)
	}
	return q.Launch(h.u32, r, counts, x, int32(n), int32(bins), width, shift, int32(copies))
}

// Float32 sets counts[0..bins) to the histogram of x[0..n) over bins equal bins on [lo, hi):
// a value v in [lo, hi) counts in bin min(uint32((v - lo) * HistogramScale(bins, lo, hi)),
// bins-1) computed in float32 (so the device and HistogramFloat32Ref agree exactly); values
// outside [lo, hi) and NaNs are dropped. lo and hi must be finite with lo < hi, and the scale
// finite (hi - lo neither overflowing nor tiny). counts is overwritten; elements past bins
// are untouched.
func (h *Histogram) Float32(q *engine.Queue, counts *engine.Buffer[uint32], x *engine.Buffer[float32], n, bins int, lo, hi float32) error {
	if x == nil {
		return fmt.Errorf("kernels: histogram float32: nil input buffer: %w", engine.ErrInvalidArg)
	}
	if err := h.check("histogram float32", counts, x.Len(), n, bins, MaxFloatBins); err != nil {
		return err
	}
	scale := HistogramScale(bins, lo, hi)
	finite := func(v float32) bool { return !math.IsInf(float64(v), 0) && !math.IsNaN(float64(v)) }
	if !finite(lo) || !finite(hi) || !(lo < hi) || !finite(hi-lo) || !finite(scale) {
		return fmt.Errorf("kernels: histogram float32: range [%v, %v) with %d bins (scale %v): want finite lo < hi and a finite scale: %w", lo, hi, bins, scale, engine.ErrInvalidArg)
	}
	if err := h.zero(q, counts, bins); err != nil || n == 0 {
		return err
	}
	copies, r, global := h.plan(n, bins)
	if global {
		return q.Launch(h.f32g, r, counts, x, int32(n), int32(bins), lo, hi, scale)
	}
	return q.Launch(h.f32, r, counts, x, int32(n), int32(bins), lo, hi, scale, int32(copies))
}
