package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
	"github.com/prism-compute/prism/platform"
	"github.com/spf13/cobra"
)

type kernelsOptions struct {
	device string
	outputFlags
}

func newKernelsCmd() *cobra.Command {
	opts := &kernelsOptions{}
	cmd := &cobra.Command{
		Use:   "kernels [FAMILY]",
		Short: "List the kernel suite: families, operations, variants and tunables",
		Long: `List every operation of the suite, grouped by family, with what it computes, what
its size means, its default and quick sizes, and each family's variants and tunables (the
-D defines the host picks per device). With a FAMILY, print that family's whole header:
purpose, kernel arguments, tunables with defaults, variants and launch ranges.

An operation may have several implementations, its variants, in priority order: CUDA C++
ones that use NVIDIA-only instructions (warp shuffles, tensor cores), vendor-library
baselines (cuBLAS, CLBlast, ...), and last the portable OpenCL C kernel that every device
runs. With --device, each operation's variants are checked against that device: the one
that would run there is marked with *, and the reason each other one does not apply is
printed below its family. 'prism run' and 'prism bench' take --variant NAME and --portable.

Operation names are family/op/type; 'prism run' and 'prism bench --ops' take them, or a
family, a prefix ("gemm/nn") or a glob ("*/*/float64").`,
		Example: `  prism kernels
  prism kernels gemm
  prism kernels reduce --device cuda:0
  prism kernels --json | jq '.[].name'`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return kernelsRun(cmd, opts, args)
		},
	}
	opts.add(cmd.Flags(), "json")
	cmd.Flags().StringVar(&opts.device, "device", "", "check each operation's variants against this device (ID, backend or class)")
	return cmd
}

// opJSON is one operation in `prism kernels --json`.
type opJSON struct {
	Name        string        `json:"name"`
	Family      string        `json:"family"`
	Type        string        `json:"type"`
	Doc         string        `json:"doc"`
	Size        string        `json:"size"`
	DefaultSize int           `json:"default_size"`
	QuickSize   int           `json:"quick_size"`
	Variants    []variantJSON `json:"variants"`
}

// variantJSON is one variant of an operation in `prism kernels --json`; Runs and
// NotApplicable are set with --device.
type variantJSON struct {
	Name          string `json:"name"`
	Doc           string `json:"doc"`
	Dialect       string `json:"dialect"`
	Backend       string `json:"backend,omitempty"`
	MinCompute    int    `json:"min_compute,omitempty"`
	Vendor        bool   `json:"vendor,omitempty"`
	Tunables      string `json:"tunables,omitempty"`
	Runs          bool   `json:"runs,omitempty"`
	NotApplicable string `json:"not_applicable,omitempty"`
}

// variantsOf describes op's variants, checked against dev when it is not nil: which one
// Pick chooses there, and why each other one does not apply.
func variantsOf(op kernels.Op, dev *engine.Device) []variantJSON {
	var picked string
	if dev != nil {
		if v, err := op.Pick(dev, kernels.Params{}); err == nil {
			picked = v.Name
		}
	}
	out := make([]variantJSON, len(op.Variants))
	for i, v := range op.Variants {
		out[i] = variantJSON{Name: v.Name, Doc: v.Doc, Dialect: v.Dialect.String(), Backend: v.Backend,
			MinCompute: v.MinCompute, Vendor: v.Vendor, Tunables: v.Tunables, Runs: v.Name == picked}
		if dev != nil {
			if err := v.Fits(dev); err != nil {
				out[i].NotApplicable = strings.TrimSuffix(strings.TrimPrefix(err.Error(), "kernels: variant "+v.Name+" "), ": "+engine.ErrUnsupported.Error())
			}
		}
	}
	return out
}

// variantCell is the variants column of the listing: names in priority order, the one that
// runs on the device marked with *.
func variantCell(vs []variantJSON) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
		if v.Runs {
			names[i] = "*" + v.Name
		}
	}
	return strings.Join(names, " ")
}

func kernelsRun(cmd *cobra.Command, opts *kernelsOptions, args []string) error {
	if err := opts.check(cmd.Flags()); err != nil {
		return err
	}
	return opts.write(cmd, func(out io.Writer) error { return kernelsPrint(cmd, opts, args, out) })
}

// kernelsPrint writes the listing to out.
func kernelsPrint(cmd *cobra.Command, opts *kernelsOptions, args []string, out io.Writer) error {
	ops := suite.Ops()
	var dev *engine.Device
	if opts.device != "" {
		var err error
		if dev, err = platform.Open(cmd.Context(), opts.device); err != nil {
			return err
		}
		defer dev.Close()
	}
	if len(args) == 1 {
		f, err := suite.Family(args[0])
		if err != nil {
			return usageError{err}
		}
		if ops, err = suite.Match(args[0]); err != nil {
			return usageError{err}
		}
		if !opts.json {
			fmt.Fprint(out, kernels.Header(f.Source))
			fmt.Fprintln(out)
		}
	}
	if opts.json {
		list := make([]opJSON, len(ops))
		for i, op := range ops {
			list[i] = opJSON{op.Name, op.Family, op.Type, op.Doc, op.SizeDoc, op.DefaultSize, op.QuickSize, variantsOf(op, dev)}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if dev != nil {
		fmt.Fprintf(out, "Variants checked against %s (%s); * marks the one that runs there.\n\n", dev.ID(), dev.Info().Name)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	family := ""
	var notes []string // why variants of the family do not apply on dev
	flush := func() {
		tw.Flush()
		if len(notes) > 0 {
			fmt.Fprintf(out, "  not applicable on %s:\n", dev.ID())
			for _, n := range notes {
				fmt.Fprintf(out, "    %s\n", n)
			}
		}
		notes = nil
	}
	for _, op := range ops {
		if op.Family != family {
			if family != "" {
				flush()
				fmt.Fprintln(out)
			}
			family = op.Family
			src := ""
			if f, err := suite.Family(family); err == nil {
				src = f.Source
			}
			fmt.Fprintf(out, "%s\n", strings.SplitN(kernels.Header(src), "\n", 2)[0])
			if len(args) == 0 {
				if t := kernels.HeaderSection(src, "Tunables"); t != "" {
					fmt.Fprintf(out, "  %s\n", strings.ReplaceAll(t, "\n", "\n  "))
				}
			}
			fmt.Fprintln(tw, "  operation\tvariants\tcomputes\tsize\tdefault\tquick")
		}
		vs := variantsOf(op, dev)
		for _, v := range vs {
			if v.NotApplicable != "" {
				notes = append(notes, fmt.Sprintf("%s %s: %s", op.Name, v.Name, v.NotApplicable))
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", op.Name, variantCell(vs), op.Doc, op.SizeDoc, bench.FormatSize(op.DefaultSize), bench.FormatSize(op.QuickSize))
	}
	flush()
	return nil
}
