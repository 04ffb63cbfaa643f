package render

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

// bigReport returns a report of two devices with n results each: n distinct cases (op,
// size) timed on both, the shape of a long --sizes sweep.
func bigReport(n int) *bench.Report {
	rep := &bench.Report{Schema: bench.SchemaVersion, Prism: "devel", Host: "test", Date: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), Config: bench.ConfigInfo{Count: 3}}
	for dev := range 2 {
		d := bench.DeviceReport{Backend: "opencl", Ceilings: bench.Ceilings{CopyGBs: 100, FP32GFLOPs: 1000}, Results: make([]bench.Result, n)}
		d.Device.ID = fmt.Sprintf("opencl:0:%d", dev)
		for i := range d.Results {
			r := result(fmt.Sprintf("stream/op%d/float32", i%100), 100+dev, 90, 110)
			r.Family, r.Type, r.Size = "stream", "float32", 1024+i/100
			r.Bytes, r.GBs, r.Bound, r.Fraction = 12<<10, 50, bench.BoundMemory, 0.5
			d.Results[i] = r
		}
		rep.Devices = append(rep.Devices, d)
	}
	return rep
}

// renderers are the text renderers of a report, which take every result.
var renderers = []struct {
	name  string
	write func(*bench.Report, io.Writer) error
}{
	{"table", func(r *bench.Report, w io.Writer) error { return Table(w, r, TableOptions{}) }},
	{"markdown", func(r *bench.Report, w io.Writer) error { return Markdown(w, r, "") }},
	{"csv", func(r *bench.Report, w io.Writer) error { return CSV(w, r) }},
	{"benchstat", func(r *bench.Report, w io.Writer) error { return Benchstat(w, r) }},
	{"json", func(r *bench.Report, w io.Writer) error { return r.WriteJSON(w) }},
	{"html", func(r *bench.Report, w io.Writer) error { return HTML(w, r, "") }},
}

// TestRenderWorkIsLinear renders reports of 1,000 and 4,000 results per device through
// every renderer and counts the lookups of a result by device and row: a render that
// looked every row up by scanning the results (40,000 results took 13.6 s) would do
// rows x results of work; it must do a constant number per result. And one lookup in a
// map per row and index built (the HTML page builds three: its table, its cells, its
// charts): a hash of the case's strings in a map as large as the report at every lookup
// (one per row and device, several times) made the table of 200,000 results spend a
// third of its time in maps, more per result the larger the report.
func TestRenderWorkIsLinear(t *testing.T) {
	for _, rd := range renderers {
		t.Run(rd.name, func(t *testing.T) {
			var per, perMap []float64
			for _, n := range []int{1000, 4000} {
				rep := bigReport(n)
				before, beforeMap := lookups.Load(), mapLookups.Load()
				if err := rd.write(rep, io.Discard); err != nil {
					t.Fatal(err)
				}
				per = append(per, float64(lookups.Load()-before)/float64(2*n))
				perMap = append(perMap, float64(mapLookups.Load()-beforeMap)/float64(n)) // n rows
			}
			if per[0] > 8 || per[1] > per[0]*1.01 {
				t.Errorf("lookups per result: %.2f at 1,000 results a device, %.2f at 4,000: want a small constant", per[0], per[1])
			}
			if perMap[0] > 3 || perMap[1] > perMap[0] {
				t.Errorf("map lookups per row: %.2f at 1,000 rows, %.2f at 4,000: want one per index built, three at most", perMap[0], perMap[1])
			}
		})
	}
	// And a compare of two such reports.
	old, cur := bigReport(4000), bigReport(4000)
	cmp := bench.Compare(old, cur, bench.DefaultCompareOptions)
	if len(cmp.Changes) != 2*4000 {
		t.Errorf("%d changes, want %d", len(cmp.Changes), 2*4000)
	}
}

// BenchmarkRender200k renders a report of 200,000 results a device through every text
// renderer and compares it with itself: each must take time linear in the results (a
// second or so, where 200,000 once did not finish in a minute).
func BenchmarkRender200k(b *testing.B) {
	rep := bigReport(200_000)
	for _, rd := range renderers {
		b.Run(rd.name, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := rd.write(rep, &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
		})
	}
	b.Run("compare", func(b *testing.B) {
		for b.Loop() {
			bench.Compare(rep, rep, bench.DefaultCompareOptions)
		}
	})
	b.Run("read", func(b *testing.B) {
		var buf bytes.Buffer
		if err := rep.WriteJSON(&buf); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(buf.Len()))
		for b.Loop() {
			if _, err := bench.ReadReport(bytes.NewReader(buf.Bytes())); err != nil {
				b.Fatal(err)
			}
		}
	})
}
