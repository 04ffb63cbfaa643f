package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/engine"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "prism",
		Short: "Run one suite of compute kernels on every GPU and CPU of this machine",
		Long: `Prism runs one suite of compute kernels (GEMM, reductions, scan, sort, transpose,
stencils, convolution, FFT, softmax, layer norm, attention, histogram, Monte Carlo,
element-wise maps; 'prism kernels' lists them) on any device that speaks OpenCL
(NVIDIA, AMD and Intel GPUs; CPUs through PoCL and Mesa's Rusticl) and, on NVIDIA GPUs,
through CUDA. It finds the devices at run time, verifies every result against a float64
reference, and times kernels with device events.

Choosing a device: --device takes an ID from 'prism devices' (opencl:0:0, cuda:0), a
backend (opencl, cuda) or a class (gpu, accelerator, cpu). Without it, the environment
variable PRISM_DEVICE is used, and without that the best device by policy: GPU before
accelerator before CPU, CUDA before OpenCL for the same card, then the larger peak.
PRISM_TRACE=1 prints what was chosen and why.

OpenCL drivers: before they load, Prism sets what the environment leaves unset:
POCL_WORK_GROUP_SPECIALIZATION=0 (PoCL compiles a kernel once, not per work-group size),
POCL_CACHE_DIR=$PRISM_CACHE_DIR/pocl or ~/.cache/prism/pocl, and RUSTICL_ENABLE=llvmpipe
(Mesa's Rusticl lists the CPU); PRISM_OPENCL_DEFAULTS=0 leaves them alone. What the
drivers' compilers print on stderr themselves while they build (PoCL's "N warnings
generated.", Mesa's "results may be incorrect") goes to the trace (PRISM_TRACE=1), and
PRISM_DRIVER_STDERR=1 leaves it on stderr: every result is verified against its float64
reference all the same (docs/DEVICES.md).

Results store: bench, run and exec record every run, every sample with the devices'
fingerprints, in a SQLite file (--store FILE or PRISM_STORE; by default
` + displayDefaultStore() + `; --no-store or PRISM_STORE=off for none) and print its ID.
'prism runs' lists the runs, 'prism history OP' follows a case over them, 'prism check
--against baseline:main' gates a run on a baseline (regressions against the noise learnt
from repeated runs; exit code 7 with --fail-on-regression), and report,
compare, plot and export take run references where they take report files: @last,
@previous, @last~N, a run ID, a commit prefix or a baseline ('prism baseline set').
'prism publish DIR' writes the store as a static web site, 'prism serve' previews it.

Exit codes: 0 success, 1 error, 2 bad usage (unknown command or flag, bad argument),
3 no device or backend available, 4 a result failed verification (for prism exec also
an overrun guard band, a --check finding or an --expect mismatch), 5 the device cannot
run what was asked (a variant, precision or operation it lacks, such as --variant cuda-mma
on a CPU; the message says why; prism bench reports such cases as skipped and goes on),
6 the results store could not be opened, read or written (the report is written first),
7 prism check --fail-on-regression found a regression or a failed case,
70 an internal error
(a bug: please report it; PRISM_TRACE=1 prints the stack), 124 the --timeout of bench,
run, exec or tune ran out, 130 interrupted by Ctrl-C (SIGINT), 143 by SIGTERM. On the
first signal (or the time limit) the work stops within about a second, a kernel or build
that does not return left behind, and the report of what was done is still written,
marked interrupted; a second signal exits at once.`,
		Example: `  prism devices                         # every device of every backend, with its ID
  prism --version                       # version, commit, Go release, backends compiled in
  source <(prism completion bash)       # completion of commands, operations and device IDs
  prism kernels                         # the suite: operations, sizes, tunables
  prism run gemm/nn/float32 --device cuda:0 --size 16M
  prism bench --all-devices --quick     # the whole suite on every device, side by side
  prism bench --all-devices --json > run.json && prism plot run.json -o run.svg
  prism plot run.json -o roofline.png --roofline   # one roofline per device
  prism report run.json --html run.html  # one page: metadata, charts, tables
  prism compare before.json after.json  # faster, slower or ~, with a p-value
  prism runs                            # the runs recorded, newest first
  prism history triad --plot triad.svg  # a case over the runs, as a table and a chart
  prism compare @previous @last         # the last two runs from the results store
  prism publish site && prism serve site   # the store as a web site, on http://127.0.0.1:8000/
  prism bench --ops gemm --precision bfloat16,tf32 --vendor   # one precision across layouts
  prism tune gemm/nn/bfloat16 --device cuda:0                  # measure tile sets, keep the fastest
  prism exec my.cl -k scale --all-devices --arg buf:float32:1M:random --arg out:float32:1M
                                        # your kernel on every device, outputs compared
  prism bench --device cuda:0,cuda:1 --split --ops gemm/nn/float32   # one op across two GPUs
  prism bench --device cuda:0,cuda:1 --ops collective/all-reduce     # NCCL, bus bandwidth`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionText(),
	}
	root.SetVersionTemplate("{{.Version}}")
	root.PersistentFlags().Bool("verbose", false, "say more: why a backend found no device, the kernels' implementation notes, and the trace (as PRISM_TRACE=1: the devices chosen, the builds, the drivers' compiler output)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if verbose(cmd) && os.Getenv("PRISM_TRACE") == "" {
			os.Setenv("PRISM_TRACE", "1") // the backends read it when they trace
		}
		return checkEnvFirst(cmd) // env.go
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{err}
	})
	root.AddCommand(newDevicesCmd(), newBenchCmd(), newRunCmd(), newKernelsCmd(), newCompareCmd(), newPlotCmd(), newReportCmd(), newTuneCmd(), newExecCmd())
	root.AddCommand(newRunsCmd(), newHistoryCmd(), newCheckCmd(), newBaselineCmd(), newImportCmd(), newExportCmd(), newStoreCmd())
	root.AddCommand(newPublishCmd(), newServeCmd(), newVersionCmd())
	addStoreFlags(root)
	addCompletions(root)
	addRefCompletions(root)
	return root
}

// newVersionCmd is prism version: what --version prints, for those who type it as a command.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go release and backends (as --version)",
		Long: `Print what prism --version prints: the module's version, the commit the binary was built
from (with "modified" for a tree with uncommitted changes) and its time, the Go release
and platform, and the backends compiled in. Nothing is probed: 'prism devices' says what
each backend finds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}

// verbose reports whether --verbose was given to cmd (a flag of every command).
func verbose(cmd *cobra.Command) bool {
	f := cmd.Flag("verbose")
	return f != nil && f.Value.String() == "true"
}

// versionText is what prism --version prints: the module's version, the commit it was
// built from (with "modified" for a tree with uncommitted changes) and its time, the Go
// release and platform, and the backends compiled in (the build tag noopencl leaves
// OpenCL out). Nothing is probed: the backends listed are those registered, not found.
func versionText() string {
	version, commit, when, modified := "(devel)", "unknown (built without version control information)", "", false
	goVersion := runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		commit += " (modified)"
	}
	if when != "" {
		commit += ", " + when
	}
	backends := strings.Join(engine.Backends(), ", ")
	if backends == "" {
		backends = "none"
	}
	return fmt.Sprintf("prism %s\ncommit:   %s\ngo:       %s %s/%s\nbackends: %s\n",
		version, commit, goVersion, runtime.GOOS, runtime.GOARCH, backends)
}
