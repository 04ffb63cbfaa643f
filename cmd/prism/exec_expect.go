package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/userkernel"
	"github.com/prism-compute/prism/cuda/clc"
)

// expectation is one --expect NAME=FILE.npy: the output argument and the stored array.
type expectation struct {
	arg  *userkernel.Arg
	file string
	data []byte
}

// parseExpects reads the --expect flags and the tolerance of the comparisons: each names
// an output of args and a .npy file of its type and number of elements. Anything else is
// a usage error, given before anything runs.
func parseExpects(opts *execOptions, args []*userkernel.Arg) ([]expectation, userkernel.Tolerance, error) {
	tol := userkernel.Tolerance{ULP: opts.expectULP}
	if opts.expectTol != "" {
		a, r, ok := strings.Cut(opts.expectTol, ",")
		abs, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		rel, err2 := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if !ok || err1 != nil || err2 != nil || !(abs >= 0) || !(rel >= 0) || math.IsInf(abs, 0) || math.IsInf(rel, 0) {
			return nil, tol, usageError{fmt.Errorf("--expect-tol %q: want ABS,REL, two finite numbers >= 0 (1e-6,1e-5)", opts.expectTol)}
		}
		tol = userkernel.Tolerance{AbsRel: true, Abs: abs, Rel: rel}
	}
	var outs []string
	for _, a := range userkernel.Outputs(args) {
		outs = append(outs, a.Name)
	}
	var exps []expectation
	seen := map[string]bool{}
	for _, e := range opts.expects {
		name, file, ok := strings.Cut(e, "=")
		if !ok || name == "" || file == "" {
			return nil, tol, usageError{fmt.Errorf("--expect %q: want NAME=FILE.npy, NAME an output (%s)", e, outputList(outs))}
		}
		var arg *userkernel.Arg
		for _, a := range userkernel.Outputs(args) {
			if a.Name == name {
				arg = a
			}
		}
		if arg == nil {
			return nil, tol, usageError{fmt.Errorf("--expect %s: no output is named %s; the outputs are %s", e, name, outputList(outs))}
		}
		if seen[name] {
			return nil, tol, usageError{fmt.Errorf("--expect %s: output %s is expected twice", e, name)}
		}
		seen[name] = true
		arr, err := userkernel.ReadNPYFile(file)
		if err != nil {
			return nil, tol, usageError{fmt.Errorf("--expect %s: %w", e, err)}
		}
		if arr.Type.Name != arg.Type.Name {
			return nil, tol, usageError{fmt.Errorf("--expect %s: %s holds %s, output %s is %s (--arg %d %q)", e, file, arr.Type.Name, name, arg.Type.Name, arg.Index, arg.Spec)}
		}
		if arr.Len() != arg.Len {
			return nil, tol, usageError{fmt.Errorf("--expect %s: %s holds %d elements (shape %v), output %s has %d (--arg %d %q)", e, file, arr.Len(), arr.Shape, name, arg.Len, arg.Index, arg.Spec)}
		}
		exps = append(exps, expectation{arg: arg, file: file, data: arr.Data})
	}
	return exps, tol, nil
}

// outputList names the outputs for a message.
func outputList(outs []string) string {
	if len(outs) == 0 {
		return "none: the kernel has no out or inout --arg"
	}
	return strings.Join(outs, ", ")
}

// expectsNotOver refuses an --expect file that a device's output would be written over
// (NAME.DEVICE.npy in dir, the save directory; "" saves nothing).
func expectsNotOver(exps []expectation, dir string, ids []string) error {
	if dir == "" {
		return nil
	}
	for _, e := range exps {
		for _, id := range ids {
			out := filepath.Join(dir, e.arg.Name+"."+strings.ReplaceAll(id, ":", "-")+".npy")
			if err := notOver("--save-dir", out, e.file); err != nil {
				return usageError{fmt.Errorf("--expect %s=%s: the output of %s is written to that file (%s): give another --save-dir, --no-save, or move the expected file", e.arg.Name, e.file, id, out)}
			}
		}
	}
	return nil
}

// compareExpects compares the outputs of the devices that ran with the --expect arrays,
// adding the comparisons to sum, and returns an error wrapping bench.ErrVerify for each
// beyond the tolerance.
func compareExpects(sum *execSummary, ran []*userkernel.Result, exps []expectation, tol userkernel.Tolerance) []error {
	if len(exps) == 0 {
		return nil
	}
	sum.ExpectTolerance = tol.String()
	var errs []error
	for _, d := range ran {
		for _, e := range exps {
			j := outputIndex(e.arg, d)
			if j < 0 {
				continue
			}
			c := userkernel.CompareWithin(e.arg, e.data, d.Data[j], tol)
			c.Device, c.Baseline = d.Device, e.file
			sum.Expect = append(sum.Expect, c)
			if !c.Within {
				errs = append(errs, fmt.Errorf("--expect %s=%s on %s: %s: %w", e.arg.Name, e.file, d.Device, expectMismatch(e, d.Data[j], &c, tol), bench.ErrVerify))
			}
		}
	}
	return errs
}

// outputIndex returns the index of arg among d's outputs, -1 when d has none of it.
func outputIndex(arg *userkernel.Arg, d *userkernel.Result) int {
	for j, o := range d.Outputs {
		if o.Arg == arg.Index && j < len(d.Data) {
			return j
		}
	}
	return -1
}

// expectMismatch says how an output differs from its expected array: the worst element,
// both values and their difference, and how many differ.
func expectMismatch(e expectation, got []byte, c *userkernel.Comparison, tol userkernel.Tolerance) string {
	i := c.Worst
	w, g := userkernel.ElemFloat(e.arg.Type, e.data, i), userkernel.ElemFloat(e.arg.Type, got, i)
	diff := strconv.FormatFloat(g-w, 'g', 4, 64)
	if !e.arg.Type.Float {
		return fmt.Sprintf("element %d is %s, expected %s (difference %s); %d of %d elements differ (integers must match exactly)",
			i, c.WorstValue, c.WorstBaseline, diff, c.Differing, c.Elements)
	}
	what := fmt.Sprintf("%d ulp", c.MaxULP)
	if tol.AbsRel {
		what = fmt.Sprintf("allowed %.4g", tol.Abs+tol.Rel*math.Abs(w))
	}
	if c.NaNs > 0 {
		what = fmt.Sprintf("%d NaN against a number", c.NaNs)
	}
	return fmt.Sprintf("worst at element %d: %s, expected %s (difference %s, %s); %d of %d elements differ, tolerance %s",
		i, c.WorstValue, c.WorstBaseline, diff, what, c.Differing, c.Elements, tol)
}

// writeExpects prints the --expect comparisons of s.
func writeExpects(w io.Writer, s *execSummary) {
	if len(s.Expect) == 0 {
		return
	}
	fmt.Fprintf(w, "outputs compared with --expect (tolerance %s for floats, exact for integers):\n", s.ExpectTolerance)
	for _, c := range s.Expect {
		status, detail := "ok", "identical"
		if !c.Within {
			status = "FAILED"
		}
		if c.Differing > 0 {
			detail = fmt.Sprintf("%d of %d differ, max abs %.3g, max %d ulp, worst at [%d] (%s vs %s)", c.Differing, c.Elements, c.MaxAbs, c.MaxULP, c.Worst, c.WorstBaseline, c.WorstValue)
		}
		fmt.Fprintf(w, "  %s on %s vs %s: %s  %s\n", c.Output, c.Device, c.Baseline, detail, status)
	}
}

// writeCheckFindings prints what --check found.
func writeCheckFindings(w io.Writer, s *execSummary) {
	if s.Check == nil {
		return
	}
	if len(s.Check.Findings) == 0 {
		fmt.Fprintf(w, "%s: no out-of-bounds access, data race or uninitialized value\n", s.Check.Tool)
		return
	}
	fmt.Fprintf(w, "%s: %d problem(s), %d reports:\n", s.Check.Tool, len(s.Check.Findings), s.Check.Reports)
	for _, f := range s.Check.Findings {
		fmt.Fprintf(w, "  %s\n", f)
	}
	if s.Check.Dropped > 0 {
		fmt.Fprintf(w, "  (%d more reports at other places not listed)\n", s.Check.Dropped)
	}
}

// execChecked is prism exec --check: one run under Oclgrind, no output saved, nothing
// timed or recorded; the summary holds what Oclgrind found, and the --expect comparisons.
func execChecked(cmd *cobra.Command, opts *execOptions, job *childJob, args []*userkernel.Arg, exps []expectation, tol userkernel.Tolerance) (*execSummary, error) {
	j := *job
	j.Device, j.Guard, j.Warmup, j.Count, j.SaveDir = "opencl:0:0", false, 0, 0, ""
	ctx := cmd.Context()
	res, check, err := execCheck(ctx, cmd, &j, args)
	if check == nil {
		return nil, err // no oclgrind
	}
	if err != nil {
		res.Err = err.Error()
	}
	err = errors.Join(err, checkError(job.Kernel, check))
	sum := &execSummary{File: job.File, Kernel: job.Kernel, Global: job.Global, BuildOptions: job.BuildOptions, Args: opts.args,
		Seed: opts.seed, ToleranceULP: opts.tolULP, Devices: []userkernel.Result{res}, Check: check}
	var errs []error
	if len(res.Data) > 0 {
		errs = compareExpects(sum, []*userkernel.Result{&sum.Devices[0]}, exps, tol)
	}
	if ctx.Err() != nil {
		sum.Interrupted, sum.InterruptedAt = true, interruptedAtStep(ctx, "oclgrind "+execCase(job.Kernel))
	}
	return sum, errors.Join(append([]error{err}, errs...)...)
}

// nameParams sets the Param of each argument to the name of the kernel parameter it is
// passed as, where FILE.cl's signature of kernel gives it (signature.go reads it the same
// way), for the messages of guard bands and --check.
func nameParams(args []*userkernel.Arg, src, kernel string, defines []string) {
	macros := objectMacros(src, defines)
	for _, k := range clc.Defined(src) {
		if expand(macros, k.Name) != kernel {
			continue
		}
		for i, p := range k.Params {
			if i < len(args) {
				args[i].Param = p.Name
			}
		}
		return
	}
}
