package userkernel

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// Define is a macro of a tuning and the values to try, each built as -D Name=Value.
type Define struct {
	Name   string
	Values []string
}

// Grid returns every combination of the values of vary, the last macro varying fastest,
// each as its NAME=VALUE defines; one empty combination when nothing varies.
func Grid(vary []Define) [][]string {
	grid := [][]string{nil}
	for _, d := range vary {
		var next [][]string
		for _, c := range grid {
			for _, v := range d.Values {
				next = append(next, append(slices.Clip(c), d.Name+"="+v))
			}
		}
		grid = next
	}
	return grid
}

// Label names a combination by its -D options: "-D VEC=4 -D WG=64".
func Label(defines []string) string {
	if len(defines) == 0 {
		return "(no -D varies)"
	}
	return "-D " + strings.Join(defines, " -D ")
}

// Statuses of a combination.
const (
	StatusOK          = "ok"
	StatusBuildFailed = "build failed"
	StatusFailed      = "failed"
	StatusDiffers     = "differs" // its outputs differ from the baseline's beyond the tolerance
	// StatusCancelled: the tuning's context ended (a signal, a time limit) while it was
	// built or run; it says nothing about the combination.
	StatusCancelled = "cancelled"
)

// Combo is one combination's outcome on one device.
type Combo struct {
	Defines []string     `json:"defines"` // the macros that vary, NAME=VALUE
	Label   string       `json:"label"`
	Status  string       `json:"status"` // StatusOK, StatusBuildFailed, StatusFailed, StatusDiffers, StatusCancelled
	Stats   bench.Stats  `json:"stats"`
	Err     string       `json:"error,omitempty"`
	Compare []Comparison `json:"compare,omitempty"`
	Fastest bool         `json:"fastest,omitempty"`
}

// Tuning is a kernel's tuning on one device.
type Tuning struct {
	Device       string  `json:"device"`
	Name         string  `json:"device_name"`
	Local        []int   `json:"local,omitempty"`
	Timing       string  `json:"timing,omitempty"`
	Baseline     string  `json:"baseline,omitempty"` // the combination the others' outputs are compared with
	Combinations []Combo `json:"combinations"`       // fastest first, then those not eligible
	Fastest      string  `json:"fastest,omitempty"`
	Speedup      float64 `json:"speedup_over_slowest,omitempty"`
	Err          string  `json:"error,omitempty"` // for the caller to fill
	// Interrupted: the context ended before every combination ran; NotRun counts those
	// that did not start. An interrupted tuning names no fastest.
	Interrupted bool `json:"interrupted,omitempty"`
	NotRun      int  `json:"not_run,omitempty"`
}

// Tuner measures a Launch once per combination of -D values.
type Tuner struct {
	// Launch is run for each combination, its BuildOptions (those of every build) followed
	// by the combination's; SaveDir is ignored: nothing is written.
	Launch Launch
	Grid   [][]string // the combinations (Grid)
	// ToleranceULP is the largest difference from the baseline, in units in the last
	// place, that float outputs may show; integer outputs must match exactly.
	ToleranceULP uint64
	// Explain, where set, rewrites the error of a combination's Run before it is recorded
	// (to speak of the caller's flags); nil keeps it.
	Explain func(dev *engine.Device, err error) error
}

// Tune runs every combination on dev, in order, as Run does: once from the initial
// values, its outputs compared with those of the first combination that ran (the
// baseline), then timed. A combination that fails to build or to run, or whose outputs
// differ, is recorded and never chosen. The combinations come back ranked: those eligible
// from fastest to slowest median, the fastest marked, then the others. It stops early
// when ctx ends: the combination it ended is StatusCancelled (never a build failure),
// those after it are counted in NotRun, and the tuning is Interrupted, with no fastest.
func (t *Tuner) Tune(ctx context.Context, dev *engine.Device) Tuning {
	d := Tuning{Device: dev.ID(), Name: dev.Info().Name}
	var base *Result
	for i, c := range t.Grid {
		if ctx.Err() != nil {
			d.Interrupted, d.NotRun = true, len(t.Grid)-i
			break
		}
		l := t.Launch
		l.SaveDir = ""
		l.BuildOptions = slices.Clone(t.Launch.BuildOptions)
		for _, def := range c {
			l.BuildOptions = append(l.BuildOptions, "-D"+def)
		}
		combo := Combo{Defines: c, Label: Label(c), Status: StatusOK}
		res, err := Run(ctx, dev, &l)
		if err != nil && t.Explain != nil {
			err = t.Explain(dev, err)
		}
		var be *engine.BuildError
		switch {
		case err != nil && ctx.Err() != nil:
			combo.Status, combo.Err = StatusCancelled, err.Error()
			d.Interrupted = true
		case errors.As(err, &be):
			combo.Status, combo.Err = StatusBuildFailed, err.Error()
		case err != nil:
			combo.Status, combo.Err = StatusFailed, err.Error()
		case base == nil:
			r := res
			base, d.Baseline = &r, combo.Label
			d.Local, d.Timing = res.Local, res.Timing
		default:
			for j, a := range Outputs(l.Args) {
				cmp := Compare(a, base.Data[j], res.Data[j], t.ToleranceULP)
				cmp.Device, cmp.Baseline = dev.ID(), d.Baseline
				combo.Compare = append(combo.Compare, cmp)
				if !cmp.Within && combo.Status == StatusOK {
					combo.Status, combo.Err = StatusDiffers, cmp.Output+": "+cmp.Describe()
				}
			}
		}
		combo.Stats = res.Stats
		d.Combinations = append(d.Combinations, combo)
	}
	d.rank()
	if d.Interrupted {
		d.Fastest, d.Speedup = "", 0
		for i := range d.Combinations {
			d.Combinations[i].Fastest = false
		}
	}
	return d
}

// rank sorts d's combinations, the eligible ones by median time first, marks the fastest
// and sets how much faster it is than the slowest.
func (d *Tuning) rank() {
	ok := func(c Combo) bool { return c.Status == StatusOK && c.Stats.Median > 0 }
	slices.SortStableFunc(d.Combinations, func(a, b Combo) int {
		switch {
		case ok(a) && ok(b):
			return cmp.Compare(a.Stats.Median, b.Stats.Median)
		case ok(a):
			return -1
		case ok(b):
			return 1
		}
		return 0
	})
	if len(d.Combinations) == 0 || !ok(d.Combinations[0]) {
		return
	}
	d.Combinations[0].Fastest = true
	d.Fastest = d.Combinations[0].Label
	slowest := d.Combinations[0].Stats.Median
	for _, c := range d.Combinations {
		if ok(c) {
			slowest = max(slowest, c.Stats.Median)
		}
	}
	d.Speedup = float64(slowest) / float64(d.Combinations[0].Stats.Median)
}
