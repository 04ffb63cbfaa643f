package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
)

// Filter selects runs for Runs. Its zero value selects every run.
type Filter struct {
	// Device keeps runs with a device of this ID ("opencl:0:0", "cuda:0") or whose name
	// holds it, case-insensitively ("h100", "pthread").
	Device string
	// Case keeps runs with a result of a matching case: a part of its name ("triad",
	// "stream/triad") or a pattern where * stands for any text ("gemm/*/float32").
	Case string
	// Commit keeps runs of a commit that starts with it.
	Commit string
	// Host keeps runs of this host.
	Host string
	// Since and Until keep runs started at or after Since and before Until; zero: no bound.
	Since, Until time.Time
	// Limit is the most runs returned, the newest; 0: every run.
	Limit int
}

// Device is a device of a run as Runs and History name it.
type Device struct {
	ID          string
	Name        string
	Backend     string
	Fingerprint string
}

// RunSummary is one run as Runs lists it.
type RunSummary struct {
	ID      RunID
	Date    time.Time // the start of the run (bench.Report.Date), UTC
	Host    string
	Prism   string // Prism's version
	Commit  string
	Command []string
	Devices []Device
	// Results counts the run's cases, splits and collectives (a vendor library's run of a
	// case beside Prism's, --vendor, is not counted apart).
	Results int
	// Interrupted marks a run cancelled before it finished; InterruptedAt is the step that
	// was running.
	Interrupted   bool
	InterruptedAt string
}

// like turns a user's pattern into a LIKE pattern (escaped with \): * is any text; without
// a *, the text may stand anywhere.
func like(pattern string) string {
	esc := escapeLike(strings.ToLower(pattern))
	if strings.Contains(esc, "*") {
		return strings.ReplaceAll(esc, "*", "%")
	}
	return "%" + esc + "%"
}

// escapeLike escapes LIKE's wildcards in s, with \ as the escape.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// Runs returns the runs that f selects, newest first (by start, then by ID).
func (s *Store) Runs(ctx context.Context, f Filter) ([]RunSummary, error) {
	if f.Limit < 0 {
		return nil, fmt.Errorf("store: limit %d must not be negative: %w", f.Limit, engine.ErrInvalidArg)
	}
	var where []string
	var args []any
	if f.Device != "" {
		where = append(where, `EXISTS (SELECT 1 FROM devices d WHERE d.run_id = runs.id AND (d.device_id = ? OR LOWER(d.name) LIKE ? ESCAPE '\'))`)
		args = append(args, f.Device, like(f.Device))
	}
	if f.Case != "" {
		where = append(where, `EXISTS (SELECT 1 FROM results r WHERE r.run_id = runs.id AND r.case_name LIKE ? ESCAPE '\')`)
		args = append(args, like(f.Case))
	}
	if f.Commit != "" {
		where = append(where, `vcs_commit LIKE ? ESCAPE '\'`)
		args = append(args, escapeLike(strings.ToLower(f.Commit))+"%")
	}
	if f.Host != "" {
		where = append(where, "host = ?")
		args = append(args, f.Host)
	}
	if !f.Since.IsZero() {
		where = append(where, "started_ns >= ?")
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		where = append(where, "started_ns < ?")
		args = append(args, f.Until.UnixNano())
	}
	q := `SELECT id, started_ns, host, prism_version, vcs_commit, command, interrupted, interrupted_at FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY started_ns DESC, id DESC"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.d.q(q), args...)
	if err != nil {
		return nil, s.fail("listing runs", err)
	}
	var out []RunSummary
	index := map[RunID]int{}
	for rows.Next() {
		var rs RunSummary
		var started int64
		var command string
		var interrupted int
		if err := rows.Scan(&rs.ID, &started, &rs.Host, &rs.Prism, &rs.Commit, &command, &interrupted, &rs.InterruptedAt); err != nil {
			rows.Close()
			return nil, s.fail("listing runs", err)
		}
		rs.Date = fromNanos(started)
		_ = json.Unmarshal([]byte(command), &rs.Command)
		rs.Interrupted = interrupted != 0
		index[rs.ID] = len(out)
		out = append(out, rs)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.fail("listing runs", err)
	}
	if err := s.runDetails(ctx, out, index); err != nil {
		return nil, err
	}
	return out, nil
}

// idChunk is the most run IDs one IN (...) lists.
const idChunk = 500

// runDetails fills the devices and result counts of the runs listed.
func (s *Store) runDetails(ctx context.Context, runs []RunSummary, index map[RunID]int) error {
	for start := 0; start < len(runs); start += idChunk {
		chunk := runs[start:min(start+idChunk, len(runs))]
		args := make([]any, len(chunk))
		for i, r := range chunk {
			args[i] = int64(r.ID)
		}
		in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ") + ")"
		rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT run_id, device_id, name, backend, fingerprint FROM devices
	WHERE run_id IN `+in+` ORDER BY run_id, position`), args...)
		if err != nil {
			return s.fail("listing runs' devices", err)
		}
		for rows.Next() {
			var id RunID
			var d Device
			if err := rows.Scan(&id, &d.ID, &d.Name, &d.Backend, &d.Fingerprint); err != nil {
				rows.Close()
				return s.fail("listing runs' devices", err)
			}
			r := &runs[index[id]]
			r.Devices = append(r.Devices, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return s.fail("listing runs' devices", err)
		}
		rows, err = s.db.QueryContext(ctx, s.d.q(`SELECT run_id, COUNT(*) FROM results
	WHERE run_id IN `+in+` AND kind <> '`+kindVendor+`' GROUP BY run_id`), args...)
		if err != nil {
			return s.fail("counting runs' results", err)
		}
		for rows.Next() {
			var id RunID
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				rows.Close()
				return s.fail("counting runs' results", err)
			}
			runs[index[id]].Results = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return s.fail("counting runs' results", err)
		}
	}
	return nil
}

// fromNanos is the UTC time of a count of nanoseconds since 1970 (0: the zero time).
func fromNanos(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// Cases returns the names of the cases recorded whose name matches pattern (as
// Filter.Case: a part of the name, or a pattern with *), sorted; every case for "".
func (s *Store) Cases(ctx context.Context, pattern string) ([]string, error) {
	q, args := `SELECT DISTINCT case_name FROM results`, []any{}
	if pattern != "" {
		q += ` WHERE case_name LIKE ? ESCAPE '\'`
		args = append(args, like(pattern))
	}
	rows, err := s.db.QueryContext(ctx, s.d.q(q+" ORDER BY case_name"), args...)
	if err != nil {
		return nil, s.fail("listing cases", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, s.fail("listing cases", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("listing cases", err)
	}
	return out, nil
}
