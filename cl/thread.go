//go:build !noopencl

package cl

import "github.com/prism-compute/prism/internal/osthread"

// osThread runs functions, one at a time, on one goroutine locked to one OS thread; a nil
// *osThread runs them on the caller's goroutine. It is the helper both backends share
// (internal/osthread); the OpenCL backend uses it only where a driver needs every call on
// a context made from one thread (pinnedThread: Oclgrind), and otherwise calls on the
// caller's goroutine.
type osThread = osthread.Thread

// startOSThread starts a thread and runs init on it first; once stopped, its Call returns
// an error wrapping driver.ErrClosed.
func startOSThread(init func() error) (*osThread, error) {
	return osthread.Start(init, errClosed("device"))
}
