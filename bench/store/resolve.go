package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
)

// Resolve returns the run that ref names:
//
//   - "@last": the newest run (by start, then ID); "@previous": the one before it;
//     "@last~N": the Nth before the newest ("@last~0" is "@last");
//   - a run's ID ("42");
//   - a baseline's name, plain ("main") or prefixed ("baseline:main", "@main");
//   - a commit or a prefix of at least 4 hex digits ("3f9c2a1"): the newest run of that
//     commit (a -dirty build of it counts as the commit).
//
// A ref that names nothing is an error wrapping ErrNotFound; a malformed one, or a commit
// prefix of several commits (the error lists them), one wrapping engine.ErrInvalidArg.
func (s *Store) Resolve(ctx context.Context, ref string) (RunID, error) {
	ref = strings.TrimSpace(ref)
	switch {
	case ref == "":
		return 0, fmt.Errorf("store: no run given (a run ID, @last, @previous, @last~N, a commit or a baseline): %w", engine.ErrInvalidArg)
	case ref == "@last":
		return s.nth(ctx, ref, 0)
	case ref == "@previous":
		return s.nth(ctx, ref, 1)
	case strings.HasPrefix(ref, "@last~"):
		n, err := strconv.Atoi(strings.TrimPrefix(ref, "@last~"))
		if err != nil || n < 0 {
			return 0, fmt.Errorf("store: %q: @last~N takes a count of runs before the last (0, 1, 2, ...): %w", ref, engine.ErrInvalidArg)
		}
		return s.nth(ctx, ref, n)
	case strings.HasPrefix(ref, "@"):
		return s.baseline(ctx, strings.TrimPrefix(ref, "@"))
	case strings.HasPrefix(ref, "baseline:"):
		return s.baseline(ctx, strings.TrimPrefix(ref, "baseline:"))
	}
	if n, err := strconv.ParseInt(ref, 10, 64); err == nil && n > 0 {
		var id int64
		err := s.db.QueryRowContext(ctx, s.d.q("SELECT id FROM runs WHERE id = ?"), n).Scan(&id)
		if err == nil {
			return RunID(id), nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, s.fail("looking up run "+ref, err)
		}
		if len(ref) < 4 { // too short to be taken for a commit
			return 0, fmt.Errorf("store: %s: no run %s: %w", s.path, ref, ErrNotFound)
		}
	}
	var n int
	if err := s.db.QueryRowContext(ctx, s.d.q("SELECT COUNT(*) FROM baselines WHERE name = ?"), ref).Scan(&n); err != nil {
		return 0, s.fail("looking up baseline "+ref, err)
	}
	if n > 0 {
		return s.baseline(ctx, ref)
	}
	if len(ref) >= 4 && isHex(ref) {
		return s.commit(ctx, ref)
	}
	return 0, fmt.Errorf("store: %s: %q is no run ID, commit or baseline recorded (baselines: %s; a run is a run ID, @last, @previous, @last~N, a commit prefix or a baseline): %w",
		s.path, ref, s.baselineNames(ctx), ErrNotFound)
}

// baselineNames lists the baselines set, for errors: "those set: main, nightly" or "none is
// set".
func (s *Store) baselineNames(ctx context.Context) string {
	bs, _ := s.Baselines(ctx)
	if len(bs) == 0 {
		return "none is set"
	}
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.Name
	}
	return "those set: " + strings.Join(names, ", ")
}

// nth returns the run n before the newest.
func (s *Store) nth(ctx context.Context, ref string, n int) (RunID, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, s.d.q("SELECT id FROM runs ORDER BY started_ns DESC, id DESC LIMIT 1 OFFSET ?"), n).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		var total int
		if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM runs").Scan(&total); err != nil {
			return 0, s.fail("counting runs", err)
		}
		return 0, fmt.Errorf("store: %s: %s: the store holds %d runs: %w", s.path, ref, total, ErrNotFound)
	}
	if err != nil {
		return 0, s.fail("looking up "+ref, err)
	}
	return RunID(id), nil
}

// commit returns the newest run of the one commit that starts with prefix.
func (s *Store) commit(ctx context.Context, prefix string) (RunID, error) {
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT DISTINCT vcs_commit FROM runs WHERE vcs_commit LIKE ? ESCAPE '\'`),
		escapeLike(strings.ToLower(prefix))+"%")
	if err != nil {
		return 0, s.fail("looking up commit "+prefix, err)
	}
	seen := map[string]bool{}
	var commits []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return 0, s.fail("looking up commit "+prefix, err)
		}
		if c = strings.TrimSuffix(c, "-dirty"); !seen[c] {
			seen[c] = true
			commits = append(commits, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, s.fail("looking up commit "+prefix, err)
	}
	switch len(commits) {
	case 0:
		return 0, fmt.Errorf("store: %s: no run of a commit %s...: %w", s.path, prefix, ErrNotFound)
	case 1:
	default:
		return 0, fmt.Errorf("store: commit prefix %s is ambiguous: %s: %w", prefix, strings.Join(commits, ", "), engine.ErrInvalidArg)
	}
	var id int64
	err = s.db.QueryRowContext(ctx, s.d.q(`SELECT id FROM runs WHERE vcs_commit = ? OR vcs_commit = ?
	ORDER BY started_ns DESC, id DESC LIMIT 1`), commits[0], commits[0]+"-dirty").Scan(&id)
	if err != nil {
		return 0, s.fail("looking up commit "+prefix, err)
	}
	return RunID(id), nil
}

// isHex reports whether s is hex digits only.
func isHex(s string) bool {
	for _, c := range strings.ToLower(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Baseline is a named run ("main"), the reference of comparisons and gates.
type Baseline struct {
	Name string
	Run  RunID
	Set  time.Time // when the name was last set, UTC
}

// baseline returns the run of the baseline named name.
func (s *Store) baseline(ctx context.Context, name string) (RunID, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, s.d.q("SELECT run_id FROM baselines WHERE name = ?"), name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("store: %s: no baseline %q (%s): %w", s.path, name, s.baselineNames(ctx), ErrNotFound)
	}
	if err != nil {
		return 0, s.fail("looking up baseline "+name, err)
	}
	return RunID(id), nil
}

// SetBaseline names run id name ("main"), replacing the run the name had. A name is
// letters, digits and . _ - /, not only digits (those are run IDs) and not starting with
// @; errors wrap engine.ErrInvalidArg, or ErrNotFound for a run the store does not hold.
func (s *Store) SetBaseline(ctx context.Context, name string, id RunID) error {
	if err := checkBaselineName(name); err != nil {
		return err
	}
	var n int
	if err := s.db.QueryRowContext(ctx, s.d.q("SELECT COUNT(*) FROM runs WHERE id = ?"), int64(id)).Scan(&n); err != nil {
		return s.fail("looking up run", err)
	}
	if n == 0 {
		return fmt.Errorf("store: %s: no run %d to name %q: %w", s.path, id, name, ErrNotFound)
	}
	if _, err := s.db.ExecContext(ctx, s.d.upsert("baselines", "name", "run_id", "set_ns"), name, int64(id), time.Now().UnixNano()); err != nil {
		return s.fail("setting baseline "+name, err)
	}
	return nil
}

// checkBaselineName returns an error for a name SetBaseline refuses.
func checkBaselineName(name string) error {
	bad := name == "" || len(name) > 100 || strings.HasPrefix(name, "@") || strings.HasPrefix(name, "baseline:")
	digits := true
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-/", c)
		bad = bad || !ok
		digits = digits && c >= '0' && c <= '9'
	}
	if bad || digits {
		return fmt.Errorf("store: baseline name %q: use letters, digits and . _ - / (not digits alone, which name runs): %w", name, engine.ErrInvalidArg)
	}
	return nil
}

// Baselines returns the baselines set, by name.
func (s *Store) Baselines(ctx context.Context) ([]Baseline, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT name, run_id, set_ns FROM baselines ORDER BY name")
	if err != nil {
		return nil, s.fail("listing baselines", err)
	}
	defer rows.Close()
	var out []Baseline
	for rows.Next() {
		var b Baseline
		var set int64
		if err := rows.Scan(&b.Name, &b.Run, &set); err != nil {
			return nil, s.fail("listing baselines", err)
		}
		b.Set = fromNanos(set)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("listing baselines", err)
	}
	return out, nil
}
