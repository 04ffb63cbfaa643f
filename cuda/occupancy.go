package cuda

import (
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine/driver"
)

// Device attributes that only occupancy reads (CUdevice_attribute in cuda.h), asked when
// a kernel's occupancy is: the probe's (driver.go, Properties) give the others.
const (
	attrMaxRegistersPerSM         = 82
	attrMaxBlocksPerSM            = 106 // CUDA 11.0
	attrReservedSharedMemPerBlock = 111 // CUDA 11.0
)

var _ driver.OccupancyReporter = (*kernel)(nil)

// Occupancy returns the kernel's theoretical occupancy at blockSize threads per block with
// dynamicSharedBytes of dynamic shared memory each. The active blocks are the driver's
// (cuOccupancyMaxActiveBlocksPerMultiprocessor, after the opt-in a launch with that much
// dynamic shared memory makes); the limiting factor is the resource whose own bound, from
// the kernel's attributes and the multiprocessor's limits (smLimits.blockLimits), equals
// it, or LimitUnknown where none does.
func (k *kernel) Occupancy(blockSize int, dynamicSharedBytes int64) (driver.Occupancy, error) {
	if k.closed.Load() {
		return driver.Occupancy{}, errClosed("kernel " + k.name)
	}
	if blockSize <= 0 || dynamicSharedBytes < 0 || dynamicSharedBytes > math.MaxInt32 {
		return driver.Occupancy{}, fmt.Errorf("cuda: occupancy of %s with %d threads and %d bytes of dynamic shared memory: %w", k.name, blockSize, dynamicSharedBytes, driver.ErrInvalidArg)
	}
	d := k.prog.d
	var (
		active int
		lim    smLimits
	)
	err := d.th.Call(func() error {
		if err := k.optInShared(dynamicSharedBytes); err != nil {
			return err
		}
		var r Result
		active, r = cuOccupancyMaxActiveBlocksPerMultiprocessor(k.fn, blockSize, dynamicSharedBytes)
		if err := check(fmt.Sprintf("cuOccupancyMaxActiveBlocksPerMultiprocessor(%s, %d, %d)", k.name, blockSize, dynamicSharedBytes), r); err != nil {
			return err
		}
		lim = limitsOf(d.props, func(a int) int {
			v, r := cuDeviceGetAttribute(a, d.ordinal)
			if r != Success || v < 0 {
				return 0
			}
			return v
		})
		return nil
	})
	if err != nil {
		return driver.Occupancy{}, err
	}
	if active < 0 {
		return driver.Occupancy{}, fmt.Errorf("cuda: cuOccupancyMaxActiveBlocksPerMultiprocessor(%s, %d, %d) answers %d blocks: the driver is not trusted: %w",
			k.name, blockSize, dynamicSharedBytes, active, driver.ErrUnsupported)
	}
	use := blockUse{threads: blockSize, registers: k.attrs.Registers, sharedBytes: k.attrs.LocalBytes + dynamicSharedBytes}
	o := lim.occupancy(use, active)
	o.DynamicSharedBytes = dynamicSharedBytes
	return o, nil
}

// smLimits are what bounds the blocks resident on one multiprocessor of a device. A zero
// field is not reported.
type smLimits struct {
	computeMajor, computeMinor int
	warpSize                   int
	threadsPerBlock            int   // the device's largest block
	threadsPerSM               int   // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
	blocksPerSM                int   // CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR
	registersPerSM             int   // CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR
	registersPerBlock          int   // CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK
	sharedPerSM                int64 // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
	sharedPerBlock             int64 // the most a block may have, with the opt-in
	reservedPerBlock           int64 // CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK (1 KiB from sm_80)
}

// limitsOf gathers a device's limits from its properties and, through attr, the
// attributes the probe does not read (0 where the driver does not tell).
func limitsOf(p Properties, attr func(int) int) smLimits {
	return smLimits{
		computeMajor:      p.ComputeCapability[0],
		computeMinor:      p.ComputeCapability[1],
		warpSize:          p.WarpSize,
		threadsPerBlock:   p.MaxThreadsPerBlock,
		threadsPerSM:      p.MaxThreadsPerMultiprocessor,
		blocksPerSM:       attr(attrMaxBlocksPerSM),
		registersPerSM:    attr(attrMaxRegistersPerSM),
		registersPerBlock: p.RegistersPerBlock,
		sharedPerSM:       p.SharedMemPerMultiprocessor,
		sharedPerBlock:    max(p.SharedMemPerBlock, p.SharedMemPerBlockOptin),
		reservedPerBlock:  int64(attr(attrReservedSharedMemPerBlock)),
	}
}

// Granularities of allocation on a multiprocessor, as CUDA's occupancy calculator
// (cuda_occupancy.h) has them: shared memory is allocated per block in granules of 256
// bytes before compute capability 8.0 and of 128 from it; registers per warp in granules
// of 256, in sub-partitions (4 of them, 2 on sm_60), at most 255 per thread before
// compute capability 7.0 and 256 from it.
func (l smLimits) sharedGranule() int64 {
	if l.computeMajor < 8 {
		return 256
	}
	return 128
}

func (l smLimits) subPartitions() int {
	if l.computeMajor == 6 && l.computeMinor == 0 {
		return 2
	}
	return 4
}

func (l smLimits) maxRegistersPerThread() int {
	if l.computeMajor < 7 {
		return 255
	}
	return 256
}

const registerGranule = 256

// blockUse is what one block of a launch uses.
type blockUse struct {
	threads     int
	registers   int   // per thread; 0 for none (or not reported)
	sharedBytes int64 // static and dynamic, without the driver's reserve
}

// Bounds of blockLimits that are not a number of blocks.
const (
	unknownLimit   = -1            // a limit the device did not report
	unlimitedLimit = math.MaxInt32 // a resource the block does not use (the calculator's INT_MAX)
)

// blockLimits holds how many blocks of a launch each resource of a multiprocessor allows
// (unknownLimit where a limit was not reported, unlimitedLimit where the block uses none
// of it).
type blockLimits struct {
	threads, blocks, registers, shared int
}

// blockLimits computes the blocks each resource allows, as cudaOccMaxActiveBlocksPerMultiprocessor
// does for the default shared-memory carveout (the driver picks the carveout, so the
// whole of sharedPerSM is available) and partitioned global caching off:
//
//   - threads: the multiprocessor's warps over the block's (a partial warp counts whole);
//     0 for a block beyond the device's largest;
//   - blocks: CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR;
//   - registers: registers per warp rounded up to the granule of 256; the warps that fit
//     in one sub-partition's share of the multiprocessor's registers, times the
//     sub-partitions, over the block's warps; 0 where the block needs more than a block
//     may have (its warps rounded up to the sub-partitions, as the hardware checks) or a
//     thread more than the most a thread may have;
//   - shared memory: the block's static and dynamic bytes and the driver's reserve,
//     rounded up to the granule; the multiprocessor's shared memory over that; 0 where it
//     exceeds what a block may have (with the opt-in, and the reserve).
func (l smLimits) blockLimits(u blockUse) blockLimits {
	b := blockLimits{threads: unknownLimit, blocks: unknownLimit, registers: unknownLimit, shared: unknownLimit}
	if l.warpSize <= 0 || u.threads <= 0 {
		return b
	}
	warps := (u.threads + l.warpSize - 1) / l.warpSize
	switch {
	case l.threadsPerBlock > 0 && u.threads > l.threadsPerBlock:
		b.threads = 0
	case l.threadsPerSM > 0:
		b.threads = l.threadsPerSM / l.warpSize / warps
	}
	if l.blocksPerSM > 0 {
		b.blocks = l.blocksPerSM
	}

	perWarp := roundUp(u.registers*l.warpSize, registerGranule)
	parts := l.subPartitions()
	switch {
	case u.registers <= 0:
		b.registers = unlimitedLimit
	case u.registers > l.maxRegistersPerThread():
		b.registers = 0
	case l.registersPerBlock > 0 && (perWarp*warps > l.registersPerBlock || perWarp*roundUp(warps, parts) > l.registersPerBlock):
		b.registers = 0
	case l.registersPerSM > 0:
		b.registers = l.registersPerSM / parts / perWarp * parts / warps
	}

	alloc := roundUp64(u.sharedBytes+l.reservedPerBlock, l.sharedGranule())
	switch {
	case alloc == 0:
		b.shared = unlimitedLimit
	case l.sharedPerBlock > 0 && alloc > l.sharedPerBlock+l.reservedPerBlock:
		b.shared = 0
	case l.sharedPerSM > 0:
		b.shared = int(min(l.sharedPerSM/alloc, unlimitedLimit))
	}
	return b
}

// limiter returns the resource whose bound is active, the number of blocks the driver
// found resident: the first of threads, blocks, registers and shared memory (those a
// change of the kernel's registers or shared memory would not lift come first) whose
// bound equals it, where no reported bound is lower. Where the bounds do not explain
// active (a limit not reported, a rule of the hardware this model lacks), it is
// LimitUnknown.
func (b blockLimits) limiter(active int) driver.Limiter {
	factors := []struct {
		n int
		l driver.Limiter
	}{{b.threads, driver.LimitThreads}, {b.blocks, driver.LimitBlocks}, {b.registers, driver.LimitRegisters}, {b.shared, driver.LimitSharedMemory}}
	found := driver.LimitUnknown
	for _, f := range factors {
		if f.n == unknownLimit {
			continue
		}
		if f.n < active {
			return driver.LimitUnknown
		}
		if f.n == active && found == driver.LimitUnknown {
			found = f.l
		}
	}
	return found
}

// occupancy describes a launch of u of which active blocks are resident on one
// multiprocessor (the driver's figure).
func (l smLimits) occupancy(u blockUse, active int) driver.Occupancy {
	o := driver.Occupancy{BlockSize: u.threads, ActiveBlocks: active, WarpSize: l.warpSize}
	if l.warpSize > 0 {
		o.ActiveWarps = active * ((u.threads + l.warpSize - 1) / l.warpSize)
		o.MaxWarps = l.threadsPerSM / l.warpSize
	}
	if o.MaxWarps > 0 {
		o.Fraction = float64(o.ActiveWarps) / float64(o.MaxWarps)
	}
	o.Limiter = l.blockLimits(u).limiter(active)
	return o
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

func roundUp64(n, m int64) int64 { return (n + m - 1) / m * m }
