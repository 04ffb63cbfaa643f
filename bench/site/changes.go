package site

import (
	"github.com/prism-compute/prism/bench/regress"
)

// change is how a point stands against the ones before it in its series.
type change struct {
	// delta is the point's median over the previous valid point's (1.02: 2% slower); 0
	// for the first valid point of a series, or a failed one.
	delta float64
	// step is the change of level that starts at this point, where the detector found
	// one; nil elsewhere.
	step *regress.Step
}

// slower and faster report whether a step starts at the point, and which way.
func (c change) slower() bool { return c.step != nil && c.step.Ratio > 1 }
func (c change) faster() bool { return c.step != nil && c.step.Ratio < 1 }

// markChanges marks the steps of s with bench/regress's detector (regress.Detect: a
// piecewise-constant fit of the log of the run medians, as asv marks its graphs; see
// that package), and each valid point's change from the previous valid one.
func markChanges(s *series, opt regress.DetectOptions) {
	runs := make([]regress.Run, len(s.points))
	var prev *point
	for i, p := range s.points {
		runs[i] = regress.Run{ID: int64(p.run.sum.ID), Build: p.run.sum.Commit, Date: p.run.sum.Date}
		if p.failed != "" {
			continue // no valid median: the detector leaves it out
		}
		runs[i].Median = p.stats.Median
		if prev != nil && prev.stats.Median > 0 {
			p.change.delta = float64(p.stats.Median) / float64(prev.stats.Median)
		}
		prev = p
	}
	for _, st := range regress.Detect(runs, opt) {
		s.points[st.Index].change.step = &st
	}
	for _, p := range s.points {
		if p.change.step != nil {
			s.steps = append(s.steps, p)
		}
	}
}

// lastStep returns the point where the series' latest step starts, nil without one.
func (s *series) lastStep() *point {
	if len(s.steps) == 0 {
		return nil
	}
	return s.steps[len(s.steps)-1]
}
