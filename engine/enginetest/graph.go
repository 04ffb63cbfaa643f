package enginetest

import (
	"errors"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// testGraphs captures fills, launches and copies from a queue, launches the graph again
// on that queue and another, checks the results and what a capture refuses.
func (s *suite) testGraphs(t *testing.T) {
	ctx := t.Context()
	k := s.kernel(t, suitekernels.Axpy)
	l := s.locals(k)[len(s.locals(k))-1]
	for _, n := range s.fit([]int{1, 257, 4097}) {
		r := rng(t)
		q, q2 := s.queue(t), s.queue(t)
		x := random[float32](r, n)
		xb := upload(t, q, x)
		yb := newBuffer[float32](t, s, n+2*guard)
		zb := newBuffer[float32](t, s, n+2*guard)
		if err := yb.Fill(q, 0, n+2*guard, 0); err != nil {
			t.Fatal(err)
		}
		if err := zb.Fill(q, 0, n+2*guard, 0); err != nil {
			t.Fatal(err)
		}
		const steps = 3
		a := float32(0.5)
		g, err := q.Capture(func() error {
			// y = 0, then y += a*x three times, then z = y.
			if err := yb.Fill(q, guard, n, 0); err != nil {
				return err
			}
			for range steps {
				if err := q.Launch(k, engine.Range1D(engine.RoundUp(n, l), l), int32(n), int32(guard), a, xb, yb); err != nil {
					return err
				}
			}
			return zb.CopyFrom(q, guard, yb, guard, n)
		})
		if err != nil {
			t.Fatalf("n=%d: Capture: %v", n, err)
		}
		if g.Len() != steps+2 {
			t.Errorf("n=%d: Len() = %d, want %d", n, g.Len(), steps+2)
		}
		// Nothing ran during the capture.
		if got := download(t, q, zb); got[guard] != 0 && n > 0 {
			t.Errorf("n=%d: z[0] = %v after the capture alone, want 0", n, got[guard])
		}
		for i, lq := range []*engine.Queue{q, q, q2} {
			if err := g.Launch(lq); err != nil {
				t.Fatalf("n=%d: launch %d: %v", n, i, err)
			}
			if err := lq.Finish(ctx); err != nil {
				t.Fatal(err)
			}
			want := make([]float32, n)
			for j := range want {
				for range steps {
					want[j] = a*x[j] + want[j]
				}
			}
			got := download(t, lq, zb)
			checkBits(t, "guard bands", append(got[:guard:guard], got[guard+n:]...), make([]float32, 2*guard), 0)
			for j := range n {
				if d := got[guard+j] - want[j]; d > 1e-5*(1+abs32(want[j])) || -d > 1e-5*(1+abs32(want[j])) {
					t.Fatalf("n=%d: launch %d: z[%d] = %v, want %v", n, i, j, got[guard+j], want[j])
				}
			}
		}
		// Timed counts a graph's launch like its commands.
		d, err := q.Timed(ctx, func() error { return g.Launch(q) })
		if err != nil || d < 0 || (d == 0 && !s.opts.ZeroElapsedOK) {
			t.Errorf("n=%d: Timed of a graph's launch: %v, %v", n, d, err)
		}
		if err := g.Close(); err != nil || g.Close() != nil {
			t.Errorf("Close: %v", err)
		}
		if err := g.Launch(q); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("launch of a closed graph: %v", err)
		}
	}
	t.Run("Refused", func(t *testing.T) {
		q := s.queue(t)
		b := newBuffer[float32](t, s, 16)
		host := make([]float32, 16)
		for what, f := range map[string]func() error{
			"Finish": func() error { return q.Finish(ctx) },
			"Timed":  func() error { _, err := q.Timed(ctx, func() error { return nil }); return err },
			"LaunchEvent": func() error {
				_, err := q.LaunchEvent(k, engine.Range1D(l, l), int32(0), int32(0), float32(1), b, b)
				return err
			},
			"Read":    func() error { return b.Read(ctx, q, 0, host) },
			"Write":   func() error { return b.Write(ctx, q, 0, host) },
			"Wait":    func() error { return q.Wait(ctx) },
			"Record":  func() error { _, err := q.Record(); return err },
			"Capture": func() error { _, err := q.Capture(func() error { return nil }); return err },
		} {
			var inner error
			g, err := q.Capture(func() error { inner = f(); return inner })
			if !errors.Is(inner, engine.ErrInvalidArg) {
				t.Errorf("%s inside Capture: %v, want ErrInvalidArg", what, inner)
			}
			if err == nil || g != nil {
				t.Errorf("%s inside Capture: the capture gave %v, %v; want its error", what, g, err)
			}
		}
		// The queue is usable after refused captures.
		if err := b.Write(ctx, q, 0, host); err != nil {
			t.Errorf("Write after refused captures: %v", err)
		}
		if _, err := q.Capture(nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Capture(nil): %v", err)
		}
		mine := errors.New("mine")
		if _, err := q.Capture(func() error { return mine }); !errors.Is(err, mine) {
			t.Errorf("a capture whose function fails: %v, want its error", err)
		}
	})
	t.Run("ClosedBuffer", func(t *testing.T) {
		q := s.queue(t)
		b, err := engine.NewBuffer[float32](s.dev, 64)
		if err != nil {
			t.Fatal(err)
		}
		g, err := q.Capture(func() error { return b.Fill(q, 0, 64, 1) })
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		b.Close()
		if err := g.Launch(q); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("launch of a graph whose buffer is closed: %v, want ErrClosed", err)
		}
		var nilGraph *engine.Graph
		if err := nilGraph.Launch(q); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("launch of a nil graph: %v", err)
		}
	})
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}
