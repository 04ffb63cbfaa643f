package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/render"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/group"
	"github.com/prism-compute/prism/kernels"

	// MPI, loaded at run time, for the collectives of processes that mpirun or srun started.
	_ "github.com/prism-compute/prism/internal/mpi"
)

// joinTimeout bounds the wait for every process of a rendezvous.
const joinTimeout = 5 * time.Minute

// splitRun is `prism bench --split`: each op split across the devices.
func splitRun(cmd *cobra.Command, opts *benchOptions, ops []kernels.Op, sizes []int, devs []*engine.Device) error {
	if len(devs) < 2 {
		return usageError{fmt.Errorf("--split needs two devices or more (--device a,b or --all-devices); %d given", len(devs))}
	}
	if len(opts.fractions) > 0 && len(opts.fractions) != len(devs) {
		return usageError{fmt.Errorf("--fractions gives %d shares for %d devices", len(opts.fractions), len(devs))}
	}
	cfg := bench.SplitConfig{Ops: ops, Sizes: sizes, Quick: opts.quick, Count: opts.count, Warmup: opts.warmup,
		Seed: opts.seed, Portable: opts.portable, Fractions: opts.fractions, Placement: opts.placement}
	if !opts.quiet {
		cfg.Progress = bench.NewProgress(cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr()))
	}
	rep, err := bench.RunSplits(cmd.Context(), cfg, devs)
	if rep == nil {
		if errors.Is(err, engine.ErrInvalidArg) {
			return usageError{err}
		}
		return err
	}
	if !opts.quiet && !opts.json { // the planner's choice per case, beside the table
		for _, s := range rep.Splits {
			if s.Plan != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s %s, %s data: %s\n", s.Case, bench.FormatSize(s.Size), s.Placement, s.Plan)
			}
		}
	}
	return writeGroupReport(cmd, opts, rep, err)
}

// collectivesRun is `prism bench --ops collective/*`: the collectives across the devices
// given, joined with other processes' where the environment names a rendezvous.
func collectivesRun(cmd *cobra.Command, opts *benchOptions, names []string) error {
	if opts.split || opts.portable || len(opts.variants) > 0 || opts.vendor {
		return usageError{fmt.Errorf("collectives take none of --split, --portable, --variant, --vendor")}
	}
	var sizes []int
	for _, s := range opts.sizes {
		n, err := bench.ParseSize(s)
		if err != nil {
			return usageError{fmt.Errorf("--sizes: %w", err)}
		}
		sizes = append(sizes, n)
	}
	// The environment first: a malformed or out-of-range rendezvous is refused before any
	// device is opened.
	rv, joined, err := group.RendezvousFromEnv()
	if err != nil {
		return usageError{err}
	}
	ctx := cmd.Context()
	ids, err := benchDevices(cmd, opts)
	if err != nil {
		return err
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
	o := group.Options{HostStaged: opts.hostStaged, NoSharedMemory: opts.noShm}
	var g *group.Group
	if joined {
		jctx, cancel := context.WithTimeout(ctx, joinTimeout)
		g, err = group.Join(jctx, devs, rv, o)
		cancel()
	} else {
		g, err = group.New(ctx, devs, o)
	}
	if err != nil {
		endOnGroupPanic(err)
		return err
	}
	defer g.Close()
	if !opts.quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "group of %d ranks (this process: %d, from rank %d) through %s\n", g.Size(), len(devs), g.Rank(0), g.Library())
		if why := g.Staged(); why != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "staged through the host: %s\n", why)
		}
	}
	if why := g.Fallback(); why != "" {
		// Said even under -q: the processes talk over Prism's own TCP frames, the fallback.
		fmt.Fprintf(cmd.ErrOrStderr(), "collectives across processes over Prism's TCP frames, the fallback: %s\n", why)
	}
	cfg := bench.CollectiveConfig{Names: names, Sizes: sizes, Quick: opts.quick, Count: opts.count, Warmup: opts.warmup, Seed: opts.seed, InPlace: opts.inPlace}
	if !opts.quiet {
		cfg.Progress = bench.NewProgress(cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr()))
	}
	rep, err := bench.RunCollectives(ctx, cfg, g)
	if rep == nil {
		endOnGroupPanic(g.Panicked())
		return err
	}
	err = writeGroupReport(cmd, opts, rep, err)
	endOnGroupPanic(g.Panicked()) // the report is written
	return err
}

// endOnGroupPanic ends the command as a panic of its own ends it (exit code 70, "please
// report") when err is or wraps a panic recovered in one of a group's goroutines, which
// handed it over rather than end the process; under PRISM_TRACE the stack printed first is
// the goroutine's, where it panicked.
func endOnGroupPanic(err error) {
	var pe *group.PanicError
	if !errors.As(err, &pe) {
		return
	}
	if engine.Tracing() {
		os.Stderr.Write(pe.Stack)
	}
	panic(pe)
}

// writeGroupReport writes the report of a split or collective run as the output flags ask
// (every format of the suite's report), records it in the results store, then says
// whether every result verified.
func writeGroupReport(cmd *cobra.Command, opts *benchOptions, rep *bench.Report, err error) error {
	rep.Command = commandLine(cmd)
	if rep.Interrupted {
		rep.InterruptedAt = interruptedAtStep(cmd.Context(), rep.InterruptedAt)
	}
	werr := opts.write(cmd, func(w io.Writer) error {
		return writeReport(w, rep, opts.json, opts.csv, opts.markdown, opts.benchstat, render.TableOptions{Baseline: opts.baseline, Wide: opts.wide})
	})
	serr := recordReport(cmd, rep) // after the report: a store that fails loses nothing
	if err := errors.Join(err, werr); err != nil {
		return errors.Join(err, serr)
	}
	return errors.Join(rep.Check(), serr)
}
