package fake

import (
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// The multiprocessor of the fake GPU: it holds at most cuWorkItems work-items in
// cuGroups work-groups at once, and has cuLocalBytes of local memory, of which each
// work-group takes its static and dynamic bytes rounded up to localGranule. Go kernels use
// no registers. Its warps are single work-items.
const (
	cuWorkItems  = 1024
	cuGroups     = 8
	cuLocalBytes = 128 << 10
	localGranule = 1 << 10
)

var _ driver.OccupancyReporter = (*kernel)(nil)

// Occupancy computes the kernel's occupancy on the fake GPU's multiprocessor (see
// cuWorkItems); the fake CPU answers ErrUnsupported, as OpenCL does. A block size or a
// dynamic size engine should have refused is a contract violation.
func (k *kernel) Occupancy(blockSize int, dynamicSharedBytes int64) (driver.Occupancy, error) {
	count(k.dev, "Kernel.Occupancy")
	switch {
	case k.closed.Load():
		return driver.Occupancy{}, violation("Kernel.Occupancy on closed kernel %s", k.name)
	case blockSize <= 0 || blockSize > k.dev.info.MaxWorkGroupSize:
		return driver.Occupancy{}, violation("Kernel.Occupancy of %s with a block of %d", k.name, blockSize)
	case dynamicSharedBytes < 0:
		return driver.Occupancy{}, violation("Kernel.Occupancy of %s with %d bytes of dynamic shared memory", k.name, dynamicSharedBytes)
	}
	if k.dev.info.Kind != driver.KindGPU {
		return driver.Occupancy{}, fmt.Errorf("fake: occupancy of %s: %s reports none, as an OpenCL device: %w", k.name, k.dev.info.Name, engine.ErrUnsupported)
	}
	o := driver.Occupancy{BlockSize: blockSize, DynamicSharedBytes: dynamicSharedBytes, MaxWarps: cuWorkItems, WarpSize: 1}
	byThreads, byGroups, byLocal := cuWorkItems/blockSize, cuGroups, cuGroups
	if local := (k.impl.localBytes + dynamicSharedBytes + localGranule - 1) / localGranule * localGranule; local > 0 {
		byLocal = int(cuLocalBytes / local)
	}
	o.ActiveBlocks = min(byThreads, byGroups, byLocal)
	switch o.ActiveBlocks {
	case byThreads:
		o.Limiter = driver.LimitThreads
	case byGroups:
		o.Limiter = driver.LimitBlocks
	default:
		o.Limiter = driver.LimitSharedMemory
	}
	o.ActiveWarps = o.ActiveBlocks * blockSize
	o.Fraction = float64(o.ActiveWarps) / cuWorkItems
	return o, nil
}
