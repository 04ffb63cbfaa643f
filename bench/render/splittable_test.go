package render

import (
	"bytes"
	"strings"
	"testing"
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
