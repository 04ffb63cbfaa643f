package main

import (
	"slices"
	"testing"

	"github.com/prism-compute/prism/bench"
)

// TestUnlikeHeld checks that a device timed with its queue held in one report and without
// in the other is not like with like, and that the note says what differs; the same
// device timed alike in both is.
func TestUnlikeHeld(t *testing.T) {
	report := func(timing string) *bench.Report {
		r := &bench.Report{HostCPU: "cpu", GOOS: "linux", GOARCH: "amd64"}
		d := bench.DeviceReport{Backend: "cuda", Timing: timing}
		d.Device.ID, d.Device.Name, d.Device.DriverVersion = "cuda:0", "NVIDIA H200", "580.159.04"
		r.Devices = append(r.Devices, d)
		return r
	}
	got := unlikeDevices(report(bench.TimingEvents), report(bench.TimingHeld))
	want := []string{`queue held while timed: "no" -> "yes"`}
	if !slices.Equal(got["cuda:0"], want) {
		t.Errorf("events then held: %q, want cuda:0: %q", got, want)
	}
	if got := unlikeDevices(report(bench.TimingHeld), report(bench.TimingHeld)); len(got) != 0 {
		t.Errorf("held in both: %q, want like with like", got)
	}
	if got := unlikeDevices(report(bench.TimingEvents), report(bench.TimingHost)); len(got) != 0 {
		t.Errorf("events then host clock: %q, want like with like (the fingerprint keeps only the hold)", got)
	}
}
