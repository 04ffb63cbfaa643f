package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Every file Prism writes (reports, charts, pages) goes through WriteFileAtomic: a failed or
// interrupted write leaves the old file as it was.

// WriteFileAtomic replaces path with data whole: data goes to a temporary file in the same
// directory, which is synced, given the mode of the file it replaces (0644 for a new one)
// and renamed over path; the directory is then synced so that the rename survives a crash.
// A reader sees the old file or the new one, never a part. On error the temporary file is
// removed and path is left as it was.
//
// A path that is a symbolic link is written through the link: the file it points to is
// replaced and the link kept. A path that exists and is not a regular file, such as
// /dev/null, a pipe or a terminal, is written in place, as a shell's redirection would; a
// directory is refused. Temporary files of earlier writes of path that a killed process
// left behind are removed first (see RemoveStaleTemps).
func WriteFileAtomic(path string, data []byte) (err error) {
	fail := func(err error) error { return fmt.Errorf("bench: write %s: %w", path, err) }
	target, err := resolveLinks(path)
	if err != nil {
		return fail(err)
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		switch {
		case fi.IsDir():
			return fail(errors.New("it is a directory"))
		case !fi.Mode().IsRegular():
			return writeInPlace(target, data, fail)
		}
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(target)
	RemoveStaleTemps(target)
	tmp, err := os.CreateTemp(dir, tempPrefix(target))
	if err != nil {
		return fail(err)
	}
	untrack := trackTemp(tmp.Name())
	defer untrack()
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
	if err = os.Rename(tmp.Name(), target); err != nil {
		return fail(err)
	}
	if d, err := os.Open(dir); err == nil { // best effort: the file is in place either way
		d.Sync()
		d.Close()
	}
	return nil
}

// writeInPlace writes data to an existing file that is not a regular one (a device, a
// pipe): there is nothing to replace atomically.
func writeInPlace(path string, data []byte, fail func(error) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	return nil
}

// maxLinks is how many symbolic links resolveLinks follows before it calls the chain a loop.
const maxLinks = 40

// resolveLinks returns the file that path names once its symbolic links are followed; a
// link that points to a file not yet there resolves to that file's path. Only the last
// element is followed: the directories are the system's to resolve.
func resolveLinks(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return "", fmt.Errorf("more than %d symbolic links in a chain (a loop?)", maxLinks)
}

// tempPrefix is the name pattern of the temporary files of path: hidden, naming the file
// they will replace and the process that writes them, so that RemoveStaleTemps knows whose
// they are.
func tempPrefix(path string) string {
	return "." + filepath.Base(path) + ".tmp-" + strconv.Itoa(os.Getpid()) + "-*"
}

// staleAge is how old a temporary file of a process that no longer runs on this host must
// be before RemoveStaleTemps removes it: a process of another host writing the same shared
// directory is left that long to finish.
const staleAge = time.Minute

// RemoveStaleTemps removes the temporary files that writes of path by processes no longer
// running left behind (a process killed by SIGKILL or a power cut, which no cleanup runs
// in): those named by tempPrefix whose process is gone and that were last written more than
// staleAge ago. It returns how many it removed; errors are ignored (the next write tries
// again).
func RemoveStaleTemps(path string) int {
	dir, base := filepath.Dir(path), "."+filepath.Base(path)+".tmp-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || processRuns(pid) {
			continue
		}
		if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < staleAge {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}

// temps are the temporary files being written now, which RemoveTemps removes.
var temps struct {
	sync.Mutex
	names map[string]bool
}

func trackTemp(name string) (untrack func()) {
	temps.Lock()
	defer temps.Unlock()
	if temps.names == nil {
		temps.names = map[string]bool{}
	}
	temps.names[name] = true
	return func() {
		temps.Lock()
		delete(temps.names, name)
		temps.Unlock()
	}
}

// RemoveTemps removes the temporary files of the writes in progress: a process that must
// exit at once (a second Ctrl-C) calls it first, so that no half-written file is left.
func RemoveTemps() {
	temps.Lock()
	defer temps.Unlock()
	for name := range temps.names {
		os.Remove(name)
	}
}
