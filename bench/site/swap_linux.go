package site

import (
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps the directories a and b in one step (renameat2's RENAME_EXCHANGE): a
// reader of b sees one or the other, never neither. It fails where the file system does
// not support it; swap then falls back to two renames.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// syncTree makes the files written under dir durable before the site is put in place:
// one syncfs of dir's file system, cheaper than a sync of each of its thousands of files.
func syncTree(dir string) {
	if d, err := os.Open(dir); err == nil {
		unix.Syncfs(int(d.Fd()))
		d.Close()
	}
}
