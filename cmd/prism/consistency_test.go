package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench"
)

// TestReadersRefuseInconsistentReports: every command that reads a report (report in
// each format, compare with and without --fail-on-regression, either side, plot, check
// either side, import) refuses one whose summary contradicts its samples, with exit code
// 1 and an error naming the file, the case and the field; none decides "~" or exits 0 on
// it. The same report, consistent, passes each. bench's TestReadersRefuseInconsistentReports
// is the property over random reports and corruptions; this is the commands' side.
func TestReadersRefuseInconsistentReports(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	cases := []string{"stream/copy/float32", "stream/scale/float32"}
	good := filepath.Join(dir, "good.json")
	saveReport(t, good, syntheticReport("opencl:0:0", 100, cases...))
	// a byte order mark before it changes nothing
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bom := writeFile(t, dir, "bom.json", "\ufeff"+string(raw))

	for _, tc := range []struct {
		name, field string
		corrupt     func(s *bench.Stats)
	}{
		{"samples doubled, median unchanged", "samples_ns", func(s *bench.Stats) {
			for i := range s.Samples {
				s.Samples[i] *= 2
			}
		}},
		{"median x10", "median_ns", func(s *bench.Stats) { s.Median *= 10 }},
		{"min above max", "min_ns", func(s *bench.Stats) { s.Min, s.Max = s.Max+1, s.Min }},
		{"runs not the samples", "runs", func(s *bench.Stats) { s.Runs = 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := syntheticReport("opencl:0:0", 100, cases...)
			tc.corrupt(&r.Devices[0].Results[1].Stats)
			bad := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			saveReport(t, bad, r)
			for _, args := range [][]string{
				{"report", bad},
				{"report", "--csv", bad},
				{"report", "--markdown", bad},
				{"report", good, bad},
				{"compare", good, bad},
				{"compare", "--fail-on-regression", good, bad},
				{"compare", "--fail-on-regression", bad, good},
				{"plot", bad, "-o", filepath.Join(dir, "chart.svg")},
				{"check", "--store", db, "--against", good, "--run", bad},
				{"check", "--store", db, "--against", bad, "--run", good, "--fail-on-regression"},
				{"import", "--store", db, bad},
			} {
				_, err := execPrism(t, args...)
				if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "opencl:0:0 stream/scale/float32 4K") ||
					!strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "contradicts itself") {
					t.Errorf("prism %s: %v; want the file, the case, %s and \"contradicts itself\"", strings.Join(args, " "), err, tc.field)
				}
				if code := run(context.Background(), args); code != exitError {
					t.Errorf("prism %s: exit %d, want %d", strings.Join(args, " "), code, exitError)
				}
			}
		})
	}
	for _, args := range [][]string{
		{"report", good}, {"report", bom}, {"compare", "--fail-on-regression", good, bom},
		{"check", "--store", db, "--against", good, "--run", bom, "--fail-on-regression"},
		{"import", "--store", db, bom},
	} {
		if code := run(context.Background(), args); code != exitOK {
			t.Errorf("prism %s (consistent): exit %d", strings.Join(args, " "), code)
		}
	}
	// plot reads it (and finds nothing to draw in a report without ceilings)
	if _, err := execPrism(t, "plot", good, "-o", filepath.Join(dir, "chart.svg")); err == nil || strings.Contains(err.Error(), "contradicts") {
		t.Errorf("prism plot (consistent): %v; want only that it has nothing to plot", err)
	}
}
