package bench

import (
	"slices"
	"time"
)

// Stats summarises repeated timings of one case.
type Stats struct {
	Runs   int           `json:"runs"`
	Median time.Duration `json:"median_ns"`
	Min    time.Duration `json:"min_ns"`
	Max    time.Duration `json:"max_ns"`
	// Samples are the timings in the order they were taken.
	Samples []time.Duration `json:"samples_ns,omitempty"`
}

// Summarize computes the statistics of the samples (it does not modify them).
func Summarize(samples []time.Duration) Stats {
	if len(samples) == 0 {
		return Stats{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Stats{Runs: n, Median: med, Min: s[0], Max: s[n-1], Samples: slices.Clone(samples)}
}

// medianFloat returns the median of xs (which it sorts), 0 for none.
func medianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[n/2]
}
