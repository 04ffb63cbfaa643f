package driver

import "fmt"

// BuildError is returned by Device.Build when the source does not compile. engine wraps it
// so that errors.As finds it and errors.Is(err, engine.ErrBuild) holds.
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
