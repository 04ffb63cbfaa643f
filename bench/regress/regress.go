package regress

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// The rule's parameters and their defaults (see the package comment).
const (
	// DefaultAlpha is the level of the U test: benchstat's and prism compare's.
	DefaultAlpha = bench.DefaultAlpha
	// DefaultK is how many robust standard deviations of a run's median a change must
	// exceed to be called.
	DefaultK = 4.0
	// MinThreshold is the smallest learnt threshold: changes of 1% or less are never called.
	MinThreshold = 0.01
	// DefaultThreshold is the threshold of a series without enough history to learn its
	// noise from: prism compare's.
	DefaultThreshold = bench.DefaultThreshold
	// MinHistory is the fewest runs, in builds of two runs or more, the noise is learnt from.
	MinHistory = 6
)

// Options tune Decide and LearnNoise. The zero value is the defaults.
type Options struct {
	// Alpha is the level of the U test; 0: DefaultAlpha.
	Alpha float64
	// Threshold, when above 0, is the fixed relative change of the median a change must
	// exceed, in place of the learnt one (0.05 is 5%).
	Threshold float64
	// K multiplies the learnt standard deviation; 0: DefaultK.
	K float64
}

// Validate returns an error wrapping engine.ErrInvalidArg for options no rule can use:
// an Alpha outside [0, 1), a Threshold outside [0, bench.MaxThreshold), a K below 0 (NaN
// and infinities included).
func (o Options) Validate() error {
	switch {
	case !(o.Alpha >= 0 && o.Alpha < 1):
		return fmt.Errorf("regress: alpha %v must lie strictly between 0 and 1: %w", o.Alpha, engine.ErrInvalidArg)
	case !(o.Threshold >= 0 && o.Threshold < bench.MaxThreshold):
		return fmt.Errorf("regress: threshold %v must be at least 0 and below %v (a relative change: 0.05 is 5%%): %w", o.Threshold, bench.MaxThreshold, engine.ErrInvalidArg)
	case !(o.K >= 0 && o.K < math.Inf(1)):
		return fmt.Errorf("regress: K %v must be a finite number, at least 0: %w", o.K, engine.ErrInvalidArg)
	}
	return nil
}

func (o Options) alpha() float64 {
	if o.Alpha > 0 {
		return o.Alpha
	}
	return DefaultAlpha
}

func (o Options) k() float64 {
	if o.K > 0 {
		return o.K
	}
	return DefaultK
}

// Run is one run's result of a series: what LearnNoise and Detect read.
type Run struct {
	ID    int64     // the run's ID in the store
	Build string    // the build (commit) that ran: runs of one build are repeats
	Date  time.Time // the start of the run
	// Median is the run's median time; a run without a valid time (0) is left out.
	Median time.Duration
}

// Noise is what a series' history says about its run-to-run spread, and the threshold
// that follows.
type Noise struct {
	// Sigma is the robust standard deviation of the log of a run's median among runs of
	// one build (about the relative spread: 0.02 is 2%); 0 when not learnt.
	Sigma float64
	// Runs and Builds count the runs it was learnt from and their builds (only builds of
	// two runs or more count).
	Runs, Builds int
	// Threshold is the relative change of the median a change must exceed.
	Threshold float64
	// Source says where Threshold comes from: SourceLearnt, SourceDefault or SourceFixed.
	Source string
}

// Sources of a Noise's threshold.
const (
	SourceLearnt  = "learnt"  // from the series' history
	SourceDefault = "default" // too little history: DefaultThreshold
	SourceFixed   = "fixed"   // Options.Threshold
)

// LearnNoise learns a series' noise from its history: runs of one fingerprint, of any
// builds (the caller leaves out the run under test). Runs of one build are repeats: the
// spread of their medians is the noise, whatever steps lie between builds. With fewer than
// MinHistory runs in builds of two or more, the threshold is DefaultThreshold;
// Options.Threshold, when set, replaces it. Runs without a Build (a binary built without
// version control information) count as one build: should they be of several, their steps
// raise the threshold, never lower it.
func LearnNoise(history []Run, opt Options) Noise {
	byBuild := map[string][]float64{}
	var order []string
	for _, r := range history {
		if r.Median <= 0 {
			continue
		}
		b := r.Build
		if _, ok := byBuild[b]; !ok {
			order = append(order, b)
		}
		byBuild[b] = append(byBuild[b], math.Log(float64(r.Median)))
	}
	var devs []float64 // |deviation from the build's median|, scaled to a standard deviation's
	var n Noise
	for _, b := range order {
		xs := byBuild[b]
		if len(xs) < 2 {
			continue
		}
		n.Builds++
		n.Runs += len(xs)
		m := median(xs)
		// A deviation from a median of the group itself is smaller than from the true
		// level: by about sqrt((k-1)/k) for k values.
		c := math.Sqrt(float64(len(xs)) / float64(len(xs)-1))
		for _, x := range xs {
			devs = append(devs, c*math.Abs(x-m))
		}
	}
	if n.Runs >= MinHistory {
		n.Sigma = madScale * medianNonzero(devs, len(devs)-n.Builds)
	}
	switch {
	case opt.Threshold > 0:
		n.Threshold, n.Source = opt.Threshold, SourceFixed
	case n.Runs >= MinHistory:
		n.Threshold, n.Source = math.Min(math.Max(MinThreshold, opt.k()*n.Sigma), math.Nextafter(bench.MaxThreshold, 0)), SourceLearnt
	default:
		n.Threshold, n.Source = DefaultThreshold, SourceDefault
	}
	return n
}

// madScale turns a median absolute deviation into a normal distribution's standard
// deviation.
const madScale = 1.4826

// medianNonzero returns the median of xs, less the zeros a group of odd size contributes
// by its own median (one per build): keep is how many values count, the largest of xs.
func medianNonzero(xs []float64, keep int) float64 {
	if keep < 1 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return median(s[len(s)-keep:])
}

// Verdict is what Decide says of a series.
type Verdict string

// Verdicts of a series. Decide gives the first three; the CLI adds the others where no
// decision is possible.
const (
	Regression    Verdict = "regression"
	Improvement   Verdict = "improvement"
	NoChange      Verdict = "no change"
	NotComparable Verdict = "not comparable" // unlike device fingerprints
	Missing       Verdict = "missing"        // no timed result on one side
	Failed        Verdict = "failed"         // the new run failed the case
)

// Decision is Decide's verdict on a series, with the figures it rests on.
type Decision struct {
	Verdict Verdict
	// Old and New are the two runs' medians; Ratio is New/Old (above 1 is slower).
	Old, New time.Duration
	Ratio    float64
	// Test is the U test of the two samples (bench.MannWhitney).
	Test bench.UTest
	// Alpha is the level the test was held to; Threshold the relative change of the
	// median that was needed, from the noise.
	Alpha     float64
	Threshold float64
	// Note says why no change was called where the samples could not tell: too few for
	// the U test to reach Alpha.
	Note string
}

// Decide compares the samples of a new run of a series with a baseline's: a regression
// (an improvement) when the U test finds them different at level Alpha and the new median
// is slower (faster) than the old by more than noise.Threshold, as a relative change; no
// change otherwise. Samples must be positive times; either side empty is no change, with
// a note.
func Decide(old, new []time.Duration, noise Noise, opt Options) Decision {
	d := Decision{Verdict: NoChange, Alpha: opt.alpha(), Threshold: noise.Threshold}
	if opt.Threshold > 0 {
		d.Threshold = opt.Threshold
	}
	if len(old) == 0 || len(new) == 0 {
		d.Note = "no samples to compare"
		return d
	}
	d.Old, d.New = medianDuration(old), medianDuration(new)
	d.Ratio = float64(d.New) / float64(d.Old)
	d.Test = bench.MannWhitney(old, new, d.Alpha)
	switch {
	case d.Test.MinP > d.Alpha:
		d.Note = fmt.Sprintf("need >= %d samples", bench.UMinSamples(d.Alpha))
	case d.Test.P <= d.Alpha && d.Ratio-1 > d.Threshold:
		d.Verdict = Regression
	case d.Test.P <= d.Alpha && 1-d.Ratio > d.Threshold:
		d.Verdict = Improvement
	}
	return d
}

// median returns the median of xs (sorted or not; not modified); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianDuration returns the median of ds.
func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
