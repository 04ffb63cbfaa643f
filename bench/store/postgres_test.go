package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prism-compute/prism/engine"
)

func TestIsPostgres(t *testing.T) {
	for _, tc := range []struct {
		dsn  string
		want bool
	}{
		{"postgres://ci:pw@db.example.org:5432/prism", true},
		{"postgresql://db/prism?sslmode=require", true},
		{"POSTGRES://db/prism", true},
		{"host=db.example.org dbname=prism user=ci", true},
		{"dbname=prism", true},
		{" user=ci host=/run/postgresql", true},
		{"results.db", false},
		{"/var/lib/prism/results.db", false},
		{"file:results.db?mode=ro", false},
		{"dir/host=x.db", false},
		{"mode=ro", false},
		{"mysql://db/prism", false},
	} {
		if got := isPostgres(tc.dsn); got != tc.want {
			t.Errorf("isPostgres(%q) = %v, want %v", tc.dsn, got, tc.want)
		}
	}
}

func TestServerName(t *testing.T) {
	for _, tc := range []struct {
		cfg  pgconn.Config
		want string
	}{
		{pgconn.Config{Host: "db.example.org", Port: 5432, User: "ci", Database: "prism", Password: "pw"}, "postgres://ci@db.example.org:5432/prism"},
		{pgconn.Config{Host: "::1", Port: 6543, User: "ci", Database: "prism"}, "postgres://ci@[::1]:6543/prism"},
		{pgconn.Config{Host: "/run/postgresql", Port: 5432, User: "ci", Database: "prism"}, "postgres://ci@/prism?host=/run/postgresql"},
		{pgconn.Config{Host: "/tmp", Port: 5433, User: "ci", Database: "prism"}, "postgres://ci@/prism?host=/tmp&port=5433"},
	} {
		if got := serverName(&tc.cfg); got != tc.want {
			t.Errorf("serverName(%s:%d) = %s, want %s", tc.cfg.Host, tc.cfg.Port, got, tc.want)
		}
	}
}

// pgSecret is the password of the cluster's user secret, which logs in with it (scram).
const pgSecret = "correct-horse-battery"

// secretDatabase returns a new database of the shared cluster owned by the user secret
// (so that it owns the schema public, where the store's tables go), creating the user
// where the cluster has none.
func secretDatabase(t *testing.T) (*cluster, string) {
	c := pgCluster(t)
	if _, err := c.admin.Exec("CREATE ROLE secret LOGIN PASSWORD '" + pgSecret + "'"); err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42710" { // the role exists (-count=2)
			t.Fatal(err)
		}
	}
	db, err := c.newDatabase()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.admin.Exec("ALTER DATABASE " + db + " OWNER TO secret"); err != nil {
		t.Fatal(err)
	}
	return c, db
}

// TestPostgresDSNs opens one database by each form of DSN, with a password: each is the
// same store, and neither Path nor an error shows the password.
func TestPostgresDSNs(t *testing.T) {
	ctx := context.Background()
	c, db := secretDatabase(t)
	want := "postgres://secret@/" + db + "?host=" + c.dir
	var ids []RunID
	for _, dsn := range []string{
		"postgres://secret:" + pgSecret + "@/" + db + "?host=" + c.dir,
		"postgresql://secret:" + pgSecret + "@/" + db + "?host=" + c.dir + "&sslmode=disable&connect_timeout=5",
		"host=" + c.dir + " dbname=" + db + " user=secret password=" + pgSecret,
		"user=secret password='" + pgSecret + "' host=" + c.dir + " dbname=" + db + " application_name=ci",
	} {
		s, err := Open(ctx, dsn)
		if err != nil {
			t.Fatalf("Open(%s): %v", strings.ReplaceAll(dsn, pgSecret, "***"), err)
		}
		if s.Path() != want {
			t.Errorf("Path() = %s, want %s", s.Path(), want)
		}
		id, err := s.Record(ctx, synthetic("h", "c", "cpu", time.Now(), 1, 2))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		runs, err := s.Runs(ctx, Filter{})
		if err != nil || len(runs) != len(ids) {
			t.Errorf("Runs lists %d runs (%v), want %d: the forms of DSN open different stores", len(runs), err, len(ids))
		}
		s.Close()
	}
	if ids[0] >= ids[1] || ids[1] >= ids[2] || ids[2] >= ids[3] {
		t.Errorf("runs recorded one after the other have IDs %v, want them increasing", ids)
	}
}

// TestPostgresOpenErrors opens PostgreSQL stores that cannot be opened: each error names
// the server and the database (never the password) and says why.
func TestPostgresOpenErrors(t *testing.T) {
	ctx := context.Background()
	c, db := secretDatabase(t)
	// A TCP port of 127.0.0.1 with nothing listening: one just given back.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	noServer := t.TempDir()
	for _, tc := range []struct {
		name, dsn, names, says string
	}{
		{"wrong password", "postgres://secret:wrong-" + pgSecret + "@/" + db + "?host=" + c.dir,
			"postgres://secret@/" + db + "?host=" + c.dir, "refused the password"},
		{"unknown database", "postgres://prism@/nosuchdb?host=" + c.dir,
			"postgres://prism@/nosuchdb?host=" + c.dir, "database does not exist"},
		{"no server on the port", fmt.Sprintf("postgres://ci:%s@127.0.0.1:%d/prism", pgSecret, port),
			fmt.Sprintf("postgres://ci@127.0.0.1:%d/prism", port), "cannot be reached"},
		{"no server on the socket", fmt.Sprintf("host=%s user=ci password=%s dbname=prism", noServer, pgSecret),
			"postgres://ci@/prism?host=" + noServer, "cannot be reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Open(ctx, tc.dsn)
			if err == nil {
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.HasPrefix(msg, "store: "+tc.names+": ") || !strings.Contains(msg, tc.says) || strings.Contains(msg, pgSecret) {
				t.Errorf("Open = %v; want an error naming %s that says %q, without the password", err, tc.names, tc.says)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Open took %v to fail", d)
			}
		})
	}
	t.Run("malformed", func(t *testing.T) {
		_, err := Open(ctx, "postgres://ci:"+pgSecret+"@db:notaport/prism")
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), "not a PostgreSQL DSN") || strings.Contains(err.Error(), pgSecret) {
			t.Errorf("Open of a malformed URL = %v; want an error that says so, without the password", err)
		}
	})
	t.Run("unreachable in time", func(t *testing.T) {
		// 192.0.2.0/24 is for documentation: no host answers there, so the connection
		// waits for connect_timeout (or fails at once where no route leads there).
		start := time.Now()
		_, err := Open(ctx, "postgres://ci@192.0.2.1:5432/prism?connect_timeout=1")
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), "postgres://ci@192.0.2.1:5432/prism") {
			t.Errorf("Open of an address where no host answers = %v; want an error naming it", err)
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("Open waited %v, past connect_timeout=1", d)
		}
	})
	t.Run("not a store", func(t *testing.T) {
		// A database of other tables is a store of version 0: Open adds the store's.
		dsn := postgresDSN(t)
		s, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := Open(ctx, strings.Replace(dsn, "postgres://", "mysql://", 1)); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Open of a mysql:// URL = %v, want ErrInvalidArg", err)
		}
	})
}

// TestPostgresServerStopped stops the server of an open store: a Record then fails with an
// error that names the server and says it cannot be reached, and keeps nothing.
func TestPostgresServerStopped(t *testing.T) {
	pgCluster(t) // skips where there is no server
	c, err := startCluster()
	if err != nil {
		t.Fatal(err)
	}
	defer c.stop()
	ctx := context.Background()
	db, err := c.newDatabase()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, c.dsn(db))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Record(ctx, synthetic("h", "c", "cpu", time.Now(), 2, 3)); err != nil {
		t.Fatal(err)
	}
	c.halt()
	_, err = s.Record(ctx, synthetic("h", "c", "cpu", time.Now(), 2, 3))
	t.Logf("Record with the server stopped: %v", err)
	name := "postgres://prism@/" + db + "?host=" + c.dir
	if err == nil || !strings.HasPrefix(err.Error(), "store: "+name+": ") ||
		!(strings.Contains(err.Error(), "cannot be reached") || strings.Contains(err.Error(), "connection to the server was lost") ||
			strings.Contains(err.Error(), "shutting down")) {
		t.Errorf("Record with the server stopped = %v; want an error naming %s that says the server cannot be reached", err, name)
	}
	if _, err := s.Runs(ctx, Filter{}); err == nil || !strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("Runs with the server stopped = %v; want an error that says the server cannot be reached", err)
	}
	if _, err := Open(ctx, c.dsn(db)); err == nil || !strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("Open with the server stopped = %v; want an error that says the server cannot be reached", err)
	}
	// Started again, the server holds the run recorded before it stopped, and nothing of
	// the one that failed.
	if err := c.launch(); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, Filter{})
	if err != nil || len(runs) != 1 {
		t.Errorf("Runs once the server is back = %d runs, %v; want 1", len(runs), err)
	}
	if err := s.Check(ctx); err != nil {
		t.Error(err)
	}
}

// recordTB records what needPostgres asks of a test, instead of ending it.
type recordTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recordTB) Helper() {}

func (r *recordTB) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
}

func (r *recordTB) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}

// TestNeedPostgres: without a server the PostgreSQL tests skip, saying why and how to
// require them, and fail where PRISM_REQUIRE names postgres.
func TestNeedPostgres(t *testing.T) {
	why := errors.New("no PostgreSQL server programs")
	for _, tc := range []struct {
		require string
		fail    bool
	}{
		{"", false},
		{"opencl", false},
		{"opencl, postgres", true},
		{"POSTGRES", true},
	} {
		t.Setenv("PRISM_REQUIRE", tc.require)
		r := &recordTB{TB: t}
		needPostgres(r, why)
		if r.failed != tc.fail || r.skipped == tc.fail || !strings.Contains(r.msg, why.Error()) || !strings.Contains(r.msg, "PRISM_REQUIRE") {
			t.Errorf("PRISM_REQUIRE=%q: skipped %v, failed %v (%q); want failed %v", tc.require, r.skipped, r.failed, r.msg, tc.fail)
		}
	}
}
