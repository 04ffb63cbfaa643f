package kernels

import (
	"runtime"
	"sync"
)

// ParallelRanges splits [0, m) into contiguous ranges, one per core (GOMAXPROCS) but none
// of fewer than grain elements, and runs f on each in its own goroutine, returning when
// all are done; a single range runs on the caller's goroutine. Host-side references and
// input generation spread their loops with it.
func ParallelRanges(m, grain int, f func(lo, hi int)) {
	p := min(runtime.GOMAXPROCS(0), m/max(grain, 1))
	if p <= 1 {
		if m > 0 {
			f(0, m)
		}
		return
	}
	var wg sync.WaitGroup
	for i := range p {
		lo, hi := i*m/p, (i+1)*m/p
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}
