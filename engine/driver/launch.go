package driver

import "time"

// Range is an N-dimensional launch: Dims is 1, 2 or 3; Global and Local hold the number of
// work-items in each used dimension, Global a multiple of Local in each. A local size of
// zero asks engine to choose it (engine.Auto); engine does so before a Range reaches a
// backend, so a driver always sees positive local sizes. SharedBytes and
// Cluster are launch options that only some devices accept (see LaunchFeatures); their
// zero values ask for nothing.
type Range struct {
	Dims   int
	Global [3]int
	Local  [3]int
	// SharedBytes is the dynamic shared memory of each work-group, in bytes: the size of a
	// CUDA kernel's extern __shared__ array (the launch's sharedMemBytes). Zero for none.
	SharedBytes int64
	// Cluster is the shape of a thread-block cluster in work-groups, per dimension (CUDA,
	// compute capability 9.0 and newer): work-groups of one cluster run at once and can
	// share their shared memory. All zero for no clusters.
	Cluster [3]int
}

// WithSharedBytes returns r with n bytes of dynamic shared memory per work-group.
func (r Range) WithSharedBytes(n int64) Range {
	r.SharedBytes = n
	return r
}

// WithCluster returns r launched in thread-block clusters of x×y×z work-groups.
func (r Range) WithCluster(x, y, z int) Range {
	r.Cluster = [3]int{x, y, z}
	return r
}

// Clustered reports whether r asks for thread-block clusters.
func (r Range) Clustered() bool { return r.Cluster != [3]int{} }

// LaunchFeatures says which launch options a device's queues accept beyond the shape of
// the range. The zero value accepts none.
type LaunchFeatures struct {
	// LocalArgs: kernels may declare __local pointer parameters, whose size in bytes is
	// given per launch by an Arg with Local set (OpenCL's clSetKernelArg with no value).
	LocalArgs bool `json:"local_args"`
	// SharedBytes: a launch may size the kernel's dynamic shared memory
	// (Range.SharedBytes).
	SharedBytes bool `json:"shared_bytes"`
	// MaxClusterSize is the largest thread-block cluster, in work-groups, that a launch may
	// ask for (Range.Cluster); zero when the device has no clusters.
	MaxClusterSize int `json:"max_cluster_size"`
}

// LaunchFeaturer is implemented by devices whose launches accept options beyond the
// range's shape: local-memory arguments, dynamic shared memory, clusters. engine refuses
// those options with ErrUnsupported on a device without it, before they reach the driver.
type LaunchFeaturer interface {
	LaunchFeatures() LaunchFeatures
}

// KernelAttributes describes a compiled kernel on its device. A zero field means that the
// backend cannot tell.
type KernelAttributes struct {
	// Registers is the number of registers each work-item uses.
	Registers int `json:"registers,omitempty"`
	// LocalBytes is the static local (shared) memory of one work-group: the kernel's
	// __local arrays, or __shared__ variables in CUDA C++. Memory sized at launch
	// (LocalBytes arguments, Range.SharedBytes) is not included.
	LocalBytes int64 `json:"local_bytes,omitempty"`
	// PrivateBytes is the private memory of one work-item beyond its registers: stack
	// arrays and register spills (CUDA's local memory).
	PrivateBytes int64 `json:"private_bytes,omitempty"`
	// ConstBytes is the constant memory the kernel uses (__constant tables).
	ConstBytes int64 `json:"const_bytes,omitempty"`
	// MaxWorkGroupSize is the largest work-group the kernel can be launched with on its
	// device, registers and local memory included.
	MaxWorkGroupSize int `json:"max_work_group_size,omitempty"`
	// PreferredMultiple is the granule of work-group sizes that run best: the warp size on
	// NVIDIA GPUs, the SIMD width on others.
	PreferredMultiple int `json:"preferred_multiple,omitempty"`
	// RequiredWorkGroupSize is the work-group size the kernel must be launched with, per
	// dimension, where its source fixes one (OpenCL C's reqd_work_group_size,
	// CL_KERNEL_COMPILE_WORK_GROUP_SIZE); all zero when it does not. engine gives it to
	// launches whose local size is Auto.
	RequiredWorkGroupSize [3]int `json:"required_work_group_size,omitzero"`
	// BinaryVersion is the architecture the kernel's machine code was built for, as
	// major*10+minor (90 for sm_90).
	BinaryVersion int `json:"binary_version,omitempty"`
	// PTXVersion is the PTX ISA version the kernel was compiled from, as major*10+minor
	// (88 for PTX 8.8).
	PTXVersion int `json:"ptx_version,omitempty"`
}

// AttributeReporter is implemented by kernels that report their attributes. Without it,
// engine knows only a kernel's maximum work-group size (WorkGroupLimiter, or the
// device's).
type AttributeReporter interface {
	Attributes() KernelAttributes
}

// UntimedLauncher is implemented by queues that can enqueue a kernel without an event:
// engine uses it for Queue.Launch outside Queue.Timed, where nobody waits on or times the
// launch. It must accept exactly what Launch accepts and check the same things; the
// launch is ordered on the queue like any other command, and a later Finish waits for it.
// It should not allocate per call: a Queue is used by one goroutine at a time, so its
// scratch memory can be reused.
type UntimedLauncher interface {
	LaunchUntimed(k Kernel, r Range, args []Arg) error
}

// Gater is implemented by queues that can hold their later commands until the host lets
// them go: engine.Queue.Timed holds the queue while its function enqueues, so that the
// commands run back to back on the device and their events time the device alone, not the
// host's enqueueing between them (nvbench's blocking kernel does the same).
//
// Hold makes the commands enqueued after it wait until the returned open is called, or
// until limit has passed on the device, whichever is first: the limit keeps a command
// that blocks the host until the device has run (a driver call that synchronizes) from
// waiting for ever. open may be called more than once; only the first call counts. Hold
// itself is not timed and is no command of the queue's events.
type Gater interface {
	Hold(limit time.Duration) (open func(), err error)
}
