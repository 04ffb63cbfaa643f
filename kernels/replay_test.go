package kernels_test

import (
	"context"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestReplay checks that a Replay enqueues a key's sequence directly the first time,
// captures it the second and launches the graph after, with the arguments it was captured
// with; that a sequence whose buffer was closed is captured again; that it keeps
// ReplayKeep graphs; and that inside Timed it enqueues directly.
func TestReplay(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		var r kernels.Replay
		defer r.Close()
		calls := 0
		fill := func(b *engine.Buffer[uint32], v uint32) func() error {
			return func() error { calls++; return b.Fill(q, 0, b.Len(), v) }
		}
		check := func(b *engine.Buffer[uint32], want uint32) {
			t.Helper()
			got, err := b.Download(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range got {
				if v != want {
					t.Fatalf("element %d = %d, want %d", i, v, want)
				}
			}
		}
		bufs := make([]*engine.Buffer[uint32], kernels.ReplayKeep+1)
		for i := range bufs {
			b, err := engine.NewBuffer[uint32](dev, 1000)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			bufs[i] = b
		}
		// Run directly, captured, then replayed: the function runs twice for four runs.
		for _, v := range []uint32{7, 7, 7, 7} {
			if err := r.Run(q, bufs[0], fill(bufs[0], v)); err != nil {
				t.Fatal(err)
			}
			check(bufs[0], v)
			if err := bufs[0].Fill(q, 0, 1000, 0); err != nil {
				t.Fatal(err)
			}
		}
		if calls != 2 {
			t.Errorf("four runs of one key called the sequence %d times, want 2 (once directly, once captured)", calls)
		}
		// Keys run once each are never captured: each run calls the sequence.
		before := calls
		for i := range 3 {
			b, err := engine.NewBuffer[uint32](dev, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Run(q, b, fill(b, uint32(20+i))); err != nil {
				t.Fatal(err)
			}
			check(b, uint32(20+i))
			b.Close()
		}
		if calls != before+3 {
			t.Errorf("three keys run once called their sequences %d times, want 3", calls-before)
		}
		// Other keys are captured on their own; beyond ReplayKeep keys the oldest goes.
		before = calls
		for i := 1; i <= kernels.ReplayKeep; i++ {
			for range 2 {
				if err := r.Run(q, bufs[i], fill(bufs[i], uint32(i))); err != nil {
					t.Fatal(err)
				}
				check(bufs[i], uint32(i))
			}
		}
		if calls != before+2*kernels.ReplayKeep {
			t.Errorf("%d calls for %d keys run twice, want %d", calls-before, kernels.ReplayKeep, 2*kernels.ReplayKeep)
		}
		before = calls
		for range 3 {
			if err := r.Run(q, bufs[0], fill(bufs[0], 7)); err != nil {
				t.Fatal(err)
			}
			check(bufs[0], 7)
		}
		if calls != before+2 {
			t.Errorf("the evicted key ran %d times in three runs, want 2 (directly, then captured again)", calls-before)
		}
		// A closed buffer: the graph refuses, the key is captured again with the new one.
		old := bufs[1]
		nb, err := engine.NewBuffer[uint32](dev, 1000)
		if err != nil {
			t.Fatal(err)
		}
		defer nb.Close()
		for range 2 {
			if err := r.Run(q, "k", fill(old, 1)); err != nil {
				t.Fatal(err)
			}
		}
		old.Close()
		before = calls
		if err := r.Run(q, "k", fill(nb, 5)); err != nil {
			t.Fatal(err)
		}
		if calls != before+1 {
			t.Errorf("a graph of a closed buffer was launched, not captured again")
		}
		check(nb, 5)
		// Inside Timed: enqueued directly, every time.
		before = calls
		for range 2 {
			if _, err := q.Timed(context.Background(), func() error { return r.Run(q, "t", fill(nb, 9)) }); err != nil {
				t.Fatal(err)
			}
		}
		if calls != before+2 {
			t.Errorf("inside Timed the sequence ran %d times for two runs, want 2", calls-before)
		}
		check(nb, 9)
	})
}
