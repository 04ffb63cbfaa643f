package site

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/store"
	"github.com/prism-compute/prism/engine"
)

// testdata are the reports of bench/render's tests: real runs on PoCL and Rusticl.
const testdata = "../render/testdata"

// The synthetic series of testStore: slowSeries runs, from slowFrom on (from 0) 30% slower
// than before.
const (
	slowSeries = 6
	slowFrom   = 3
)

// synthetic returns a report of one device of name device with cases cases of samples
// samples each, started at date; a case's times are scaled by slow.
func synthetic(host, commit, device string, date time.Time, cases, samples int, slow float64) *bench.Report {
	r := &bench.Report{Schema: bench.SchemaVersion, Prism: "devel", Commit: commit, Date: date.UTC(), Host: host,
		GoVersion: "go1.26", GOOS: "linux", GOARCH: "amd64", HostCPU: "Test CPU", Env: map[string]string{"POCL_WORK_GROUP_SPECIALIZATION": "0"},
		Command: []string{"prism", "bench", "--quick"}, Config: bench.ConfigInfo{Quick: true, Count: samples, Warmup: 1, Seed: 1}}
	dr := bench.DeviceReport{Device: engine.DeviceInfo{ID: "opencl:0:0", Name: device, Vendor: "Test", Kind: engine.KindGPU,
		DriverVersion: "1.0", APIVersion: "OpenCL 3.0", ClockMHz: 2000, ComputeUnits: 2, GlobalMemBytes: 1 << 30},
		Backend: "opencl", Ceilings: bench.Ceilings{CopyGBs: 200, CopyHow: "kernel", FP32GFLOPs: 500}, Timing: bench.TimingEvents,
		Results: []bench.Result{}}
	families := []string{"stream/triad", "stream/copy", "blas1/axpy", "reduce/sum", "gemm/nn"}
	for c := range cases {
		ss := make([]time.Duration, samples)
		for i := range ss {
			ss[i] = time.Duration(slow * float64(100000*(c+1)+(i*7919)%997))
		}
		name := fmt.Sprintf("%s/float32", families[c%len(families)])
		size := 1 << (20 + c/len(families))
		res := bench.Result{Case: name, Family: strings.Split(name, "/")[0], Type: "float32",
			Size: size, Shape: fmt.Sprintf("n=%d", size), Variant: "portable", Stats: bench.Summarize(ss),
			Flops: float64(2 * size), Bytes: float64(12 * size), Verified: true, Bound: bench.BoundMemory}
		res.GBs = res.Bytes / float64(res.Stats.Median)
		res.Fraction = res.GBs / 200
		res.Verdict = bench.Verdict{Kind: bench.VerdictMemory, Text: fmt.Sprintf("memory-bound at %.0f%% of copy", 100*res.Fraction)}
		dr.Results = append(dr.Results, res)
	}
	r.Devices = []bench.DeviceReport{dr}
	return r
}

// testStore returns a store in a temporary directory holding the reports of testdata
// (runs 1 to 4: multi.json, single.json merged with its vendor baselines in vendor.json,
// split.json, collective.json) and a series of slowSeries synthetic runs of 3 cases on
// "Test GPU", 30% slower from its run slowFrom on.
func testStore(t testing.TB) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	withVendor, err := bench.ReadReportFiles(filepath.Join(testdata, "single.json"), filepath.Join(testdata, "vendor.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reps []*bench.Report
	for _, f := range []string{"multi.json", "", "split.json", "collective.json"} {
		if f == "" { // run 2, of the same date as multi.json: the latest of its devices
			reps = append(reps, withVendor)
			continue
		}
		r, err := bench.ReadReportFile(filepath.Join(testdata, f))
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, r)
	}
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range slowSeries {
		slow := 1.0
		if i >= slowFrom {
			slow = 1.3
		}
		reps = append(reps, synthetic("ci-"+fmt.Sprint(i%2), fmt.Sprintf("%07x0abcdef", 0xabc000+i), "Test GPU", start.Add(time.Duration(i)*time.Hour), 3, 10, slow))
	}
	for _, r := range reps {
		if _, err := st.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// siteFiles returns every file of the site under dir, by path relative to it (with /).
func siteFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// parsedPage is what checkPage finds in a page.
type parsedPage struct {
	links []string        // href and src values
	ids   map[string]bool // id attributes
	tags  map[string]int  // elements by name
}

// parseHTML parses an HTML page as strict XML with HTML's entities (the pages are written
// so that this holds: every element closed, void ones as <meta ... />), and returns
// its links, ids and elements; an error for a page that does not parse, an unbalanced
// tag, or a script or an absolute URL of any kind where a link or resource is taken.
func parseHTML(page []byte) (*parsedPage, error) {
	body := bytes.TrimPrefix(page, []byte("<!DOCTYPE html>"))
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Entity = xml.HTMLEntity
	p := &parsedPage{ids: map[string]bool{}, tags: map[string]int{}}
	var stack []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			name := tok.Name.Local
			p.tags[name]++
			if name == "script" || name == "iframe" || name == "object" || name == "embed" {
				return nil, fmt.Errorf("a <%s> element", name)
			}
			stack = append(stack, name)
			for _, a := range tok.Attr {
				switch strings.ToLower(a.Name.Local) {
				case "href", "src", "srcset", "action", "poster", "data":
					if strings.Contains(a.Value, "://") || strings.HasPrefix(a.Value, "//") || strings.HasPrefix(strings.ToLower(a.Value), "data:") || strings.HasPrefix(strings.ToLower(a.Value), "javascript:") {
						return nil, fmt.Errorf("<%s %s=%q>: an absolute URL", name, a.Name.Local, a.Value)
					}
					p.links = append(p.links, a.Value)
				case "id":
					if p.ids[a.Value] {
						return nil, fmt.Errorf("id %q twice", a.Value)
					}
					p.ids[a.Value] = true
				case "style":
					if strings.Contains(a.Value, "url(") {
						return nil, fmt.Errorf("<%s style=%q>: a url()", name, a.Value)
					}
				}
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
					return nil, fmt.Errorf("<%s %s>: a script", name, a.Name.Local)
				}
			}
		case xml.EndElement:
			name := tok.Name.Local
			if len(stack) == 0 || stack[len(stack)-1] != name {
				return nil, fmt.Errorf("</%s> does not close <%s>", name, strings.Join(stack, "><"))
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("unclosed <%s>", strings.Join(stack, "><"))
	}
	return p, nil
}

// checkSite parses every page of the site in files and checks that every link resolves to
// a file of the site (and a fragment to an id of its page), that nothing is loaded from
// the network, and that the style sheet takes no url(). It returns the pages parsed.
func checkSite(t testing.TB, files map[string][]byte) map[string]*parsedPage {
	t.Helper()
	pages := map[string]*parsedPage{}
	for name, b := range files {
		if !strings.HasSuffix(name, ".html") {
			continue
		}
		p, err := parseHTML(b)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		pages[name] = p
	}
	for name, p := range pages {
		for _, link := range p.links {
			target, frag, _ := strings.Cut(link, "#")
			file := name
			if target != "" {
				file = filepath.ToSlash(filepath.Join(filepath.Dir(name), target))
			}
			if strings.HasPrefix(file, "../") {
				t.Errorf("%s: link %q leaves the site", name, link)
				continue
			}
			if _, ok := files[file]; !ok {
				t.Errorf("%s: link %q: no file %s in the site", name, link, file)
				continue
			}
			if frag != "" && pages[file] != nil && !pages[file].ids[frag] {
				t.Errorf("%s: link %q: %s has no id %q", name, link, file, frag)
			}
		}
	}
	if css, ok := files["style.css"]; !ok {
		t.Error("no style.css")
	} else if bytes.Contains(css, []byte("url(")) || bytes.Contains(css, []byte("@import")) {
		t.Error("style.css loads a resource")
	}
	return pages
}
