package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/userkernel"
	"github.com/prism-compute/prism/engine"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const tuneUserHelp = `With FILE.cl as its argument, prism tune measures a kernel of your own instead: every
combination of the values given by -D NAME=V1,V2,... (the cartesian product of the lists;
-D NAME=VALUE with one value, or -D NAME, is defined in every build) is built and run on
each device, as prism exec runs it: --kernel, --arg, --global, --local, --device (several,
comma-separated), --all-devices, --seed, --count and --warmup as there. Each combination
runs once from the initial values, its outputs are compared with those of the device's
first combination that ran (floats within --tolerance-ulp, integers exactly), then it is
timed by device events: the median of --count runs. A combination that fails to build or
to run, or whose outputs disagree, is reported and never chosen. Nothing is saved.

--local stays as given (or the default of prism exec) whatever -D defines: a macro named
WG or LOCAL is only a macro to Prism. --expr is prism exec's alone.

Output: per device, the combinations from fastest to slowest, the fastest marked, then
a line "fastest: -D NAME=V ... (median, how many times faster than the slowest)"; or
--json.`

const tuneUserExample = `
  # y = 2*x + BIAS on 1M floats, vloadVEC/vstoreVEC for VEC 1, 2, 4 and 3 (which fails to
  # build), each with two work-group sizes: 8 combinations per device
  prism tune tune.cl --kernel scale --global 256K --local 64 -D VEC=1,2,4,3 -D WG=64,128 \
      --arg scalar:float32:2 --arg buf:float32:1M:random --arg out:float32:1M`

// tuneUserOptions are the flags of prism tune that tune FILE.cl.
type tuneUserOptions struct {
	expr    string
	kernel  string
	args    []string
	global  string
	local   string
	defines []string
	all     bool
	seed    uint64
	tolULP  uint64
}

func (o *tuneUserOptions) addFlags(f *pflag.FlagSet) {
	f.StringVarP(&o.kernel, "kernel", "k", "", "with FILE.cl: name of the kernel function to launch")
	f.StringVar(&o.expr, "expr", "", "not taken by prism tune: see prism exec --expr")
	f.StringArrayVarP(&o.args, "arg", "a", nil, "with FILE.cl: the next kernel argument, as in prism exec (repeat, in order)")
	f.StringVarP(&o.global, "global", "g", "", "with FILE.cl: global size, as in prism exec")
	f.StringVarP(&o.local, "local", "l", "", "with FILE.cl: work-group size, as in prism exec")
	f.StringArrayVarP(&o.defines, "define", "D", nil, "with FILE.cl: NAME=V1,V2,... values to try, NAME=VALUE or NAME to define in every build (repeat)")
	f.BoolVar(&o.all, "all-devices", false, "with FILE.cl: tune on every device that builds OpenCL C")
	f.Uint64Var(&o.seed, "seed", 1, "with FILE.cl: seed of the random inputs")
	f.Uint64Var(&o.tolULP, "tolerance-ulp", 4, "with FILE.cl: largest difference from the first combination, in units in the last place, that float outputs may show")
}

// tuneUserFlags are the flags that only tuning FILE.cl takes, and tuneSuiteFlags those it
// does not.
var (
	tuneUserFlags  = []string{"kernel", "arg", "global", "local", "define", "all-devices", "seed", "tolerance-ulp"}
	tuneSuiteFlags = []string{"size", "variant", "precision", "dry-run"}
)

// onlyWithFile rejects --expr, and the flags of FILE.cl given with OPs.
func (o *tuneUserOptions) onlyWithFile(f *pflag.FlagSet) error {
	if f.Changed("expr") {
		return errTuneExpr
	}
	for _, name := range tuneUserFlags {
		if f.Changed(name) {
			return usageError{fmt.Errorf("--%s is for tuning FILE.cl, not the suite's ops", name)}
		}
	}
	return nil
}

var errTuneExpr = usageError{errors.New("prism tune does not take --expr: write the kernel to FILE.cl, or time the expression with prism exec --expr")}

// parseTuneDefines parses the -D flags of prism tune into the macros that vary (more than
// one value) and the build options of those that do not.
func parseTuneDefines(specs []string) (vary []userkernel.Define, fixed []string, err error) {
	seen := map[string]bool{}
	for _, d := range specs {
		name, list, hasValue := strings.Cut(d, "=")
		if name == "" || strings.ContainsAny(name, " \t,") {
			return nil, nil, usageError{fmt.Errorf("-D %q: want NAME, NAME=VALUE or NAME=V1,V2,...", d)}
		}
		if seen[name] {
			return nil, nil, usageError{fmt.Errorf("-D %q: %s is defined twice", d, name)}
		}
		seen[name] = true
		if err := checkDefine(name); err != nil {
			return nil, nil, err
		}
		if !hasValue {
			fixed = append(fixed, "-D"+name)
			continue
		}
		values := strings.Split(list, ",")
		for _, v := range values {
			if v == "" {
				return nil, nil, usageError{fmt.Errorf("-D %q: empty value in the list", d)}
			}
			if err := checkDefine(name + "=" + v); err != nil {
				return nil, nil, err
			}
		}
		if len(values) == 1 {
			fixed = append(fixed, "-D"+d)
			continue
		}
		vary = append(vary, userkernel.Define{Name: name, Values: values})
	}
	return vary, fixed, nil
}

// maxCombinations bounds the -D combinations of one tuning: each is a build and a run,
// so that more is a mistake, not a sweep (10^4 builds of a second each is three hours).
const maxCombinations = 10_000

// checkCombinations refuses a sweep of more than maxCombinations combinations, naming
// the count.
func checkCombinations(vary []userkernel.Define) error {
	n, exact := 1, true
	var sizes []string
	for _, d := range vary {
		k := len(d.Values)
		sizes = append(sizes, fmt.Sprint(k))
		if !exact || n > math.MaxInt/k {
			exact = false
			continue
		}
		n *= k
	}
	if exact && n <= maxCombinations {
		return nil
	}
	count := fmt.Sprint(n)
	if !exact {
		count = fmt.Sprintf("more than %d", math.MaxInt)
	}
	return usageError{fmt.Errorf("-D: %s combinations (%s values), more than the %d one tuning takes: give fewer values",
		count, strings.Join(sizes, " x "), maxCombinations)}
}

// tuneUserSummary is the result of tuning FILE.cl, printed as text or --json.
type tuneUserSummary struct {
	File         string              `json:"file"`
	Kernel       string              `json:"kernel"`
	Global       []int               `json:"global"`
	Local        []int               `json:"local,omitempty"`
	Fixed        []string            `json:"fixed_build_options,omitempty"`
	Args         []string            `json:"args"`
	Seed         uint64              `json:"seed"`
	Count        int                 `json:"count"`
	Warmup       int                 `json:"warmup"`
	ToleranceULP uint64              `json:"tolerance_ulp"`
	Devices      []userkernel.Tuning `json:"devices"`
}

func tuneUserRun(cmd *cobra.Command, opts *tuneOptions, posArgs []string) error {
	flags := cmd.Flags()
	u := &opts.user
	if len(posArgs) > 1 {
		return usageError{fmt.Errorf("prism tune takes one FILE.cl (%d arguments given)", len(posArgs))}
	}
	if err := opts.check(flags); err != nil {
		return err
	}
	if flags.Changed("expr") {
		return errTuneExpr
	}
	for _, name := range tuneSuiteFlags {
		if flags.Changed(name) {
			return usageError{fmt.Errorf("--%s is for tuning the suite's ops, not FILE.cl", name)}
		}
	}
	if err := exclusive(flags, []string{"device"}, []string{"all-devices"}); err != nil {
		return err
	}
	if u.kernel == "" {
		return usageError{errors.New("--kernel NAME is needed: the kernel function to launch")}
	}
	if opts.count <= 0 || opts.warmup < 0 || opts.count > bench.MaxCount || opts.warmup > bench.MaxWarmup {
		return usageError{fmt.Errorf("--count must be 1 to %d and --warmup 0 to %d", bench.MaxCount, bench.MaxWarmup)}
	}
	vary, fixed, err := parseTuneDefines(u.defines)
	if err != nil {
		return err
	}
	if err := checkCombinations(vary); err != nil {
		return err
	}
	args, err := parseExecArgs(u.args, u.kernel, u.seed)
	if err != nil {
		return err
	}
	global, local, err := execRange(u.global, u.local, args)
	if err != nil {
		return err
	}
	file := posArgs[0]
	src, err := readKernelFile(file)
	if err != nil {
		return err
	}
	var devices []string
	if opts.device != "" {
		devices = strings.Split(opts.device, ",")
	}
	ids, err := benchDevices(cmd, &benchOptions{devices: devices, all: u.all})
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	tuner := &userkernel.Tuner{
		Launch: userkernel.Launch{File: file, Source: string(src), Kernel: u.kernel, BuildOptions: fixed, Args: args,
			Global: global, Local: local, Warmup: opts.warmup, Count: opts.count},
		Grid:         userkernel.Grid(vary),
		ToleranceULP: u.tolULP,
	}
	tuner.Explain = func(dev *engine.Device, err error) error { return execError(dev, &tuner.Launch, false, err) }
	sum := tuneUserSummary{File: file, Kernel: u.kernel, Global: global, Local: local, Fixed: fixed, Args: u.args,
		Seed: u.seed, Count: opts.count, Warmup: opts.warmup, ToleranceULP: u.tolULP}
	errs := forEachOpenCLDevice(cmd, ids, u.all, func(dev *engine.Device) error {
		d := tuner.Tune(ctx, dev)
		var err error
		if d.Interrupted {
			d.Err = "interrupted: no fastest is named"
			if d.NotRun > 0 {
				d.Err = fmt.Sprintf("interrupted, %d combinations not run: no fastest is named", d.NotRun)
			}
			err = fmt.Errorf("%s on %s: %w", file, d.Device, context.Cause(ctx))
		} else if d.Fastest == "" {
			d.Err = "no combination built, ran and agreed"
			err = fmt.Errorf("%s on %s: %s", file, d.Device, d.Err)
		}
		sum.Devices = append(sum.Devices, d)
		return err
	})
	if len(sum.Devices) == 0 {
		return errors.Join(errs...)
	}
	werr := opts.write(cmd, func(w io.Writer) error {
		if opts.json {
			return writeJSON(w, sum)
		}
		writeTuneUser(w, &sum)
		return nil
	})
	return errors.Join(append(errs, werr)...)
}

// writeTuneUser prints the tuning of FILE.cl as text.
func writeTuneUser(w io.Writer, s *tuneUserSummary) {
	for _, d := range s.Devices {
		fmt.Fprintf(w, "%s on %s (%s): global %s", s.Kernel, d.Device, d.Name, joinDims(s.Global))
		if len(d.Local) > 0 {
			fmt.Fprintf(w, ", local %s", joinDims(d.Local))
		}
		if len(s.Fixed) > 0 {
			fmt.Fprintf(w, ", %s", strings.Join(s.Fixed, " "))
		}
		fmt.Fprintf(w, "; median of %d runs, outputs compared with %s\n", s.Count, cmp.Or(d.Baseline, "none"))
		width := 0
		for _, c := range d.Combinations {
			width = max(width, len(c.Label))
		}
		for _, c := range d.Combinations {
			switch c.Status {
			case userkernel.StatusOK:
				mark := ""
				if c.Fastest {
					mark = "  fastest"
				}
				med := bench.FormatDuration(c.Stats.Median)
				fmt.Fprintf(w, "  %-*s  %*s%s\n", width, c.Label, 10+len(med)-utf8.RuneCountInString(med), med, mark)
			default:
				first, _, _ := strings.Cut(c.Err, "\n")
				fmt.Fprintf(w, "  %-*s  %s: %s\n", width, c.Label, strings.ToUpper(c.Status), first)
			}
		}
		if d.Fastest != "" {
			fmt.Fprintf(w, "  fastest: %s (%s, %.1fx the slowest)\n", d.Fastest, bench.FormatDuration(d.Combinations[0].Stats.Median), d.Speedup)
		} else {
			fmt.Fprintf(w, "  fastest: none (%s)\n", d.Err)
		}
	}
}
