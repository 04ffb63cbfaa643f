package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/engine"
)

func newBaselineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "baseline",
		Short: "Name runs of the results store (main, release-1.2) to compare against",
		Long: `A baseline is a name for a run of the results store: the reference that later runs
are compared with. 'prism baseline set NAME RUN' names a run (replacing the run the name
had), 'prism baseline list' lists the names. A baseline is then a run reference like any
other: NAME, baseline:NAME or @NAME, wherever a report file is taken.

A name is letters, digits and . _ - /, not only digits (those are run IDs) and not
starting with @.`,
		Example: `  prism baseline set main @last
  prism baseline set release-1.2 42
  prism baseline list
  prism compare baseline:main @last`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newBaselineSetCmd(), newBaselineListCmd())
	return cmd
}

func newBaselineSetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "set NAME RUN",
		Short: "Name a run of the results store",
		Long:  `Name the run RUN NAME, replacing the run the name had. RUN is a run reference: ` + refForms + `.`,
		Example: `  prism baseline set main @last
  prism baseline set nightly 3f9c2a1`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := &refReader{cmd: cmd}
			defer r.close()
			id, err := r.resolve(args[1])
			if err != nil {
				return err
			}
			err = r.st.SetBaseline(storeContext(cmd), args[0], id)
			switch {
			case errors.Is(err, engine.ErrInvalidArg):
				return usageError{err}
			case err != nil:
				return storeError{err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "baseline %s is run %d\n", args[0], id)
			return nil
		},
	}
}

type baselineListOptions struct{ outputFlags }

// baselineJSON is a baseline as prism baseline list --json prints it.
type baselineJSON struct {
	Name string    `json:"name"`
	Run  int64     `json:"run"`
	Set  time.Time `json:"set"`
}

func newBaselineListCmd() *cobra.Command {
	opts := &baselineListOptions{}
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the baselines of the results store",
		Example: `  prism baseline list --json`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.check(cmd.Flags()); err != nil {
				return err
			}
			s, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer s.Close()
			bs, err := s.Baselines(storeContext(cmd))
			if err != nil {
				return storeError{err}
			}
			return opts.write(cmd, func(w io.Writer) error {
				if opts.json {
					out := []baselineJSON{}
					for _, b := range bs {
						out = append(out, baselineJSON{b.Name, int64(b.Run), b.Set})
					}
					return writeJSON(w, out)
				}
				if len(bs) == 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "no baseline is set in %s ('prism baseline set main @last' sets one)\n", displayPath(s.Path()))
					return nil
				}
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tRUN\tSET")
				for _, b := range bs {
					fmt.Fprintf(tw, "%s\t%d\t%s\n", safeText(b.Name), b.Run, b.Set.Local().Format("2006-01-02 15:04"))
				}
				return tw.Flush()
			})
		},
	}
	opts.add(cmd.Flags(), "json")
	return cmd
}
