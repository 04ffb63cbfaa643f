package bench

import (
	"testing"
	"time"

	"github.com/prism-compute/prism/kernels"
)

// TestGatheredBaseline: one device alone on sharded data pays the gather of the others'
// parts onto it; the baseline is the best device so, not the best resident time.
func TestGatheredBaseline(t *testing.T) {
	single := []SingleDevice{
		{Device: "a", Resident: Stats{Median: 10 * time.Millisecond}},
		{Device: "b", Resident: Stats{Median: 12 * time.Millisecond}},
		{Device: "c", Err: "failed", Resident: Stats{Median: time.Millisecond}},
	}
	shares := []kernels.Share{
		{Device: "a", Gather: 8 * time.Millisecond},
		{Device: "b", Gather: 3 * time.Millisecond},
		{Device: "c", Gather: time.Millisecond},
	}
	if got, want := gatheredBaseline(single, shares), 15*time.Millisecond; got != want {
		t.Errorf("gathered baseline %v, want %v (b: 12 + 3; a's 10 + 8 is slower, c failed)", got, want)
	}
	for i := range shares {
		shares[i].Gather = 0 // given fractions: no gather measured
	}
	if got := gatheredBaseline(single, shares); got != 0 {
		t.Errorf("without gathers: %v, want 0", got)
	}
}
