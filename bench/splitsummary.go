package bench

import (
	"math"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// SpeedupInterval bounds the split's Speedup at level 1-alpha (0: DefaultAlpha): the
// interval of the ratio of the paired device's times over the split's (Moses' interval of
// the shift of log times, as Compare gives for two runs), from the samples of the two
// timings. ok is false where the split has no paired timing, where either timing kept no
// samples, or where the samples are too few for a finite interval. An interval that holds
// 1 says the runs cannot tell the split from the device alone.
func (s SplitResult) SpeedupInterval(alpha float64) (lo, hi float64, ok bool) {
	if s.Paired == nil || len(s.Paired.Samples) == 0 || len(s.Stats.Samples) == 0 {
		return 0, 0, false
	}
	u := MannWhitney(s.Stats.Samples, s.Paired.Samples, alpha)
	if u.RatioLo <= 0 || u.RatioHi <= 0 {
		return 0, 0, false
	}
	return u.RatioLo, u.RatioHi, true
}

// SplitSummary is how the report's splits of one placement of the data over one set of
// devices compare with the fastest device alone: the geometric mean and the smallest of
// their speedups (SplitResult.Speedup; above 1: the split is faster), naming the case of
// the smallest with its interval.
type SplitSummary struct {
	// Devices are the devices' IDs joined by "+"; Placement is where the data lived
	// (PlacementHost, PlacementSharded).
	Devices   string `json:"devices"`
	Placement string `json:"placement"`
	// Cases counts the verified splits with a speedup; Split those of them the planner
	// gave to more than one device (the others ran on one device, the one it predicted
	// fastest, through the split's path).
	Cases   int     `json:"cases"`
	Split   int     `json:"split"`
	GeoMean float64 `json:"geomean"`
	// Worst is the smallest speedup, of the case WorstCase at WorstSize; WorstLow and
	// WorstHigh bound it at level 1-DefaultAlpha (SpeedupInterval; both 0 where it has no
	// interval).
	Worst     float64 `json:"worst"`
	WorstCase string  `json:"worst_case"`
	WorstSize int     `json:"worst_size"`
	WorstLow  float64 `json:"worst_low,omitempty"`
	WorstHigh float64 `json:"worst_high,omitempty"`
}

// SplitSummaries returns one SplitSummary per set of devices and placement of the
// report's splits, in the order of their first case; failed splits and splits without a
// speedup are left out, and so are groups without a case.
func (r *Report) SplitSummaries() []SplitSummary {
	var out []SplitSummary
	var speedups [][]float64 // per summary
	for _, s := range r.Splits {
		if !s.Verified || s.Speedup <= 0 || math.IsInf(s.Speedup, 0) || math.IsNaN(s.Speedup) {
			continue
		}
		place := s.Where()
		devs := strings.Join(s.Devices, "+")
		i := 0
		for i < len(out) && (out[i].Devices != devs || out[i].Placement != place) {
			i++
		}
		if i == len(out) {
			out = append(out, SplitSummary{Devices: devs, Placement: place})
			speedups = append(speedups, nil)
		}
		sum := &out[i]
		sum.Cases++
		speedups[i] = append(speedups[i], s.Speedup)
		parts := 0
		for _, sh := range s.Shares {
			if sh.Fraction > 0 {
				parts++
			}
		}
		if parts > 1 {
			sum.Split++
		}
		if sum.Cases == 1 || s.Speedup < sum.Worst {
			sum.Worst, sum.WorstCase, sum.WorstSize = s.Speedup, s.Case, s.Size
			sum.WorstLow, sum.WorstHigh, _ = s.SpeedupInterval(0)
		}
	}
	for i := range out {
		out[i].GeoMean = stat.GeometricMean(speedups[i], nil)
	}
	return out
}
