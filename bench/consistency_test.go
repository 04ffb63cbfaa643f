package bench

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// genSamples returns 1 to 12 positive device times around a random median, in ns.
func genSamples(rng *rand.Rand) []time.Duration {
	base := 1000 + rng.Int64N(1_000_000)
	s := make([]time.Duration, 1+rng.IntN(12))
	for i := range s {
		s[i] = time.Duration(base + rng.Int64N(base/10+1))
	}
	return s
}

// genReport returns a valid report: one to three devices of one to five measured cases
// (some with a vendor baseline), and sometimes a split and a collective.
func genReport(rng *rand.Rand) *Report {
	r := &Report{Schema: SchemaVersion, Prism: "devel", Host: "test", Config: ConfigInfo{Count: 8}}
	for i := range 1 + rng.IntN(3) {
		d := DeviceReport{Backend: "opencl"}
		d.Device.ID, d.Device.Name = fmt.Sprintf("opencl:0:%d", i), "Test CPU"
		for j := range 1 + rng.IntN(5) {
			res := Result{Case: fmt.Sprintf("stream/op%d/float32", j), Family: "stream", Type: "float32", Size: 1 << (10 + rng.IntN(10)), Verified: true}
			res.measured(genSamples(rng), float64(rng.IntN(3))*float64(res.Size), 12*float64(res.Size))
			if rng.IntN(4) == 0 {
				v := Result{Case: res.Case, Family: "stream", Type: "float32", Size: res.Size, Verified: true, Variant: "vendor", VendorLibrary: true}
				v.measured(genSamples(rng), res.Flops, res.Bytes)
				res.Vendor = &v
			}
			d.Results = append(d.Results, res)
		}
		r.Devices = append(r.Devices, d)
	}
	if len(r.Devices) >= 2 && rng.IntN(2) == 0 {
		devs := []string{r.Devices[0].Device.ID, r.Devices[1].Device.ID}
		s := SplitResult{Case: "reduce/sum/float32", Devices: devs, Size: 1 << 16, Stats: Summarize(genSamples(rng)), Verified: true, GBs: 3, Speedup: 1.5, Fastest: devs[0]}
		for _, id := range devs {
			s.Single = append(s.Single, SingleDevice{Device: id, Stats: Summarize(genSamples(rng)), Resident: Summarize(genSamples(rng))})
		}
		r.Splits = append(r.Splits, s)
		c := CollectiveResult{Case: "collective/all-reduce/float32", Count: 4096, Bytes: 16384, Ranks: 2, Devices: devs, Library: "prism",
			Stats: Summarize(genSamples(rng)), AlgBW: 2, BusBW: 2, Verified: true}
		r.Collectives = append(r.Collectives, c)
	}
	return r
}

// encode returns r as WriteJSON writes it.
func encode(t *testing.T, r *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// corruption changes one field of a report; ok is false where the report has nothing it
// applies to. what names the case changed as the error must name it, field the field.
type corruption struct {
	name  string
	field string // a field the error must name
	apply func(r *Report, rng *rand.Rand) (what string, ok bool)
}

// pickResult returns a random timed result of r and the name errors give its case.
func pickResult(r *Report, rng *rand.Rand) (*Result, string) {
	d := &r.Devices[rng.IntN(len(r.Devices))]
	res := &d.Results[rng.IntN(len(d.Results))]
	return res, fmt.Sprintf("%s %s %s", d.Device.ID, res.Case, FormatSize(res.Size))
}

// onStats corrupts the stats of a random result.
func onStats(f func(s *Stats)) func(r *Report, rng *rand.Rand) (string, bool) {
	return func(r *Report, rng *rand.Rand) (string, bool) {
		res, what := pickResult(r, rng)
		f(&res.Stats)
		return what, true
	}
}

var corruptions = []corruption{
	{"samples doubled, summary unchanged", "samples_ns", onStats(func(s *Stats) {
		for i := range s.Samples {
			s.Samples[i] *= 2
		}
	})},
	{"median x10", "median_ns", onStats(func(s *Stats) { s.Median *= 10 })},
	{"median /10", "median_ns", onStats(func(s *Stats) { s.Median /= 10 })},
	{"min above max", "min_ns", onStats(func(s *Stats) { s.Min, s.Max = s.Max+1, s.Min })},
	{"min raised", "min_ns", onStats(func(s *Stats) { s.Min = s.Median + 1 })},
	{"max lowered", "max_ns", onStats(func(s *Stats) { s.Max = s.Median - 1 })},
	{"runs one more", "runs", onStats(func(s *Stats) { s.Runs++ })},
	{"runs 0", "runs", onStats(func(s *Stats) { s.Runs = 0 })},
	{"runs negative", "runs", onStats(func(s *Stats) { s.Runs = -s.Runs })},
	{"a sample dropped", "runs", onStats(func(s *Stats) { s.Samples = s.Samples[1:] })},
	{"a sample x100", "samples_ns", onStats(func(s *Stats) { s.Samples[len(s.Samples)/2] *= 100 })},
	{"samples sorted and shifted", "samples_ns", onStats(func(s *Stats) {
		slices.Sort(s.Samples)
		s.Samples = append(s.Samples[1:], s.Samples[len(s.Samples)-1]+1)
	})},
	{"no samples, median above max", "median_ns", onStats(func(s *Stats) { s.Samples, s.Median = nil, 10*s.Max })},
	{"no samples, min above max", "min_ns", onStats(func(s *Stats) { s.Samples, s.Min, s.Max = nil, s.Max+1, s.Min })},
	{"negative gbs", "gbs", func(r *Report, rng *rand.Rand) (string, bool) {
		res, what := pickResult(r, rng)
		res.GBs = -res.GBs - 1
		return what, true
	}},
	{"negative bytes", "bytes", func(r *Report, rng *rand.Rand) (string, bool) {
		res, what := pickResult(r, rng)
		res.Bytes = -1
		return what, true
	}},
	{"vendor median x10", "median_ns", func(r *Report, rng *rand.Rand) (string, bool) {
		for _, d := range r.Devices {
			for i := range d.Results {
				if v := d.Results[i].Vendor; v != nil {
					v.Stats.Median *= 10
					return fmt.Sprintf("%s %s %s", d.Device.ID, d.Results[i].Case, FormatSize(d.Results[i].Size)), true
				}
			}
		}
		return "", false
	}},
	{"split samples doubled", "samples_ns", func(r *Report, rng *rand.Rand) (string, bool) {
		if len(r.Splits) == 0 {
			return "", false
		}
		s := &r.Splits[0]
		for i := range s.Stats.Samples {
			s.Stats.Samples[i] *= 2
		}
		return "split " + s.Case, true
	}},
	{"device alone min above max", "min_ns", func(r *Report, rng *rand.Rand) (string, bool) {
		if len(r.Splits) == 0 {
			return "", false
		}
		sd := &r.Splits[0].Single[rng.IntN(len(r.Splits[0].Single))]
		sd.Stats.Min, sd.Stats.Max = sd.Stats.Max+1, sd.Stats.Min
		return sd.Device + " alone", true
	}},
	{"collective runs one less", "runs", func(r *Report, rng *rand.Rand) (string, bool) {
		if len(r.Collectives) == 0 {
			return "", false
		}
		r.Collectives[0].Stats.Runs--
		return r.Collectives[0].Case, true
	}},
}

// TestReadersRefuseInconsistentReports is the property that no reader or gate decides on
// a report that contradicts itself: reports generated at random are read back whole;
// each with one field corrupted (samples doubled under an unchanged median, a median x10,
// min above max, runs that are not the number of samples, a negative rate, in a case, a
// vendor baseline, a split, a device alone or a collective) is refused by ReadReport,
// ReadReportFile and ReadReportFiles with an error wrapping ErrInconsistent that names the
// file, the case and the field; and Compare, given it in memory, never calls the case "~"
// and its Gate fails, the corrupted report on either side.
func TestReadersRefuseInconsistentReports(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]int{}
	for iter := range 400 {
		rng := rand.New(rand.NewPCG(uint64(iter), 35))
		good := genReport(rng)
		raw := encode(t, good)
		back, err := ReadReport(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("iteration %d: a valid report refused: %v", iter, err)
		}
		if got, want := back.Devices[0].Results[0].Stats, good.Devices[0].Results[0].Stats; got.Median != want.Median || got.Runs != want.Runs || !slices.Equal(got.Samples, want.Samples) {
			t.Fatalf("iteration %d: stats read as %+v, written %+v", iter, got, want)
		}
		c := corruptions[rng.IntN(len(corruptions))]
		bad, _ := ReadReport(bytes.NewReader(raw)) // a copy to corrupt
		what, ok := c.apply(bad, rng)
		if !ok {
			continue
		}
		seen[c.name]++
		path := filepath.Join(dir, fmt.Sprintf("bad-%d.json", iter))
		if err := os.WriteFile(path, encode(t, bad), 0o644); err != nil {
			t.Fatal(err)
		}
		goodPath := filepath.Join(dir, fmt.Sprintf("good-%d.json", iter))
		if err := os.WriteFile(goodPath, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		check := func(reader string, err error, name string) {
			t.Helper()
			switch {
			case !errors.Is(err, ErrInconsistent):
				t.Errorf("iteration %d, %s: %s: %v; want an error wrapping ErrInconsistent", iter, c.name, reader, err)
			case !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), name):
				t.Errorf("iteration %d, %s: %s: %q names not %q, %q and %q", iter, c.name, reader, err, name, what, c.field)
			}
		}
		_, err = ReadReport(bytes.NewReader(encode(t, bad)))
		check("ReadReport", err, "")
		_, err = ReadReportFile(path)
		check("ReadReportFile", err, path)
		_, err = ReadReportFiles(path)
		check("ReadReportFiles", err, path)

		// In memory, past the readers: Compare and its gate, the corrupted report on
		// either side.
		for _, side := range []struct {
			name     string
			old, new *Report
		}{{"new", back, bad}, {"old", bad, back}} {
			cmp := Compare(side.old, side.new, DefaultCompareOptions)
			if cmp.Gate() == nil {
				t.Errorf("iteration %d, %s, corrupted %s report: the gate passes", iter, c.name, side.name)
			}
			found := false
			for _, ch := range cmp.Changes {
				inconsistent := ch.Old != nil && ch.Old.contradiction() != "" || ch.New != nil && ch.New.contradiction() != ""
				if inconsistent && ch.Verdict != VerdictFailed {
					t.Errorf("iteration %d, %s, corrupted %s report: %s is %q, not failed", iter, c.name, side.name, ch, ch.Verdict)
				}
				found = found || inconsistent
			}
			if !found {
				t.Errorf("iteration %d, %s, corrupted %s report: no change holds the corrupted case %s", iter, c.name, side.name, what)
			}
		}
	}
	for _, c := range corruptions {
		if seen[c.name] == 0 {
			t.Errorf("corruption %q never applied", c.name)
		}
	}
}

// TestReadRecomputesAbsentSummary: a case with samples and no summary (runs and times 0)
// is read with the summary and rates computed from its samples, as Prism would have
// written them.
func TestReadRecomputesAbsentSummary(t *testing.T) {
	doc := `{"schema": 1, "devices": [{"device": {"id": "opencl:0:0"}, "results": [
		{"case": "stream/copy/float32", "size": 1024, "verified": true, "bytes": 8192,
		 "stats": {"runs": 0, "median_ns": 0, "min_ns": 0, "max_ns": 0, "samples_ns": [4000, 1000, 3000, 2000]}}]}]}`
	r, err := ReadReport(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	res := r.Devices[0].Results[0]
	if s := res.Stats; s.Runs != 4 || s.Median != 2500 || s.Min != 1000 || s.Max != 4000 {
		t.Errorf("stats %+v; want 4 runs, median 2500, 1000 to 4000", s)
	}
	if !res.OK() || !near(res.GBs, 8192/2500e-9/1e9) {
		t.Errorf("rates: OK %v, %v GB/s; want %v", res.OK(), res.GBs, 8192/2500e-9/1e9)
	}
}

// TestReadAcceptsEitherMiddleMedian: the median of an even count of samples may be either
// middle time or any between (scripts/vendor.py writes the upper one); one outside them is
// refused.
func TestReadAcceptsEitherMiddleMedian(t *testing.T) {
	for _, tc := range []struct {
		median int
		ok     bool
	}{{2000, true}, {2500, true}, {3000, true}, {1999, false}, {3001, false}} {
		doc := fmt.Sprintf(`{"schema": 1, "devices": [{"device": {"id": "opencl:0:0"}, "results": [
			{"case": "stream/copy/float32", "size": 1024, "verified": true,
			 "stats": {"runs": 4, "median_ns": %d, "min_ns": 1000, "max_ns": 4000, "samples_ns": [4000, 1000, 3000, 2000]}}]}]}`, tc.median)
		_, err := ReadReport(strings.NewReader(doc))
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "median_ns")) {
			t.Errorf("median %d: %v; want ok %v", tc.median, err, tc.ok)
		}
	}
}
