//go:build !noopencl

package cl

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestOSThread: the backend's thread runs init and calls on one OS thread and, once
// stopped, refuses calls with an error of this package that wraps ErrClosed
// (internal/osthread tests the helper itself).
func TestOSThread(t *testing.T) {
	var tids []int
	th, err := startOSThread(func() error { tids = append(tids, syscall.Gettid()); return nil })
	if err != nil {
		t.Fatal(err)
	}
	th.Do(func() { tids = append(tids, syscall.Gettid()) })
	if len(tids) != 2 || tids[0] != tids[1] {
		t.Errorf("init and a call ran on OS threads %v, want one", tids)
	}
	th.Stop()
	err = th.Call(func() error { return nil })
	if !errors.Is(err, engine.ErrClosed) || !strings.HasPrefix(err.Error(), "cl: ") {
		t.Errorf("call after stop = %v, want a cl: error wrapping ErrClosed", err)
	}
	if _, err := startOSThread(func() error { return errors.New("init failed") }); err == nil {
		t.Error("a failed init started the thread")
	}
}
