//go:build !noopencl

package cl

import (
	"sync/atomic"

	ocl "github.com/jgillich/go-opencl/cl"

	"github.com/prism-compute/prism/engine/driver"
)

// buffer is an OpenCL buffer object (cl_mem) of one open device. It is safe for concurrent
// use; OpenCL keeps the memory alive until commands that use it have completed, so Close
// does not wait for them.
type buffer struct {
	mem    *ocl.MemObject
	size   int64
	th     *osThread
	closed atomic.Bool
}

var _ driver.Buffer = (*buffer)(nil)

// Size returns the size in bytes.
func (b *buffer) Size() int64 { return b.size }

// Close releases the buffer (clReleaseMemObject). Idempotent.
func (b *buffer) Close() error {
	if b.closed.CompareAndSwap(false, true) {
		release(b.th, b.mem.Release)
	}
	return nil
}
