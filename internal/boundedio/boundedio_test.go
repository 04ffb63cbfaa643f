//go:build unix

package boundedio_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prism-compute/prism/internal/boundedio"
)

// hostile makes, in dir, each kind of path a reader must refuse at once and returns them by
// name: a FIFO with no writer (opening it for reading the plain way waits for one), a link
// to /dev/zero (reading it never ends), a link to a FIFO, a directory.
func hostile(t *testing.T, dir string) map[string]string {
	t.Helper()
	paths := map[string]string{"directory": dir}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	paths["FIFO"] = fifo
	link := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	paths["link to a FIFO"] = link
	if _, err := os.Stat("/dev/zero"); err == nil {
		zero := filepath.Join(dir, "zero")
		if err := os.Symlink("/dev/zero", zero); err != nil {
			t.Fatal(err)
		}
		paths["link to /dev/zero"] = zero
	}
	return paths
}

// TestHostileFiles checks that every path that is not a regular file is refused at once,
// wrapping ErrNotRegular and saying what it is, by Open and ReadFile alike.
func TestHostileFiles(t *testing.T) {
	want := map[string]string{
		"directory":         "a directory",
		"FIFO":              "a named pipe (FIFO)",
		"link to a FIFO":    "a named pipe (FIFO)",
		"link to /dev/zero": "(a link to /dev/zero) is a character device",
	}
	for name, path := range hostile(t, t.TempDir()) {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				_, err := boundedio.ReadFile(path, 1<<20)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("ReadFile(%s) still waiting after 10 s", path)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("ReadFile took %v", took)
			}
			if !errors.Is(err, boundedio.ErrNotRegular) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want[name]) {
				t.Errorf("ReadFile(%s) = %v; want ErrNotRegular naming the path and %q", path, err, want[name])
			}
			if f, _, err := boundedio.Open(path); !errors.Is(err, boundedio.ErrNotRegular) {
				if f != nil {
					f.Close()
				}
				t.Errorf("Open(%s) = %v; want ErrNotRegular", path, err)
			}
		})
	}
}

// TestReadFileLimit checks the limit: a file of exactly the limit is read, one byte more is
// refused naming both sizes, an empty file is empty, a missing one is fs.ErrNotExist.
func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	data := bytes.Repeat([]byte("x"), 4096)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := boundedio.ReadFile(path, 4096); err != nil || !bytes.Equal(got, data) {
		t.Errorf("at the limit: %d bytes, %v", len(got), err)
	}
	_, err := boundedio.ReadFile(path, 4095)
	if !errors.Is(err, boundedio.ErrTooLarge) || !strings.Contains(err.Error(), "holds 4 KiB, more than the 4095 bytes read") {
		t.Errorf("above the limit: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := boundedio.ReadFile(empty, 10); err != nil || len(got) != 0 {
		t.Errorf("empty file: %q, %v", got, err)
	}
	if _, err := boundedio.ReadFile(filepath.Join(dir, "none"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
	f, size, err := boundedio.Open(path)
	if err != nil || size != 4096 {
		t.Fatalf("Open = %d, %v", size, err)
	}
	f.Close()
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 1000: "1000 bytes", 1 << 20: "1 MiB", 3 << 30: "3 GiB", 1<<40 + 1: "1099511627777 bytes", 768 << 10: "768 KiB"} {
		if got := boundedio.Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
