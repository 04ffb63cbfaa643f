package store

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkRecord records a run of 100 cases of 20 samples each (the target: at most 50 ms
// added to a run).
func BenchmarkRecord(b *testing.B) {
	ctx := context.Background()
	s := newStore(b)
	r := synthetic("h", "abcdef0", "cpu", time.Now(), 100, 20)
	for b.Loop() {
		if _, err := s.Record(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}

// bigRuns is how many runs the large store of BenchmarkRuns and BenchmarkHistory holds
// (PRISM_STORE_BENCH_RUNS, default 10^4), each of bigCases cases of bigSamples samples:
// 10^6 samples at the default.
const (
	bigCases   = 10
	bigSamples = 10
)

var big struct {
	once sync.Once
	path string
	err  error
	took time.Duration
}

// bigStore returns the large store, made once per test binary run.
func bigStore(b *testing.B) *Store {
	b.Helper()
	big.once.Do(func() {
		n := 10000
		if v, err := strconv.Atoi(os.Getenv("PRISM_STORE_BENCH_RUNS")); err == nil && v > 0 {
			n = v
		}
		dir, err := os.MkdirTemp("", "prism-store-bench")
		if err != nil {
			big.err = err
			return
		}
		big.path = filepath.Join(dir, "results.db")
		start := time.Now()
		big.err = fillBig(big.path, n)
		big.took = time.Since(start)
	})
	if big.err != nil {
		b.Fatal(big.err)
	}
	b.Logf("store of %s made in %v", big.path, big.took)
	s, err := Open(context.Background(), big.path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// fillBig records n runs into the store at path, 100 runs to a transaction, two hosts
// and two devices taking turns, a commit per 10 runs, a minute apart.
func fillBig(path string, n int) error {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer s.Close()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i += 100 {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		w := &writer{s: s, tx: tx, ctx: ctx}
		for j := i; j < min(i+100, n); j++ {
			r := synthetic("host-"+strconv.Itoa(j%2), strconv.FormatInt(int64(0xabc0000+j/10), 16), []string{"pthread-cpu", "llvmpipe"}[j%2],
				start.Add(time.Duration(j)*time.Minute), bigCases, bigSamples)
			blob, err := compress(r)
			if err != nil {
				return err
			}
			if _, err := w.run(r, blob); err != nil {
				tx.Rollback()
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkRuns lists runs of the large store (the target: at most 200 ms).
func BenchmarkRuns(b *testing.B) {
	s := bigStore(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		f    Filter
	}{
		{"all", Filter{}},
		{"last20", Filter{Limit: 20}},
		{"device+case", Filter{Device: "llvmpipe", Case: "triad"}},
		{"commit", Filter{Commit: "abc01"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				runs, err := s.Runs(ctx, bc.f)
				if err != nil {
					b.Fatal(err)
				}
				n = len(runs)
			}
			b.ReportMetric(float64(n), "runs")
		})
	}
}

// BenchmarkHistory reads a case's history over the large store (the target: at most 200 ms).
func BenchmarkHistory(b *testing.B) {
	s := bigStore(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		q    Series
	}{
		{"case", Series{Case: "stream/triad/float32"}},
		{"case+device+size", Series{Case: "stream/triad/float32", Device: "llvmpipe", Size: 1024}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			n, samples := 0, 0
			for b.Loop() {
				pts, err := s.History(ctx, bc.q)
				if err != nil {
					b.Fatal(err)
				}
				n, samples = len(pts), 0
				for _, p := range pts {
					samples += len(p.Samples)
				}
			}
			b.ReportMetric(float64(n), "points")
			b.ReportMetric(float64(samples), "samples")
		})
	}
}
