package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
	"github.com/spf13/cobra"
)

type kernelsOptions struct {
	json bool
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

Operation names are family/op/type; 'prism run' and 'prism bench --ops' take them, or a
family, a prefix ("gemm/nn") or a glob ("*/*/float64").`,
		Example: `  prism kernels
  prism kernels gemm
  prism kernels --json | jq '.[].name'`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return kernelsRun(cmd, opts, args)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the operations as JSON")
	return cmd
}

// opJSON is one operation in `prism kernels --json`.
type opJSON struct {
	Name        string `json:"name"`
	Family      string `json:"family"`
	Type        string `json:"type"`
	Doc         string `json:"doc"`
	Size        string `json:"size"`
	DefaultSize int    `json:"default_size"`
	QuickSize   int    `json:"quick_size"`
}

func kernelsRun(cmd *cobra.Command, opts *kernelsOptions, args []string) error {
	out := cmd.OutOrStdout()
	ops := suite.Ops()
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
			list[i] = opJSON{op.Name, op.Family, op.Type, op.Doc, op.SizeDoc, op.DefaultSize, op.QuickSize}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	family := ""
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, op := range ops {
		if op.Family != family {
			if family != "" {
				tw.Flush()
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
			fmt.Fprintln(tw, "  operation\tcomputes\tsize\tdefault\tquick")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", op.Name, op.Doc, op.SizeDoc, bench.FormatSize(op.DefaultSize), bench.FormatSize(op.QuickSize))
	}
	return tw.Flush()
}
