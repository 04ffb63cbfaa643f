package bench

import (
	"os"
	"path/filepath"
	"testing"
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
