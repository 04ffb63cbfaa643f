//go:build !linux

package group

import (
	"errors"

	"github.com/prism-compute/prism/engine"
)

var errNoSegment = errors.Join(errors.New("shared memory between processes is made on Linux only"), engine.ErrUnsupported)

func makeSegment(string, int64) (string, []byte, func() error, error) {
	return "", nil, nil, errNoSegment
}

func mapSegment(string, int64) ([]byte, error) { return nil, errNoSegment }

func unmapSegment([]byte) {}
