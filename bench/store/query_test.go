package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// fill records runs of two hosts, devices and commits a day apart, oldest first, and
// returns their IDs in that order.
func fill(t *testing.T, s *Store) []RunID {
	t.Helper()
	day := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	specs := []struct{ host, commit, device string }{
		{"alpha", "1111aaaa", "pthread-cpu"},
		{"alpha", "2222bbbb", "pthread-cpu"},
		{"beta", "2222cccc", "llvmpipe"},
		{"beta", "3333dddd-dirty", "llvmpipe"},
		{"alpha", "3333dddd", "pthread-cpu"},
	}
	var ids []RunID
	for i, sp := range specs {
		r := synthetic(sp.host, sp.commit, sp.device, day.Add(time.Duration(i)*24*time.Hour), 2+i, 3)
		id, err := s.Record(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func TestRuns(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testRuns(t, b.open(t)) })
}

func testRuns(t *testing.T, s *Store) {
	ctx := context.Background()
	ids := fill(t, s)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		f    Filter
		want []int // indexes into ids, newest first
	}{
		{"all", Filter{}, []int{4, 3, 2, 1, 0}},
		{"limit", Filter{Limit: 2}, []int{4, 3}},
		{"host", Filter{Host: "beta"}, []int{3, 2}},
		{"device name part", Filter{Device: "LLVM"}, []int{3, 2}},
		{"device id", Filter{Device: "opencl:0:0"}, []int{4, 3, 2, 1, 0}},
		{"device none", Filter{Device: "h100"}, nil},
		{"commit prefix", Filter{Commit: "2222"}, []int{2, 1}},
		{"commit dirty", Filter{Commit: "3333dddd"}, []int{4, 3}},
		{"case part", Filter{Case: "gemm"}, []int{4, 3}},           // the fifth case is gemm: runs of 5 cases or more
		{"case pattern", Filter{Case: "reduce/*"}, []int{4, 3, 2}}, // the fourth case
		{"case exact", Filter{Case: "stream/triad/float32"}, []int{4, 3, 2, 1, 0}},
		{"since", Filter{Since: day.Add(3 * 24 * time.Hour)}, []int{4, 3}},
		{"until", Filter{Until: day.Add(24 * time.Hour)}, []int{0}},
		{"range", Filter{Since: day.Add(24 * time.Hour), Until: day.Add(3 * 24 * time.Hour)}, []int{2, 1}},
		{"combined", Filter{Host: "alpha", Commit: "2", Case: "blas1"}, []int{1}},
		{"wildcard literal", Filter{Case: "stream_triad"}, nil}, // _ is no wildcard
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := s.Runs(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []RunID
			for _, r := range runs {
				got = append(got, r.ID)
			}
			var want []RunID
			for _, i := range tc.want {
				want = append(want, ids[i])
			}
			if !slices.Equal(got, want) {
				t.Errorf("Runs(%+v) = %v, want %v", tc.f, got, want)
			}
		})
	}
	runs, err := s.Runs(ctx, Filter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if r.Host != "alpha" || r.Commit != "3333dddd" || r.Results != 6 || len(r.Devices) != 1 || r.Devices[0].Name != "pthread-cpu" ||
		r.Devices[0].Fingerprint == "" || !slices.Equal(r.Command, []string{"prism", "bench", "--quick"}) || r.Interrupted ||
		!r.Date.Equal(time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("the newest run lists as %+v", r)
	}
	if _, err := s.Runs(ctx, Filter{Limit: -1}); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Runs with a negative limit = %v, want ErrInvalidArg", err)
	}
}

func TestHistory(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testHistory(t, b.open(t)) })
}

func testHistory(t *testing.T, s *Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var ids []RunID
	var recorded [][]time.Duration
	for i, c := range []string{"aaaa1111", "bbbb2222", "cccc3333"} {
		r := synthetic("h", c, "cpu", base.Add(time.Duration(i)*time.Hour), 3, 4+i)
		// triad slows down by 10% per run
		res := &r.Devices[0].Results[0]
		for j := range res.Stats.Samples {
			res.Stats.Samples[j] = res.Stats.Samples[j] * time.Duration(10+i) / 10
		}
		res.Stats = bench.Summarize(res.Stats.Samples)
		recorded = append(recorded, res.Stats.Samples)
		id, err := s.Record(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Another device's run of the same case, which the device filter leaves out.
	if _, err := s.Record(ctx, synthetic("h", "dddd4444", "other-device", base.Add(4*time.Hour), 1, 2)); err != nil {
		t.Fatal(err)
	}
	pts, err := s.History(ctx, Series{Case: "stream/triad/float32", Device: "cpu", Samples: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 3 {
		t.Fatalf("History has %d points, want 3: %+v", len(pts), pts)
	}
	for i, p := range pts {
		if p.Run != ids[i] || p.Commit != []string{"aaaa1111", "bbbb2222", "cccc3333"}[i] || len(p.Samples) != 4+i || p.Runs != 4+i ||
			p.Device.Name != "cpu" || p.Device.Fingerprint != pts[0].Device.Fingerprint || p.Failed != "" || p.Size != 1024 || p.Variant != "portable" {
			t.Errorf("point %d: %+v", i, p)
		}
		if i > 0 && p.Median <= pts[i-1].Median {
			t.Errorf("point %d: median %v not above the previous %v", i, p.Median, pts[i-1].Median)
		}
		if p.Min > p.Median || p.Max < p.Median || !slices.IsSorted([]time.Duration{p.Min, p.Median, p.Max}) {
			t.Errorf("point %d: min %v, median %v, max %v", i, p.Min, p.Median, p.Max)
		}
		if !slices.Equal(p.Samples, recorded[i]) {
			t.Errorf("point %d: samples %v, recorded %v (in that order)", i, p.Samples, recorded[i])
		}
		if want := bench.Summarize(p.Samples); want.Median != p.Median {
			t.Errorf("point %d: the samples' median is %v, the point's %v", i, want.Median, p.Median)
		}
	}
	all, err := s.History(ctx, Series{Case: "triad"}) // the one case with triad in its name
	if err != nil || len(all) != 4 {
		t.Errorf("History(triad) = %d points, %v; want 4", len(all), err)
	}
	// Without Samples, the same points without their samples.
	for i, p := range all[:min(len(all), len(pts))] {
		if p.Samples != nil || p.Run != pts[i].Run || p.Median != pts[i].Median || p.Min != pts[i].Min || p.Max != pts[i].Max || p.Runs != pts[i].Runs {
			t.Errorf("point %d without samples: %+v; with: %+v", i, p, pts[i])
		}
	}
	if pts, err := s.History(ctx, Series{Case: "stream/triad/float32", Size: 2048}); err != nil || len(pts) != 0 {
		t.Errorf("History at a size never run = %v, %v; want none", pts, err)
	}
	if pts, err := s.History(ctx, Series{Case: "stream/triad/float32", Variant: "portable", Device: "opencl:0:0"}); err != nil || len(pts) != 4 {
		t.Errorf("History by variant and device ID = %d points, %v; want 4", len(pts), err)
	}
	if _, err := s.History(ctx, Series{Case: "stream"}); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("History(stream), two cases: %v, want ErrInvalidArg listing them", err)
	}
	if _, err := s.History(ctx, Series{Case: "nosuchop"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("History(nosuchop) = %v, want ErrNotFound", err)
	}
	cases, err := s.Cases(ctx, "stream")
	if err != nil || !slices.Equal(cases, []string{"stream/copy/float32", "stream/triad/float32"}) {
		t.Errorf("Cases(stream) = %v, %v", cases, err)
	}
}

// TestHistoryFailed records a result failed in each way: each point says why, the first
// reason in the order error, skipped, mismatch, invalid, not verified.
func TestHistoryFailed(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		r := synthetic("h", "c", "cpu", time.Now(), 5, 3)
		res := r.Devices[0].Results
		res[0].Err, res[0].Skipped = "out of memory", "no fp64"
		res[1].Skipped = "no fp64"
		res[2].Mismatch, res[2].Verified, res[2].Invalid = true, false, bench.InvalidPrefix+"x"
		res[3].Invalid = bench.InvalidPrefix + "2 of 3 device times are not positive"
		res[4].Verified = false
		if _, err := s.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Record(ctx, synthetic("h", "d", "cpu", time.Now().Add(time.Hour), 5, 3)); err != nil {
			t.Fatal(err)
		}
		for i, want := range []string{
			"error: out of memory",
			"skipped: no fp64",
			"mismatch: the result differed from the reference",
			"invalid: " + bench.InvalidPrefix + "2 of 3 device times are not positive",
			"not verified",
		} {
			pts, err := s.History(ctx, Series{Case: res[i].Case, Samples: i%2 == 0})
			if err != nil || len(pts) != 2 {
				t.Fatalf("History(%s) = %d points, %v; want 2", res[i].Case, len(pts), err)
			}
			if pts[0].Failed != want || pts[1].Failed != "" {
				t.Errorf("History(%s): failed %q then %q; want %q then none", res[i].Case, pts[0].Failed, pts[1].Failed, want)
			}
		}
	})
}
