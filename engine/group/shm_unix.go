//go:build linux

package group

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// makeSegment makes a file of size bytes in dir, its blocks reserved (fallocate: a full
// tmpfs says so here rather than with SIGBUS when the memory is first touched), and maps
// it shared. remove deletes the file; the mapping stays.
func makeSegment(dir string, size int64) (path string, mem []byte, remove func() error, err error) {
	name := make([]byte, 8)
	rand.Read(name)
	path = filepath.Join(dir, fmt.Sprintf("prism-%d-%s", os.Getpid(), hex.EncodeToString(name)))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, nil, fmt.Errorf("shared memory: %w", err)
	}
	defer f.Close()
	remove = func() error { return os.Remove(path) }
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		remove()
		return "", nil, nil, fmt.Errorf("shared memory: reserving %d bytes in %s: %w", size, dir, err)
	}
	mem, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		remove()
		return "", nil, nil, fmt.Errorf("shared memory: mapping %d bytes of %s: %w", size, path, err)
	}
	return path, mem, remove, nil
}

// mapSegment maps size bytes of the file another process made.
func mapSegment(path string, size int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	if fi.Size() < size {
		return nil, fmt.Errorf("shared memory: %s holds %d bytes here, not %d: the processes do not share it", path, fi.Size(), size)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shared memory: mapping %d bytes of %s: %w", size, path, err)
	}
	return mem, nil
}

// unmapSegment unmaps a segment (nil: nothing).
func unmapSegment(mem []byte) {
	if mem != nil {
		unix.Munmap(mem)
	}
}
