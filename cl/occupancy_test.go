//go:build !noopencl

package cl

import (
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestOccupancy checks that OpenCL kernels answer ErrUnsupported for occupancy, saying
// what OpenCL does report, which Attributes holds; and ErrClosed once closed.
func TestOccupancy(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		k := mustKernel(t, dev, "axpy")
		a := k.Attributes()
		_, err := k.Occupancy(min(64, k.MaxWorkGroupSize()), 0)
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "cl: occupancy of axpy: OpenCL reports no registers") {
			t.Errorf("Occupancy = %v; want ErrUnsupported from the backend", err)
		}
		if a.MaxWorkGroupSize <= 0 || a.PreferredMultiple <= 0 {
			t.Errorf("attributes %+v: want the work-group limit and the preferred multiple", a)
		}
		t.Logf("%v", err)
		k.Close()
		if _, err := k.Occupancy(1, 0); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("a closed kernel: %v", err)
		}
	})
}
