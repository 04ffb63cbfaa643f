package bench

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

// TestCompareOptionsValidate: thresholds and alphas that would make the gate meaningless
// are refused; an infinite threshold once hid a 10x slowdown.
func TestCompareOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		opt CompareOptions
		ok  bool
	}{
		{DefaultCompareOptions, true},
		{CompareOptions{}, true},
		{CompareOptions{Threshold: 0.99, Alpha: 0.01}, true},
		{CompareOptions{Threshold: math.NaN()}, false},
		{CompareOptions{Threshold: math.Inf(1)}, false},
		{CompareOptions{Threshold: -0.01}, false},
		{CompareOptions{Threshold: 1}, false},
		{CompareOptions{Threshold: 0.05, Alpha: math.NaN()}, false},
		{CompareOptions{Threshold: 0.05, Alpha: 1}, false},
		{CompareOptions{Threshold: 0.05, Alpha: -0.5}, false},
	} {
		err := tc.opt.Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, engine.ErrInvalidArg)) {
			t.Errorf("Validate(%+v) = %v, want ok %v", tc.opt, err, tc.ok)
		}
	}
}

// TestGate: a comparison gates on regressions and on every case the new report cannot
// vouch for: missing, failed, differing from the reference, without a valid time, skipped
// where the old one ran, a failed device, no results at all.
func TestGate(t *testing.T) {
	base := []float64{100, 101, 99, 102, 98, 100.5}
	ok := func(c string) Result { return sampled(c, base...) }
	failed := ok("failed")
	failed.Err = "launch: out of resources"
	mismatch := ok("mismatch")
	mismatch.Err, mismatch.Mismatch = "differs at [3]", true
	invalid := ok("invalid")
	invalid.Invalid = InvalidPrefix + "3 of 3 device times are not positive"
	skipped := Result{Case: "skipped", Size: 1024, Skipped: "no fp64"}
	bothSkipped := Result{Case: "both skipped", Size: 1024, Skipped: "no fp64"}
	unverified := ok("unverified")
	unverified.Verified = false
	old := report(ok("same"), ok("gone"), ok("failed"), ok("mismatch"), ok("invalid"), ok("skipped"), bothSkipped, ok("unverified"))
	cur := report(ok("same"), failed, mismatch, invalid, skipped, bothSkipped, unverified, ok("new"))
	cmp := Compare(old, cur, DefaultCompareOptions)
	want := []string{"gone 1K: missing", "failed 1K: failed in the new report: launch", "mismatch 1K: differs from the reference",
		"invalid 1K: invalid measurement: 3 of 3", "skipped 1K: skipped in the new report", "unverified 1K: not verified"}
	if len(cmp.Problems) != len(want) {
		t.Fatalf("problems %q, want %d", cmp.Problems, len(want))
	}
	for i, w := range want {
		if !strings.Contains(cmp.Problems[i], w) {
			t.Errorf("problem %d: %q, want %q", i, cmp.Problems[i], w)
		}
	}
	err := cmp.Gate()
	if err == nil || !strings.Contains(err.Error(), "6 cases or devices the new report cannot vouch for") || !strings.Contains(err.Error(), "gone") {
		t.Errorf("Gate: %v", err)
	}
	if cmp.Regressions() != 0 {
		t.Errorf("%d regressions", cmp.Regressions())
	}
	// A clean comparison passes; a regression alone fails.
	if err := Compare(old, old, DefaultCompareOptions).Gate(); err != nil {
		t.Errorf("a report against itself: %v", err)
	}
	slow := make([]float64, len(base))
	for i, v := range base {
		slow[i] = 10 * v
	}
	if err := Compare(report(ok("a")), report(sampled("a", slow...)), DefaultCompareOptions).Gate(); err == nil || !strings.Contains(err.Error(), "1 cases slower") {
		t.Errorf("10x slower: %v", err)
	}
	// A new report without results, or with a failed device, vouches for nothing.
	empty := report()
	if err := Compare(old, empty, DefaultCompareOptions).Gate(); err == nil || !strings.Contains(err.Error(), "no results") {
		t.Errorf("empty new report: %v", err)
	}
	broken := report(ok("same"))
	broken.Devices[0].Err = "overheads: build failed"
	if err := Compare(report(ok("same")), broken, DefaultCompareOptions).Gate(); err == nil || !strings.Contains(err.Error(), "device opencl:0:0 failed") {
		t.Errorf("failed device: %v", err)
	}
}

// TestShiftCIScales: Moses' interval by bisection agrees with the sorted list of every
// difference, with ties and negative values, and takes no memory in n1*n2: 20,000 runs a
// side are 4e8 differences, 3.2 GB as a list.
func TestShiftCIScales(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range [][2]int{{1, 1}, {3, 5}, {5, 5}, {40, 60}, {300, 200}} {
		xs, ys := make([]float64, n[0]), make([]float64, n[1])
		for i := range xs {
			xs[i] = math.Round(rng.NormFloat64()*4) / 4 // ties
		}
		for i := range ys {
			ys[i] = math.Round(rng.NormFloat64()*4)/4 + 0.3
		}
		var all []float64
		for _, x := range xs {
			for _, y := range ys {
				all = append(all, y-x)
			}
		}
		slices.Sort(all)
		sx, sy := slices.Clone(xs), slices.Clone(ys)
		slices.Sort(sx)
		slices.Sort(sy)
		for _, k := range []int{1, 2, len(all) / 3, len(all)} {
			if k < 1 || k > len(all) {
				continue
			}
			if got := kthDiff(sx, sy, int64(k)); got != all[k-1] {
				t.Errorf("%v: difference %d = %v, want %v", n, k, got, all[k-1])
			}
		}
		// The cut agrees with the definition: P(U <= k-1) <= alpha/2 < P(U <= k).
		k := uCut(n[0], n[1], 0.025)
		if (k > 0 && uCDF(n[0], n[1], float64(k-1)) > 0.025) || uCDF(n[0], n[1], float64(k)) <= 0.025 {
			t.Errorf("%v: cut %d", n, k)
		}
	}
	n := 20_000
	xs, ys := make([]time.Duration, n), make([]time.Duration, n)
	for i := range xs {
		xs[i] = time.Duration(1000 + rng.IntN(100))
		ys[i] = time.Duration(1100 + rng.IntN(100))
	}
	old, cur := report(Result{Case: "c", Size: 1, Verified: true, Stats: Summarize(xs)}), report(Result{Case: "c", Size: 1, Verified: true, Stats: Summarize(ys)})
	ch := Compare(old, cur, DefaultCompareOptions).Changes[0]
	// Uniform on [1000, 1100) against [1100, 1200): a shift of log times near log(1149.5/1049.5).
	if ch.Verdict != VerdictSlower || !(ch.RatioLo > 1.09 && ch.RatioLo < 1149.5/1049.5 && 1149.5/1049.5 < ch.RatioHi && ch.RatioHi < 1.10) {
		t.Errorf("20,000 runs a side: ratio %v, CI [%v, %v]", ch.Ratio, ch.RatioLo, ch.RatioHi)
	}
}
