package engine

import (
	"fmt"

	"github.com/prism-compute/prism/engine/driver"
)

// Occupancy is the theoretical occupancy of a kernel at one launch shape; see
// driver.Occupancy.
type Occupancy = driver.Occupancy

// Limiter names the resource that limits a kernel's occupancy; see driver.Limiter.
type Limiter = driver.Limiter

// Limiting factors of occupancy (Occupancy.Limiter).
const (
	LimitUnknown      = driver.LimitUnknown
	LimitRegisters    = driver.LimitRegisters
	LimitSharedMemory = driver.LimitSharedMemory
	LimitThreads      = driver.LimitThreads
	LimitBlocks       = driver.LimitBlocks
)

// Occupancy returns the kernel's theoretical occupancy on its device when launched in
// work-groups (blocks) of blockSize work-items, each with dynamicSharedBytes of dynamic
// shared memory (Range.SharedBytes; 0 for none): how many work-groups and warps one
// multiprocessor holds at once, the fraction of its warps that is, and the resource that
// limits it. CUDA computes it (cuOccupancyMaxActiveBlocksPerMultiprocessor, with the
// limiter from the kernel's registers and shared memory against the multiprocessor's);
// a backend that cannot tell, such as OpenCL, answers an error wrapping ErrUnsupported,
// and Attributes holds what it reports of the kernel.
//
// A blockSize that is not positive or exceeds MaxWorkGroupSize, or dynamic shared memory
// that is negative or, with the kernel's static local memory, exceeds what a work-group
// may use on the device, is refused with ErrInvalidArg, without calling the backend.
func (k *Kernel) Occupancy(blockSize int, dynamicSharedBytes int64) (Occupancy, error) {
	if k == nil {
		return Occupancy{}, fmt.Errorf("engine: occupancy: nil kernel: %w", ErrInvalidArg)
	}
	if err := k.check(); err != nil {
		return Occupancy{}, err
	}
	switch {
	case blockSize <= 0:
		return Occupancy{}, fmt.Errorf("engine: occupancy of %s: a block of %d work-items (the size must be positive): %w", k.name, blockSize, ErrInvalidArg)
	case k.maxWG > 0 && blockSize > k.maxWG:
		return Occupancy{}, fmt.Errorf("engine: occupancy of %s: a block of %d work-items exceeds the kernel's limit of %d on %s: %w", k.name, blockSize, k.maxWG, k.dev.id, ErrInvalidArg)
	case dynamicSharedBytes < 0:
		return Occupancy{}, fmt.Errorf("engine: occupancy of %s: %d bytes of dynamic shared memory (the size must not be negative): %w", k.name, dynamicSharedBytes, ErrInvalidArg)
	}
	if limit := k.dev.info.MaxLocalBytes(); dynamicSharedBytes > 0 && limit > 0 && dynamicSharedBytes+k.attrs.LocalBytes > limit {
		return Occupancy{}, fmt.Errorf("engine: occupancy of %s: %d bytes of dynamic shared memory and the kernel's %d static bytes exceed the %d bytes a work-group may use on %s: %w",
			k.name, dynamicSharedBytes, k.attrs.LocalBytes, limit, k.dev.id, ErrInvalidArg)
	}
	r, ok := k.drv.(driver.OccupancyReporter)
	if !ok {
		return Occupancy{}, fmt.Errorf("engine: occupancy of %s: the %s backend of %s (%s) does not report occupancy (Attributes says what it reports of the kernel): %w",
			k.name, k.dev.Backend(), k.dev.id, k.dev.info.Name, ErrUnsupported)
	}
	o, err := r.Occupancy(blockSize, dynamicSharedBytes)
	if err != nil {
		return Occupancy{}, fmt.Errorf("engine: occupancy of %s on %s: %w", k.name, k.dev.id, err)
	}
	return o, nil
}

// LaunchNote is one kernel launch recorded by Queue.Timed: the kernel and its range. The
// range's local size and SharedBytes are the shape Kernel.Occupancy takes; local memory
// sized by LocalBytes arguments is not recorded.
type LaunchNote struct {
	Kernel *Kernel
	Range  Range
}

// BlockSize returns the number of work-items of one work-group of the launch: the product
// of its local size over the range's dimensions.
func (n LaunchNote) BlockSize() int {
	size := 1
	for i := 0; i < n.Range.Dims && i < 3; i++ {
		size *= n.Range.Local[i]
	}
	return size
}

// Occupancy returns the theoretical occupancy of the launch's kernel at its block size
// and dynamic shared memory (Kernel.Occupancy).
func (n LaunchNote) Occupancy() (Occupancy, error) {
	return n.Kernel.Occupancy(n.BlockSize(), n.Range.SharedBytes)
}

// noteLaunch records a launch of k over r while q is timing; each kernel and range is
// kept once.
func (q *Queue) noteLaunch(k *Kernel, r Range) {
	for _, n := range q.notes {
		if n.Kernel == k && n.Range == r {
			return
		}
	}
	q.notes = append(q.notes, LaunchNote{Kernel: k, Range: r})
}

// TimedLaunches returns the distinct kernels and ranges launched during the last
// Queue.Timed call on q, in the order of their first launch.
func (q *Queue) TimedLaunches() []LaunchNote {
	if q == nil {
		return nil
	}
	return append([]LaunchNote(nil), q.notes...)
}
