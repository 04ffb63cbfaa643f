//go:build !noopencl

package cl

import (
	"runtime"
	"strings"
	"sync"
)

// pinnedThread is the thread policy: it reports whether every OpenCL call on a context of
// the platform named must be made from the one OS thread that created the context.
//
// Oclgrind 21.10 needs it. Its uninitialized-memory checker (--uninitialized) keeps a
// thread-local memory pool that only the thread calling clCreateContext (and Oclgrind's own
// kernel threads) ever allocate; a host write, fill or copy executed from any other thread
// dereferences a null pool. Go moves goroutines between OS threads, so without the policy
// the tests crashed here with SIGSEGV in oclgrind::MemoryPool::alloc (reached from
// Uninitialized::hostMemoryStore under clEnqueueWriteBuffer / clFinish) in 1 to 3 of 10
// runs. Real drivers are thread-safe, as OpenCL requires, and run calls on the caller's
// thread.
func pinnedThread(platform string) bool {
	return strings.Contains(platform, "Oclgrind")
}

// osThread runs functions, one at a time, on one goroutine locked to one OS thread. A nil
// *osThread runs them on the caller's goroutine, so code can call do unconditionally.
type osThread struct {
	calls chan func()

	mu      sync.RWMutex // held for reading while a call is handed over; stop takes it
	stopped bool
}

func startOSThread() *osThread {
	t := &osThread{calls: make(chan func())}
	go func() {
		// Never unlocked: when stop ends the loop, the goroutine exits and takes its OS
		// thread, and whatever thread-local state the driver kept there, with it.
		runtime.LockOSThread()
		for f := range t.calls {
			f()
		}
	}()
	return t
}

// do runs f on the thread and returns when f has returned. f must not call do on the same
// thread (it would wait for itself). After stop, do runs f on the caller's goroutine: only
// releases of objects that outlived their context (an event not closed before its device)
// come that late, and those no longer touch the context's thread-local state.
func (t *osThread) do(f func()) {
	if t == nil {
		f()
		return
	}
	t.mu.RLock()
	if t.stopped {
		t.mu.RUnlock()
		f()
		return
	}
	done := make(chan struct{})
	t.calls <- func() {
		defer close(done)
		f()
	}
	t.mu.RUnlock()
	<-done
}

// call is do for a function that returns an error.
func (t *osThread) call(f func() error) error {
	var err error
	t.do(func() { err = f() })
	return err
}

// stop ends the thread once the calls handed over are done. Idempotent.
func (t *osThread) stop() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.stopped = true
		close(t.calls)
	}
}
