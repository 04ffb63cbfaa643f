package enginetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// testConcurrency shares the device among goroutines, as a Device allows: each goroutine
// has its own Queue, builds its own Program and launches both its own kernel and one
// kernel shared by all, on its own data, many times.
func (s *suite) testConcurrency(t *testing.T) {
	if s.opts.SkipConcurrency {
		t.Skip("Options.SkipConcurrency is set")
	}
	goroutines, iterations := 8, 20
	if Small() {
		goroutines, iterations = 3, 3
	}
	shared := s.kernel(t, suitekernels.Axpy)
	sizes := s.fit([]int{1, 7, 255, 257, 4097})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.worker(t.Context(), g, iterations, shared, sizes); err != nil {
				t.Errorf("goroutine %d: %v", g, err)
			}
		}()
	}
	wg.Wait()
}

// worker is one goroutine of testConcurrency. It reports the first failure.
func (s *suite) worker(ctx context.Context, g, iterations int, shared *engine.Kernel, sizes []int) error {
	q, err := s.dev.NewQueue()
	if err != nil {
		return fmt.Errorf("NewQueue: %v", err)
	}
	defer q.Close()
	p, err := s.dev.Build(suitekernels.Source)
	if err != nil {
		return fmt.Errorf("Build: %v", err)
	}
	defer p.Close()
	own, err := p.Kernel(suitekernels.Iota)
	if err != nil {
		return fmt.Errorf("Kernel: %v", err)
	}
	defer own.Close()
	r := rand.New(rand.NewPCG(seed, uint64(g)))
	for it := range iterations {
		n := sizes[(g+it)%len(sizes)]
		a := float32(g + 1)
		x, y := random[float32](r, n), random[float32](r, n)
		if err := func() error {
			xb, err := engine.Upload(ctx, q, x)
			if err != nil {
				return err
			}
			defer xb.Close()
			yb, err := engine.Upload(ctx, q, guarded(y))
			if err != nil {
				return err
			}
			defer yb.Close()
			ib, err := engine.Upload(ctx, q, sentinels[uint32](n+2*guard))
			if err != nil {
				return err
			}
			defer ib.Close()
			l := min(64, shared.MaxWorkGroupSize())
			if err := q.Launch(shared, engine.Range1D(engine.RoundUp(n, l), l), int32(n), int32(guard), a, xb, yb); err != nil {
				return err
			}
			if err := q.Launch(own, engine.Range1D(engine.RoundUp(n, l), l), int32(n), int32(guard), ib); err != nil {
				return err
			}
			got, err := yb.Download(ctx, q)
			if err != nil {
				return err
			}
			idx, err := ib.Download(ctx, q)
			if err != nil {
				return err
			}
			ft := &failRecorder{}
			checkAxpy(ft, got, a, x, y)
			want := make([]uint32, n)
			for i := range want {
				want[i] = uint32(i)
			}
			checkBits(ft, "iota", idx, guarded(want), guard)
			return ft.err
		}(); err != nil {
			return fmt.Errorf("iteration %d, n=%d: %v", it, n, err)
		}
	}
	return nil
}

// failRecorder is a testing.TB for the checks of a goroutine: it keeps the first error,
// since a goroutine may not stop the test.
type failRecorder struct {
	testing.TB
	err error
}

func (f *failRecorder) Helper() {}

func (f *failRecorder) Errorf(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf(format, args...)
	}
}

// Fatalf is Errorf: the checks return after calling it.
func (f *failRecorder) Fatalf(format string, args ...any) { f.Errorf(format, args...) }
