package translate

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CheckBuiltinsOnDevices runs the generated program of TestBuiltinsGenerated on each
// device of ids through the engine and checks every output component against its Go
// reference, or where there is none against the first device's. The external test
// package calls it: it may import the CUDA backend, which imports this package.
// PRISM_BUILTINS_ONLY=ROW,ROW,... runs only those rows of builtins.tsv, each in a kernel
// of its own, or in kernels of about PRISM_BUILTINS_PER calls.
func CheckBuiltinsOnDevices(t *testing.T, ids []string) {
	t.Helper()
	start := time.Now()
	g, err := genBuiltins(builtins())
	if only := os.Getenv("PRISM_BUILTINS_ONLY"); only != "" {
		// The rows named (comma-separated), a kernel each: a fault is charged to its row.
		var rows []builtin
		for _, b := range builtins() {
			if slices.Contains(strings.Split(only, ","), b.name) {
				rows = append(rows, b)
			}
		}
		if len(rows) == 0 {
			t.Fatalf("PRISM_BUILTINS_ONLY=%s names no row of builtins.tsv", only)
		}
		per := 1
		if v, perr := strconv.Atoi(os.Getenv("PRISM_BUILTINS_PER")); perr == nil && v > 0 {
			per = v
		}
		g, err = genBuiltinsPer(rows, per)
	}
	if err != nil {
		t.Fatal(err)
	}
	var runs []genRun
	for _, id := range ids {
		begin := time.Now()
		runs = append(runs, runGenOnDevice(t, g, id))
		t.Logf("the run on %s: %v", id, time.Since(begin).Round(time.Millisecond))
	}
	refs, noRef := checkGenRuns(t, g, runs)
	t.Logf("%d calls, %d output components checked against Go references, %d (no reference) against %s's; on %s; %v in all",
		sum(g.rows), refs, noRef, ids[0], strings.Join(ids, ", "), time.Since(start).Round(time.Millisecond))
}
