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
}

// Summarize computes the statistics of the samples (which it sorts).
func Summarize(samples []time.Duration) Stats {
	if len(samples) == 0 {
		return Stats{}
	}
	slices.Sort(samples)
	n := len(samples)
	med := samples[n/2]
	if n%2 == 0 {
		med = (samples[n/2-1] + samples[n/2]) / 2
	}
	return Stats{Runs: n, Median: med, Min: samples[0], Max: samples[n-1]}
}
