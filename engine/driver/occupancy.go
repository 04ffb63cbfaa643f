package driver

// Limiter names the resource of a multiprocessor (a compute unit) that bounds how many
// work-groups of a kernel are resident on it at once: the limiting factor of its
// theoretical occupancy. The zero value, LimitUnknown, means that the backend cannot
// tell.
type Limiter string

// Limiting factors of occupancy.
const (
	// LimitUnknown: the backend cannot tell which resource limits occupancy.
	LimitUnknown Limiter = ""
	// LimitRegisters: the registers of a multiprocessor, allocated per warp.
	LimitRegisters Limiter = "registers"
	// LimitSharedMemory: the shared (local) memory of a multiprocessor, static and
	// dynamic, with what the driver reserves per block.
	LimitSharedMemory Limiter = "shared memory"
	// LimitThreads: the threads (warps) a multiprocessor holds at once.
	LimitThreads Limiter = "threads"
	// LimitBlocks: the blocks (work-groups) a multiprocessor holds at once, whatever
	// their size.
	LimitBlocks Limiter = "blocks per multiprocessor"
)

// Occupancy is the theoretical occupancy of a kernel launched in blocks (work-groups) of
// BlockSize work-items with DynamicSharedBytes of dynamic shared memory each: how many
// blocks and warps one multiprocessor holds at once, against the most it could hold, and
// which resource limits them. It is what the hardware's limits allow, not a measurement;
// a launch with fewer blocks than multiprocessors times ActiveBlocks never reaches it.
type Occupancy struct {
	// BlockSize is the number of work-items of one block (the product of the local
	// size's dimensions).
	BlockSize int `json:"block_size"`
	// DynamicSharedBytes is the dynamic shared memory of each block (Range.SharedBytes).
	DynamicSharedBytes int64 `json:"dynamic_shared_bytes,omitempty"`
	// ActiveBlocks is the number of blocks resident on one multiprocessor at once; 0
	// when not one fits.
	ActiveBlocks int `json:"active_blocks_per_multiprocessor"`
	// ActiveWarps is the number of warps resident on one multiprocessor at once
	// (ActiveBlocks times the block's warps, a partial warp counted whole); MaxWarps the
	// most a multiprocessor holds. Zero when unknown.
	ActiveWarps int `json:"active_warps_per_multiprocessor,omitempty"`
	MaxWarps    int `json:"max_warps_per_multiprocessor,omitempty"`
	// WarpSize is the number of work-items of a warp, the unit of ActiveWarps and
	// MaxWarps.
	WarpSize int `json:"warp_size,omitempty"`
	// Fraction is the theoretical occupancy, ActiveWarps / MaxWarps, from 0 to 1; zero
	// when unknown.
	Fraction float64 `json:"occupancy"`
	// Limiter is the resource that limits ActiveBlocks. Where several limit it equally,
	// it is the first of LimitThreads, LimitBlocks, LimitRegisters and
	// LimitSharedMemory: the one a change of registers or shared memory would not lift.
	Limiter Limiter `json:"limiter,omitempty"`
}

// OccupancyReporter is implemented by kernels whose backend can compute their theoretical
// occupancy on their device (CUDA: cuOccupancyMaxActiveBlocksPerMultiprocessor). engine
// checks the arguments before the call: blockSize is positive and within the kernel's
// limit, dynamicSharedBytes is not negative. A backend that cannot tell for a kernel or a
// device answers an error wrapping engine.ErrUnsupported that says why. Without it,
// engine answers ErrUnsupported.
type OccupancyReporter interface {
	Occupancy(blockSize int, dynamicSharedBytes int64) (Occupancy, error)
}
