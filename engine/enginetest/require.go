package enginetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// Required reports whether the environment variable PRISM_REQUIRE, a comma-separated list
// of backend names ("cuda,opencl"), names backend.
func Required(backend string) bool {
	for _, name := range strings.Split(os.Getenv("PRISM_REQUIRE"), ",") {
		if strings.EqualFold(strings.TrimSpace(name), backend) {
			return true
		}
	}
	return false
}

// RequireOrSkip handles an error from probing backend (engine.Devices, engine.Open, ...).
// It does nothing when err is nil. When err wraps engine.ErrUnavailable (the backend's
// library is missing or it has no device) it skips the test with err as the reason, unless
// PRISM_REQUIRE names the backend: then, as for any other error, the test fails at once.
// A backend that is not registered (engine.ErrNotFound: a forgotten import) is a failure.
func RequireOrSkip(t testing.TB, backend string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	switch {
	case !errors.Is(err, engine.ErrUnavailable):
		t.Fatalf("backend %s: %v", backend, err)
	case Required(backend):
		t.Fatalf("backend %s is unavailable, but PRISM_REQUIRE=%q requires it: %v", backend, os.Getenv("PRISM_REQUIRE"), err)
	default:
		t.Skipf("backend %s is unavailable (set PRISM_REQUIRE=%s to make this a failure): %v", backend, backend, err)
	}
}

// DeviceIDs returns the full IDs ("opencl:0:0") of backend's devices, from engine.Devices.
// An error, or an empty list, goes through RequireOrSkip: the test is skipped (or fails,
// when PRISM_REQUIRE names the backend), so the result is never empty.
func DeviceIDs(t testing.TB, backend string) []string {
	t.Helper()
	infos, err := engine.Devices(context.Background(), backend)
	if err == nil && len(infos) == 0 {
		err = fmt.Errorf("backend %s reports no device: %w", backend, engine.ErrUnavailable)
	}
	RequireOrSkip(t, backend, err)
	ids := make([]string, len(infos))
	for i, in := range infos {
		ids[i] = backend + ":" + in.ID
	}
	return ids
}

// ForEachDevice runs f as a subtest on every device of backend, each opened through
// engine.Open and closed afterwards (a Close error fails the subtest). Backend probing
// follows DeviceIDs: skipped when unavailable, failed under PRISM_REQUIRE.
func ForEachDevice(t *testing.T, backend string, f func(t *testing.T, dev *engine.Device)) {
	t.Helper()
	for _, id := range DeviceIDs(t, backend) {
		t.Run(id, func(t *testing.T) {
			dev, err := engine.Open(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := dev.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			}()
			f(t, dev)
		})
	}
}
