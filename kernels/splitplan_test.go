package kernels

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

// TestBalance checks the shares' arithmetic: equal devices split evenly, a device twice
// as fast takes two thirds, a device whose latency exceeds the common time is left out,
// and a device too slow to gain the margin leaves the fastest alone.
func TestBalance(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name  string
		s     []Share
		total float64
		want  []float64
	}{
		{"equal", []Share{{Rate: 100}, {Rate: 100}}, 1000, []float64{0.5, 0.5}},
		{"twice as fast", []Share{{Rate: 100}, {Rate: 200}}, 1200, []float64{1.0 / 3, 2.0 / 3}},
		{"latency", []Share{{Rate: 100, Latency: 0}, {Rate: 100, Latency: 2 * time.Second}}, 100, []float64{1, 0}},
		{"slow cpu", []Share{{Rate: 1000}, {Rate: 10}}, 1000, []float64{1, 0}},
		{"fast second", []Share{{Rate: 10, Latency: ms}, {Rate: 1000, Latency: ms}}, 1000, []float64{0, 1}},
		{"three", []Share{{Rate: 100}, {Rate: 100}, {Rate: 200}}, 400, []float64{0.25, 0.25, 0.5}},
	}
	for _, c := range cases {
		got := balance(c.s, c.total, 0)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-9 {
				t.Errorf("%s: balance = %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// TestAssign checks that units come in granules, sum to the total, and that the last
// device with a share takes the remainder.
func TestAssign(t *testing.T) {
	for _, c := range []struct {
		f           []float64
		total, gran int
		want        []int
	}{
		{[]float64{0.5, 0.5}, 1000, 1, []int{500, 500}},
		{[]float64{0.75, 0.25}, 1001, 64, []int{704, 297}},
		{[]float64{1, 0}, 17, 4, []int{17, 0}},
		{[]float64{0.25, 0.25, 0.5}, 10, 4, []int{4, 0, 6}},
		{[]float64{0.5, 0.5, 0}, 10, 4, []int{4, 6, 0}},
		{[]float64{0.2, 0.8}, 3, 4, []int{0, 3}},
		{[]float64{0.01, 0.99}, 100, 64, []int{0, 100}},
	} {
		s := make([]Share, len(c.f))
		assign(s, c.f, c.total, c.gran)
		sum := 0
		for i := range s {
			sum += s[i].Units
			if s[i].Units != c.want[i] {
				t.Errorf("assign(%v, %d, %d) = %+v, want units %v", c.f, c.total, c.gran, s, c.want)
				break
			}
		}
		if sum != c.total {
			t.Errorf("assign(%v, %d, %d): units sum to %d", c.f, c.total, c.gran, sum)
		}
	}
}

// TestPlanSharesRefuses checks the errors of bad splits.
func TestPlanSharesRefuses(t *testing.T) {
	ctx := context.Background()
	probe := func(context.Context, *engine.Device, int) (time.Duration, error) { return time.Millisecond, nil }
	devs := []*engine.Device{nil, nil}
	for _, c := range []struct {
		name        string
		devs        []*engine.Device
		total, gran int
		o           SplitOptions
	}{
		{"no device", nil, 10, 1, SplitOptions{}},
		{"no units", devs, 0, 1, SplitOptions{}},
		{"no granule", devs, 10, 0, SplitOptions{}},
		{"fractions count", devs, 10, 1, SplitOptions{Fractions: []float64{1}}},
		{"fractions sum", devs, 10, 1, SplitOptions{Fractions: []float64{0.5, 0.6}}},
		{"negative fraction", devs, 10, 1, SplitOptions{Fractions: []float64{-0.5, 1.5}}},
		{"NaN fraction", devs, 10, 1, SplitOptions{Fractions: []float64{math.NaN(), 1}}},
	} {
		if _, err := PlanShares(ctx, c.devs, c.total, c.gran, c.o, probe); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s: %v; want ErrInvalidArg", c.name, err)
		}
	}
}

// TestPlanSharesContention measures two devices of equal speed with a probe that sleeps
// in proportion to the units: when the two slow each other down as two CPU devices on one
// host's cores do, the plan keeps one device; when they do not, it splits evenly.
func TestPlanSharesContention(t *testing.T) {
	if testing.Short() {
		t.Skip("sleeps for about a second")
	}
	const rate = 2e6 // units per second alone
	for _, shared := range []bool{true, false} {
		var running atomic.Int32
		probe := func(_ context.Context, _ *engine.Device, units int) (time.Duration, error) {
			n := running.Add(1)
			defer running.Add(-1)
			d := time.Duration(float64(units) / rate * 1e9)
			if shared && n > 1 {
				d *= time.Duration(n)
			}
			t0 := time.Now()
			time.Sleep(d)
			return time.Since(t0), nil
		}
		s, err := PlanShares(context.Background(), []*engine.Device{nil, nil}, 400000, 100, SplitOptions{}, probe)
		if err != nil {
			t.Fatal(err)
		}
		got := []float64{s[0].Fraction, s[1].Fraction}
		if shared && got[0] != 1 && got[1] != 1 {
			t.Errorf("devices that halve each other's speed: shares %+v; want one device alone", s)
		}
		if !shared && (math.Abs(got[0]-0.5) > 0.1 || s[0].Concurrent < 0.7*s[0].Rate) {
			t.Errorf("independent devices: shares %+v; want about half each", s)
		}
	}
}

// TestPlanSharesFixedCost plans with synthetic probes (no device): two equal devices, a
// part costing 10 us plus its units over the rate, and a split run end to end costing
// 150 us more than its slowest part (the launches, the synchronisation and the combine
// of running parts). A 32M-element sum on two fast devices (110 us alone, 60 us a part)
// is planned on one device, and the summary says a split is slower; ignoring the fixed
// cost, as the planner did before, splits it. A sum a thousand times longer is split.
func TestPlanSharesFixedCost(t *testing.T) {
	devs := []*engine.Device{new(engine.Device), new(engine.Device)}
	const lat = 10 * time.Microsecond
	const rate = 32e6 / 100e-6 // 32M units in 100 us
	part := func(units int) time.Duration { return lat + time.Duration(float64(units)/rate*1e9) }
	probe := func(_ context.Context, _ *engine.Device, units int) (time.Duration, error) { return part(units), nil }
	whole := func(fixed time.Duration) SplitProbe {
		return func(_ context.Context, units []int) (time.Duration, error) {
			var t time.Duration
			for _, u := range units {
				if u > 0 {
					t = max(t, part(u))
				}
			}
			return t + fixed, nil
		}
	}
	const fixed = 150 * time.Microsecond
	for _, c := range []struct {
		name  string
		total int
		fixed time.Duration
		split bool
	}{
		{"sum 32M, fixed cost dominates", 32 << 20, fixed, false},
		{"sum 32M, fixed cost ignored", 32 << 20, 0, true},
		{"sum 32G, work dominates", 32 << 30, fixed, true},
	} {
		s, err := PlanSharesSplit(t.Context(), devs, c.total, 4096, SplitOptions{}, probe, whole(c.fixed))
		if err != nil {
			t.Fatal(err)
		}
		used := 0
		for _, sh := range s {
			if sh.Units > 0 {
				used++
			}
		}
		sum := PlanSummary(s)
		if c.split && (used != 2 || !strings.HasPrefix(sum, "split over 2 devices")) {
			t.Errorf("%s: shares %+v (%s); want a split", c.name, s, sum)
		}
		if !c.split && (used != 1 || !strings.HasPrefix(sum, "one device: ") || !strings.Contains(sum, "slower")) {
			t.Errorf("%s: shares %+v (%s); want one device, a split said slower", c.name, s, sum)
		}
		if got := s[0].Fixed; got < c.fixed-time.Microsecond || got > c.fixed+time.Microsecond {
			t.Errorf("%s: fixed cost measured %v, want %v", c.name, got, c.fixed)
		}
		t.Logf("%s: %s; alone %v, split %v", c.name, sum, s[0].Alone, s[0].Predicted)
	}
}

// TestTogetherRate checks the rate of a device among others: slowed by the ratio of its
// probe's time together to its time alone, never faster than alone, and its rate alone
// where either time is missing.
func TestTogetherRate(t *testing.T) {
	for _, c := range []struct {
		rate            float64
		alone, together time.Duration
		want            float64
	}{
		{100, time.Millisecond, 2 * time.Millisecond, 50},
		{100, 2 * time.Millisecond, 2 * time.Millisecond, 100},
		{100, 2 * time.Millisecond, time.Millisecond, 100}, // faster together: noise
		{100, 0, time.Millisecond, 100},
		{80, 3 * time.Millisecond, 4 * time.Millisecond, 60},
	} {
		if got := togetherRate(c.rate, c.alone, c.together); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("togetherRate(%v, %v, %v) = %v, want %v", c.rate, c.alone, c.together, got, c.want)
		}
	}
}
