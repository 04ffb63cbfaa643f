package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/store"
	"github.com/prism-compute/prism/engine"
)

// Run references: wherever a command takes a report file (report, compare, plot, export,
// baseline set), an argument that is an existing file is read as one; otherwise one that
// looks like a run reference is resolved in the results store and its report exported.

// refForms lists the run references accepted, for help and errors.
const refForms = "@last, @previous, @last~N (the Nth run before the last), a run ID (42), " +
	"a commit or a prefix of at least 4 hex digits (3f9c2a1), a baseline (main, baseline:main, @main)"

// plainRef matches a plain baseline name: a word without a path's slash or a file's
// extension.
var plainRef = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// looksLikeRef reports whether arg, which is not an existing file, is to be read as a run
// reference rather than as a missing file.
func looksLikeRef(arg string) bool {
	switch {
	case strings.HasPrefix(arg, "@"), strings.HasPrefix(arg, "baseline:"):
		return true
	case strings.HasSuffix(strings.ToLower(arg), ".json"):
		return false
	}
	return plainRef.MatchString(arg)
}

// isFile reports whether arg names an existing file (or anything but a missing path: a
// directory is a file's error to report).
func isFile(arg string) bool {
	_, err := os.Stat(arg)
	return err == nil || !errors.Is(err, os.ErrNotExist)
}

// refReader reads report arguments, files or run references, opening the store at the
// first reference.
type refReader struct {
	cmd *cobra.Command
	rr  bench.ReportReader
	st  *store.Store
}

// close closes the store where a reference opened it.
func (r *refReader) close() {
	if r.st != nil {
		r.st.Close()
	}
}

// store returns the store, opened on first use.
func (r *refReader) store() (*store.Store, error) {
	if r.st == nil {
		s, err := openStore(r.cmd)
		if err != nil {
			return nil, err
		}
		r.st = s
	}
	return r.st, nil
}

// read returns the report of arg and the name its errors and notes give it: the file's
// path, or "@last (run 42)".
func (r *refReader) read(arg string) (*bench.Report, string, error) {
	rep, name, _, err := r.readRun(arg)
	return rep, name, err
}

// readRun is read, with the run's ID in the store: 0 for a file.
func (r *refReader) readRun(arg string) (*bench.Report, string, store.RunID, error) {
	if isFile(arg) || !looksLikeRef(arg) {
		rep, err := r.rr.ReadFile(arg)
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", 0, fmt.Errorf("%w (nor is it a run in the results store: %s)", err, refForms)
		}
		return rep, arg, 0, err
	}
	id, err := r.resolve(arg)
	if err != nil {
		return nil, "", 0, err
	}
	rep, err := r.st.Export(storeContext(r.cmd), id)
	if err != nil {
		return nil, "", 0, storeError{err}
	}
	name := fmt.Sprintf("run %d", id)
	if arg != strconv.FormatInt(int64(id), 10) {
		name = fmt.Sprintf("%s (run %d)", arg, id)
	}
	return rep, name, id, nil
}

// resolve returns the run that ref names in the store, with errors in the user's terms:
// a reference that names nothing (exit code 1) or a malformed or ambiguous one (usage)
// lists the forms accepted.
func (r *refReader) resolve(ref string) (store.RunID, error) {
	s, err := r.store()
	if err != nil {
		if errors.As(err, new(usageError)) {
			return 0, usageError{fmt.Errorf("%s is no file, and run references need the store: %w", ref, err)}
		}
		return 0, err
	}
	id, err := s.Resolve(storeContext(r.cmd), ref)
	switch {
	case err == nil:
		return id, nil
	case errors.Is(err, store.ErrNotFound):
		return 0, fmt.Errorf("%s is no file, and no run in the store: %w; a run is named by %s", ref, err, refForms)
	case errors.Is(err, engine.ErrInvalidArg):
		return 0, usageError{fmt.Errorf("%s: %w; a run is named by %s", ref, err, refForms)}
	}
	return 0, storeError{err}
}

// readReports reads and merges the report arguments, files or run references, with the
// flag's limit on files; a file above it is an error that names the flag.
func (o *inputFlags) readReports(cmd *cobra.Command, args ...string) (*bench.Report, error) {
	reps, names, err := o.readEach(cmd, args...)
	if err != nil {
		return nil, err
	}
	return bench.Merge(names, reps...)
}

// readEach reads each report argument, file or run reference, and returns the reports and
// their names (the file, or "@last (run 42)").
func (o *inputFlags) readEach(cmd *cobra.Command, args ...string) ([]*bench.Report, []string, error) {
	if len(args) == 0 {
		return nil, nil, fmt.Errorf("bench: no report to read: %w", engine.ErrInvalidArg)
	}
	rr, err := o.reader()
	if err != nil {
		return nil, nil, err
	}
	r := &refReader{cmd: cmd, rr: rr}
	defer r.close()
	reps, names := make([]*bench.Report, len(args)), make([]string, len(args))
	for i, a := range args {
		rep, name, err := r.read(a)
		if errors.Is(err, bench.ErrTooLarge) {
			return nil, nil, fmt.Errorf("%w (raise the limit with --max-input SIZE)", err)
		}
		if err != nil {
			return nil, nil, err
		}
		reps[i], names[i] = rep, name
	}
	return reps, names, nil
}

// refCompletionTimeout bounds the store's answer to a completion.
const refCompletionTimeout = 2 * time.Second

// addRefCompletions completes run references (and files) as the arguments of the commands
// that take them.
func addRefCompletions(root *cobra.Command) {
	for _, c := range root.Commands() {
		switch c.Name() {
		case "report", "compare", "plot", "export":
			c.ValidArgsFunction = completeRefs
		case "baseline":
			for _, sub := range c.Commands() {
				if sub.Name() == "set" {
					sub.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
						if len(args) != 1 { // NAME first, then the run
							return nil, cobra.ShellCompDirectiveNoFileComp
						}
						refs, _ := completeRefs(cmd, args, toComplete)
						return refs, cobra.ShellCompDirectiveNoFileComp
					}
				}
			}
		}
	}
}

// completeRefs offers @last, @previous, the baselines and the newest runs of the store
// (with their date, host and devices), files besides.
func completeRefs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	out := refCandidates(cmd)
	var keep []string
	for _, c := range out {
		if strings.HasPrefix(c, toComplete) {
			keep = append(keep, c)
		}
	}
	return keep, cobra.ShellCompDirectiveDefault
}

// refCandidates returns the references a completion offers, each with its description.
func refCandidates(cmd *cobra.Command) []string {
	out := []string{"@last\tthe newest run", "@previous\tthe run before it"}
	t, err := storeTargetOf(cmd)
	if err != nil || t.off != "" {
		return out
	}
	if _, err := os.Stat(t.dsn); err != nil && !strings.Contains(t.dsn, "://") {
		return out // no store yet: none is created for a completion
	}
	ctx, cancel := context.WithTimeout(storeContext(cmd), refCompletionTimeout)
	defer cancel()
	s, err := store.Open(ctx, t.dsn)
	if err != nil {
		return out
	}
	defer s.Close()
	if bs, err := s.Baselines(ctx); err == nil {
		for _, b := range bs {
			out = append(out, fmt.Sprintf("@%s\tbaseline: run %d", b.Name, b.Run))
		}
	}
	if runs, err := s.Runs(ctx, store.Filter{Limit: 20}); err == nil {
		for _, r := range runs {
			out = append(out, fmt.Sprintf("%d\t%s %s %s", r.ID, r.Date.Local().Format("2006-01-02 15:04"), r.Host, deviceIDsOf(r.Devices)))
		}
	}
	return out
}
