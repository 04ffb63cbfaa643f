package engine_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// TestSentinelsAreTheDrivers checks that each sentinel of engine is the one of package
// driver that backends wrap, so that errors.Is answers the same through either name, and
// that no two sentinels match each other.
func TestSentinelsAreTheDrivers(t *testing.T) {
	pairs := []struct {
		name      string
		user, spi error
	}{
		{"ErrUnavailable", engine.ErrUnavailable, driver.ErrUnavailable},
		{"ErrNotFound", engine.ErrNotFound, driver.ErrNotFound},
		{"ErrClosed", engine.ErrClosed, driver.ErrClosed},
		{"ErrInvalidArg", engine.ErrInvalidArg, driver.ErrInvalidArg},
		{"ErrOutOfMemory", engine.ErrOutOfMemory, driver.ErrOutOfMemory},
		{"ErrUnsupported", engine.ErrUnsupported, driver.ErrUnsupported},
		{"ErrBuild", engine.ErrBuild, driver.ErrBuild},
	}
	for i, p := range pairs {
		fromBackend := fmt.Errorf("cuda: cuMemAlloc_v2: %w", p.spi)
		if !errors.Is(fromBackend, p.user) {
			t.Errorf("a backend error wrapping driver.%s does not match engine.%s", p.name, p.name)
		}
		fromEngine := fmt.Errorf("engine: open cuda:0: %w", p.user)
		if !errors.Is(fromEngine, p.spi) {
			t.Errorf("an engine error wrapping engine.%s does not match driver.%s", p.name, p.name)
		}
		for j, q := range pairs {
			if i != j && errors.Is(fromBackend, q.user) {
				t.Errorf("driver.%s matches engine.%s", p.name, q.name)
			}
		}
	}
}
