package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
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
--local its work-group size in as many dimensions (default: a power of two up to 256 items
in all that divides --global, within the kernel's limit); without --global, the first
buffer's length. -D NAME=VALUE defines a macro for the build.

The kernel runs once from the initial values; that run's outputs are written, each
out and inout buffer to NAME.DEVICE.npy (a NumPy .npy file; the device ID with '-' for
':') in the current directory or --save-dir. Then it runs --warmup times and
--count times more, timed by device events: median and min per device.

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

Without --kernel, --arg, --global and --local, FILE.cl's own "// run:" lines give them:
each such comment line holds the flags of one run (// run: --kernel saxpy --global 1M
--arg ...), and prism exec runs every line, with the other flags of its command line.

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
	f.StringVarP(&opts.local, "local", "l", "", "work-group size in as many dimensions as --global (default: a power of two up to 256 that divides it)")
	f.StringArrayVarP(&opts.defines, "define", "D", nil, "define a macro for the build: NAME or NAME=VALUE (repeat)")
	f.StringSliceVar(&opts.devices, "device", nil, "device IDs, backends or classes, comma-separated (default: PRISM_DEVICE, else the best device)")
	f.BoolVar(&opts.all, "all-devices", false, "run on every device that builds OpenCL C and compare the outputs")
	f.IntVar(&opts.count, "count", 10, "timed runs after the first (0: none)")
	f.IntVar(&opts.warmup, "warmup", 2, "untimed runs before timing")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the random inputs")
	f.StringVar(&opts.dir, "save-dir", ".", "directory of the .npy files of the outputs")
	f.BoolVar(&opts.noOutput, "no-save", false, "write no .npy files (outputs are still compared)")
	f.Uint64Var(&opts.tolULP, "tolerance-ulp", 4, "largest difference across devices, in units in the last place, that float outputs may show")
	opts.add(f, "json")
	return cmd
}

// execArg is one kernel argument of prism exec, parsed from its --arg spec.
type execArg struct {
	index int
	spec  string
	kind  string // buf, out, inout, scalar, local
	name  string // of the output file
	typ   elemType
	n     int    // elements of a buffer
	init  []byte // a buffer's initial contents, little-endian
	value any    // a scalar's value, of the Go type engine takes
	local int64  // a local argument's bytes
}

// saved reports whether the argument is an output, written after the run.
func (a *execArg) saved() bool { return a.kind == "out" || a.kind == "inout" }

// execDevice is one device's outcome in prism exec's summary.
type execDevice struct {
	Device  string      `json:"device"`
	Name    string      `json:"device_name"`
	Local   []int       `json:"local,omitempty"`
	Timing  string      `json:"timing,omitempty"` // bench.TimingEvents or TimingHost
	Stats   bench.Stats `json:"stats"`
	Outputs []execFile  `json:"outputs,omitempty"`
	Err     string      `json:"error,omitempty"`

	data [][]byte // the outputs, in argument order
}

// execFile is an output buffer and the file it was written to.
type execFile struct {
	Name string `json:"name"`
	Arg  int    `json:"arg"`
	Type string `json:"type"`
	Len  int    `json:"elements"`
	File string `json:"file,omitempty"`
}

// execSummary is the summary of prism exec, printed as text or --json.
type execSummary struct {
	File         string        `json:"file"`
	Kernel       string        `json:"kernel"`
	Global       []int         `json:"global"`
	BuildOptions []string      `json:"build_options,omitempty"`
	Args         []string      `json:"args"`
	Seed         uint64        `json:"seed"`
	Warmup       int           `json:"warmup"`
	Devices      []execDevice  `json:"devices"`
	Baseline     string        `json:"baseline,omitempty"`
	ToleranceULP uint64        `json:"tolerance_ulp"`
	Compare      []execCompare `json:"compare,omitempty"`
}

func execRun(cmd *cobra.Command, opts *execOptions, file string) error {
	flags := cmd.Flags()
	if err := opts.check(flags); err != nil {
		return err
	}
	if err := exclusive(flags, []string{"device"}, []string{"all-devices"}); err != nil {
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
	if opts.kernel == "" {
		if runs, err := runLines(file); err == nil && len(runs) > 0 && !flags.Changed("arg") && !flags.Changed("global") && !flags.Changed("local") {
			return execRunLines(cmd, file, runs)
		}
		return usageError{errors.New("--kernel NAME is needed: the kernel function to launch (or '// run:' lines in FILE.cl)")}
	}
	if opts.count < 0 || opts.warmup < 0 || opts.count > bench.MaxCount || opts.warmup > bench.MaxWarmup {
		return usageError{fmt.Errorf("--count must be 0 to %d and --warmup 0 to %d", bench.MaxCount, bench.MaxWarmup)}
	}
	args, err := parseExecArgs(opts.args, opts.kernel, opts.seed)
	if err != nil {
		return err
	}
	global, local, err := execRange(opts.global, opts.local, args)
	if err != nil {
		return err
	}
	var buildOpts []string
	for _, d := range opts.defines {
		if name, _, _ := strings.Cut(d, "="); name == "" || strings.ContainsAny(name, " \t") {
			return usageError{fmt.Errorf("-D %q: want NAME or NAME=VALUE", d)}
		}
		buildOpts = append(buildOpts, "-D"+d)
	}
	src := []byte(fusedSrc)
	if opts.expr == "" {
		if src, err = os.ReadFile(file); err != nil {
			return err
		}
		if err := checkKernelArgs(file, string(src), opts.kernel, buildOpts, args); err != nil {
			return err
		}
	}
	if !opts.noOutput {
		if err := os.MkdirAll(opts.dir, 0o755); err != nil {
			return fmt.Errorf("--save-dir: %w", err)
		}
	}
	ctx := cmd.Context()
	ids, err := benchDevices(cmd, &benchOptions{devices: opts.devices, all: opts.all})
	if err != nil {
		return err
	}
	sum := execSummary{File: file, Kernel: opts.kernel, Global: global, BuildOptions: buildOpts, Args: opts.args,
		Seed: opts.seed, Warmup: opts.warmup, ToleranceULP: opts.tolULP}
	errs := forEachOpenCLDevice(cmd, ids, opts.all, func(dev *engine.Device) error {
		res, err := execOn(ctx, dev, opts, file, string(src), buildOpts, args, global, local)
		if err != nil {
			res.Err = err.Error()
		}
		sum.Devices = append(sum.Devices, res)
		return err
	})
	var ok []*execDevice
	for i := range sum.Devices {
		if sum.Devices[i].Err == "" {
			ok = append(ok, &sum.Devices[i])
		}
	}
	switch {
	case len(ok) > 1:
		sum.Baseline = ok[0].Device
		for _, d := range ok[1:] {
			for j, a := range savedArgs(args) {
				c := compareOutputs(a, ok[0].data[j], d.data[j], opts.tolULP)
				c.Device, c.Baseline = d.Device, ok[0].Device
				sum.Compare = append(sum.Compare, c)
				if !c.Within {
					errs = append(errs, fmt.Errorf("%s on %s: %s: %w", c.Output, c.Device, c.describe(), bench.ErrVerify))
				}
			}
		}
	case opts.all && len(ok) == 1 && len(savedArgs(args)) > 0:
		fmt.Fprintf(cmd.ErrOrStderr(), "prism: one device ran (%s): no outputs to compare\n", ok[0].Device)
	}
	if len(ok) == 0 {
		return errors.Join(errs...) // nothing ran: the errors say why
	}
	werr := opts.write(cmd, func(w io.Writer) error {
		if opts.json {
			return writeJSON(w, sum)
		}
		writeExecSummary(w, &sum)
		return nil
	})
	return errors.Join(append(errs, werr)...)
}

// runLines returns the flags of the "// run:" lines of an OpenCL C file: a kernel's
// invocation kept with its source, as the corpus of the CUDA translation keeps them.
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

func runLines(file string) ([][]string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var runs [][]string
	for _, line := range strings.Split(string(src), "\n") {
		if spec, ok := strings.CutPrefix(strings.TrimSpace(line), "// run:"); ok {
			runs = append(runs, strings.Fields(spec))
		}
	}
	return runs, nil
}

// perRunFlags are the flags a "// run:" line gives; the others given on the command line
// apply to every line.
var perRunFlags = map[string]bool{"kernel": true, "arg": true, "global": true, "local": true, "define": true}

// execRunLines runs prism exec once per "// run:" line of file, each with the line's flags
// and the command line's other flags (--device, --all-devices, --count, --json, ...).
func execRunLines(cmd *cobra.Command, file string, runs [][]string) error {
	var shared []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if perRunFlags[f.Name] {
			return
		}
		v := f.Value.String()
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			v = strings.Join(sv.GetSlice(), ",")
		}
		shared = append(shared, "--"+f.Name+"="+v)
	})
	var errs []error
	for _, run := range runs {
		sub := newExecCmd()
		sub.SetOut(cmd.OutOrStdout())
		sub.SetErr(cmd.ErrOrStderr())
		sub.SilenceUsage, sub.SilenceErrors = true, true
		sub.SetArgs(append(append([]string{file}, run...), shared...))
		if err := sub.ExecuteContext(cmd.Context()); err != nil {
			errs = append(errs, fmt.Errorf("%s (run: %s): %w", file, strings.Join(run, " "), err))
		}
	}
	return errors.Join(errs...)
}

// savedArgs returns the output arguments, in order.
func savedArgs(args []*execArg) []*execArg {
	var out []*execArg
	for _, a := range args {
		if a.saved() {
			out = append(out, a)
		}
	}
	return out
}

// execOn builds the kernel on dev, runs it once from the arguments' initial values, keeps
// and writes its outputs, then times it.
func execOn(ctx context.Context, dev *engine.Device, opts *execOptions, file, src string, buildOpts []string,
	args []*execArg, global, local []int) (execDevice, error) {
	res := execDevice{Device: dev.ID(), Name: dev.Info().Name}
	prog, err := dev.BuildSource(engine.Source{Text: src, Name: filepath.Base(file)}, buildOpts...)
	if err != nil {
		var be *engine.BuildError
		if errors.As(err, &be) && !strings.Contains(err.Error(), be.Log) {
			return res, fmt.Errorf("%s on %s: %w\ncompiler log:\n%s", file, dev.ID(), err, be.Log)
		}
		return res, fmt.Errorf("%s on %s: %w", file, dev.ID(), err)
	}
	defer prog.Close()
	k, err := prog.Kernel(opts.kernel)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) && opts.expr == "" {
			// The name is not a kernel of the program built (a function without __kernel,
			// or a kernel the preprocessor left out): say which kernels the file defines.
			return res, usageError{fmt.Errorf("%s: %w", dev.ID(), notInFile(file, opts.kernel, kernelNames(src, buildOpts)))}
		}
		return res, fmt.Errorf("%s on %s: %w", file, dev.ID(), err)
	}
	defer k.Close()
	if local == nil {
		local = defaultLocal(global, k.MaxWorkGroupSize())
	}
	res.Local = local
	var r engine.Range
	switch len(global) {
	case 1:
		r = engine.Range1D(global[0], local[0])
	case 2:
		r = engine.Range2D(global[0], global[1], local[0], local[1])
	default:
		r = engine.Range3D(global[0], global[1], global[2], local[0], local[1], local[2])
	}
	q, err := dev.NewQueue()
	if err != nil {
		return res, err
	}
	defer q.Close()
	launch := make([]any, len(args))
	bufs := make([]*engine.Buffer[uint8], len(args))
	defer func() {
		for _, b := range bufs {
			if b != nil {
				b.Close()
			}
		}
	}()
	for i, a := range args {
		switch a.kind {
		case "scalar":
			launch[i] = a.value
		case "local":
			launch[i] = engine.LocalBytes(a.local)
		default:
			if bufs[i], err = engine.NewBuffer[uint8](dev, a.n*a.typ.size); err != nil {
				return res, err
			}
			if err := bufs[i].Write(ctx, q, 0, a.init); err != nil {
				return res, err
			}
			launch[i] = bufs[i]
		}
	}
	launchErr := func(err error) error {
		if errors.Is(err, engine.ErrInvalidArg) {
			return usageError{err} // the arguments or the range given do not fit the kernel
		}
		return err
	}
	if err := q.Launch(k, r, launch...); err != nil {
		return res, launchErr(err)
	}
	if err := q.Finish(ctx); err != nil {
		return res, err
	}
	for i, a := range args {
		if !a.saved() {
			continue
		}
		data, err := bufs[i].Download(ctx, q)
		if err != nil {
			return res, err
		}
		res.data = append(res.data, data)
		out := execFile{Name: a.name, Arg: i, Type: a.typ.name, Len: a.n}
		if !opts.noOutput {
			out.File = filepath.Join(opts.dir, a.name+"."+strings.ReplaceAll(dev.ID(), ":", "-")+".npy")
			if err := bench.WriteFileAtomic(out.File, encodeNPY(a.typ, data)); err != nil {
				return res, err
			}
		}
		res.Outputs = append(res.Outputs, out)
	}
	for range opts.warmup {
		if err := q.Launch(k, r, launch...); err != nil {
			return res, err
		}
	}
	if err := q.Finish(ctx); err != nil {
		return res, err
	}
	var samples []time.Duration
	res.Timing = bench.TimingEvents
	for range opts.count {
		d, err := q.Timed(ctx, func() error { return q.Launch(k, r, launch...) })
		if err != nil {
			return res, err
		}
		if q.TimedByHost() {
			res.Timing = bench.TimingHost
		}
		samples = append(samples, d)
	}
	if len(samples) == 0 {
		res.Timing = ""
	}
	res.Stats = bench.Summarize(samples)
	res.Stats.Samples = nil
	return res, nil
}

// defaultLocal returns a work-group for global: per dimension a power of two that divides
// it, starting from 256, 16x16 or 8x8x4 items, halved until the group fits maxWG.
func defaultLocal(global []int, maxWG int) []int {
	start := map[int][]int{1: {256}, 2: {16, 16}, 3: {8, 8, 4}}[len(global)]
	local := make([]int, len(global))
	for i, g := range global {
		l := start[i]
		for l > 1 && g%l != 0 {
			l /= 2
		}
		local[i] = l
	}
	for maxWG > 0 {
		n, big := 1, 0
		for i, l := range local {
			n *= l
			if l > local[big] {
				big = i
			}
		}
		if n <= maxWG || local[big] == 1 {
			break
		}
		local[big] /= 2
	}
	return local
}

// execRange parses --global and --local; without --global, the first buffer's length.
func execRange(g, l string, args []*execArg) (global, local []int, err error) {
	if g == "" {
		for _, a := range args {
			if a.n > 0 {
				global = []int{a.n}
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
		return nil, nil, usageError{fmt.Errorf("--local %s has %d dimensions, --global %s %d", l, len(local), g, len(global))}
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

// parseExecArgs parses the --arg specs, generating the buffers' initial contents.
func parseExecArgs(specs []string, kernel string, seed uint64) ([]*execArg, error) {
	var args []*execArg
	names := map[string]int{}
	for i, spec := range specs {
		a, err := parseExecArg(i, spec, kernel, seed)
		if err != nil {
			return nil, usageError{fmt.Errorf("--arg %d %q: %w", i, spec, err)}
		}
		if a.saved() {
			if j, ok := names[a.name]; ok {
				return nil, usageError{fmt.Errorf("--arg %d %q: the name %s is taken by --arg %d", i, spec, a.name, j)}
			}
			names[a.name] = i
		}
		args = append(args, a)
	}
	return args, nil
}

// parseExecArg parses the spec of argument i (see prism exec --help).
func parseExecArg(i int, spec, kernel string, seed uint64) (*execArg, error) {
	a := &execArg{index: i, spec: spec, name: fmt.Sprintf("%s.arg%d", kernel, i)}
	body := spec
	if name, rest, ok := strings.Cut(spec, "="); ok && !strings.Contains(name, ":") {
		if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			return nil, fmt.Errorf("bad name %q: want letters, digits, '.', '_' or '-'", name)
		}
		a.name, body = name, rest
	}
	kind, rest, _ := strings.Cut(body, ":")
	a.kind = strings.ToLower(kind)
	if a.kind == "in" {
		a.kind = "buf"
	}
	if body != spec && !a.saved() {
		return nil, errors.New("only out and inout buffers take a name")
	}
	fields := strings.SplitN(rest, ":", 3)
	typ := func() error {
		t, ok := lookupElemType(fields[0])
		if !ok {
			return fmt.Errorf("unknown element type %q (want %s)", fields[0], elemTypeNames())
		}
		a.typ = t
		return nil
	}
	switch a.kind {
	case "scalar":
		if rest == "" || len(fields) != 2 {
			return nil, errors.New("want scalar:TYPE:VALUE")
		}
		if err := typ(); err != nil {
			return nil, err
		}
		v, err := parseScalar(a.typ, fields[1])
		if err != nil {
			return nil, err
		}
		a.value = v
	case "local":
		switch {
		case rest == "":
			return nil, errors.New("want local:BYTES or local:TYPE:COUNT")
		case len(fields) == 1:
			n, err := bench.ParseSize(fields[0])
			if err != nil {
				return nil, err
			}
			a.local = int64(n)
		default:
			if len(fields) != 2 {
				return nil, errors.New("want local:BYTES or local:TYPE:COUNT")
			}
			if err := typ(); err != nil {
				return nil, err
			}
			n, err := bench.ParseSize(fields[1])
			if err != nil {
				return nil, err
			}
			a.local = int64(n) * int64(a.typ.size)
		}
	case "buf", "out", "inout":
		if rest == "" || len(fields) < 2 {
			return nil, fmt.Errorf("want %s:TYPE:SIZE%s", a.kind, map[bool]string{true: "", false: "[:INIT]"}[a.kind == "out"])
		}
		if err := typ(); err != nil {
			return nil, err
		}
		n, err := bench.ParseSize(fields[1])
		if err != nil {
			return nil, err
		}
		if int64(n)*int64(a.typ.size) > 1<<40 {
			return nil, fmt.Errorf("%d elements of %s: above 1 TiB", n, a.typ.name)
		}
		a.n = n
		init := "zeros"
		if len(fields) == 3 {
			if a.kind == "out" {
				return nil, fmt.Errorf("an out buffer starts at zeros: inout:%s:%s:%s gives it initial values", fields[0], fields[1], fields[2])
			}
			init = fields[2]
		}
		if a.init, err = initValues(a.typ, n, init, rand.New(rand.NewPCG(seed, uint64(i)))); err != nil {
			return nil, err
		}
	case "":
		return nil, errors.New("empty: want buf:, out:, inout:, scalar: or local:")
	default:
		return nil, fmt.Errorf("unknown kind %q: want buf, out, inout, scalar or local", kind)
	}
	return a, nil
}

// parseScalar parses s as a value of t, of the Go type engine passes for it.
func parseScalar(t elemType, s string) (any, error) {
	bits := 8 * t.size
	switch t.class {
	case 'f':
		v, err := parseFloat(t, s)
		if err != nil {
			return nil, err
		}
		switch t.size {
		case 2:
			return engine.HalfFromFloat64(v), nil
		case 4:
			return float32(v), nil
		}
		return v, nil
	case 'i':
		v, err := strconv.ParseInt(s, 0, bits)
		if err != nil {
			return nil, fmt.Errorf("%q is not a %s", s, t.name)
		}
		return map[int]any{1: int8(v), 2: int16(v), 4: int32(v), 8: v}[t.size], nil
	}
	v, err := strconv.ParseUint(s, 0, bits)
	if err != nil {
		return nil, fmt.Errorf("%q is not a %s", s, t.name)
	}
	return map[int]any{1: uint8(v), 2: uint16(v), 4: uint32(v), 8: v}[t.size], nil
}

// parseFloat parses s as a float of t, refusing finite values beyond its range.
func parseFloat(t elemType, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a %s", s, t.name)
	}
	limit := map[int]float64{2: 65504, 4: math.MaxFloat32, 8: math.MaxFloat64}[t.size]
	if !math.IsInf(v, 0) && math.Abs(v) > limit {
		return 0, fmt.Errorf("%s is beyond the range of %s", s, t.name)
	}
	return v, nil
}

// initValues returns n elements of t, little-endian, as init says: zeros, ones, range,
// random (from rng), a constant or a .npy file.
func initValues(t elemType, n int, init string, rng *rand.Rand) ([]byte, error) {
	if strings.HasSuffix(strings.ToLower(init), ".npy") {
		arr, err := readNPYFile(init)
		if err != nil {
			return nil, err
		}
		if arr.typ != t {
			return nil, fmt.Errorf("%s holds %s (%s), not %s", init, arr.typ.name, arr.typ.descr, t.name)
		}
		if arr.len() != n {
			return nil, fmt.Errorf("%s holds %d elements (shape %v), not %d", init, arr.len(), arr.shape, n)
		}
		return arr.data, nil
	}
	data := make([]byte, n*t.size)
	put := func(i int, f float64, v int64) {
		if t.class == 'f' {
			putFloat(t, data, i, f)
		} else {
			putBits(t, data, i, uint64(v))
		}
	}
	switch strings.ToLower(init) {
	case "zeros", "zero", "0":
	case "ones":
		for i := range n {
			put(i, 1, 1)
		}
	case "range", "iota":
		for i := range n {
			put(i, float64(i), int64(i))
		}
	case "random", "rand":
		for i := range n {
			switch t.class {
			case 'f':
				putFloat(t, data, i, 2*rng.Float64()-1)
			case 'i':
				putBits(t, data, i, uint64(rng.Int64N(128)-64))
			default:
				putBits(t, data, i, uint64(rng.Int64N(128)))
			}
		}
	default:
		v, err := parseScalar(t, init)
		if err != nil {
			return nil, fmt.Errorf("bad INIT: %w (want zeros, ones, range, random, a constant or FILE.npy)", err)
		}
		var one [8]byte
		switch x := v.(type) {
		case float32:
			binary.LittleEndian.PutUint32(one[:], math.Float32bits(x))
		case float64:
			binary.LittleEndian.PutUint64(one[:], math.Float64bits(x))
		default:
			binary.LittleEndian.PutUint64(one[:], toBits(v))
		}
		for i := range n {
			copy(data[i*t.size:], one[:t.size])
		}
	}
	return data, nil
}

// toBits returns the bits of an integer or Half scalar, zero-extended.
func toBits(v any) uint64 {
	switch x := v.(type) {
	case int8:
		return uint64(uint8(x))
	case int16:
		return uint64(uint16(x))
	case int32:
		return uint64(uint32(x))
	case int64:
		return uint64(x)
	case uint8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint32:
		return uint64(x)
	case uint64:
		return x
	case engine.Half:
		return uint64(x)
	}
	return 0
}

// putBits stores the low t.size bytes of v as element i of data.
func putBits(t elemType, data []byte, i int, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	copy(data[i*t.size:(i+1)*t.size], b[:t.size])
}

// putFloat stores f, rounded to t, as element i of data.
func putFloat(t elemType, data []byte, i int, f float64) {
	switch t.size {
	case 2:
		putBits(t, data, i, uint64(engine.HalfFromFloat64(f)))
	case 4:
		putBits(t, data, i, uint64(math.Float32bits(float32(f))))
	default:
		putBits(t, data, i, math.Float64bits(f))
	}
}

// elemBits returns element i of data, zero-extended.
func elemBits(t elemType, data []byte, i int) uint64 {
	var b [8]byte
	copy(b[:], data[i*t.size:(i+1)*t.size])
	return binary.LittleEndian.Uint64(b[:])
}

// elemFloat returns element i of data as a float64 (integers rounded where they must be).
func elemFloat(t elemType, data []byte, i int) float64 {
	u := elemBits(t, data, i)
	switch t.class {
	case 'f':
		switch t.size {
		case 2:
			return engine.Half(u).Float64()
		case 4:
			return float64(math.Float32frombits(uint32(u)))
		}
		return math.Float64frombits(u)
	case 'i':
		return float64(signExtend(u, t.size))
	}
	return float64(u)
}

// signExtend returns the signed value of the low size bytes of u.
func signExtend(u uint64, size int) int64 {
	shift := 64 - 8*size
	return int64(u<<shift) >> shift
}

// elemString formats element i of data.
func elemString(t elemType, data []byte, i int) string {
	u := elemBits(t, data, i)
	switch t.class {
	case 'f':
		return strconv.FormatFloat(elemFloat(t, data, i), 'g', -1, 8*max(t.size, 4))
	case 'i':
		return strconv.FormatInt(signExtend(u, t.size), 10)
	}
	return strconv.FormatUint(u, 10)
}

// execCompare is one output of one device compared with the baseline device's.
type execCompare struct {
	Output   string `json:"output"`
	Arg      int    `json:"arg"`
	Type     string `json:"type"`
	Device   string `json:"device"`
	Baseline string `json:"baseline"`
	Elements int    `json:"elements"`
	// Differing counts the elements whose bits differ (+0 and -0 count as equal, as do
	// two NaNs).
	Differing int     `json:"differing"`
	MaxAbs    float64 `json:"max_abs_diff"`
	// MaxRel is the largest |a-b| / max(|a|, |b|).
	MaxRel float64 `json:"max_rel_diff"`
	// MaxULP is the largest distance in units in the last place, for floats.
	MaxULP uint64 `json:"max_ulp_diff"`
	// NaNs counts the elements where one device gave a NaN and the other a number.
	NaNs int `json:"nan_mismatches"`
	// Worst is the index of the element that differs most (by ulp for floats, by absolute
	// difference for integers), -1 when none differs.
	Worst         int    `json:"worst_index"`
	WorstBaseline string `json:"worst_baseline_value,omitempty"`
	WorstValue    string `json:"worst_value,omitempty"`
	Exact         bool   `json:"exact"` // integers: must match exactly
	Within        bool   `json:"within_tolerance"`
	tolerance     uint64
}

// compareOutputs compares output a of a device (got) with the baseline's (want).
func compareOutputs(a *execArg, want, got []byte, tolULP uint64) execCompare {
	c := execCompare{Output: a.name, Arg: a.index, Type: a.typ.name, Elements: a.n, Worst: -1, Exact: a.typ.class != 'f', tolerance: tolULP}
	worstULP, worstAbs := uint64(0), -1.0
	for i := range a.n {
		bw, bg := elemBits(a.typ, want, i), elemBits(a.typ, got, i)
		if bw == bg {
			continue
		}
		w, g := elemFloat(a.typ, want, i), elemFloat(a.typ, got, i)
		if c.Exact {
			c.Differing++
			d := math.Abs(w - g)
			c.MaxAbs = max(c.MaxAbs, d)
			c.MaxRel = max(c.MaxRel, d/max(math.Abs(w), math.Abs(g)))
			if d > worstAbs {
				worstAbs, c.Worst = d, i
			}
			continue
		}
		wn, gn := math.IsNaN(w), math.IsNaN(g)
		if wn && gn || w == 0 && g == 0 {
			continue
		}
		c.Differing++
		if wn != gn {
			c.NaNs++
			if worstULP < math.MaxUint64 {
				worstULP, c.Worst = math.MaxUint64, i
			}
			continue
		}
		ulp := ulpDistance(bw, bg, a.typ.size)
		if d := math.Abs(w - g); !math.IsInf(d, 0) && !math.IsNaN(d) {
			c.MaxAbs = max(c.MaxAbs, d)
			c.MaxRel = max(c.MaxRel, d/max(math.Abs(w), math.Abs(g)))
		}
		c.MaxULP = max(c.MaxULP, ulp)
		if ulp > worstULP {
			worstULP, c.Worst = ulp, i
		}
	}
	if c.Worst >= 0 {
		c.WorstBaseline, c.WorstValue = elemString(a.typ, want, c.Worst), elemString(a.typ, got, c.Worst)
	}
	if c.Exact {
		c.Within = c.Differing == 0
	} else {
		c.Within = c.NaNs == 0 && c.MaxULP <= tolULP
	}
	return c
}

// ulpDistance returns how many representable values of a float of size bytes lie between
// the bit patterns a and b (neither a NaN), counting across zero.
func ulpDistance(a, b uint64, size int) uint64 {
	bits := 8 * size
	sign := uint64(1) << (bits - 1)
	// ordered maps a pattern onto a line where adjacent floats are adjacent integers, the
	// negatives below the positives, +0 and -0 at the same point.
	ordered := func(u uint64) int64 {
		if u&sign != 0 {
			return -int64(u &^ sign)
		}
		return int64(u)
	}
	x, y := ordered(a), ordered(b)
	if x < y {
		x, y = y, x
	}
	return uint64(x) - uint64(y)
}

// describe says how the comparison failed, for the error.
func (c *execCompare) describe() string {
	switch {
	case c.NaNs > 0:
		return fmt.Sprintf("%d NaNs against numbers of %s, first worst at index %d (%s vs %s)", c.NaNs, c.Baseline, c.Worst, c.WorstBaseline, c.WorstValue)
	case c.Exact:
		return fmt.Sprintf("%d of %d elements differ from %s, most at index %d (%s vs %s)", c.Differing, c.Elements, c.Baseline, c.Worst, c.WorstBaseline, c.WorstValue)
	}
	return fmt.Sprintf("differs from %s by %d ulp at index %d (%s vs %s), above --tolerance-ulp %d", c.Baseline, c.MaxULP, c.Worst, c.WorstBaseline, c.WorstValue, c.tolerance)
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
		a, err := parseExecArg(i, body, "expr", seed)
		if err != nil {
			return "", "", nil, usageError{fmt.Errorf("--arg %d %q: %w", i, spec, err)}
		}
		switch a.kind {
		case "scalar":
			types[name] = "scalar:" + a.typ.name
		case "local":
			return "", "", nil, usageError{fmt.Errorf("--arg %d %q: an expression takes no local memory", i, spec)}
		default:
			if n >= 0 && a.n != n {
				return "", "", nil, usageError{fmt.Errorf("--arg %d %q: %d elements; the buffers before it hold %d (an expression maps buffers of one length)", i, spec, a.n, n)}
			}
			n = a.n
			types[name] = a.typ.name
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
		if kind, _, _ := strings.Cut(body, ":"); kind == "out" || kind == "inout" {
			body = p.Name + "=" + body // the output file is named after it
		}
		ordered = append(ordered, body)
	}
	ordered = append(ordered, fmt.Sprintf("scalar:int32:%d", n))
	return e.Source(), e.Kernel(), ordered, nil
}
