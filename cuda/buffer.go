package cuda

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/prism-compute/prism/engine/driver"
)

// buffer is device memory from cuMemAlloc_v2. It is safe for concurrent use.
type buffer struct {
	ptr    devptr
	size   int64
	d      *device
	pool   *memPool // the pool it was taken from (memory.go), nil for cuMemAlloc_v2
	closed atomic.Bool
}

var _ driver.Buffer = (*buffer)(nil)

// Size returns the size in bytes.
func (b *buffer) Size() int64 { return b.size }

// Close frees the memory (cuMemFree_v2). Commands of any queue may still use it, so Close
// first waits for the context's outstanding work (cuCtxSynchronize), as OpenCL keeps a
// released buffer alive until its commands complete. A buffer of the device's pool
// (AllocPooled) goes back to it instead, without waiting. Idempotent.
func (b *buffer) Close() error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	if b.pool != nil {
		return b.freePooled()
	}
	var errs []error
	b.d.th.Do(func() {
		errs = append(errs, check("cuCtxSynchronize", cuCtxSynchronize()))
		errs = append(errs, check(fmt.Sprintf("cuMemFree_v2(%d bytes)", b.size), cuMemFree(b.ptr)))
	})
	return errors.Join(errs...)
}

func asBuffer(b driver.Buffer) (*buffer, error) {
	cb, ok := b.(*buffer)
	if !ok || cb == nil {
		return nil, fmt.Errorf("cuda: buffer %T is not a CUDA buffer: %w", b, driver.ErrInvalidArg)
	}
	if cb.closed.Load() {
		return nil, errClosed("buffer")
	}
	return cb, nil
}
