// Package osthread runs functions on one goroutine locked to one OS thread, for the
// backends whose driver keeps state per OS thread: a CUDA context is current per thread,
// and some OpenCL drivers (Oclgrind) want every call on a context from one thread, while
// goroutines move between threads at cgo calls. Both backends (cl, cuda) use it.
package osthread

import (
	"runtime"
	"sync"
)

// Thread runs functions, one at a time, on one goroutine locked to one OS thread. A nil
// *Thread runs them on the caller's goroutine instead, so that code can use one
// unconditionally. A Thread is safe for concurrent use: calls from many goroutines are
// serialized.
type Thread struct {
	calls   chan func()
	stopped error        // what Call returns once the thread is stopped
	mu      sync.RWMutex // held for reading while a call is handed over, for writing by Stop
	done    bool
}

// Start starts a thread and runs init on it first; if init fails, the thread is stopped
// and init's error returned. stopped is the error Call returns once the thread is stopped
// (the backend's "device is closed").
func Start(init func() error, stopped error) (*Thread, error) {
	t := &Thread{calls: make(chan func()), stopped: stopped}
	go func() {
		// Never unlocked: when Stop ends the loop, the goroutine exits and takes its OS
		// thread, and whatever thread-local state the driver kept there, with it.
		runtime.LockOSThread()
		for f := range t.calls {
			f()
		}
	}()
	if err := t.Call(init); err != nil {
		t.Stop()
		return nil, err
	}
	return t, nil
}

// Do runs f on the thread and returns when f has returned; once the thread is stopped it
// reports false without running f. On a nil thread it runs f on the caller's goroutine. f
// must not call Do on the same thread (it would wait for itself).
func (t *Thread) Do(f func()) bool {
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

// Call is Do for a function that returns an error; once the thread is stopped it returns
// the error given to Start without running f.
func (t *Thread) Call(f func() error) error {
	var err error
	if !t.Do(func() { err = f() }) {
		return t.stopped
	}
	return err
}

// Stop ends the thread after the calls already handed over; later calls of Do report
// false. Idempotent; a nil thread has nothing to stop.
func (t *Thread) Stop() {
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
