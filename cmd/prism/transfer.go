package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// prism import and prism export: the JSON report in and out of the results store.

type importOptions struct{ inputFlags }

func newImportCmd() *cobra.Command {
	opts := &importOptions{}
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Record saved bench reports in the results store",
		Long: `Record each report file ('prism bench --json', a --split or collective run's, or
scripts/vendor.py's) in the results store as a run of its own, as if it had just run:
its date, host, commit and devices are the report's. Prints each file's run ID. A file
that is not a report is an error and records nothing; the others are recorded all the
same.`,
		Example: `  prism import results/*.json
  prism import run.json && prism compare baseline:main @last`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			rr, err := opts.reader()
			if err != nil {
				return err
			}
			s, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer s.Close()
			var errs []error
			for _, path := range args {
				rep, err := rr.ReadFile(path)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				id, err := s.Record(storeContext(cmd), rep)
				if err != nil {
					return errors.Join(append(errs, storeError{fmt.Errorf("%s: %w", path, err)})...)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: run %d\n", path, id)
			}
			return errors.Join(errs...)
		},
	}
	opts.addInput(cmd.Flags())
	return cmd
}

type exportOptions struct{ dir string }

func newExportCmd() *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export RUN... [-o DIR]",
		Short: "Write runs of the results store as JSON reports",
		Long: `Write each run as the JSON report it was recorded from ('prism bench --json', the
current schema): one run to stdout, or with -o DIR each run to DIR/run-ID.json (DIR is
created). RUN is a run reference: ` + refForms + `.`,
		Example: `  prism export @last > last.json
  prism export @previous @last -o reports/
  prism export baseline:main | prism report /dev/stdin --markdown`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 && opts.dir == "" {
				return usageError{fmt.Errorf("%d runs: -o DIR writes each to a file of its own (one run goes to stdout)", len(args))}
			}
			r := &refReader{cmd: cmd}
			defer r.close()
			if opts.dir != "" {
				if err := os.MkdirAll(opts.dir, 0o755); err != nil {
					return fmt.Errorf("-o: %w", err)
				}
			}
			for _, ref := range args {
				id, err := r.resolve(ref)
				if err != nil {
					return err
				}
				rep, err := r.st.Export(storeContext(cmd), id)
				if err != nil {
					return storeError{err}
				}
				if opts.dir == "" {
					return rep.WriteJSON(cmd.OutOrStdout())
				}
				var buf bytes.Buffer
				if err := rep.WriteJSON(&buf); err != nil {
					return err
				}
				path := filepath.Join(opts.dir, fmt.Sprintf("run-%d.json", id))
				if err := writeFileAtomic(path, buf.Bytes()); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", ref, path)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&opts.dir, "out", "o", "", "write each run to `DIR`/run-ID.json")
	return cmd
}
