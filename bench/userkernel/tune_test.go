package userkernel

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// TestGrid checks the combinations of -D lists: the product, the last varying fastest.
func TestGrid(t *testing.T) {
	got := Grid([]Define{{"WG", []string{"64", "128"}}, {"VEC", []string{"1", "2", "4"}}})
	want := [][]string{
		{"WG=64", "VEC=1"}, {"WG=64", "VEC=2"}, {"WG=64", "VEC=4"},
		{"WG=128", "VEC=1"}, {"WG=128", "VEC=2"}, {"WG=128", "VEC=4"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("grid %q, want %q", got, want)
	}
	if g := Grid(nil); len(g) != 1 || len(g[0]) != 0 {
		t.Errorf("grid of nothing %q, want one empty combination", g)
	}
	if l := Label(want[5]); l != "-D WG=128 -D VEC=4" {
		t.Errorf("label %q", l)
	}
}

// TestRank checks the order of combinations: those that ran and agreed by median, then
// the others in their order; the fastest marked and its speedup over the slowest.
func TestRank(t *testing.T) {
	d := Tuning{Combinations: []Combo{
		{Label: "a", Status: StatusFailed},
		{Label: "b", Status: StatusOK, Stats: bench.Stats{Median: 3 * time.Microsecond}},
		{Label: "c", Status: StatusDiffers, Stats: bench.Stats{Median: time.Microsecond}},
		{Label: "d", Status: StatusOK, Stats: bench.Stats{Median: 2 * time.Microsecond}},
	}}
	d.rank()
	var order []string
	for _, c := range d.Combinations {
		order = append(order, fmt.Sprint(c.Label, c.Fastest))
	}
	if got := strings.Join(order, " "); got != "dtrue bfalse afalse cfalse" || d.Fastest != "d" || d.Speedup != 1.5 {
		t.Errorf("ranked %s, fastest %q, speedup %v", got, d.Fastest, d.Speedup)
	}
}

// TestTune tunes BIAS and a macro that breaks the build on the first OpenCL device: the
// combination that does not build is recorded as such, those whose outputs differ from the
// first's are not chosen, and Explain rewrites the errors.
func TestTune(t *testing.T) {
	dev := openCL(t)
	args, err := ParseArgs([]string{"scalar:float32:2", "buf:float32:256:range", "out:float32:256"}, "add", 1)
	if err != nil {
		t.Fatal(err)
	}
	tu := &Tuner{
		Launch: Launch{File: "add.cl", Source: addSrc + "\n#ifdef BROKEN\n#error broken\n#endif\n", Kernel: "add",
			Args: args, Global: []int{256}, Count: 1},
		Grid:         Grid([]Define{{"BIAS", []string{"0", "1"}}, {"BROKEN", []string{"0"}}}),
		ToleranceULP: 4,
		Explain: func(dev *engine.Device, err error) error {
			return fmt.Errorf("on %s: %w", dev.ID(), err)
		},
	}
	tu.Grid = append(tu.Grid, []string{"BIAS=0"}) // BROKEN undefined: builds
	d := tu.Tune(context.Background(), dev)
	status := map[string]string{}
	for _, c := range d.Combinations {
		status[c.Label] = c.Status
		if c.Status == StatusBuildFailed && !strings.HasPrefix(c.Err, "on "+dev.ID()+": ") {
			t.Errorf("%s: error %q not explained", c.Label, c.Err)
		}
	}
	want := map[string]string{"-D BIAS=0 -D BROKEN=0": StatusBuildFailed, "-D BIAS=1 -D BROKEN=0": StatusBuildFailed, "-D BIAS=0": StatusOK}
	if !reflect.DeepEqual(status, want) || d.Fastest != "-D BIAS=0" || d.Baseline != "-D BIAS=0" || len(d.Local) != 1 {
		t.Errorf("statuses %v, fastest %q, baseline %q, local %v", status, d.Fastest, d.Baseline, d.Local)
	}

	tu.Grid = Grid([]Define{{"BIAS", []string{"0", "1"}}})
	d = tu.Tune(context.Background(), dev)
	if d.Fastest != "-D BIAS=0" || len(d.Combinations) != 2 || d.Combinations[1].Status != StatusDiffers ||
		!strings.Contains(d.Combinations[1].Err, "differs from -D BIAS=0") {
		t.Errorf("outputs that differ: %+v", d)
	}
}
