//go:build !noopencl

package cl

import (
	"runtime"
	"sync"
)

// osThread runs functions, one at a time, on one goroutine locked to one OS thread. A nil
// *osThread runs them on the caller's goroutine instead, so that code can use one
// unconditionally. Both backends have this helper, with the same semantics (cl/thread.go,
// cuda/thread.go); the OpenCL backend uses it only where a driver needs every call on a
// context made from one thread (pinnedThread: Oclgrind), and otherwise calls on the caller's
// goroutine.
type osThread struct {
	calls chan func()
	mu    sync.RWMutex // held for reading while a call is handed over, for writing by stop
	done  bool
}

// startOSThread starts a thread and runs init on it first; if init fails, the thread is
// stopped and init's error returned.
func startOSThread(init func() error) (*osThread, error) {
	t := &osThread{calls: make(chan func())}
	go func() {
		// Never unlocked: when stop ends the loop, the goroutine exits and takes its OS
		// thread, and whatever thread-local state the driver kept there, with it.
		runtime.LockOSThread()
		for f := range t.calls {
			f()
		}
	}()
	if err := t.call(init); err != nil {
		t.stop()
		return nil, err
	}
	return t, nil
}

// do runs f on the thread and returns when f has returned; once the thread is stopped it
// reports false without running f. On a nil thread it runs f on the caller's goroutine. f
// must not call do on the same thread (it would wait for itself).
func (t *osThread) do(f func()) bool {
	if t == nil {
		f()
		return true
	}
	t.mu.RLock()
	if t.done {
		t.mu.RUnlock()
		return false
	}
	done := make(chan struct{})
	t.calls <- func() {
		defer close(done)
		f()
	}
	t.mu.RUnlock()
	<-done
	return true
}

// call is do for a function that returns an error; once the thread is stopped it returns
// an error wrapping driver.ErrClosed without running f.
func (t *osThread) call(f func() error) error {
	var err error
	if !t.do(func() { err = f() }) {
		return errClosed("device")
	}
	return err
}

// stop ends the thread after the calls already handed over; later calls of do report
// false. Idempotent; a nil thread has nothing to stop.
func (t *osThread) stop() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.done {
		t.done = true
		close(t.calls)
	}
}
