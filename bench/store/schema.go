package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// migration is one step of the schema: what takes a store of the version before it to
// version, run in the migration's one transaction in this order: the statements of steps,
// then convert where set (what SQL alone cannot do in every dialect, such as re-encoding
// data in Go), then the statements of after where set.
type migration struct {
	version int
	steps   func(d *dialect) []string
	convert func(ctx context.Context, tx *sql.Tx, d *dialect) error
	after   func(d *dialect) []string
}

// migrations are the schema's versions in order; SchemaVersion is the last. A new version
// appends a migration (never edits one that shipped) and a fixture
// testdata/schema-vN.sql of the version before it, which TestMigrate opens.
var migrations = []migration{
	{version: 1, steps: schemaV1},
	{version: 2, steps: schemaV2, convert: samplesIntoResults, after: schemaV2After},
	{version: 3, steps: schemaV3},
}

// apply runs the migration in tx.
func (m migration) apply(ctx context.Context, tx *sql.Tx, d *dialect) error {
	for _, st := range m.steps(d) {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return err
		}
	}
	if m.convert != nil {
		if err := m.convert(ctx, tx, d); err != nil {
			return err
		}
	}
	if m.after != nil {
		for _, st := range m.after(d) {
			if _, err := tx.ExecContext(ctx, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// SchemaVersion is the version of the store's tables that this package writes.
var SchemaVersion = migrations[len(migrations)-1].version

// schemaV1 creates the first schema: runs (with the report itself, compressed), their
// devices, their results and every sample, and named baselines.
func schemaV1(d *dialect) []string {
	return []string{
		`CREATE TABLE runs (
	id ` + d.id + `,
	started_ns BIGINT NOT NULL,
	recorded_ns BIGINT NOT NULL,
	host TEXT NOT NULL,
	host_cpu TEXT NOT NULL,
	prism_version TEXT NOT NULL,
	vcs_commit TEXT NOT NULL,
	command TEXT NOT NULL,
	config TEXT NOT NULL,
	env TEXT NOT NULL,
	interrupted INTEGER NOT NULL,
	interrupted_at TEXT NOT NULL,
	report_schema INTEGER NOT NULL,
	report ` + d.blob + ` NOT NULL
)`,
		`CREATE INDEX runs_started ON runs (started_ns, id)`,
		`CREATE INDEX runs_commit ON runs (vcs_commit)`,
		`CREATE INDEX runs_host ON runs (host)`,
		`CREATE TABLE devices (
	id ` + d.id + `,
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	position INTEGER NOT NULL,
	device_id TEXT NOT NULL,
	name TEXT NOT NULL,
	vendor TEXT NOT NULL,
	kind TEXT NOT NULL,
	backend TEXT NOT NULL,
	platform TEXT NOT NULL,
	pci_bus_id TEXT NOT NULL,
	driver_version TEXT NOT NULL,
	api_version TEXT NOT NULL,
	clock_mhz INTEGER NOT NULL,
	compute_units INTEGER NOT NULL,
	global_mem_bytes BIGINT NOT NULL,
	error TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	UNIQUE (run_id, position)
)`,
		`CREATE INDEX devices_fingerprint ON devices (fingerprint)`,
		`CREATE TABLE results (
	id ` + d.id + `,
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	device_ref BIGINT REFERENCES devices (id) ON DELETE CASCADE,
	position INTEGER NOT NULL,
	kind TEXT NOT NULL,
	baseline_of BIGINT REFERENCES results (id) ON DELETE CASCADE,
	case_name TEXT NOT NULL,
	family TEXT NOT NULL,
	type TEXT NOT NULL,
	variant TEXT NOT NULL,
	requested TEXT NOT NULL,
	vendor_library INTEGER NOT NULL,
	size BIGINT NOT NULL,
	shape TEXT NOT NULL,
	group_devices TEXT NOT NULL,
	median_ns BIGINT NOT NULL,
	min_ns BIGINT NOT NULL,
	max_ns BIGINT NOT NULL,
	runs INTEGER NOT NULL,
	sample_count INTEGER NOT NULL,
	gbs DOUBLE PRECISION NOT NULL,
	gflops DOUBLE PRECISION NOT NULL,
	fraction DOUBLE PRECISION NOT NULL,
	bound TEXT NOT NULL,
	verified INTEGER NOT NULL,
	mismatch INTEGER NOT NULL,
	error TEXT NOT NULL,
	skipped TEXT NOT NULL,
	invalid TEXT NOT NULL
)`,
		`CREATE INDEX results_case ON results (case_name, run_id)`,
		`CREATE INDEX results_run ON results (run_id)`,
		`CREATE TABLE samples (
	result_id BIGINT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
	position INTEGER NOT NULL,
	ns BIGINT NOT NULL,
	PRIMARY KEY (result_id, position)
)`,
		`CREATE TABLE baselines (
	name TEXT PRIMARY KEY,
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	set_ns BIGINT NOT NULL
)`,
	}
}

// schemaV2 keeps each result's samples in a column of results (samples.go says how they
// are encoded, and why) instead of a row per sample in the table samples: reading a case's
// history with its samples then reads one row per result. The column is added at the end
// of results, after the columns that every other query reads.
func schemaV2(d *dialect) []string {
	return []string{
		`ALTER TABLE results ADD COLUMN samples ` + d.blob + ` NOT NULL DEFAULT ` + d.emptyBlob,
	}
}

// schemaV2After drops the table samples, whose rows samplesIntoResults has moved into
// results.samples: nothing reads it any more, and a table left empty would only be a
// place for a stale writer's rows to go unseen.
func schemaV2After(*dialect) []string {
	return []string{`DROP TABLE samples`}
}

// schemaV3 keeps the shape a case was asked for where its size does not give it
// (bench.Result.Dims, "4096x1024x512"): part of a case's identity, so that two shapes of
// one size are two series. The results recorded before it ran at sizes: their dims are
// empty.
func schemaV3(*dialect) []string {
	return []string{`ALTER TABLE results ADD COLUMN dims TEXT NOT NULL DEFAULT ''`}
}

// convertPage is how many results samplesIntoResults converts at a time (a variable so
// that the tests convert a fixture over several pages).
var convertPage = 1000

// samplesIntoResults moves the rows of samples into the encoded results.samples of their
// result, in the order of their position, convertPage results at a time (one query's rows
// are read to their end before the updates run, as a PostgreSQL connection requires). A
// result whose sample rows had gaps in their positions keeps its samples in order, and
// Check then finds that their number differs from the one recorded; rows of a result that
// no longer exists (a store whose foreign keys were broken) have nothing to go to.
func samplesIntoResults(ctx context.Context, tx *sql.Tx, d *dialect) error {
	update, err := tx.PrepareContext(ctx, d.q("UPDATE results SET samples = ? WHERE id = ?"))
	if err != nil {
		return err
	}
	defer update.Close()
	var last int64
	for {
		var ids []int64
		rows, err := tx.QueryContext(ctx, d.q("SELECT DISTINCT result_id FROM samples WHERE result_id > ? ORDER BY result_id LIMIT ?"), last, convertPage)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		lists := make(map[int64][]time.Duration, len(ids))
		rows, err = tx.QueryContext(ctx, d.q("SELECT result_id, ns FROM samples WHERE result_id >= ? AND result_id <= ? ORDER BY result_id, position"), ids[0], ids[len(ids)-1])
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, ns int64
			if err := rows.Scan(&id, &ns); err != nil {
				rows.Close()
				return err
			}
			lists[id] = append(lists[id], time.Duration(ns))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := update.ExecContext(ctx, encodeSamples(lists[id]), id); err != nil {
				return err
			}
		}
		last = ids[len(ids)-1]
	}
}

// ErrSchemaNewer is wrapped by Open's error for a store written by a newer Prism, whose
// schema this one does not know.
var ErrSchemaNewer = errors.New("the store's schema is newer than this prism's")

// version returns the store's schema version, 0 for a store without tables.
func (s *Store) version(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, s.d.q(s.d.hasTable), "schema_version").Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_version").Scan(&v); err != nil {
		return 0, err
	}
	return int(v.Int64), nil
}

// migrate brings the store to SchemaVersion in one transaction, or refuses a newer one. A
// store already at SchemaVersion is only read, so that a read-only store opens.
func (s *Store) migrate(ctx context.Context) error {
	v, err := s.version(ctx, s.db)
	if err != nil {
		return s.fail("reading the schema version", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("store: %s has schema version %d, newer than this prism's (%d): use a newer prism, or another store: %w", s.path, v, SchemaVersion, ErrSchemaNewer)
	}
	if v == SchemaVersion {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("starting the schema migration", err)
	}
	defer tx.Rollback()
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return s.fail("locking the store for its schema migration", err)
		}
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"); err != nil {
		return s.fail("creating schema_version", err)
	}
	// Another process may have migrated the store since it was read above.
	if v, err = s.version(ctx, tx); err != nil {
		return s.fail("reading the schema version", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("store: %s has schema version %d, newer than this prism's (%d): use a newer prism, or another store: %w", s.path, v, SchemaVersion, ErrSchemaNewer)
	}
	for _, m := range migrations {
		if m.version <= v {
			continue
		}
		if err := m.apply(ctx, tx, s.d); err != nil {
			return s.fail(fmt.Sprintf("migrating from schema version %d to %d", v, m.version), err)
		}
	}
	if v != SchemaVersion {
		if _, err := tx.ExecContext(ctx, "DELETE FROM schema_version"); err != nil {
			return s.fail("writing the schema version", err)
		}
		if _, err := tx.ExecContext(ctx, s.d.q("INSERT INTO schema_version (version) VALUES (?)"), SchemaVersion); err != nil {
			return s.fail("writing the schema version", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.fail("committing the schema migration", err)
	}
	return nil
}
