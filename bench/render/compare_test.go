package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

// sampled returns an OK result of case c timed at the given µs, one sample per run.
func sampled(c string, us ...float64) bench.Result {
	samples := make([]time.Duration, len(us))
	for i, v := range us {
		samples[i] = time.Duration(v * float64(time.Microsecond))
	}
	return bench.Result{Case: c, Size: 1024, Verified: true, Stats: bench.Summarize(samples)}
}

// TestComparisonTable renders the comparison of bench's TestCompare: the counts of each
// verdict, the confidence interval's heading, the test's p-value and sample counts, and
// why a case has no verdict.
func TestComparisonTable(t *testing.T) {
	base := []float64{100, 101, 99, 102, 98, 100.5, 99.5, 101.5}
	scaled := func(f float64, xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = f * x
		}
		return out
	}
	old := report(sampled("same", base...), sampled("slower", base...), sampled("faster", base...),
		sampled("tiny", base...), sampled("few", 100, 101, 99), sampled("noisy", 100, 150, 60, 130, 80, 110),
		result("legacy", 100, 98, 102), sampled("gone", base...))
	cur := report(sampled("same", base...), sampled("slower", scaled(1.2, base)...), sampled("faster", scaled(0.8, base)...),
		sampled("tiny", scaled(1.03, base)...), sampled("few", 200, 201, 199), sampled("noisy", 120, 70, 140, 95, 160, 105),
		result("legacy", 120, 118, 125), sampled("new", base...))
	cmp := bench.Compare(old, cur, bench.DefaultCompareOptions)
	var buf bytes.Buffer
	if err := Comparison(&buf, cmp); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"2 slower, 1 faster", "2 on one side only", "95% CI", "p=1.000 n=8+8", "~ (need >= 4 samples)"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, buf.String())
		}
	}
}
