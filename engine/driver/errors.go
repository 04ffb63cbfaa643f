package driver

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors of engine and of every backend wrap one of these where one
// applies; test with errors.Is. Package engine re-exports each under the same name
// (engine.ErrClosed is driver.ErrClosed), so users need not import this package and
// backends need not import engine to return them.
var (
	// ErrUnavailable: a backend's library is missing or it reports no device.
	ErrUnavailable = errors.New("unavailable")
	// ErrNotFound: no backend or device matches the name or ID given.
	ErrNotFound = errors.New("not found")
	// ErrClosed: the object, or the device it belongs to, was closed.
	ErrClosed = errors.New("use of closed object")
	// ErrInvalidArg: an argument is out of range, nil, of the wrong type or of another device.
	ErrInvalidArg = errors.New("invalid argument")
	// ErrOutOfMemory: the device or host could not allocate.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrUnsupported: the device or backend cannot do what was asked.
	ErrUnsupported = errors.New("unsupported")
	// ErrBuild: a program failed to compile; errors.As with *BuildError gives the log.
	ErrBuild = errors.New("build failed")
)

// BuildError is returned by Device.Build when the source does not compile. engine wraps it
// so that errors.As finds it and errors.Is(err, ErrBuild) holds.
type BuildError struct {
	Device string // device name
	Log    string // the compiler's log, verbatim
	Err    error  // the API's status, if any
}

func (e *BuildError) Error() string {
	msg := fmt.Sprintf("build failed on %s", e.Device)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Log != "" {
		msg += "\ncompiler log:\n" + e.Log
	}
	return msg
}

func (e *BuildError) Unwrap() error { return e.Err }
