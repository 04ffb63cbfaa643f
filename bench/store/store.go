package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prism-compute/prism/engine"
)

// RunID identifies a recorded run in its store: 1, 2, ... in the order recorded (in a
// PostgreSQL store, in the order the runs started to be recorded, where a run that was not
// committed leaves its number unused).
type RunID int64

// ErrNotFound is wrapped by the errors for a run, baseline or case that the store does not
// hold.
var ErrNotFound = errors.New("not found")

// DefaultBusyTimeout is how long a write waits for another process's write to the same
// SQLite file to end before it fails.
const DefaultBusyTimeout = 10 * time.Second

// Store is an open results store. It is safe for concurrent use by multiple goroutines;
// several processes may write one SQLite file at once, and several processes of several
// hosts one PostgreSQL database.
type Store struct {
	db   *sql.DB
	d    *dialect
	path string // the file, or the server and database, as errors name it
	busy time.Duration
}

// DefaultPath returns the default store's file, $XDG_DATA_HOME/prism/results.db or, where
// XDG_DATA_HOME is not set, ~/.local/share/prism/results.db, creating its directory.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) { // the XDG rule: a relative path is ignored
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("store: no home directory for the default store (set XDG_DATA_HOME): %w", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	dir = filepath.Join(dir, "prism")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("store: creating the store's directory: %w", err)
	}
	return filepath.Join(dir, "results.db"), nil
}

// Open opens the store at dsn and migrates an older store to SchemaVersion. dsn is
//
//   - a SQLite file's path, or a "file:" URI (whose query may add SQLite's own options,
//     such as mode=ro): the file is created where it does not exist (its directory must);
//   - a PostgreSQL database: a URL, postgres://user:password@host:port/database (or
//     postgresql://, with libpq's options in its query: sslmode=require,
//     host=/run/postgresql for a Unix socket), or libpq's key=value form ("host=db
//     dbname=prism user=ci"). The database must exist; Open creates the store's tables in
//     it (in the user's current schema). What the DSN leaves out comes from libpq's
//     variables (PGHOST, PGUSER, PGPASSWORD, ...) and ~/.pgpass, as for psql.
//
// A store of a newer schema is refused with an error wrapping ErrSchemaNewer. Other errors
// name the file, or the server and database (never the password), and say what went
// wrong: for a file, one that is not a store or is corrupt, locked past
// DefaultBusyTimeout or cannot be written; for a server, one that cannot be reached (within
// the DSN's connect_timeout, DefaultConnectTimeout where it sets none), a password or user
// refused, a database that does not exist.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return open(ctx, dsn, DefaultBusyTimeout)
}

// open is Open with the busy timeout of a SQLite store given.
func open(ctx context.Context, dsn string, busy time.Duration) (*Store, error) {
	if isPostgres(dsn) {
		return openPostgres(ctx, dsn, busy)
	}
	path, conn, err := sqliteDSN(dsn, busy)
	if err != nil {
		return nil, err
	}
	// Processes that open one store at once take turns from its creation to its
	// migration: a file created, switched to WAL and given its tables by several processes
	// together could lose the writes of some of them.
	unlock := lockDir(filepath.Dir(path))
	defer unlock()
	db, err := sql.Open(sqliteDialect.driver, conn)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	return start(ctx, &Store{db: db, d: sqliteDialect, path: path, busy: busy})
}

// lockDir holds an exclusive advisory lock (flock) on dir until the returned function is
// called; where dir cannot be locked it returns at once and nothing is held.
func lockDir(dir string) (unlock func()) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// start connects to the store s opened and migrates it, or closes it and returns why not.
func start(ctx context.Context, s *Store) (*Store, error) {
	if err := s.db.PingContext(ctx); err != nil {
		s.db.Close()
		return nil, s.fail("opening", err)
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// sqliteDSN returns the file that dsn names and the go-sqlite3 connection string for it:
// WAL mode, foreign keys on, transactions that take the write lock at once (so that two
// writers wait for each other instead of failing), waiting up to busy for a lock.
func sqliteDSN(dsn string, busy time.Duration) (path, conn string, err error) {
	if strings.TrimSpace(dsn) == "" {
		return "", "", fmt.Errorf("store: no store given (a SQLite file's path): %w", engine.ErrInvalidArg)
	}
	if i := strings.Index(dsn, "://"); i > 0 && !strings.HasPrefix(dsn, "file:") {
		return "", "", fmt.Errorf("store: %q: a store is a SQLite file (a path or file:...) or a PostgreSQL database (postgres://...); %s stores are not supported: %w", dsn, dsn[:i], engine.ErrInvalidArg)
	}
	rest, isURI := strings.CutPrefix(dsn, "file:")
	rest, query, _ := strings.Cut(rest, "?")
	if isURI {
		if p, err := url.PathUnescape(rest); err == nil {
			rest = p
		}
	}
	if rest == "" || rest == ":memory:" {
		return "", "", fmt.Errorf("store: %q: a store is a file, not an in-memory database: %w", dsn, engine.ErrInvalidArg)
	}
	if path, err = filepath.Abs(rest); err != nil {
		return "", "", fmt.Errorf("store: %s: %w", rest, err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return "", "", fmt.Errorf("store: cannot create %s: its directory %s does not exist: %w", path, filepath.Dir(path), ErrNotFound)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return "", "", fmt.Errorf("store: %s is a directory, not a store file: %w", path, engine.ErrInvalidArg)
	}
	opts := fmt.Sprintf("_busy_timeout=%d&_journal_mode=WAL&_foreign_keys=1&_txlock=immediate", busy.Milliseconds())
	if query != "" {
		opts += "&" + query
	}
	return path, "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + opts, nil
}

// Path returns the store's file, or for PostgreSQL its server and database as a URL
// without the password (postgres://user@host:5432/database).
func (s *Store) Path() string { return s.path }

// Close closes the store. It may be called more than once.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: %s: closing: %w", s.path, err)
	}
	return nil
}

// fail returns the error for err, met while doing what, naming the store's file (or server) and
// saying what the database's error means where the dialect knows it.
func (s *Store) fail(what string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("store: %s: %s: %w", s.path, what, err)
	}
	if why := s.d.explain(err, s.busy); why != "" {
		return fmt.Errorf("store: %s: %s: %s: %w", s.path, what, why, err)
	}
	return fmt.Errorf("store: %s: %s: %w", s.path, what, err)
}
