package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriteFileAtomic checks that a write replaces the file whole, keeps its mode, leaves no
// temporary file behind, and that a failed write leaves the old file as it was.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("file holds %q, want new", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", fi.Mode().Perm())
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x.json"), []byte("x")); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
	if err := WriteFileAtomic(dir, []byte("x")); err == nil {
		t.Error("a write over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only out.json: a temporary file was left", len(entries))
	}
}

// TestWriteFileAtomicThroughLinks checks that a symbolic link is written through (the file
// it points to replaced, the link kept), a dangling link creates its target, and a loop of
// links is an error.
func TestWriteFileAtomicThroughLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	if err := os.WriteFile(real, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link.json is no longer a link: %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the link's target holds %q, want new", b)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "made.json"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(dangling, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "made.json")); string(b) != "x" {
		t.Errorf("a dangling link's target holds %q, want x", b)
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Symlink(b, a)
	os.Symlink(a, b)
	if err := WriteFileAtomic(a, []byte("x")); err == nil || !strings.Contains(err.Error(), "loop") {
		t.Errorf("a loop of links: %v, want an error that says loop", err)
	}
}

// TestWriteFileAtomicNotRegular checks that /dev/null and a pipe are written in place, as a
// shell's redirection would, and a directory is refused.
func TestWriteFileAtomicNotRegular(t *testing.T) {
	if err := WriteFileAtomic(os.DevNull, []byte("discarded")); err != nil {
		t.Errorf("writing %s: %v", os.DevNull, err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := WriteFileAtomic(fifo, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("the reader of the pipe got %q", s)
	}
	if err := WriteFileAtomic(dir, []byte("x")); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("writing over a directory: %v, want an error that says directory", err)
	}
}

// TestRemoveStaleTemps checks that the temporary files a killed process left are removed
// by the next write of the same file, and that those of a running process, recent ones and
// other files are kept.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	// A process that ran and is gone: its PID is free once Wait returns.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot start a process: %v", err)
	}
	dead := cmd.Process.Pid
	old := time.Now().Add(-2 * staleAge)
	files := map[string]bool{ // name: removed
		fmt.Sprintf(".run.json.tmp-%d-123", dead):        true,
		fmt.Sprintf(".run.json.tmp-%d-456", os.Getpid()): false, // this process: running
		fmt.Sprintf(".other.json.tmp-%d-1", dead):        false, // another file's
		"run.json.tmp-1-1":                               false, // not a hidden temp
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	recent := filepath.Join(dir, fmt.Sprintf(".run.json.tmp-%d-789", dead))
	os.WriteFile(recent, nil, 0o644)
	files[filepath.Base(recent)] = false // another host's write may still be going on
	if err := WriteFileAtomic(path, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != removed {
			t.Errorf("%s: removed %v, want %v", name, gone, removed)
		}
	}
}

// TestRemoveTemps checks that the temporary file of a write in progress is removed by
// RemoveTemps, as a process exiting at once on a second signal calls it.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, ".x.tmp-1-1")
	os.WriteFile(tmp, nil, 0o644)
	untrack := trackTemp(tmp)
	defer untrack()
	RemoveTemps()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the temporary file of a write in progress is still there: %v", err)
	}
}
