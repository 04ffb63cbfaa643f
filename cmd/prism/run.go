package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/platform"
	"github.com/spf13/cobra"
)

type runOptions struct {
	device   string
	size     string
	count    int
	warmup   int
	seed     uint64
	portable bool
	variants []string
	tunables string
	precs    []string
	outputFlags
}

func newRunCmd() *cobra.Command {
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run OP [OP...]",
		Short: "Run one operation of the suite on one device: verified, then timed",
		Long: `Run an operation of the kernel suite on one device with seeded random inputs, check
its result against the float64 reference, then time it with device events (median, min
and max over --count runs after --warmup runs) and report GB/s and GFLOP/s. Operations
that enqueue nothing timed (blocking copies, allocations, pipelines and launches on queues
of their own) are timed by the host clock, and the line says so.

OP is a name from 'prism kernels' (gemm/nn/float32), or a family, a prefix or a glob that
selects several, each run in turn. --size counts elements of the operation's main operand
('prism kernels' says how it becomes a shape; K, M, G suffixes are powers of 1024). Without
--size, an operation runs at the size 'prism bench' chooses for the device: its default size
on a GPU or accelerator; on a CPU its quick size, quartered (up to three times) while one run
takes longer than 250 ms there, with fewer timed runs (never under 3) when --count runs would
take more than 2 s. The output says when the size was reduced.

An operation may have several implementations (variants: 'prism kernels --device ID' lists
them and marks the one that runs there): the portable OpenCL C kernel, which every device
runs, and backend-specific ones such as CUDA C++ with warp shuffles. Without --variant each
device runs the first that fits; --variant NAME runs that one (or fails saying why it
cannot), --variant all runs every variant in turn, and --portable the portable one.
--tunables SET with --variant NAME runs that variant with the tunable set given ('prism
kernels OP' lists them), marked "(forced)" in the results.

Output: a few lines per operation, or --json (the result fields of 'prism bench --json');
-o FILE writes it to FILE instead (replaced whole, or left as it was on error).

Exits with code 4 if a result fails verification.`,
		Example: `  prism run stream/triad/float32 --device opencl:0:0 --size 16M
  prism run gemm/nn/float32 --device cuda:0 --size 16M --count 20
  prism run reduce --device cpu --json -o reduce.json
  prism run reduce/sum/float32 --device cuda:0 --variant cuda-shfl,portable
  prism run attention/full/bfloat16 --device cuda:0 --variant cuda-wgmma --tunables "STAGES=3 SCHED=1"`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.device, "device", "", "device ID, backend or class (default: PRISM_DEVICE, then the best device)")
	f.StringVar(&opts.size, "size", "", "elements of the main operand, e.g. 1000000 or 16M (default: the op's size for the device)")
	f.StringSliceVar(&opts.precs, "precision", nil, "only the ops in these precisions, comma-separated (float32, tf32, bfloat16, ...)")
	f.IntVar(&opts.count, "count", 10, "timed runs")
	f.IntVar(&opts.warmup, "warmup", 2, "untimed runs before timing; the warm-up lasts 10 ms at least")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the random inputs")
	f.BoolVar(&opts.portable, "portable", false, "use only the portable OpenCL C kernels (no backend-specific variants)")
	f.StringSliceVar(&opts.variants, "variant", nil, "run these variants of each op, comma-separated, or all (default: the first that fits the device)")
	f.StringVar(&opts.tunables, "tunables", "", "with --variant naming one variant: run it with these tunables, as 'prism kernels' and 'prism tune' spell them")
	addTimeout(cmd)
	opts.add(f, "json")
	return cmd
}

// runResult is one operation's outcome in `prism run --json`: the device and bench's
// result (the same fields as a result in `prism bench --json`).
type runResult struct {
	Device string `json:"device"`
	Name   string `json:"device_name"`
	bench.Result
	// DeviceTiming is how the device's times are measured (bench.TimingEvents or
	// TimingHost), for the case's line where Result.Timing says nothing else.
	DeviceTiming string `json:"-"`
}

func runRun(cmd *cobra.Command, opts *runOptions, args []string) error {
	if opts.count <= 0 || opts.warmup < 0 || opts.count > bench.MaxCount || opts.warmup > bench.MaxWarmup {
		return usageError{fmt.Errorf("--count must be 1 to %d and --warmup 0 to %d", bench.MaxCount, bench.MaxWarmup)}
	}
	if err := opts.check(cmd.Flags()); err != nil {
		return err
	}
	if opts.portable && len(opts.variants) > 0 {
		return usageError{fmt.Errorf("--portable and --variant exclude each other (--variant portable runs the portable kernel)")}
	}
	if err := checkForcedTunables(opts.tunables, opts.variants); err != nil {
		return err
	}
	size := 0
	if opts.size != "" {
		var err error
		if size, err = bench.ParseSize(opts.size); err != nil {
			return usageError{fmt.Errorf("--size: %w", err)}
		}
	}
	ops, err := selectOps("", args, opts.precs, opts.variants)
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
	cfg := bench.Config{Count: opts.count, Warmup: opts.warmup, Seed: opts.seed, Portable: opts.portable, Variants: opts.variants, Tunables: opts.tunables}
	start, step := time.Now(), ""
	var results []runResult
	var errs []error
	var buf bytes.Buffer
	out := opts.writer(cmd, &buf)
ops:
	for _, op := range ops {
		for _, variant := range cfg.VariantsFor(op) {
			if ctx.Err() != nil {
				break ops // interrupted: what ran is written and recorded
			}
			step = dev.ID() + " " + op.Name
			var r bench.Result
			if size != 0 {
				r = bench.RunCase(ctx, cfg, q, op, size, variant)
			} else {
				r = bench.RunFitted(ctx, cfg, q, op, variant) // the size prism bench chooses on the device
			}
			res := runResult{Device: dev.ID(), Name: dev.Info().Name, Result: r, DeviceTiming: bench.TimingEvents}
			if !dev.EventTiming() {
				res.DeviceTiming = bench.TimingHost
			}
			switch {
			case res.Skipped != "" && len(ops) > 1:
				fmt.Fprintf(cmd.ErrOrStderr(), "prism: skipped %s on %s: %s\n", op.Name, dev.ID(), res.Skipped)
				continue
			case res.Skipped != "":
				errs = append(errs, caseError(op.Name, dev.ID(), res.Skipped, engine.ErrUnsupported))
			case res.Mismatch:
				errs = append(errs, caseError(op.Name, dev.ID(), res.Err, bench.ErrVerify))
			case res.Err != "":
				errs = append(errs, caseError(op.Name, dev.ID(), res.Err, nil))
			}
			results = append(results, res)
			if !opts.json && res.Skipped == "" { // a case not run is said once, by its error on stderr
				writeRunResult(out, res, opts)
			}
		}
	}
	if opts.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		errs = append(errs, enc.Encode(results))
	}
	errs = append(errs, opts.flush(&buf)) // what ran is kept, failures included
	if len(results) > 0 || ctx.Err() != nil {
		interruptedAt := ""
		if ctx.Err() != nil {
			interruptedAt = interruptedAtStep(ctx, step)
		}
		ci := bench.ConfigInfo{Ops: args, Count: opts.count, Warmup: opts.warmup, Seed: opts.seed, Portable: opts.portable, Variants: opts.variants}
		if size != 0 {
			ci.Sizes = []int{size}
		}
		rep := runReport(start, ci, commandLine(cmd), factsOf(dev), results, interruptedAt)
		errs = append(errs, recordReport(cmd, rep))
	}
	return errors.Join(errs...)
}

// failedCase is the error of a case that did not run or failed: its message says the case,
// the device and the reason the result records, and it matches sentinel with errors.Is.
type failedCase struct {
	msg      string
	sentinel error
}

func (e *failedCase) Error() string { return e.msg }
func (e *failedCase) Unwrap() error { return e.sentinel }

// caseError returns the error of op on device that failed for reason, an error's text kept
// in a bench.Result, matching sentinel (nil for none). The sentinel's text is appended only
// where the reason does not say it already ("verification failed: ...", "...: unsupported"),
// so that the message says each part once.
func caseError(op, device, reason string, sentinel error) error {
	msg := fmt.Sprintf("%s on %s: %s", op, device, reason)
	if sentinel != nil && !strings.Contains(reason, sentinel.Error()) {
		msg += ": " + sentinel.Error()
	}
	return &failedCase{msg: msg, sentinel: sentinel}
}

func writeRunResult(w io.Writer, r runResult, opts *runOptions) {
	shape := ""
	if r.Shape != "" { // a case that failed in its setup has no shape
		shape = ", " + r.Shape
	}
	fmt.Fprintf(w, "%s (%s) on %s (%s)%s\n", r.Case, r.Variant, r.Device, r.Name, shape)
	switch {
	case r.Err != "":
		fmt.Fprintf(w, "  FAILED: %s\n", r.Err)
		return
	case !r.OK():
		fmt.Fprintf(w, "  verified, but %s\n", r.Invalid)
		return
	}
	fmt.Fprintf(w, "  verified against the float64 reference (seed %d)\n", opts.seed)
	timing := r.Timing
	if timing == "" {
		timing = r.DeviceTiming
	}
	fmt.Fprintf(w, "  median %s  min %s  max %s  over %d runs (%s, %d warm-up)\n",
		bench.FormatDuration(r.Stats.Median), bench.FormatDuration(r.Stats.Min), bench.FormatDuration(r.Stats.Max), r.Stats.Runs, timing, r.Warmup)
	if !r.Latency() { // a latency (the alloc family) has its time alone
		fmt.Fprintf(w, "  %.2f GB/s  %.2f GFLOP/s\n", r.GBs, r.GFLOPs)
	}
	if text := r.FiguresText(); text != "" {
		fmt.Fprintf(w, "  %s\n", text)
	}
}
