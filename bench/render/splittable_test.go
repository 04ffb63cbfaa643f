package render

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

// TestSplitTableSaysPlacementAndPlan: the split table (text and Markdown) shows where each
// case's data lived (host, sharded, - where the report did not record it) and the
// planner's choice in short (one device [i], split over n, (given) for given shares), so
// that a reader needs no JSON to tell them apart; planShort keeps words it does not know.
func TestSplitTableSaysPlacementAndPlan(t *testing.T) {
	rep := readKind(t, []string{"split.json"})
	if len(rep.Splits) < 2 {
		t.Fatalf("split.json: %d splits, want 2", len(rep.Splits))
	}
	host, old := rep.Splits[0], rep.Splits[1]
	host.Placement, host.Plan = "host", "one device: opencl:0:0 (a split is predicted 85% slower)"
	sharded := host
	sharded.Placement, sharded.Plan = "sharded", "split over 2 devices (predicted 40% faster than opencl:0:0 alone)"
	sharded.Speedup, sharded.SpeedupResident = 0.5, 0.5
	given := host
	given.Placement, given.Plan = "sharded", "split over 2 devices (shares given)"
	old.Placement, old.Plan = "", ""
	rep.Splits = append(rep.Splits[:0], host, sharded, given, old)
	v := view{rep}
	first := v.deviceLabel("opencl:0:0")
	for _, c := range []struct{ plan, want string }{
		{host.Plan, "one device " + first},
		{sharded.Plan, "split over 2"},
		{given.Plan, "split over 2 (given)"},
		{"one device: opencl:0:0 (shares given)", "one device " + first + " (given)"},
		{"one device: opencl:0:0 (the planned split ran 69.5 ms against 18.4 ms alone: 0.26x, under 1.03)", "one device " + first + " (checked)"},
		{"split over 2 devices (predicted 45% faster than opencl:0:0 alone; ran 10.2 ms, opencl:0:0 alone 18.2 ms: 1.78x)", "split over 2 (checked)"},
		{"one device: opencl:0:0 (shares given; their split ran 1.18 ms against 1 ms alone: 0.85x, under 1.03)", "one device " + first + " (given, checked)"},
		{"split over 2 devices (predicted 45% faster than opencl:0:0 alone; ran 70 ms, and opencl:0:0 alone could not take the work: no memory)", "split over 2 (checked)"},
		{"", "-"},
		{"something else", "something else"},
	} {
		checked := strings.Contains(c.plan, " ran ") // as the shares of such a plan say (Share.Ran)
		if got := v.planShort(c.plan, checked); got != c.want {
			t.Errorf("planShort(%q) = %q, want %q", c.plan, got, c.want)
		}
	}
	g := v.splitGrid()
	want := [][2]string{{"host", "one device " + first}, {"sharded", "split over 2"}, {"sharded", "split over 2 (given)"}, {"-", "-"}}
	if len(g.rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(g.rows), len(want))
	}
	col := func(head string) int {
		for i, c := range g.cols {
			if c.head == head {
				return i
			}
		}
		t.Fatalf("no column %q", head)
		return -1
	}
	data, plan := col("data"), col("plan")
	for i, w := range want {
		if g.rows[i][data] != w[0] || g.rows[i][plan] != w[1] {
			t.Errorf("row %d: data %q, plan %q; want %q, %q", i, g.rows[i][data], g.rows[i][plan], w[0], w[1])
		}
	}
	// Sharded data: the speedup against one device with its data resident, alone (the
	// same figure as speedup_resident).
	if got := g.rows[1][col("speedup")]; got != "0.50x" {
		t.Errorf("sharded speedup %q, want %q", got, "0.50x")
	}
	var text, md bytes.Buffer
	if err := Table(&text, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, rep, ""); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"table": text.String(), "markdown": md.String()} {
		for _, w := range []string{"sharded", "host", "one device " + first, "split over 2 (given)", "data: host"} {
			if !strings.Contains(out, w) {
				t.Errorf("the %s lacks %q:\n%s", name, w, out)
			}
		}
	}
	// Markdown: the new columns are text (left-aligned), the figures from time on numbers.
	aligned := 0
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(l, "|---|---|---|---|---|") {
			aligned++
			if !strings.HasPrefix(l, "|---|---|---|---|---|--:|") && !strings.HasPrefix(l, "|---|---|---|---|---|---:|") {
				t.Errorf("markdown alignment %q: want five text columns, then numbers", l)
			}
		}
	}
	if aligned == 0 {
		t.Errorf("the markdown has no split table:\n%s", md.String())
	}
}

// TestSplitSummaryTable: the speedup of a split the runs cannot tell from the device alone
// is marked ~, one clearly faster is not, and every format ends the splits with their
// summary: per devices and placement the cases, the geometric mean and the worst case with
// its interval.
func TestSplitSummaryTable(t *testing.T) {
	rep := readKind(t, []string{"split.json"})
	if len(rep.Splits) < 1 {
		t.Fatal("split.json: no split")
	}
	times := func(mean time.Duration, offs ...int) []time.Duration {
		out := make([]time.Duration, len(offs))
		for i, o := range offs {
			out[i] = mean + time.Duration(o)*mean/100
		}
		return out
	}
	offs := []int{-7, 3, 0, 9, -2, 5, -4, 1, 8, -9, 2, -5, 6, -1, 4, -8, 7, -3, -6, 10}
	same, faster := rep.Splits[0], rep.Splits[0]
	same.Case, same.Placement, same.Speedup = "reduce/sum/float32", "host", 0.97
	same.Stats = bench.Summarize(times(time.Millisecond, offs...))
	same.Paired = new(bench.Summarize(times(time.Millisecond, append(offs[10:], offs[:10]...)...)))
	faster.Case, faster.Placement, faster.Speedup = "map/axpy/float32", "host", 1.8
	faster.Stats = bench.Summarize(times(time.Millisecond, offs...))
	faster.Paired = new(bench.Summarize(times(1800*time.Microsecond, offs...)))
	rep.Splits = []bench.SplitResult{faster, same}
	v := view{rep}
	g := v.splitGrid()
	sp := slices.IndexFunc(g.cols, func(c tableCol) bool { return c.head == "speedup" })
	if got := g.rows[0][sp]; !strings.HasPrefix(got, "1.80x") || strings.Contains(got, "~") {
		t.Errorf("faster split's speedup %q, want 1.80x without ~", got)
	}
	if got := g.rows[1][sp]; !strings.HasPrefix(got, "0.97x ~") {
		t.Errorf("indistinct split's speedup %q, want 0.97x ~", got)
	}
	sg := v.splitSummaryGrid()
	if sg == nil || len(sg.rows) != 1 {
		t.Fatalf("summary %+v, want one row", sg)
	}
	row := strings.Join(sg.rows[0], " | ")
	for _, w := range []string{"host | 2 | ", fmt.Sprintf("%.2fx", math.Sqrt(1.8*0.97)), "0.97x (", "reduce/sum/float32"} {
		if !strings.Contains(row, w) {
			t.Errorf("summary row %q lacks %q", row, w)
		}
	}
	var text, md, html bytes.Buffer
	if err := Table(&text, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, rep, ""); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, rep, ""); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"table": text.String(), "markdown": md.String(), "html": html.String()} {
		if !strings.Contains(out, splitSummaryTitle) || !strings.Contains(out, "reduce/sum/float32 ") {
			t.Errorf("the %s lacks the splits' summary", name)
		}
	}
}
