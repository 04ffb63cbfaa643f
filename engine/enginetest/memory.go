package enginetest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// testPool checks the device's memory pool: a closed buffer's memory is handed out again,
// not while a queue may still use it, within the limit, and Trim gives it back.
func (s *suite) testPool(t *testing.T) {
	st := s.dev.PoolStats()
	if !st.Enabled {
		t.Skip("the pool is off (PRISM_POOL=off)")
	}
	if st.Backing == "" {
		t.Error("PoolStats.Backing is empty")
	}
	// 3072 uint32s are 12288 bytes, the top of a size class that 3000 shares.
	n, smaller := 3072, 3000
	t.Run("Reuse", func(t *testing.T) {
		if _, err := s.dev.TrimPool(); err != nil {
			t.Fatal(err)
		}
		before := s.dev.PoolStats()
		b := newBuffer[uint32](t, s, n)
		mid := s.dev.PoolStats()
		if mid.InUseBytes-before.InUseBytes != int64(4*n) || mid.HeldBytes < mid.InUseBytes {
			t.Errorf("after NewBuffer of %d bytes: %+v (before %+v)", 4*n, mid, before)
		}
		b.Close()
		after := s.dev.PoolStats()
		if after.InUseBytes != before.InUseBytes || after.CachedBytes <= before.CachedBytes-1 || after.Frees != before.Frees+1 {
			t.Errorf("after Close: %+v (before %+v)", after, before)
		}
		// The same size, and a smaller one of the same class, come from the list.
		for _, m := range []int{n, smaller} {
			h := s.dev.PoolStats().Hits
			b := newBuffer[uint32](t, s, m)
			if got := s.dev.PoolStats().Hits; got != h+1 {
				t.Errorf("NewBuffer of %d elements after a Close of %d: hits %d -> %d, want one more", m, n, h, got)
			}
			b.Close()
		}
		if st := s.dev.PoolStats(); st.Fragmentation < 0 || st.Fragmentation > 1 || st.PeakBytes < st.HeldBytes+st.CachedBytes {
			t.Errorf("inconsistent stats %+v", st)
		}
	})
	t.Run("InFlight", func(t *testing.T) {
		// A buffer closed while its queue has a command not yet seen complete is not handed
		// out until the queue is finished.
		k := s.kernel(t, suitekernels.Iota)
		q := s.queue(t)
		if err := q.Finish(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.dev.TrimPool(); err != nil { // no other block of the class is cached
			t.Fatal(err)
		}
		b := newBuffer[uint32](t, s, n)
		if err := q.Launch(k, engine.Range1D(engine.RoundUp(n, 1), 1), int32(n), int32(0), b); err != nil {
			t.Fatalf("Launch: %v", err)
		}
		b.Close()
		if st := s.dev.PoolStats(); st.PendingBytes == 0 {
			t.Errorf("a buffer closed under a launch is not pending: %+v", st)
		}
		h := s.dev.PoolStats().Hits
		c := newBuffer[uint32](t, s, n)
		if got := s.dev.PoolStats().Hits; got != h {
			t.Errorf("a buffer closed under a launch was handed out again before the queue finished (hits %d -> %d)", h, got)
		}
		c.Close()
		if err := q.Finish(t.Context()); err != nil {
			t.Fatal(err)
		}
		if st := s.dev.PoolStats(); st.PendingBytes != 0 {
			t.Errorf("after Finish: %d bytes still pending", st.PendingBytes)
		}
		h = s.dev.PoolStats().Hits
		newBuffer[uint32](t, s, n).Close()
		if got := s.dev.PoolStats().Hits; got != h+1 {
			t.Errorf("after Finish: hits %d -> %d, want one more", h, got)
		}
	})
	t.Run("Join", func(t *testing.T) {
		// A queue that waited on another's event and finished has seen that queue's
		// commands before the event complete: a buffer they used is no longer pending.
		q1, q2 := s.queue(t), s.queue(t)
		if _, err := s.dev.TrimPool(); err != nil {
			t.Fatal(err)
		}
		b := newBuffer[uint32](t, s, n)
		if err := b.Fill(q1, 0, n, 7); err != nil {
			t.Fatal(err)
		}
		rec, err := q1.Record()
		if errors.Is(err, engine.ErrUnsupported) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Close()
		if err := q2.Wait(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
		b.Close()
		if st := s.dev.PoolStats(); st.PendingBytes == 0 {
			t.Errorf("a buffer closed under a fill is not pending: %+v", st)
		}
		if err := q2.Finish(t.Context()); err != nil {
			t.Fatal(err)
		}
		if st := s.dev.PoolStats(); st.PendingBytes != 0 {
			t.Errorf("after the waiting queue finished: %d bytes still pending", st.PendingBytes)
		}
	})
	t.Run("Limit", func(t *testing.T) {
		if _, err := s.dev.TrimPool(); err != nil {
			t.Fatalf("TrimPool: %v", err)
		}
		if st := s.dev.PoolStats(); st.CachedBytes != 0 {
			t.Fatalf("after TrimPool with every queue idle: %d bytes cached", st.CachedBytes)
		}
		base := s.dev.PoolStats().HeldBytes
		one := newBuffer[uint32](t, s, n)
		class := s.dev.PoolStats().HeldBytes - base
		one.Close()
		if err := s.dev.SetPoolLimit(-1); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("SetPoolLimit(-1): %v, want ErrInvalidArg", err)
		}
		if err := s.dev.SetPoolLimit(base + 2*class); err != nil {
			t.Fatalf("SetPoolLimit: %v", err)
		}
		defer s.dev.SetPoolLimit(0)
		a, b := newBuffer[uint32](t, s, n), newBuffer[uint32](t, s, n)
		_, err := engine.NewBuffer[uint32](s.dev, n)
		if !errors.Is(err, engine.ErrOutOfMemory) || !strings.Contains(err.Error(), "limit") {
			t.Errorf("a buffer past the pool's limit: %v, want ErrOutOfMemory naming the limit", err)
		}
		a.Close()
		c, err := engine.NewBuffer[uint32](s.dev, n)
		if err != nil {
			t.Errorf("after a Close under the limit: %v", err)
		} else {
			c.Close()
		}
		b.Close()
		if err := s.dev.SetPoolLimit(0); err != nil {
			t.Fatalf("SetPoolLimit(0): %v", err)
		}
	})
	t.Run("Soak", func(t *testing.T) {
		// Allocate, fill, read back and free, in three sizes, with a Finish every 16 cycles:
		// the pool never holds more than the blocks those cycles left pending.
		cycles := 10000
		if Small() {
			cycles = 1000
		}
		if _, err := s.dev.TrimPool(); err != nil {
			t.Fatal(err)
		}
		q := s.queue(t)
		before := s.dev.PoolStats()
		sizes := s.fit([]int{n, n / 3, 1000, 1 << 16})
		var got [1]uint32
		for i := range cycles {
			m := sizes[i%len(sizes)]
			b, err := engine.NewBuffer[uint32](s.dev, m)
			if err != nil {
				t.Fatalf("cycle %d: %v", i, err)
			}
			if err := b.Fill(q, 0, m, uint32(i)); err != nil {
				t.Fatalf("cycle %d: Fill: %v", i, err)
			}
			if i%16 == 15 {
				if err := b.Read(t.Context(), q, m-1, got[:]); err != nil || got[0] != uint32(i) {
					t.Fatalf("cycle %d: read %d, %v; want %d", i, got[0], err, i)
				}
			}
			b.Close()
		}
		if err := q.Finish(t.Context()); err != nil {
			t.Fatal(err)
		}
		st := s.dev.PoolStats()
		var bound int64
		for _, m := range sizes {
			bound += int64(4 * m)
		}
		bound = bound * 2 * (16/int64(len(sizes)) + 2) // classes are at most 25% above the size
		if grew := st.PeakBytes - before.PeakBytes; grew > bound {
			t.Errorf("after %d cycles the pool peaked %d bytes above its start, above %d: %+v", cycles, grew, bound, st)
		}
		if st.Misses-before.Misses > int64(cycles/4) {
			t.Errorf("%d misses in %d cycles: %+v", st.Misses-before.Misses, cycles, st)
		}
		t.Logf("%d cycles: %d hits, %d misses, peak %d bytes", cycles, st.Hits-before.Hits, st.Misses-before.Misses, st.PeakBytes)
	})
}

// testRegisteredHost registers memory the test allocated (RegisterHostBuffer) and copies
// through it both ways, asynchronously and blocking; a backend that cannot register host
// memory must say so with ErrUnsupported.
func (s *suite) testRegisteredHost(t *testing.T) {
	ctx := t.Context()
	const n = 4099
	mem := make([]float32, 2*n+2*guard)
	if _, err := engine.RegisterHostBuffer[float32](s.dev, nil); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("RegisterHostBuffer of no elements: %v", err)
	}
	h, err := engine.RegisterHostBuffer(s.dev, mem)
	if errors.Is(err, engine.ErrUnsupported) {
		t.Skipf("the backend does not register host memory: %v", err)
	}
	if err != nil {
		t.Fatalf("RegisterHostBuffer: %v", err)
	}
	if h.Len() != len(mem) || &h.Slice()[0] != &mem[0] {
		t.Fatalf("the registered buffer holds %d elements at %p; want the %d at %p", h.Len(), &h.Slice()[0], len(mem), &mem[0])
	}
	r := rng(t)
	x := random[float32](r, n)
	copy(mem, x)
	for i := n; i < len(mem); i++ {
		mem[i] = 7
	}
	q := s.queue(t)
	b := newBuffer[float32](t, s, n)
	defer b.Close()
	ew, err := b.WriteAsync(q, 0, h, 0, n)
	if err != nil {
		t.Fatalf("WriteAsync: %v", err)
	}
	defer ew.Close()
	er, err := b.ReadAsync(q, 0, h, n+guard, n)
	if err != nil {
		t.Fatalf("ReadAsync: %v", err)
	}
	defer er.Close()
	if err := er.Wait(ctx); err != nil {
		t.Fatalf("Wait for ReadAsync: %v", err)
	}
	for i := range n {
		if mem[n+guard+i] != x[i] {
			t.Fatalf("element %d read back through registered memory: %v, want %v", i, mem[n+guard+i], x[i])
		}
	}
	for _, i := range []int{n, n + guard - 1, 2*n + guard, len(mem) - 1} {
		if mem[i] != 7 {
			t.Fatalf("guard element %d of the registered memory: %v, want 7", i, mem[i])
		}
	}
	// A blocking copy into the registered memory, then the memory left allocated after Close.
	clear(mem[:n])
	if err := b.Read(ctx, q, 0, mem[:n]); err != nil {
		t.Fatalf("Read into registered memory: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i := range n {
		if mem[i] != x[i] {
			t.Fatalf("element %d after Close: %v, want %v", i, mem[i], x[i])
		}
	}
}

// testHostBuffers copies through host buffers asynchronously, across queues ordered by
// events, and checks the results, the errors and the buffers' lifetimes.
func (s *suite) testHostBuffers(t *testing.T) {
	ctx := t.Context()
	k := s.kernel(t, suitekernels.Axpy)
	l := s.locals(k)[len(s.locals(k))-1]
	for _, n := range s.fit([]int{1, 257, 4097, 1 << 18}) {
		t.Run("n="+strconv.Itoa(n), func(t *testing.T) {
			r := rng(t)
			up, down := s.queue(t), s.queue(t)
			in, err := engine.NewHostBuffer[float32](s.dev, 2*n)
			if err != nil {
				t.Fatalf("NewHostBuffer: %v", err)
			}
			defer in.Close()
			out, err := engine.NewHostBuffer[float32](s.dev, n+2*guard)
			if err != nil {
				t.Fatalf("NewHostBuffer: %v", err)
			}
			defer out.Close()
			if in.Len() != 2*n || len(in.Slice()) != 2*n || in.Device() != s.dev {
				t.Fatalf("Len %d, Slice of %d, want %d", in.Len(), len(in.Slice()), 2*n)
			}
			a := float32(1.5)
			x, y0 := random[float32](r, n), random[float32](r, n)
			copy(in.Slice(), x)
			copy(in.Slice()[n:], y0)
			xb := newBuffer[float32](t, s, n)
			defer xb.Close()
			yb := upload(t, up, guarded(make([]float32, n)))
			defer yb.Close()
			ex, err := xb.WriteAsync(up, 0, in, 0, n)
			if err != nil {
				t.Fatalf("WriteAsync: %v", err)
			}
			defer ex.Close()
			ey, err := yb.WriteAsync(up, guard, in, n, n)
			if err != nil {
				t.Fatalf("WriteAsync: %v", err)
			}
			defer ey.Close()
			// The kernel runs on the other queue, after both copies.
			if err := down.Wait(ctx, ex, ey); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if err := down.Launch(k, engine.Range1D(engine.RoundUp(n, l), l), int32(n), int32(guard), a, xb, yb); err != nil {
				t.Fatalf("Launch: %v", err)
			}
			er, err := yb.ReadAsync(down, 0, out, 0, n+2*guard)
			if err != nil {
				t.Fatalf("ReadAsync: %v", err)
			}
			defer er.Close()
			if err := er.Wait(ctx); err != nil {
				t.Fatalf("Wait for ReadAsync: %v", err)
			}
			checkAxpy(t, out.Slice(), a, x, y0)
			// A recorded event completes after everything before it.
			rec, err := down.Record()
			if errors.Is(err, engine.ErrUnsupported) {
				return
			}
			if err != nil {
				t.Fatalf("Record: %v", err)
			}
			defer rec.Close()
			if err := rec.Wait(ctx); err != nil {
				t.Errorf("Wait for a recorded event: %v", err)
			}
		})
	}
	t.Run("Registered", func(t *testing.T) { s.testRegisteredHost(t) })
	t.Run("Errors", func(t *testing.T) {
		q := s.queue(t)
		h, err := engine.NewHostBuffer[float32](s.dev, 16)
		if err != nil {
			t.Fatal(err)
		}
		b := newBuffer[float32](t, s, 16)
		defer b.Close()
		if _, err := engine.NewHostBuffer[float32](s.dev, 0); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewHostBuffer of 0 elements: %v", err)
		}
		for _, c := range []struct {
			what             string
			off, hoff, count int
			read             bool
		}{{"past the buffer", 8, 0, 9, false}, {"past the host buffer", 0, 8, 9, true}, {"negative host offset", 0, -1, 1, false}} {
			var err error
			if c.read {
				_, err = b.ReadAsync(q, c.off, h, c.hoff, c.count)
			} else {
				_, err = b.WriteAsync(q, c.off, h, c.hoff, c.count)
			}
			if !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.what, err)
			}
		}
		if _, err := b.WriteAsync(q, 0, nil, 0, 1); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("a nil host buffer: %v", err)
		}
		cancelled, cancel := context.WithCancel(t.Context())
		cancel()
		ev, err := b.WriteAsync(q, 0, h, 0, 16)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Wait(cancelled, ev); !errors.Is(err, context.Canceled) {
			t.Errorf("Queue.Wait with a cancelled context: %v", err)
		}
		if err := q.Wait(t.Context(), ev); err != nil {
			t.Errorf("Queue.Wait on the queue's own event: %v", err)
		}
		ev.Close()
		if err := q.Wait(t.Context(), ev); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("Queue.Wait on a closed event: %v", err)
		}
		if err := q.Wait(t.Context(), nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Queue.Wait on a nil event: %v", err)
		}
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if h.Slice() != nil || h.Close() != nil {
			t.Error("a closed host buffer still has a slice, or a second Close fails")
		}
		if _, err := b.WriteAsync(q, 0, h, 0, 1); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("WriteAsync from a closed host buffer: %v", err)
		}
	})
	t.Run("AcrossQueueClose", func(t *testing.T) {
		// A buffer outlives the queue that wrote it; a host buffer waits for its copy.
		q1 := s.queue(t)
		want := random[float32](rng(t), 1000)
		b := upload(t, q1, want)
		defer b.Close()
		h, err := engine.NewHostBuffer[float32](s.dev, len(want))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := b.ReadAsync(q1, 0, h, 0, len(want))
		if err != nil {
			t.Fatal(err)
		}
		ev.Close()                         // the host buffer still waits for it
		if err := q1.Close(); err != nil { // which finishes the copy
			t.Fatal(err)
		}
		got := append([]float32(nil), h.Slice()...)
		checkBits(t, "read through a host buffer", got, want, 0)
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		q2 := s.queue(t)
		checkBits(t, "after its queue closed", download(t, q2, b), want, 0)
	})
}
