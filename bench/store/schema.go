package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// migration is one step of the schema: the statements that take a store of the version
// before it to version.
type migration struct {
	version int
	steps   func(d *dialect) []string
}

// migrations are the schema's versions in order; SchemaVersion is the last. A new version
// appends a migration (never edits one that shipped) and a fixture
// testdata/schema-vN.sql of the version before it, which TestMigrate opens.
var migrations = []migration{
	{version: 1, steps: schemaV1},
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
		for _, st := range m.steps(s.d) {
			if _, err := tx.ExecContext(ctx, st); err != nil {
				return s.fail(fmt.Sprintf("migrating from schema version %d to %d", v, m.version), err)
			}
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
