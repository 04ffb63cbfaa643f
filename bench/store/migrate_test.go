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
	"strconv"
	"strings"
	"testing"

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
// empty file, version 0): Open brings it to SchemaVersion, and what it held reads back.
func TestMigrate(t *testing.T) {
	fixtures, err := filepath.Glob("testdata/schema-v*.sql")
	if err != nil {
		t.Fatal(err)
	}
	versions := map[int]bool{}
	for _, f := range fixtures {
		v, _ := strconv.Atoi(regexp.MustCompile(`v(\d+)\.sql$`).FindStringSubmatch(f)[1])
		versions[v] = true
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
	ctx := context.Background()
	for _, f := range fixtures {
		t.Run(filepath.Base(f), func(t *testing.T) {
			script, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "old.db")
			db, err := sql.Open("sqlite3", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(string(script)); err != nil {
				t.Fatalf("loading %s: %v", f, err)
			}
			db.Close()
			s, err := Open(ctx, path)
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
			for i, w := range want {
				got, err := s.Export(ctx, RunID(i+1))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, w) {
					t.Errorf("run %d differs from %s", i+1, fixtureReports[i])
				}
			}
			if id, err := s.Resolve(ctx, "main"); err != nil || id != 1 {
				t.Errorf("baseline main = %d, %v; want run 1", id, err)
			}
			if pts, err := s.History(ctx, Series{Case: want[0].Devices[0].Results[0].Case}); err != nil || len(pts) == 0 {
				t.Errorf("History of the fixture's first case: %d points, %v", len(pts), err)
			}
			// Recording goes on from the old runs.
			if id, err := s.Record(ctx, want[0]); err != nil || id != 3 {
				t.Errorf("Record after migrating = %d, %v; want run 3", id, err)
			}
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
