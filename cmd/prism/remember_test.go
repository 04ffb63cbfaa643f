package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/store"
	"github.com/prism-compute/prism/engine/enginetest"
)

// TestRememberedSizes: a quick bench whose cases were fitted smaller than their starting
// sizes is followed by one that starts at those sizes (so that compare @previous @last
// pairs every case), on the same devices, from the store; with the store off, or on other
// devices, the sizes are fitted afresh.
func TestRememberedSizes(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	useStore(t)
	bench1 := func(t *testing.T, budget bench.Budget, extra ...string) *bench.Report {
		t.Helper()
		saved := bench.QuickBudget
		bench.QuickBudget = budget
		defer func() { bench.QuickBudget = saved }()
		args := append([]string{"bench", "--device", ids[0], "--ops", "stream/triad/float32,reduce/sum/float32", "--quick", "--count", "3", "--json", "-q"}, extra...)
		out, errOut, err := prismOutput(t, args...)
		if err != nil {
			t.Fatalf("prism %s: %v\n%s", strings.Join(args, " "), err, errOut)
		}
		var rep bench.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return &rep
	}
	tiny := bench.Budget{MaxRun: time.Nanosecond, CaseTime: time.Nanosecond} // every case quartered
	roomy := bench.Budget{MaxRun: time.Hour, CaseTime: time.Millisecond}     // none needs it
	first := bench1(t, tiny)
	second := bench1(t, roomy)
	off := bench1(t, roomy, "--no-store")
	for i, r := range second.Devices[0].Results {
		was := first.Devices[0].Results[i]
		if was.SizeNote == "" {
			t.Fatalf("%s: the first run's size %d was not reduced", was.Case, was.Size)
		}
		if r.Size != was.Size || !strings.Contains(r.SizeNote, "earlier run") {
			t.Errorf("%s: size %d (%q), want the earlier run's %d", r.Case, r.Size, r.SizeNote, was.Size)
		}
		if o := off.Devices[0].Results[i]; o.Size == was.Size || o.SizeNote != "" {
			t.Errorf("%s with --no-store: size %d (%q), want its own fit, the quick size", o.Case, o.Size, o.SizeNote)
		}
	}
}

// TestSameDevices checks which stored runs a bench takes its sizes from: the same device
// IDs, each with its fingerprint timed without or with its queue held (a CUDA run records
// the held one, which the bench cannot know before its first timed case).
func TestSameDevices(t *testing.T) {
	want := map[string][2]string{"cuda:0": {"plain0", "held0"}, "opencl:0:0": {"plain1", "held1"}}
	for _, c := range []struct {
		devs []store.Device
		same bool
	}{
		{[]store.Device{{ID: "cuda:0", Fingerprint: "held0"}, {ID: "opencl:0:0", Fingerprint: "plain1"}}, true},
		{[]store.Device{{ID: "opencl:0:0", Fingerprint: "held1"}, {ID: "cuda:0", Fingerprint: "plain0"}}, true},
		{[]store.Device{{ID: "cuda:0", Fingerprint: "held1"}, {ID: "opencl:0:0", Fingerprint: "plain1"}}, false}, // another device's
		{[]store.Device{{ID: "cuda:0", Fingerprint: "held0"}}, false},                                            // one device fewer
		{[]store.Device{{ID: "cuda:0", Fingerprint: "held0"}, {ID: "opencl:1:0", Fingerprint: "plain1"}}, false}, // another ID
		{nil, false},
	} {
		if got := sameDevices(c.devs, want); got != c.same {
			t.Errorf("sameDevices(%v) = %v, want %v", c.devs, got, c.same)
		}
	}
}
