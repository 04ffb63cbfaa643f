package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
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
	json     bool
}

func newRunCmd() *cobra.Command {
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run OP [OP...]",
		Short: "Run one operation of the suite on one device: verified, then timed",
		Long: `Run an operation of the kernel suite on one device with seeded random inputs, check
its result against the float64 reference, then time it with device events (median, min
and max over --count runs after --warmup runs) and report GB/s and GFLOP/s.

OP is a name from 'prism kernels' (gemm/nn/float32), or a family, a prefix or a glob that
selects several, each run in turn. --size counts elements of the operation's main operand
('prism kernels' says how it becomes a shape; K, M, G suffixes are powers of 1024). Without
--size, an operation runs at its default size on a GPU or accelerator and at its quick size
on a CPU.

Exits with code 4 if a result fails verification.`,
		Example: `  prism run stream/triad/float32 --device opencl:0:0 --size 16M
  prism run gemm/nn/float32 --device cuda:0 --size 16M --count 20
  prism run reduce --device cpu --json`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.device, "device", "", "device ID, backend or class (default: PRISM_DEVICE, then the best device)")
	f.StringVar(&opts.size, "size", "", "elements of the main operand, e.g. 1000000 or 16M (default: the op's size for the device)")
	f.IntVar(&opts.count, "count", 10, "timed runs")
	f.IntVar(&opts.warmup, "warmup", 2, "untimed runs before timing")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the random inputs")
	f.BoolVar(&opts.portable, "portable", false, "use only the portable OpenCL C kernels (no backend-specific variants)")
	f.BoolVar(&opts.json, "json", false, "print the results as JSON")
	return cmd
}

// runResult is one operation's outcome in `prism run --json`.
type runResult struct {
	Op       string      `json:"op"`
	Device   string      `json:"device"`
	Name     string      `json:"device_name"`
	Shape    string      `json:"shape"`
	Size     int         `json:"size"`
	Verified bool        `json:"verified"`
	Stats    bench.Stats `json:"stats"`
	GBs      float64     `json:"gbs"`
	GFLOPs   float64     `json:"gflops"`
}

func runRun(cmd *cobra.Command, opts *runOptions, args []string) error {
	if opts.count <= 0 || opts.warmup < 0 {
		return usageError{fmt.Errorf("--count must be positive and --warmup not negative")}
	}
	size := 0
	if opts.size != "" {
		var err error
		if size, err = parseSize(opts.size); err != nil {
			return usageError{fmt.Errorf("--size: %w", err)}
		}
	}
	ops, err := kernels.Match(args...)
	if err != nil {
		return usageError{err}
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
	var results []runResult
	var errs []error
	for _, op := range ops {
		n := size
		if n == 0 {
			n = op.DefaultSize
			if dev.Info().Kind == engine.KindCPU {
				n = op.QuickSize
			}
		}
		res, err := runOne(cmd, q, op, n, opts)
		if err != nil {
			err = fmt.Errorf("%s on %s: %w", op.Name, dev.ID(), err)
			if errors.Is(err, engine.ErrUnsupported) && len(ops) > 1 {
				fmt.Fprintf(cmd.ErrOrStderr(), "prism: skipped %v\n", err)
				continue
			}
			errs = append(errs, err)
			if !opts.json {
				fmt.Fprintf(cmd.OutOrStdout(), "%s on %s: FAILED: %v\n", op.Name, dev.ID(), err)
			}
			continue
		}
		results = append(results, res)
		if !opts.json {
			writeRunResult(cmd.OutOrStdout(), res, opts)
		}
	}
	if opts.json {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		errs = append(errs, enc.Encode(results))
	}
	return errors.Join(errs...)
}

// runOne sets op up at size n, verifies one run, then times --count runs.
func runOne(cmd *cobra.Command, q *engine.Queue, op kernels.Op, n int, opts *runOptions) (runResult, error) {
	ctx := cmd.Context()
	dev := q.Device()
	res := runResult{Op: op.Name, Device: dev.ID(), Name: dev.Info().Name, Size: n}
	in, err := op.Setup(q, kernels.Params{Size: n, Seed: opts.seed, Rotate: true, Portable: opts.portable})
	if err != nil {
		return res, err
	}
	defer in.Close()
	res.Shape = in.Shape()
	if err := in.Run(q); err != nil {
		return res, err
	}
	if err := in.Verify(q); err != nil {
		return res, err
	}
	res.Verified = true
	for range opts.warmup {
		if err := in.Run(q); err != nil {
			return res, err
		}
	}
	samples := make([]time.Duration, 0, opts.count)
	for range opts.count {
		d, err := q.Timed(ctx, func() error { return in.Run(q) })
		if err != nil {
			return res, err
		}
		samples = append(samples, d)
	}
	res.Stats = bench.Summarize(samples)
	m := in.Model()
	if s := res.Stats.Median.Seconds(); s > 0 {
		res.GBs, res.GFLOPs = m.Bytes/s/1e9, m.Flops/s/1e9
	}
	return res, nil
}

func writeRunResult(w io.Writer, r runResult, opts *runOptions) {
	fmt.Fprintf(w, "%s on %s (%s), %s\n", r.Op, r.Device, r.Name, r.Shape)
	fmt.Fprintf(w, "  verified against the float64 reference (seed %d)\n", opts.seed)
	fmt.Fprintf(w, "  median %s  min %s  max %s  over %d runs (device events, %d warm-up)\n",
		fmtDuration(r.Stats.Median), fmtDuration(r.Stats.Min), fmtDuration(r.Stats.Max), r.Stats.Runs, opts.warmup)
	fmt.Fprintf(w, "  %.2f GB/s  %.2f GFLOP/s\n", r.GBs, r.GFLOPs)
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.1fµs", float64(d)/1e3)
}
