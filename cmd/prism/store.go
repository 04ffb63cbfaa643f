package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/store"
)

// The results store: where bench, run and exec record their reports, and what runs,
// history, baseline, import, export, store and the run references of report, compare and
// plot read. It is opened only by the commands that use it, when they use it.

// envStore names the store: a SQLite file's path or a DSN, or "off" for none.
const envStore = "PRISM_STORE"

// storeOff is the value of --store and PRISM_STORE that turns the store off.
const storeOff = "off"

// storeError marks a failure of the results store (it cannot be opened, read or written,
// or it is damaged): exit code exitStore.
type storeError struct{ error }

func (e storeError) Unwrap() error { return e.error }

// addStoreFlags declares the root's persistent flags that choose the store.
func addStoreFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.String("store", "", "the results store: a SQLite file or a DSN, or off (default: PRISM_STORE, else "+displayDefaultStore()+")")
	f.Bool("no-store", false, "record nothing and read no run references (as PRISM_STORE=off)")
}

// displayDefaultStore is the default store's file as help shows it, without creating its
// directory.
func displayDefaultStore() string {
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return displayPath(filepath.Join(dir, "prism", "results.db"))
	}
	return "~/.local/share/prism/results.db"
}

// storeTarget is the store a command uses: dsn, or none where off says which setting
// turned it off ("--no-store", "PRISM_STORE=off").
type storeTarget struct {
	dsn string
	off string
}

// storeTargetOf returns the store that cmd's flags and the environment choose: --no-store,
// else --store, else PRISM_STORE, else store.DefaultPath().
func storeTargetOf(cmd *cobra.Command) (storeTarget, error) {
	no, given := cmd.Flag("no-store"), cmd.Flag("store")
	if no != nil && no.Changed && given != nil && given.Changed {
		return storeTarget{}, usageError{errors.New("--store and --no-store exclude each other")}
	}
	switch {
	case no != nil && no.Value.String() == "true":
		return storeTarget{off: "--no-store"}, nil
	case given != nil && given.Changed:
		v := strings.TrimSpace(given.Value.String())
		if v == "" {
			return storeTarget{}, usageError{errors.New("--store needs a SQLite file or a DSN (or off)")}
		}
		if v == storeOff {
			return storeTarget{off: "--store off"}, nil
		}
		return storeTarget{dsn: v}, nil
	}
	if v := strings.TrimSpace(os.Getenv(envStore)); v != "" {
		if v == storeOff {
			return storeTarget{off: envStore + "=off"}, nil
		}
		return storeTarget{dsn: v}, nil
	}
	p, err := store.DefaultPath()
	if err != nil {
		return storeTarget{}, storeError{err}
	}
	return storeTarget{dsn: p}, nil
}

// openStore opens the store cmd uses for reading or writing. A store turned off is an
// error that says how it was turned off, for the commands that need one.
func openStore(cmd *cobra.Command) (*store.Store, error) {
	t, err := storeTargetOf(cmd)
	if err != nil {
		return nil, err
	}
	if t.off != "" {
		return nil, usageError{fmt.Errorf("the results store is off (%s): this needs it (--store FILE names one)", t.off)}
	}
	s, err := store.Open(storeContext(cmd), t.dsn)
	if err != nil {
		return nil, storeError{err}
	}
	return s, nil
}

// storeContext is the context of the store's work: the command's, without its
// cancellation, so that a run interrupted by a signal is still recorded (a second signal
// exits at once).
func storeContext(cmd *cobra.Command) context.Context {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithoutCancel(ctx)
}

// recordReport records rep in the store cmd uses, after the report was written, and says
// where on stderr ("run 42 in ~/.local/share/prism/results.db"). Nothing is recorded where
// the store is off. A store that cannot be written is an error (exit code exitStore) that
// names the store and the cause.
func recordReport(cmd *cobra.Command, rep *bench.Report) error {
	t, err := storeTargetOf(cmd)
	if err != nil || t.off != "" {
		return err
	}
	ctx := storeContext(cmd)
	s, err := store.Open(ctx, t.dsn)
	if err != nil {
		return notRecorded(err)
	}
	defer s.Close()
	id, err := s.Record(ctx, rep)
	if err != nil {
		return notRecorded(err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "run %d in %s\n", id, displayPath(s.Path()))
	return nil
}

// notRecorded is the error of a run the store could not record.
func notRecorded(err error) error {
	return storeError{fmt.Errorf("the run was not recorded (its report was written; --no-store or %s=off runs without the store): %w", envStore, err)}
}

// displayPath shortens a store's file for people: the home directory as ~, and a DSN's
// password left out.
func displayPath(p string) string {
	if strings.Contains(p, "://") {
		if u, err := url.Parse(p); err == nil {
			return u.Redacted()
		}
		return p
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && home != "/" {
		if rest, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
			return "~" + string(filepath.Separator) + rest
		}
	}
	return p
}
