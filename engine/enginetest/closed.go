package enginetest

import (
	"context"
	"errors"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// testClosed checks use after Close: every closed object, and every object of a closed
// device, gives ErrClosed without reaching the driver; Close is idempotent.
func (s *suite) testClosed(t *testing.T) {
	ctx := context.Background()
	// expect runs call, which must fail with ErrClosed before reaching d's driver.
	expect := func(t *testing.T, d *engine.Device, what string, call func() error) {
		t.Helper()
		before := s.callsOn(d)
		err := call()
		if !errors.Is(err, engine.ErrClosed) {
			t.Errorf("%s: got error %v, want one wrapping ErrClosed", what, err)
		}
		checkPrefix(t, what, err)
		s.checkNoDriverCallsOn(t, d, before, what)
	}
	closeTwice := func(t *testing.T, what string, c interface{ Close() error }) {
		t.Helper()
		if err := c.Close(); err != nil {
			t.Errorf("%s.Close: %v", what, err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second %s.Close: %v", what, err)
		}
	}
	args := func(x, y *engine.Buffer[float32]) []any { return []any{int32(1), int32(0), float32(1), x, y} }
	one := []float32{1}

	t.Run("Buffer", func(t *testing.T) {
		q := s.queue(t)
		k := s.kernel(t, suitekernels.Axpy)
		x := upload(t, q, one)
		b := upload(t, q, one)
		closeTwice(t, "Buffer", b)
		expect(t, s.dev, "Write", func() error { return b.Write(ctx, q, 0, one) })
		expect(t, s.dev, "Read", func() error { return b.Read(ctx, q, 0, make([]float32, 1)) })
		expect(t, s.dev, "Download", func() error { _, err := b.Download(ctx, q); return err })
		expect(t, s.dev, "Fill", func() error { return b.Fill(q, 0, 1, 0) })
		expect(t, s.dev, "CopyFrom into it", func() error { return b.CopyFrom(q, 0, x, 0, 1) })
		expect(t, s.dev, "CopyFrom from it", func() error { return x.CopyFrom(q, 0, b, 0, 1) })
		expect(t, s.dev, "Launch with it", func() error { return q.Launch(k, engine.Range1D(1, 1), args(x, b)...) })
	})

	t.Run("Kernel", func(t *testing.T) {
		q := s.queue(t)
		k, err := s.prog.Kernel(suitekernels.Axpy)
		if err != nil {
			t.Fatalf("Kernel: %v", err)
		}
		x := upload(t, q, one)
		closeTwice(t, "Kernel", k)
		expect(t, s.dev, "Launch", func() error { return q.Launch(k, engine.Range1D(1, 1), args(x, x)...) })
		expect(t, s.dev, "LaunchEvent", func() error { _, err := q.LaunchEvent(k, engine.Range1D(1, 1), args(x, x)...); return err })
	})

	t.Run("Program", func(t *testing.T) {
		p, err := s.dev.Build(suitekernels.Source)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		closeTwice(t, "Program", p)
		expect(t, s.dev, "Kernel", func() error { _, err := p.Kernel(suitekernels.Axpy); return err })
	})

	t.Run("Queue", func(t *testing.T) {
		q, err := s.dev.NewQueue()
		if err != nil {
			t.Fatalf("NewQueue: %v", err)
		}
		live := s.queue(t)
		k := s.kernel(t, suitekernels.Axpy)
		x := upload(t, live, one)
		closeTwice(t, "Queue", q)
		expect(t, s.dev, "Write", func() error { return x.Write(ctx, q, 0, one) })
		expect(t, s.dev, "Read", func() error { return x.Read(ctx, q, 0, make([]float32, 1)) })
		expect(t, s.dev, "Fill", func() error { return x.Fill(q, 0, 1, 0) })
		expect(t, s.dev, "CopyFrom", func() error { return x.CopyFrom(q, 0, x, 0, 0) })
		expect(t, s.dev, "Launch", func() error { return q.Launch(k, engine.Range1D(1, 1), args(x, x)...) })
		expect(t, s.dev, "Finish", func() error { return q.Finish(ctx) })
		expect(t, s.dev, "Upload", func() error { _, err := engine.Upload(ctx, q, one); return err })
		expect(t, s.dev, "Timed", func() error {
			_, err := q.Timed(ctx, func() error { return nil })
			return err
		})
	})

	t.Run("Device", func(t *testing.T) {
		dev, err := engine.Open(ctx, s.id)
		if err != nil {
			t.Fatalf("engine.Open(%q): %v", s.id, err)
		}
		q, err := dev.NewQueue()
		if err != nil {
			dev.Close()
			t.Fatalf("NewQueue: %v", err)
		}
		p, err := dev.Build(suitekernels.Source)
		if err != nil {
			dev.Close()
			t.Fatalf("Build: %v", err)
		}
		k, err := p.Kernel(suitekernels.Axpy)
		if err != nil {
			dev.Close()
			t.Fatalf("Kernel: %v", err)
		}
		x, err := engine.Upload(ctx, q, []float32{1, 2, 3})
		if err != nil {
			dev.Close()
			t.Fatalf("Upload: %v", err)
		}
		closeTwice(t, "Device", dev) // closes q, k, p and x too
		expect(t, dev, "NewBuffer", func() error { _, err := engine.NewBuffer[float32](dev, 1); return err })
		expect(t, dev, "Build", func() error { _, err := dev.Build(suitekernels.Source); return err })
		expect(t, dev, "NewQueue", func() error { _, err := dev.NewQueue(); return err })
		expect(t, dev, "Buffer.Write", func() error { return x.Write(ctx, q, 0, one) })
		expect(t, dev, "Buffer.Read", func() error { return x.Read(ctx, q, 0, make([]float32, 1)) })
		expect(t, dev, "Program.Kernel", func() error { _, err := p.Kernel(suitekernels.Axpy); return err })
		expect(t, dev, "Queue.Launch", func() error { return q.Launch(k, engine.Range1D(1, 1), args(x, x)...) })
		expect(t, dev, "Queue.Finish", func() error { return q.Finish(ctx) })
		// The children were closed with the device; closing them again is a no-op.
		for what, c := range map[string]interface{ Close() error }{"Buffer": x, "Kernel": k, "Program": p, "Queue": q} {
			before := s.callsOn(dev)
			if err := c.Close(); err != nil {
				t.Errorf("%s.Close after Device.Close: %v", what, err)
			}
			s.checkNoDriverCallsOn(t, dev, before, what+".Close after Device.Close")
		}
	})
}
