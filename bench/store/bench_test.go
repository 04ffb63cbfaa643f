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
// added to a run), on each backend.
func BenchmarkRecord(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			s := be.open(b)
			r := synthetic("h", "abcdef0", "cpu", time.Now(), 100, 20)
			for b.Loop() {
				if _, err := s.Record(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// bigRuns is how many runs the large store of BenchmarkRuns and BenchmarkHistory holds
// (PRISM_STORE_BENCH_RUNS, default 10^4), each of bigCases cases of bigSamples samples:
// 10^6 samples at the default.
const (
	bigCases   = 10
	bigSamples = 10
)

// bigOne is the large store of a backend, made once per test binary run.
type bigOne struct {
	once sync.Once
	dsn  string
	err  error
	took time.Duration
}

// big holds the large stores by backend; the SQLite one's directory is removed by TestMain.
var big = struct {
	path   string // the SQLite store's file
	stores map[string]*bigOne
}{stores: map[string]*bigOne{"sqlite": {}, "postgres": {}}}

// bigStore returns the large store of be, made at its first use.
func bigStore(b *testing.B, be backend) *Store {
	b.Helper()
	if be.name == "postgres" {
		pgCluster(b) // skips where there is no server
	}
	one := big.stores[be.name]
	one.once.Do(func() {
		n := 10000
		if v, err := strconv.Atoi(os.Getenv("PRISM_STORE_BENCH_RUNS")); err == nil && v > 0 {
			n = v
		}
		if be.name == "sqlite" {
			dir, err := os.MkdirTemp("", "prism-store-bench")
			if err != nil {
				one.err = err
				return
			}
			big.path = filepath.Join(dir, "results.db")
			one.dsn = big.path
		} else {
			one.dsn = be.dsn(b)
		}
		start := time.Now()
		one.err = fillBig(one.dsn, n)
		one.took = time.Since(start)
	})
	if one.err != nil {
		b.Fatal(one.err)
	}
	b.Logf("store of %s made in %v", one.dsn, one.took)
	s, err := Open(context.Background(), one.dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// fillBig records n runs into the store at dsn, 100 runs to a transaction, two hosts
// and two devices taking turns, a commit per 10 runs, a minute apart.
func fillBig(dsn string, n int) error {
	ctx := context.Background()
	s, err := Open(ctx, dsn)
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
	if s.d == postgresDialect {
		// The statistics that a server's autovacuum gathers after so many rows (the tests'
		// cluster runs without it): without them the planner joins the large tables blind.
		if _, err := s.db.ExecContext(ctx, "ANALYZE"); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkRuns lists runs of the large store (the target: at most 200 ms), on each
// backend.
func BenchmarkRuns(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) { benchmarkRuns(b, bigStore(b, be)) })
	}
}

func benchmarkRuns(b *testing.B, s *Store) {
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

// BenchmarkHistory reads a case's history over the large store (the target: at most 200
// ms), on each backend: every series of the case (two sizes on two devices) and one, with
// their samples and without.
func BenchmarkHistory(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) { benchmarkHistory(b, bigStore(b, be)) })
	}
}

func benchmarkHistory(b *testing.B, s *Store) {
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		q    Series
	}{
		{"case", Series{Case: "stream/triad/float32"}},
		{"case+device+size", Series{Case: "stream/triad/float32", Device: "llvmpipe", Size: 1024}},
		{"case+samples", Series{Case: "stream/triad/float32", Samples: true}},
		{"case+device+size+samples", Series{Case: "stream/triad/float32", Device: "llvmpipe", Size: 1024, Samples: true}},
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
