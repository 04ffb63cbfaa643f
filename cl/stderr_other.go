//go:build !noopencl && !linux

package cl

import (
	"errors"
	"runtime"
)

// stderrCapture redirects nothing on this system: the drivers' compilers' output stays on
// standard error.
type stderrCapture struct{}

func openStderrCapture() (*stderrCapture, error) {
	return nil, errors.New("cl: redirecting stderr around builds is not done on " + runtime.GOOS)
}

func (c *stderrCapture) close() {}
