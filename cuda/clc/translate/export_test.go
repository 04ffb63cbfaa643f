package translate

import (
	"strings"
	"testing"
	"time"
)

// CheckBuiltinsOnDevices runs the generated program of TestBuiltinsGenerated on each
// device of ids through the engine and checks every output component against its Go
// reference, or where there is none against the first device's. The external test
// package calls it: it may import the CUDA backend, which imports this package.
func CheckBuiltinsOnDevices(t *testing.T, ids []string) {
	t.Helper()
	start := time.Now()
	g, err := genBuiltins(builtins())
	if err != nil {
		t.Fatal(err)
	}
	var runs []genRun
	for _, id := range ids {
		begin := time.Now()
		runs = append(runs, genRun{id, runGenOnDevice(t, g, id)})
		t.Logf("the run on %s: %v", id, time.Since(begin).Round(time.Millisecond))
	}
	refs, noRef := checkGenRuns(t, g, runs)
	t.Logf("%d calls, %d output components checked against Go references, %d (no reference) against %s's; on %s; %v in all",
		sum(g.rows), refs, noRef, ids[0], strings.Join(ids, ", "), time.Since(start).Round(time.Millisecond))
}
