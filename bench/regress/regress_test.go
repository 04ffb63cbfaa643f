package regress

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

// lognormal returns n times around level, each off by a factor exp(N(0, sigma)).
func lognormal(rng *rand.Rand, n int, level time.Duration, sigma float64) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(float64(level) * math.Exp(sigma*rng.NormFloat64()))
	}
	return out
}

// builds returns the history of runs of several builds, perRun runs each, each build at
// its own level (steps between builds) and each run's median off by sigma.
func builds(rng *rand.Rand, levels []time.Duration, perBuild int, sigma float64) []Run {
	var out []Run
	for b, l := range levels {
		for _, m := range lognormal(rng, perBuild, l, sigma) {
			out = append(out, Run{ID: int64(len(out) + 1), Build: string(rune('a' + b)), Median: m})
		}
	}
	return out
}

func TestLearnNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	// Builds a whole 30% apart: the steps between builds are no noise.
	hist := builds(rng, []time.Duration{time.Millisecond, 1300 * time.Microsecond, 900 * time.Microsecond, time.Millisecond}, 8, 0.02)
	n := LearnNoise(hist, Options{})
	if n.Source != SourceLearnt || n.Runs != 32 || n.Builds != 4 {
		t.Fatalf("noise = %+v, want learnt from 32 runs of 4 builds", n)
	}
	if n.Sigma < 0.014 || n.Sigma > 0.028 {
		t.Errorf("sigma = %.4f, want about 0.02", n.Sigma)
	}
	if want := DefaultK * n.Sigma; math.Abs(n.Threshold-want) > 1e-12 {
		t.Errorf("threshold = %v, want K x sigma = %v", n.Threshold, want)
	}

	quiet := LearnNoise(builds(rng, []time.Duration{time.Millisecond}, 10, 0.0005), Options{})
	if quiet.Threshold != MinThreshold {
		t.Errorf("a quiet series' threshold = %v, want the floor %v", quiet.Threshold, MinThreshold)
	}

	// Too little history: runs of one build each, or too few runs.
	var singles []Run
	for i := range 20 {
		singles = append(singles, Run{ID: int64(i), Build: string(rune('a' + i)), Median: time.Millisecond})
	}
	few := builds(rng, []time.Duration{time.Millisecond}, MinHistory-1, 0.02)
	for name, h := range map[string][]Run{"none": nil, "one build each": singles, "few": few} {
		if n := LearnNoise(h, Options{}); n.Source != SourceDefault || n.Threshold != DefaultThreshold || n.Sigma != 0 {
			t.Errorf("%s: noise = %+v, want the default threshold", name, n)
		}
	}
	if n := LearnNoise(hist, Options{Threshold: 0.07}); n.Source != SourceFixed || n.Threshold != 0.07 {
		t.Errorf("fixed: noise = %+v, want threshold 0.07", n)
	}
	if n := LearnNoise(hist, Options{K: 2}); math.Abs(n.Threshold-2*n.Sigma) > 1e-12 {
		t.Errorf("K 2: threshold %v, want %v", n.Threshold, 2*n.Sigma)
	}
	// Runs of no known build count as one: their spread is the noise.
	var unknown []Run
	for _, r := range builds(rng, []time.Duration{time.Millisecond}, 10, 0.02) {
		r.Build = ""
		unknown = append(unknown, r)
	}
	if n := LearnNoise(unknown, Options{}); n.Source != SourceLearnt || n.Runs != 10 || n.Builds != 1 || n.Sigma < 0.01 || n.Sigma > 0.035 {
		t.Errorf("runs of no known build: %+v, want learnt from 10 runs, sigma about 0.02", n)
	}
	// A run that failed (no median) is left out.
	withFailed := append(append([]Run(nil), hist...), Run{ID: 99, Build: "a"})
	if n := LearnNoise(withFailed, Options{}); n.Runs != 32 {
		t.Errorf("with a failed run: learnt from %d runs, want 32", n.Runs)
	}
}

func TestDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	base := lognormal(rng, 10, time.Millisecond, 0.01)
	noise := Noise{Threshold: 0.05, Source: SourceLearnt}
	tests := []struct {
		name string
		new  []time.Duration
		opt  Options
		want Verdict
		note string
	}{
		{"20% slower", lognormal(rng, 10, 1200*time.Microsecond, 0.01), Options{}, Regression, ""},
		{"20% faster", lognormal(rng, 10, 800*time.Microsecond, 0.01), Options{}, Improvement, ""},
		{"same", lognormal(rng, 10, time.Millisecond, 0.01), Options{}, NoChange, ""},
		// Significant, but within the noise threshold.
		{"3% slower", lognormal(rng, 10, 1030*time.Microsecond, 0.001), Options{}, NoChange, ""},
		// The same with a fixed threshold of 1%.
		{"3% slower, --threshold 0.01", lognormal(rng, 10, 1030*time.Microsecond, 0.001), Options{Threshold: 0.01}, Regression, ""},
		// 20% slower, but three samples can never reach p <= 0.05.
		{"too few", lognormal(rng, 3, 1200*time.Microsecond, 0.01), Options{}, NoChange, "need >= 4 samples"},
		{"none", nil, Options{}, NoChange, "no samples to compare"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := base
			if tt.name == "too few" {
				b = base[:3]
			}
			d := Decide(b, tt.new, noise, tt.opt)
			if d.Verdict != tt.want || d.Note != tt.note {
				t.Fatalf("verdict %q (%s), want %q (%s): ratio %.3f p %.3g threshold %v", d.Verdict, d.Note, tt.want, tt.note, d.Ratio, d.Test.P, d.Threshold)
			}
			if tt.want == Regression && !(d.Test.P <= DefaultAlpha && d.Ratio > 1+d.Threshold) {
				t.Errorf("a regression with p %v and ratio %v", d.Test.P, d.Ratio)
			}
		})
	}
	// A noisy series: its learnt threshold keeps a 10% change from being called.
	loud := Noise{Threshold: 0.2, Source: SourceLearnt}
	if d := Decide(base, lognormal(rng, 10, 1100*time.Microsecond, 0.01), loud, Options{}); d.Verdict != NoChange || d.Threshold != 0.2 {
		t.Errorf("10%% slower with a 20%% threshold: %q at threshold %v, want no change", d.Verdict, d.Threshold)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{}, {Alpha: 0.01, Threshold: 0.1, K: 3}} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for _, o := range []Options{{Alpha: 1}, {Alpha: -0.1}, {Alpha: math.NaN()}, {Threshold: 1}, {Threshold: -1},
		{Threshold: math.Inf(1)}, {K: -1}, {K: math.Inf(1)}} {
		if err := o.Validate(); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%+v: err %v, want engine.ErrInvalidArg", o, err)
		}
	}
}
