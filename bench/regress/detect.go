package regress

import (
	"math"
	"slices"
	"sort"
	"time"
)

// Defaults of DetectOptions.
const (
	// DefaultPenalty is the cost, in units of the series' noise sigma, a split must save.
	// The best split of pure noise saves about 7 sigma in 1 series of 100 and 10 to 20
	// sigma in 1 of 1000, nearly whatever the series' length (8 to 1000 runs, normal or
	// heavier tails); a step of d sigma confirmed by n runs saves about n x d sigma.
	DefaultPenalty = 20.0
	// DefaultMinSegment is the fewest runs at one level: one odd run is an outlier, not a
	// step.
	DefaultMinSegment = 2
	// DefaultMinChange is the smallest step reported, a relative change of the level.
	DefaultMinChange = 0.01
	// minSigma bounds the noise Detect assumes from below (0.1%): a series of identical
	// medians still needs a step worth a penalty.
	minSigma = 1e-3
)

// DetectOptions tune Detect. The zero value is the defaults.
type DetectOptions struct {
	Penalty    float64 // 0: DefaultPenalty
	MinSegment int     // 0: DefaultMinSegment
	MinChange  float64 // 0: DefaultMinChange
}

// Step is a change of level in a series' history.
type Step struct {
	// Index is the position, in the runs Detect was given, of the first run at the new
	// level; Run, Build and Date are that run's.
	Index int
	Run   int64
	Build string
	Date  time.Time
	// Before and After are the levels, the median of the run medians of the segments
	// before and from the step; Ratio is After/Before (above 1 is slower).
	Before, After time.Duration
	Ratio         float64
}

// Detect returns the steps in a series' history, oldest first: runs of one fingerprint in
// the order they ran (runs without a valid median are left out). See the package comment
// for the method.
func Detect(runs []Run, opt DetectOptions) []Step {
	if opt.Penalty <= 0 {
		opt.Penalty = DefaultPenalty
	}
	if opt.MinSegment <= 0 {
		opt.MinSegment = DefaultMinSegment
	}
	if opt.MinChange <= 0 {
		opt.MinChange = DefaultMinChange
	}
	var idx []int // positions in runs of the valid ones
	var xs []float64
	for i, r := range runs {
		if r.Median > 0 {
			idx = append(idx, i)
			xs = append(xs, math.Log(float64(r.Median)))
		}
	}
	if len(xs) < 2*opt.MinSegment {
		return nil
	}
	sigma := math.Max(minSigma, diffSigma(xs))
	cuts := []int{0, len(xs)}
	var split func(lo, hi int)
	split = func(lo, hi int) {
		m := hi - lo
		if m < 2*opt.MinSegment {
			return
		}
		k, gain := bestSplit(xs[lo:hi], opt.MinSegment)
		if gain <= opt.Penalty*sigma {
			// A level that changes and comes back (a slowdown fixed some runs later) may
			// save nothing split once: try the best pair of cuts, each paying a penalty.
			i, j, gain2 := bestPair(xs[lo:hi], opt.MinSegment)
			if gain2 <= 2*opt.Penalty*sigma {
				return
			}
			cuts = append(cuts, lo+i, lo+j)
			split(lo, lo+i)
			split(lo+i, lo+j)
			split(lo+j, hi)
			return
		}
		cuts = append(cuts, lo+k)
		split(lo, lo+k)
		split(lo+k, hi)
	}
	split(0, len(xs))
	slices.Sort(cuts)
	// Merge adjacent levels closer than MinChange, the smallest difference first, until
	// every step is a change worth reporting.
	for {
		best, bestAt := math.Inf(1), -1
		for i := 1; i+1 < len(cuts); i++ {
			d := math.Abs(median(xs[cuts[i]:cuts[i+1]]) - median(xs[cuts[i-1]:cuts[i]]))
			if d < best {
				best, bestAt = d, i
			}
		}
		if bestAt < 0 || best > math.Log1p(opt.MinChange) {
			break
		}
		cuts = slices.Delete(cuts, bestAt, bestAt+1)
	}
	var steps []Step
	for i := 1; i+1 < len(cuts); i++ {
		before, after := math.Exp(median(xs[cuts[i-1]:cuts[i]])), math.Exp(median(xs[cuts[i]:cuts[i+1]]))
		r := runs[idx[cuts[i]]]
		steps = append(steps, Step{Index: idx[cuts[i]], Run: r.ID, Build: r.Build, Date: r.Date,
			Before: time.Duration(math.Round(before)), After: time.Duration(math.Round(after)), Ratio: after / before})
	}
	return steps
}

// diffSigma estimates the noise of xs robustly from successive differences, which a few
// steps barely touch: 1.4826 x the median |x[i+1] - x[i]|, over sqrt 2.
func diffSigma(xs []float64) float64 {
	ds := make([]float64, len(xs)-1)
	for i := range ds {
		ds[i] = math.Abs(xs[i+1] - xs[i])
	}
	return madScale * median(ds) / math.Sqrt2
}

// bestSplit returns where splitting xs in two saves the most L1 cost, with both sides at
// least minSeg long, and the cost saved.
func bestSplit(xs []float64, minSeg int) (int, float64) {
	m := len(xs)
	pre := prefixCosts(xs)
	rev := slices.Clone(xs)
	slices.Reverse(rev)
	suf := prefixCosts(rev) // suf[j]: cost of the last j values
	total := pre[m]
	bestK, bestGain := 0, math.Inf(-1)
	for k := minSeg; k <= m-minSeg; k++ {
		if g := total - pre[k] - suf[m-k]; g > bestGain {
			bestK, bestGain = k, g
		}
	}
	return bestK, bestGain
}

// maxPairRuns bounds the runs bestPair searches (its time grows with their square).
const maxPairRuns = 2000

// bestPair returns where cutting xs in three saves the most L1 cost, every part at least
// minSeg long, and the cost saved: the split that finds a level which changes and comes
// back, which no single split sees (its two sides both mix the levels). Zero gain for
// series longer than maxPairRuns.
func bestPair(xs []float64, minSeg int) (int, int, float64) {
	m := len(xs)
	if m < 3*minSeg || m > maxPairRuns {
		return 0, 0, 0
	}
	pre := prefixCosts(xs)
	rev := slices.Clone(xs)
	slices.Reverse(rev)
	suf := prefixCosts(rev)
	total := pre[m]
	bi, bj, best := 0, 0, math.Inf(-1)
	for i := minSeg; i <= m-2*minSeg; i++ {
		mid := prefixCosts(xs[i:]) // mid[l]: the cost of xs[i:i+l]
		for j := i + minSeg; j <= m-minSeg; j++ {
			if g := total - pre[i] - mid[j-i] - suf[m-j]; g > best {
				bi, bj, best = i, j, g
			}
		}
	}
	return bi, bj, best
}

// prefixCosts returns c[j], the sum of absolute deviations of xs[:j] from their median,
// for j = 0..len(xs), in O(n log n): a Fenwick tree over the values' ranks keeps counts
// and sums, from which the lower median and the sum below it are read.
func prefixCosts(xs []float64) []float64 {
	n := len(xs)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return xs[order[a]] < xs[order[b]] })
	rank := make([]int, n) // 1-based
	for r, i := range order {
		rank[i] = r + 1
	}
	cnt := make([]int, n+1)
	sum := make([]float64, n+1)
	logN := 1
	for 1<<logN <= n {
		logN++
	}
	out := make([]float64, n+1)
	total := 0.0
	for j, x := range xs {
		for p := rank[j]; p <= n; p += p & -p {
			cnt[p]++
			sum[p] += x
		}
		total += x
		c := j + 1
		k := (c + 1) / 2 // the lower median is the k-th smallest
		// Descend the tree to the position of the k-th smallest, summing the values below.
		pos, seen, below := 0, 0, 0.0
		for step := 1 << logN; step > 0; step >>= 1 {
			if next := pos + step; next <= n && seen+cnt[next] < k {
				pos, seen, below = next, seen+cnt[next], below+sum[next]
			}
		}
		med := xs[order[pos]] // rank pos+1
		lower := below + med  // the k smallest
		out[c] = total - 2*lower + float64(2*k-c)*med
	}
	return out
}
