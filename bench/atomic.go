package bench

import (
	"fmt"
	"os"
	"path/filepath"
)

// Every file Prism writes (reports, charts, pages) goes through WriteFileAtomic: a failed or
// interrupted write leaves the old file as it was.

// WriteFileAtomic replaces path with data whole: data goes to a temporary file in the same
// directory, which is synced, given the mode of the file it replaces (0644 for a new one)
// and renamed over path; the directory is then synced so that the rename survives a crash.
// A reader sees the old file or the new one, never a part. On error the temporary file is
// removed and path is left as it was.
func WriteFileAtomic(path string, data []byte) (err error) {
	fail := func(err error) error { return fmt.Errorf("bench: write %s: %w", path, err) }
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fail(fmt.Errorf("not a regular file"))
		}
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fail(err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err = tmp.Sync(); err != nil {
		return fail(err)
	}
	if err = tmp.Close(); err != nil {
		return fail(err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fail(err)
	}
	if d, err := os.Open(dir); err == nil { // best effort: the file is in place either way
		d.Sync()
		d.Close()
	}
	return nil
}
