package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// jittered returns n times around mean, each off by up to spread of it, from seed.
func jittered(seed uint64, n int, mean time.Duration, spread float64) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(float64(mean) * (1 + spread*(2*rng.Float64()-1)))
	}
	return out
}

// TestSpeedupInterval: the interval of a split's speedup holds 1 where the split and the
// paired device draw their times from one distribution, lies above 1 where the device alone
// is half as fast again, and is absent without a paired timing or without samples.
func TestSpeedupInterval(t *testing.T) {
	same := SplitResult{Stats: Summarize(jittered(1, 25, time.Millisecond, 0.1)), Paired: new(Summarize(jittered(2, 25, time.Millisecond, 0.1)))}
	lo, hi, ok := same.SpeedupInterval(0)
	if !ok || !(lo < 1 && 1 < hi) || hi-lo > 0.2 {
		t.Errorf("one distribution: [%v, %v] %v, want a narrow interval holding 1", lo, hi, ok)
	}
	faster := SplitResult{Stats: Summarize(jittered(3, 25, time.Millisecond, 0.1)), Paired: new(Summarize(jittered(4, 25, 1500*time.Microsecond, 0.1)))}
	if lo, hi, ok := faster.SpeedupInterval(0); !ok || !(1.3 < lo && lo < 1.5 && 1.5 < hi && hi < 1.7) {
		t.Errorf("split 1.5x faster: [%v, %v] %v, want about 1.5", lo, hi, ok)
	}
	if _, _, ok := (SplitResult{Stats: same.Stats}).SpeedupInterval(0); ok {
		t.Error("no paired timing: an interval")
	}
	bare := same
	bare.Paired = &Stats{Runs: 25, Median: time.Millisecond}
	if _, _, ok := bare.SpeedupInterval(0); ok {
		t.Error("paired timing without samples: an interval")
	}
}

// TestSplitSummaries: the summary groups the splits by devices and placement in the order
// of their first case, counts the cases given to more than one device, takes the geometric
// mean of the speedups, names the smallest with its interval, and leaves out failed splits
// and splits without a speedup.
func TestSplitSummaries(t *testing.T) {
	two := []kernels.Share{{Device: "a", Fraction: 0.5}, {Device: "b", Fraction: 0.5}}
	one := []kernels.Share{{Device: "a", Fraction: 1}, {Device: "b"}}
	st, paired := Summarize(jittered(5, 25, time.Millisecond, 0.1)), Summarize(jittered(6, 25, time.Millisecond, 0.1))
	split := func(name string, place string, shares []kernels.Share, speedup float64) SplitResult {
		return SplitResult{Case: name, Size: 1 << 20, Devices: []string{"a", "b"}, Placement: place, Shares: shares, Stats: st, Paired: &paired, Speedup: speedup, Verified: true}
	}
	failed := split("map/exp/float32", PlacementHost, two, 0.1)
	failed.Verified, failed.Err = false, "wrong result"
	r := &Report{Splits: []SplitResult{
		split("map/axpy/float32", PlacementHost, two, 1.8),
		split("map/axpy/float32", PlacementSharded, two, 1.9),
		split("reduce/sum/float32", "", one, 0.96), // before placements were recorded: host
		failed,
		split("sort/keys/uint32", PlacementHost, two, 0), // no speedup
		split("fft/batched/float32", PlacementHost, two, 1.5),
	}}
	sums := r.SplitSummaries()
	if len(sums) != 2 {
		t.Fatalf("%d summaries, want host and sharded: %+v", len(sums), sums)
	}
	host, sharded := sums[0], sums[1]
	if host.Devices != "a+b" || host.Placement != PlacementHost || host.Cases != 3 || host.Split != 2 {
		t.Errorf("host: %+v, want a+b, 3 cases, 2 split", host)
	}
	if want := math.Cbrt(1.8 * 0.96 * 1.5); math.Abs(host.GeoMean-want) > 1e-12 {
		t.Errorf("host geomean %v, want %v", host.GeoMean, want)
	}
	if host.Worst != 0.96 || host.WorstCase != "reduce/sum/float32" || host.WorstSize != 1<<20 {
		t.Errorf("host worst %v %s %d, want 0.96 reduce/sum/float32", host.Worst, host.WorstCase, host.WorstSize)
	}
	if !(host.WorstLow > 0 && host.WorstLow < 1 && 1 < host.WorstHigh) {
		t.Errorf("host worst's interval [%v, %v], want one holding 1 (one distribution)", host.WorstLow, host.WorstHigh)
	}
	if sharded.Placement != PlacementSharded || sharded.Cases != 1 || sharded.Split != 1 || sharded.GeoMean != 1.9 || sharded.Worst != 1.9 {
		t.Errorf("sharded: %+v, want one case at 1.9", sharded)
	}
	// In JSON, as "split_summary", beside the report, which reads back.
	r.Schema, r.Devices = SchemaVersion, []DeviceReport{{Device: engine.DeviceInfo{ID: "a"}}, {Device: engine.DeviceInfo{ID: "b"}}}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary []SplitSummary `json:"split_summary"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Summary) != 2 || doc.Summary[0].WorstCase != "reduce/sum/float32" || doc.Summary[0].WorstHigh != host.WorstHigh {
		t.Errorf("JSON summary %+v", doc.Summary)
	}
	if back, err := ReadReport(bytes.NewReader(buf.Bytes())); err != nil || len(back.Splits) != len(r.Splits) {
		t.Errorf("a report with its split summary does not read back: %v", err)
	}
	if got := (&Report{Splits: []SplitResult{failed}}).SplitSummaries(); len(got) != 0 {
		t.Errorf("failed splits alone: %+v, want no summary", got)
	}
}
