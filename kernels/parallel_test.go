package kernels

import (
	"runtime"
	"sync"
	"testing"
)

// TestParallelRanges checks that the ranges cover [0, m) once, in order and contiguous,
// that none is shorter than the grain where there are several, and that an empty range
// calls nothing.
func TestParallelRanges(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, c := range []struct{ m, grain int }{{0, 1}, {1, 1}, {7, 1}, {1000, 1}, {1000, 300}, {1000, 2000}, {1 << 20, 1 << 16}, {5, 0}} {
		var mu sync.Mutex
		got := map[int]int{}
		ParallelRanges(c.m, c.grain, func(lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			got[lo] = hi
		})
		if c.m == 0 {
			if len(got) != 0 {
				t.Errorf("m 0: %d ranges, want none", len(got))
			}
			continue
		}
		next := 0
		for next < c.m {
			hi, ok := got[next]
			if !ok || hi <= next {
				t.Fatalf("m %d grain %d: no range starts at %d (%v)", c.m, c.grain, next, got)
			}
			if len(got) > 1 && hi-next < c.grain {
				t.Errorf("m %d grain %d: range [%d, %d) shorter than the grain", c.m, c.grain, next, hi)
			}
			next = hi
		}
		if next != c.m || len(got) > procs {
			t.Errorf("m %d grain %d: ranges end at %d, %d of them (at most %d)", c.m, c.grain, next, len(got), procs)
		}
	}
}
