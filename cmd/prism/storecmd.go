package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench/store"
)

func newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Where the results store is, and whether it is sound",
		Long: `Every prism bench, run and exec (splits and collectives included) records its report in
the results store once it has written it: a SQLite file, by default
$XDG_DATA_HOME/prism/results.db (~/.local/share/prism/results.db), and prints where
("run 42 in ~/.local/share/prism/results.db"). --store FILE or the environment variable
PRISM_STORE names another (a path or a DSN); --no-store or PRISM_STORE=off records
nothing. An interrupted run is recorded too, marked interrupted.

When the store cannot be written (locked by another process past its timeout, damaged,
unwritable, its disk full), the run's report is written all the same (the table, or the
JSON asked for), then the error names the store and the cause, and prism exits with
code 6.

'prism store path' prints the store the settings choose; 'prism store check' verifies
its integrity (SQLite's own checks and the store's rules) and exits with code 6 when it
fails.`,
		Example: `  prism store path
  prism store check
  PRISM_STORE=/shared/results.db prism bench --quick
  prism bench --quick --no-store`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "path",
		Short: "Print the results store that --store, PRISM_STORE or the default choose",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := storeTargetOf(cmd)
			if err != nil {
				return err
			}
			if t.off != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "off (%s)\n", t.off)
				return nil
			}
			p := t.dsn // whole, for scripts: sqlite3 "$(prism store path)"
			if strings.Contains(p, "://") {
				p = displayPath(p) // without a password
			}
			fmt.Fprintln(cmd.OutOrStdout(), p)
			return nil
		},
	}, &cobra.Command{
		Use:   "check",
		Short: "Verify the results store's integrity",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.Check(storeContext(cmd)); err != nil {
				if errors.Is(err, store.ErrDamaged) {
					return storeError{fmt.Errorf("%w (export what still reads with 'prism export', then start a new store)", err)}
				}
				return storeError{err}
			}
			runs, err := s.Runs(storeContext(cmd), store.Filter{})
			if err != nil {
				return storeError{err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok, %d runs\n", displayPath(s.Path()), len(runs))
			return nil
		},
	})
	return cmd
}
