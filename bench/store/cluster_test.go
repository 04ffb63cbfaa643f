package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prism-compute/prism/engine/enginetest"
)

// The PostgreSQL tests run a real server: a throw-away cluster of Debian's postgresql
// package (initdb and postgres, /usr/lib/postgresql/N/bin) in a temporary directory,
// listening on a Unix socket there and on no TCP port, with fsync off. One cluster serves
// the whole test binary, a store per test (a schema, or a database where the test needs
// one); the test that stops its server mid-way gets a cluster of its own. initdb and postgres refuse to run as root: run as root (as in CI),
// the tests run them as the unprivileged user nobody (the cluster's directory is given to
// it), and connect from root over the socket. Without the programs the tests skip, or fail
// where PRISM_REQUIRE names postgres.

// pgUser is the cluster's superuser, whom every connection of the tests names.
const pgUser = "prism"

// pgBin returns the directory of the PostgreSQL server's programs: the newest
// /usr/lib/postgresql/N/bin (Debian's), else that of an initdb on the PATH.
func pgBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(a))))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(b))))
		return va - vb
	})
	if len(dirs) > 0 {
		return filepath.Dir(dirs[len(dirs)-1]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server programs (initdb, postgres) in /usr/lib/postgresql/*/bin or on the PATH: install Debian's postgresql (make deps)")
}

// cluster is a running PostgreSQL server of the tests.
type cluster struct {
	dir   string // holds data/ and the socket
	bin   string // the server's programs
	cmd   *exec.Cmd
	done  chan struct{} // closed when the server has exited
	log   *syncBuffer
	admin *sql.DB      // connected to the database postgres, to create the tests' databases
	dbs   atomic.Int64 // numbers the databases and schemas made

	storesOnce sync.Once // creates the database stores, of a schema per test
	storesErr  error
}

// syncBuffer is a bytes.Buffer for a process's output, read while it is written.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// pgTemplate is a cluster made by initdb once per test binary and never started: each
// cluster is a copy of it (a copy takes a third of initdb's second).
var pgTemplate struct {
	once sync.Once
	dir  string // holds data/
	bin  string
	err  error
}

// sharedCluster is the cluster of every test but the one that stops its server.
var sharedCluster struct {
	once sync.Once
	c    *cluster
	err  error
}

// asServer makes cmd run as the unprivileged user nobody when the tests run as root, for
// initdb and postgres refuse root.
func asServer(cmd *exec.Cmd) error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := serverUser()
	if err != nil {
		return err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	return nil
}

// serverUser returns the user and group that the server runs as under root: nobody's.
func serverUser() (uid, gid uint32, err error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return 0, 0, fmt.Errorf("running as root, the PostgreSQL server needs an unprivileged user to run as: %w", err)
	}
	a, err1 := strconv.ParseUint(u.Uid, 10, 32)
	b, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("user nobody has uid %q, gid %q", u.Uid, u.Gid)
	}
	return uint32(a), uint32(b), nil
}

// serverDir makes a directory for a cluster that the server's user owns.
func serverDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if os.Geteuid() == 0 {
		uid, gid, err := serverUser()
		if err != nil {
			return "", err
		}
		if err := os.Chown(dir, int(uid), int(gid)); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// template returns the initdb'ed cluster that clusters copy.
func template() (dir, bin string, err error) {
	pgTemplate.once.Do(func() {
		if pgTemplate.bin, pgTemplate.err = pgBin(); pgTemplate.err != nil {
			return
		}
		if pgTemplate.dir, pgTemplate.err = serverDir("prism-pg-template-"); pgTemplate.err != nil {
			return
		}
		cmd := exec.Command(filepath.Join(pgTemplate.bin, "initdb"), "-D", filepath.Join(pgTemplate.dir, "data"),
			"-A", "trust", "-U", pgUser, "-E", "UTF8", "--locale=C", "--no-sync")
		if pgTemplate.err = asServer(cmd); pgTemplate.err != nil {
			return
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			pgTemplate.err = fmt.Errorf("initdb: %w\n%s", err, out)
			return
		}
		// The user secret logs in with a password (scram), everyone else without: for the
		// tests of a password refused. Lines are matched in order.
		hba := filepath.Join(pgTemplate.dir, "data", "pg_hba.conf")
		old, err := os.ReadFile(hba)
		if err != nil {
			pgTemplate.err = err
			return
		}
		pgTemplate.err = os.WriteFile(hba, append([]byte("local all secret scram-sha-256\n"), old...), 0o600)
	})
	return pgTemplate.dir, pgTemplate.bin, pgTemplate.err
}

// startCluster starts a new cluster, a copy of the template.
func startCluster() (*cluster, error) {
	tmpl, bin, err := template()
	if err != nil {
		return nil, err
	}
	dir, err := serverDir("prism-pg-")
	if err != nil {
		return nil, err
	}
	cp := exec.Command("cp", "-a", filepath.Join(tmpl, "data"), filepath.Join(dir, "data"))
	if out, err := cp.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("copying the template cluster: %w\n%s", err, out)
	}
	c := &cluster{dir: dir, bin: bin, log: &syncBuffer{}}
	if err := c.launch(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if c.admin, err = sql.Open("pgx", c.dsn("postgres")); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// launch starts the cluster's server and waits until it accepts connections.
func (c *cluster) launch() error {
	c.done = make(chan struct{})
	c.cmd = exec.Command(filepath.Join(c.bin, "postgres"), "-D", filepath.Join(c.dir, "data"), "-k", c.dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "autovacuum=off", "-c", "max_connections=100", "-c", "shared_buffers=32MB")
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := asServer(c.cmd); err != nil {
		return err
	}
	if c.cmd.SysProcAttr == nil {
		c.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A test binary killed takes its servers with it (immediate shutdown).
	c.cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	done := c.done
	go func() { c.cmd.Wait(); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgconn.Connect(ctx, c.dsn("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("postgres exited at its start: %s", c.log.String())
		default:
		}
		if time.Now().After(deadline) {
			c.halt()
			return fmt.Errorf("postgres did not accept connections within 30 s: %v\n%s", err, c.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dsn is the URL of database db of the cluster, through its socket.
func (c *cluster) dsn(db string) string {
	return "postgres://" + pgUser + "@/" + db + "?host=" + c.dir
}

// newDatabase creates an empty database and returns its name.
func (c *cluster) newDatabase() (string, error) {
	name := fmt.Sprintf("t%d", c.dbs.Add(1))
	if _, err := c.admin.Exec("CREATE DATABASE " + name + " TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return name, nil
}

// stop stops the server (a fast shutdown: clients are disconnected) and removes its
// directory.
func (c *cluster) stop() {
	if c.admin != nil {
		c.admin.Close()
	}
	c.halt()
	os.RemoveAll(c.dir)
}

// halt stops the server and waits for it to exit.
func (c *cluster) halt() {
	c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}

// needPostgres skips t with err as the reason, or fails it where PRISM_REQUIRE names
// postgres.
func needPostgres(t testing.TB, err error) {
	t.Helper()
	if enginetest.Required("postgres") {
		t.Fatalf("PostgreSQL is unavailable, but PRISM_REQUIRE=%q requires it: %v", os.Getenv("PRISM_REQUIRE"), err)
		return
	}
	t.Skipf("PostgreSQL is unavailable (set PRISM_REQUIRE=postgres to make this a failure): %v", err)
}

// pgCluster returns the shared cluster, started at its first use.
func pgCluster(t testing.TB) *cluster {
	t.Helper()
	sharedCluster.once.Do(func() { sharedCluster.c, sharedCluster.err = startCluster() })
	if sharedCluster.err != nil {
		needPostgres(t, sharedCluster.err)
	}
	return sharedCluster.c
}

// postgresDSN returns the DSN of a new, empty store of the shared cluster: a schema of its
// own in the database stores, named by the DSN's search_path (the store's tables go to the
// current schema). A schema costs milliseconds where a database (CREATE DATABASE) costs a
// third of a second on two busy cores; the tests that need a database of their own (an
// owner, a password) make one with newDatabase.
func postgresDSN(t testing.TB) string {
	t.Helper()
	c := pgCluster(t)
	c.storesOnce.Do(func() {
		_, c.storesErr = c.admin.Exec("CREATE DATABASE stores TEMPLATE template0")
	})
	if c.storesErr != nil {
		t.Fatal(c.storesErr)
	}
	schema := fmt.Sprintf("s%d", c.dbs.Add(1))
	dsn := c.dsn("stores") + "&search_path=" + schema
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	return dsn
}

// stopClusters stops the clusters of the test binary and removes the template, at its end.
func stopClusters() {
	if sharedCluster.c != nil {
		sharedCluster.c.stop()
	}
	if pgTemplate.dir != "" {
		os.RemoveAll(pgTemplate.dir)
	}
}

// backend is a database a store may live in, for the tests that run on each.
type backend struct {
	name string
	// dsn returns the DSN of a new, empty store (skipping the test where the database
	// is unavailable).
	dsn func(t testing.TB) string
}

// backends are SQLite and PostgreSQL.
var backends = []backend{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "results.db") }},
	{"postgres", postgresDSN},
}

// open opens a new, empty store of b, closed at the end of the test.
func (b backend) open(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), b.dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// eachBackend runs f as a subtest on each backend.
func eachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}
