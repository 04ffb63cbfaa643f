package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

var updateFixture = flag.Bool("update-fixture", false, "write testdata/schema-vN.sql for the current schema version")

// fixtureReports are the reports in every schema fixture, runs 1 and 2 in that order; run
// 1 is the baseline "main".
var fixtureReports = []string{"../render/testdata/single.json", "../render/testdata/split.json"}

// TestWriteFixture writes (with -update-fixture) the fixture of the current schema
// version: a store holding fixtureReports, as SQL. Each fixture is kept when the schema
// changes, so that TestMigrate opens a store of every earlier version.
func TestWriteFixture(t *testing.T) {
	if !*updateFixture {
		t.Skip("writes testdata/schema-vN.sql with -update-fixture")
	}
	ctx := context.Background()
	s := newStore(t)
	for _, p := range fixtureReports {
		r, err := bench.ReadReportFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetBaseline(ctx, "main", 1); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- A results store of schema version %d holding %s (runs 1 and 2) and the baseline main (run 1),\n", SchemaVersion, strings.Join(fixtureReports, " and "))
	fmt.Fprintf(&b, "-- written by TestWriteFixture -update-fixture; kept as it is once a later version exists (TestMigrate).\n")
	rows, err := s.db.Query("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index', rowid")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name, q string
		if err := rows.Scan(&name, &q); err != nil {
			t.Fatal(err)
		}
		b.WriteString(q + ";\n")
		if !strings.HasPrefix(q, "CREATE INDEX") {
			tables = append(tables, name)
		}
	}
	rows.Close()
	for _, table := range tables {
		dumpTable(t, s.db, table, &b)
	}
	name := fmt.Sprintf("testdata/schema-v%d.sql", SchemaVersion)
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", name)
}

// dumpTable writes the rows of table as INSERT statements.
func dumpTable(t *testing.T, db *sql.DB, table string, b *strings.Builder) {
	rows, err := db.Query("SELECT * FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		lits := make([]string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				lits[i] = "NULL"
			case int64:
				lits[i] = strconv.FormatInt(v, 10)
			case float64:
				lits[i] = strconv.FormatFloat(v, 'g', -1, 64)
			case []byte:
				lits[i] = "X'" + hex.EncodeToString(v) + "'"
			case string:
				lits[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
			default:
				t.Fatalf("%s: a value of type %T", table, v)
			}
		}
		fmt.Fprintf(b, "INSERT INTO %s (%s) VALUES (%s);\n", table, strings.Join(cols, ", "), strings.Join(lits, ", "))
	}
}

// TestMigrate opens a store of every schema version (testdata/schema-vN.sql, and an
// empty file, version 0), on each backend: Open brings it to SchemaVersion, and what it
// held reads back, every sample of every result value by value in its order. A fixture is
// SQLite's; the PostgreSQL store of its version is made by that version's migrations and
// the fixture's rows copied into it.
func TestMigrate(t *testing.T) {
	fixtures, err := filepath.Glob("testdata/schema-v*.sql")
	if err != nil {
		t.Fatal(err)
	}
	versions := map[int]bool{}
	for _, f := range fixtures {
		versions[fixtureVersion(f)] = true
	}
	for v := 1; v <= SchemaVersion; v++ {
		if !versions[v] {
			t.Errorf("no fixture testdata/schema-v%d.sql: write it with go test -run TestWriteFixture -update-fixture before the schema changes", v)
		}
	}
	want := make([]*bench.Report, len(fixtureReports))
	for i, p := range fixtureReports {
		if want[i], err = bench.ReadReportFile(p); err != nil {
			t.Fatal(err)
		}
	}
	// Convert the samples a few results at a time, so that the fixtures' take several
	// pages.
	defer func(n int) { convertPage = n }(convertPage)
	convertPage = 3
	ctx := context.Background()
	for _, f := range fixtures {
		t.Run(filepath.Base(f), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, b backend) {
				dsn, before := loadFixture(t, f, b)
				n := 0
				for _, ss := range before {
					n += len(ss)
				}
				if n < 20 {
					t.Fatalf("the fixture holds %d samples; want at least 20 to check", n)
				}
				s, err := Open(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if v, err := s.version(ctx, s.db); err != nil || v != SchemaVersion {
					t.Errorf("after Open the store is at version %d (%v), want %d", v, err, SchemaVersion)
				}
				if err := s.Check(ctx); err != nil {
					t.Error(err)
				}
				// Every result's samples are the fixture's, in their order.
				after := storedSamples(t, s)
				if !reflect.DeepEqual(after, before) {
					t.Errorf("the samples after migrating differ from the fixture's:\n%v\nwant\n%v", after, before)
				}
				for i, w := range want {
					got, err := s.Export(ctx, RunID(i+1))
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, w) {
						t.Errorf("run %d differs from %s", i+1, fixtureReports[i])
					}
					if got, w := runSamples(t, s, RunID(i+1)), reportSamples(w); !reflect.DeepEqual(got, w) {
						t.Errorf("run %d: the samples of its results are %v, %s's %v", i+1, got, fixtureReports[i], w)
					}
				}
				if id, err := s.Resolve(ctx, "main"); err != nil || id != 1 {
					t.Errorf("baseline main = %d, %v; want run 1", id, err)
				}
				first := want[0].Devices[0].Results[0]
				pts, err := s.History(ctx, Series{Case: first.Case, Samples: true})
				if err != nil || len(pts) == 0 {
					t.Fatalf("History of the fixture's first case: %d points, %v", len(pts), err)
				}
				if len(first.Stats.Samples) == 0 || !slices.Equal(pts[0].Samples, first.Stats.Samples) {
					t.Errorf("History of %s: samples %v, the report's %v", first.Case, pts[0].Samples, first.Stats.Samples)
				}
				// Recording goes on from the old runs.
				if id, err := s.Record(ctx, want[0]); err != nil || id != 3 {
					t.Errorf("Record after migrating = %d, %v; want run 3", id, err)
				}
				if err := s.Check(ctx); err != nil {
					t.Error(err)
				}
			})
		})
	}
	// A new PostgreSQL database is a store of version 0 (its first version is
	// SchemaVersion's: there is no older PostgreSQL store to migrate).
	t.Run("empty postgres database", func(t *testing.T) {
		s := backends[1].open(t)
		if v, err := s.version(ctx, s.db); err != nil || v != SchemaVersion {
			t.Errorf("a new database is at version %d (%v), want %d", v, err, SchemaVersion)
		}
		if err := s.Check(ctx); err != nil {
			t.Error(err)
		}
		// Opened again, it is left as it is.
		again, err := Open(ctx, s.Path())
		if err != nil {
			t.Fatal(err)
		}
		again.Close()
	})
	t.Run("empty file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "empty.db")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Check(ctx); err != nil {
			t.Error(err)
		}
	})
}

func TestNewerSchemaRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn := b.dsn(t)
		s, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.Exec(s.d.q("UPDATE schema_version SET version = ?"), SchemaVersion+1); err != nil {
			t.Fatal(err)
		}
		name := s.Path()
		s.Close()
		_, err = Open(ctx, dsn)
		want := fmt.Sprintf("schema version %d, newer than this prism's (%d)", SchemaVersion+1, SchemaVersion)
		if !errors.Is(err, ErrSchemaNewer) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
			t.Errorf("Open of a newer store = %v; want ErrSchemaNewer naming %s and saying %q", err, name, want)
		}
	})
}

// fixtureVersion is the schema version of the fixture testdata/schema-vN.sql.
func fixtureVersion(f string) int {
	v, _ := strconv.Atoi(regexp.MustCompile(`v(\d+)\.sql$`).FindStringSubmatch(f)[1])
	return v
}

// loadFixture makes a store of b from the fixture f and returns its DSN and the samples of
// each of its results by ID, as that version of the schema keeps them.
func loadFixture(t *testing.T, f string, b backend) (string, map[int64][]time.Duration) {
	t.Helper()
	script, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	src, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Exec(string(script)); err != nil {
		t.Fatalf("loading %s: %v", f, err)
	}
	v := fixtureVersion(f)
	before := fixtureSamples(t, src, v)
	if b.name == "sqlite" {
		return path, before
	}
	dsn := b.dsn(t)
	copyStore(t, src, dsn, v)
	return dsn, before
}

// fixtureSamples returns the samples of each result of a store of schema version v, by
// result ID, in their order: from the table samples (version 1) or results.samples.
func fixtureSamples(t *testing.T, db *sql.DB, v int) map[int64][]time.Duration {
	t.Helper()
	out := map[int64][]time.Duration{}
	q := "SELECT id, samples FROM results"
	if v == 1 {
		q = "SELECT r.id, s.ns FROM results r LEFT JOIN samples s ON s.result_id = r.id ORDER BY r.id, s.position"
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if v == 1 {
			var ns sql.NullInt64
			if err := rows.Scan(&id, &ns); err != nil {
				t.Fatal(err)
			}
			if _, ok := out[id]; !ok {
				out[id] = nil
			}
			if ns.Valid {
				out[id] = append(out[id], time.Duration(ns.Int64))
			}
			continue
		}
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			t.Fatal(err)
		}
		if out[id], err = decodeSamples(blob); err != nil {
			t.Fatalf("result %d: %v", id, err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// copyStore makes the PostgreSQL store at dsn a copy of the SQLite store src of schema
// version v: the schema as that version's migrations create it in PostgreSQL, and every
// row of src, its identities going on from src's.
func copyStore(t *testing.T, src *sql.DB, dsn string, v int) {
	t.Helper()
	ctx := context.Background()
	dst, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	tx, err := dst.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	d := postgresDialect
	if _, err := tx.Exec("CREATE TABLE schema_version (version INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:v] {
		if err := m.apply(ctx, tx, d); err != nil {
			t.Fatalf("migration to version %d: %v", m.version, err)
		}
	}
	tables := []string{"schema_version", "runs", "devices", "results", "baselines"}
	if v == 1 {
		tables = append(tables, "samples")
	}
	for _, table := range tables {
		rows, err := src.Query("SELECT * FROM " + table + " ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var all [][]any
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			all = append(all, vals)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		insert := d.q(fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(cols, ", "),
			strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")))
		for _, vals := range all {
			if _, err := tx.Exec(insert, vals...); err != nil {
				t.Fatalf("copying a row of %s: %v", table, err)
			}
		}
		if len(cols) > 0 && cols[0] == "id" && len(all) > 0 {
			if _, err := tx.Exec("SELECT setval(pg_get_serial_sequence('" + table + "', 'id'), (SELECT MAX(id) FROM " + table + "))"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
