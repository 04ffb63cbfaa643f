package engine

import (
	"fmt"
	"strings"

	"github.com/prism-compute/prism/engine/driver"
)

// Sentinel errors. Errors returned by engine and by backends wrap one of these where one
// applies; test with errors.Is. Each is the sentinel of the same name in package driver,
// where backends find it: errors.Is(err, engine.ErrClosed) and errors.Is(err,
// driver.ErrClosed) are one test.
var (
	// ErrUnavailable: a backend's library is missing or it reports no device.
	ErrUnavailable = driver.ErrUnavailable
	// ErrNotFound: no backend or device matches the name or ID given.
	ErrNotFound = driver.ErrNotFound
	// ErrClosed: the object, or the device it belongs to, was closed.
	ErrClosed = driver.ErrClosed
	// ErrInvalidArg: an argument is out of range, nil, of the wrong type or of another device.
	ErrInvalidArg = driver.ErrInvalidArg
	// ErrOutOfMemory: the device or host could not allocate.
	ErrOutOfMemory = driver.ErrOutOfMemory
	// ErrUnsupported: the device or backend cannot do what was asked.
	ErrUnsupported = driver.ErrUnsupported
	// ErrBuild: a program failed to compile; errors.As with *BuildError gives the log.
	ErrBuild = driver.ErrBuild
)

// BuildError carries a compiler's log. errors.Is(err, ErrBuild) holds for it.
type BuildError = driver.BuildError

type buildErr struct{ be *driver.BuildError }

func (e buildErr) Error() string   { return "engine: " + e.be.Error() }
func (e buildErr) Unwrap() []error { return []error{ErrBuild, e.be} }

// prefix starts every error of this package.
const prefix = "engine: "

// contextError adds context to an error without repeating its "engine: " prefix, so that
// each layer says who it is once.
type contextError struct {
	context string
	err     error
}

func (e *contextError) Error() string {
	return prefix + e.context + ": " + strings.TrimPrefix(e.err.Error(), prefix)
}

func (e *contextError) Unwrap() error { return e.err }

// wrapf returns err with the context that format and args give ("launch axpy: argument 3"),
// prefixed "engine: " once. err may come from this package or from a driver.
func wrapf(err error, format string, args ...any) error {
	return &contextError{context: fmt.Sprintf(format, args...), err: err}
}
