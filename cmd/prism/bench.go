package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/render"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/platform"
	"github.com/prism-compute/prism/platform/telemetry"
)

type benchOptions struct {
	devices  []string
	all      bool
	ops      []string
	precs    []string
	sizes    []string
	shapes   []string
	size     int // deprecated --size
	quick    bool
	portable bool
	variants []string
	tunables string
	vendor   bool
	count    int
	warmup   int
	seed     uint64
	baseline string
	wide     bool
	quiet    bool
	// Many devices at once (group.go).
	split      bool
	fractions  []float64
	placement  string
	hostStaged bool
	inPlace    bool
	noShm      bool
	outputFlags
}

func newBenchCmd() *cobra.Command {
	opts := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark the kernel suite on devices side by side, verified, against measured ceilings",
		Long: `Run the operations of the suite (all, or those --ops selects) on one device (--device,
else PRISM_DEVICE, else the best by policy), several (--device a,b) or all (--all-devices),
at every size of --sizes, exactly as given, or at a size chosen for each device:

  GPU, accelerator   each op's default size, --count runs after --warmup
  CPU                each op's quick size (the default sizes are GPU problems), quartered
                     (at most three times) while one run takes longer than 250 ms, and
                     fewer timed runs (never under 3) where --count would take over 2 s
  --quick            every device as a CPU within 25 ms a run and 150 ms a case: the whole
                     suite in seconds ('make run')

A case whose size was reduced says so in the report (size_note in JSON). Where sizes are
chosen, each case runs on every device in turn, and a size one device had to reduce is the
others' too, so that the devices stay side by side on one row.

Every case is first checked against a float64 reference on random inputs; only verified
cases are timed. Times come from device events: median, min and max over --count runs
after --warmup runs, with inputs rotated so that repeats do not find them in a cache. On
CUDA each run's queue is held until the run is enqueued, so that the events time the
device and not the host's enqueueing (the vendor libraries' runs alike).

Each device's ceilings are measured in the same run: device-to-device copy bandwidth and
the FMA-bound peak in float32 and float64. Every result is shown against its roofline,
min(peak of its type, copy GB/s x FLOPs/byte), with its bound (memory or compute); with
several devices, the ratio of each to the first device or to --baseline.

--ops patterns: a family ("stream"), a prefix ("stream/triad"), an op name or a glob
("*/*/float64"). --sizes: elements of each op's main operand, with K, M or G suffixes
(powers of 1024), e.g. --sizes 64K,1M,16M.

--shapes, instead of --sizes, for the GEMM ops: M x N x K written MxNxK, any dimensions
(4095, 6000, skinny 8192x64x8192), e.g. --shapes 4096x4096x4096,4095x4095x4095,8192x128x8192
(batched GEMM: each matrix of its batch). --shapes sweep is the named sweep, ` + fmt.Sprint(len(bench.SweepShapes)) + ` shapes:
the squares 512 to 16384, squares off the tiles (4095, 4097, 6000), rectangles, and
skinny products with M, N or K of 64 to 256 (` + fmt.Sprint(len(bench.SweepShapes)) + ` cases per op and variant; a
minute or two per precision on an H200 with --vendor). A square shape is the case of its
size (--shapes 4096x4096x4096 is --sizes 16M); other shapes are cases of their own, shown
by their MxNxK. With --vendor, the report ends with the geometric mean and the worst of
the "vs vendor" ratios of each family (GEMM, attention), precision and variant, naming the
worst shape (also "vendor_summary" in JSON). A GEMM shape may end in :beta=0 (e.g.
8192x8192x8192:beta=0): D = alpha*A*B, C not read, the product alone that PyTorch's
matmul and _scaled_mm compute (scripts/vendor.py's GEMM figures are of that case); the
ops' own beta is nonzero and C read, as BLAS's GEMM and the --vendor library compute it.

--shapes for the attention ops: batch x heads x seq x dim written BxHxSxD, head dims 1 to
256 (cuda-mma takes 64 and 128, cuda-wgmma 64, 128 and 256; the portable kernel any), e.g.
--ops attention/full/bfloat16 --shapes 4x32x4096x64,4x32x4096x128,4x32x4096x256. A shape
an op's size gives is the case of that size (4x32x4096x128 is --sizes 64M for the float16
and bfloat16 ops, 1x8x4096x64 --sizes 2M for float32); others are cases of their own,
shown by their BxHxSxD. scripts/vendor.py --attention-shapes times SDPA at the same
shapes for 'prism report run.json vendor.json'.

Variants: each device runs, per op, the first implementation that fits it (CUDA C++ with
warp shuffles on a CUDA device, the portable OpenCL C kernel elsewhere; 'prism kernels
--device ID' shows which). --portable runs the portable kernel everywhere, for a fair
cross-API comparison; --variant NAME,... runs each case once per variant named, side by side
on one device ("all": every variant of each op). Every report names the variant that ran.
--tunables SET, with --variant naming one variant, runs that variant with the tunable set
given ('prism kernels OP' lists a variant's tunables, 'prism tune' measures its candidates),
in place of the tuned or default one; reports mark the set "(forced)".

--vendor runs each case a second time through the device's vendor library, on the same
inputs, queue and buffers, verified and timed the same way: cuBLAS and cuFFT on CUDA
devices, CLBlast and clFFT on OpenCL devices, for GEMM, FFT, axpy, dot and (CLBlast) sum (loaded at run time; PRISM_VENDOR_PATH lists
directories to search first). Reports gain a "vs vendor" column per device, the vendor's
time over Prism's (above 1: Prism is faster), and name each library with its version; an
op no vendor library computes says "none". Vendor baselines for ops without a callable
library (CUB sort and scan, SDPA) come from scripts/vendor.py through PyTorch, as a
pseudo-device "vendor:ID" that 'prism report a.json vendor.json' puts beside the run.

Output: a table on stdout, or --json (schema: docs/bench.schema.json, fields: docs/BENCH.md),
--csv, --markdown (--md), or --benchstat (Go benchmark format: benchstat old.txt new.txt);
-o FILE (--out) writes it to FILE instead: replaced whole, or left as it was on error.
Progress goes to stderr (a bar on a terminal, lines otherwise; the time spent and an estimate
of the time left), and one summary line at the end: cases verified, skipped (the reasons
counted) and failed, before the exit status; nothing with -q.

Many devices at once: --split runs each op that splits (GEMM by row blocks, batched
GEMM and FFT by batch, reductions, sort, Monte Carlo, element-wise maps) across every
device given as one group, each device a share of the work in proportion to its
throughput for that op measured at run time (--fractions fixes the shares), and reports
the split's time beside each device's alone and the speedup over the fastest (timed in
turn with the split, run for run; at least 25 runs each where a run is under a
millisecond); a device that would not make the split faster gets no share. Ops that run on sharded data (maps,
sums, sort, batched FFT, GEMM) run twice: with data from the host, and on data already
split over the devices, against the device fastest with its data resident, run through
the split with all of the data on it (timed in turn the same way), and against that
device's own op (in brackets) (--placement host or sharded runs one of the two). A speedup
marked ~ is one the runs cannot tell from 1 (its 95% interval holds 1), and a summary per
placement closes the splits: the geometric mean and the worst speedup, the worst with its
interval. --ops collective/* (all-reduce,
all-gather, reduce-scatter, broadcast, float32 and float64) times collectives across the
devices given, through NCCL where every device is a CUDA GPU and libnccl.so.2 loads, else
staged through the host (--host-staged forces it), in algorithm and bus bandwidth as
nccl-tests defines them; out of place, or all-reduce and broadcast in place with
--in-place (as torch.distributed runs them). Across processes (one per GPU or per host)
each process names its own devices and the rendezvous: PRISM_RENDEZVOUS=tcp://host:port
with PRISM_RANK and PRISM_WORLD_SIZE, or the variables of torchrun (MASTER_ADDR,
MASTER_PORT, RANK, WORLD_SIZE) or Slurm (SLURM_PROCID, SLURM_NTASKS). Processes an MPI launcher started
(mpirun, mpiexec, srun --mpi) meet through MPI instead, and stage their collectives
through it; on one host through memory they share, a GPU's all-reduce reduced on the
GPUs (--no-shared-memory keeps MPI's own collectives; where the host reduces, let the
processes use their cores: mpirun binds each to one by default, --bind-to none).
docs/CLUSTER.md has a Slurm script and a Kubernetes job. Their sizes
count each rank's send buffer in elements (default 16M and 256M, --quick 1M). Both are
timed by the host clock.

Exits with code 4 if any result fails verification, 3 if no device is found.`,
		Example: `  prism bench --quick --all-devices
  prism bench --device opencl:0:0 --ops stream/triad --sizes 1M,16M --count 20
  prism bench --all-devices --baseline cuda:0 --portable
  prism bench --device cuda:0 --ops reduce/sum --variant all
  prism bench --device cuda,opencl --ops gemm,fft --vendor
  prism bench --device cuda:0 --ops gemm/nn/float32 --shapes 4096x4096x4096,4095x4095x4095,8192x128x8192
  prism bench --device cuda:0 --ops gemm/nn --precision float32,float64 --shapes sweep --vendor
  prism bench --device cuda:0 --ops attention/full/bfloat16 --shapes 4x32x4096x64,4x32x4096x128,4x32x4096x256
  prism bench --all-devices --json > results.json
  prism bench --benchstat --count 10 > new.txt && benchstat old.txt new.txt
  prism bench --device cuda:0,cuda:1 --split --ops gemm/nn/float32 --sizes 256M
  prism bench --device cuda:0,opencl:0:0 --split --ops reduce,montecarlo
  prism bench --device cuda:0,cuda:1 --ops collective/all-reduce --sizes 16M,256M
  PRISM_RENDEZVOUS=tcp://node0:29500 PRISM_RANK=1 PRISM_WORLD_SIZE=2 prism bench --device cuda:0 --ops collective/*`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchRun(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.devices, "device", nil, "device IDs, backends or classes, comma-separated (default: PRISM_DEVICE, else the best device)")
	f.BoolVar(&opts.all, "all-devices", false, "benchmark every device found")
	f.StringSliceVar(&opts.ops, "ops", nil, "operations to run: families, prefixes, names or globs, comma-separated (default: all)")
	f.StringSliceVar(&opts.precs, "precision", nil, "only the ops in these precisions, comma-separated: float32, float64, tf32, float32x3tf32, float16, bfloat16, float8e4m3, ... (default: all)")
	f.StringSliceVar(&opts.sizes, "sizes", nil, "sizes to run each op at, with K/M/G suffixes (default: chosen per device, see above)")
	f.StringSliceVar(&opts.shapes, "shapes", nil, "shapes to run each op at, comma-separated, instead of --sizes: GEMM MxNxK, or \""+bench.SweepName+"\", attention BxHxSxD (see above)")
	f.IntVar(&opts.size, "size", 0, "one size for every op")
	_ = f.MarkDeprecated("size", "use --sizes")
	f.BoolVar(&opts.quick, "quick", false, "each op's quick size fitted to 25 ms a run, smaller ceiling runs, --count 5 --warmup 1 unless given")
	f.BoolVar(&opts.portable, "portable", false, "portable OpenCL C kernels on every backend (no vendor-specific variants)")
	f.BoolVar(&opts.vendor, "vendor", false, "also run each case through the device's vendor library (cuBLAS, cuFFT, CLBlast, clFFT) and report vendor time / Prism time")
	f.StringSliceVar(&opts.variants, "variant", nil, "run each case once per variant named, comma-separated, or all (default: the first that fits each device; see prism kernels --device)")
	f.StringVar(&opts.tunables, "tunables", "", "with --variant naming one variant: run it with these tunables, as 'prism kernels' and 'prism tune' spell them (\"STAGES=2 SCHED=1\")")
	f.IntVar(&opts.count, "count", 10, "timed runs per case")
	f.IntVar(&opts.warmup, "warmup", 2, "untimed runs before timing; at given --sizes or --shapes, or on a GPU without --quick, the warm-up lasts 10 ms at least")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the random inputs")
	f.StringVar(&opts.baseline, "baseline", "", "device ID the table's ratios compare with (default: the first device)")
	f.BoolVar(&opts.wide, "wide", false, "show every column of the table on one line, however wide (default: fit 120 columns)")
	addTimeout(cmd)
	opts.add(f, "json", "csv", "markdown", "benchstat")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "no progress on stderr")
	f.BoolVar(&opts.split, "split", false, "run each op split across the devices given as one group, beside each device alone")
	f.Float64SliceVar(&opts.fractions, "fractions", nil, "with --split: each device's share of the work, comma-separated, summing to 1 (default: measured)")
	f.StringVar(&opts.placement, "placement", "", "with --split: only data from the host (host) or only data already on the devices (sharded; each device alone then runs resident only); default both")
	f.BoolVar(&opts.hostStaged, "host-staged", false, "collectives staged through host memory even where NCCL is available")
	f.BoolVar(&opts.inPlace, "in-place", false, "all-reduce and broadcast with one buffer for send and recv, as torch.distributed and nccl-tests' in-place column (the other collectives run out of place)")
	f.BoolVar(&opts.noShm, "no-shared-memory", false, "collectives of processes an MPI launcher started on one host staged through MPI's collectives, as across hosts, not through memory the processes share")
	return cmd
}

func benchRun(cmd *cobra.Command, opts *benchOptions) error {
	flags := cmd.Flags()
	if err := opts.check(flags); err != nil {
		return err
	}
	for _, pair := range [][2]string{{"device", "all-devices"}, {"sizes", "size"}, {"sizes", "shapes"}, {"size", "shapes"}, {"portable", "variant"}} {
		if err := exclusive(flags, pair[:1], pair[1:]); err != nil {
			return err
		}
	}
	if err := opts.checkTunables(); err != nil {
		return err
	}
	if opts.quick {
		if !flags.Changed("count") {
			opts.count = 5
		}
		if !flags.Changed("warmup") {
			opts.warmup = 1
		}
	}
	if opts.count <= 0 || opts.warmup < 0 || opts.count > bench.MaxCount || opts.warmup > bench.MaxWarmup {
		return usageError{fmt.Errorf("--count must be 1 to %d and --warmup 0 to %d", bench.MaxCount, bench.MaxWarmup)}
	}
	var sizes []int
	for _, s := range opts.sizes {
		n, err := bench.ParseSize(s)
		if err != nil {
			return usageError{fmt.Errorf("--sizes: %w", err)}
		}
		sizes = append(sizes, n)
	}
	if flags.Changed("size") {
		if opts.size <= 0 || opts.size > bench.MaxSize {
			return usageError{fmt.Errorf("--size %d: must be 1 to %s", opts.size, bench.FormatSize(bench.MaxSize))}
		}
		sizes = []int{opts.size}
	}
	var shapes []string
	if flags.Changed("shapes") {
		var err error
		if shapes, err = bench.ParseShapes(opts.shapes); err != nil {
			return usageError{fmt.Errorf("--shapes: %w", err)}
		}
		if opts.split {
			return usageError{fmt.Errorf("--shapes applies to ops on one device at a time, not to --split; give --sizes")}
		}
	}
	if colls, rest := bench.MatchCollectives(opts.ops); len(colls) > 0 {
		if len(shapes) > 0 {
			return usageError{fmt.Errorf("--shapes: collectives take sizes (--sizes), not shapes")}
		}
		if len(rest) > 0 {
			return usageError{fmt.Errorf("--ops: collectives run alone; %s are not collectives", strings.Join(rest, ", "))}
		}
		return collectivesRun(cmd, opts, colls)
	}
	if opts.hostStaged || opts.noShm || opts.inPlace {
		return usageError{fmt.Errorf("--host-staged, --no-shared-memory and --in-place apply to collectives (--ops collective/*)")}
	}
	if flags.Changed("placement") && !opts.split {
		return usageError{fmt.Errorf("--placement applies to --split")}
	}
	if p := opts.placement; p != "" && p != bench.PlacementHost && p != bench.PlacementSharded {
		return usageError{fmt.Errorf("--placement %q: want %s or %s", p, bench.PlacementHost, bench.PlacementSharded)}
	}
	if flags.Changed("fractions") && !opts.split {
		return usageError{fmt.Errorf("--fractions applies to --split")}
	}
	if flags.Changed("fractions") {
		if err := bench.CheckFractions(opts.fractions, 0); err != nil {
			return usageError{fmt.Errorf("--fractions: %w", err)}
		}
	}
	ops, err := selectOps("--ops", opts.ops, opts.precs, opts.variants)
	if err != nil {
		return err
	}
	if len(shapes) > 0 {
		if err := bench.CheckShapes(ops, shapes); err != nil {
			return usageError{fmt.Errorf("--shapes: %w", err)}
		}
	}
	ctx := cmd.Context()
	ids, err := benchDevices(cmd, opts)
	if err != nil {
		return err
	}
	if opts.split && flags.Changed("fractions") && len(ids) >= 2 {
		if err := bench.CheckFractions(opts.fractions, len(ids)); err != nil {
			return usageError{fmt.Errorf("--fractions for %s: %w", strings.Join(ids, ", "), err)}
		}
	}
	if opts.baseline != "" && !slices.Contains(ids, opts.baseline) {
		return usageError{fmt.Errorf("--baseline %s is not among the devices benchmarked (%s)", opts.baseline, strings.Join(ids, ", "))}
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
	if opts.split {
		return splitRun(cmd, opts, ops, sizes, devs)
	}
	cfg := bench.Config{Ops: ops, Patterns: opts.ops, Sizes: sizes, Shapes: shapes, Quick: opts.quick, Count: opts.count,
		Warmup: opts.warmup, Seed: opts.seed, Portable: opts.portable, Variants: opts.variants, Vendor: opts.vendor, Telemetry: openNVML,
		Tunables: opts.tunables}
	if len(sizes) == 0 && len(shapes) == 0 {
		cfg.Remembered = rememberedSizes(cmd, devs, opts.quick)
	}
	if !opts.quiet {
		errOut := cmd.ErrOrStderr()
		cfg.Progress = bench.NewProgress(errOut, isTerminal(errOut))
	}
	rep, err := bench.Run(ctx, cfg, devs)
	if err != nil && rep == nil {
		return err
	}
	rep.Command = commandLine(cmd)
	if rep.Interrupted {
		rep.InterruptedAt = interruptedAtStep(ctx, rep.InterruptedAt)
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

// benchDevices returns the IDs of the devices to benchmark, in the order given (--device),
// discovery order (--all-devices), or the one PRISM_DEVICE or the policy selects.
func benchDevices(cmd *cobra.Command, opts *benchOptions) ([]string, error) {
	dis, err := platform.Discover(cmd.Context())
	if err != nil {
		return nil, err
	}
	if len(dis.Devices) == 0 {
		return nil, fmt.Errorf("no compute device found: %w", joinNoDevice(dis))
	}
	var ids []string
	switch {
	case opts.all:
		for _, d := range dis.Devices {
			ids = append(ids, d.ID)
		}
	case len(opts.devices) > 0:
		for _, spec := range opts.devices {
			d, _, err := platform.Select(dis.Devices, spec)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(ids, d.ID) {
				ids = append(ids, d.ID)
			}
		}
	default:
		d, _, err := platform.Select(dis.Devices, os.Getenv(platform.EnvDevice))
		if err != nil {
			return nil, err
		}
		ids = []string{d.ID}
	}
	return ids, nil
}

// commandLine reconstructs the command line from the flags set, for the report.
func commandLine(cmd *cobra.Command) []string {
	args := strings.Fields(cmd.CommandPath())
	cmd.Flags().Visit(func(f *pflag.Flag) {
		v := f.Value.String()
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			v = strings.Join(sv.GetSlice(), ",")
		}
		args = append(args, "--"+f.Name+"="+v)
	})
	return args
}

// isTerminal reports whether w is a terminal (a character device), where a redrawn
// progress bar is welcome.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// openNVML opens NVML for bench's telemetry (only when an NVIDIA GPU runs).
func openNVML() (bench.Sampler, error) {
	r, err := telemetry.Open()
	if err != nil {
		return nil, err
	}
	return nvmlSampler{r}, nil
}

// nvmlSampler adapts a telemetry.Reader to bench.Sampler; bench closes it after the run.
type nvmlSampler struct{ *telemetry.Reader }

func (s nvmlSampler) Sample(busID string) (bench.Reading, error) {
	x, err := s.Reader.Sample(busID)
	if err != nil {
		return bench.Reading{}, err
	}
	return bench.Reading{SMClockMHz: float64(x.SMClockMHz), PowerW: x.PowerW, TemperatureC: float64(x.TemperatureC), Missing: x.Missing}, nil
}

// checkTunables refuses --tunables without one variant to apply them to, or with --split,
// whose parts run their variants' own sets.
func (o *benchOptions) checkTunables() error {
	if o.tunables != "" && o.split {
		return usageError{errors.New("--tunables does not apply to --split: each device's part runs its variant's tuned or default set")}
	}
	return checkForcedTunables(o.tunables, o.variants)
}

// checkForcedTunables refuses a --tunables set unless --variant names exactly one variant
// (not all) for it to apply to.
func checkForcedTunables(tunables string, variants []string) error {
	if tunables != "" && (len(variants) != 1 || variants[0] == "all") {
		return usageError{fmt.Errorf("--tunables %q needs --variant naming the one variant they are for ('prism kernels OP' lists each variant's tunables)", tunables)}
	}
	return nil
}
