package engine_test

import (
	"context"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/fake"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// TestTimedSharesEvents checks that an Event from LaunchEvent inside Timed stays valid
// after Timed returns, that Timed sums every command, and that a panic in the timed
// function leaves the queue usable.
func TestTimedSharesEvents(t *testing.T) {
	ctx := context.Background()
	dev, q := open(t, "fake:0")
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.Iota)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.NewBuffer[uint32](dev, 64)
	if err != nil {
		t.Fatal(err)
	}
	before := fake.Violations()
	var ev *engine.Event
	total, err := q.Timed(ctx, func() error {
		if err := q.Launch(k, engine.Range1D(64, 64), int32(64), int32(0), out); err != nil {
			return err
		}
		ev, err = q.LaunchEvent(k, engine.Range1D(64, 64), int32(64), int32(0), out)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	one, err := ev.Elapsed(ctx) // the event outlives Timed
	if err != nil {
		t.Fatal(err)
	}
	if one <= 0 || total < one {
		t.Errorf("Timed total %v, one launch %v: want 0 < one <= total", total, one)
	}
	if err := ev.Close(); err != nil {
		t.Fatal(err)
	}
	if v := fake.Violations(); v != before {
		t.Fatalf("%d SPI contract violations (an event used after release?)", v-before)
	}
	func() {
		defer func() { recover() }()
		q.Timed(ctx, func() error { panic("boom") })
	}()
	if _, err := q.Timed(ctx, func() error { return nil }); err != nil {
		t.Fatalf("Timed after a panic in the timed function: %v", err)
	}
}

// TestTimedByHost checks that Timed says when it measured host time: a launch is timed by
// the device, a blocking Write alone by the host.
func TestTimedByHost(t *testing.T) {
	ctx := context.Background()
	dev, q := open(t, "fake:0")
	out, err := engine.NewBuffer[uint32](dev, 64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Timed(ctx, func() error { return out.Fill(q, 0, 64, 1) }); err != nil || q.TimedByHost() {
		t.Errorf("Timed of a fill: host %v, %v; want device time", q.TimedByHost(), err)
	}
	if _, err := q.Timed(ctx, func() error { return out.Write(ctx, q, 0, make([]uint32, 64)) }); err != nil || !q.TimedByHost() {
		t.Errorf("Timed of a blocking write: host %v, %v; want host time", q.TimedByHost(), err)
	}
	var nilQ *engine.Queue
	if nilQ.TimedByHost() {
		t.Error("a nil queue says it timed by host")
	}
}
