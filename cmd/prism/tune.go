package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/platform"
	"github.com/spf13/cobra"
)

type tuneOptions struct {
	device  string
	size    string
	count   int
	warmup  int
	variant string
	precs   []string
	dryRun  bool
	user    tuneUserOptions // tuning FILE.cl
	outputFlags
}

func newTuneCmd() *cobra.Command {
	opts := &tuneOptions{}
	cmd := &cobra.Command{
		Use:   "tune (OP [OP...] | FILE.cl --kernel NAME -D NAME=V1,V2,... [--arg SPEC]...)",
		Short: "Measure a variant's tunable sets, or the -D values of a kernel of your own, and find the fastest",
		Long: `Measure every candidate tunable set of the variants that have them (tile shapes,
pipeline stages, warps: 'prism kernels' lists a variant's tunables) on one device: each
set is built, run once and verified against the float64 reference, then timed with device
events (median of --count runs). The fastest verified set of each op and variant is saved
in the tuning file of the device (under $PRISM_CACHE_DIR/tuning, else the user's cache
directory's prism/tuning, one file per device, driver and architecture), which later runs
of prism run, prism bench and the library take instead of the architecture's table;
reports record which tunables ran and where they came from. --dry-run measures without
saving. A set that fails to build or verify is reported and never chosen.

OP selects operations as in 'prism run'. Without --variant, every variant with tunables
that fits the device is tuned; ops without one are skipped, saying so.

Output: one line per candidate and the winner of each op, or --json.

` + tuneUserHelp,
		Example: `  prism tune gemm/nn/bfloat16 --device cuda:0
  prism tune gemm/nn --precision tf32,float16 --device cuda:0 --size 64M
  prism tune gemm/nt/float8e4m3 --device cuda:0 --dry-run --json
` + tuneUserExample,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.HasSuffix(args[0], ".cl") {
				return tuneUserRun(cmd, opts, args)
			}
			return tuneRun(cmd, opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.device, "device", "", "device ID, backend or class (default: PRISM_DEVICE, then the best device); with FILE.cl, several, comma-separated")
	f.StringVar(&opts.size, "size", "", "elements of the main operand to tune at (default: the op's default size)")
	f.IntVar(&opts.count, "count", 5, "timed runs per candidate")
	f.IntVar(&opts.warmup, "warmup", 1, "untimed runs per candidate before timing")
	f.StringVar(&opts.variant, "variant", "", "tune only this variant (default: every variant with tunables that fits)")
	f.StringSliceVar(&opts.precs, "precision", nil, "only the ops in these precisions, comma-separated")
	f.BoolVar(&opts.dryRun, "dry-run", false, "measure, but do not save the winners")
	opts.user.addFlags(f)
	addTimeout(cmd)
	opts.add(f, "json")
	return cmd
}

// tuneResult is one op's tuning: each candidate's result and the winner.
type tuneResult struct {
	Device     string         `json:"device"`
	Op         string         `json:"op"`
	Variant    string         `json:"variant"`
	Candidates []bench.Result `json:"candidates"`
	Winner     string         `json:"winner,omitempty"` // the winning tunables; empty when none verified
	Saved      bool           `json:"saved"`
	// Interrupted: a signal or the time limit ended the tuning; the candidate it ended
	// says "cancelled", and no winner is named or saved.
	Interrupted bool `json:"interrupted,omitempty"`
}

func tuneRun(cmd *cobra.Command, opts *tuneOptions, args []string) error {
	if opts.count <= 0 || opts.warmup < 0 || opts.count > bench.MaxCount || opts.warmup > bench.MaxWarmup {
		return usageError{fmt.Errorf("--count must be 1 to %d and --warmup 0 to %d", bench.MaxCount, bench.MaxWarmup)}
	}
	if err := opts.check(cmd.Flags()); err != nil {
		return err
	}
	if err := opts.user.onlyWithFile(cmd.Flags()); err != nil {
		return err
	}
	size := 0
	if opts.size != "" {
		var err error
		if size, err = bench.ParseSize(opts.size); err != nil {
			return usageError{fmt.Errorf("--size: %w", err)}
		}
	}
	var variants []string
	if opts.variant != "" {
		variants = []string{opts.variant}
	}
	ops, err := selectOps("", args, opts.precs, variants)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	dev, err := platform.Open(ctx, opts.device)
	if err != nil {
		return err
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		return err
	}
	defer q.Close()
	var buf bytes.Buffer
	out := opts.writer(cmd, &buf)
	var results []tuneResult
	var errs []error
	tuned := 0
	for _, op := range ops {
		if ctx.Err() != nil {
			break
		}
		n := size
		if n == 0 {
			n = op.DefaultSize
			if dev.Info().Kind == engine.KindCPU {
				n = op.QuickSize
			}
		}
		for _, v := range op.Variants {
			if v.Candidates == nil || (opts.variant != "" && !strings.EqualFold(v.Name, opts.variant)) {
				continue
			}
			if err := v.Fits(dev); err != nil {
				if opts.variant != "" {
					errs = append(errs, caseError(op.Name, dev.ID(), err.Error(), engine.ErrUnsupported))
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "prism: %s %s does not run on %s: %v\n", op.Name, v.Name, dev.ID(), err)
				}
				continue
			}
			if ctx.Err() != nil {
				break
			}
			tuned++
			r := tuneOne(ctx, opts, q, op, v, n, out)
			if r.Interrupted {
				if !opts.json {
					fmt.Fprintln(out, "  winner: none (interrupted: nothing saved)")
				}
				results = append(results, r)
				break
			}
			if r.Winner == "" {
				errs = append(errs, caseError(op.Name, dev.ID(), "no candidate of "+v.Name+" verified", nil))
			} else if !opts.dryRun {
				best := r.best()
				if err := kernels.SaveTuned(dev, kernels.Tuned{Op: op.Name, Variant: v.Name, Tunables: r.Winner,
					Size: n, MedianNS: int64(best.Stats.Median)}); err != nil {
					errs = append(errs, err)
				} else {
					r.Saved = true
				}
			}
			if !opts.json {
				fmt.Fprintf(out, "  winner: %s", orNone(r.Winner))
				if r.Saved {
					fmt.Fprintf(out, " (saved in %s)", kernels.TunedDir())
				}
				fmt.Fprintln(out)
			}
			results = append(results, r)
		}
	}
	if ctx.Err() != nil {
		errs = append(errs, context.Cause(ctx))
	}
	if tuned == 0 && len(errs) == 0 {
		errs = append(errs, usageError{fmt.Errorf("none of the %d operations selected has a variant with tunables that runs on %s (see prism kernels --device %s)", len(ops), dev.ID(), dev.ID())})
	}
	if opts.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		errs = append(errs, enc.Encode(results))
	}
	errs = append(errs, opts.flush(&buf))
	return errors.Join(errs...)
}

// tuneOne measures every candidate of variant v of op at size n on q's device.
func tuneOne(ctx context.Context, opts *tuneOptions, q *engine.Queue, op kernels.Op, v kernels.Variant, n int, out io.Writer) tuneResult {
	dev := q.Device()
	r := tuneResult{Device: dev.ID(), Op: op.Name, Variant: v.Name}
	if !opts.json {
		fmt.Fprintf(out, "%s %s on %s at %s:\n", op.Name, v.Name, dev.ID(), bench.FormatSize(n))
	}
	var best time.Duration
	for _, c := range v.Candidates(dev) {
		cfg := bench.Config{Count: opts.count, Warmup: opts.warmup, Seed: 1, Tunables: c}
		res := bench.RunCase(ctx, cfg, q, op, n, v.Name)
		if ctx.Err() != nil {
			// Whatever it says (a failed build, an aborted wait), the candidate was cut
			// short: it is neither a failure nor a candidate for the winner, and none is
			// chosen among those that finished.
			res.Err = "cancelled: " + context.Cause(ctx).Error()
			r.Candidates = append(r.Candidates, res)
			if !opts.json {
				fmt.Fprintf(out, "  %-56s cancelled\n", c)
			}
			r.Interrupted, r.Winner = true, ""
			return r
		}
		r.Candidates = append(r.Candidates, res)
		med := res.Stats.Median
		ok := res.OK() && res.Verified && med > 0
		if !opts.json {
			switch {
			case ok:
				fmt.Fprintf(out, "  %-56s %10v  %s\n", c, med.Round(time.Microsecond), rateOf(res))
			case res.Skipped != "":
				fmt.Fprintf(out, "  %-56s not run: %s\n", c, res.Skipped)
			default:
				fmt.Fprintf(out, "  %-56s FAILED: %s\n", c, res.Err)
			}
		}
		if ok && (best == 0 || med < best) {
			best, r.Winner = med, c
		}
	}
	return r
}

// best returns the winner's result.
func (r tuneResult) best() bench.Result {
	for _, c := range r.Candidates {
		if c.Tunables != "" && strings.HasPrefix(c.Tunables, r.Winner+" (") {
			return c
		}
	}
	return bench.Result{}
}

// rateOf formats a result's rate: GFLOP/s where it does FLOPs, else GB/s.
func rateOf(res bench.Result) string {
	if res.Flops > 0 {
		return fmt.Sprintf("%.0f GFLOP/s", res.GFLOPs)
	}
	return fmt.Sprintf("%.1f GB/s", res.GBs)
}

func orNone(s string) string {
	if s == "" {
		return "none (no candidate verified)"
	}
	return s
}
