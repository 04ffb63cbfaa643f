package main

import (
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/store"
	"github.com/prism-compute/prism/engine"
)

// rememberedSizes returns the sizes the newest earlier run of this host on the same
// devices (the same fingerprints: name, driver, clocks, host CPU, the environment that
// changes results) fitted, with the same --quick, from the results store: so that a fitted
// run starts where the previous one ended and the two compare case for case (a size fitted
// near the budget's bound may otherwise come out a quarter apart from one run to the
// next). It returns nil where the store is off, holds no such run, or cannot be read: the
// run then fits its sizes afresh, and the store's error, if any, comes when the run is
// recorded.
func rememberedSizes(cmd *cobra.Command, devs []*engine.Device, quick bool) map[string]int {
	t, err := storeTargetOf(cmd)
	if err != nil || t.off != "" {
		return nil
	}
	if !strings.Contains(t.dsn, "=") && !strings.Contains(t.dsn, "://") {
		if _, err := os.Stat(t.dsn); err != nil {
			return nil // no SQLite file yet: nothing to remember, and none made here
		}
	}
	ctx := storeContext(cmd)
	s, err := store.Open(ctx, t.dsn)
	if err != nil {
		engine.Tracef("bench: no sizes remembered: %v", err)
		return nil
	}
	defer s.Close()
	rep := &bench.Report{HostCPU: bench.HostCPU(), Env: bench.ResultEnv(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}
	// Each device's fingerprint timed without and with its queue held: which one a run
	// records is learnt from its first timed case, after this.
	want := map[string][2]string{}
	for _, d := range devs {
		dr := bench.DeviceReport{Device: d.Info(), Backend: d.Backend()}
		plain := store.Fingerprint(rep, &dr)
		dr.Timing = bench.TimingHeld
		want[d.ID()] = [2]string{plain, store.Fingerprint(rep, &dr)}
	}
	host, _ := os.Hostname()
	runs, err := s.Runs(ctx, store.Filter{Host: host, Limit: 20})
	if err != nil {
		engine.Tracef("bench: no sizes remembered: %v", err)
		return nil
	}
	for _, r := range runs {
		if !sameDevices(r.Devices, want) {
			continue
		}
		earlier, err := s.Export(ctx, r.ID)
		if err != nil {
			engine.Tracef("bench: no sizes remembered: %v", err)
			return nil
		}
		if sizes := bench.RememberedSizes(earlier, quick); sizes != nil {
			engine.Tracef("bench: starting fitted cases at the sizes of run %d (%d cases)", r.ID, len(sizes))
			return sizes
		}
	}
	return nil
}

// sameDevices reports whether a stored run's devices are the devices of want (by ID), each
// with one of its two fingerprints (timed without and with its queue held).
func sameDevices(devs []store.Device, want map[string][2]string) bool {
	if len(devs) != len(want) {
		return false
	}
	for _, d := range devs {
		fps, ok := want[d.ID]
		if !ok || d.Fingerprint != fps[0] && d.Fingerprint != fps[1] {
			return false
		}
	}
	return true
}
