package group

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// PanicError is a panic recovered in one of the group's goroutines: a bug in Prism or in a
// backend, never a peer's doing. The call that started the goroutine returns it (wrapped),
// and Group.Panicked keeps the first, so that a program can end as it ends on a panic of
// its own once it has saved its work.
type PanicError struct {
	// Where names the goroutine: "accepting a connection", "all-reduce on device 1", ...
	Where string
	// Value is what was passed to panic; Stack the goroutine's stack where it panicked.
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("group: panic while %s: %v", e.Where, e.Value)
}

// recovered returns the panic of the goroutine it is called from (deferred), as a
// *PanicError, or nil.
func recovered(where string, p any) error {
	if p == nil {
		return nil
	}
	return &PanicError{Where: where, Value: p, Stack: debug.Stack()}
}

// panics keeps the first panic recovered in a group's goroutines.
type panics struct{ first atomic.Pointer[PanicError] }

// keep records the *PanicError err is or wraps when it is the first, and returns err.
func (p *panics) keep(err error) error {
	var pe *PanicError
	if p != nil && errors.As(err, &pe) {
		p.first.CompareAndSwap(nil, pe)
	}
	return err
}

// goSafe runs f in a goroutine that recovers a panic into a *PanicError, given to done
// (with f's error otherwise); done may be nil.
func goSafe(where string, f func() error, done func(error)) {
	go func() {
		var err error
		defer func() {
			if e := recovered(where, recover()); e != nil {
				err = e
			}
			if done != nil {
				done(err)
			}
		}()
		err = f()
	}()
}
