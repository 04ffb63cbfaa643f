//go:build unix

package bench

import (
	"errors"
	"os"
	"syscall"
)

// processRuns reports whether a process with ID pid runs on this host (or may: one this
// process may not signal runs).
func processRuns(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
