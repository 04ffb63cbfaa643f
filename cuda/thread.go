package cuda

import "github.com/prism-compute/prism/internal/osthread"

// osThread runs functions, one at a time, on one goroutine locked to one OS thread; a nil
// *osThread runs them on the caller's goroutine. It is the helper both backends share
// (internal/osthread); the CUDA backend gives each open device one, on which the device's
// primary context is current (a CUDA context is current per OS thread, and goroutines move
// between threads at cgo calls). Every CUDA call that needs the context is made through
// it; the calls of all the queues, buffers and programs of one open device are therefore
// serialized, which the driver would largely do anyway, and none of them ever runs without
// its context.
type osThread = osthread.Thread

// startOSThread starts a thread and runs init on it first; once stopped, its Call returns
// an error wrapping driver.ErrClosed.
func startOSThread(init func() error) (*osThread, error) {
	return osthread.Start(init, errClosed("device"))
}
