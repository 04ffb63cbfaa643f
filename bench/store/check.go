package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// ErrDamaged is wrapped by Check's error for a store that fails its checks.
var ErrDamaged = errors.New("the store is damaged")

// invariants are queries that list what breaks one of the store's own rules, one problem
// per row (as text).
// (The rules of each result's samples, which SQL cannot decode, are checkSamples's.)
var invariants = []string{
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
// decode, number its runs and are positive times unless the result is an invalid
// measurement, every run has its devices, a result's
// device and baseline belong to its run). A store that fails is an error wrapping ErrDamaged that lists the first
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
	p, err := s.checkSamples(ctx)
	if err != nil {
		return s.fail("checking the results' samples", err)
	}
	problems = append(problems, p...)
	if len(problems) == 0 {
		return nil
	}
	shown := problems
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(problems)-10))
	}
	noun := "problems"
	if len(problems) == 1 {
		noun = "problem"
	}
	return fmt.Errorf("store: %s: %d %s: %s: %w", s.path, len(problems), noun, strings.Join(shown, "; "), ErrDamaged)
}

// checkSamples returns what is wrong with the samples of each result: a value of
// results.samples that does not decode, a number of samples other than the one recorded
// with it (sample_count) or, where it has samples, other than its runs (reports from
// before samples were kept have none), a sample that is not a positive time in a result
// not recorded as an invalid measurement (which keeps the device times of zero or less
// that made it one: bench.InvalidPrefix).
func (s *Store) checkSamples(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, run_id, case_name, sample_count, runs, invalid, samples FROM results ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var id, run int64
		var name, invalid string
		var count, runs int
		var blob sql.RawBytes
		if err := rows.Scan(&id, &run, &name, &count, &runs, &invalid, &blob); err != nil {
			return nil, err
		}
		what := fmt.Sprintf("result %d of run %d (%s)", id, run, name)
		samples, err := decodeSamples(blob)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: its samples do not decode: %v", what, err))
			continue
		}
		if len(samples) != count || (count > 0 && count != runs) {
			problems = append(problems, fmt.Sprintf("%s: %d samples stored, %d recorded, %d runs", what, len(samples), count, runs))
		}
		for i, v := range samples {
			if v <= 0 && invalid == "" {
				problems = append(problems, fmt.Sprintf("%s: sample %d of %d is %d ns, not a positive time", what, i+1, len(samples), int64(v)))
				break
			}
		}
	}
	return problems, rows.Err()
}
