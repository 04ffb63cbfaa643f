package regress

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// series returns runs of the given medians, one build each.
func series(medians []time.Duration) []Run {
	out := make([]Run, len(medians))
	for i, m := range medians {
		out[i] = Run{ID: int64(100 + i), Build: "c" + string(rune('a'+i%26)), Median: m}
	}
	return out
}

// noisy returns n medians around level, off by a factor exp(N(0, sigma)).
func noisy(rng *rand.Rand, n int, level time.Duration, sigma float64) []time.Duration {
	return lognormal(rng, n, level, sigma)
}

func TestDetectStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	ms := append(noisy(rng, 20, time.Millisecond, 0.02), noisy(rng, 15, 1100*time.Microsecond, 0.02)...)
	steps := Detect(series(ms), DetectOptions{})
	if len(steps) != 1 {
		t.Fatalf("steps %+v, want one", steps)
	}
	s := steps[0]
	if s.Index != 20 || s.Run != 120 || s.Build != series(ms)[20].Build {
		t.Errorf("step at index %d (run %d), want 20 (run 120)", s.Index, s.Run)
	}
	if math.Abs(s.Ratio-1.1) > 0.03 || math.Abs(float64(s.Before)/1e6-1) > 0.02 || math.Abs(float64(s.After)/1.1e6-1) > 0.02 {
		t.Errorf("step %v -> %v ratio %.3f, want 1ms -> 1.1ms, 1.1", s.Before, s.After, s.Ratio)
	}
}

func TestDetectTwoSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var ms []time.Duration
	ms = append(ms, noisy(rng, 12, time.Millisecond, 0.01)...)
	ms = append(ms, noisy(rng, 12, 1500*time.Microsecond, 0.01)...)
	ms = append(ms, noisy(rng, 12, 900*time.Microsecond, 0.01)...)
	steps := Detect(series(ms), DetectOptions{})
	if len(steps) != 2 || steps[0].Index != 12 || steps[1].Index != 24 {
		t.Fatalf("steps %+v, want at 12 and 24", steps)
	}
	if steps[0].Ratio < 1.4 || steps[1].Ratio > 0.65 {
		t.Errorf("ratios %.2f and %.2f, want about 1.5 and 0.6", steps[0].Ratio, steps[1].Ratio)
	}
}

// TestDetectReturns: a slowdown that is fixed some runs later is two steps, slower then
// back, though no single split of the series saves anything (each side mixes the levels).
func TestDetectReturns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var ms []time.Duration
	ms = append(ms, noisy(rng, 10, time.Millisecond, 0.01)...)
	ms = append(ms, noisy(rng, 10, 1500*time.Microsecond, 0.01)...)
	ms = append(ms, noisy(rng, 10, time.Millisecond, 0.01)...)
	steps := Detect(series(ms), DetectOptions{})
	if len(steps) != 2 || steps[0].Index != 10 || steps[1].Index != 20 {
		t.Fatalf("steps %+v, want at 10 and 20", steps)
	}
	if math.Abs(steps[0].Ratio-1.5) > 0.05 || math.Abs(steps[1].Ratio-1/1.5) > 0.05 {
		t.Errorf("ratios %.2f and %.2f, want 1.5 and 0.67", steps[0].Ratio, steps[1].Ratio)
	}
}

// TestDetectNoise: pure noise, normal or with heavy tails, makes no step in at least 99
// series of 100.
func TestDetectNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{8, 20, 60, 200} {
		false_ := 0
		for trial := range 200 {
			ms := noisy(rng, n, time.Millisecond, 0.03)
			if trial%2 == 1 { // heavy tails: a few runs far off
				for i := range ms {
					if rng.IntN(10) == 0 {
						ms[i] = time.Duration(float64(ms[i]) * (1 + 0.3*rng.Float64()))
					}
				}
			}
			if steps := Detect(series(ms), DetectOptions{}); len(steps) > 0 {
				false_++
			}
		}
		if false_ > 2 {
			t.Errorf("%d runs: steps found in %d of 200 series of noise, want at most 2", n, false_)
		}
	}
}

// TestDetectOutliers: single runs far off, even 3x, are no step.
func TestDetectOutliers(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	ms := noisy(rng, 40, time.Millisecond, 0.01)
	ms[5], ms[17], ms[30], ms[39] = 3*time.Millisecond, 300*time.Microsecond, 2*time.Millisecond, 3*time.Millisecond
	if steps := Detect(series(ms), DetectOptions{}); len(steps) != 0 {
		t.Errorf("steps %+v in a flat series with outliers, want none", steps)
	}
	// With a step as well, the step is found where it is (the outlier just before it,
	// put back, would be as well placed after it).
	ms[39] = time.Millisecond
	ms = append(ms, noisy(rng, 10, 1200*time.Microsecond, 0.01)...)
	ms[44] = 5 * time.Millisecond
	steps := Detect(series(ms), DetectOptions{})
	if len(steps) != 1 || steps[0].Index != 40 {
		t.Errorf("steps %+v, want one at 40", steps)
	}
}

// TestDetectEdges: runs without a median are skipped (indexes stay those given), short
// series have no step, identical medians none, and small steps are merged away.
func TestDetectEdges(t *testing.T) {
	ms := []time.Duration{}
	for range 6 {
		ms = append(ms, time.Millisecond)
	}
	ms = append(ms, 0) // a failed run
	for range 6 {
		ms = append(ms, 2*time.Millisecond)
	}
	steps := Detect(series(ms), DetectOptions{})
	if len(steps) != 1 || steps[0].Index != 7 || math.Abs(steps[0].Ratio-2) > 1e-9 || steps[0].Before != time.Millisecond {
		t.Errorf("steps %+v, want one at index 7, 1ms -> 2ms", steps)
	}
	if s := Detect(series([]time.Duration{time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond}), DetectOptions{}); s != nil {
		t.Errorf("3 runs: steps %+v, want none", s)
	}
	flat := make([]time.Duration, 30)
	for i := range flat {
		flat[i] = time.Millisecond
	}
	if s := Detect(series(flat), DetectOptions{}); s != nil {
		t.Errorf("identical medians: steps %+v", s)
	}
	// A 0.5% step on a quiet series is below MinChange; at MinChange 0.001 it is found.
	var small []time.Duration
	for i := range 40 {
		if i < 20 {
			small = append(small, time.Millisecond)
		} else {
			small = append(small, 1005*time.Microsecond)
		}
	}
	small[3] = 1001 * time.Microsecond
	if s := Detect(series(small), DetectOptions{}); s != nil {
		t.Errorf("a 0.5%% step: %+v, want none at the default MinChange", s)
	}
	if s := Detect(series(small), DetectOptions{MinChange: 0.001, Penalty: 5}); len(s) != 1 || s[0].Index != 20 {
		t.Errorf("a 0.5%% step at MinChange 0.1%%: %+v, want one at 20", s)
	}
}

func TestPrefixCosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	xs := make([]float64, 50)
	for i := range xs {
		xs[i] = math.Round(rng.NormFloat64()*10) / 10 // ties too
	}
	got := prefixCosts(xs)
	for j := 0; j <= len(xs); j++ {
		m := median(xs[:j])
		if j > 0 && j%2 == 0 { // the lower median: any point between the middle two gives the same cost
			m = xs[0]
			s := append([]float64(nil), xs[:j]...)
			sortFloats(s)
			m = s[j/2-1]
		}
		want := 0.0
		for _, x := range xs[:j] {
			want += math.Abs(x - m)
		}
		if math.Abs(got[j]-want) > 1e-9 {
			t.Fatalf("cost of the first %d = %v, want %v", j, got[j], want)
		}
	}
}

func sortFloats(s []float64) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
