package site

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench/store"
)

// BenchmarkPublish publishes a store of PRISM_SITE_BENCH_RUNS runs (default 10^3; the
// target: at most 10 s on 2 cores) of 100 results of 10 samples each (5 ops at 20 sizes),
// two devices taking turns, a commit per 10 runs, a run every hour, one in 50 slower. The store is
// made once (its time is logged) and the site written to a new directory each time.
func BenchmarkPublish(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("PRISM_SITE_BENCH_RUNS")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	tmp := b.TempDir()
	st, err := store.Open(ctx, filepath.Join(tmp, "results.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	made := time.Now()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		slow := 1.0
		if i%50 == 49 {
			slow = 1.2
		}
		r := synthetic("host-"+strconv.Itoa(i%2), fmt.Sprintf("%x", 0xabc0000+i/10), []string{"pthread-cpu", "llvmpipe"}[i%2],
			start.Add(time.Duration(i)*time.Hour), 100, 10, slow)
		if _, err := st.Record(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("a store of %d runs of 100 cases made in %v", n, time.Since(made).Round(time.Millisecond))
	var sum Summary
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		i++
		if sum, err = Publish(ctx, st, filepath.Join(tmp, "site-"+strconv.Itoa(i)), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	// The processor time, beside the wall time: on a busy machine the wall time grows
	// with the load, the processor time much less.
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(sum.Runs), "runs")
	b.ReportMetric(float64(sum.Pages), "pages")
}

// cpuTime is the processor time of the process so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
