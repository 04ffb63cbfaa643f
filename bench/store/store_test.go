package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// realReports reads every report of the repository's test data and results: the
// renderers' (one device, several, vendor baselines, splits, collectives, and the older
// layouts of splits and collectives) and the measured results in docs/results.
func realReports(t *testing.T) map[string]*bench.Report {
	t.Helper()
	var paths []string
	for _, g := range []string{"../render/testdata/*.json", "../../docs/results/*.json"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	out := map[string]*bench.Report{}
	for _, p := range paths {
		r, err := bench.ReadReportFile(p)
		if err != nil {
			if strings.HasPrefix(p, "../render/") {
				t.Fatalf("a report of bench/render's test data does not read: %v", err)
			}
			t.Logf("not a report, left out: %v", err)
			continue
		}
		out[p] = r
	}
	if len(out) < 20 {
		t.Fatalf("found %d reports, want at least 20 (render's test data and docs/results)", len(out))
	}
	return out
}

func TestRecordExportRoundTrip(t *testing.T) {
	reps := realReports(t)
	eachBackend(t, func(t *testing.T, b backend) { testRoundTrip(t, b.open(t), reps) })
}

func testRoundTrip(t *testing.T, s *Store, reps map[string]*bench.Report) {
	ctx := context.Background()
	ids := map[string]RunID{}
	kinds := map[string]bool{}
	for p, r := range reps {
		id, err := s.Record(ctx, r)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		ids[p] = id
		kinds["splits"] = kinds["splits"] || len(r.Splits) > 0
		kinds["collectives"] = kinds["collectives"] || len(r.Collectives) > 0
		for _, d := range r.Devices {
			for _, res := range d.Results {
				kinds["vendor"] = kinds["vendor"] || res.Vendor != nil
			}
		}
	}
	for _, k := range []string{"splits", "collectives", "vendor"} {
		if !kinds[k] {
			t.Errorf("no report with %s among the test data", k)
		}
	}
	for p, id := range ids {
		got, err := s.Export(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		// A date written with an offset ("+00:00", as vendor.py writes it) comes back as the
		// same instant in UTC ("Z"), as WriteJSON writes every date.
		want := *reps[p]
		if !got.Date.Equal(want.Date) {
			t.Errorf("%s: exported date %v, recorded %v", p, got.Date, want.Date)
		}
		want.Date = want.Date.UTC()
		if !reflect.DeepEqual(got, &want) {
			var a, b bytes.Buffer
			reps[p].WriteJSON(&a)
			got.WriteJSON(&b)
			t.Errorf("%s: the exported report differs from the recorded one (JSON equal: %v)", p, bytes.Equal(a.Bytes(), b.Bytes()))
		}
	}
	if err := s.Check(ctx); err != nil {
		t.Error(err)
	}
	runs, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(reps) {
		t.Errorf("Runs lists %d runs, want %d", len(runs), len(reps))
	}
	// The samples stored are the reports': count them both ways.
	want := 0
	for _, r := range reps {
		for _, d := range r.Devices {
			for _, res := range d.Results {
				want += len(res.Stats.Samples)
				if res.Vendor != nil {
					want += len(res.Vendor.Stats.Samples)
				}
			}
		}
		for _, sp := range r.Splits {
			want += len(sp.Stats.Samples)
		}
		for _, c := range r.Collectives {
			want += len(c.Stats.Samples)
		}
	}
	if got := countSamples(t, s); got != want || want == 0 {
		t.Errorf("the store holds %d samples, the reports %d", got, want)
	}
	// Each result's samples are its report's, value by value in the order taken.
	for p, id := range ids {
		got := runSamples(t, s, id)
		if want := reportSamples(reps[p]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the run's samples are %v, the report's %v", p, got, want)
		}
	}
}

// reportSamples returns the samples of each result of r in the order Record stores them
// (each device's cases, a case's vendor run after it, the splits, the collectives); nil
// for a result without samples.
func reportSamples(r *bench.Report) [][]time.Duration {
	var out [][]time.Duration
	add := func(ss []time.Duration) {
		if len(ss) == 0 {
			ss = nil
		}
		out = append(out, ss)
	}
	for _, d := range r.Devices {
		for _, res := range d.Results {
			add(res.Stats.Samples)
			if res.Vendor != nil {
				add(res.Vendor.Stats.Samples)
			}
		}
	}
	for _, sp := range r.Splits {
		add(sp.Stats.Samples)
	}
	for _, c := range r.Collectives {
		add(c.Stats.Samples)
	}
	return out
}

// runSamples returns the samples of each result of the run, in the order of the results.
func runSamples(t testing.TB, s *Store, id RunID) [][]time.Duration {
	t.Helper()
	rows, err := s.db.Query(s.d.q("SELECT samples FROM results WHERE run_id = ? ORDER BY position"), int64(id))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]time.Duration
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		ss, err := decodeSamples(b)
		if err != nil {
			t.Fatalf("run %d: %v", id, err)
		}
		out = append(out, ss)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecordMadeReport records a report made here, with what reports read from files
// lack (a host CPU, an environment, an interruption, a split and a collective), and
// exports it: the JSON is the same.
func TestRecordMadeReport(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testRecordMadeReport(t, b.open(t)) })
}

func testRecordMadeReport(t *testing.T, s *Store) {
	ctx := context.Background()
	r := synthetic("h1", "abc123", "cpu", time.Now(), 3, 5)
	r.Interrupted, r.InterruptedAt = true, "opencl:0:0 gemm/nn/float32 4M"
	r.Splits = []bench.SplitResult{{Case: "stream/triad/float32", Devices: []string{"opencl:0:0", "opencl:1:0"}, Size: 1 << 20,
		Stats: bench.Summarize([]time.Duration{3, 1, 2}), Verified: true, GBs: 4}}
	r.Collectives = []bench.CollectiveResult{{Case: "collective/all-reduce/float32", Count: 1024, Bytes: 4096, Ranks: 2,
		Devices: []string{"opencl:0:0", "opencl:1:0"}, Library: "host", Stats: bench.Summarize([]time.Duration{5, 6}), Verified: true}}
	id, err := s.Record(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// The export is the report as a file of it reads (which adds what reading derives,
	// such as verdicts of reports from before them).
	var a bytes.Buffer
	if err := r.WriteJSON(&a); err != nil {
		t.Fatal(err)
	}
	want, err := bench.ReadReport(&a)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		var b, c bytes.Buffer
		got.WriteJSON(&b)
		want.WriteJSON(&c)
		t.Errorf("exported report differs:\n%s\nwant\n%s", b.Bytes(), c.Bytes())
	}
	if got.HostCPU != "Test CPU" || got.Env["POCL_WORK_GROUP_SPECIALIZATION"] != "0" || !got.Interrupted {
		t.Errorf("exported host_cpu %q, env %v, interrupted %v", got.HostCPU, got.Env, got.Interrupted)
	}
	runs, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || !runs[0].Interrupted || runs[0].InterruptedAt != r.InterruptedAt {
		t.Fatalf("Runs = %+v, want the one run marked interrupted at %q", runs, r.InterruptedAt)
	}
	if runs[0].Results != 5 { // 3 cases, a split and a collective
		t.Errorf("the run has %d results, want 5", runs[0].Results)
	}
	h, err := s.History(ctx, Series{Case: "collective/all-reduce/float32", Samples: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || len(h[0].Samples) != 2 || h[0].Device.ID != "opencl:0:0,opencl:1:0" || h[0].Variant != "host" {
		t.Errorf("the collective's history is %+v", h)
	}
	if err := s.Check(ctx); err != nil {
		t.Error(err)
	}
}

func TestRecordNil(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testRecordNil(t, b.open(t)) })
}

func testRecordNil(t *testing.T, s *Store) {
	if _, err := s.Record(context.Background(), nil); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Record(nil) = %v, want ErrInvalidArg", err)
	}
	if _, err := s.Export(context.Background(), 7); !errors.Is(err, ErrNotFound) {
		t.Errorf("Export(7) of an empty store = %v, want ErrNotFound", err)
	}
}

// TestRecordAllOrNothing cancels a Record half-way through its context: nothing of the run
// is kept.
func TestRecordAllOrNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testRecordAllOrNothing(t, b.open(t)) })
}

func testRecordAllOrNothing(t *testing.T, s *Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Record(ctx, synthetic("h", "c", "cpu", time.Now(), 10, 10)); err == nil {
		t.Fatal("Record with a cancelled context succeeded")
	}
	for _, table := range []string{"runs", "devices", "results"} {
		var n int
		if err := s.db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d rows left in %s after a failed Record", n, table)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	p, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "prism", "results.db"); p != want {
		t.Errorf("DefaultPath() = %s, want %s", p, want)
	}
	if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
		t.Errorf("DefaultPath did not create %s: %v", filepath.Dir(p), err)
	}
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", home)
	if p, err = DefaultPath(); err != nil || p != filepath.Join(home, ".local", "share", "prism", "results.db") {
		t.Errorf("DefaultPath() without XDG_DATA_HOME = %s, %v", p, err)
	}
}

func TestCheckFindsDamage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testCheckFindsDamage(t, b.open(t)) })
}

func testCheckFindsDamage(t *testing.T, s *Store) {
	ctx := context.Background()
	if _, err := s.Record(ctx, synthetic("h", "c", "cpu", time.Now(), 2, 4)); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check of a sound store: %v", err)
	}
	// A result whose sample count says 5 where its samples and runs are 4.
	if _, err := s.db.Exec("UPDATE results SET sample_count = 5 WHERE case_name = 'stream/copy/float32'"); err != nil {
		t.Fatal(err)
	}
	err := s.Check(ctx)
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "4 samples stored, 5 recorded, 4 runs") || !strings.Contains(err.Error(), s.Path()) {
		t.Errorf("Check after a sample count was changed = %v, want ErrDamaged naming the store and the counts that differ", err)
	}
}

// TestFingerprintHeld checks the fingerprint's timing fact: a device timed with its queue
// held (bench.TimingHeld) is not like the same device timed without, while the other
// timings (events, the host's clock, none recorded) keep one fingerprint, the one devices
// had before holds existed.
func TestFingerprintHeld(t *testing.T) {
	r := &bench.Report{HostCPU: "cpu", GOOS: "linux", GOARCH: "amd64", Env: map[string]string{"POCL_DEBUG": "0"}}
	fp := func(timing string) string {
		d := &bench.DeviceReport{Backend: "cuda", Timing: timing}
		d.Device.Name, d.Device.DriverVersion, d.Device.ClockMHz = "NVIDIA H200", "580.159.04", 1980
		return Fingerprint(r, d)
	}
	plain := fp("")
	for _, timing := range []string{bench.TimingEvents, bench.TimingHost} {
		if got := fp(timing); got != plain {
			t.Errorf("timing %q: fingerprint %s, want %s as with none recorded", timing, got, plain)
		}
	}
	if held := fp(bench.TimingHeld); held == plain {
		t.Errorf("timing %q: fingerprint %s, the same as unheld", bench.TimingHeld, held)
	}
}
