//go:build unix

package cuda

import (
	"bytes"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCacheHostileEntry checks that a cache entry that is no regular file (a FIFO with no
// writer, a link to /dev/zero, a directory), an empty one or one of a header claiming more
// than it holds is passed over at once, with a note under PRISM_TRACE, and that the store
// of the rebuild replaces it. Before, a FIFO waited for a writer, ignoring SIGTERM, and
// /dev/zero was read until the kernel's OOM killer ended the process.
func TestCacheHostileEntry(t *testing.T) {
	dir := t.TempDir()
	key := cacheInput{text: "src", arch: "sm_90", nvrtcVersion: "13.0"}.key()
	path := cachePath(dir, key)
	image := []byte("\x7fELF not really a cubin")
	t.Setenv("PRISM_TRACE", "1")
	for _, c := range []struct {
		name string
		make func() error
		note string // in the trace line
	}{
		{"FIFO", func() error { return syscall.Mkfifo(path, 0o644) }, "a named pipe (FIFO), not a regular file"},
		{"link to /dev/zero", func() error { return os.Symlink("/dev/zero", path) }, "(a link to /dev/zero) is a character device"},
		{"directory", func() error { return os.Mkdir(path, 0o755) }, "a directory, not a regular file"},
		{"empty", func() error { return os.WriteFile(path, nil, 0o644) }, "corrupt entry"},
		{"header only", func() error { return os.WriteFile(path, []byte(cacheMagic+"c"), 0o644) }, "corrupt entry"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
			if err := c.make(); err != nil {
				t.Skipf("cannot make a %s here: %v", c.name, err)
			}
			trace := captureStderr(t, func() {
				done := make(chan bool, 1)
				go func() {
					_, _, ok := cacheLoad(dir, key)
					done <- ok
				}()
				select {
				case ok := <-done:
					if ok {
						t.Error("the entry was used")
					}
				case <-time.After(5 * time.Second):
					t.Fatal("cacheLoad still reading after 5 s")
				}
			})
			if !strings.Contains(trace, "compiling again") || !strings.Contains(trace, c.note) {
				t.Errorf("trace %q; want a note that says %q and that the build compiles again", trace, c.note)
			}
			if c.name == "directory" {
				return // a rename cannot replace a directory: the build goes on uncached
			}
			if err := cacheStore(dir, key, kindCUBIN, image); err != nil {
				t.Fatalf("the rebuild's store: %v", err)
			}
			if _, got, ok := cacheLoad(dir, key); !ok || !bytes.Equal(got, image) {
				t.Error("the rebuild's store did not replace the entry")
			}
		})
	}
}

// TestCacheEntryLimit checks that an entry larger than any build writes is not read.
func TestCacheEntryLimit(t *testing.T) {
	dir := t.TempDir()
	key := cacheInput{text: "big"}.key()
	f, err := os.Create(cachePath(dir, key))
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file one byte above the limit: its size is refused before a byte is read.
	if err := f.Truncate(maxCacheEntryBytes + 1); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	f.Close()
	t.Setenv("PRISM_TRACE", "1")
	trace := captureStderr(t, func() {
		if _, _, ok := cacheLoad(dir, key); ok {
			t.Error("an entry above the limit was used")
		}
	})
	if !strings.Contains(trace, "more than the") {
		t.Errorf("trace %q; want it to name the limit", trace)
	}
}

// captureStderr returns what fn writes on os.Stderr.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	out := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	func() {
		defer func() { os.Stderr = old; w.Close() }()
		fn()
	}()
	return <-out
}
