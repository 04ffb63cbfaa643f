package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/regress"
	"github.com/prism-compute/prism/bench/store"
	"github.com/prism-compute/prism/engine"
)

type checkOptions struct {
	against   string
	run       string
	threshold float64
	alpha     float64
	failOnReg bool
	outputFlags
	inputFlags
}

// regressionError marks a gate that failed: a case slower, or failed, in the run checked
// (exit code exitRegression).
type regressionError struct{ error }

func (e regressionError) Unwrap() error { return e.error }

func newCheckCmd() *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check --against REF [--run REF]",
		Short: "Gate a run on a baseline: per series, regression, improvement or no change, against the noise learnt from the store",
		Long: `Check every case of a run (--run, default @last) against a reference run (--against:
a baseline such as baseline:main, or any run reference: ` + refForms + `;
either may be a report file instead), series by series: a case, variant and size on a
device of one fingerprint (the device, its driver and runtime, its clock, the host's CPU
and the environment that changes results).

The rule (bench/regress): a series is a regression (an improvement) when both
  1. the Mann-Whitney U test over the two runs' samples finds them different: p <= --alpha
     (default 0.05), and
  2. the median got slower (faster) by more than the series' noise threshold, a relative
     change: max(1%, 4 x sigma), where sigma is the robust standard deviation (1.4826 x
     the median absolute deviation) of the log of the run medians among the runs of one
     build (one commit) of that series and fingerprint in the store, the run checked
     left out. With fewer than 6 such runs the threshold is 5%. --threshold X uses X
     instead, for every series.
Record a few runs of one build (prism bench, several times) for the noise to be learnt:
the THRESHOLD column says where each series' threshold came from.

Each line: the device, case, variant and size, the medians of the reference and of the
run, the change ("+12.0%" is slower), the p-value, the threshold, and the verdict:
regression, improvement, no change, not comparable (the device's fingerprint differs
between the runs: a note on stderr says what differs), missing (the reference has no
timed result of it) or failed (the run failed, skipped or did not verify a case the
reference timed). Cases of the reference that the run did not run are counted in the
summary, not listed. Splits and collectives are not checked.

Output: a table and a summary line, or --json; -o FILE writes it to FILE instead.

Exit codes: 0 when no series regressed, or without --fail-on-regression; with it, 7
when any series is a regression or failed (the message lists them), and 1 when nothing
was comparable (every series not comparable or missing: no gate at all); 2 for bad
usage, 6 when the store cannot be read.`,
		Example: `  prism check --against baseline:main
  prism check --against @previous --run @last --json
  prism check --against baseline:main --threshold 0.1 --alpha 0.01

  # a CI gate: benchmark, record, and fail on a regression against the main branch's run
  prism bench --ops stream,gemm/nn/float32 && prism check --against baseline:main --fail-on-regression

  # the baseline: a run of the main branch, named once
  prism baseline set main @last`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return checkRun(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.against, "against", "", "the reference run: a baseline (baseline:main), a run reference or a report file (required)")
	f.StringVar(&opts.run, "run", "@last", "the run to check: a run reference or a report file")
	f.Float64Var(&opts.threshold, "threshold", 0, "a fixed relative change of the median to exceed, for every series (0.05 is 5%; default: learnt per series, 5% without history)")
	f.Float64Var(&opts.alpha, "alpha", regress.DefaultAlpha, "significance level of the Mann-Whitney U test")
	f.BoolVar(&opts.failOnReg, "fail-on-regression", false, "exit with code 7 when any series is a regression or failed in the run")
	opts.add(f, "json")
	opts.addInput(f)
	for _, name := range []string{"against", "run"} {
		_ = cmd.RegisterFlagCompletionFunc(name, completeRefs)
	}
	return cmd
}

// checkRow is one series of prism check.
type checkRow struct {
	Device    deviceJSON      `json:"device"`
	Case      string          `json:"case"`
	Variant   string          `json:"variant,omitempty"`
	Size      int             `json:"size"`
	Dims      string          `json:"dims,omitempty"` // the GEMM shape asked for, where its size does not give it
	Baseline  time.Duration   `json:"baseline_median_ns,omitempty"`
	New       time.Duration   `json:"new_median_ns,omitempty"`
	Change    *float64        `json:"change,omitempty"` // relative: 0.12 is 12% slower
	P         *float64        `json:"p,omitempty"`
	N1        int             `json:"n_baseline,omitempty"`
	N2        int             `json:"n_new,omitempty"`
	Threshold float64         `json:"threshold,omitempty"`
	Source    string          `json:"threshold_source,omitempty"` // learnt, default or fixed
	Sigma     float64         `json:"noise_sigma,omitempty"`
	NoiseRuns int             `json:"noise_runs,omitempty"`
	Verdict   regress.Verdict `json:"verdict"`
	Note      string          `json:"note,omitempty"`
	Differs   []string        `json:"differs,omitempty"` // not comparable: what differs
}

// checkReport is the output of prism check.
type checkReport struct {
	Run       string                  `json:"run"`
	Against   string                  `json:"against"`
	Alpha     float64                 `json:"alpha"`
	Threshold float64                 `json:"threshold,omitempty"` // fixed by --threshold
	K         float64                 `json:"k"`
	Series    []checkRow              `json:"series"`
	Counts    map[regress.Verdict]int `json:"counts"`
	// NotRun counts the cases of the reference the run did not run.
	NotRun int `json:"not_run,omitempty"`
}

func checkRun(cmd *cobra.Command, opts *checkOptions) error {
	if err := opts.check(cmd.Flags()); err != nil {
		return err
	}
	if err := opts.notOver(opts.against, opts.run); err != nil {
		return err
	}
	if strings.TrimSpace(opts.against) == "" {
		return usageError{errors.New("--against is required: the reference run (baseline:main, @previous, a run ID or a report file)")}
	}
	if !(opts.alpha > 0 && opts.alpha < 1) {
		return usageError{fmt.Errorf("--alpha %v must lie strictly between 0 and 1", opts.alpha)}
	}
	ropt := regress.Options{Alpha: opts.alpha, Threshold: opts.threshold}
	if err := ropt.Validate(); err != nil {
		return usageError{fmt.Errorf("--threshold %v must be at least 0 and below %v (a relative change: 0.05 is 5%%)", opts.threshold, bench.MaxThreshold)}
	}
	rr, err := opts.reader()
	if err != nil {
		return err
	}
	r := &refReader{cmd: cmd, rr: rr}
	defer r.close()
	old, oldName, oldID, err := r.readRun(opts.against)
	if err != nil {
		return fmt.Errorf("--against: %w", err)
	}
	cur, curName, curID, err := r.readRun(opts.run)
	if err != nil {
		return fmt.Errorf("--run: %w", err)
	}
	if curID != 0 && curID == oldID {
		return fmt.Errorf("--run %s and --against %s name the same run, %d: nothing to check", opts.run, opts.against, curID)
	}
	s, err := r.store()
	if err != nil {
		return err
	}
	rep, err := checkSeries(cmd, s, old, cur, curID, ropt)
	if err != nil {
		return err
	}
	rep.Run, rep.Against = curName, oldName
	writeUnlikeNote(cmd.ErrOrStderr(), oldName, curName, old, cur)
	err = opts.write(cmd, func(w io.Writer) error {
		if opts.json {
			return writeJSON(w, rep)
		}
		return writeCheck(w, rep)
	})
	if err != nil || !opts.failOnReg {
		return err
	}
	return rep.gate()
}

// checkSeries decides every series of cur against old, with the noise of each learnt
// from the store's history of its fingerprint (the run checked, curID, left out).
func checkSeries(cmd *cobra.Command, s *store.Store, old, cur *bench.Report, curID store.RunID, opt regress.Options) (*checkReport, error) {
	ctx := storeContext(cmd)
	rep := &checkReport{Alpha: opt.Alpha, Threshold: opt.Threshold, K: regress.DefaultK, Counts: map[regress.Verdict]int{}}
	unlike := unlikeDevices(old, cur)
	histories := map[string][]store.Point{} // by case
	history := func(c string) ([]store.Point, error) {
		if h, ok := histories[c]; ok {
			return h, nil
		}
		h, err := s.History(ctx, store.Series{Case: c})
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, engine.ErrInvalidArg) {
			err, h = nil, nil // not recorded (a report file's case): no history
		}
		if err != nil {
			return nil, storeError{err}
		}
		histories[c] = h
		return h, nil
	}
	seen := map[string]bool{} // device ID and case key of the reference that the run has
	for i := range cur.Devices {
		nd := &cur.Devices[i]
		od := old.Device(nd.Device.ID)
		fp := store.Fingerprint(cur, nd)
		dev := deviceJSON{ID: nd.Device.ID, Name: nd.Device.Name, Backend: nd.Backend, Fingerprint: fp}
		for j := range nd.Results {
			n := &nd.Results[j]
			row := checkRow{Device: dev, Case: n.Case, Variant: n.Variant, Size: n.Size, Dims: n.Dims}
			var o *bench.Result
			if od != nil {
				o = findResult(od, n.Key())
			}
			if o != nil {
				seen[seenKey(nd.Device.ID, n.Key())] = true
			}
			if n.Skipped != "" && n.Err == "" && (o == nil || o.Skipped != "") {
				continue // skipped on both sides (no fp64 on the device): nothing to check
			}
			switch {
			case od == nil:
				row.Verdict, row.Note = regress.Missing, "the device is not in the reference"
			case unlike[nd.Device.ID] != nil:
				row.Verdict, row.Note, row.Differs = regress.NotComparable, "the device's fingerprint differs", unlike[nd.Device.ID]
			case o == nil:
				row.Verdict, row.Note = regress.Missing, "not in the reference"
			case !o.OK() || o.Stats.Median <= 0:
				row.Verdict, row.Note = regress.Missing, "no timed result in the reference: "+whyNot(o)
			case !n.OK() || n.Stats.Median <= 0:
				row.Verdict, row.Note = regress.Failed, whyNot(n)
			default:
				h, err := history(n.Case)
				if err != nil {
					return nil, err
				}
				noise := regress.LearnNoise(noiseRuns(h, fp, n, curID), opt)
				d := regress.Decide(o.Stats.Samples, n.Stats.Samples, noise, opt)
				row.Baseline, row.New = o.Stats.Median, n.Stats.Median
				if len(o.Stats.Samples) > 0 && len(n.Stats.Samples) > 0 {
					row.Baseline, row.New = d.Old, d.New
					p := d.Test.P
					row.P, row.N1, row.N2 = &p, d.Test.N1, d.Test.N2
				}
				c := float64(row.New)/float64(row.Baseline) - 1
				row.Change = &c
				row.Threshold, row.Source, row.Sigma, row.NoiseRuns = d.Threshold, noise.Source, noise.Sigma, noise.Runs
				row.Verdict, row.Note = d.Verdict, d.Note
			}
			rep.Counts[row.Verdict]++
			rep.Series = append(rep.Series, row)
		}
	}
	for i := range old.Devices {
		od := &old.Devices[i]
		for j := range od.Results {
			if o := &od.Results[j]; o.OK() && !seen[seenKey(od.Device.ID, o.Key())] {
				rep.NotRun++
			}
		}
	}
	return rep, nil
}

func seenKey(dev string, k bench.CaseKey) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s", dev, k.Case, k.Size, k.Variant)
}

// findResult returns d's result of case k, or nil.
func findResult(d *bench.DeviceReport, k bench.CaseKey) *bench.Result {
	for i := range d.Results {
		if d.Results[i].Key() == k {
			return &d.Results[i]
		}
	}
	return nil
}

// whyNot says why a result has no valid time.
func whyNot(r *bench.Result) string {
	switch {
	case r.Err != "":
		return "failed: " + r.Err
	case r.Skipped != "":
		return "skipped: " + r.Skipped
	case r.Mismatch:
		return "differs from the reference"
	case r.Invalid != "":
		return r.Invalid
	case !r.Verified:
		return "not verified"
	}
	return "not timed"
}

// noiseRuns returns the history of n's series on fingerprint fp as regress reads it: the
// valid results of that variant and size, the run checked left out.
func noiseRuns(h []store.Point, fp string, n *bench.Result, curID store.RunID) []regress.Run {
	var out []regress.Run
	for _, p := range h {
		if p.Device.Fingerprint != fp || p.Variant != n.Variant || p.Size != n.Size || p.Failed != "" || p.Median <= 0 {
			continue
		}
		if curID != 0 && p.Run == curID {
			continue
		}
		out = append(out, regress.Run{ID: int64(p.Run), Build: p.Commit, Date: p.Date, Median: p.Median})
	}
	return out
}

// gate returns a regressionError listing the series that regressed or failed, or an
// error when no series could be compared at all; nil otherwise.
func (c *checkReport) gate() error {
	var bad []string
	for _, r := range c.Series {
		switch r.Verdict {
		case regress.Regression:
			bad = append(bad, fmt.Sprintf("%s %s %s: %+.1f%% slower than the threshold %.1f%% allows (p = %.2g)",
				r.Device.ID, caseText(r), bench.SizeText(r.Size, r.Dims), 100**r.Change, 100*r.Threshold, *r.P))
		case regress.Failed:
			bad = append(bad, fmt.Sprintf("%s %s %s: %s", r.Device.ID, caseText(r), bench.SizeText(r.Size, r.Dims), r.Note))
		}
	}
	if len(bad) > 0 {
		msg := safeText(fmt.Sprintf("%s against %s: %d regressions, %d failed", c.Run, c.Against, c.Counts[regress.Regression], c.Counts[regress.Failed]))
		for i, b := range bad {
			if i == bench.MaxProblemsShown {
				msg += fmt.Sprintf("\n  and %d more", len(bad)-i)
				break
			}
			msg += "\n  " + safeText(b)
		}
		return regressionError{errors.New(msg)}
	}
	compared := c.Counts[regress.Regression] + c.Counts[regress.Improvement] + c.Counts[regress.NoChange]
	if compared == 0 {
		return fmt.Errorf("%s against %s: no series could be compared (%d not comparable, %d missing): the gate checked nothing",
			safeText(c.Run), safeText(c.Against), c.Counts[regress.NotComparable], c.Counts[regress.Missing])
	}
	return nil
}

// caseText is the case with its variant where one is named.
func caseText(r checkRow) string {
	if r.Variant == "" {
		return r.Case
	}
	return r.Case + " (" + r.Variant + ")"
}

// writeCheck prints the check as a table and a summary line.
func writeCheck(w io.Writer, c *checkReport) error {
	fmt.Fprintf(w, "%s against %s\n", safeText(c.Run), safeText(c.Against))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tCASE\tVARIANT\tSIZE\tBASELINE\tNEW\tCHANGE\tP\tTHRESHOLD\tVERDICT")
	for _, r := range c.Series {
		base, now, change, p, th := "-", "-", "-", "-", "-"
		if r.Baseline > 0 {
			base = bench.FormatDuration(r.Baseline)
		}
		if r.New > 0 {
			now = bench.FormatDuration(r.New)
		}
		if r.Change != nil {
			change = fmt.Sprintf("%+.1f%%", 100**r.Change)
		}
		if r.P != nil {
			p = fmt.Sprintf("%.2g (%d, %d)", *r.P, r.N1, r.N2)
		}
		switch r.Source {
		case regress.SourceLearnt:
			th = fmt.Sprintf("%.1f%% (%d runs)", 100*r.Threshold, r.NoiseRuns)
		case regress.SourceDefault:
			th = fmt.Sprintf("%.1f%% (default)", 100*r.Threshold)
		case regress.SourceFixed:
			th = fmt.Sprintf("%.1f%% (--threshold)", 100*r.Threshold)
		}
		verdict := string(r.Verdict)
		if r.Note != "" && r.Verdict != regress.NotComparable {
			verdict += " (" + shorten(r.Note, 50) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", safeText(r.Device.ID), safeText(r.Case), safeText(cmp.Or(r.Variant, "-")),
			safeText(bench.SizeText(r.Size, r.Dims)), base, now, change, p, th, safeText(verdict))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var parts []string
	for _, v := range []regress.Verdict{regress.Regression, regress.Improvement, regress.NoChange, regress.NotComparable, regress.Missing, regress.Failed} {
		if n := c.Counts[v]; n > 0 || v == regress.Regression {
			label := string(v)
			if n != 1 && (v == regress.Regression || v == regress.Improvement) {
				label += "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, label))
		}
	}
	summary := strings.Join(parts, ", ")
	if c.NotRun > 0 {
		summary += fmt.Sprintf("; %d cases of the reference not run", c.NotRun)
	}
	_, err := fmt.Fprintln(w, summary)
	return err
}
