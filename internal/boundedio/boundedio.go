package boundedio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the error for a path that is not a regular file: a named
// pipe, a device, a directory, a socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for a file larger than the limit of a read.
var ErrTooLarge = errors.New("file too large")

// Open opens the regular file at path for reading, following symbolic links, and returns
// it with its size. Anything else at path is an error wrapping ErrNotRegular, returned
// without waiting: the path is examined before it is opened, and opened without blocking
// (a named pipe put there in between is found by the open file's own mode and closed).
func Open(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, notRegular(path, st.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, notRegular(path, st.Mode())
	}
	return f, st.Size(), nil
}

// ReadFile returns the contents of the regular file at path (Open), refusing one of more
// than limit bytes with an error wrapping ErrTooLarge: at once when the file says so, or
// after limit+1 bytes when it grows while being read.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, TooLarge(path, size, limit)
	}
	buf := make([]byte, 0, size+1) // one more, to see the end without growing
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, TooLarge(path, int64(len(buf)), limit)
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // it grew: let append pick the next capacity
		}
	}
}

// TooLarge returns the error for the file at path, of size bytes (or at least size), above
// limit bytes; it wraps ErrTooLarge.
func TooLarge(path string, size, limit int64) error {
	return fmt.Errorf("%s holds %s, more than the %s read: %w", path, Bytes(size), Bytes(limit), ErrTooLarge)
}

// notRegular returns the error for path, of mode m, naming what it is and, for a link,
// where it leads.
func notRegular(path string, m fs.FileMode) error {
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	}
	if target, err := os.Readlink(path); err == nil {
		path = fmt.Sprintf("%s (a link to %s)", path, target)
	}
	return fmt.Errorf("%s is %s, not a regular file: %w", path, what, ErrNotRegular)
}

// Bytes formats n bytes exactly, in the largest binary unit that divides it (768 KiB,
// 1 GiB, 1000 bytes).
func Bytes(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := 0
	for n != 0 && n%1024 == 0 && u < len(units)-1 {
		n /= 1024
		u++
	}
	if n == 1 && u == 0 {
		return "1 byte"
	}
	return fmt.Sprintf("%d %s", n, units[u])
}
