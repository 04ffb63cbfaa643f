package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Figures are what an op measures beside its time (kernels.FigureReporter, Result.Figures):
// named numbers whose name ends in their unit, "_ns" for nanoseconds.

// finiteFigures returns figs without its non-finite values, which JSON cannot hold; nil
// when none is left.
func finiteFigures(figs map[string]float64) map[string]float64 {
	var out map[string]float64
	for k, v := range figs {
		if !finite(v) {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		out[k] = v
	}
	return out
}

// FormatFigures writes figures for people, in the order of their names: a name ending in
// "_ns" without the suffix and with its value as a duration ("serial 12.30ms"), the others
// with three significant digits ("hidden_fraction 0.623").
func FormatFigures(figs map[string]float64) string {
	names := make([]string, 0, len(figs))
	for k := range figs {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		v := figs[k]
		if base, ok := strings.CutSuffix(k, "_ns"); ok && finite(v) && math.Abs(v) < math.MaxInt64 {
			parts[i] = base + " " + FormatDuration(time.Duration(v))
			continue
		}
		parts[i] = fmt.Sprintf("%s %.3g", k, v)
	}
	return strings.Join(parts, ", ")
}

// FiguresText writes the result's figures for people (FormatFigures), then each figure
// that means nothing on its device as n/a with why: "..., speedup 1.04; hidden_fraction n/a
// (a CPU device's copies are ...)". Empty when the result has neither.
func (r Result) FiguresText() string {
	s := FormatFigures(r.Figures)
	names := make([]string, 0, len(r.FiguresNA))
	for k := range r.FiguresNA {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if s != "" {
			s += "; "
		}
		s += k + " n/a (" + r.FiguresNA[k] + ")"
	}
	return s
}

// FormatDuration writes d with a unit that keeps three significant digits (1.23ms).
func FormatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	}
}
