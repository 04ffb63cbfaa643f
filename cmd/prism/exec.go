package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/userkernel"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/internal/boundedio"
	"github.com/prism-compute/prism/kernels/fuse"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type execOptions struct {
	expr     string
	kernel   string
	args     []string
	global   string
	local    string
	defines  []string
	devices  []string
	all      bool
	count    int
	warmup   int
	seed     uint64
	dir      string
	tolULP   uint64
	noOutput bool
	// underOclgrind (--check) runs the kernel under Oclgrind (exec_check.go); isolate runs each device's
	// launch in a child process (exec_child.go); child makes this process that child.
	underOclgrind bool
	isolate       bool
	child         bool
	// expects are the --expect NAME=FILE.npy flags, compared within expectULP units in the
	// last place or the absolute and relative tolerance expectTol, "ABS,REL" (exec_expect.go).
	expects   []string
	expectULP uint64
	expectTol string
	outputFlags
}

func newExecCmd() *cobra.Command {
	opts := &execOptions{}
	cmd := &cobra.Command{
		Use:   "exec (FILE.cl --kernel NAME | --expr EXPR) [--arg SPEC]...",
		Short: "Run an OpenCL C kernel of your own on one device or all, time it and compare the outputs",
		Long: `Build FILE.cl, OpenCL C, for one device (--device, else PRISM_DEVICE, else the best by
policy), several (--device a,b) or every device that builds OpenCL C (--all-devices: OpenCL
devices, and CUDA devices through their translation), and launch kernel --kernel with
the arguments given by --arg, one per kernel parameter, in order:

  buf:TYPE:SIZE[:INIT]     a buffer of SIZE elements the kernel reads (INIT: zeros)
  out:TYPE:SIZE            a buffer that starts at zeros and is saved after the run
  inout:TYPE:SIZE[:INIT]   a buffer with initial values, saved after the run
  scalar:TYPE:VALUE        a value passed by value (const int n, float a)
  local:BYTES              a __local pointer parameter of BYTES bytes per work-group
  local:TYPE:COUNT         the same, COUNT elements of TYPE

TYPE is int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, float32 or
float64 (or OpenCL C's names: char, uchar, short, ushort, int, uint, long, ulong, half,
float, double). SIZE, BYTES and COUNT take K, M, G suffixes (powers of 1024). INIT is zeros,
ones, range (0, 1, 2, ...), random (uniform in [-1, 1) for floats, integers in [-64, 64)
or [0, 128) unsigned; from --seed, the same on every device), a constant (3.5, -2, 0x7f)
or FILE.npy, a NumPy array of that type with SIZE elements. A buffer may be named,
NAME=out:float32:1M, for its output file; otherwise it is KERNEL.argI, I its index.

--global is the launch's global size, 1 to 3 dimensions (1M, 1024,1024, 64,32,4), and
--local its work-group size in as many dimensions (default: chosen by the launch, up to 256
items in all, dividing --global, within the kernel's limit); without --global, the first
buffer's length. -D NAME=VALUE defines a macro for the build.

The kernel runs once from the initial values; that run's outputs are written, each
out and inout buffer to NAME.DEVICE.npy (a NumPy .npy file; the device ID with '-' for
':') in the current directory or --save-dir. Then it runs --warmup times and
--count times more, timed by device events: median and min per device.

FILE may also be a SPIR-V module (known by its magic number, whatever its name: clang
-cl-std=CL1.2 -target spir64 -emit-llvm, then llvm-spirv), built where the device takes an
intermediate language (prism devices lists the ILs); elsewhere it is refused by name.
-D -cl-std=CL3.0 (CL1.1, CL1.2, CL2.0) compiles as that version of OpenCL C where the device
compiles it, and is refused before the build, naming the versions it has, where not.

--expr runs an element-wise expression as one generated kernel instead of FILE.cl (as
fuse.Compile does): assignments separated by ';', + - * / %, comparisons under ?:, and
math calls (exp, log, sqrt, sin, tanh, pow, min, max, fma, ...). Each --arg is then
NAME=SPEC, NAME as in the expression: buffers of one length (buf to read, out to write)
and scalars; the kernel maps every element, and the outputs are saved as NAME.DEVICE.npy.

With several devices, every output is compared with the first device's: largest
absolute and relative difference (relative to the larger magnitude), largest difference
in units in the last place for floats, and the element where it is worst; integers must
match exactly. Exits with code 4 when a float output differs by more than
--tolerance-ulp units in the last place, a NaN stands against a number, or an integer
output differs at all.

--expect NAME=FILE.npy compares output NAME of every device with a stored array (one
written by an earlier run, a NumPy file of the same type and number of elements; another
type or length is a usage error, exit 2): floats within --expect-ulp units in the last
place (default 4), or within --expect-tol ABS,REL, where an element passes when
|got - expected| <= ABS + REL*|expected| (NumPy's allclose); integers must match exactly.
A mismatch exits with code 4, naming the output, the device, the worst element, both
values and their difference. docs/CI.md pins a project's kernels in CI this way.

Every buffer carries a guard band after its data, a pattern checked after the first run:
a kernel that writes past the end of a buffer exits with code 4, naming the argument and
the first and last element written past it, and nothing is saved or timed. Each device's
launch runs in a child process (--isolate, on by default), so that a kernel that crashes
the driver (a write far past a buffer can corrupt its heap) is reported with the signal
that ended it, exit 1, with the summary still written; --isolate=false runs it in prism's
own process.

--check runs the kernel once under Oclgrind (the oclgrind command; Debian and Ubuntu
package oclgrind), which simulates an OpenCL device, instead of on a device: it reports
out-of-bounds accesses, data races and uninitialized values, each with the kernel argument
(its index and name), the work-item (global, local and group IDs) and the source line,
and exits with code 4 when it finds any (3 when oclgrind is not installed). Oclgrind runs
a launch thousands of times slower than a device: keep --global small. --check saves no
outputs, times nothing and records nothing in the store.

Without --kernel, --arg, --global and --local, FILE.cl's own "// run:" lines give them:
each such comment line holds the flags of one run (// run: --kernel saxpy --global 1M
--arg ...), and prism exec runs every line, with the other flags of its command line. A
run line takes only --kernel, --arg, --global, --local and -D: a line with any other flag
is refused before anything runs, so that a kernel file cannot choose where to write or what
else to do. With several lines, the outputs of line I go to --save-dir/runI, so that no run
replaces another's, and --json prints one array of the runs' summaries.

-D values are NAME or NAME=VALUE, NAME an identifier and VALUE without spaces or quotes
(OpenCL passes the build options as one string, split at spaces). --out refuses a file that
is an input of the command (FILE.cl, a .npy), and - is stdout.

A build error prints the compiler's log and exits with code 1. The kernels of the
examples are in cmd/prism/testdata/exec of Prism's source. Output: a few lines per
device, or --json; --out FILE writes them to FILE instead of stdout.`,
		Example: `  # z = a*x + y on 1M floats, z saved to saxpy.z.opencl-0-0.npy
  prism exec saxpy.cl --kernel saxpy --global 1M \
      --arg scalar:float32:2 --arg buf:float32:1M:random --arg buf:float32:1M:ones \
      --arg saxpy.z=out:float32:1M

  # the same on every device, outputs compared with the first device's
  prism exec saxpy.cl --kernel saxpy --all-devices --count 20 \
      --arg scalar:float32:2 --arg buf:float32:1M:random --arg buf:float32:1M:ones \
      --arg out:float32:1M --tolerance-ulp 2 --json

  # y = a*x + exp(-z) as one fused kernel, on every device, compared
  prism exec --expr 'y = a*x + exp(-z)' --all-devices \
      --arg x=buf:float32:1M:range --arg z=buf:float32:1M:random \
      --arg a=scalar:float32:2 --arg y=out:float32:1M

  # a 2-D launch with int scalars: transpose a 32x64 matrix
  prism exec transpose.cl --kernel transpose --global 64,32 --local 8,8 \
      --arg buf:int32:2K:range --arg out:int32:2K --arg scalar:int32:64 --arg scalar:int32:32

  # a __local argument: one sum per work-group of 64, inputs from NumPy, macros
  prism exec reduce.cl --kernel block_sum --global 4096 --local 64 -D SCALE=2 \
      --arg buf:float32:4K:x.npy --arg out:float32:64 --arg local:float32:64 --save-dir results/`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.child:
				return runChild(cmd)
			case opts.expr != "" && len(args) > 0:
				return usageError{fmt.Errorf("--expr takes no FILE.cl (%s given)", args[0])}
			case opts.expr == "" && len(args) == 0:
				return usageError{errors.New("FILE.cl is needed, or --expr")}
			case opts.expr != "":
				return execRun(cmd, opts, "")
			}
			return execRun(cmd, opts, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.kernel, "kernel", "k", "", "name of the kernel function to launch (required with FILE.cl)")
	f.StringVar(&opts.expr, "expr", "", "an element-wise expression to run as one fused kernel instead of FILE.cl, its --arg named NAME=SPEC (see above)")
	f.StringArrayVarP(&opts.args, "arg", "a", nil, "the next kernel argument: buf:TYPE:SIZE[:INIT], out:TYPE:SIZE, inout:TYPE:SIZE[:INIT], scalar:TYPE:VALUE, local:BYTES (repeat, in order)")
	f.StringVarP(&opts.global, "global", "g", "", "global size: 1 to 3 dimensions, comma-separated, K/M/G suffixes (default: the first buffer's length)")
	f.StringVarP(&opts.local, "local", "l", "", "work-group size in as many dimensions as --global (default: up to 256 items that divide it, chosen by the launch)")
	f.StringArrayVarP(&opts.defines, "define", "D", nil, "define a macro for the build: NAME or NAME=VALUE (repeat)")
	f.StringSliceVar(&opts.devices, "device", nil, "device IDs, backends or classes, comma-separated (default: PRISM_DEVICE, else the best device)")
	f.BoolVar(&opts.all, "all-devices", false, "run on every device that builds OpenCL C and compare the outputs")
	f.IntVar(&opts.count, "count", 10, "timed runs after the first (0: none)")
	f.IntVar(&opts.warmup, "warmup", 2, "untimed runs before timing")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the random inputs")
	f.StringVar(&opts.dir, "save-dir", ".", "directory of the .npy files of the outputs")
	f.BoolVar(&opts.noOutput, "no-save", false, "write no .npy files (outputs are still compared)")
	f.Uint64Var(&opts.tolULP, "tolerance-ulp", 4, "largest difference across devices, in units in the last place, that float outputs may show")
	f.StringArrayVar(&opts.expects, "expect", nil, "NAME=FILE.npy: compare output NAME with a stored array, exit 4 on a mismatch (repeat)")
	f.Uint64Var(&opts.expectULP, "expect-ulp", 4, "largest difference from an --expect array, in units in the last place, that float outputs may show")
	f.StringVar(&opts.expectTol, "expect-tol", "", "ABS,REL: float outputs pass --expect when |got - expected| <= ABS + REL*|expected| (instead of --expect-ulp)")
	f.BoolVar(&opts.underOclgrind, "check", false, "run the kernel once under Oclgrind and report out-of-bounds accesses, data races and uninitialized values (exit 4)")
	f.BoolVar(&opts.isolate, "isolate", true, "run each device's launch in a child process, so that a driver crash is reported, not fatal")
	f.BoolVar(&opts.child, childFlag, false, "")
	f.MarkHidden(childFlag)
	addTimeout(cmd)
	opts.add(f, "json")
	return cmd
}

// execSummary is the summary of prism exec, printed as text or --json.
type execSummary struct {
	File         string                  `json:"file"`
	Kernel       string                  `json:"kernel"`
	Global       []int                   `json:"global"`
	BuildOptions []string                `json:"build_options,omitempty"`
	Args         []string                `json:"args"`
	Seed         uint64                  `json:"seed"`
	Warmup       int                     `json:"warmup"`
	Devices      []userkernel.Result     `json:"devices"`
	Baseline     string                  `json:"baseline,omitempty"`
	ToleranceULP uint64                  `json:"tolerance_ulp"`
	Compare      []userkernel.Comparison `json:"compare,omitempty"`
	// Interrupted: a signal or --timeout ended the run at InterruptedAt; the summary holds
	// what finished.
	Interrupted   bool   `json:"interrupted,omitempty"`
	InterruptedAt string `json:"interrupted_at,omitempty"`
	// Expect holds the comparisons of --expect (Baseline the file), within ExpectTolerance.
	Expect          []userkernel.Comparison `json:"expect,omitempty"`
	ExpectTolerance string                  `json:"expect_tolerance,omitempty"`
	// Check is what Oclgrind found under --check.
	Check *checkSummary `json:"check,omitempty"`
}

func execRun(cmd *cobra.Command, opts *execOptions, file string) error {
	flags := cmd.Flags()
	if err := opts.check(flags); err != nil {
		return err
	}
	if err := exclusive(flags, []string{"device"}, []string{"all-devices"}); err != nil {
		return err
	}
	if err := exclusive(flags, []string{"check"}, []string{"device"}, []string{"all-devices"}); err != nil {
		return usageError{fmt.Errorf("%w: --check runs on Oclgrind's simulated device", err)}
	}
	if err := exclusive(flags, []string{"expect-ulp"}, []string{"expect-tol"}); err != nil {
		return err
	}
	var fusedSrc string
	if opts.expr != "" {
		if opts.kernel != "" {
			return usageError{errors.New("--expr names its own kernel: --kernel is for FILE.cl")}
		}
		var err error
		if fusedSrc, opts.kernel, opts.args, err = fuseExpr(opts.expr, opts.args, opts.seed); err != nil {
			return err
		}
		file = "expr: " + opts.expr
	}
	if opts.count < 0 || opts.warmup < 0 || opts.count > bench.MaxCount || opts.warmup > bench.MaxWarmup {
		return usageError{fmt.Errorf("--count must be 0 to %d and --warmup 0 to %d", bench.MaxCount, bench.MaxWarmup)}
	}
	if file != "" && opts.expr == "" {
		if err := opts.notOver(file); err != nil {
			return err
		}
	}
	if opts.kernel == "" {
		if runs, err := runLines(file); err == nil && len(runs) > 0 && !flags.Changed("arg") && !flags.Changed("global") && !flags.Changed("local") {
			return execRunLines(cmd, opts, file, runs)
		} else if err != nil {
			return err
		}
		return usageError{errors.New("--kernel NAME is needed: the kernel function to launch (or '// run:' lines in FILE.cl)")}
	}
	sum, err := execOnce(cmd, opts, file, fusedSrc)
	if sum == nil {
		return err
	}
	werr := opts.write(cmd, func(w io.Writer) error {
		if opts.json {
			return writeJSON(w, sum)
		}
		writeExecSummary(w, sum)
		if sum.Interrupted {
			fmt.Fprintf(w, "INTERRUPTED during %s: the summary holds what finished before\n", sum.InterruptedAt)
		}
		return nil
	})
	return errors.Join(err, werr)
}

// execOnce builds and runs the kernel opts name on the devices chosen, compares their
// outputs and records the run in the store. It returns the summary to print (nil when no
// device ran, the error saying why) and the errors of the devices, the comparison and the
// store.
func execOnce(cmd *cobra.Command, opts *execOptions, file, fusedSrc string) (*execSummary, error) {
	args, err := parseExecArgs(opts.args, opts.kernel, opts.seed)
	if err != nil {
		return nil, err
	}
	global, local, err := execRange(opts.global, opts.local, args)
	if err != nil {
		return nil, err
	}
	var inputs []string // the .npy files the arguments read: buf:TYPE:SIZE:FILE.npy
	for _, spec := range opts.args {
		if i := strings.LastIndexByte(spec, ':'); i >= 0 && strings.HasSuffix(strings.ToLower(spec[i+1:]), ".npy") {
			inputs = append(inputs, spec[i+1:])
		}
	}
	if err := opts.notOver(inputs...); err != nil {
		return nil, err
	}
	buildOpts, std, err := execBuildOptions(opts.defines)
	if err != nil {
		return nil, err
	}
	src := []byte(fusedSrc)
	if opts.expr == "" {
		if src, err = readKernelFile(file); err != nil {
			return nil, err
		}
		if spirv, err := isSPIRVFile(file, src); err != nil {
			return nil, err
		} else if !spirv { // a SPIR-V module (by its magic number) has no C to read
			if err := checkKernelArgs(file, string(src), opts.kernel, buildOpts, args); err != nil {
				return nil, err
			}
			nameParams(args, string(src), opts.kernel, buildOpts)
		}
	}
	buildOpts = append(buildOpts, std...)
	expects, tol, err := parseExpects(opts, args)
	if err != nil {
		return nil, err
	}
	l := &userkernel.Launch{File: file, Source: string(src), Kernel: opts.kernel, BuildOptions: buildOpts, Args: args,
		Global: global, Local: local, Warmup: opts.warmup, Count: opts.count, Guard: true}
	job := &childJob{File: file, Source: l.Source, Kernel: l.Kernel, BuildOptions: buildOpts, Specs: opts.args, Seed: opts.seed,
		Global: global, Local: local, Warmup: opts.warmup, Count: opts.count, Guard: true, Expr: opts.expr != ""}
	for _, a := range args {
		job.Params = append(job.Params, a.Param)
	}
	if opts.underOclgrind {
		return execChecked(cmd, opts, job, args, expects, tol)
	}
	if !opts.noOutput {
		if err := os.MkdirAll(opts.dir, 0o755); err != nil {
			return nil, fmt.Errorf("--save-dir: %w", err)
		}
		l.SaveDir = cmp.Or(opts.dir, ".")
		job.SaveDir = l.SaveDir
	}
	ctx := cmd.Context()
	ids, err := benchDevices(cmd, &benchOptions{devices: opts.devices, all: opts.all})
	if err != nil {
		return nil, err
	}
	if err := expectsNotOver(expects, l.SaveDir, ids); err != nil {
		return nil, err
	}
	sum := execSummary{File: file, Kernel: opts.kernel, Global: global, BuildOptions: buildOpts, Args: opts.args,
		Seed: opts.seed, Warmup: opts.warmup, ToleranceULP: opts.tolULP}
	start := time.Now()
	var facts []deviceFacts // of sum.Devices, for the store
	ran := false            // a device ran the kernel, which crashed or wrote past a buffer
	record := func(res userkernel.Result, err error) error {
		// The kernel ran and crashed, faulted the device, or wrote past a buffer (a guard
		// band's check is the only verification of a device run).
		var ce *crashError
		if errors.As(err, &ce) || errors.Is(err, bench.ErrVerify) || errors.Is(err, userkernel.ErrFault) {
			ran = true
		}
		if err != nil {
			res.Err = err.Error()
		}
		sum.Devices = append(sum.Devices, res)
		return err
	}
	var errs []error
	if opts.isolate {
		errs = forEachChild(cmd, ids, opts.all, job, func(res userkernel.Result, f deviceFacts, err error) error {
			facts = append(facts, f)
			return record(res, err)
		})
	} else {
		errs = forEachOpenCLDevice(cmd, ids, opts.all, func(dev *engine.Device) error {
			facts = append(facts, factsOf(dev))
			res, err := execOn(ctx, dev, l, opts.expr != "")
			return record(res, err)
		})
	}
	var ok []*userkernel.Result
	for i := range sum.Devices {
		if sum.Devices[i].Err == "" {
			ok = append(ok, &sum.Devices[i])
		}
	}
	switch {
	case len(ok) > 1:
		sum.Baseline = ok[0].Device
		for _, d := range ok[1:] {
			for j, a := range userkernel.Outputs(args) {
				c := userkernel.Compare(a, ok[0].Data[j], d.Data[j], opts.tolULP)
				c.Device, c.Baseline = d.Device, ok[0].Device
				sum.Compare = append(sum.Compare, c)
				if !c.Within {
					errs = append(errs, fmt.Errorf("%s on %s: %s: %w", c.Output, c.Device, c.Describe(), bench.ErrVerify))
				}
			}
		}
	case opts.all && len(ok) == 1 && len(userkernel.Outputs(args)) > 0:
		fmt.Fprintf(cmd.ErrOrStderr(), "prism: one device ran (%s): no outputs to compare\n", ok[0].Device)
	}
	errs = append(errs, compareExpects(&sum, ok, expects, tol)...)
	if ctx.Err() != nil {
		// What finished is summarized and recorded, even when no device did.
		sum.Interrupted, sum.InterruptedAt = true, interruptedAtStep(ctx, execCase(opts.kernel))
		if n := len(sum.Devices); n > 0 {
			sum.InterruptedAt = interruptedAtStep(ctx, sum.Devices[n-1].Device+" "+execCase(opts.kernel))
		}
	} else if len(ok) == 0 && !ran {
		return nil, errors.Join(errs...) // nothing ran: the errors say why
	}
	rep := execReport(start, &sum, facts, opts.expr != "", commandLine(cmd))
	if sum.Interrupted {
		rep.Interrupted, rep.InterruptedAt = true, sum.InterruptedAt
	}
	serr := recordReport(cmd, rep)
	return &sum, errors.Join(append(errs, serr)...)
}

// forEachOpenCLDevice opens the devices ids one at a time, in order, and calls fn with
// each that builds OpenCL C, closing it after; it stops early when the command's context
// ends. A device that does not build OpenCL C is skipped with a line on stderr under
// --all-devices (all) and is an error wrapping engine.ErrUnsupported when named. It returns
// the errors of opening and of fn.
func forEachOpenCLDevice(cmd *cobra.Command, ids []string, all bool, fn func(dev *engine.Device) error) []error {
	ctx := cmd.Context()
	var errs []error
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		dev, err := engine.Open(ctx, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !dev.Builds(engine.DialectOpenCL) {
			dev.Close()
			if all {
				fmt.Fprintf(cmd.ErrOrStderr(), "prism: skipped %s: it does not build OpenCL C\n", id)
				continue
			}
			errs = append(errs, fmt.Errorf("%s does not build OpenCL C: %w", id, engine.ErrUnsupported))
			continue
		}
		if err := fn(dev); err != nil {
			errs = append(errs, err)
		}
		dev.Close()
	}
	return errs
}

// forEachChild runs job on the devices ids one at a time, in order, each in a child
// process (execInChild) that opens the device, and calls fn with each result, the device's
// facts and the error; it stops early when the command's context ends. A device that does
// not build OpenCL C is skipped with a line on stderr under --all-devices (all), as
// forEachOpenCLDevice does. It returns the errors of fn.
func forEachChild(cmd *cobra.Command, ids []string, all bool, job *childJob, fn func(userkernel.Result, deviceFacts, error) error) []error {
	ctx := cmd.Context()
	var errs []error
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		j := *job
		j.Device = id
		res, hello, err := execInChild(ctx, cmd, &j, childOptions{})
		switch {
		case hello.Info.ID == "" && err != nil:
			var ce *crashError
			if !errors.As(err, &ce) {
				errs = append(errs, err) // the device did not open
				continue
			}
		case !hello.Builds && err != nil && errors.Is(err, engine.ErrUnsupported) && all:
			fmt.Fprintf(cmd.ErrOrStderr(), "prism: skipped %s: it does not build OpenCL C\n", id)
			continue
		}
		facts := deviceFacts{info: hello.Info, backend: hello.Backend}
		if facts.info.ID == "" {
			facts.info = engine.DeviceInfo{ID: id, Name: res.Name}
		}
		res.Device = id
		res.Name = cmp.Or(res.Name, hello.Info.Name)
		if err := fn(res, facts, err); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// runLine is one "// run:" line of an OpenCL C file: a kernel's invocation kept with its
// source, as the corpus of the CUDA translation keeps them.
type runLine struct {
	line  int      // its line number, from 1
	flags []string // the flags it holds
}

// runLines returns the "// run:" lines of an OpenCL C file.
func runLines(file string) ([]runLine, error) {
	src, err := readKernelFile(file)
	if err != nil {
		return nil, err
	}
	var runs []runLine
	for i, line := range strings.Split(string(src), "\n") {
		if spec, ok := strings.CutPrefix(strings.TrimSpace(line), "// run:"); ok {
			runs = append(runs, runLine{line: i + 1, flags: strings.Fields(spec)})
		}
	}
	return runs, nil
}

// parse reads the line's flags into opts, which holds the command line's others. A run line
// takes only the kernel's own flags (--kernel, --arg, --global, --local, -D): a kernel file
// says how to launch its kernels, never where to write, which devices to use or what else
// to do, so that running a file someone else wrote touches only what the command line
// asked for.
func (r runLine) parse(file string, opts *execOptions) error {
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.SetOutput(io.Discard)
	f.StringVarP(&opts.kernel, "kernel", "k", "", "")
	f.StringArrayVarP(&opts.args, "arg", "a", nil, "")
	f.StringVarP(&opts.global, "global", "g", "", "")
	f.StringVarP(&opts.local, "local", "l", "", "")
	f.StringArrayVarP(&opts.defines, "define", "D", nil, "")
	where := fmt.Sprintf("%s:%d: // run:", file, r.line)
	if err := f.Parse(r.flags); err != nil {
		if strings.Contains(err.Error(), "unknown") {
			return usageError{fmt.Errorf("%s takes only the kernel's own flags (--kernel, --arg, --global, --local, -D): %w; give the others on the command line", where, err)}
		}
		return usageError{fmt.Errorf("%s %w", where, err)}
	}
	if f.NArg() > 0 {
		return usageError{fmt.Errorf("%s %q is not a flag: a run line holds flags only", where, f.Arg(0))}
	}
	if opts.kernel == "" {
		return usageError{fmt.Errorf("%s --kernel NAME is needed", where)}
	}
	return nil
}

// execRunLines runs prism exec once per "// run:" line of file, each with the line's flags
// and the command line's others (--device, --all-devices, --count, --json, --out, ...). With
// several lines, the outputs of line I are saved under --save-dir/runI, so that no run
// overwrites another's; --json prints one array of the runs' summaries, and --out gets all
// of them, written once.
func execRunLines(cmd *cobra.Command, opts *execOptions, file string, runs []runLine) error {
	each := make([]execOptions, len(runs))
	for i, r := range runs { // every line is checked before any runs
		each[i] = *opts
		if err := r.parse(file, &each[i]); err != nil {
			return err
		}
		if len(runs) > 1 {
			each[i].dir = filepath.Join(opts.dir, fmt.Sprintf("run%d", i+1))
		}
	}
	var errs []error
	var sums []*execSummary
	for i, r := range runs {
		if cmd.Context().Err() != nil {
			break
		}
		sum, err := execOnce(cmd, &each[i], file, "")
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d (run: %s): %w", file, r.line, strings.Join(r.flags, " "), err))
		}
		if sum != nil {
			sums = append(sums, sum)
		}
	}
	if len(sums) == 0 {
		return errors.Join(errs...)
	}
	werr := opts.write(cmd, func(w io.Writer) error {
		if opts.json {
			if len(runs) == 1 {
				return writeJSON(w, sums[0])
			}
			return writeJSON(w, sums)
		}
		for i, sum := range sums {
			if i > 0 {
				fmt.Fprintln(w)
			}
			writeExecSummary(w, sum)
		}
		return nil
	})
	return errors.Join(append(errs, werr)...)
}

// defineOptions returns the build options of the -D flags: NAME or NAME=VALUE, NAME an
// identifier and VALUE without white space or quotes, since OpenCL takes the build options
// as one string that the compiler splits at spaces: a value with a space would pass the
// rest as options of its own.
func defineOptions(defines []string) ([]string, error) {
	var opts []string
	for _, d := range defines {
		if err := checkDefine(d); err != nil {
			return nil, err
		}
		opts = append(opts, "-D"+d)
	}
	return opts, nil
}

// checkDefine returns a usage error for a -D flag that is not NAME or NAME=VALUE as
// defineOptions takes them.
func checkDefine(d string) error {
	name, value, _ := strings.Cut(d, "=")
	if !isCIdentifier(name) {
		return usageError{fmt.Errorf("-D %q: want NAME or NAME=VALUE, NAME a C identifier (letters, digits, _; not starting with a digit)", d)}
	}
	if i := strings.IndexFunc(value, notInOption); i >= 0 {
		r, _ := utf8.DecodeRuneInString(value[i:])
		return usageError{fmt.Errorf("-D %q: the value holds %q, which the build options cannot carry (they are one string split at spaces): define that macro in the kernel file", d, r)}
	}
	return nil
}

// notInOption reports whether a build option's value cannot hold r: white space, quotes,
// backslashes and what is not printable.
func notInOption(r rune) bool {
	return unicode.IsSpace(r) || r == '"' || r == '\'' || r == '\\' || !unicode.IsPrint(r)
}

// isCIdentifier reports whether s is a C identifier.
func isCIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r < utf8.RuneSelf && unicode.IsLetter(r) || i > 0 && r < utf8.RuneSelf && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// execOn runs the kernel on dev as userkernel.Run does, its errors in the command's
// terms: a --kernel that the program built does not define names those FILE.cl defines,
// and arguments or a range that do not fit the kernel are usage errors.
func execOn(ctx context.Context, dev *engine.Device, l *userkernel.Launch, expr bool) (userkernel.Result, error) {
	res, err := userkernel.Run(ctx, dev, l)
	return res, execError(dev, l, expr, err)
}

// execError returns err, an error of userkernel.Run of l on dev, in the command's terms.
func execError(dev *engine.Device, l *userkernel.Launch, expr bool, err error) error {
	var fit *userkernel.FitError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, engine.ErrNotFound) && !expr:
		// The name is not a kernel of the program built (a function without __kernel,
		// or a kernel the preprocessor left out): say which kernels the file defines.
		return usageError{fmt.Errorf("%s: %w", dev.ID(), notInFile(l.File, l.Kernel, kernelNames(l.Source, l.BuildOptions)))}
	case errors.As(err, &fit):
		return usageError{err} // the arguments or the range given do not fit the kernel
	}
	return err
}

// execRange parses --global and --local; without --global, the first buffer's length.
func execRange(g, l string, args []*userkernel.Arg) (global, local []int, err error) {
	if g == "" {
		for _, a := range args {
			if a.Len > 0 {
				global = []int{a.Len}
				break
			}
		}
		if global == nil {
			return nil, nil, usageError{errors.New("--global is needed: the kernel has no buffer argument to take it from")}
		}
	} else if global, err = parseDims("--global", g); err != nil {
		return nil, nil, err
	}
	if l == "" {
		return global, nil, nil
	}
	if local, err = parseDims("--local", l); err != nil {
		return nil, nil, err
	}
	if len(local) != len(global) {
		return nil, nil, usageError{fmt.Errorf("--local %s has %d dimensions but --global %s has %d: give them as many", l, len(local), joinDims(global), len(global))}
	}
	for i := range global {
		if global[i]%local[i] != 0 {
			return nil, nil, usageError{fmt.Errorf("--global %s is not a multiple of --local %s in dimension %d (%d, %d)", g, l, i, global[i], local[i])}
		}
	}
	return global, local, nil
}

// parseDims parses 1 to 3 comma-separated sizes.
func parseDims(flag, s string) ([]int, error) {
	parts := strings.Split(s, ",")
	if len(parts) > 3 {
		return nil, usageError{fmt.Errorf("%s %s: at most 3 dimensions", flag, s)}
	}
	dims := make([]int, len(parts))
	for i, p := range parts {
		n, err := bench.ParseSize(p)
		if err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", flag, err)}
		}
		if n > math.MaxUint32 {
			return nil, usageError{fmt.Errorf("%s %s: dimension %d above %d", flag, s, i, uint32(math.MaxUint32))}
		}
		dims[i] = n
	}
	return dims, nil
}

// parseExecArgs parses the --arg specs, generating the buffers' initial contents
// (userkernel.ParseArgs); an error is a usage error that names the --arg.
func parseExecArgs(specs []string, kernel string, seed uint64) ([]*userkernel.Arg, error) {
	args, err := userkernel.ParseArgs(specs, kernel, seed)
	var ae *userkernel.ArgError
	if errors.As(err, &ae) {
		err := fmt.Errorf("--arg %d %q: %w", ae.Index, ae.Spec, ae.Err)
		if errors.Is(err, engine.ErrOutOfMemory) {
			return nil, err // a well-formed argument the machine cannot hold: not a usage error
		}
		return nil, usageError{err}
	}
	return args, err
}

// maxKernelSource is the largest kernel file prism exec and prism tune read: far above any
// real source, and a file that is not one (a FIFO, /dev/zero) is refused at once.
const maxKernelSource = 64 << 20

// readKernelFile reads FILE.cl, only from a regular file of at most maxKernelSource bytes.
func readKernelFile(file string) ([]byte, error) {
	return boundedio.ReadFile(file, maxKernelSource)
}

// writeExecSummary prints the summary as text.
func writeExecSummary(w io.Writer, s *execSummary) {
	for _, d := range s.Devices {
		if d.Err != "" {
			first, _, _ := strings.Cut(d.Err, "\n")
			fmt.Fprintf(w, "%s on %s (%s): FAILED: %s\n", s.Kernel, d.Device, d.Name, first)
			continue
		}
		fmt.Fprintf(w, "%s on %s (%s): global %s, local %s\n", s.Kernel, d.Device, d.Name, joinDims(s.Global), joinDims(d.Local))
		if d.Stats.Runs > 0 {
			fmt.Fprintf(w, "  median %s  min %s  max %s  over %d runs (%s, %d warm-up)\n", bench.FormatDuration(d.Stats.Median),
				bench.FormatDuration(d.Stats.Min), bench.FormatDuration(d.Stats.Max), d.Stats.Runs, d.Timing, s.Warmup)
		}
		for _, o := range d.Outputs {
			if o.File != "" {
				fmt.Fprintf(w, "  wrote %s (%d %s, argument %d)\n", o.File, o.Len, o.Type, o.Arg)
			}
		}
	}
	writeExpects(w, s)
	writeCheckFindings(w, s)
	if len(s.Compare) == 0 {
		return
	}
	fmt.Fprintf(w, "outputs compared with %s (tolerance %d ulp for floats, exact for integers):\n", s.Baseline, s.ToleranceULP)
	var buf bytes.Buffer
	for _, c := range s.Compare {
		buf.Reset()
		status := "ok"
		if !c.Within {
			status = "FAILED"
		}
		switch {
		case c.Differing == 0:
			fmt.Fprintf(&buf, "identical")
		case c.Exact:
			fmt.Fprintf(&buf, "%d of %d differ, max abs %.4g, worst at [%d] (%s vs %s)", c.Differing, c.Elements, c.MaxAbs, c.Worst, c.WorstBaseline, c.WorstValue)
		default:
			fmt.Fprintf(&buf, "max abs %.3g  max rel %.3g  max %d ulp, worst at [%d] (%s vs %s); %d of %d differ", c.MaxAbs, c.MaxRel, c.MaxULP, c.Worst, c.WorstBaseline, c.WorstValue, c.Differing, c.Elements)
			if c.NaNs > 0 {
				fmt.Fprintf(&buf, ", %d NaN against a number", c.NaNs)
			}
		}
		fmt.Fprintf(w, "  %s on %s: %s  %s\n", c.Output, c.Device, buf.String(), status)
	}
}

// joinDims formats a range's dimensions as 64x32.
func joinDims(d []int) string {
	s := make([]string, len(d))
	for i, v := range d {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, "x")
}

// fuseExpr turns prism exec --expr into a kernel: every --arg is named NAME=SPEC after
// the expression's names (buf, out, inout buffers of one length, scalars), the expression
// is checked and generated by fuse.Parse, and the specs are put in the order of the
// kernel's parameters with the element count last. It returns the kernel's source, its
// name and the specs.
func fuseExpr(expr string, specs []string, seed uint64) (string, string, []string, error) {
	types := fuse.Types{}
	byName := map[string]string{}
	n := -1
	for i, spec := range specs {
		name, body, ok := strings.Cut(spec, "=")
		if !ok || strings.Contains(name, ":") {
			return "", "", nil, usageError{fmt.Errorf("--arg %d %q: with --expr every argument is NAME=SPEC, NAME as in the expression", i, spec)}
		}
		if _, dup := byName[name]; dup {
			return "", "", nil, usageError{fmt.Errorf("--arg %d %q: %s is named twice", i, spec, name)}
		}
		a, err := userkernel.ParseArg(i, body, "expr", seed)
		if err != nil {
			return "", "", nil, usageError{fmt.Errorf("--arg %d %q: %w", i, spec, err)}
		}
		switch a.Kind {
		case userkernel.Scalar:
			types[name] = "scalar:" + a.Type.Name
		case userkernel.Local:
			return "", "", nil, usageError{fmt.Errorf("--arg %d %q: an expression takes no local memory", i, spec)}
		default:
			if n >= 0 && a.Len != n {
				return "", "", nil, usageError{fmt.Errorf("--arg %d %q: %d elements; the buffers before it hold %d (an expression maps buffers of one length)", i, spec, a.Len, n)}
			}
			n = a.Len
			types[name] = a.Type.Name
		}
		byName[name] = body
	}
	if n < 0 {
		return "", "", nil, usageError{errors.New("--expr needs at least one buffer --arg (NAME=out:TYPE:SIZE)")}
	}
	e, err := fuse.Parse(expr, types)
	var unknown *fuse.NameError
	if errors.As(err, &unknown) {
		known := "no --arg names it"
		if len(unknown.Inputs) > 0 {
			known = "the --arg names are " + strings.Join(unknown.Inputs, ", ")
		}
		if len(unknown.Assigned) > 0 {
			known += "; assigned before it: " + strings.Join(unknown.Assigned, ", ")
		}
		return "", "", nil, usageError{fmt.Errorf("--expr %q uses %s (column %d), which is neither an argument given with --arg %s=SPEC nor assigned earlier in the expression (%s)",
			expr, unknown.Name, unknown.Col, unknown.Name, known)}
	}
	if err != nil {
		return "", "", nil, usageError{fmt.Errorf("--expr: %w", err)}
	}
	used := map[string]bool{}
	for _, p := range e.Params() {
		used[p.Name] = true
	}
	for i, spec := range specs {
		if name, _, _ := strings.Cut(spec, "="); !used[name] {
			return "", "", nil, usageError{fmt.Errorf("--arg %d %q: the expression does not use %s", i, spec, name)}
		}
	}
	var ordered []string
	for _, p := range e.Params() {
		body := byName[p.Name]
		kind, _, _ := strings.Cut(body, ":")
		switch {
		case p.Output && (kind == userkernel.Buf || kind == "in"):
			return "", "", nil, usageError{fmt.Errorf("--arg %s=%s: the expression assigns %s, and buf is an input it would overwrite: give it as %s=out:... (or inout:... to start from its values)", p.Name, body, p.Name, p.Name)}
		case !p.Scalar && !p.Output && (kind == userkernel.Out || kind == userkernel.InOut):
			return "", "", nil, usageError{fmt.Errorf("--arg %s=%s: the expression never assigns %s, so it would be saved as it started: assign it, or give it as %s=buf:...", p.Name, body, p.Name, p.Name)}
		}
		if kind == "out" || kind == "inout" {
			body = p.Name + "=" + body // the output file is named after it
		}
		ordered = append(ordered, body)
	}
	ordered = append(ordered, fmt.Sprintf("scalar:int32:%d", n))
	return e.Source(), e.Kernel(), ordered, nil
}
