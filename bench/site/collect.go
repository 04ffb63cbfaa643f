package site

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/regress"
	"github.com/prism-compute/prism/bench/store"
)

// runInfo is a run of the store as the pages name it.
type runInfo struct {
	sum store.RunSummary
	ord int // its place among the runs, oldest first, from 0
}

// seriesKey identifies a series of a case: a device fingerprint, a variant, a size and
// the shape asked for where the size does not give it (bench.Result.Dims).
type seriesKey struct {
	fp      string
	variant string
	size    int
	dims    string
}

// point is one run of a series.
type point struct {
	run      *runInfo
	deviceID string
	stats    bench.Stats
	rate     float64
	unit     string
	verdict  string
	failed   string // why the result has no valid time; "" when it has one
	change   change // from the previous valid point of the series
}

// series is a case's results on one device fingerprint, variant and size, oldest first.
type series struct {
	key    seriesKey
	name   string   // the device's name in its latest run
	points []*point // oldest first
	steps  []*point // the points where a step starts, oldest first
}

// caseData is a case and its series.
type caseData struct {
	name   string
	family string
	slug   string
	series map[seriesKey]*series
}

// cell is what the index shows of a case on a device: the best result of the latest run
// of the case there.
type cell struct {
	run     *runInfo
	variant string
	size    int
	dims    string
	median  time.Duration
	rate    float64
	unit    string
	vendor  float64 // the vendor's median over Prism's; 0 without a vendor baseline
	verdict string
	failed  string
}

// deviceCol is a device fingerprint: a column of the index.
type deviceCol struct {
	fp       string
	name     string
	id       string
	backend  string
	driver   string
	hosts    []string
	runs     int
	lastRun  *runInfo
	firstRun *runInfo
}

// extracted is what a run gives the site beyond its own page: its results on real devices
// (vendor pseudo-devices are baselines, not devices of their own).
type extracted struct {
	fp, name, id, backend, driver string
	results                       []extractedResult
}

type extractedResult struct {
	res    *bench.Result
	vendor float64
}

// model is everything the pages show.
type model struct {
	runs    []*runInfo // oldest first
	cases   map[string]*caseData
	devices map[string]*deviceCol
	cells   map[string]map[string]*cell // by case, then fingerprint
}

// collect reads every run of st, oldest first, hands each run's report to page (from
// several goroutines at once, to write the run's page), gathers the model of the other
// pages and marks the steps of every series (regress.Detect with opt).
func collect(ctx context.Context, st *store.Store, opt regress.DetectOptions, page func(runs []*runInfo, run *runInfo, rep *bench.Report) error) (*model, error) {
	sums, err := st.Runs(ctx, store.Filter{})
	if err != nil {
		return nil, err
	}
	m := &model{cases: map[string]*caseData{}, devices: map[string]*deviceCol{}, cells: map[string]map[string]*cell{}}
	for i := len(sums) - 1; i >= 0; i-- { // Runs lists the newest first
		m.runs = append(m.runs, &runInfo{sum: sums[i], ord: len(m.runs)})
	}
	type job struct {
		run  *runInfo
		out  []extracted
		err  error
		done chan struct{}
	}
	jobs := make([]*job, len(m.runs))
	for i, r := range m.runs {
		jobs[i] = &job{run: r, done: make(chan struct{})}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Workers read and decode the reports and write their pages; this goroutine takes them
	// in order. Each worker stays at most a window ahead, so that few reports are held.
	workers := max(1, runtime.GOMAXPROCS(0))
	window := make(chan struct{}, 4*workers)
	next := make(chan *job)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				j.out, j.err = readRun(ctx, st, j.run, func(run *runInfo, rep *bench.Report) error { return page(m.runs, run, rep) })
				close(j.done)
			}
		}()
	}
	go func() {
		defer close(next)
		for _, j := range jobs {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer wg.Wait()
	for _, j := range jobs {
		select {
		case <-j.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		<-window
		if j.err != nil {
			return nil, j.err
		}
		m.add(j.run, j.out)
	}
	for _, c := range m.cases {
		for _, s := range c.series {
			markChanges(s, opt)
		}
	}
	return m, nil
}

// readRun exports a run, writes its page and returns what the other pages need of it.
func readRun(ctx context.Context, st *store.Store, run *runInfo, page func(*runInfo, *bench.Report) error) ([]extracted, error) {
	rep, err := st.Export(ctx, run.sum.ID)
	if err != nil {
		return nil, err
	}
	if err := page(run, rep); err != nil {
		return nil, err
	}
	var out []extracted
	for i := range rep.Devices {
		d := &rep.Devices[i]
		if d.IsVendor() || len(d.Results) == 0 { // a baseline, or a device of a split or collective
			continue
		}
		e := extracted{fp: store.Fingerprint(rep, d), name: d.Device.Name, id: d.Device.ID, backend: d.Backend, driver: d.Device.DriverVersion}
		for j := range d.Results {
			res := &d.Results[j]
			var vendor float64
			if v := rep.VendorBaseline(i, res); v != nil && res.OK() && res.Stats.Median > 0 {
				vendor = float64(v.Stats.Median) / float64(res.Stats.Median)
			}
			// Only what the model keeps: the report itself is let go.
			r := &bench.Result{Case: res.Case, Family: res.Family, Size: res.Size, Dims: res.Dims, Variant: res.Variant, Stats: res.Stats,
				Verified: res.Verified, Mismatch: res.Mismatch, Skipped: res.Skipped, Err: res.Err, Invalid: res.Invalid,
				GBs: res.GBs, GFLOPs: res.GFLOPs, Flops: res.Flops, Bytes: res.Bytes, Bound: res.Bound, Verdict: res.Verdict}
			e.results = append(e.results, extractedResult{r, vendor})
		}
		out = append(out, e)
	}
	return out, nil
}

// add puts a run's results into the model: the runs come oldest first.
func (m *model) add(run *runInfo, devs []extracted) {
	for _, e := range devs {
		dc := m.devices[e.fp]
		if dc == nil {
			dc = &deviceCol{fp: e.fp, firstRun: run}
			m.devices[e.fp] = dc
		}
		dc.name, dc.id, dc.backend, dc.driver, dc.lastRun = e.name, e.id, e.backend, e.driver, run
		dc.runs++
		if !slices.Contains(dc.hosts, run.sum.Host) {
			dc.hosts = append(dc.hosts, run.sum.Host)
			slices.Sort(dc.hosts)
		}
		best := map[string]*cell{} // the run's best result of each case on this device
		for _, er := range e.results {
			res := er.res
			c := m.cases[res.Case]
			if c == nil {
				c = &caseData{name: res.Case, family: res.Family, slug: slug(res.Case), series: map[seriesKey]*series{}}
				m.cases[res.Case] = c
			}
			k := seriesKey{e.fp, res.Variant, res.Size, res.Dims}
			s := c.series[k]
			if s == nil {
				s = &series{key: k}
				c.series[k] = s
			}
			s.name = e.name
			p := &point{run: run, deviceID: e.id, stats: res.Stats, verdict: res.Verdict.Text, failed: failure(res)}
			if p.failed == "" {
				p.rate, p.unit = res.Rate()
			}
			s.points = append(s.points, p)
			cl := &cell{run: run, variant: res.Variant, size: res.Size, dims: res.Dims, median: res.Stats.Median, rate: p.rate, unit: p.unit,
				vendor: er.vendor, verdict: p.verdict, failed: p.failed}
			if b := best[res.Case]; b == nil || better(cl, b) {
				best[res.Case] = cl
			}
		}
		for name, cl := range best {
			if m.cells[name] == nil {
				m.cells[name] = map[string]*cell{}
			}
			m.cells[name][e.fp] = cl
		}
	}
}

// better reports whether a is a better cell than b: a valid result over a failed one, then
// the larger size, then the shorter time.
func better(a, b *cell) bool {
	if (a.failed == "") != (b.failed == "") {
		return a.failed == ""
	}
	if a.size != b.size {
		return a.size > b.size
	}
	if a.failed != "" {
		return false
	}
	return a.median < b.median
}

// failure says why res has no valid time, as the store's history does; "" when it has one.
func failure(res *bench.Result) string {
	switch {
	case res.Err != "":
		return "error: " + res.Err
	case res.Skipped != "":
		return "skipped: " + res.Skipped
	case res.Mismatch:
		return "mismatch: the result differed from the reference"
	case res.Invalid != "":
		return "invalid: " + res.Invalid
	case !res.Verified:
		return "not verified"
	case res.Stats.Runs == 0 || res.Stats.Median <= 0:
		return "no valid time"
	}
	return ""
}

// sortedCases returns the cases by name.
func (m *model) sortedCases() []*caseData {
	out := make([]*caseData, 0, len(m.cases))
	for _, c := range m.cases {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *caseData) int { return cmp.Compare(a.name, b.name) })
	return out
}

// sortedDevices returns the device fingerprints by name, backend, ID, then fingerprint.
func (m *model) sortedDevices() []*deviceCol {
	out := make([]*deviceCol, 0, len(m.devices))
	for _, d := range m.devices {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *deviceCol) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.backend, b.backend), cmp.Compare(a.id, b.id), cmp.Compare(a.fp, b.fp))
	})
	return out
}

// sortedSeries returns the case's series by size, device (as sortedDevices), then variant.
func (c *caseData) sortedSeries(m *model) []*series {
	order := map[string]int{}
	for i, d := range m.sortedDevices() {
		order[d.fp] = i
	}
	out := make([]*series, 0, len(c.series))
	for _, s := range c.series {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *series) int {
		return cmp.Or(cmp.Compare(a.key.size, b.key.size), cmp.Compare(a.key.dims, b.key.dims), cmp.Compare(order[a.key.fp], order[b.key.fp]), cmp.Compare(a.key.variant, b.key.variant))
	})
	return out
}

// slug is the file name of a case's page, without .html: the name with / as _, and every
// byte but a-z, 0-9, '.' and '-' (and a leading '.') written ~XX, so that two cases never
// share a file even where file names ignore case.
func slug(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '/':
			b = append(b, '_')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.' && i > 0:
			b = append(b, c)
		default:
			b = fmt.Appendf(b, "~%02x", c)
		}
	}
	if len(b) == 0 {
		return "~"
	}
	return string(b)
}
