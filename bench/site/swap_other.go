//go:build !linux

package site

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// exchange is not available here: swap uses two renames.
func exchange(a, b string) error { return errors.ErrUnsupported }

// syncTree makes the files written under dir durable before the site is put in place, one
// by one.
func syncTree(dir string) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil {
			if f, err := os.Open(path); err == nil {
				f.Sync()
				f.Close()
			}
		}
		return nil
	})
}
