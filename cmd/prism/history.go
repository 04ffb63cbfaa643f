package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/regress"
	"github.com/prism-compute/prism/bench/render"
	"github.com/prism-compute/prism/bench/store"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
)

type historyOptions struct {
	device  string
	variant string
	size    string
	shape   string
	plot    string
	outputFlags
}

// maxHistoryCases is the most cases one prism history shows; a pattern that matches more
// is an error that lists them.
const maxHistoryCases = 12

func newHistoryCmd() *cobra.Command {
	opts := &historyOptions{}
	cmd := &cobra.Command{
		Use:   "history OP",
		Short: "Show a case over the runs in the results store: median, range and change per run",
		Long: `Show how a case did across the runs recorded in the results store, oldest first: one
line per run and device, with the run's date, ID and commit, the device, the variant
that ran and the size, the median time per run, its min and max, and the change of the
median from the previous run of the same device, variant and size ("+3.1%" is slower).
Where that device's fingerprint differs from the previous run's (another driver, clock,
CPU or environment), the change says "unlike" instead of a figure: 'prism compare' of
the two runs says what differs. A run where the series' level steps ("step: slower from
here (1.00ms -> 1.50ms)") is marked by the detector the published site and 'prism check'
use: a piecewise-constant fit of the run medians, so that one odd run is not a step.

OP is a case's name (stream/triad/float32), a part of one (triad) or a pattern with *
(gemm/*/float32). A pattern that matches several cases shows each in turn (at most 12:
a wider one lists them). --device keeps a device of that ID or whose name holds it,
--variant a variant (portable, cuda-shfl, cuBLAS), --size a size (K, M, G suffixes),
--shape a GEMM shape MxNxK or an attention shape BxHxSxD as prism bench --shapes ran it
(a square, or the attention shape of the op's size, is its size's case).

--plot FILE draws the same as a chart (.svg, .png or .pdf by its extension): one line
per case, device, variant and size, the median at each run with a bar from min to max.
Output: a table, or --json; -o FILE writes it to FILE instead.`,
		Example: `  prism history triad
  prism history stream/triad/float32 --device opencl:0:0 --size 1M
  prism history gemm/nn/float32 --device cuda:0 --plot gemm.svg
  prism history reduce/sum --variant portable --json
  prism history gemm/nn/bfloat16 --device cuda:0 --shape 8192x128x8192`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return historyRun(cmd, opts, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.device, "device", "", "results of the device of this ID, or whose name holds it")
	f.StringVar(&opts.variant, "variant", "", "results of this variant")
	f.StringVar(&opts.size, "size", "", "results of this size (K, M, G suffixes)")
	f.StringVar(&opts.shape, "shape", "", "results of this shape, GEMM `MxNxK` or attention BxHxSxD (prism bench --shapes)")
	f.StringVar(&opts.plot, "plot", "", "also draw the history as a chart to `FILE` (.svg, .png or .pdf)")
	opts.add(f, "json")
	return cmd
}

// historyPoint is a point of prism history: the store's, with the change of its median
// from the previous point of its series.
type historyPoint struct {
	Run     int64         `json:"run"`
	Date    time.Time     `json:"date"`
	Commit  string        `json:"commit,omitempty"`
	Host    string        `json:"host"`
	Device  deviceJSON    `json:"device"`
	Variant string        `json:"variant,omitempty"`
	Size    int           `json:"size"`
	Dims    string        `json:"dims,omitempty"` // the shape asked for, where its size does not give it
	Median  time.Duration `json:"median_ns"`
	Min     time.Duration `json:"min_ns"`
	Max     time.Duration `json:"max_ns"`
	Runs    int           `json:"runs"`
	Failed  string        `json:"failed,omitempty"`
	Change  *float64      `json:"change,omitempty"` // relative: 0.031 is 3.1% slower
	Unlike  bool          `json:"unlike,omitempty"` // its device's fingerprint changed since the previous
	// Step marks the first run at a new level of its series (bench/regress's Detect over
	// the runs of one device fingerprint, variant and size): before and after are the
	// levels, ratio after/before (above 1 is slower).
	Step        *historyStep `json:"step,omitempty"`
	previousRun int64
}

// historyStep is a step of a series' level where a point starts it.
type historyStep struct {
	Before time.Duration `json:"before_ns"`
	After  time.Duration `json:"after_ns"`
	Ratio  float64       `json:"ratio"`
}

// caseHistory is one case's points.
type caseHistory struct {
	Case   string         `json:"case"`
	Points []historyPoint `json:"points"`
}

func historyRun(cmd *cobra.Command, opts *historyOptions, op string) error {
	if err := opts.check(cmd.Flags()); err != nil {
		return err
	}
	size := 0
	if opts.size != "" {
		n, err := bench.ParseSize(opts.size)
		if err != nil {
			return usageError{fmt.Errorf("--size: %w", err)}
		}
		size = n
	}
	if opts.plot != "" {
		if _, err := render.PlotFormat(opts.plot); err != nil {
			return usageError{fmt.Errorf("--plot: %w", err)}
		}
	}
	s, err := openStore(cmd)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := storeContext(cmd)
	cases, err := s.Cases(ctx, op)
	if err != nil {
		return storeError{err}
	}
	switch {
	case len(cases) == 0:
		return fmt.Errorf("no case recorded in %s matches %q ('prism runs --op %s' lists the runs that have one; every prism bench records its cases): %w",
			displayPath(s.Path()), op, op, store.ErrNotFound)
	case len(cases) > maxHistoryCases:
		return usageError{fmt.Errorf("%q matches %d cases: %s; name one or a narrower pattern", op, len(cases), strings.Join(cases, ", "))}
	case len(cases) > 1:
		fmt.Fprintf(cmd.ErrOrStderr(), "%q matches %d cases: %s\n", op, len(cases), strings.Join(cases, ", "))
	}
	var all []caseHistory
	for _, c := range cases {
		series := store.Series{Case: c, Device: opts.device, Variant: opts.variant, Size: size}
		square := false
		if opts.shape != "" {
			if series, square, err = shapeSeries(series, opts.shape); err != nil {
				return err
			}
		}
		pts, err := s.History(ctx, series)
		switch {
		case errors.Is(err, store.ErrNotFound), errors.Is(err, engine.ErrInvalidArg):
			return fmt.Errorf("%s: %w", c, err)
		case err != nil:
			return storeError{err}
		}
		if square { // a square's results record no dims; others of its size do
			pts = slices.DeleteFunc(pts, func(p store.Point) bool { return p.Dims != "" })
		}
		if len(pts) == 0 {
			continue
		}
		all = append(all, caseHistory{Case: c, Points: withChanges(pts)})
	}
	if len(all) == 0 {
		return fmt.Errorf("no result of %s in %s for the --device, --variant, --size and --shape given: %w", strings.Join(cases, ", "), displayPath(s.Path()), store.ErrNotFound)
	}
	err = opts.write(cmd, func(w io.Writer) error {
		if opts.json {
			return writeJSON(w, all)
		}
		for i, h := range all {
			if len(all) > 1 {
				if i > 0 {
					fmt.Fprintln(w)
				}
				fmt.Fprintf(w, "%s\n", safeText(h.Case))
			}
			if err := writeHistory(w, h.Points); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || opts.plot == "" {
		return err
	}
	return render.SaveHistory(opts.plot, historyChart(op, all))
}

// notVerified is the store's Point.Failed of a result timed but checked against nothing
// (prism exec on one device).
const notVerified = "not verified"

// seriesKey is what a point's change is reckoned against: the previous point of the same
// device, variant, size and shape asked for.
func seriesKey(p historyPoint) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s", p.Device.ID, p.Variant, p.Size, p.Dims)
}

// withChanges returns the points with the change of each median from the previous valid
// point of its series.
func withChanges(pts []store.Point) []historyPoint {
	prev := map[string]historyPoint{}
	out := make([]historyPoint, len(pts))
	for i, p := range pts {
		h := historyPoint{Run: int64(p.Run), Date: p.Date, Commit: p.Commit, Host: p.Host, Device: deviceOf(p.Device),
			Variant: p.Variant, Size: p.Size, Dims: p.Dims, Median: p.Median, Min: p.Min, Max: p.Max, Runs: p.Runs, Failed: p.Failed}
		k := seriesKey(h)
		timed := (h.Failed == "" || h.Failed == notVerified) && h.Median > 0
		if last, ok := prev[k]; ok && timed {
			h.previousRun = last.Run
			if last.Device.Fingerprint != h.Device.Fingerprint {
				h.Unlike = true
			} else if last.Median > 0 {
				c := float64(h.Median-last.Median) / float64(last.Median)
				h.Change = &c
			}
		}
		if timed {
			prev[k] = h
		}
		out[i] = h
	}
	markSteps(out)
	return out
}

// markSteps marks the points where a series' level steps (regress.Detect, as the published
// site marks them), per series of one device fingerprint, variant and size.
func markSteps(pts []historyPoint) {
	series := map[string][]int{}
	var keys []string
	for i, p := range pts {
		k := seriesKey(p) + "\x00" + p.Device.Fingerprint
		if _, ok := series[k]; !ok {
			keys = append(keys, k)
		}
		series[k] = append(series[k], i)
	}
	for _, k := range keys {
		idx := series[k]
		runs := make([]regress.Run, len(idx))
		for j, i := range idx {
			p := pts[i]
			runs[j] = regress.Run{ID: p.Run, Build: p.Commit, Date: p.Date}
			if (p.Failed == "" || p.Failed == notVerified) && p.Median > 0 {
				runs[j].Median = p.Median
			}
		}
		for _, st := range regress.Detect(runs, regress.DetectOptions{}) {
			pts[idx[st.Index]].Step = &historyStep{Before: st.Before, After: st.After, Ratio: st.Ratio}
		}
	}
}

// writeHistory prints one case's points as a table.
func writeHistory(w io.Writer, pts []historyPoint) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "DATE\tRUN\tCOMMIT\tDEVICE\tVARIANT\tSIZE\tMEDIAN\tMIN\tMAX\tCHANGE\t")
	for _, p := range pts {
		med, lo, hi, change := bench.FormatDuration(p.Median), bench.FormatDuration(p.Min), bench.FormatDuration(p.Max), ""
		unchecked := p.Failed == notVerified && p.Median > 0 // a kernel of prism exec run on one device
		switch {
		case strings.HasPrefix(p.Failed, "skipped"):
			med, lo, hi = "skipped", "-", "-"
			change = shorten(strings.TrimPrefix(p.Failed, "skipped: "), 40)
		case p.Failed != "" && !unchecked:
			med, lo, hi = "failed", "-", "-"
			change = shorten(p.Failed, 40)
		case p.Unlike:
			change = fmt.Sprintf("unlike run %d", p.previousRun)
		case p.Change != nil:
			change = fmt.Sprintf("%+.1f%%", 100**p.Change)
		}
		if unchecked {
			change = strings.TrimSpace(change + " (" + notVerified + ")")
		}
		if st := p.Step; st != nil {
			way := "slower"
			if st.Ratio < 1 {
				way = "faster"
			}
			change = strings.TrimSpace(change + fmt.Sprintf(" step: %s from here (%s -> %s)", way, bench.FormatDuration(st.Before), bench.FormatDuration(st.After)))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Date.Local().Format("2006-01-02 15:04"), p.Run,
			shortCommit(p.Commit), safeText(p.Device.ID), safeText(cmp.Or(p.Variant, "-")), safeText(bench.SizeText(p.Size, p.Dims)), med, lo, hi, safeText(change))
	}
	return tw.Flush()
}

// historyChart is the chart of the cases' histories: the runs of any of them across, a
// line per case, device, variant and size.
func historyChart(op string, all []caseHistory) render.History {
	type runAt struct {
		id     int64
		date   time.Time
		commit string
	}
	var runs []runAt
	seen := map[int64]bool{}
	for _, h := range all {
		for _, p := range h.Points {
			if !seen[p.Run] {
				seen[p.Run] = true
				runs = append(runs, runAt{p.Run, p.Date, p.Commit})
			}
		}
	}
	slices.SortFunc(runs, func(a, b runAt) int { return cmp.Or(a.date.Compare(b.date), cmp.Compare(a.id, b.id)) })
	index := map[int64]int{}
	ch := render.History{Title: "prism history " + op}
	for i, r := range runs {
		index[r.id] = i
		label := strconv.FormatInt(r.id, 10)
		if r.commit != "" {
			label += " " + r.commit[:min(7, len(r.commit))]
		}
		ch.Runs = append(ch.Runs, label)
	}
	for _, h := range all {
		bySeries := map[string]int{}
		for _, p := range h.Points {
			if (p.Failed != "" && p.Failed != notVerified) || p.Median <= 0 {
				continue
			}
			k := seriesKey(p)
			i, ok := bySeries[k]
			if !ok {
				i = len(ch.Series)
				bySeries[k] = i
				name := fmt.Sprintf("%s on %s (%s)", h.Case, p.Device.ID, bench.SizeText(p.Size, p.Dims))
				if p.Variant != "" {
					name = fmt.Sprintf("%s on %s (%s, %s)", h.Case, p.Device.ID, p.Variant, bench.SizeText(p.Size, p.Dims))
				}
				ch.Series = append(ch.Series, render.HistorySeries{Name: name})
			}
			ch.Series[i].Points = append(ch.Series[i].Points, render.HistoryPoint{Run: index[p.Run], Median: p.Median, Min: p.Min, Max: p.Max})
		}
	}
	return ch
}

// shapeSeries narrows series to the shape text asks for, as prism bench --shapes ran it:
// a square (an attention shape of the op's size) is the case of its size (its results
// record no dims: square is true), any other shape its size and dims. A case that takes
// no shape, a bad shape, or a --size that disagrees with the shape is a usage error.
func shapeSeries(series store.Series, text string) (store.Series, bool, error) {
	op, err := suite.Lookup(series.Case)
	if err != nil {
		return series, false, usageError{fmt.Errorf("--shape: %w", err)}
	}
	if err := bench.CheckShapes([]kernels.Op{op}, []string{text}); err != nil { // as prism bench --shapes refuses it
		return series, false, usageError{fmt.Errorf("--shape: %w", err)}
	}
	sh, _, _ := suite.CheckShape(op, text) // checked above
	if series.Size != 0 && series.Size != sh.Size {
		return series, false, usageError{fmt.Errorf("--shape %s is size %s of %s, not the --size given (%s)", sh.Canon, bench.FormatSize(sh.Size), op.Name, bench.FormatSize(series.Size))}
	}
	series.Size = sh.Size
	if !sh.Square {
		series.Dims = sh.Canon
	}
	return series, sh.Square, nil
}
