package bench

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestMatchCollectives checks the --ops patterns that select collectives, among them the
// "collective/*" that prism bench --help shows.
func TestMatchCollectives(t *testing.T) {
	all := Collectives()
	for _, c := range []struct {
		patterns []string
		names    []string
		rest     []string
	}{
		{[]string{"collective/*"}, all, nil},
		{[]string{"collective"}, all, nil},
		{[]string{"collective/"}, all, nil},
		{[]string{"collective/all-reduce/*"}, []string{"collective/all-reduce/float32", "collective/all-reduce/float64"}, nil},
		{[]string{"collective/all-reduce"}, []string{"collective/all-reduce/float32", "collective/all-reduce/float64"}, nil},
		{[]string{"collective/*/float64"}, []string{"collective/all-reduce/float64", "collective/all-gather/float64", "collective/reduce-scatter/float64", "collective/broadcast/float64"}, nil},
		{[]string{"collective/broadcast/float32", "gemm/nn/float32"}, []string{"collective/broadcast/float32"}, []string{"gemm/nn/float32"}},
		{[]string{"collect"}, nil, []string{"collect"}},
		{[]string{"gemm/*"}, nil, []string{"gemm/*"}},
	} {
		names, rest := MatchCollectives(c.patterns)
		if !slices.Equal(names, c.names) || !slices.Equal(rest, c.rest) {
			t.Errorf("MatchCollectives(%q) = %q, %q; want %q, %q", c.patterns, names, rest, c.names, c.rest)
		}
	}
}

// TestHostRunsLeavesBeforeOut checks that hostRuns calls before ahead of every run,
// warm-up and timed, and leaves its time out of the samples (the barrier between
// processes before each collective): before sleeps far longer than run can take.
func TestHostRunsLeavesBeforeOut(t *testing.T) {
	const nap = 200 * time.Millisecond
	befores, runs := 0, 0
	samples, err := hostRuns(2, 1, func() error { befores++; time.Sleep(nap); return nil }, func() error { runs++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if befores != 3 || runs != 3 || len(samples) != 2 {
		t.Fatalf("before called %d times, run %d, %d samples; want 3, 3 and 2", befores, runs, len(samples))
	}
	for _, s := range samples {
		if s >= nap {
			t.Errorf("a sample of %v counts before's %v", s, nap)
		}
	}
	stop := errors.New("stop")
	if _, err := hostRuns(2, 0, func() error { return stop }, func() error { t.Error("run called after before failed"); return nil }); !errors.Is(err, stop) {
		t.Errorf("before's error: got %v", err)
	}
}
