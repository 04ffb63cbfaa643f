package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench/store"
)

// TestHistorySteps: prism history marks where a series' level steps (bench/regress's
// detector), per device fingerprint, variant and size, and nowhere in a flat series.
func TestHistorySteps(t *testing.T) {
	dev := store.Device{ID: "opencl:0:0", Name: "cpu", Backend: "opencl", Fingerprint: "f1"}
	other := dev
	other.ID, other.Fingerprint = "opencl:1:0", "f2"
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var pts []store.Point
	for i := range 8 {
		med := 1000 * time.Microsecond
		if i >= 4 {
			med = 1500 * time.Microsecond // 50% slower from run 5 on
		}
		flat := 2000 * time.Microsecond
		date := t0.Add(time.Duration(i) * time.Hour)
		pts = append(pts,
			store.Point{Run: store.RunID(i + 1), Date: date, Commit: "c" + string(rune('a'+i)), Device: dev, Case: "x", Size: 1 << 20, Median: med, Min: med, Max: med, Runs: 5},
			store.Point{Run: store.RunID(i + 1), Date: date, Commit: "c" + string(rune('a'+i)), Device: other, Case: "x", Size: 1 << 20, Median: flat, Min: flat, Max: flat, Runs: 5})
	}
	got := withChanges(pts)
	for i, p := range got {
		wantStep := p.Device.ID == dev.ID && p.Run == 5
		if (p.Step != nil) != wantStep {
			t.Errorf("point %d (run %d on %s): step %+v, want a step %v", i, p.Run, p.Device.ID, p.Step, wantStep)
		}
		if p.Step != nil && (p.Step.Before != 1000*time.Microsecond || p.Step.After != 1500*time.Microsecond || p.Step.Ratio < 1.49 || p.Step.Ratio > 1.51) {
			t.Errorf("step %+v, want 1ms -> 1.5ms, ratio 1.5", *p.Step)
		}
	}
	var out bytes.Buffer
	if err := writeHistory(&out, got); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "step: slower from here (1.00ms -> 1.50ms)"); n != 1 {
		t.Errorf("the table marks %d steps, want 1:\n%s", n, out.String())
	}
}
