package kernels

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

// TestPlanSharesPlaced: where the data lives changes the plan. Two equal devices, 10 us +
// units/rate a part, 150 us of fixed cost a split: a 32M sum whose data comes from the
// host runs on one device (as TestPlanSharesFixedCost); the same sum on data sharded
// evenly over the two devices splits, since one device alone must first gather the other
// half (16M float32 at 10 GB/s: 6.7 ms, against 115 us of work), and each share says the
// gather predicted; with no gather probe, sharded data plans as host data.
func TestPlanSharesPlaced(t *testing.T) {
	devs := []*engine.Device{new(engine.Device), new(engine.Device)}
	const lat = 10 * time.Microsecond
	const rate = 32e6 / 100e-6
	part := func(units int) time.Duration { return lat + time.Duration(float64(units)/rate*1e9) }
	probe := func(_ context.Context, _ *engine.Device, units int) (time.Duration, error) { return part(units), nil }
	whole := func(_ context.Context, units []int) (time.Duration, error) {
		var t time.Duration
		for _, u := range units {
			if u > 0 {
				t = max(t, part(u))
			}
		}
		return t + 150*time.Microsecond, nil
	}
	var moved []int
	gather := func(_ context.Context, _ *engine.Device, units int) (time.Duration, error) {
		moved = append(moved, units)
		return time.Duration(float64(units) * 4 / 10e9 * 1e9), nil
	}
	const total = 32 << 20
	for _, c := range []struct {
		name   string
		place  Placement
		gather Probe
		split  bool
	}{
		{"host data", PlaceHost, gather, false},
		{"sharded data", PlaceSharded, gather, true},
		{"sharded data, no gather probe", PlaceSharded, nil, false},
	} {
		moved = nil
		s, err := PlanSharesPlaced(t.Context(), devs, total, 4096, SplitOptions{Placement: c.place}, probe, whole, c.gather)
		if err != nil {
			t.Fatal(err)
		}
		used := 0
		for _, sh := range s {
			if sh.Units > 0 {
				used++
			}
		}
		sum := PlanSummary(s)
		if c.split != (used == 2) || c.split != strings.HasPrefix(sum, "split over 2 devices") {
			t.Errorf("%s: shares %+v (%s); want a split: %v", c.name, s, sum, c.split)
		}
		wantGather := time.Duration(0)
		if c.place == PlaceSharded && c.gather != nil {
			half := float64(total / 2)
			wantGather = time.Duration(half * 4 / 10e9 * 1e9)
			if len(moved) != 2 || moved[0] != total/2 || moved[1] != total/2 {
				t.Errorf("%s: gathers of %v units; want half of %d onto each device", c.name, moved, total)
			}
		} else if len(moved) > 0 {
			t.Errorf("%s: gathers of %v units timed; want none", c.name, moved)
		}
		for _, sh := range s {
			if sh.Gather != wantGather {
				t.Errorf("%s: %s's gather %v, want %v", c.name, sh.Device, sh.Gather, wantGather)
			}
			if alone := part(total) + wantGather; sh.Alone < alone-time.Microsecond || sh.Alone > alone+time.Microsecond {
				t.Errorf("%s: %s alone %v, want %v", c.name, sh.Device, sh.Alone, alone)
			}
		}
		t.Logf("%s: %s", c.name, sum)
	}
}

// TestPlanSummaryNoShare: sharded data on a fast and a very slow device (its latency
// alone above the fast one's whole time): the fast device runs it all, and the summary
// says that no other device finishes a share in time, not that a split missed the margin.
func TestPlanSummaryNoShare(t *testing.T) {
	fast, slow := new(engine.Device), new(engine.Device)
	devs := []*engine.Device{fast, slow}
	probe := func(_ context.Context, d *engine.Device, units int) (time.Duration, error) {
		if d == slow {
			return 50*time.Millisecond + time.Duration(units), nil
		}
		return time.Duration(units), nil // 1 ns a unit, no latency
	}
	gather := func(_ context.Context, _ *engine.Device, units int) (time.Duration, error) {
		return time.Duration(units), nil
	}
	s, err := PlanSharesPlaced(t.Context(), devs, 1<<20, 4096, SplitOptions{Placement: PlaceSharded}, probe, nil, gather)
	if err != nil {
		t.Fatal(err)
	}
	if s[0].Units != 1<<20 || s[1].Units != 0 {
		t.Fatalf("shares %+v: want all on the fast device", s)
	}
	if got, want := PlanSummary(s), "one device:  (no other device finishes a share in time)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// TestCheckSharded: a split that runs on sharded data takes either placement; one that
// does not refuses sharded data as unsupported; an unknown placement is refused.
func TestCheckSharded(t *testing.T) {
	for _, c := range []struct {
		place Placement
		ok    bool
		want  error
	}{
		{PlaceHost, false, nil}, {PlaceHost, true, nil}, {PlaceSharded, true, nil},
		{PlaceSharded, false, engine.ErrUnsupported}, {Placement(7), true, engine.ErrInvalidArg},
	} {
		err := CheckSharded("map/axpy/float32", SplitOptions{Placement: c.place}, c.ok)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%v, ok %v: %v, want %v", c.place, c.ok, err, c.want)
		}
	}
	if PlaceHost.String() != "host" || PlaceSharded.String() != "sharded" {
		t.Errorf("placements say %q and %q", PlaceHost, PlaceSharded)
	}
}
