package kernels

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

// TestPlanSharesPlaced: a 32M float32 sum whose split costs 150 us more than its slower
// part runs on one device whether its data is on the host or sharded: a device alone on
// sharded data is weighed with all of the data resident on it, as a split lays the data
// out from its plan, so each share's time alone is the probe's, with nothing added.
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
	const total = 32 << 20
	for _, place := range []Placement{PlaceHost, PlaceSharded} {
		s, err := PlanSharesSplit(t.Context(), devs, total, 4096, SplitOptions{Placement: place}, probe, whole)
		if err != nil {
			t.Fatal(err)
		}
		sum := PlanSummary(s)
		if s[0].Units+s[1].Units != total || (s[0].Units != 0 && s[1].Units != 0) || !strings.HasPrefix(sum, "one device") {
			t.Errorf("%s: shares %+v (%s); want one device", place, s, sum)
		}
		for _, sh := range s {
			if alone := part(total); sh.Alone < alone-time.Microsecond || sh.Alone > alone+time.Microsecond {
				t.Errorf("%s: %s alone %v, want %v", place, sh.Device, sh.Alone, alone)
			}
		}
		t.Logf("%s: %s", place, sum)
	}
}

// TestPlanSummaryNoShare: sharded data on a fast and a very slow device (its latency
// alone above the fast one's whole time): the fast device runs it all, and the summary
// says one device, the fast one.
func TestPlanSummaryNoShare(t *testing.T) {
	fast, slow := new(engine.Device), new(engine.Device)
	devs := []*engine.Device{fast, slow}
	probe := func(_ context.Context, d *engine.Device, units int) (time.Duration, error) {
		if d == slow {
			return 50*time.Millisecond + time.Duration(units), nil
		}
		return time.Duration(units), nil // 1 ns a unit, no latency
	}
	s, err := PlanSharesSplit(t.Context(), devs, 1<<20, 4096, SplitOptions{Placement: PlaceSharded}, probe, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s[0].Units != 1<<20 || s[1].Units != 0 {
		t.Fatalf("shares %+v: want all on the fast device", s)
	}
	if got := PlanSummary(s); !strings.HasPrefix(got, "one device:  (a split is predicted") {
		t.Errorf("summary %q, want one device, the fast one (its ID is empty here), and the split's prediction", got)
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
