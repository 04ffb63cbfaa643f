package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrDamaged is wrapped by Check's error for a store that fails its checks.
var ErrDamaged = errors.New("the store is damaged")

// invariants are queries that list what breaks one of the store's own rules, one problem
// per row (as text).
var invariants = []string{
	// every result holds as many samples as it says, and those are its runs (reports from
	// before samples were kept have none)
	`SELECT 'result ' || r.id || ' of run ' || r.run_id || ' (' || r.case_name || '): ' || COUNT(s.result_id) ||
	' samples stored, ' || r.sample_count || ' recorded, ' || r.runs || ' runs'
	FROM results r LEFT JOIN samples s ON s.result_id = r.id
	GROUP BY r.id, r.run_id, r.case_name, r.sample_count, r.runs
	HAVING COUNT(s.result_id) <> r.sample_count OR (r.sample_count > 0 AND r.sample_count <> r.runs)`,
	// every run has a device (a report has one at least)
	`SELECT 'run ' || ru.id || ' has no device' FROM runs ru
	WHERE NOT EXISTS (SELECT 1 FROM devices d WHERE d.run_id = ru.id)`,
	// a result's device is one of its run's
	`SELECT 'result ' || r.id || ' of run ' || r.run_id || ' names a device of run ' || d.run_id
	FROM results r JOIN devices d ON d.id = r.device_ref WHERE d.run_id <> r.run_id`,
	// a vendor library's run of a case belongs to a case of the same run
	`SELECT 'result ' || r.id || ' is the vendor baseline of result ' || b.id || ' of another run'
	FROM results r JOIN results b ON b.id = r.baseline_of WHERE b.run_id <> r.run_id`,
}

// Check verifies the store: the database's own integrity checks (SQLite's
// integrity_check and foreign_key_check) and the store's rules (every result's samples
// number its runs, every run has its devices, a result's device and baseline belong to
// its run). A store that fails is an error wrapping ErrDamaged that lists the first
// problems found.
func (s *Store) Check(ctx context.Context) error {
	var problems []string
	if s.d.integrity != nil {
		p, err := s.d.integrity(ctx, s.db)
		if err != nil {
			return s.fail("checking integrity", err)
		}
		problems = append(problems, p...)
	}
	if v, err := s.version(ctx, s.db); err != nil {
		return s.fail("reading the schema version", err)
	} else if v != SchemaVersion {
		problems = append(problems, fmt.Sprintf("schema version %d, not %d", v, SchemaVersion))
	}
	for _, q := range invariants {
		rows, err := s.db.QueryContext(ctx, q)
		if err != nil {
			return s.fail("checking the store's rules", err)
		}
		for rows.Next() {
			var msg string
			if err := rows.Scan(&msg); err != nil {
				rows.Close()
				return s.fail("checking the store's rules", err)
			}
			problems = append(problems, msg)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return s.fail("checking the store's rules", err)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	shown := problems
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(problems)-10))
	}
	return fmt.Errorf("store: %s: %d problems: %s: %w", s.path, len(problems), strings.Join(shown, "; "), ErrDamaged)
}
