package bench

import (
	"math"
	"slices"
	"time"

	"golang.org/x/perf/benchmath"
)

// uMinP returns the smallest p-value a two-sided Mann-Whitney U test can give for samples of
// n1 and n2 values without ties: 2 / C(n1+n2, n1), the probability of the two most extreme
// orderings. When it exceeds alpha, no difference can be significant.
func uMinP(n1, n2 int) float64 {
	if n1 < 1 || n2 < 1 {
		return 1
	}
	// C(n1+n2, n1) as a product of ratios, exact enough for a comparison with alpha.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// uMinSamples returns the smallest n for which two samples of n values each can differ
// significantly at alpha (4 at alpha 0.05).
func uMinSamples(alpha float64) int {
	n := 1
	for uMinP(n, n) > alpha && n < 1000 {
		n++
	}
	return n
}

// uExactLimit is the largest n1*n2 for which uCDF counts the exact distribution of U; above
// it, the normal approximation is within a fraction of a percent.
const uExactLimit = 2500

// uCDF returns P(U <= u) for the Mann-Whitney statistic U of samples of n1 and n2 values
// drawn from one distribution, without ties.
func uCDF(n1, n2 int, u float64) float64 {
	if u < 0 {
		return 0
	}
	if float64(n1)*float64(n2) > uExactLimit {
		mean := float64(n1*n2) / 2
		sd := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
		return 0.5 * math.Erfc(-(math.Floor(u)+0.5-mean)/(sd*math.Sqrt2))
	}
	pmf := uPMF(n1, n2)
	sum := 0.0
	for k := 0; k <= int(u) && k < len(pmf); k++ {
		sum += pmf[k]
	}
	return math.Min(1, sum)
}

// uPMF returns P(U = k), k = 0..n1*n2, from the recurrence
// p[m,n](k) = m/(m+n) p[m-1,n](k-n) + n/(m+n) p[m,n-1](k): the largest of the m+n values
// comes from the first sample (and exceeds all n of the second) or from the second.
func uPMF(n1, n2 int) []float64 {
	// prev[m] is p[m, n-1], cur[m] is p[m, n].
	prev := make([][]float64, n1+1)
	for m := range prev {
		prev[m] = []float64{1} // p[m, 0]: U is 0
	}
	for n := 1; n <= n2; n++ {
		cur := make([][]float64, n1+1)
		cur[0] = []float64{1}
		for m := 1; m <= n1; m++ {
			p := make([]float64, m*n+1)
			a, b := float64(m)/float64(m+n), float64(n)/float64(m+n)
			for k, v := range cur[m-1] {
				p[k+n] += a * v
			}
			for k, v := range prev[m] {
				p[k] += b * v
			}
			cur[m] = p
		}
		prev = cur
	}
	return prev[n1]
}

// shiftCI returns the confidence interval, at level 1-alpha or more, of the shift d for which
// ys looks like xs + d: Moses' interval, the one that goes with the Mann-Whitney U test. Of
// the n1*n2 differences ys[j] - xs[i] in order, it runs from the k-th smallest to the k-th
// largest, with k-1 the largest u for which P(U <= u) <= alpha/2. ok is false when the
// samples are too small for a finite interval at that level. It takes O((n1+n2) log) time
// and O(n1+n2) memory, whatever the number of differences.
func shiftCI(xs, ys []float64, alpha float64) (lo, hi float64, ok bool) {
	n1, n2 := len(xs), len(ys)
	if n1 == 0 || n2 == 0 {
		return 0, 0, false
	}
	k := uCut(n1, n2, alpha/2) // the number of differences cut from each end
	if k == 0 {
		return 0, 0, false
	}
	xs, ys = slices.Clone(xs), slices.Clone(ys)
	slices.Sort(xs)
	slices.Sort(ys)
	total := int64(n1) * int64(n2)
	return kthDiff(xs, ys, int64(k)), kthDiff(xs, ys, total-int64(k)+1), true
}

// uCut returns the smallest k for which P(U <= k) > p: the number of values u = 0, 1, ...
// with P(U <= u) <= p. It computes the exact distribution once (small samples) or inverts
// the normal approximation, then steps to the exact boundary.
func uCut(n1, n2 int, p float64) int {
	if float64(n1)*float64(n2) <= uExactLimit {
		pmf := uPMF(n1, n2)
		k, sum := 0, pmf[0]
		for sum <= p && k+1 < len(pmf) {
			k++
			sum += pmf[k]
		}
		return k
	}
	mean := float64(n1) * float64(n2) / 2
	sd := math.Sqrt(float64(n1) * float64(n2) * float64(n1+n2+1) / 12)
	z := -math.Sqrt2 * math.Erfcinv(2*p) // the p quantile of the standard normal
	k := max(0, int(math.Floor(mean-0.5+sd*z)))
	for k > 0 && uCDF(n1, n2, float64(k-1)) > p {
		k--
	}
	for uCDF(n1, n2, float64(k)) <= p {
		k++
	}
	return k
}

// kthDiff returns the k-th smallest (from 1) of the differences ys[j] - xs[i] of sorted xs
// and ys. It bisects on the float64 values in their order, counting the differences at or
// below each in one merge-like pass: 64 passes at most.
func kthDiff(xs, ys []float64, k int64) float64 {
	n1, n2 := len(xs), len(ys)
	count := func(d float64) int64 { // #{(i, j): ys[j] - xs[i] <= d}
		var c int64
		i := 0 // ys[j] - xs[i'] <= d for every i' >= i; i grows with j
		for _, y := range ys {
			for i < n1 && y-xs[i] > d {
				i++
			}
			c += int64(n1 - i)
		}
		return c
	}
	lo, hi := floatKey(ys[0]-xs[n1-1]), floatKey(ys[n2-1]-xs[0])
	if count(keyFloat(lo)) >= k {
		return keyFloat(lo)
	}
	for hi-lo > 1 { // count(lo) < k <= count(hi)
		mid := lo + (hi-lo)/2
		if count(keyFloat(mid)) >= k {
			hi = mid
		} else {
			lo = mid
		}
	}
	return keyFloat(hi)
}

// floatKey maps a float64 (not NaN) to a uint64 in the same order; keyFloat inverts it.
func floatKey(f float64) uint64 {
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

func keyFloat(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// UTest is the outcome of MannWhitney: the two-sided Mann-Whitney U test of two samples of
// times, as benchstat runs it, with the confidence interval of their ratio.
type UTest struct {
	// P is the two-sided p-value (benchmath.AssumeNothing); N1 and N2 are the numbers of
	// samples compared.
	P      float64
	N1, N2 int
	// MinP is the smallest p-value samples of these sizes can give: above the level of the
	// test, no difference can be significant (too few samples).
	MinP float64
	// RatioLo and RatioHi bound the ratio of new times over old at level 1-alpha or more
	// (Moses' interval of the shift of log times); both 0 when the samples are too few for
	// a finite interval.
	RatioLo, RatioHi float64
}

// MannWhitney tests whether the times of new differ from those of old, at level alpha
// (0: DefaultAlpha), the way Compare and benchstat do. Both samples must hold positive
// times; an empty one gives P 1.
func MannWhitney(old, new []time.Duration, alpha float64) UTest {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	u := UTest{P: 1, N1: len(old), N2: len(new), MinP: uMinP(len(old), len(new))}
	if len(old) == 0 || len(new) == 0 {
		return u
	}
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	xs, ys := seconds(old), seconds(new)
	res := benchmath.AssumeNothing.Compare(benchmath.NewSample(xs, th), benchmath.NewSample(ys, th))
	u.P, u.N1, u.N2 = res.P, res.N1, res.N2
	u.MinP = uMinP(u.N1, u.N2)
	if lo, hi, ok := shiftCI(logs(xs), logs(ys), alpha); ok {
		u.RatioLo, u.RatioHi = math.Exp(lo), math.Exp(hi)
	}
	return u
}

// UMinSamples returns the smallest number of samples a side for which the U test at level
// alpha can find any difference significant (4 at alpha 0.05).
func UMinSamples(alpha float64) int { return uMinSamples(alpha) }
