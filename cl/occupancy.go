//go:build !noopencl

package cl

import (
	"fmt"

	"github.com/prism-compute/prism/engine/driver"
)

var _ driver.OccupancyReporter = (*kernel)(nil)

// Occupancy answers an error wrapping driver.ErrUnsupported: OpenCL reports what
// clGetKernelWorkGroupInfo tells of a kernel (Attributes: its work-group limit, local
// memory, private memory per work-item and preferred multiple), but neither the registers
// it uses nor what a compute unit holds at once (work-items, work-groups, registers), so
// the work-groups resident on one cannot be told without guessing. The error says what
// OpenCL does report.
func (k *kernel) Occupancy(blockSize int, dynamicSharedBytes int64) (driver.Occupancy, error) {
	if k.closed.Load() {
		return driver.Occupancy{}, errClosed("kernel " + k.name)
	}
	a := k.attrs
	return driver.Occupancy{}, fmt.Errorf("cl: occupancy of %s: OpenCL reports no registers per work-item and no limits per compute unit, only the work-group limit (%d), local memory (%d bytes), private memory (%d bytes per work-item) and preferred multiple (%d) of the kernel: %w",
		k.name, a.MaxWorkGroupSize, a.LocalBytes, a.PrivateBytes, a.PreferredMultiple, driver.ErrUnsupported)
}
