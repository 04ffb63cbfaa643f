package bench

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestCheckFractions: shares that cannot split the work are refused with the values as
// written; one share per device where the count is known.
func TestCheckFractions(t *testing.T) {
	for _, tc := range []struct {
		f       []float64
		devices int
		want    string // "" accepts
	}{
		{[]float64{0.5, 0.5}, 2, ""},
		{[]float64{0.25, 0.75}, 0, ""},
		{[]float64{1, 0}, 2, ""},
		{[]float64{0.1, 0.2, 0.7}, 3, ""},
		{[]float64{0, 0}, 2, "fractions 0,0 sum to 0, not 1"},
		{[]float64{0.3, 0.3}, 2, "fractions 0.3,0.3 sum to 0.6, not 1"},
		{[]float64{math.NaN(), math.NaN()}, 2, "fraction NaN (share 1 of 2) is not a share of the work, from 0 to 1"},
		{[]float64{math.Inf(1), 0}, 2, "fraction +Inf (share 1 of 2)"},
		{[]float64{-0.5, 1.5}, 2, "fraction -0.5 (share 1 of 2)"},
		{[]float64{0.5, 1.5}, 2, "fraction 1.5 (share 2 of 2)"},
		{[]float64{0.5, 0.5}, 3, "2 fractions (0.5,0.5) for 3 devices"},
		{[]float64{1}, 2, "1 fractions (1) for 2 devices"},
		{nil, 2, "no fractions"},
	} {
		err := CheckFractions(tc.f, tc.devices)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckFractions(%v, %d) = %v", tc.f, tc.devices, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, engine.ErrInvalidArg)):
			t.Errorf("CheckFractions(%v, %d) = %v; want %q", tc.f, tc.devices, err, tc.want)
		}
	}
}

// TestRunSplitsChecksFractionsFirst: RunSplits refuses fractions that do not split the
// work before it measures anything: with no ops at all to run, the fractions are the
// error, and no report is returned.
func TestRunSplitsChecksFractionsFirst(t *testing.T) {
	devs := []*engine.Device{{}, {}} // never used: the fractions are refused first
	rep, err := RunSplits(context.Background(), SplitConfig{Count: 1, Fractions: []float64{0.3, 0.3}}, devs)
	if rep != nil || err == nil || !strings.Contains(err.Error(), "sum to 0.6") {
		t.Errorf("RunSplits with fractions 0.3,0.3: %v, %v", rep, err)
	}
}
