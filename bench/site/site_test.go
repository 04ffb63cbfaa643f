package site

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/regress"
	"github.com/prism-compute/prism/bench/store"
)

func TestPublish(t *testing.T) {
	st := testStore(t)
	dir := filepath.Join(t.TempDir(), "site")
	sum, err := Publish(context.Background(), st, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	cases, err := st.Cases(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	files := siteFiles(t, dir)
	pages := checkSite(t, files)
	// A page per run and per case of a device (not the splits' and collectives'), the
	// index, the list of runs and the style sheet.
	want := []string{"index.html", "runs.html", "style.css"}
	for _, r := range runs {
		want = append(want, "runs/"+itoa(int64(r.ID))+".html")
	}
	deviceCases := 0
	for _, c := range cases {
		if _, ok := files["cases/"+slug(c)+".html"]; ok {
			deviceCases++
		}
	}
	for _, w := range want {
		if _, ok := files[w]; !ok {
			t.Errorf("no %s in the site", w)
		}
	}
	if sum.Runs != len(runs) || sum.Pages != len(runs)+sum.Cases+2 || sum.Cases != deviceCases || sum.Cases < 3 {
		t.Errorf("summary %+v; want %d runs, %d cases with a page", sum, len(runs), deviceCases)
	}
	if sum.Devices != 3 { // PoCL, Rusticl (llvmpipe) and the synthetic Test GPU
		t.Errorf("%d device fingerprints, want 3", sum.Devices)
	}
	if sum.Dir != dir {
		t.Errorf("summary's directory %q, want %q", sum.Dir, dir)
	}
	if len(files) != len(pages)+1 {
		t.Errorf("%d files, %d pages: want only pages and style.css", len(files), len(pages))
	}
	index := string(files["index.html"])
	for _, w := range []string{
		"pthread-skylake-avx512-AMD EPYC (opencl)", "llvmpipe (LLVM 15.0.6, 256 bits) (opencl)", "Test GPU (opencl)", // the columns
		"vs vendor ",       // single.json's cases against vendor.json's
		"memory-bound at ", // a verdict
		`href="cases/stream_triad_float32.html`,
	} {
		if !strings.Contains(index, w) {
			t.Errorf("index.html lacks %q", w)
		}
	}
	// The cases are rows, the devices columns: one header cell per fingerprint.
	if n := strings.Count(index, `<th><a href="#fp-`); n != 3 {
		t.Errorf("index.html has %d device columns, want 3", n)
	}
	// The synthetic series: from run slowFrom on 30% slower, a step marked on the case's
	// page (a marker in the chart, its row in the table) and listed on the index.
	slowID := runs[slowSeries-1-slowFrom].ID // Runs lists the newest first
	page := string(files["cases/stream_triad_float32.html"])
	if n := strings.Count(page, `class="marker slower"`); n != 1 {
		t.Errorf("the triad page has %d slower markers, want 1 (run %d)", n, slowID)
	}
	if n := strings.Count(page, `class="marker faster"`); n != 0 {
		t.Errorf("the triad page has %d faster markers, want none", n)
	}
	row := regexp.MustCompile(`<tr class="slower"><td class="num"><a href="../runs/(\d+).html">`).FindAllStringSubmatch(page, -1)
	if len(row) != 1 || row[0][1] != itoa(int64(slowID)) {
		t.Errorf("the triad page's slower rows %v, want run %d", row, slowID)
	}
	if !strings.Contains(page, "slower 1.30×: 100.7µs → 130.9µs") || !strings.Contains(page, "+30.0%") {
		t.Errorf("the triad page does not give the step's levels and ratio")
	}
	if sum.Slower != 3 || !strings.Contains(index, `id="slower"`) || strings.Count(index, `<span class="slower">slower 1.30×`) != 3 ||
		!strings.Contains(index, `from <a href="runs/`+itoa(int64(slowID))+`.html">`) {
		t.Errorf("index.html does not list the 3 series slower since run %d (summary: %d)", slowID, sum.Slower)
	}
	// Every chart draws: an SVG with a line per series.
	for name, p := range pages {
		if strings.HasPrefix(name, "cases/") && (p.tags["svg"] == 0 || p.tags["polyline"] == 0) {
			t.Errorf("%s: %d charts, %d lines", name, p.tags["svg"], p.tags["polyline"])
		}
	}
	// A run's page: its devices with the fields of their fingerprint, the command, the
	// commit, every result with its verdict; the splits and collectives across devices.
	multi := string(files["runs/1.html"]) // multi.json
	for _, w := range []string{"llvmpipe", "Fingerprint", "Driver", "Compute units", "Ceilings", "stream/triad/float32", `href="../cases/stream_triad_float32.html"`} {
		if !strings.Contains(multi, w) {
			t.Errorf("multi.json's run page lacks %q", w)
		}
	}
	if withVendor := string(files["runs/2.html"]); !strings.Contains(withVendor, "vendor:opencl:0:0") || strings.Contains(withVendor, "0 MHz") {
		t.Errorf("the vendor baselines' run page: no vendor pseudo-device, or a clock of 0 MHz shown")
	}
	var groups int
	for name, b := range files {
		if strings.HasPrefix(name, "runs/") && bytes.Contains(b, []byte(`id="groups"`)) {
			groups++
		}
	}
	if groups != 2 {
		t.Errorf("%d run pages show results across devices, want 2 (split.json, collective.json)", groups)
	}
	synth := string(files["runs/"+itoa(int64(runs[0].ID))+".html"])
	for _, w := range []string{"prism bench --quick", "0abc0050abcdef", "POCL_WORK_GROUP_SPECIALIZATION=0", "Test CPU", "memory-bound at "} {
		if !strings.Contains(synth, w) {
			t.Errorf("the latest run's page lacks %q", w)
		}
	}
}

// itoa writes a run ID.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestPublishImproved: a series that got faster than ever after its slowdown has a faster
// step after its slower one, and the index lists no slowdown.
func TestPublishImproved(t *testing.T) {
	st := testStore(t)
	for i := range 3 {
		r := synthetic("ci-0", "fff0000", "Test GPU", time.Date(2026, 12, 2, i, 0, 0, 0, time.UTC), 3, 10, 0.8)
		if _, err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "site")
	sum, err := Publish(context.Background(), st, dir, Options{Title: "Team results"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Slower != 0 {
		t.Errorf("%d series slower since their latest step, want 0", sum.Slower)
	}
	files := siteFiles(t, dir)
	checkSite(t, files)
	index := string(files["index.html"])
	if strings.Contains(index, `id="slower"`) {
		t.Errorf("index.html lists slowdowns, and every series is faster than ever")
	}
	page := string(files["cases/stream_triad_float32.html"])
	if strings.Count(page, `class="marker slower"`) != 1 || strings.Count(page, `class="marker faster"`) != 1 ||
		!strings.Contains(page, "faster 0.62×: 130.9µs → 80.") {
		t.Errorf("the triad page does not mark one slower and one faster step")
	}
	if !strings.Contains(index, "<title>Devices by op · Team results</title>") {
		t.Errorf("index.html is not titled with Options.Title")
	}
}

func TestPublishDeterministic(t *testing.T) {
	st := testStore(t)
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, dir := range []string{a, b} {
		if _, err := Publish(context.Background(), st, dir, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	fa, fb := siteFiles(t, a), siteFiles(t, b)
	if len(fa) != len(fb) {
		t.Fatalf("%d files, then %d", len(fa), len(fb))
	}
	for name, data := range fa {
		if !bytes.Equal(data, fb[name]) {
			t.Errorf("%s differs between two publishes of one store", name)
		}
	}
}

// TestPublishReplaces: publishing over a site replaces it whole (a file it did not write
// goes), leaves nothing beside it, and a failed publish leaves the old site as it was.
func TestPublishReplaces(t *testing.T) {
	st := testStore(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "site")
	ctx := context.Background()
	if _, err := Publish(ctx, st, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(dir, "runs", "999.html")
	if err := os.WriteFile(stray, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := st.Record(ctx, synthetic("ci-0", "fff0000", "Test GPU", time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), 3, 10, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(ctx, st, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file of the old site survived the new publish: %v", err)
	}
	files := siteFiles(t, dir)
	if _, ok := files["runs/"+itoa(int64(id))+".html"]; !ok {
		t.Errorf("the new run %d has no page", id)
	}
	checkSite(t, files)
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("beside the site: %v, want the site alone", names)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the site's directory: %v, %v; want mode 0755", fi.Mode(), err)
	}
	// A cancelled publish fails and leaves the site and its parent as they were.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Publish(cctx, st, dir, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled publish: %v, want context.Canceled", err)
	}
	after := siteFiles(t, dir)
	if len(after) != len(files) {
		t.Errorf("a failed publish changed the site: %d files, then %d", len(files), len(after))
	}
	for name, b := range files {
		if !bytes.Equal(b, after[name]) {
			t.Errorf("a failed publish changed %s", name)
		}
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("a failed publish left %d entries beside the site", len(entries)-1)
	}
}

// TestPublishRefuses: Publish never replaces what it did not write.
func TestPublishRefuses(t *testing.T) {
	st := testStore(t)
	ctx := context.Background()
	parent := t.TempDir()
	mine := filepath.Join(parent, "mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(mine, "index.html")
	if err := os.WriteFile(keep, []byte("<html>my own page</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(parent, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		want error
	}{
		{mine, ErrNotSite},
		{file, ErrNotSite},
		{filepath.Join(parent, "no", "such"), os.ErrNotExist},
	} {
		if _, err := Publish(ctx, st, tc.dir, Options{}); !errors.Is(err, tc.want) {
			t.Errorf("Publish to %s: %v, want %v", tc.dir, err, tc.want)
		}
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "<html>my own page</html>" {
		t.Errorf("a directory of other files was changed: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 2 {
		t.Errorf("%d entries in the parent after refusals, want 2", len(entries))
	}
	// An empty directory is taken.
	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(ctx, st, empty, Options{}); err != nil {
		t.Errorf("Publish to an empty directory: %v", err)
	}
}

// TestPublishEmptyStore: a store without runs gives a site that says so.
func TestPublishEmptyStore(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir := filepath.Join(t.TempDir(), "site")
	sum, err := Publish(context.Background(), st, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Runs != 0 || sum.Cases != 0 || sum.Pages != 2 {
		t.Errorf("summary %+v of an empty store", sum)
	}
	files := siteFiles(t, dir)
	checkSite(t, files)
	if !strings.Contains(string(files["index.html"]), "holds no results yet") {
		t.Errorf("the index of an empty store does not say it is empty")
	}
}

func TestSlug(t *testing.T) {
	names := []string{"stream/triad/float32", "stream_triad/float32", "Stream/triad/float32", "a b", ".hidden", "x.y-z", "", "/", "~"}
	seen := map[string]string{}
	for _, n := range names {
		s := slug(n)
		if !regexp.MustCompile(`^[a-z0-9._~-]+$`).MatchString(s) || strings.HasPrefix(s, ".") {
			t.Errorf("slug(%q) = %q: not a plain file name", n, s)
		}
		if o, ok := seen[strings.ToLower(s)]; ok {
			t.Errorf("slug(%q) = slug(%q) = %q, ignoring case", n, o, s)
		}
		seen[strings.ToLower(s)] = n
	}
	if s := slug("stream/triad/float32"); s != "stream_triad_float32" {
		t.Errorf("slug of a case: %q", s)
	}
}

// TestMarkChanges: a lasting 30% step is marked once, where it starts; one odd run is no
// step; a failed run is passed over; each valid run has its change from the previous one.
func TestMarkChanges(t *testing.T) {
	pt := func(ord int, scale float64) *point {
		ss := make([]time.Duration, 10)
		for i := range ss {
			ss[i] = time.Duration(scale * float64(100000+i*37))
		}
		return &point{run: &runInfo{sum: store.RunSummary{ID: store.RunID(ord + 1), Commit: "c"}, ord: ord}, stats: bench.Summarize(ss)}
	}
	failed := pt(4, 5)
	failed.failed = "error: lost"
	scales := []float64{1, 1, 1.5, 1, 0, 1.3, 1.3, 1.31, 1.3}
	s := &series{}
	for i, sc := range scales {
		if sc == 0 {
			s.points = append(s.points, failed)
			continue
		}
		s.points = append(s.points, pt(i, sc))
	}
	markChanges(s, regress.DetectOptions{})
	var steps []int
	for i, p := range s.points {
		if p.change.step != nil {
			steps = append(steps, i)
		}
	}
	if !slices.Equal(steps, []int{5}) || !s.points[5].change.slower() || s.lastStep() != s.points[5] {
		t.Fatalf("steps at %v, want one slower at 5", steps)
	}
	if r := s.points[5].change.step.Ratio; r < 1.29 || r > 1.31 {
		t.Errorf("the step's ratio %.3f, want 1.30", r)
	}
	if d := s.points[5].change.delta; d < 1.29 || d > 1.31 { // from point 3, the failed 4 passed over
		t.Errorf("the change of point 5: %.3f, want 1.30 from point 3", d)
	}
	if s.points[0].change.delta != 0 || s.points[4].change.delta != 0 {
		t.Errorf("the first point and a failed one have no change: %v, %v", s.points[0].change.delta, s.points[4].change.delta)
	}
	if got := deltaText(s.points[2].change); got != "+50.0%" {
		t.Errorf("deltaText of the odd run: %q", got)
	}
}

func TestTimeAxis(t *testing.T) {
	lin := timeAxis(1000, 1900)
	if lin.log || lin.lo > 1000 || lin.hi < 1900 || len(lin.ticks()) < 3 || len(lin.ticks()) > 7 {
		t.Errorf("axis of 1000..1900: %+v, ticks %v", lin, lin.ticks())
	}
	lg := timeAxis(1000, 1e6)
	if !lg.log || lg.lo != 1000 || lg.hi != 1e6 || len(lg.ticks()) != 4 {
		t.Errorf("axis of 1000..1e6: %+v, ticks %v", lg, lg.ticks())
	}
	flat := timeAxis(5000, 5000)
	if flat.lo >= 5000 || flat.hi <= 5000 {
		t.Errorf("axis of one value: %+v", flat)
	}
	if got := runTicks(0, 999, 6); len(got) != 6 || got[0] != 0 || got[5] != 999 {
		t.Errorf("runTicks(0, 999, 6) = %v", got)
	}
	if got := runTicks(3, 4, 6); !slices.Equal(got, []int{3, 4}) {
		t.Errorf("runTicks(3, 4, 6) = %v", got)
	}
}
