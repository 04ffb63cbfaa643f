package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		dsn, says string
		want      error
	}{
		{"", "no store given", engine.ErrInvalidArg},
		{"mysql://db/prism", "mysql stores are not supported", engine.ErrInvalidArg},
		{":memory:", "not an in-memory database", engine.ErrInvalidArg},
		{filepath.Join(dir, "missing", "results.db"), "does not exist", ErrNotFound},
		{dir, "is a directory", engine.ErrInvalidArg},
	} {
		_, err := Open(ctx, tc.dsn)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) || !strings.HasPrefix(err.Error(), "store: ") {
			t.Errorf("Open(%q) = %v; want an error wrapping %v that says %q", tc.dsn, err, tc.want, tc.says)
		}
	}
	// A file: URI with SQLite's own options opens the same file.
	path := filepath.Join(dir, "uri.db")
	s, err := Open(ctx, "file:"+path+"?cache=private")
	if err != nil {
		t.Fatal(err)
	}
	if s.Path() != path {
		t.Errorf("Path() = %s, want %s", s.Path(), path)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("file: URI did not create %s: %v", path, err)
	}
}

func TestCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	garbage := []byte(strings.Repeat("this is not a database, only some text. ", 200))
	if err := os.WriteFile(path, garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a results store or is corrupt") {
		t.Errorf("Open of a file of garbage = %v; want an error naming %s that says it is not a store or corrupt", err, path)
	}
}

// TestUnwritable opens stores where no file can be created or written: the error names
// the file and says so.
func TestUnwritable(t *testing.T) {
	ctx := context.Background()
	t.Run("directory of the kernel", func(t *testing.T) {
		// Nobody, root included, creates a file in /proc.
		if _, err := os.Stat("/proc/self"); err != nil {
			t.Skip("no /proc")
		}
		_, err := Open(ctx, "/proc/results.db")
		if err == nil || !strings.Contains(err.Error(), "/proc/results.db") || !strings.Contains(err.Error(), "cannot be opened or created") {
			t.Errorf("Open(/proc/results.db) = %v; want an error naming the file that says it cannot be created", err)
		}
	})
	t.Run("read-only directory", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root writes read-only directories; the /proc case covers it")
		}
		dir := filepath.Join(t.TempDir(), "ro")
		if err := os.Mkdir(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "results.db")
		if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Open in a read-only directory = %v; want an error naming %s", err, path)
		}
	})
	t.Run("read-only mode", func(t *testing.T) {
		// A store opened read-only (as a file that cannot be written is) reads, and a
		// Record says the file cannot be written.
		path := filepath.Join(t.TempDir(), "results.db")
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Record(ctx, synthetic("h", "c", "cpu", time.Now(), 1, 1)); err != nil {
			t.Fatal(err)
		}
		s.Close()
		ro, err := Open(ctx, "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if runs, err := ro.Runs(ctx, Filter{}); err != nil || len(runs) != 1 {
			t.Errorf("Runs of a read-only store = %d, %v", len(runs), err)
		}
		_, err = ro.Record(ctx, synthetic("h", "c", "cpu", time.Now(), 1, 1))
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "cannot be written") {
			t.Errorf("Record into a read-only store = %v; want an error naming %s that says it cannot be written", err, path)
		}
	})
}

// TestLocked holds the write lock of a store from another connection: a Record waits for
// the busy timeout, then fails naming the file and the lock.
func TestLocked(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := open(ctx, path, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Record(ctx, synthetic("h", "c", "cpu", time.Now(), 1, 1))
	waited := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "locked by another writer (waited 200ms)") {
		t.Errorf("Record into a locked store = %v; want an error naming %s that says it is locked", err, path)
	}
	if waited < 150*time.Millisecond {
		t.Errorf("Record gave up after %v, before the busy timeout of 200ms", waited)
	}
	tx.Rollback()
	if _, err := s.Record(ctx, synthetic("h", "c", "cpu", time.Now(), 1, 1)); err != nil {
		t.Errorf("Record once the lock is released: %v", err)
	}
}
