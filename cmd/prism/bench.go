package main

import (
	"errors"
	"fmt"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/platform"
	"github.com/spf13/cobra"
)

type benchOptions struct {
	device string
	all    bool
	size   int
	count  int
	warmup int
	seed   uint64
	json   bool
	quiet  bool
}

func newBenchCmd() *cobra.Command {
	opts := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark the kernel suite on every device, verified, side by side",
		Long: `Run the stream kernels (copy, scale, add, triad, dot; float32 and float64) on
every device found, or on the one --device names. Each case is first checked against a
float64 reference on random inputs; only verified cases are timed. Times come from device
events: median, min and max over --count runs after --warmup runs.

Each device's device-to-device copy bandwidth is measured in the same run and every
result is shown as a fraction of it.

Progress goes to stderr, the report to stdout. Exits with code 4 if any result fails
verification, 3 if no device is found.`,
		Example: `  prism bench
  prism bench --device opencl:0:0 --size 4000000 --count 20
  prism bench --json > results.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchRun(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.device, "device", "", "device ID, backend or class (default: all devices)")
	f.IntVar(&opts.size, "size", 1<<24, "elements per array")
	f.IntVar(&opts.count, "count", 10, "timed runs per case")
	f.IntVar(&opts.warmup, "warmup", 2, "untimed runs before timing")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the random inputs")
	f.BoolVar(&opts.json, "json", false, "print the report as JSON")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

func benchRun(cmd *cobra.Command, opts *benchOptions) error {
	if opts.size <= 0 || opts.count <= 0 || opts.warmup < 0 {
		return usageError{fmt.Errorf("--size and --count must be positive and --warmup not negative")}
	}
	ctx := cmd.Context()
	dis, err := platform.Discover(ctx)
	if err != nil {
		return err
	}
	var ids []string
	if opts.device != "" {
		d, _, err := platform.Select(dis.Devices, opts.device)
		if err != nil {
			return err
		}
		ids = []string{d.ID}
	} else {
		for _, d := range dis.Devices {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) == 0 {
		return fmt.Errorf("no compute device found: %w", joinNoDevice(dis))
	}
	var devs []*engine.Device
	defer func() {
		for _, d := range devs {
			d.Close()
		}
	}()
	for _, id := range ids {
		d, err := engine.Open(ctx, id)
		if err != nil {
			return err
		}
		devs = append(devs, d)
	}
	ops, err := kernels.Match("stream")
	if err != nil {
		return err
	}
	cfg := bench.Config{Ops: ops, Size: opts.size, Count: opts.count, Warmup: opts.warmup, Seed: opts.seed}
	if !opts.quiet {
		cfg.Progress = cmd.ErrOrStderr()
	}
	rep, err := bench.Run(ctx, cfg, devs)
	if err != nil && rep == nil {
		return err
	}
	out := cmd.OutOrStdout()
	if opts.json {
		err = errors.Join(err, rep.WriteJSON(out))
	} else {
		err = errors.Join(err, rep.WriteTable(out))
	}
	if err != nil {
		return err
	}
	return rep.Check()
}
