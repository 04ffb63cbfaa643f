package userkernel

import (
	"fmt"
	"math"
)

// Comparison is an output of one run (a device, a build) compared with the same output of
// a baseline run.
type Comparison struct {
	Output   string `json:"output"`
	Arg      int    `json:"arg"`
	Type     string `json:"type"`
	Device   string `json:"device"`
	Baseline string `json:"baseline"`
	Elements int    `json:"elements"`
	// Differing counts the elements whose bits differ (+0 and -0 count as equal, as do
	// two NaNs).
	Differing int     `json:"differing"`
	MaxAbs    float64 `json:"max_abs_diff"`
	// MaxRel is the largest |a-b| / max(|a|, |b|).
	MaxRel float64 `json:"max_rel_diff"`
	// MaxULP is the largest distance in units in the last place, for floats.
	MaxULP uint64 `json:"max_ulp_diff"`
	// NaNs counts the elements where one device gave a NaN and the other a number.
	NaNs int `json:"nan_mismatches"`
	// Worst is the index of the element that differs most (by ulp for floats, by absolute
	// difference for integers), -1 when none differs.
	Worst         int    `json:"worst_index"`
	WorstBaseline string `json:"worst_baseline_value,omitempty"`
	WorstValue    string `json:"worst_value,omitempty"`
	Exact         bool   `json:"exact"` // integers: must match exactly
	Within        bool   `json:"within_tolerance"`
	// Tolerance is the largest difference in ulp that floats may show.
	Tolerance uint64 `json:"-"`
	// AbsTol and RelTol are the tolerance of CompareWithin with Tolerance.AbsRel: an element
	// passes when |got-want| <= AbsTol + RelTol*|want|.
	AbsTol float64 `json:"abs_tolerance,omitempty"`
	RelTol float64 `json:"rel_tolerance,omitempty"`
	absRel bool
}

// Tolerance is how far a float output may lie from its baseline: ULP units in the last
// place, or with AbsRel |got-want| <= Abs + Rel*|want| (NumPy's allclose rule, want the
// baseline). A NaN against a number never passes; two NaNs are equal. Integers must match
// exactly whatever the tolerance.
type Tolerance struct {
	ULP      uint64
	AbsRel   bool
	Abs, Rel float64
}

// String says the tolerance as its flags would: "4 ulp" or "abs 1e-06, rel 1e-05".
func (t Tolerance) String() string {
	if t.AbsRel {
		return fmt.Sprintf("abs %g, rel %g", t.Abs, t.Rel)
	}
	return fmt.Sprintf("%d ulp", t.ULP)
}

// Compare compares output a of a run (got) with the baseline's (want): floats are within
// the tolerance when no NaN stands against a number and no element differs by more than
// tolULP units in the last place; integers must match exactly. Device and Baseline are
// left for the caller to fill.
func Compare(a *Arg, want, got []byte, tolULP uint64) Comparison {
	return CompareWithin(a, want, got, Tolerance{ULP: tolULP})
}

// CompareWithin is Compare with a tolerance in ulp or absolute and relative (Tolerance).
// With AbsRel the worst element is the one furthest beyond its allowance (|got-want| over
// Abs + Rel*|want|), and Within says that none is beyond it.
func CompareWithin(a *Arg, want, got []byte, tol Tolerance) Comparison {
	c := Comparison{Output: a.Name, Arg: a.Index, Type: a.Type.Name, Elements: a.Len, Worst: -1, Exact: !a.Type.Float, Tolerance: tol.ULP}
	if tol.AbsRel {
		c.absRel, c.AbsTol, c.RelTol = true, tol.Abs, tol.Rel
	}
	worstULP, worstAbs := uint64(0), -1.0
	worstRatio, beyond := -1.0, false
	for i := range a.Len {
		bw, bg := elemBits(a.Type, want, i), elemBits(a.Type, got, i)
		if bw == bg {
			continue
		}
		w, g := ElemFloat(a.Type, want, i), ElemFloat(a.Type, got, i)
		if c.Exact {
			c.Differing++
			d := math.Abs(w - g)
			c.MaxAbs = max(c.MaxAbs, d)
			c.MaxRel = max(c.MaxRel, d/max(math.Abs(w), math.Abs(g)))
			if d > worstAbs {
				worstAbs, c.Worst = d, i
			}
			continue
		}
		wn, gn := math.IsNaN(w), math.IsNaN(g)
		if wn && gn || w == 0 && g == 0 {
			continue
		}
		c.Differing++
		if wn != gn {
			c.NaNs++
			if worstULP < math.MaxUint64 {
				worstULP, c.Worst = math.MaxUint64, i
			}
			continue
		}
		ulp := ulpDistance(bw, bg, a.Type.Size)
		if d := math.Abs(w - g); !math.IsInf(d, 0) && !math.IsNaN(d) {
			c.MaxAbs = max(c.MaxAbs, d)
			c.MaxRel = max(c.MaxRel, d/max(math.Abs(w), math.Abs(g)))
		}
		c.MaxULP = max(c.MaxULP, ulp)
		if tol.AbsRel {
			d := math.Abs(w - g)
			allowed := tol.Abs + tol.Rel*math.Abs(w)
			beyond = beyond || !(d <= allowed)
			ratio := d / allowed
			if math.IsNaN(ratio) || allowed == 0 {
				ratio = math.Inf(1)
			}
			if worstULP < math.MaxUint64 && ratio > worstRatio {
				worstRatio, c.Worst = ratio, i
			}
			continue
		}
		if ulp > worstULP {
			worstULP, c.Worst = ulp, i
		}
	}
	if c.Worst >= 0 {
		c.WorstBaseline, c.WorstValue = ElemString(a.Type, want, c.Worst), ElemString(a.Type, got, c.Worst)
	}
	switch {
	case c.Exact:
		c.Within = c.Differing == 0
	case tol.AbsRel:
		c.Within = c.NaNs == 0 && !beyond
	default:
		c.Within = c.NaNs == 0 && c.MaxULP <= tol.ULP
	}
	return c
}

// ulpDistance returns how many representable values of a float of size bytes lie between
// the bit patterns a and b (neither a NaN), counting across zero.
func ulpDistance(a, b uint64, size int) uint64 {
	bits := 8 * size
	sign := uint64(1) << (bits - 1)
	// ordered maps a pattern onto a line where adjacent floats are adjacent integers, the
	// negatives below the positives, +0 and -0 at the same point.
	ordered := func(u uint64) int64 {
		if u&sign != 0 {
			return -int64(u &^ sign)
		}
		return int64(u)
	}
	x, y := ordered(a), ordered(b)
	if x < y {
		x, y = y, x
	}
	return uint64(x) - uint64(y)
}

// Describe says how the comparison failed, for an error.
func (c *Comparison) Describe() string {
	switch {
	case c.NaNs > 0:
		return fmt.Sprintf("%d NaNs against numbers of %s, first worst at index %d (%s vs %s)", c.NaNs, c.Baseline, c.Worst, c.WorstBaseline, c.WorstValue)
	case c.Exact:
		return fmt.Sprintf("%d of %d elements differ from %s, most at index %d (%s vs %s)", c.Differing, c.Elements, c.Baseline, c.Worst, c.WorstBaseline, c.WorstValue)
	case c.absRel:
		return fmt.Sprintf("differs from %s beyond the tolerance (abs %g, rel %g): worst at index %d (%s vs %s); %d of %d differ, max abs %.3g, max rel %.3g",
			c.Baseline, c.AbsTol, c.RelTol, c.Worst, c.WorstBaseline, c.WorstValue, c.Differing, c.Elements, c.MaxAbs, c.MaxRel)
	}
	return fmt.Sprintf("differs from %s by %d ulp at index %d (%s vs %s), above the tolerance of %d ulp", c.Baseline, c.MaxULP, c.Worst, c.WorstBaseline, c.WorstValue, c.Tolerance)
}
